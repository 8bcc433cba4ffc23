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

/// Less CPU than this over a [`QUIET`] period is quiet (2% of a core).
const QUIET_CPU: Duration = Duration::from_millis(200);
/// More CPU than this over a period is work that may have freed memory. The check itself uses a
/// few microseconds, so an idle process does not trim again and again.
const WORK_CPU: Duration = Duration::from_millis(1);

/// Runs for as long as it is polled (alongside serving): every [`QUIET`], if the process worked
/// since it last gave memory back and was quiet during the last period, gives memory back. Under
/// steady load it never trims; after the load, or after a quiet period's small work (sessions
/// expiring, the store rebuilding its engine), it trims once.
pub(crate) async fn give_back_when_quiet() -> Infallible {
    let mut ticks = tokio::time::interval(QUIET);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last = cpu_time();
    let mut worked = false;
    loop {
        ticks.tick().await;
        let now = cpu_time();
        let used = now.saturating_sub(last);
        last = now;
        worked |= used > WORK_CPU;
        if worked && used < QUIET_CPU {
            let _ = tokio::task::spawn_blocking(give_back).await;
            // The trim's own CPU is not work.
            last = cpu_time();
            worked = false;
        }
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
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `now` is a valid, writable `timespec` for the call's duration.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) } == 0 {
            return Duration::new(now.tv_sec as u64, now.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_counts_work() {
        let before = cpu_time();
        let mut x = 0u64;
        let began = std::time::Instant::now();
        while began.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(cpu_time() - before >= Duration::from_millis(20), "50 ms of spinning is CPU time");
    }
}
