//! The writer of the crash-durability test: opens the embedded store in `DIR`, then four
//! concurrent tasks create `CrashEntry`s from `START` on and print `ack N` (flushed) after each
//! acknowledged write, until the test kills the process with SIGKILL.

use std::io::Write as _;
use std::sync::Arc;

use trails::kg::{EmbeddedStore, Kg, Synchronous};
use trails_tests::CrashEntry;

const WRITERS: i64 = 4;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: kg-crash-writer DIR START");
    let start: i64 = args.next().and_then(|s| s.parse().ok()).expect("START is an integer");
    let store = EmbeddedStore::open(std::path::Path::new(&dir), Synchronous::Full).expect("the store opens");
    let kg = Kg::new(Arc::new(store), "https://example.org/crash");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let tasks: Vec<_> = (0..WRITERS)
            .map(|lane| {
                let kg = kg.clone();
                tokio::spawn(async move {
                    let mut seq = start + lane;
                    loop {
                        kg.create(CrashEntry::new(seq)).await.expect("a fresh key is accepted");
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "ack {seq}").unwrap();
                        out.flush().unwrap();
                        seq += WRITERS;
                    }
                })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
    });
}
