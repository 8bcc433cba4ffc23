//! Giving freed memory back to the system once the server goes quiet.
//!
//! glibc's malloc keeps the freed pages of its per-thread arenas mapped: after a burst of load the
//! resident size stays at the burst's high-water mark for good, although the memory is free.
//! `malloc_trim` hands those pages back. It walks every arena under its lock (milliseconds on a
//! large heap, stalling allocations meanwhile), so it runs only when the process is quiet.

use std::convert::Infallible;
use std::time::Duration;

/// How often the process checks whether it went quiet; also how long the store's writer waits
/// without a write before it rebuilds its engine.
pub(crate) const QUIET: Duration = Duration::from_secs(10);

/// Less CPU than this over a [`QUIET`] period is quiet (2% of a core); at least this much since
/// the last trim is a burst of work.
const BURST_CPU: Duration = Duration::from_millis(200);
/// Less work than a burst (a few requests, sessions expiring) is given back too, but at most this
/// often: a server under light steady load would otherwise trim every period.
const SMALL_WORK_EVERY: Duration = Duration::from_secs(30);
/// A period that used no more CPU than this did no work: the check itself and the server's own
/// timers use microseconds, and an idle process must not trim again and again.
const WORK_CPU: Duration = Duration::from_millis(1);

/// When to give memory back, from CPU time alone.
#[derive(Debug, Default)]
struct Trimming {
    /// CPU used since the last trim.
    since_trim: Duration,
    /// Periods checked since the last trim.
    periods: u32,
}

impl Trimming {
    /// A period that used `used` of CPU ended: whether to trim now. After a burst, the first quiet
    /// period trims; after less, the first quiet period once [`SMALL_WORK_EVERY`] has passed.
    fn period(&mut self, used: Duration) -> bool {
        // Below the floor is the process's own ticking (this check among it), not work.
        if used > WORK_CPU {
            self.since_trim += used;
        }
        self.periods += 1;
        let quiet = used < BURST_CPU;
        let burst = self.since_trim >= BURST_CPU;
        let small_due = self.since_trim > Duration::ZERO && QUIET * self.periods >= SMALL_WORK_EVERY;
        if quiet && (burst || small_due) {
            *self = Trimming::default();
            return true;
        }
        false
    }
}

/// Runs for as long as it is polled (alongside serving), giving memory back when quiet after
/// work ([`Trimming::period`]). Under load that keeps a core busier than 2% it never trims.
pub(crate) async fn give_back_when_quiet() -> Infallible {
    let mut ticks = tokio::time::interval(QUIET);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    let mut last = cpu_time();
    // Start-up (loading the store's engine) freed memory too.
    let mut trimming = Trimming { since_trim: BURST_CPU, periods: 0 };
    loop {
        ticks.tick().await;
        let now = cpu_time();
        if trimming.period(now.saturating_sub(last)) {
            let _ = tokio::task::spawn_blocking(give_back).await;
        }
        // The trim's own CPU is not work.
        last = cpu_time();
    }
}

/// Ask the allocator to return freed memory to the system (glibc; elsewhere nothing: other
/// allocators, musl's or a `#[global_allocator]` the application sets, return memory on their own
/// terms).
fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointer; it only walks glibc's own structures under their
    // locks, and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// CPU time this process has used so far (zero where it cannot be read: then nothing counts as
/// work and nothing is trimmed).
fn cpu_time() -> Duration {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut now = std::mem::MaybeUninit::<libc::timespec>::uninit();
        // SAFETY: `now` is valid for writes for the call's duration; it is read only when the
        // call succeeded, which means it wrote the whole `timespec`.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, now.as_mut_ptr()) } == 0 {
            let now = unsafe { now.assume_init() };
            return Duration::new(now.tv_sec as u64, now.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_burst_is_given_back_in_the_first_quiet_period() {
        let mut trimming = Trimming::default();
        assert!(!trimming.period(900 * MS), "not while busy");
        assert!(!trimming.period(3_000 * MS), "not while busy");
        assert!(trimming.period(2 * MS), "the first quiet period after the burst");
        assert!(!trimming.period(Duration::ZERO), "nothing done since: nothing to give back");
        assert!(!trimming.period(Duration::ZERO));
    }

    #[test]
    fn light_steady_work_is_given_back_at_most_every_thirty_seconds() {
        let mut trimming = Trimming::default();
        let trims: Vec<bool> = (0..9).map(|_| trimming.period(5 * MS)).collect();
        // Periods of 10 s: the third, sixth and ninth.
        assert_eq!(trims, [false, false, true, false, false, true, false, false, true]);
    }

    #[test]
    fn an_idle_process_never_trims() {
        let mut trimming = Trimming::default();
        assert!((0..100).all(|_| !trimming.period(Duration::from_micros(50))));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn cpu_time_counts_work() {
        let before = cpu_time();
        let began = std::time::Instant::now();
        let mut x = 0u64;
        // Spin until 20 ms of CPU show (however busy the machine), within a wall-clock deadline.
        while cpu_time() - before < 20 * MS {
            assert!(began.elapsed() < Duration::from_secs(10), "10 s of spinning showed no CPU time");
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
    }
}
