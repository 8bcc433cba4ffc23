//! Acknowledged writes survive `kill -9`: a child process writes with four concurrent tasks and
//! prints `ack N` after each acknowledged write; it is killed with SIGKILL at a random moment, the
//! store is reopened, and every acknowledged entry must be there — complete — and no entry may be
//! half-written. Twenty rounds, each restarting from where the store is.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use trails::kg::{EmbeddedStore, Kg, KgCtx, Synchronous};
use trails::Ctx;
use trails_tests::CrashEntry;

const ROUNDS: usize = 20;

fn reopen(dir: &std::path::Path) -> Kg {
    Kg::new(Arc::new(EmbeddedStore::open(dir, Synchronous::Full).unwrap()), "https://example.org/crash")
}

/// Every stored entry, checked to be whole.
fn all_entries(kg: &Kg, runtime: &tokio::runtime::Runtime) -> Vec<i64> {
    let ctx = Ctx::local().with_kg(kg.clone());
    let mut seqs = Vec::new();
    let mut offset = 0;
    loop {
        let page = runtime
            .block_on(CrashEntry::objects(&ctx).order_by(CrashEntry::FIELDS.seq).offset(offset).limit(1000).page())
            .unwrap();
        for entry in &page.items {
            let mut expected = CrashEntry::new(entry.value.seq);
            expected.parts.sort();
            assert_eq!(entry.value, expected, "entry {} is whole", entry.value.seq);
        }
        offset += page.items.len();
        seqs.extend(page.items.into_iter().map(|e| e.value.seq));
        if offset >= page.total {
            return seqs;
        }
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut acknowledged: Vec<i64> = Vec::new();
    let mut start = 0;
    let mut seed: u64 = 0x5eed_1234;
    for round in 0..ROUNDS {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kg-crash-writer"))
            .arg(dir.path())
            .arg(start.to_string())
            .env("TRAILS_LOG", "error")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines, acks) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(seq) = line.strip_prefix("ack ").and_then(|s| s.parse::<i64>().ok()) {
                    if lines.send(seq).is_err() {
                        break;
                    }
                }
            }
        });
        // Wait for the first acknowledgement, then kill at a pseudo-random moment after it.
        let first = acks.recv_timeout(Duration::from_secs(20)).expect("the writer acknowledges a write");
        acknowledged.push(first);
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let delay = Duration::from_millis(5 + (seed >> 33) % 200);
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if let Ok(seq) = acks.recv_timeout(until.saturating_duration_since(Instant::now())) {
                acknowledged.push(seq);
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        // Acks printed before the kill count too.
        acknowledged.extend(acks.try_iter());

        let kg = reopen(dir.path());
        let stored = all_entries(&kg, &runtime);
        for seq in &acknowledged {
            assert!(stored.binary_search(seq).is_ok(), "round {round}: acknowledged entry {seq} is missing");
        }
        start = stored.last().map(|last| last + 1).unwrap_or(0);
    }
    assert!(acknowledged.len() > ROUNDS, "the writer made progress: {} acknowledged", acknowledged.len());
}
