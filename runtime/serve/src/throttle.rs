//! Warnings that can come in floods — a client's doing (a bad token, a refused session), or a
//! collector that stays away — are logged at most once per interval, with how many were held
//! back: a flood must not turn into a flood of logs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One log site's budget.
#[derive(Debug)]
pub(crate) struct Throttle {
    every: Duration,
    last: Mutex<Option<Instant>>,
    held: AtomicU64,
}

impl Throttle {
    pub(crate) fn new(every: Duration) -> Throttle {
        Throttle { every, last: Mutex::new(None), held: AtomicU64::new(0) }
    }

    /// `Some(held back since the last one)` when this occurrence may be logged.
    pub(crate) fn allow(&self) -> Option<u64> {
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        match *last {
            Some(at) if now.duration_since(at) < self.every => {
                self.held.fetch_add(1, Ordering::Relaxed);
                None
            }
            _ => {
                *last = Some(now);
                Some(self.held.swap(0, Ordering::Relaxed))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_per_interval_and_the_next_says_how_many_were_held() {
        let throttle = Throttle::new(Duration::from_millis(200));
        assert_eq!(throttle.allow(), Some(0));
        assert!((0..1000).all(|_| throttle.allow().is_none()));
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(throttle.allow(), Some(1000));
    }
}
