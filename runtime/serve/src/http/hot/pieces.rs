//! A JSON answer sent as the pieces it is made of: for `tools/list`, the request's own head
//! (`{"jsonrpc":"2.0","id":…,"result":`), the cached listing — shared, never copied per request —
//! and the closing brace. Its length is known, so it goes out with `content-length` as rmcp's
//! answers do, and hyper writes the pieces with one vectored write.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use http_body::{Frame, SizeHint};

/// The pieces of one answer, in order.
pub(crate) struct Pieces {
    pieces: VecDeque<Bytes>,
    remaining: u64,
}

impl Pieces {
    pub(crate) fn new(pieces: impl IntoIterator<Item = Bytes>) -> Pieces {
        let pieces: VecDeque<Bytes> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let remaining = pieces.iter().map(|p| p.len() as u64).sum();
        Pieces { pieces, remaining }
    }

    /// The answer as one SSE event, as rmcp frames a message (`data: …` and a blank line; JSON
    /// as serialised here has no line breaks).
    pub(crate) fn into_event(mut self) -> Pieces {
        self.pieces.push_front(Bytes::from_static(b"data: "));
        self.pieces.push_back(Bytes::from_static(b"\n\n"));
        self.remaining += 8;
        self
    }

    /// The pieces in one buffer.
    pub(crate) fn concat(&self) -> Vec<u8> {
        let mut whole = Vec::with_capacity(self.remaining as usize);
        for piece in &self.pieces {
            whole.extend_from_slice(piece);
        }
        whole
    }
}

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.pieces.pop_front().map(|piece| {
            this.remaining -= piece.len() as u64;
            Ok(Frame::data(piece))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[test]
    fn the_pieces_arrive_in_order_with_their_exact_length() {
        let pieces = Pieces::new([Bytes::from_static(b"{\"a\":"), Bytes::new(), Bytes::from_static(b"[1,2]}")]);
        assert_eq!(http_body::Body::size_hint(&pieces).exact(), Some(11));
        assert_eq!(pieces.concat(), b"{\"a\":[1,2]}");
        let event = Pieces::new([Bytes::from_static(b"{}")]).into_event();
        assert_eq!(http_body::Body::size_hint(&event).exact(), Some(10));
        assert_eq!(event.concat(), b"data: {}\n\n");
        let collected = futures_util::FutureExt::now_or_never(pieces.collect()).unwrap().unwrap().to_bytes();
        assert_eq!(&collected[..], b"{\"a\":[1,2]}");
    }
}
