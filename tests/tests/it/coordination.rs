//! What replicas share in Redis (`trails-coord`), against a real Redis server: several
//! coordinators on one Redis stand for several replicas.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trails_coord::budget::Charge;
use trails_coord::claims::{Claimed, Keeping, KeyOf, Settled};
use trails_coord::feed::Received;
use trails_coord::{CoordError, Coordinator, Options};
use trails_tests::servers::RedisServer;

async fn replica(redis: &RedisServer) -> Coordinator {
    let options = Options { url: redis.url(), prefix: "trails:test:".into(), timeout: Duration::from_secs(2) };
    Coordinator::connect(options).await.unwrap()
}

fn charge(caller: &str) -> Charge<'_> {
    Charge { caller, window_ms: 60_000, tokens: 120, usd: 0.25, max_tokens: Some(600), max_usd: None, peek: false }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn a_budget_of_n_is_n_across_replicas_charged_at_once() {
    let redis = RedisServer::start();
    let replicas = [replica(&redis).await, replica(&redis).await, replica(&redis).await];
    // Fifteen 120-token charges against 600, five per replica, all at once.
    let charges = replicas.iter().flat_map(|r| (0..5).map(move |_| r.charge(charge("caller:ana"))));
    let spent = futures_util::future::join_all(charges).await;
    let admitted = spent.iter().filter(|s| s.as_ref().unwrap().admitted).count();
    assert_eq!(admitted, 5, "{spent:?}");
    let last = replicas[1].charge(charge("caller:ana")).await.unwrap();
    assert!(!last.admitted);
    assert_eq!((last.tokens, last.usd), (600, 1.25), "a refusal reports the window as it is");
    // Another caller has a budget of its own; a cost over the whole limit never fits.
    assert!(replicas[2].charge(charge("caller:bo")).await.unwrap().admitted);
    let huge = Charge { tokens: 601, ..charge("caller:cy") };
    assert!(!replicas[0].charge(huge).await.unwrap().admitted);
    // A dry run's look says whether a charge would fit, and adds nothing.
    let peek = |caller| Charge { peek: true, ..charge(caller) };
    for _ in 0..3 {
        let looked = replicas[0].charge(peek("caller:bo")).await.unwrap();
        assert!(looked.admitted && looked.tokens == 120, "{looked:?}");
    }
    assert!(!replicas[0].charge(peek("caller:ana")).await.unwrap().admitted, "ana has nothing left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn a_window_renews_when_it_ends() {
    let redis = RedisServer::start();
    let one = replica(&redis).await;
    let short = |tokens| Charge { window_ms: 300, tokens, ..charge("caller:ana") };
    assert!(one.charge(short(600)).await.unwrap().admitted);
    let refused = one.charge(short(1)).await.unwrap();
    assert!(!refused.admitted);
    assert!(refused.now_ms - refused.since_ms < 300);
    tokio::time::sleep(Duration::from_millis(350)).await;
    let renewed = one.charge(short(1)).await.unwrap();
    assert!(renewed.admitted && renewed.tokens == 1 && renewed.since_ms > refused.since_ms);
}

fn keeping(max_keys: usize) -> Keeping {
    Keeping {
        keep: Duration::from_secs(3600),
        max_keys,
        abandoned_after: Duration::from_secs(600),
        caller_bytes: 1 << 20,
        total_bytes: 1 << 30,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn one_claim_wins_across_replicas_and_its_result_replays_everywhere() {
    let redis = RedisServer::start();
    let (a, b) = (replica(&redis).await, replica(&redis).await);
    let key = KeyOf { caller: "caller:ana", tool: "requirement_update", key: "k-1" };
    let claims = (0..8).map(|n| {
        let replica = if n % 2 == 0 { &a } else { &b };
        replica.claim(key, "digest-1", ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"][n], keeping(100))
    });
    let found: Vec<Claimed> = futures_util::future::join_all(claims).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(found.iter().filter(|c| **c == Claimed::New).count(), 1, "{found:?}");
    assert_eq!(found.iter().filter(|c| **c == Claimed::Running).count(), 7);
    let winner = format!("c{}", found.iter().position(|c| *c == Claimed::New).unwrap());

    // An empty claim id only looks: it claims nothing (a dry run).
    let fresh = KeyOf { key: "k-looked", ..key };
    for _ in 0..2 {
        assert_eq!(a.claim(fresh, "digest-1", "", keeping(100)).await.unwrap(), Claimed::New);
    }
    assert_eq!(b.claim(key, "digest-1", "", keeping(100)).await.unwrap(), Claimed::Running);

    // Only the winning claim settles the key.
    assert_eq!(b.settle(key, "c-other", "{\"lost\":true}", keeping(100)).await.unwrap(), Settled::Gone);
    assert_eq!(a.settle(key, &winner, "{\"ok\":1}", keeping(100)).await.unwrap(), Settled::Kept);
    assert_eq!(b.claim(key, "digest-1", "c9", keeping(100)).await.unwrap(), Claimed::Result("{\"ok\":1}".into()));
    assert_eq!(b.claim(key, "digest-2", "c9", keeping(100)).await.unwrap(), Claimed::OtherArguments);
    // Another caller's key of the same text is another key.
    let theirs = KeyOf { caller: "caller:bo", ..key };
    assert_eq!(b.claim(theirs, "digest-1", "c10", keeping(100)).await.unwrap(), Claimed::New);

    // A failed call frees its key (and only its own claim frees it).
    let failing = KeyOf { key: "k-2", ..key };
    assert_eq!(a.claim(failing, "d", "f1", keeping(100)).await.unwrap(), Claimed::New);
    b.free(failing, "someone-else").await.unwrap();
    assert_eq!(b.claim(failing, "d", "f2", keeping(100)).await.unwrap(), Claimed::Running);
    a.free(failing, "f1").await.unwrap();
    assert_eq!(b.claim(failing, "d", "f3", keeping(100)).await.unwrap(), Claimed::New);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn a_caller_keeps_at_most_max_keys_the_oldest_go_first() {
    let redis = RedisServer::start();
    let a = replica(&redis).await;
    for n in 0..5 {
        let key = format!("k-{n}");
        let of = KeyOf { caller: "caller:ana", tool: "t", key: &key };
        assert_eq!(a.claim(of, "d", &key, keeping(3)).await.unwrap(), Claimed::New);
        assert_eq!(a.settle(of, &key, "r", keeping(3)).await.unwrap(), Settled::Kept);
        // Settled keys are ordered by the millisecond they settled in.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let kept = |n: usize| {
        let key = format!("k-{n}");
        let a = a.clone();
        async move {
            let of = KeyOf { caller: "caller:ana", tool: "t", key: &key };
            a.claim(of, "d", "probe", keeping(3)).await.unwrap() == Claimed::Result("r".into())
        }
    };
    assert_eq!([kept(4).await, kept(3).await, kept(2).await], [true; 3]);
    assert!(!kept(0).await && !kept(1).await, "the two oldest were dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn kept_results_are_bounded_in_bytes_per_caller_and_in_all() {
    let redis = RedisServer::start();
    let (a, b) = (replica(&redis).await, replica(&redis).await);
    // 1,000-byte results; a caller keeps 3,500 bytes, everyone 6,000.
    let bounded = Keeping { caller_bytes: 3_500, total_bytes: 6_000, ..keeping(100) };
    let result = "r".repeat(1_000);
    let settle = |replica: &Coordinator, caller: &'static str, n: usize| {
        let (replica, result) = (replica.clone(), result.clone());
        async move {
            let key = format!("k-{n}");
            let of = KeyOf { caller, tool: "t", key: &key };
            assert_eq!(replica.claim(of, "d", &key, bounded).await.unwrap(), Claimed::New);
            let settled = replica.settle(of, &key, &result, bounded).await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
            settled
        }
    };
    let kept = |replica: &Coordinator, caller: &'static str, n: usize| {
        let replica = replica.clone();
        async move {
            let key = format!("k-{n}");
            let of = KeyOf { caller, tool: "t", key: &key };
            matches!(replica.claim(of, "d", "probe", bounded).await.unwrap(), Claimed::Result(_))
        }
    };
    for n in 0..5 {
        assert_eq!(settle(if n % 2 == 0 { &a } else { &b }, "caller:ana", n).await, Settled::Kept);
    }
    // Ana's three newest fit her 3,500 bytes; her two oldest went, on either replica.
    assert_eq!(
        [kept(&b, "caller:ana", 4).await, kept(&a, "caller:ana", 3).await, kept(&b, "caller:ana", 2).await],
        [true; 3]
    );
    assert!(!kept(&a, "caller:ana", 0).await && !kept(&b, "caller:ana", 1).await);
    // A result larger than a caller may keep is not kept.
    let big = KeyOf { caller: "caller:ana", tool: "t", key: "big" };
    assert_eq!(a.claim(big, "d", "big", bounded).await.unwrap(), Claimed::New);
    assert_eq!(a.settle(big, "big", &"r".repeat(3_501), bounded).await.unwrap(), Settled::TooLarge);
    // Bo fills the rest (3,000 + 3,000 = 6,000): then a new key is refused, for anyone; a kept
    // one still replays.
    for n in 0..3 {
        assert_eq!(settle(&b, "caller:bo", n).await, Settled::Kept);
    }
    let new = KeyOf { caller: "caller:cy", tool: "t", key: "k-0" };
    assert_eq!(a.claim(new, "d", "c", bounded).await.unwrap(), Claimed::Full);
    assert_eq!(b.claim(new, "d", "", bounded).await.unwrap(), Claimed::Full, "a dry run's look says so too");
    assert!(kept(&a, "caller:bo", 2).await);
    // Past retention the callers are idle: their bytes leave the total and new keys fit again.
    let soon = Keeping { keep: Duration::from_secs(1), ..bounded };
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(a.claim(new, "d", "c", soon).await.unwrap(), Claimed::New);
}

/// Collects what a follower hears.
fn listener() -> (Arc<Mutex<Vec<Received>>>, impl Fn(Received) + Send + Sync + 'static) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    (heard, move |received| sink.lock().unwrap().push(received))
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn the_feed_reaches_the_other_replicas_not_the_writer_and_says_lagged_after_redis_restarts_empty() {
    let mut redis = RedisServer::start();
    let (a, b) = (replica(&redis).await, replica(&redis).await);
    let (heard_by_a, on_a) = listener();
    let (heard_by_b, on_b) = listener();
    let _following_a = a.follow(on_a);
    let _following_b = b.follow(on_b);
    // Followers start at the stream's end: give them a moment to position.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let from_a = a.publisher();
    for n in 0..3 {
        from_a.publish(format!("change-{n}"));
    }
    let expected: Vec<Received> = (0..3).map(|n| Received::Entry(format!("change-{n}"))).collect();
    until("b to hear a's writes", || heard_by_b.lock().unwrap().len() >= 3).await;
    assert_eq!(*heard_by_b.lock().unwrap(), expected, "in order, once each");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(heard_by_a.lock().unwrap().is_empty(), "a replica does not hear its own writes back");

    // Redis restarts empty: followers reconnect and say they lagged; the feed goes on.
    redis.restart();
    until("b to report lagged", || heard_by_b.lock().unwrap().contains(&Received::Lagged)).await;
    until("a to report lagged", || heard_by_a.lock().unwrap().contains(&Received::Lagged)).await;
    let before = heard_by_b.lock().unwrap().len();
    let mut sent = 0;
    // The publisher's connection reconnects on its own; retry until an entry gets through.
    until("b to hear a write after the restart", || {
        if sent < 200 {
            from_a.publish("after-restart".into());
            sent += 1;
        }
        heard_by_b.lock().unwrap()[before..].contains(&Received::Entry("after-restart".into()))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (Debian redis-server): `cargo xtask test` installs it and runs this"]
async fn one_replica_at_a_time_holds_a_lease_until_it_lapses() {
    let redis = RedisServer::start();
    let (a, b) = (replica(&redis).await, replica(&redis).await);
    let ttl = Duration::from_millis(400);
    assert!(a.lease("prune", ttl).await.unwrap());
    assert!(!b.lease("prune", ttl).await.unwrap());
    assert!(a.lease("prune", ttl).await.unwrap(), "the holder renews");
    assert!(b.lease("other", ttl).await.unwrap(), "leases are by name");
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    assert!(b.lease("prune", ttl).await.unwrap(), "a lease not renewed lapses");
    assert!(!a.lease("prune", ttl).await.unwrap());
}

#[tokio::test]
async fn an_unreachable_redis_is_a_clear_error_at_connect_with_the_password_hidden() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let options =
        Options { url: format!("redis://:hunter2@{closed}"), prefix: "t:".into(), timeout: Duration::from_millis(500) };
    let started = Instant::now();
    let error = Coordinator::connect(options).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "gave up in {:?}", started.elapsed());
    assert!(error.is_unavailable());
    let message = error.to_string();
    assert!(message.contains(&format!("redis://:***@{closed}")) && !message.contains("hunter2"), "{message}");
    let bad = Options { url: "http://example.com".into(), prefix: "t:".into(), timeout: Duration::from_millis(500) };
    assert!(matches!(Coordinator::connect(bad).await, Err(CoordError::Url { .. })));
}
