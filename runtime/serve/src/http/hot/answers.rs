//! A session's answers as SSE. rmcp sends every answer in a session after a priming event whose
//! id a client resumes from (`GET` with `Last-Event-ID`) if the stream drops. An answer the hot
//! path has at once goes out as one event: there is no gap to resume across. One that is not
//! ready at once (a call waiting on the store or a slow handler) runs on as a task, after a
//! priming event `t{n}`; a resume naming that id gets its answer, for as long as rmcp keeps its
//! own (a minute after it is done; the session sweep forgets older ones). Ids of that form never
//! parse as rmcp's (`{request}/{index}`), so the two never answer for each other. At shutdown
//! the streams end (the calls run on to their end), as rmcp's streams do.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use tokio::sync::watch;
// (Tokio's clock, which tests can advance.)
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What this module's event ids start with.
const PREFIX: &str = "t";
/// Answers a session keeps for resumption: rmcp keeps 16 events per stream.
const KEPT: usize = 16;
/// And their bytes at most, the oldest finished ones going first.
const KEPT_BYTES: usize = 4 << 20;
/// The finished answers of every session together: past it, a session forgets its own finished
/// answers (the newest too) when it next sends one, is resumed or is swept.
pub(crate) const KEPT_ALL_BYTES: usize = 64 << 20;
/// How long a finished answer stays resumable (rmcp's `completed_cache_ttl`).
const KEEP_DONE: Duration = Duration::from_secs(60);
/// An SSE comment this often while an answer is awaited, so proxies do not close an idle stream
/// (rmcp's `sse_keep_alive`, with its event).
const PING_EVERY: Duration = Duration::from_secs(15);
const PING: &[u8] = b":\n\n";
/// The reconnection delay a priming event suggests (rmcp's `sse_retry`).
const RETRY_MS: u64 = 3_000;

/// One awaited answer: the event, when it was done, and its bytes counted server-wide.
type Done = Option<(Bytes, Instant, Arc<Counted>)>;
type Slot = watch::Receiver<Done>;
type Kept = Arc<Mutex<VecDeque<(u64, Slot)>>>;

/// The bytes of the finished answers that every session holds, against [`KEPT_ALL_BYTES`].
#[derive(Debug)]
pub(crate) struct AllAnswers {
    bytes: AtomicUsize,
    max: usize,
}

impl AllAnswers {
    pub(crate) fn new(max: usize) -> Arc<AllAnswers> {
        Arc::new(AllAnswers { bytes: AtomicUsize::new(0), max })
    }

    fn over(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) > self.max
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// An answer's bytes, counted while anything holds the answer (its session's list, a stream
/// still sending it): what the count says is what memory holds.
#[derive(Debug)]
struct Counted {
    all: Arc<AllAnswers>,
    bytes: usize,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.all.bytes.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// The answers of one session that a client may resume.
pub(crate) struct Answers {
    next: AtomicU64,
    kept: Kept,
    all: Arc<AllAnswers>,
}

impl Default for Answers {
    /// A session's answers counted on their own (tests, the fuzz target).
    fn default() -> Answers {
        Answers::new(AllAnswers::new(KEPT_ALL_BYTES))
    }
}

/// Where a pending answer is put once it is done.
pub(super) struct Pending {
    sender: watch::Sender<Done>,
    kept: Kept,
    all: Arc<AllAnswers>,
}

impl Pending {
    pub(super) fn done(self, event: Bytes) {
        self.all.bytes.fetch_add(event.len(), Ordering::Relaxed);
        let counted = Arc::new(Counted { all: self.all.clone(), bytes: event.len() });
        self.sender.send_replace(Some((event, Instant::now(), counted)));
        // The stream waiting for it holds it on its own: forgetting it here only stops resumes.
        forget_old(&mut self.kept.lock().unwrap_or_else(|p| p.into_inner()), &self.all);
    }
}

impl Answers {
    /// A session's answers, counted with every other session's in `all`.
    pub(crate) fn new(all: Arc<AllAnswers>) -> Answers {
        Answers { next: AtomicU64::new(0), kept: Kept::default(), all }
    }

    /// A resumable place for an answer still being made: its priming event, where to put the
    /// answer, and the stream a client reads it from (ended by `shutdown`).
    pub(super) fn expect(&self, shutdown: &CancellationToken) -> (Pending, Response) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (sender, slot) = watch::channel(None);
        {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            forget_old(&mut kept, &self.all);
            if kept.len() >= KEPT {
                kept.pop_front();
            }
            kept.push_back((n, slot.clone()));
        }
        let priming = Bytes::from(format!("data: \nid: {PREFIX}{n}\nretry: {RETRY_MS}\n\n"));
        let pending = Pending { sender, kept: self.kept.clone(), all: self.all.clone() };
        (pending, stream(Some(priming), Some(slot), shutdown.clone()))
    }

    /// The answer to a resume from `last_event_id`: `None` if the id is not this module's; an
    /// empty stream if it is no longer kept (as rmcp answers an unknown id, so that a client
    /// does not retry it forever).
    pub(super) fn resume(&self, last_event_id: &str, shutdown: &CancellationToken) -> Option<Response> {
        let n: u64 = last_event_id.strip_prefix(PREFIX)?.parse().ok()?;
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        forget_old(&mut kept, &self.all);
        let slot = kept.iter().find(|(kept, _)| *kept == n).map(|(_, slot)| slot.clone());
        Some(stream(None, slot, shutdown.clone()))
    }

    /// Forget the finished answers past their time (the session sweep calls this: a session
    /// whose later answers are all ready at once would otherwise keep them).
    pub(crate) fn forget_old(&self) {
        forget_old(&mut self.kept.lock().unwrap_or_else(|p| p.into_inner()), &self.all);
    }
}

/// Drop finished answers done more than [`KEEP_DONE`] ago, then the oldest finished ones while
/// the finished ones hold more than [`KEPT_BYTES`] — but never the last one finished, however
/// large (a resume is most likely for the answer just sent) — unless every session's together
/// hold more than `all` allows: then each finished one goes, oldest first, until they do not.
fn forget_old(kept: &mut VecDeque<(u64, Slot)>, all: &AllAnswers) {
    kept.retain(|(_, slot)| slot.borrow().as_ref().is_none_or(|(_, done, _)| done.elapsed() < KEEP_DONE));
    let done = |slot: &Slot| slot.borrow().as_ref().map(|(event, done, _)| (event.len(), *done));
    let newest = kept.iter().filter_map(|(n, slot)| Some((done(slot)?.1, *n))).max().map(|(_, n)| n);
    let mut bytes: usize = kept.iter().filter_map(|(_, slot)| done(slot)).map(|(size, _)| size).sum();
    // Dropping a slot frees its answer at once unless a stream still sends it: `all.over()`
    // reads the count as each goes.
    kept.retain(|(n, slot)| match done(slot) {
        Some((size, _)) if (bytes > KEPT_BYTES && Some(*n) != newest) || all.over() => {
            bytes -= size;
            false
        }
        _ => true,
    });
}

/// An SSE response: `priming`, then pings until the slot's answer, then the answer; it ends
/// early when `shutdown` is cancelled.
fn stream(priming: Option<Bytes>, slot: Option<Slot>, shutdown: CancellationToken) -> Response {
    let events = futures_util::stream::unfold((priming, slot), |(priming, slot)| async move {
        if let Some(priming) = priming {
            return Some((Ok::<_, Infallible>(priming), (None, slot)));
        }
        let mut slot = slot?;
        loop {
            if let Some((event, _, _)) = slot.borrow_and_update().clone() {
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
    let events = futures_util::StreamExt::take_until(events, shutdown.cancelled_owned());
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
    async fn a_pending_answer_is_primed_and_resumable_until_it_is_pushed_out() {
        let (answers, running) = (Answers::default(), CancellationToken::new());
        let (pending, first) = answers.expect(&running);
        let resumed = answers.resume("t0", &running).expect("the module's id");
        assert!(answers.resume("0/1", &running).is_none(), "rmcp's ids are rmcp's");
        pending.done(Bytes::from_static(b"data: {}\n\n"));
        assert_eq!(text(first).await, "data: \nid: t0\nretry: 3000\n\ndata: {}\n\n");
        assert_eq!(text(resumed).await, "data: {}\n\n");
        for _ in 0..KEPT {
            answers.expect(&running);
        }
        assert_eq!(text(answers.resume("t0", &running).unwrap()).await, "", "an id no longer kept");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_is_awaited_with_pings() {
        let answers = Answers::default();
        let (pending, response) = answers.expect(&CancellationToken::new());
        tokio::spawn(async move {
            tokio::time::sleep(PING_EVERY * 2 + Duration::from_secs(1)).await;
            pending.done(Bytes::from_static(b"data: 1\n\n"));
        });
        assert_eq!(text(response).await, "data: \nid: t0\nretry: 3000\n\n:\n\n:\n\ndata: 1\n\n");
    }

    /// Finished answers go after a minute (when the sweep asks), or past the byte bound.
    #[tokio::test(start_paused = true)]
    async fn finished_answers_are_forgotten_by_age_and_by_size() {
        let (answers, running) = (Answers::default(), CancellationToken::new());
        let (pending, _) = answers.expect(&running);
        pending.done(Bytes::from_static(b"data: 1\n\n"));
        tokio::time::advance(KEEP_DONE + Duration::from_secs(1)).await;
        answers.forget_old();
        assert_eq!(text(answers.resume("t0", &running).unwrap()).await, "", "kept past its minute");
        for _ in 0..3 {
            let (pending, _) = answers.expect(&running);
            pending.done(Bytes::from(vec![b'x'; KEPT_BYTES / 2]));
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        let (_still_running, _) = answers.expect(&running);
        answers.forget_old();
        let numbers: Vec<u64> = answers.kept.lock().unwrap().iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [2, 3, 4], "the oldest finished answer goes first, an unfinished one stays");
        let (pending, _) = answers.expect(&running);
        pending.done(Bytes::from(vec![b'y'; KEPT_BYTES * 2]));
        answers.forget_old();
        let resumed = text(answers.resume("t5", &running).unwrap()).await;
        assert_eq!(resumed.len(), KEPT_BYTES * 2, "the last answer is kept, however large");
    }

    /// Every session's finished answers together are bounded: past it, a session keeps none of
    /// its own (the newest too), and the count falls as they go.
    #[tokio::test]
    async fn the_finished_answers_of_every_session_are_bounded_together() {
        let (all, running) = (AllAnswers::new(3_000), CancellationToken::new());
        let sessions: Vec<Answers> = (0..4).map(|_| Answers::new(all.clone())).collect();
        for session in &sessions[..2] {
            let (pending, stream) = session.expect(&running);
            pending.done(Bytes::from(vec![b'x'; 1_000]));
            assert!(text(stream).await.ends_with(&"x".repeat(1_000)), "the stream gets its answer");
        }
        assert_eq!(all.held(), 2_000, "two answers kept for resumption");
        assert_eq!(text(sessions[0].resume("t0", &running).unwrap()).await.len(), 1_000);
        // A third and a fourth take the total past 3,000: the fourth session's own is not kept.
        let (pending, stream) = sessions[2].expect(&running);
        pending.done(Bytes::from(vec![b'y'; 1_000]));
        drop(stream);
        let (pending, stream) = sessions[3].expect(&running);
        pending.done(Bytes::from(vec![b'z'; 1_500]));
        assert!(text(stream).await.ends_with(&"z".repeat(1_500)), "a live stream still gets its answer");
        assert_eq!(text(sessions[3].resume("t0", &running).unwrap()).await, "", "not kept past the bound");
        assert_eq!(all.held(), 3_000);
        drop(sessions);
        assert_eq!(all.held(), 0, "closed sessions hold nothing");
    }

    #[tokio::test]
    async fn shutdown_ends_an_awaited_answer_stream() {
        let (answers, shutdown) = (Answers::default(), CancellationToken::new());
        let (_pending, response) = answers.expect(&shutdown);
        shutdown.cancel();
        let sent = tokio::time::timeout(Duration::from_secs(10), text(response)).await;
        assert_eq!(sent.expect("the stream ends"), "", "nothing is sent once the server is shutting down");
    }
}
