//! The knowledge-graph store benchmark: `cargo run --release -p trails-kg-bench`
//! (`-- --writes-only`: the durable writes alone).
//!
//! Measures, in one run, on the embedded store (SQLite `synchronous = FULL` unless said):
//! - durable writes/s, one writer and 8 concurrent writers (group commit), against the same
//!   number of raw SQLite `INSERT` + `COMMIT`s (one fsync each) as the baseline: 5 rounds, the
//!   three interleaved in each, medians with the range of the per-round ratios;
//! - equality-query latency (p50/p99) over 100,000 instances for result sizes 10, 100 and 1000,
//!   showing that cost follows the result, not the store;
//! - each typed-query operator family (count, and the first 100 full instances) against the
//!   equivalent hand-written SPARQL in the same run, and the N+1 reads the typed API avoids;
//! - start-up (rebuilding the in-memory engine from SQLite) at ~100k and ~1M triples.

use std::sync::Arc;
use std::time::{Duration, Instant};

use trails::kg::{EmbeddedStore, Filter, Kg, KgCtx, Synchronous, Term};
use trails::{node_type, Ctx};

/// A benchmark record: `bucket10` has 10,000 distinct values (10 instances each over 100k),
/// `bucket100` 1,000 and `bucket1000` 100.
#[node_type(label = "Item", iri = "https://example.org/bench#Item", key = "id")]
pub struct Item {
    pub id: String,
    pub bucket10: i64,
    pub bucket100: i64,
    pub bucket1000: i64,
    pub title: String,
    pub tags: Vec<String>,
}

fn item(n: i64) -> Item {
    Item {
        id: format!("item-{n}"),
        bucket10: n % 10_000,
        bucket100: n % 1_000,
        bucket1000: n % 100,
        title: format!("Item number {n}"),
        tags: vec![format!("t{}", n % 7), format!("u{}", n % 11)],
    }
}

const TRIPLES_PER_ITEM: usize = 8; // rdf:type + 5 fields + 2 tags

fn open(dir: &std::path::Path, sync: Synchronous) -> Kg {
    Kg::new(Arc::new(EmbeddedStore::open(dir, sync).expect("store opens")), "https://example.org/bench")
}

async fn write_items(kg: &Kg, from: i64, count: i64, writers: i64) -> Duration {
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|lane| {
            let kg = kg.clone();
            tokio::spawn(async move {
                let mut n = from + lane;
                while n < from + count {
                    kg.create(item(n)).await.expect("write");
                    n += writers;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    started.elapsed()
}

/// The raw SQLite baseline's database: one table of quad rows.
fn raw_sqlite(dir: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(dir.join("raw.sqlite3")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "FULL").unwrap();
    conn.execute_batch("CREATE TABLE t (s TEXT, p TEXT, o TEXT, g TEXT, PRIMARY KEY (s, p, o, g)) WITHOUT ROWID")
        .unwrap();
    conn
}

/// `count` commits of `TRIPLES_PER_ITEM` rows each, subjects from `from` on.
fn raw_sqlite_commits(conn: &rusqlite::Connection, from: usize, count: usize) -> Duration {
    let started = Instant::now();
    for n in from..from + count {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        for t in 0..TRIPLES_PER_ITEM {
            conn.execute(
                "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![n.to_string(), t.to_string(), "o", "g"],
            )
            .unwrap();
        }
        conn.execute_batch("COMMIT").unwrap();
    }
    started.elapsed()
}

fn query_rounds(runtime: &tokio::runtime::Runtime, kg: &Kg, store: &str) {
    let ctx = Ctx::local().with_kg(kg.clone());
    let f = Item::FIELDS;
    for (label, results) in [("bucket10", 10usize), ("bucket100", 100), ("bucket1000", 1000)] {
        let query = |round: i64| {
            let query = Item::objects(&ctx).limit(1000);
            match label {
                "bucket10" => query.where_eq(f.bucket10, round % 10_000),
                "bucket100" => query.where_eq(f.bucket100, round % 1_000),
                _ => query.where_eq(f.bucket1000, round % 100),
            }
        };
        let rounds = if store == "embedded" { 200 } else { 30 };
        let mut pages = Vec::new();
        let mut counts = Vec::new();
        for round in 0..rounds {
            let started = Instant::now();
            let page = runtime.block_on(query(round).page()).unwrap();
            pages.push(started.elapsed());
            assert_eq!(page.items.len(), results);
            let started = Instant::now();
            assert_eq!(runtime.block_on(query(round).count()).unwrap(), results);
            counts.push(started.elapsed());
        }
        pages.sort();
        counts.sort();
        let us = |d: Duration| d.as_micros();
        println!(
            "| `where_eq({label})`, full instances | {store} | {results} | {} | {} |",
            us(percentile(&pages, 0.5)),
            us(percentile(&pages, 0.99))
        );
        println!(
            "| `where_eq({label}).count()` | {store} | {results} | {} | {} |",
            us(percentile(&counts, 0.5)),
            us(percentile(&counts, 0.99))
        );
    }
}

/// p50 and p99 of `rounds` runs of `run`.
fn timed(rounds: usize, mut run: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

const GRAPH: &str = "<https://example.org/bench/graph/Item>";
const P: &str = "https://example.org/bench#";

/// Each operator family through the typed API against the SPARQL a person would write for it,
/// both run on the same store in the same run: the count, and the first 100 instances in IRI
/// order read in full (the hand-written side reads them in one batch, as the typed API does).
fn operator_rounds(runtime: &tokio::runtime::Runtime, kg: &Kg) {
    let ctx = Ctx::local().with_kg(kg.clone());
    let f = Item::FIELDS;
    type Family = (&'static str, fn() -> Filter<Item>, String);
    let families: Vec<Family> = vec![
        ("eq", || Item::FIELDS.bucket100.eq(7), format!("?s <{P}bucket100> 7")),
        ("range (lt)", || Item::FIELDS.bucket10.lt(10), format!("?s <{P}bucket10> ?v FILTER(?v < 10)")),
        (
            "between",
            || Item::FIELDS.bucket1000.between(3, 4),
            format!("?s <{P}bucket1000> ?v FILTER(?v >= 3 && ?v <= 4)"),
        ),
        ("is_in", || Item::FIELDS.bucket100.is_in([1, 2, 3]), format!("VALUES ?v {{ 1 2 3 }} ?s <{P}bucket100> ?v")),
        (
            "text contains",
            || Item::FIELDS.title.contains("number 1234"),
            format!("?s <{P}title> ?t FILTER(CONTAINS(?t, \"number 1234\"))"),
        ),
        (
            "text contains, any case",
            || Item::FIELDS.title.contains_ignore_case("NUMBER 1234"),
            format!("?s <{P}title> ?t FILTER(CONTAINS(LCASE(?t), \"number 1234\"))"),
        ),
        ("list contains", || Item::FIELDS.tags.contains("t3"), format!("?s <{P}tags> \"t3\"")),
        (
            "and / or / not",
            || (Item::FIELDS.bucket100.eq(5) | Item::FIELDS.bucket100.eq(6)) & !Item::FIELDS.tags.contains("t0"),
            format!("{{ ?s <{P}bucket100> 5 }} UNION {{ ?s <{P}bucket100> 6 }} MINUS {{ ?s <{P}tags> \"t0\" }}"),
        ),
    ];
    let rounds = 30;
    let us = |d: Duration| d.as_micros();
    println!("| operator over 100000 instances | read | matches | typed p50 / p99 µs | SPARQL p50 / p99 µs | typed ÷ SPARQL (p50) |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, filter, pattern) in &families {
        let count_query =
            format!("SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ GRAPH {GRAPH} {{ ?s a <{P}Item> . {pattern} }} }}");
        let page_query = format!(
            "SELECT DISTINCT ?s WHERE {{ GRAPH {GRAPH} {{ ?s a <{P}Item> . {pattern} }} }} ORDER BY STR(?s) LIMIT 100"
        );
        let matches = runtime.block_on(Item::objects(&ctx).filter(filter()).count()).unwrap();
        let hand_count = || {
            let rows = runtime.block_on(kg.sparql(&count_query, &[])).unwrap();
            trails::kg::store::count_of(&rows)
        };
        assert_eq!(hand_count(), matches, "{name}: the typed query and the SPARQL agree");
        let typed = timed(rounds, || {
            runtime.block_on(Item::objects(&ctx).filter(filter()).count()).unwrap();
        });
        let hand = timed(rounds, || {
            hand_count();
        });
        println!(
            "| {name} | count | {matches} | {} / {} | {} / {} | {:.2}× |",
            us(typed.0),
            us(typed.1),
            us(hand.0),
            us(hand.1),
            typed.0.as_secs_f64() / hand.0.as_secs_f64()
        );
        let typed = timed(rounds, || {
            runtime.block_on(Item::objects(&ctx).filter(filter()).limit(100).all()).unwrap();
        });
        let hand = timed(rounds, || {
            let rows = runtime.block_on(kg.sparql(&page_query, &[])).unwrap();
            let iris: Vec<String> = rows
                .iter()
                .filter_map(|row| match row.first() {
                    Some((_, Term::NamedNode(iri))) => Some(iri.as_str().to_owned()),
                    _ => None,
                })
                .collect();
            runtime.block_on(kg.get_iris::<Item>(&iris)).unwrap();
        });
        println!(
            "| {name} | first 100, full | {} | {} / {} | {} / {} | {:.2}× |",
            matches.min(100),
            us(typed.0),
            us(typed.1),
            us(hand.0),
            us(hand.1),
            typed.0.as_secs_f64() / hand.0.as_secs_f64()
        );
    }
    // Aggregates: instances per value over all 100k.
    let group = format!(
        "SELECT ?v (COUNT(DISTINCT ?s) AS ?n) WHERE {{ GRAPH {GRAPH} {{ ?s a <{P}Item> ; <{P}bucket1000> ?v }} }} GROUP BY ?v ORDER BY ?v"
    );
    let typed = timed(10, || {
        let groups = runtime.block_on(Item::objects(&ctx).count_by(f.bucket1000)).unwrap();
        assert_eq!(groups.len(), 100);
    });
    let hand = timed(10, || {
        runtime.block_on(kg.sparql(&group, &[])).unwrap();
    });
    println!(
        "| `count_by(bucket1000)` | 100 groups | 100000 | {} / {} | {} / {} | {:.2}× |",
        us(typed.0),
        us(typed.1),
        us(hand.0),
        us(hand.1),
        typed.0.as_secs_f64() / hand.0.as_secs_f64()
    );
}

/// The N+1 reads the typed API avoids: 100 instances found by SPARQL, then read one `get_iri`
/// per row (the example's search did that) against the typed query that reads them together.
fn n_plus_one(runtime: &tokio::runtime::Runtime, kg: &Kg, store: &str) {
    let ctx = Ctx::local().with_kg(kg.clone());
    let page_query = format!(
        "SELECT ?s WHERE {{ GRAPH {GRAPH} {{ ?s a <{P}Item> ; <{P}bucket1000> 7 }} }} ORDER BY STR(?s) LIMIT 100"
    );
    let rounds = if store == "embedded" { 30 } else { 10 };
    let typed = timed(rounds, || {
        let found =
            runtime.block_on(Item::objects(&ctx).filter(Item::FIELDS.bucket1000.eq(7)).limit(100).all()).unwrap();
        assert_eq!(found.len(), 100);
    });
    let one_by_one = timed(rounds, || {
        for row in runtime.block_on(kg.sparql(&page_query, &[])).unwrap() {
            if let Some((_, Term::NamedNode(iri))) = row.first() {
                runtime.block_on(kg.get_iri::<Item>(iri.as_str())).unwrap();
            }
        }
    });
    let us = |d: Duration| d.as_micros();
    println!(
        "| {store} | {} / {} | {} / {} | {:.2}× |",
        us(one_by_one.0),
        us(one_by_one.1),
        us(typed.0),
        us(typed.1),
        one_by_one.0.as_secs_f64() / typed.0.as_secs_f64()
    );
}

/// An Oxigraph server (the `cargo xtask test` venv's CLI) loaded with the embedded store's quads.
struct OxigraphServer {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl OxigraphServer {
    fn kg(&self) -> Kg {
        let store = trails::kg::RemoteStore::builder(format!("http://{}/query", self.addr))
            .update_url(format!("http://{}/update", self.addr))
            .build()
            .expect("an http:// store builds");
        Kg::new(Arc::new(store), "https://example.org/bench")
    }
}

impl Drop for OxigraphServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn oxigraph_server(runtime: &tokio::runtime::Runtime, data: &std::path::Path) -> Option<OxigraphServer> {
    let venv = std::env::var_os("TRAILS_PYENV").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/trails-pyenv")
    });
    let binary = venv.join("bin/oxigraph");
    if !binary.exists() {
        return None;
    }
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let child = std::process::Command::new(binary)
        .args(["serve", "--bind", &addr.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let server = OxigraphServer { child, addr };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !trails_bench::process::listens(addr) {
        assert!(Instant::now() < deadline, "Oxigraph server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The same quads, through the Graph Store Protocol (one bulk POST).
    let conn = rusqlite::Connection::open(data.join("kg.sqlite3")).unwrap();
    let mut statement = conn.prepare("SELECT s, p, o, g FROM quad").unwrap();
    let mut nquads = String::new();
    let rows = statement
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?))
        })
        .unwrap();
    for row in rows {
        let (s, p, o, g) = row.unwrap();
        nquads.push_str(&format!("{s} {p} {o} {g} .\n"));
    }
    let url = format!("http://{addr}/store");
    let response = runtime
        .block_on(reqwest::Client::new().post(&url).header("content-type", "application/n-quads").body(nquads).send())
        .ok()?;
    if !response.status().is_success() {
        eprintln!("loading Oxigraph server answered {}", response.status());
        return None;
    }
    Some(server)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    println!("# Trails KG store benchmark (embedded: SQLite WAL + in-memory oxigraph)\n");

    // Durable writes: per round, the baseline and both Trails runs, in rotating order.
    let (rounds, writes) = (5, 200);
    let rate = |n: i64, d: Duration| n as f64 / d.as_secs_f64();
    let raw = raw_sqlite(dir.path());
    let kg = open(&dir.path().join("durable"), Synchronous::Full);
    // [raw, one writer, 8 writers]: writes/s per round.
    let mut rates: [Vec<f64>; 3] = Default::default();
    let mut next = 0;
    for round in 0..rounds {
        for offset in 0..3 {
            let which = (round + offset) % 3;
            let count = if which == 2 { writes * 4 } else { writes };
            let elapsed = match which {
                0 => raw_sqlite_commits(&raw, next as usize, count as usize),
                1 => runtime.block_on(write_items(&kg, next, count, 1)),
                _ => runtime.block_on(write_items(&kg, next, count, 8)),
            };
            next += count;
            rates[which].push(rate(count, elapsed));
        }
    }
    let spread = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(f64::total_cmp);
        (values[values.len() / 2], values[0], values[values.len() - 1])
    };
    println!("| durable writes (synchronous = FULL), {rounds} rounds | writes/s, median (range) | ratio to raw SQLite (range) |");
    println!("|---|---:|---:|");
    let (raw_rate, raw_lo, raw_hi) = spread(rates[0].clone());
    println!(
        "| raw SQLite INSERT ×{TRIPLES_PER_ITEM} + COMMIT, one at a time (baseline) | {raw_rate:.0} ({raw_lo:.0}–{raw_hi:.0}) | 1.00× |"
    );
    for (which, label) in
        [(1, "Trails `create`, 1 writer"), (2, "Trails `create`, 8 concurrent writers (group commit)")]
    {
        let (median, lo, hi) = spread(rates[which].clone());
        let (ratio, ratio_lo, ratio_hi) = spread(rates[which].iter().zip(&rates[0]).map(|(t, r)| t / r).collect());
        println!("| {label} | {median:.0} ({lo:.0}–{hi:.0}) | **{ratio:.2}×** ({ratio_lo:.2}–{ratio_hi:.2}) |");
    }
    println!();
    drop(kg);
    if std::env::args().any(|arg| arg == "--writes-only") {
        return;
    }

    // Load 100k instances (synchronous = NORMAL to load fast; reads do not depend on it).
    let data = dir.path().join("query");
    let kg = open(&data, Synchronous::Normal);
    let instances = 100_000;
    let load = runtime.block_on(write_items(&kg, 0, instances, 16));
    println!(
        "loaded {instances} instances (~{} triples) in {:.1} s ({:.0} writes/s, synchronous = NORMAL)\n",
        instances as usize * TRIPLES_PER_ITEM,
        load.as_secs_f64(),
        rate(instances, load)
    );
    println!("| equality query over {instances} instances | store | results | p50 µs | p99 µs |");
    println!("|---|---|---:|---:|---:|");
    query_rounds(&runtime, &kg, "embedded");
    let server = oxigraph_server(&runtime, &data);
    match &server {
        Some(server) => query_rounds(&runtime, &server.kg(), "Oxigraph server"),
        None => println!("| (Oxigraph server: not installed; `cargo xtask test` installs it) | | | | |"),
    }
    println!();
    operator_rounds(&runtime, &kg);
    println!("\n| 100 instances found by SPARQL, read… | one `get_iri` per row p50 / p99 µs | together (typed query) p50 / p99 µs | per row ÷ together |");
    println!("|---|---:|---:|---:|");
    n_plus_one(&runtime, &kg, "embedded");
    if let Some(server) = &server {
        n_plus_one(&runtime, &server.kg(), "Oxigraph server");
    }
    drop(server);
    drop(kg);

    // Start-up: rebuild the engine from SQLite.
    println!("\n| start-up (rebuild from SQLite) | triples | ms |");
    println!("|---|---:|---:|");
    let reopen = |path: &std::path::Path| {
        let started = Instant::now();
        let kg = open(path, Synchronous::Normal);
        (started.elapsed(), kg)
    };
    let small = dir.path().join("startup-100k");
    let kg = open(&small, Synchronous::Normal);
    runtime.block_on(write_items(&kg, 0, 100_000 / TRIPLES_PER_ITEM as i64, 16));
    drop(kg);
    let (took, kg) = reopen(&small);
    drop(kg);
    println!("| ~100k triples | {} | {} |", 100_000 / TRIPLES_PER_ITEM * TRIPLES_PER_ITEM, took.as_millis());
    let (took, kg) = reopen(&data);
    drop(kg); // one store per directory: close it before growing the set below
    println!("| ~800k triples (the query set) | {} | {} |", instances as usize * TRIPLES_PER_ITEM, took.as_millis());
    let large = data; // grow the query set to ~1M triples
    let kg = open(&large, Synchronous::Normal);
    let extra = 1_000_000 / TRIPLES_PER_ITEM as i64 - instances;
    runtime.block_on(write_items(&kg, instances, extra, 16));
    drop(kg);
    let (took, kg) = reopen(&large);
    drop(kg);
    println!("| ~1M triples | {} | {} |", (instances + extra) as usize * TRIPLES_PER_ITEM, took.as_millis());
}
