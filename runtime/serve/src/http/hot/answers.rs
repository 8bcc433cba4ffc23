//! A session's answers as SSE. rmcp sends every answer in a session after a priming event whose
//! id a client resumes from (`GET` with `Last-Event-ID`) if the stream drops. An answer the hot
//! path has at once goes out as one event: there is no gap to resume across. One that is not
//! ready at once (a call waiting on the store or a slow handler) runs on as a task, after a
//! priming event `t{n}`; a resume naming that id gets its answer, for as long as rmcp keeps its
//! own (a minute after it is done). Ids of that form never parse as rmcp's (`{request}/{index}`),
//! so the two never answer for each other.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use tokio::sync::watch;

/// What this module's event ids start with.
const PREFIX: &str = "t";
/// Answers a session keeps for resumption: rmcp keeps 16 events per stream.
const KEPT: usize = 16;
/// How long a finished answer stays resumable (rmcp's `completed_cache_ttl`).
const KEEP_DONE: Duration = Duration::from_secs(60);
/// An SSE comment this often while an answer is awaited, so proxies do not close an idle stream
/// (rmcp's `sse_keep_alive`, with its event).
const PING_EVERY: Duration = Duration::from_secs(15);
const PING: &[u8] = b":\n\n";
/// The reconnection delay a priming event suggests (rmcp's `sse_retry`).
const RETRY_MS: u64 = 3_000;

/// One awaited answer: the event, and when it was done.
type Slot = watch::Receiver<Option<(Bytes, Instant)>>;

/// The answers of one session that a client may resume.
#[derive(Default)]
pub(crate) struct Answers {
    next: AtomicU64,
    kept: Mutex<VecDeque<(u64, Slot)>>,
}

/// Where a pending answer is put once it is done.
pub(super) struct Pending(watch::Sender<Option<(Bytes, Instant)>>);

impl Pending {
    pub(super) fn done(self, event: Bytes) {
        self.0.send_replace(Some((event, Instant::now())));
    }
}

impl Answers {
    /// A resumable place for an answer still being made: its priming event, where to put the
    /// answer, and the stream a client reads it from.
    pub(super) fn expect(&self) -> (Pending, Response) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (sender, slot) = watch::channel(None);
        {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.retain(|(_, slot)| slot.borrow().as_ref().is_none_or(|(_, done)| done.elapsed() < KEEP_DONE));
            if kept.len() >= KEPT {
                kept.pop_front();
            }
            kept.push_back((n, slot.clone()));
        }
        let priming = Bytes::from(format!("data: \nid: {PREFIX}{n}\nretry: {RETRY_MS}\n\n"));
        (Pending(sender), stream(Some(priming), Some(slot)))
    }

    /// The answer to a resume from `last_event_id`: `None` if the id is not this module's; an
    /// empty stream if it is no longer kept (as rmcp answers an unknown id, so that a client
    /// does not retry it forever).
    pub(super) fn resume(&self, last_event_id: &str) -> Option<Response> {
        let n: u64 = last_event_id.strip_prefix(PREFIX)?.parse().ok()?;
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let slot = kept.iter().find(|(kept, _)| *kept == n).map(|(_, slot)| slot.clone());
        Some(stream(None, slot))
    }
}

/// An SSE response: `priming`, then pings until the slot's answer, then the answer.
fn stream(priming: Option<Bytes>, slot: Option<Slot>) -> Response {
    let events = futures_util::stream::unfold((priming, slot), |(priming, slot)| async move {
        if let Some(priming) = priming {
            return Some((Ok::<_, Infallible>(priming), (None, slot)));
        }
        let mut slot = slot?;
        loop {
            if let Some((event, _)) = slot.borrow_and_update().clone() {
                return Some((Ok(event), (None, None)));
            }
            match tokio::time::timeout(PING_EVERY, slot.changed()).await {
                Err(_) => return Some((Ok(Bytes::from_static(PING)), (None, Some(slot)))),
                Ok(Ok(())) => {}
                // Every answer is put before its sender goes (a panic is caught and answered).
                Ok(Err(_)) => return None,
            }
        }
    });
    sse(Body::from_stream(events))
}

/// `body` as an event stream, with rmcp's headers.
pub(super) fn sse(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    async fn text(response: Response) -> String {
        String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_pending_answer_is_primed_and_resumable_until_it_is_dropped() {
        let answers = Answers::default();
        let (pending, first) = answers.expect();
        let resumed = answers.resume("t0").expect("the module's id");
        assert!(answers.resume("0/1").is_none(), "rmcp's ids are rmcp's");
        pending.done(Bytes::from_static(b"data: {}\n\n"));
        assert_eq!(text(first).await, "data: \nid: t0\nretry: 3000\n\ndata: {}\n\n");
        assert_eq!(text(resumed).await, "data: {}\n\n");
        // Pushed out by later answers: an unknown id is an empty stream.
        for _ in 0..KEPT {
            answers.expect();
        }
        assert_eq!(text(answers.resume("t0").unwrap()).await, "");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_is_awaited_with_pings() {
        let answers = Answers::default();
        let (pending, response) = answers.expect();
        tokio::spawn(async move {
            tokio::time::sleep(PING_EVERY * 2 + Duration::from_secs(1)).await;
            pending.done(Bytes::from_static(b"data: 1\n\n"));
        });
        assert_eq!(text(response).await, "data: \nid: t0\nretry: 3000\n\n:\n\n:\n\ndata: 1\n\n");
    }
}
