//! The change feed: a Redis stream every replica appends its acknowledged writes to and reads the
//! others' from, so a subscriber hears of a write whichever replica made it.
//!
//! The stream is capped (`MAXLEN ~`), so it cannot grow without bound; a replica that falls
//! behind the cap, or whose Redis restarted empty, is told [`Received::Lagged`] and so are its
//! subscribers (they re-read what they watch). Publishing never waits: entries go through a
//! bounded queue to one task, and what cannot be published (queue full, Redis away) is replaced
//! by one `lagged` entry once Redis takes writes again. Entries are opaque text to this crate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::streams::{StreamId, StreamRangeReply, StreamReadReply};
use redis::AsyncConnectionConfig;
use tokio::sync::mpsc;

use crate::{CoordError, Coordinator};

/// Entries the stream keeps (at least; Redis trims in whole nodes).
pub const KEPT: usize = 10_000;
/// How long one blocking read waits for entries before it asks again.
const BLOCK: Duration = Duration::from_secs(2);
/// Entries read at once.
const BATCH: usize = 256;
/// Entries waiting to be published; more are dropped and reported as `lagged`.
const QUEUED: usize = 4096;

/// What a follower hears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// Another replica's entry.
    Entry(String),
    /// Entries were missed (the stream was trimmed past this replica, Redis restarted empty, or
    /// a replica could not publish some): whoever watches should re-read.
    Lagged,
}

/// Appends this replica's entries to the feed. Cheap to clone.
#[derive(Clone)]
pub struct Publisher {
    queue: mpsc::Sender<String>,
    lost: Arc<AtomicBool>,
}

impl Publisher {
    /// Queue `entry`; never waits. An entry that does not fit is lost, and the others are told.
    pub fn publish(&self, entry: String) {
        if self.queue.try_send(entry).is_err() {
            self.lost.store(true, Ordering::Relaxed);
        }
    }
}

/// A follower's task; stops when dropped.
pub struct Following(tokio::task::JoinHandle<()>);

impl Drop for Following {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A stream entry id (`ms-seq`), compared as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Position(u64, u64);

impl Position {
    const START: Position = Position(0, 0);

    fn parse(id: &str) -> Option<Position> {
        let (ms, seq) = id.split_once('-')?;
        Some(Position(ms.parse().ok()?, seq.parse().ok()?))
    }

    fn id(self) -> String {
        format!("{}-{}", self.0, self.1)
    }
}

impl Coordinator {
    fn feed_key(&self) -> String {
        self.key("feed", "changes")
    }

    /// Start this replica's publisher (on the current tokio runtime).
    pub fn publisher(&self) -> Publisher {
        let (queue, mut waiting) = mpsc::channel::<String>(QUEUED);
        let lost = Arc::new(AtomicBool::new(false));
        let (key, origin, mut conn, flag) =
            (self.feed_key(), self.inner.replica.clone(), self.connection(), lost.clone());
        tokio::spawn(async move {
            while let Some(first) = waiting.recv().await {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    let Ok(next) = waiting.try_recv() else { break };
                    batch.push(next);
                }
                let mut pipe = redis::pipe();
                if flag.swap(false, Ordering::Relaxed) {
                    pipe.add_command(append(&key, &origin, None)).ignore();
                }
                for entry in &batch {
                    pipe.add_command(append(&key, &origin, Some(entry))).ignore();
                }
                if let Err(error) = pipe.query_async::<()>(&mut conn).await {
                    tracing::warn!(%error, "could not publish to the change feed; other replicas will be told they lagged");
                    flag.store(true, Ordering::Relaxed);
                    // Until Redis takes the marker, take nothing more (what queues meanwhile
                    // beyond the queue's room is counted as lost too): the others learn of the
                    // loss as soon as Redis is back, not at this replica's next write.
                    loop {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        if redis::Cmd::query_async::<()>(&append(&key, &origin, None), &mut conn).await.is_ok() {
                            flag.store(false, Ordering::Relaxed);
                            tracing::info!("the change feed takes entries again");
                            break;
                        }
                    }
                }
            }
        });
        Publisher { queue, lost }
    }

    /// Follow the other replicas' entries from now on, calling `on` for each (on the current
    /// tokio runtime, until the returned handle is dropped). `on` must not wait.
    pub fn follow(&self, on: impl Fn(Received) + Send + Sync + 'static) -> Following {
        let (client, key, origin, timeout) =
            (self.inner.client.clone(), self.feed_key(), self.inner.replica.clone(), self.inner.timeout);
        Following(tokio::spawn(async move {
            let config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(BLOCK + timeout));
            let mut last: Option<Position> = None;
            let mut failures = 0u32;
            loop {
                let followed = async {
                    let mut conn = client.get_multiplexed_async_connection_with_config(&config).await?;
                    let (from, lagged) = position(&mut conn, &key, last).await?;
                    if lagged {
                        on(Received::Lagged);
                    }
                    if failures > 0 {
                        tracing::info!("following the change feed again");
                    }
                    last = Some(from);
                    failures = 0;
                    loop {
                        let before = last.unwrap_or(Position::START);
                        let read = read(&mut conn, &key, before).await?;
                        let full = read.len() >= BATCH;
                        for entry in read {
                            if let Some(at) = Position::parse(&entry.id) {
                                last = Some(at);
                            }
                            if entry.get::<String>("o").as_deref() == Some(origin.as_str()) {
                                continue;
                            }
                            match entry.get::<String>("p") {
                                Some(payload) => on(Received::Entry(payload)),
                                None => on(Received::Lagged),
                            }
                        }
                        // A full batch may mean the stream runs ahead of this replica: check the
                        // cap had not passed where this read began (`XREAD` then starts, silently,
                        // at the oldest entry left). Further behind than the cap means full
                        // batches all the way, so a short batch needs no check.
                        if full && before != Position::START && !contains(&mut conn, &key, before).await? {
                            on(Received::Lagged);
                        }
                    }
                    #[allow(unreachable_code)]
                    Ok::<(), CoordError>(())
                };
                if let Err(error) = followed.await {
                    if failures == 0 {
                        tracing::warn!(%error, "lost the change feed; reconnecting");
                    }
                    failures = failures.saturating_add(1);
                    let wait = Duration::from_millis(100 * u64::from(failures.min(20)));
                    tokio::time::sleep(wait).await;
                }
            }
        }))
    }
}

/// `XADD key MAXLEN ~ KEPT * o origin [p entry]` (no `p`: a `lagged` marker).
fn append(key: &str, origin: &str, entry: Option<&str>) -> redis::Cmd {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(key).arg("MAXLEN").arg("~").arg(KEPT).arg("*").arg("o").arg(origin);
    if let Some(entry) = entry {
        cmd.arg("p").arg(entry);
    }
    cmd
}

/// Where to read from, and whether entries were missed since `last`. A first position is the
/// newest entry: a replica hears what happens from now. After that, entries were missed when the
/// entry read last is no longer in the stream: the cap passed it, or Redis restarted (empty, or
/// from older persisted data). Reading resumes after `last` — or, when the stream's newest entry
/// is older than `last` (a Redis restored from older data), after that newest entry, so nothing
/// already heard is heard again.
async fn position(
    conn: &mut MultiplexedConnection,
    key: &str,
    last: Option<Position>,
) -> Result<(Position, bool), CoordError> {
    let mut newest = redis::cmd("XREVRANGE");
    newest.arg(key).arg("+").arg("-").arg("COUNT").arg(1);
    let newest: StreamRangeReply = newest.query_async(conn).await?;
    let newest = newest.ids.first().and_then(|entry| Position::parse(&entry.id));
    Ok(match last {
        None => (newest.unwrap_or(Position::START), false),
        Some(Position::START) => (Position::START, false),
        Some(last) => match newest {
            None => (Position::START, true),
            Some(newest) if newest < last => (newest, true),
            Some(_) => (last, !contains(conn, key, last).await?),
        },
    })
}

/// Whether the entry `at` is still in the stream.
async fn contains(conn: &mut MultiplexedConnection, key: &str, at: Position) -> Result<bool, CoordError> {
    let mut range = redis::cmd("XRANGE");
    range.arg(key).arg(at.id()).arg(at.id());
    let found: StreamRangeReply = range.query_async(conn).await?;
    Ok(!found.ids.is_empty())
}

/// The entries after `after`, waiting up to [`BLOCK`] for some.
async fn read(conn: &mut MultiplexedConnection, key: &str, after: Position) -> Result<Vec<StreamId>, CoordError> {
    let mut cmd = redis::cmd("XREAD");
    cmd.arg("COUNT").arg(BATCH).arg("BLOCK").arg(BLOCK.as_millis() as u64).arg("STREAMS").arg(key).arg(after.id());
    let reply: Option<StreamReadReply> = cmd.query_async(conn).await?;
    Ok(reply.into_iter().flat_map(|reply| reply.keys).flat_map(|stream| stream.ids).collect())
}

#[cfg(test)]
mod tests {
    use super::Position;

    #[test]
    fn positions_compare_as_numbers_not_text() {
        let a = Position::parse("999-5").unwrap();
        let b = Position::parse("1000-0").unwrap();
        assert!(a < b);
        assert_eq!(b.id(), "1000-0");
        assert_eq!(Position::parse("x-1"), None);
    }
}
