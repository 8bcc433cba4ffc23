//! The knowledge graph through the typed API, on the embedded store: identity, exact round
//! trips, validated writes, key / unique / reference integrity (atomic, also under races),
//! queries, read-only SPARQL, and durability across a reopen.

use std::sync::Arc;

use serde_json::json;
use trails::declare::NodeType;
use trails::error::FieldCode;
use trails::kg::{EmbeddedStore, Kg, KgCtx, Literal, RemoteStore, Synchronous, Term, DEFAULT_BASE};
use trails::{capability, node_type, Blob, Ctx, DateTime, Error, Ref};
use trails_tests::servers::{OxigraphServer, TlsProxy};

/// A team.
#[node_type(label = "Team", iri = "https://example.org/t#Team", key = "slug")]
#[derive(Debug, Clone, PartialEq)]
pub struct Team {
    #[predicate(pattern = r"^[a-z]+$", max_length = 20)]
    pub slug: String,
    #[predicate(max_length = 80)]
    pub name: String,
}

/// A person, unique by e-mail and by (team, badge) together.
#[node_type(label = "Member", iri = "https://example.org/t#Member", key = "handle", unique = ["team", "badge"])]
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    #[predicate(min_length = 1, max_length = 40)]
    pub handle: String,
    pub team: Ref<Team>,
    #[predicate(min_value = 1, max_value = 9999)]
    pub badge: i64,
    #[predicate(max_count = 5, max_length = 20)]
    pub skills: Vec<String>,
    pub score: Option<f64>,
    pub active: bool,
    pub joined: Option<DateTime>,
    pub mentor: Option<Ref<Member>>,
}

/// Each test once per test server (ignored under plain `cargo test`, with the reason).
macro_rules! on_servers {
    ($oxigraph:ident, $virtuoso:ident; $($name:ident),* $(,)?) => {
        mod $oxigraph {
            $(
                #[test]
                #[ignore = "needs Oxigraph server (PyPI oxigraph==0.5.13): `cargo xtask test` installs it and runs these"]
                fn $name() {
                    let server = trails_tests::servers::OxigraphServer::start();
                    super::$name(server.kg())
                }
            )*
        }
        mod $virtuoso {
            $(
                #[test]
                #[ignore = "needs Virtuoso 7 (Debian virtuoso-opensource-7-bin): `cargo xtask test` installs it and runs these"]
                fn $name() {
                    let server = trails_tests::servers::VirtuosoServer::start();
                    super::$name(server.kg())
                }
            )*
        }
    };
}

/// Every store-independent test, once per store: the conformance suite.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(#[test] fn $name() { super::$name(trails::kg::Kg::temporary().unwrap()) })*
        }
        on_servers!(oxigraph_server, virtuoso; $($name),*);
    };
}

/// Remote stores only: what they bound that the embedded store does not.
macro_rules! remote {
    ($($name:ident),* $(,)?) => {
        on_servers!(remote_oxigraph_server, remote_virtuoso; $($name),*);
    };
}

remote!(an_instance_too_large_for_one_atomic_write_is_refused_whole);

conformance!(
    a_page_of_more_rows_than_an_endpoint_returns_at_once_comes_back_whole,
    values_at_the_edges_of_their_datatypes_round_trip,
    a_parents_unique_group_holds_across_its_subtypes,
    under_rdfs_a_parents_reads_include_its_subtypes_instances,
    a_cursor_past_a_text_key_reaches_what_was_stored_before_it,
    instances_round_trip_exactly_under_their_key_iri,
    bad_writes_are_field_errors_and_change_nothing,
    updates_are_partial_checked_and_keep_the_key,
    deletes_refuse_to_leave_dangling_references,
    queries_filter_order_page_and_count,
    every_filter_operator_answers_as_the_same_filter_over_the_values,
    several_sort_keys_and_a_cursor_page_through_everything_once,
    aggregates_count_group_and_sum_the_matching_instances,
    all_reads_every_match_and_a_page_past_its_maximum_is_an_error,
    sparql_is_read_only_and_binds_values_as_terms,
    concurrent_writers_racing_for_one_unique_value_exactly_one_wins,
    concurrent_updates_are_not_lost,
    blobs_round_trip_by_content_and_the_graph_keeps_only_their_metadata,
    an_instance_heavier_than_its_bound_is_a_field_error_and_changes_nothing,
);

/// An account; its e-mail is unique across every kind of account.
#[node_type(label = "Account", iri = "https://example.org/t#Account", key = "login", unique = ["email"])]
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub login: String,
    pub email: String,
}

/// An administrator account.
#[node_type(label = "Admin", iri = "https://example.org/t#Admin", extends = Account)]
#[derive(Debug, Clone, PartialEq)]
pub struct Admin {
    pub account: Account,
    pub level: i64,
}

/// A signed-in session of an account (of any kind).
#[node_type(label = "Session", iri = "https://example.org/t#Session", key = "id")]
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub account: Ref<Account>,
}

/// A guest account.
#[node_type(label = "Guest", iri = "https://example.org/t#Guest", extends = Account)]
#[derive(Debug, Clone, PartialEq)]
pub struct Guest {
    pub account: Account,
}

/// Values at the edges of their datatypes, and a key that needs escaping in an IRI.
#[node_type(label = "Sample", iri = "https://example.org/t#Sample", key = "name")]
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub high: i64,
    pub low: i64,
    pub huge: f64,
    pub tiny: f64,
    pub on: bool,
    pub off: bool,
    pub text: String,
    #[predicate(max_count = 5000)]
    pub items: Vec<String>,
}

/// A document: binary fields.
#[node_type(label = "Document", iri = "https://example.org/t#Document", key = "name")]
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub name: String,
    pub file: Blob,
    #[predicate(max_count = 3)]
    pub pages: Vec<Blob>,
    pub cover: Option<Blob>,
}

/// `len` bytes holding every byte value (not UTF-8, NULs included).
fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

fn team(slug: &str) -> Team {
    Team { slug: slug.into(), name: format!("Team {slug}") }
}

fn member(kg: &Kg, handle: &str, team: &str, badge: i64) -> Member {
    Member {
        handle: handle.into(),
        team: Ref::new(kg.iri::<Team>(team)),
        badge,
        skills: vec!["rust".into(), "rdf".into()],
        score: Some(0.5),
        active: true,
        joined: Some("2026-01-31T12:00:00Z".parse().unwrap()),
        mentor: None,
    }
}

fn codes(error: Error) -> Vec<(String, FieldCode)> {
    match error {
        Error::Validation { errors, .. } => errors.into_iter().map(|e| (e.field, e.code)).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn instances_round_trip_exactly_under_their_key_iri(kg: Kg) {
    block_on(async {
        let stored = kg.create(team("core")).await.unwrap();
        assert_eq!(stored.iri, "urn:trails:kg/Team/core");
        let alice = member(&kg, "alice smith", "core", 7);
        let created = kg.create(alice.clone()).await.unwrap();
        assert_eq!(created.iri, "urn:trails:kg/Member/alice%20smith");
        let read = kg.get::<Member>("alice smith").await.unwrap().unwrap();
        // Lists are sets in RDF: they come back in lexical order.
        let mut expected = alice.clone();
        expected.skills.sort();
        assert_eq!(read.value, expected);
        assert!(kg.get::<Member>("nobody").await.unwrap().is_none());
        assert!(kg.get::<Team>("alice smith").await.unwrap().is_none(), "an IRI of another type is not a Team");
    });
}

fn values_at_the_edges_of_their_datatypes_round_trip(kg: Kg) {
    block_on(async {
        let sample = Sample {
            name: "a/b ü?#%".into(),
            high: i64::MAX,
            low: i64::MIN,
            huge: 1.5e300,
            tiny: -2.5e-300,
            on: true,
            off: false,
            text: "tab\tline\nquote\" backslash\\ é \u{1F600} <not an IRI>".into(),
            items: vec!["".into(), " ".into(), "\u{7f}".into()],
        };
        let created = kg.create(sample.clone()).await.unwrap();
        assert_eq!(created.iri, "urn:trails:kg/Sample/a%2Fb%20%C3%BC%3F%23%25");
        let read = kg.get::<Sample>("a/b ü?#%").await.unwrap().expect("found by its key");
        let mut expected = sample.clone();
        expected.items.sort();
        assert_eq!(read.value, expected);
        // Equality filters bind the same terms the write stored.
        let ctx = Ctx::local().with_kg(kg.clone());
        for found in [
            Sample::objects(&ctx).where_eq(Sample::FIELDS.high, i64::MAX).count().await.unwrap(),
            Sample::objects(&ctx).where_eq(Sample::FIELDS.low, i64::MIN).count().await.unwrap(),
            Sample::objects(&ctx).where_eq(Sample::FIELDS.on, true).count().await.unwrap(),
            Sample::objects(&ctx).where_eq(Sample::FIELDS.text, sample.text.clone()).count().await.unwrap(),
        ] {
            assert_eq!(found, 1);
        }
        assert_eq!(Sample::objects(&ctx).where_eq(Sample::FIELDS.off, true).count().await.unwrap(), 0);
        // A sum past the field's range is an error, never a wrapped or zero value.
        kg.create(Sample { name: "twice".into(), ..sample.clone() }).await.unwrap();
        let Error::Internal(detail) = Sample::objects(&ctx).sum(Sample::FIELDS.high).await.unwrap_err() else {
            panic!("an overflowing sum is an internal error")
        };
        assert!(detail.contains("sum of high"), "{detail}");
    });
}

fn a_page_of_more_rows_than_an_endpoint_returns_at_once_comes_back_whole(kg: Kg) {
    block_on(async {
        // 120 instances of ~110 triples: 13,000 rows, over Virtuoso's silent 10,000-row cap.
        for n in 0..120 {
            let sample = Sample {
                name: format!("s{n:03}"),
                high: n,
                low: -n,
                huge: 1.0,
                tiny: 0.5,
                on: true,
                off: false,
                text: String::new(),
                items: (0..100).map(|i| format!("item {i:03}")).collect(),
            };
            kg.create(sample).await.unwrap();
        }
        let ctx = Ctx::local().with_kg(kg.clone());
        let page = Sample::objects(&ctx).order_by(Sample::FIELDS.high).limit(1000).page().await.unwrap();
        assert_eq!((page.total, page.items.len()), (120, 120));
        for (n, stored) in page.items.iter().enumerate() {
            assert_eq!(stored.value.high, n as i64);
            assert_eq!(stored.value.items.len(), 100, "{} came back whole", stored.iri);
        }
    });
}

/// A `Sample` with ordinary values, `text` and `items` list entries.
fn plain_sample(name: &str, text: String, items: usize) -> Sample {
    Sample {
        name: name.into(),
        high: 1,
        low: -1,
        huge: 1.0,
        tiny: 0.5,
        on: true,
        off: false,
        text,
        items: (0..items).map(|i| format!("item {i}")).collect(),
    }
}

fn an_instance_too_large_for_one_atomic_write_is_refused_whole(kg: Kg) {
    block_on(async {
        let sample = |name: &str, items: usize| plain_sample(name, String::new(), items);
        let error = kg.create(sample("big", 1500)).await.unwrap_err();
        assert!(matches!(error, Error::Internal(_)), "{error:?}");
        assert!(format!("{error:?}").contains("at most 1000"), "{error:?}");
        assert!(kg.get::<Sample>("big").await.unwrap().is_none(), "nothing of it was written");
        // Just inside the bound (the instance's other triples included) it is written.
        let fits = sample("fits", 980);
        kg.create(fits.clone()).await.unwrap();
        assert_eq!(kg.get::<Sample>("fits").await.unwrap().unwrap().value.items.len(), 980);
    });
}

#[test]
#[ignore = "needs Virtuoso 7 (Debian virtuoso-opensource-7-bin): `cargo xtask test` installs it and runs these"]
fn a_remote_store_answers_digest_challenges_and_never_shows_the_password() {
    let server = trails_tests::servers::VirtuosoServer::start();
    let (user, password) = server.credentials();
    // Updates on Virtuoso need Digest: the right password writes...
    let right = Kg::new(Arc::new(server.store(Some((&user, &password)))), DEFAULT_BASE);
    block_on(right.create(team("core"))).unwrap();
    // ...a wrong one is refused, changes nothing, and its error names neither password.
    let wrong_password = "not-the-password-0xC0FFEE";
    let store = server.store(Some((&user, wrong_password)));
    assert!(!format!("{store:?}").contains(wrong_password));
    let wrong = Kg::new(Arc::new(store), DEFAULT_BASE);
    let error = format!("{:?}", block_on(wrong.create(team("other"))).unwrap_err());
    assert!(error.contains("401"), "{error}");
    assert!(!error.contains(wrong_password) && !error.contains("trails-test-secret"), "{error}");
    assert!(block_on(right.get::<Team>("other")).unwrap().is_none());
    assert!(block_on(right.get::<Team>("core")).unwrap().is_some());
    // Without credentials the update endpoint is refused too (reads stay anonymous).
    let anonymous = Kg::new(Arc::new(server.store(None)), DEFAULT_BASE);
    assert!(format!("{:?}", block_on(anonymous.create(team("third"))).unwrap_err()).contains("401"));
    assert!(block_on(anonymous.get::<Team>("core")).unwrap().is_some());
}

#[test]
#[ignore = "needs Oxigraph server (PyPI oxigraph==0.5.13): `cargo xtask test` installs it and runs this"]
fn a_remote_store_over_https_trusts_the_configured_ca_and_nothing_else() {
    let server = OxigraphServer::start();
    let proxy = TlsProxy::start(server.addr());
    let store = |ca: Option<&str>| {
        let mut builder = RemoteStore::builder(proxy.url("/query")).update_url(proxy.url("/update"));
        if let Some(pem) = ca {
            builder = builder.ca_certificates_pem(pem);
        }
        Kg::new(Arc::new(builder.build().unwrap()), DEFAULT_BASE)
    };
    let trusted = store(Some(proxy.ca_pem()));
    block_on(trusted.create(team("core"))).unwrap();
    assert!(block_on(trusted.get::<Team>("core")).unwrap().is_some());
    // The system's roots alone do not vouch for this server: refused before anything is sent.
    let untrusted = store(None);
    let error = format!("{:?}", block_on(untrusted.create(team("other"))).unwrap_err());
    assert!(error.contains("invalid peer certificate: UnknownIssuer"), "{error}");
    assert!(block_on(trusted.get::<Team>("other")).unwrap().is_none());
    // Neither a non-HTTP URL nor a file without a certificate makes a store.
    assert!(RemoteStore::builder("ftp://localhost/query").build().is_err());
    assert!(RemoteStore::builder(proxy.url("/query")).ca_certificates_pem("not a certificate").build().is_err());
}

fn bad_writes_are_field_errors_and_change_nothing(kg: Kg) {
    block_on(async {
        kg.create(team("core")).await.unwrap();
        kg.create(member(&kg, "alice", "core", 7)).await.unwrap();

        // The generated validator runs on every write, as on tool input.
        let invalid = Team { slug: "Not Valid".into(), name: "x".into() };
        assert_eq!(codes(kg.create(invalid).await.unwrap_err()), [("slug".to_owned(), FieldCode::Pattern)]);
        // Duplicate key.
        assert_eq!(codes(kg.create(team("core")).await.unwrap_err()), [("slug".to_owned(), FieldCode::Unique)]);
        // Compound unique (team, badge).
        let twin = member(&kg, "bob", "core", 7);
        assert_eq!(codes(kg.create(twin).await.unwrap_err()), [("team".to_owned(), FieldCode::Unique)]);
        // Dangling reference and reference to the wrong type.
        let dangling = member(&kg, "carol", "nowhere", 8);
        assert_eq!(codes(kg.create(dangling).await.unwrap_err()), [("team".to_owned(), FieldCode::Reference)]);
        let mut wrong_type = member(&kg, "dave", "core", 9);
        wrong_type.mentor = Some(Ref::new(kg.iri::<Team>("core")));
        assert_eq!(codes(kg.create(wrong_type).await.unwrap_err()), [("mentor".to_owned(), FieldCode::Reference)]);
        // A repeated list item would vanish in RDF: refused by the validator, as the schema says
        // (`uniqueItems`).
        let mut repeated = member(&kg, "erin", "core", 10);
        repeated.skills = vec!["rust".into(), "rust".into()];
        assert_eq!(codes(kg.create(repeated).await.unwrap_err()), [("skills".to_owned(), FieldCode::UniqueItems)]);

        for handle in ["bob", "carol", "dave", "erin"] {
            assert!(kg.get::<Member>(handle).await.unwrap().is_none(), "{handle} was not written");
        }
        assert_eq!(Member::objects(&Ctx::local().with_kg(kg.clone())).count().await.unwrap(), 1);
    });
}

fn updates_are_partial_checked_and_keep_the_key(kg: Kg) {
    block_on(async {
        kg.create(team("core")).await.unwrap();
        kg.create(member(&kg, "alice", "core", 7)).await.unwrap();
        kg.create(member(&kg, "bob", "core", 8)).await.unwrap();
        let updated = kg.update::<Member>("alice", |m| m.score = Some(0.9)).await.unwrap();
        assert_eq!(updated.value.score, Some(0.9));
        assert_eq!(kg.get::<Member>("alice").await.unwrap().unwrap().value.badge, 7);
        assert_eq!(
            codes(kg.update::<Member>("alice", |m| m.badge = 8).await.unwrap_err()),
            [("team".to_owned(), FieldCode::Unique)]
        );
        assert_eq!(
            codes(kg.update::<Member>("alice", |m| m.handle = "al".into()).await.unwrap_err()),
            [("handle".to_owned(), FieldCode::Unique)]
        );
        // Nothing to update: the caller's to act on, not a field of its arguments.
        let Error::Domain(missing) = kg.update::<Member>("zoe", |m| m.badge = 1).await.unwrap_err() else {
            panic!("an update of what is not there is not found")
        };
        assert_eq!(missing.kind(), trails::error::ErrorKind::NotFound);
        assert_eq!(missing.message(), "there is no Member at urn:trails:kg/Member/zoe");
        assert_eq!(
            kg.get::<Member>("alice").await.unwrap().unwrap().value.score,
            Some(0.9),
            "failed updates changed nothing"
        );
    });
}

fn deletes_refuse_to_leave_dangling_references(kg: Kg) {
    block_on(async {
        kg.create(team("core")).await.unwrap();
        kg.create(member(&kg, "alice", "core", 7)).await.unwrap();
        assert_eq!(codes(kg.delete::<Team>("core").await.unwrap_err()), [(String::new(), FieldCode::Reference)]);
        kg.delete::<Member>("alice").await.unwrap();
        kg.delete::<Team>("core").await.unwrap();
        assert!(kg.get::<Team>("core").await.unwrap().is_none());
        let Error::Domain(gone) = kg.delete::<Team>("core").await.unwrap_err() else {
            panic!("deleting what is not there is not found")
        };
        assert_eq!(gone.kind(), trails::error::ErrorKind::NotFound);
    });
}

fn queries_filter_order_page_and_count(kg: Kg) {
    let ctx = Ctx::local().with_kg(kg.clone());
    block_on(async {
        kg.create(team("core")).await.unwrap();
        kg.create(team("web")).await.unwrap();
        for badge in 1..=25 {
            let team = if badge % 5 == 0 { "web" } else { "core" };
            let mut m = member(&kg, &format!("m{badge:02}"), team, badge);
            m.active = badge % 2 == 0;
            m.score = (badge % 3 != 0).then_some(badge as f64 / 10.0);
            kg.create(m).await.unwrap();
        }
        let f = Member::FIELDS;
        let web = Member::objects(&ctx)
            .where_eq(f.team, Ref::new(kg.iri::<Team>("web")))
            .order_by(f.badge)
            .all()
            .await
            .unwrap();
        assert_eq!(web.iter().map(|m| m.value.badge).collect::<Vec<_>>(), [5, 10, 15, 20, 25]);
        let active_core = Member::objects(&ctx)
            .where_eq(f.team, Ref::new(kg.iri::<Team>("core")))
            .where_eq(f.active, true)
            .order_by_desc(f.badge)
            .limit(3)
            .page()
            .await
            .unwrap();
        assert_eq!(active_core.total, 10); // even badges not divisible by 5
        assert_eq!(active_core.items.iter().map(|m| m.value.badge).collect::<Vec<_>>(), [24, 22, 18]);
        // Numbers order by value (2.0 after 1.9), absent values last.
        let by_score = Member::objects(&ctx).order_by(f.score).limit(1000).all().await.unwrap();
        let scores: Vec<Option<f64>> = by_score.iter().map(|m| m.value.score).collect();
        assert_eq!(scores.iter().filter(|s| s.is_none()).count(), 8);
        assert!(scores.windows(2).all(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => a <= b,
            (Some(_), None) | (None, None) => true,
            (None, Some(_)) => false,
        }));
        // Paging covers everything once, in a stable order.
        let mut seen = Vec::new();
        for offset in (0..25).step_by(10) {
            let page = Member::objects(&ctx).order_by(f.handle).offset(offset).limit(10).page().await.unwrap();
            assert_eq!(page.total, 25);
            seen.extend(page.items.into_iter().map(|m| m.value.handle));
        }
        let expected: Vec<String> = (1..=25).map(|b| format!("m{b:02}")).collect();
        assert_eq!(seen, expected);
        // References read together (no read per row): each once, in the order first given,
        // what is not there or not a Team left out.
        let iris = [
            kg.iri::<Team>("web"),
            kg.iri::<Team>("core"),
            kg.iri::<Team>("web"),
            kg.iri::<Team>("nowhere"),
            kg.iri::<Member>("m01"),
            "not an iri".to_owned(),
        ];
        let teams = kg.get_iris::<Team>(&iris).await.unwrap();
        assert_eq!(teams.iter().map(|t| t.value.slug.as_str()).collect::<Vec<_>>(), ["web", "core"]);
        // A list field filter means "contains".
        assert_eq!(Member::objects(&ctx).where_eq(f.skills, "rdf").count().await.unwrap(), 25);
        assert_eq!(Member::objects(&ctx).where_eq(f.skills, "cobol").count().await.unwrap(), 0);
    });
}

/// Twelve members whose fields vary with their badge, for the operator tests: what each filter
/// finds in the store must be what the same condition finds in the values.
fn operator_members(kg: &Kg) -> Vec<Member> {
    block_on(async {
        for slug in ["core", "web", "ops"] {
            kg.create(team(slug)).await.unwrap();
        }
    });
    let mut members = Vec::new();
    for badge in 1..=12i64 {
        let name = ["Ann", "bob", "CARL", "dora"][badge as usize % 4];
        let skills: &[&str] = match badge % 4 {
            0 => &[],
            1 => &["rust"],
            2 => &["rust", "sparql"],
            _ => &["Go Lang"],
        };
        members.push(Member {
            handle: format!("{name}-{badge:02}"),
            team: Ref::new(kg.iri::<Team>(["core", "web", "ops"][badge as usize % 3])),
            badge,
            skills: skills.iter().map(|s| (*s).to_owned()).collect(),
            score: (badge % 5 != 0).then_some(badge as f64 / 4.0),
            active: badge % 2 == 1,
            joined: (badge % 4 != 0).then(|| format!("2026-01-{badge:02}T08:00:00Z").parse().unwrap()),
            mentor: (badge > 1 && badge % 3 == 1).then(|| Ref::new(kg.iri::<Member>("bob-01"))),
        });
    }
    block_on(async {
        for m in &members {
            kg.create(m.clone()).await.unwrap();
        }
    });
    members
}

fn every_filter_operator_answers_as_the_same_filter_over_the_values(kg: Kg) {
    use trails::kg::Filter;
    let members = operator_members(&kg);
    let ctx = Ctx::local().with_kg(kg.clone());
    let f = Member::FIELDS;
    let day = |d: u32| -> DateTime { format!("2026-01-{d:02}T08:00:00Z").parse().unwrap() };
    let team_of = |m: &Member, slug: &str| m.team.iri() == kg.iri::<Team>(slug);
    type Expected<'a> = Box<dyn Fn(&Member) -> bool + 'a>;
    let cases: Vec<(&str, Filter<Member>, Expected)> = vec![
        ("eq", f.badge.eq(3), Box::new(|m| m.badge == 3)),
        ("ne", f.active.ne(true), Box::new(|m| !m.active)),
        ("is_in", f.badge.is_in([1, 4, 7, 99]), Box::new(|m| [1, 4, 7].contains(&m.badge))),
        ("is_in none", f.badge.is_in(Vec::<i64>::new()), Box::new(|_| false)),
        ("lt", f.badge.lt(4), Box::new(|m| m.badge < 4)),
        ("le", f.score.le(1.0), Box::new(|m| m.score.is_some_and(|s| s <= 1.0))),
        ("gt", f.score.gt(2.0), Box::new(|m| m.score.is_some_and(|s| s > 2.0))),
        ("ge", f.joined.ge(day(9)), Box::new(move |m| m.joined.is_some_and(|j| j >= day(9)))),
        ("between", f.badge.between(3, 6), Box::new(|m| (3..=6).contains(&m.badge))),
        (
            "between dates",
            f.joined.between(day(2), day(6)),
            Box::new(move |m| m.joined.is_some_and(|j| j >= day(2) && j <= day(6))),
        ),
        ("contains", f.handle.contains("AR"), Box::new(|m| m.handle.contains("AR"))),
        (
            "contains_ignore_case",
            f.handle.contains_ignore_case("aR"),
            Box::new(|m| m.handle.to_lowercase().contains("ar")),
        ),
        ("starts_with", f.handle.starts_with("bob"), Box::new(|m| m.handle.starts_with("bob"))),
        (
            "starts_with_ignore_case",
            f.handle.starts_with_ignore_case("carl"),
            Box::new(|m| m.handle.starts_with("CARL")),
        ),
        ("ends_with", f.handle.ends_with("-07"), Box::new(|m| m.handle.ends_with("-07"))),
        ("list contains", f.skills.contains("rust"), Box::new(|m| m.skills.iter().any(|s| s == "rust"))),
        (
            "list is_in",
            f.skills.is_in(["Go Lang", "sparql"]),
            Box::new(|m| m.skills.iter().any(|s| s == "Go Lang" || s == "sparql")),
        ),
        ("list is_none", f.skills.is_none(), Box::new(|m| m.skills.is_empty())),
        ("is_none", f.score.is_none(), Box::new(|m| m.score.is_none())),
        ("is_some", f.joined.is_some(), Box::new(|m| m.joined.is_some())),
        ("not keeps the absent", f.score.gt(1.0).not(), Box::new(|m| !m.score.is_some_and(|s| s > 1.0))),
        (
            "and / or / not",
            (f.team.eq(Ref::new(kg.iri::<Team>("web"))) | f.badge.gt(10)) & !f.active.eq(true),
            Box::new(|m| (team_of(m, "web") || m.badge > 10) && !m.active),
        ),
        (
            "or of nots",
            !f.skills.contains("rust") | !f.score.is_some(),
            Box::new(|m| !m.skills.iter().any(|s| s == "rust") || m.score.is_none()),
        ),
        ("reference", f.team.has(Team::FIELDS.slug.eq("ops")), Box::new(|m| team_of(m, "ops"))),
        (
            "reference, combined",
            f.team.has(Team::FIELDS.name.ends_with("web") | Team::FIELDS.slug.eq("ops")) & f.active.eq(true),
            Box::new(|m| (team_of(m, "web") || team_of(m, "ops")) && m.active),
        ),
        (
            "optional reference",
            f.mentor.has(Member::FIELDS.handle.starts_with("bob")),
            Box::new(|m| m.mentor.is_some()),
        ),
        ("not not", f.active.eq(true).not().not(), Box::new(|m| m.active)),
        ("not of always", Filter::always().not(), Box::new(|_| false)),
        ("not of an or with always", (Filter::always() | f.badge.eq(1)).not(), Box::new(|_| false)),
        (
            "or of always and a not",
            Filter::always().and(!f.active.eq(true)) | f.badge.eq(2),
            Box::new(|m| !m.active || m.badge == 2),
        ),
        ("not of never", Filter::never().not(), Box::new(|_| true)),
        ("never", Filter::never(), Box::new(|_| false)),
        ("always", Filter::always(), Box::new(|_| true)),
        ("hostile text", f.handle.contains("\" } } DELETE WHERE { ?s ?p ?o } #"), Box::new(|_| false)),
    ];
    block_on(async {
        for (name, filter, expected) in cases {
            let mut want: Vec<&str> = members.iter().filter(|m| expected(m)).map(|m| m.handle.as_str()).collect();
            want.sort_by_key(|h| kg.iri::<Member>(h));
            let found = Member::objects(&ctx).filter(filter).all().await.unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let got: Vec<&str> = found.iter().map(|m| m.value.handle.as_str()).collect();
            assert_eq!(got, want, "{name}");
        }
        // Several filters: all must hold; `where_eq` is `filter(eq)`.
        let both = Member::objects(&ctx).filter(f.active.eq(true)).where_eq(f.badge, 5).count().await.unwrap();
        assert_eq!(both, 1);
        assert_eq!(Member::objects(&ctx).count().await.unwrap(), 12, "the hostile text changed nothing");
        // Case-insensitive beyond ASCII, on every store.
        kg.create(Team { slug: "accents".into(), name: "ÉQUIPE Été".into() }).await.unwrap();
        let folded = Team::objects(&ctx).filter(Team::FIELDS.name.contains_ignore_case("équipe été")).count();
        assert_eq!(folded.await.unwrap(), 1);
    });
}

fn several_sort_keys_and_a_cursor_page_through_everything_once(kg: Kg) {
    let members = operator_members(&kg);
    let ctx = Ctx::local().with_kg(kg.clone());
    let f = Member::FIELDS;
    // By team (its IRI's text), then score largest first with the absent last, then by IRI.
    let mut want: Vec<&Member> = members.iter().collect();
    want.sort_by(|a, b| {
        let by_score = match (a.score, b.score) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        a.team
            .iri()
            .cmp(b.team.iri())
            .then(by_score)
            .then_with(|| kg.iri::<Member>(&a.handle).cmp(&kg.iri::<Member>(&b.handle)))
    });
    let want: Vec<&str> = want.iter().map(|m| m.handle.as_str()).collect();
    let query = || Member::objects(&ctx).order_by(f.team).then_by_desc(f.score);
    block_on(async {
        let all = query().all().await.unwrap();
        assert_eq!(all.iter().map(|m| m.value.handle.as_str()).collect::<Vec<_>>(), want);
        // Pages of 5 by cursor: each starts after the last, the last says there is no next.
        let (mut seen, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
        loop {
            let mut page_query = query().limit(5);
            if let Some(cursor) = cursor.take() {
                page_query = page_query.after(cursor);
            }
            let page = page_query.page().await.unwrap();
            assert_eq!(page.total, 12);
            pages += 1;
            seen.extend(page.items.into_iter().map(|m| m.value.handle));
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!((seen.iter().map(String::as_str).collect::<Vec<_>>(), pages), (want.clone(), 3));
        // A write between pages shifts nothing: the page after a cursor starts after its instance.
        let first = query().limit(4).page().await.unwrap();
        kg.delete::<Member>(&first.items[0].value.handle).await.unwrap();
        let second = query().limit(4).after(first.next.clone().unwrap()).page().await.unwrap();
        assert_eq!(second.items.iter().map(|m| m.value.handle.as_str()).collect::<Vec<_>>(), want[4..8]);
        // A cursor is for the ordering that made it: another is refused, as is garbage.
        let cursor = first.next.unwrap();
        for refused in [
            Member::objects(&ctx).order_by(f.badge).after(cursor.clone()).page().await,
            query().after("not a cursor").page().await,
        ] {
            assert_eq!(codes(refused.unwrap_err()), [("cursor".to_owned(), FieldCode::Type)]);
        }
        // A boolean key (compared as its text on every store: false first) pages through all.
        let mut by_active: Vec<&Member> = members.iter().filter(|m| m.handle != first.items[0].value.handle).collect();
        by_active.sort_by_key(|m| (m.active, std::cmp::Reverse(m.badge)));
        let want: Vec<&str> = by_active.iter().map(|m| m.handle.as_str()).collect();
        let (mut seen, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let mut page_query = Member::objects(&ctx).order_by(f.active).then_by_desc(f.badge).limit(5);
            if let Some(cursor) = cursor.take() {
                page_query = page_query.after(cursor);
            }
            let page = page_query.page().await.unwrap();
            seen.extend(page.items.into_iter().map(|m| m.value.handle));
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen.iter().map(String::as_str).collect::<Vec<_>>(), want);
        // Unordered, the cursor pages in IRI order.
        let page = Member::objects(&ctx).filter(f.active.eq(true)).limit(4).page().await.unwrap();
        let rest = Member::objects(&ctx).filter(f.active.eq(true)).after(page.next.unwrap()).page().await.unwrap();
        assert_eq!(page.items.len() + rest.items.len(), rest.total);
        assert!(rest.next.is_none());
    });
}

fn aggregates_count_group_and_sum_the_matching_instances(kg: Kg) {
    let members = operator_members(&kg);
    let ctx = Ctx::local().with_kg(kg.clone());
    let f = Member::FIELDS;
    block_on(async {
        let skills = Member::objects(&ctx).count_by(f.skills).await.unwrap();
        assert_eq!(skills, [("Go Lang".to_owned(), 3), ("rust".to_owned(), 6), ("sparql".to_owned(), 3)]);
        let active = Member::objects(&ctx).count_by(f.active).await.unwrap();
        assert_eq!(active, [(false, 6), (true, 6)]);
        let teams = Member::objects(&ctx).filter(f.badge.gt(6)).count_by(f.team).await.unwrap();
        let teams: Vec<(String, usize)> = teams.into_iter().map(|(t, n)| (t.iri().to_owned(), n)).collect();
        let want: Vec<(String, usize)> = ["core", "ops", "web"].iter().map(|s| (kg.iri::<Team>(s), 2)).collect();
        assert_eq!(teams, want, "references in their IRIs' order");
        let active_badges: i64 = members.iter().filter(|m| m.active).map(|m| m.badge).sum();
        assert_eq!(Member::objects(&ctx).filter(f.active.eq(true)).sum(f.badge).await.unwrap(), active_badges);
        // A list that matches twice (two skills) counts its instance once.
        let two_skills: i64 = members.iter().filter(|m| m.skills.len() == 2).map(|m| m.badge).sum();
        let listed =
            Member::objects(&ctx).filter(f.skills.is_in(["rust", "sparql"])).filter(f.skills.contains("sparql"));
        assert_eq!(listed.sum(f.badge).await.unwrap(), two_skills);
        // Sums per group: per team (references in IRI order), per boolean, per list item.
        let per_team = Member::objects(&ctx).sum_by(f.team, f.badge).await.unwrap();
        let per_team: Vec<(String, i64)> = per_team.into_iter().map(|(t, n)| (t.iri().to_owned(), n)).collect();
        let mut want: Vec<(String, i64)> = ["core", "ops", "web"]
            .iter()
            .map(|slug| {
                let team = kg.iri::<Team>(slug);
                (team.clone(), members.iter().filter(|m| m.team.iri() == team).map(|m| m.badge).sum())
            })
            .collect();
        want.sort();
        assert_eq!(per_team, want);
        let per_active = Member::objects(&ctx).filter(f.badge.le(10)).sum_by(f.active, f.score).await.unwrap();
        let score_sum = |active: bool| -> f64 {
            members.iter().filter(|m| m.badge <= 10 && m.active == active).filter_map(|m| m.score).sum()
        };
        assert_eq!(per_active, [(false, score_sum(false)), (true, score_sum(true))]);
        let per_skill = Member::objects(&ctx).sum_by(f.skills, f.badge).await.unwrap();
        let skill_sum = |skill: &str| -> i64 {
            members.iter().filter(|m| m.skills.iter().any(|s| s == skill)).map(|m| m.badge).sum()
        };
        let want: Vec<(String, i64)> =
            ["Go Lang", "rust", "sparql"].iter().map(|s| ((*s).to_owned(), skill_sum(s))).collect();
        assert_eq!(per_skill, want);
        let repeated = Member::objects(&ctx).filter(f.badge.is_in([3, 3, 4])).sum(f.badge).await.unwrap();
        assert_eq!(repeated, 7, "a value given twice matches once");
        let scores: Vec<f64> = members.iter().filter_map(|m| m.score).collect();
        let mean = Member::objects(&ctx).avg(f.score).await.unwrap().unwrap();
        assert!((mean - scores.iter().sum::<f64>() / scores.len() as f64).abs() < 1e-9, "{mean}");
        assert_eq!(Member::objects(&ctx).sum(f.score).await.unwrap(), scores.iter().sum::<f64>());
        assert_eq!(Member::objects(&ctx).min(f.badge).await.unwrap(), Some(1));
        assert_eq!(Member::objects(&ctx).filter(f.active.eq(false)).max(f.badge).await.unwrap(), Some(12));
        let first: DateTime = "2026-01-01T08:00:00Z".parse().unwrap();
        assert_eq!(Member::objects(&ctx).min(f.joined).await.unwrap(), Some(first));
        // Nothing matches: no extreme, no mean, a sum of zero.
        let none = || Member::objects(&ctx).filter(f.badge.gt(100));
        assert_eq!((none().max(f.score).await.unwrap(), none().avg(f.badge).await.unwrap()), (None, None));
        assert_eq!(none().sum(f.badge).await.unwrap(), 0);
        assert_eq!(none().count_by(f.skills).await.unwrap(), []);
    });
}

/// `all` returns every match, however many pages that takes, and a page asked to hold
/// more than its maximum is an error that names the way out, not a silent clamp.
fn all_reads_every_match_and_a_page_past_its_maximum_is_an_error(kg: Kg) {
    use trails::kg::{DEFAULT_LIMIT, MAX_LIMIT};
    let ctx = Ctx::local().with_kg(kg.clone());
    block_on(async {
        // Slugs are letters: three of them, in the order of `n`.
        let slug =
            |n: usize| -> String { [n / 676, n / 26 % 26, n % 26].iter().map(|&d| (b'a' + d as u8) as char).collect() };
        let count = MAX_LIMIT + 25;
        for n in 0..count {
            kg.create(team(&slug(n))).await.unwrap();
        }
        let all = Team::objects(&ctx).all().await.unwrap();
        let slugs: Vec<&str> = all.iter().map(|t| t.value.slug.as_str()).collect();
        let expected: Vec<String> = (0..count).map(slug).collect();
        assert_eq!(slugs, expected, "every team once, in IRI order, across two pages");
        // Ordered: offset paging, from the offset and up to the limit, past one page.
        let some = Team::objects(&ctx).order_by_desc(Team::FIELDS.slug).offset(5).limit(1010).all().await.unwrap();
        let slugs: Vec<&str> = some.iter().map(|t| t.value.slug.as_str()).collect();
        let expected: Vec<String> = (0..count).rev().skip(5).take(1010).map(slug).collect();
        assert_eq!(slugs, expected);
        // The author's mistake, not the caller's: logged with the way out, answered `-32603`.
        let Error::Internal(detail) = Team::objects(&ctx).limit(MAX_LIMIT + 1).page().await.unwrap_err() else {
            panic!("an oversized page is an internal error")
        };
        assert!(detail.contains("at most 1000 Teams") && detail.contains("`all()`"), "{detail}");
        let page = Team::objects(&ctx).page().await.unwrap();
        assert_eq!((page.items.len(), page.total), (DEFAULT_LIMIT, count));
    });
}

fn sparql_is_read_only_and_binds_values_as_terms(kg: Kg) {
    block_on(async {
        kg.create(team("core")).await.unwrap();
        kg.create(team("web")).await.unwrap();
        let query = "SELECT ?team ?name WHERE { GRAPH ?g { ?team <https://example.org/t#name> ?name } }";
        let rows = kg.sparql(query, &[("name", Term::Literal(Literal::new_simple_literal("Team web")))]).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].iter().find(|(v, _)| v == "team").unwrap().1.to_string(), "<urn:trails:kg/Team/web>");
        // A value that looks like SPARQL is just a value.
        let injection = Term::Literal(Literal::new_simple_literal("x\" } ?a ?b ?c { \""));
        assert!(kg.sparql(query, &[("name", injection)]).await.unwrap().is_empty());
        // A bound value is seen by the whole WHERE group, FILTERs included (as the example's
        // search needs), on every store.
        let filtered = "SELECT ?team WHERE { GRAPH ?g { ?team <https://example.org/t#name> ?name } \
                        FILTER(CONTAINS(LCASE(?name), LCASE(?text))) } ORDER BY ?team";
        let rows = kg.sparql(filtered, &[("text", Term::Literal(Literal::new_simple_literal("WEB")))]).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].iter().find(|(v, _)| v == "team").unwrap().1.to_string(), "<urn:trails:kg/Team/web>");
        let ask = "ASK { GRAPH ?g { ?team <https://example.org/t#name> ?name } }";
        let web = Term::Literal(Literal::new_simple_literal("Team web"));
        let nobody = Term::Literal(Literal::new_simple_literal("Team nobody"));
        for (value, expected) in [(web, true), (nobody, false)] {
            let rows = kg.sparql(ask, &[("name", value)]).await.unwrap();
            assert_eq!(rows, vec![vec![("result".to_owned(), Term::Literal(Literal::from(expected)))]]);
        }
        let update = kg.sparql("DELETE WHERE { ?s ?p ?o }", &[]).await.unwrap_err();
        assert_eq!(codes(update), [("query".to_owned(), FieldCode::Type)]);
        let construct = kg.sparql("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", &[]).await.unwrap_err();
        assert_eq!(codes(construct), [("query".to_owned(), FieldCode::Type)]);
        assert!(kg.get::<Team>("core").await.unwrap().is_some());
        // No `GRAPH`: the default graph is the union of the app's node-type graphs, on every
        // store; bound values work as they do with `GRAPH`.
        let teams = |rows: Vec<trails::kg::Row>| -> Vec<String> {
            rows.iter().map(|row| row.iter().find(|(v, _)| v == "team").unwrap().1.to_string()).collect()
        };
        let plain = "SELECT ?team WHERE { ?team a <https://example.org/t#Team> ; <https://example.org/t#name> ?name } \
                     ORDER BY ?team";
        assert_eq!(
            teams(kg.sparql(plain, &[]).await.unwrap()),
            ["<urn:trails:kg/Team/core>", "<urn:trails:kg/Team/web>"]
        );
        let named = Term::Literal(Literal::new_simple_literal("Team core"));
        assert_eq!(teams(kg.sparql(plain, &[("name", named)]).await.unwrap()), ["<urn:trails:kg/Team/core>"]);
        // A query that names its dataset keeps it.
        let elsewhere = "SELECT ?team FROM <urn:trails:nothing> WHERE { ?team a <https://example.org/t#Team> }";
        assert!(kg.sparql(elsewhere, &[]).await.unwrap().is_empty());
        let from = "SELECT ?team FROM <urn:trails:kg/graph/Team> WHERE { ?team a <https://example.org/t#Team> } ORDER BY ?team";
        assert_eq!(teams(kg.sparql(from, &[]).await.unwrap()).len(), 2);
    });
}

fn concurrent_writers_racing_for_one_unique_value_exactly_one_wins(kg: Kg) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        kg.create(team("core")).await.unwrap();
        for round in 0..20 {
            let racers: Vec<_> = (0..8)
                .map(|i| {
                    let kg = kg.clone();
                    // Same (team, badge) group, different keys: only the group can clash.
                    tokio::spawn(
                        async move { kg.create(member(&kg, &format!("r{round}-{i}"), "core", 100 + round)).await },
                    )
                })
                .collect();
            let mut wins = 0;
            for racer in racers {
                match racer.await.unwrap() {
                    Ok(_) => wins += 1,
                    Err(error) => assert_eq!(codes(error), [("team".to_owned(), FieldCode::Unique)]),
                }
            }
            assert_eq!(wins, 1, "round {round}");
        }
    });
}

#[test]
fn acknowledged_writes_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let open =
        || Kg::new(Arc::new(EmbeddedStore::open(dir.path(), Synchronous::Full).unwrap()), "https://example.org/kg");
    {
        let kg = open();
        block_on(async {
            kg.create(team("core")).await.unwrap();
            kg.create(member(&kg, "alice", "core", 7)).await.unwrap();
            kg.update::<Member>("alice", |m| m.active = false).await.unwrap();
        });
    }
    let kg = open();
    block_on(async {
        let alice = kg.get::<Member>("alice").await.unwrap().unwrap();
        assert_eq!(alice.iri, "https://example.org/kg/Member/alice");
        assert!(!alice.value.active);
        assert_eq!(json!(alice.value.team), json!("https://example.org/kg/Team/core"));
    });
}

/// What one instance may weigh is bounded by the store (`[kg]
/// max_instance_bytes`), for creates and updates alike; blob bytes are stored apart and do not count.
fn an_instance_heavier_than_its_bound_is_a_field_error_and_changes_nothing(kg: Kg) {
    let kg = kg.with_max_instance_bytes(8192);
    block_on(async {
        let sample = |name: &str, text: String| plain_sample(name, text, 2);
        let error = kg.create(sample("heavy", "x".repeat(9000))).await.unwrap_err();
        let Error::Validation { errors, .. } = error else { panic!("{error:?}") };
        assert_eq!((errors[0].field.as_str(), errors[0].code), ("text", FieldCode::MaxSize));
        assert!(errors[0].message.contains("at most 8192"), "{}", errors[0].message);
        assert_eq!(errors[0].constraint, json!({"max_instance_bytes": 8192}));
        assert!(errors[0].value.as_str().unwrap().len() < 400, "the value is echoed cut");
        assert!(kg.get::<Sample>("heavy").await.unwrap().is_none(), "nothing was written");

        kg.create(sample("light", "x".repeat(3000))).await.unwrap();
        let error = kg.update::<Sample>("light", |s| s.text = "y".repeat(9000)).await.unwrap_err();
        assert!(
            matches!(&error, Error::Validation { errors, .. } if errors[0].code == FieldCode::MaxSize),
            "{error:?}"
        );
        assert_eq!(kg.get::<Sample>("light").await.unwrap().unwrap().value.text, "x".repeat(3000), "unchanged");

        // A long key is stored on every triple: 40 short items under a 300-byte key weigh more
        // than their text.
        let error = kg.create(plain_sample(&"k".repeat(300), String::new(), 40)).await.unwrap_err();
        assert!(matches!(&error, Error::Validation { errors, .. } if errors[0].field == "items"), "{error:?}");

        // 100 KB of blob bytes: stored apart, so the instance itself is light.
        let file = Blob::new("application/pdf", bytes(100_000, 7)).unwrap();
        kg.create(Document { name: "big-file".into(), file, pages: Vec::new(), cover: None }).await.unwrap();
    });
}

fn blobs_round_trip_by_content_and_the_graph_keeps_only_their_metadata(kg: Kg) {
    block_on(async {
        let file = Blob::new("application/pdf", bytes(100_000, 0)).unwrap();
        let pages: Vec<Blob> =
            (1..=3).map(|seed| Blob::new("image/png", bytes(2_000 * seed as usize, seed)).unwrap()).collect();
        let document = Document { name: "spec".into(), file: file.clone(), pages: pages.clone(), cover: None };
        let created = kg.create(document.clone()).await.unwrap();
        let read = kg.get::<Document>("spec").await.unwrap().unwrap();
        assert_eq!(read.value, created.value, "a write returns what a read returns");
        assert_eq!(read.value.file.bytes(), file.bytes());
        assert_eq!(read.value.file.media_type(), "application/pdf");
        let mut shas: Vec<String> = read.value.pages.iter().map(Blob::sha256).collect();
        let mut expected: Vec<String> = pages.iter().map(Blob::sha256).collect();
        shas.sort();
        expected.sort();
        assert_eq!(shas, expected, "every page comes back (a list is a set in the graph)");
        for page in &read.value.pages {
            assert_eq!(page, pages.iter().find(|p| p.sha256() == page.sha256()).unwrap());
        }
        // The graph holds the metadata: media type, size and SHA-256 — never the bytes.
        let rows = kg.sparql("SELECT ?o WHERE { GRAPH ?g { ?s <https://example.org/t#file> ?o } }", &[]).await.unwrap();
        let [row] = rows.as_slice() else { panic!("one file value: {rows:?}") };
        let Term::Literal(kept) = &row[0].1 else { panic!("a literal") };
        let kept: serde_json::Value = serde_json::from_str(kept.value()).unwrap();
        assert_eq!(kept, json!({"media_type": "application/pdf", "sha256": file.sha256(), "size": 100_000}));
        // Another instance holding the same bytes, and an update that drops a page and sets a cover.
        let copy =
            Document { name: "copy".into(), file: file.clone(), pages: Vec::new(), cover: Some(pages[0].clone()) };
        kg.create(copy).await.unwrap();
        let updated = kg
            .update::<Document>("spec", |d| {
                d.pages.retain(|p| p.sha256() != pages[1].sha256());
                d.cover = Some(Blob::new("image/jpeg", bytes(10, 9)).unwrap());
            })
            .await
            .unwrap();
        let read = kg.get::<Document>("spec").await.unwrap().unwrap();
        assert_eq!(read.value, updated.value);
        assert_eq!(read.value.pages.len(), 2);
        assert_eq!(read.value.cover.as_ref().unwrap().bytes(), bytes(10, 9));
        let copy = kg.get::<Document>("copy").await.unwrap().unwrap();
        assert_eq!(copy.value.file.bytes(), file.bytes());
        assert_eq!(copy.value.cover.unwrap().bytes(), pages[0].bytes());
        // A write that breaks a constraint stores nothing, blobs included.
        let too_many = Document { name: "many".into(), file: file.clone(), pages: vec![file.clone(); 4], cover: None };
        assert!(kg.create(too_many).await.is_err());
        assert!(kg.get::<Document>("many").await.unwrap().is_none());
    });
}

#[test]
fn blob_bytes_survive_a_reopen_and_the_same_bytes_are_kept_once() {
    let dir = tempfile::tempdir().unwrap();
    let open =
        || Kg::new(Arc::new(EmbeddedStore::open(dir.path(), Synchronous::Full).unwrap()), "https://example.org/kg");
    let file = Blob::new("application/octet-stream", bytes(1 << 20, 3)).unwrap();
    {
        let kg = open();
        block_on(async {
            for n in 0..20 {
                let document = Document { name: format!("d{n}"), file: file.clone(), pages: Vec::new(), cover: None };
                kg.create(document).await.unwrap();
            }
        });
    }
    let on_disk: u64 = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    assert!(on_disk < 4 << 20, "20 instances of one 1 MiB blob take {on_disk} bytes on disk: it is kept once");
    let kg = open();
    block_on(async {
        let read = kg.get::<Document>("d19").await.unwrap().unwrap();
        assert_eq!(read.value.file, file);
    });
}

fn concurrent_updates_are_not_lost(kg: Kg) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        kg.create(team("core")).await.unwrap();
        let mut alice = member(&kg, "alice", "core", 7);
        alice.score = Some(0.0);
        kg.create(alice).await.unwrap();
        // Each update reads, changes and writes back; a write over a concurrent one re-runs.
        let updates: Vec<_> = (0..trails::kg::UPDATE_ATTEMPTS)
            .map(|_| {
                let kg = kg.clone();
                tokio::spawn(async move { kg.update::<Member>("alice", |m| m.score = m.score.map(|s| s + 1.0)).await })
            })
            .collect();
        for update in updates {
            update.await.unwrap().unwrap();
        }
        let score = kg.get::<Member>("alice").await.unwrap().unwrap().value.score;
        assert_eq!(score, Some(trails::kg::UPDATE_ATTEMPTS as f64), "every increment landed");
    });
}

#[test]
fn a_data_directory_serves_one_store_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let first = EmbeddedStore::open(dir.path(), Synchronous::Full).unwrap();
    let second = EmbeddedStore::open(dir.path(), Synchronous::Full).err().expect("a second open is refused");
    assert!(second.to_string().contains("in use by another store"), "{second}");
    drop(first);
    // A process another test forks at that moment holds the lock's file description until it
    // execs (a few milliseconds): the lock is free once that child let it go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match EmbeddedStore::open(dir.path(), Synchronous::Full) {
            Ok(_) => break,
            Err(error) if std::time::Instant::now() < deadline => {
                assert!(error.to_string().contains("in use by another store"), "{error}");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(error) => panic!("free again once the first closed: {error}"),
        }
    }
}

fn a_parents_unique_group_holds_across_its_subtypes(kg: Kg) {
    block_on(async {
        let account = |login: &str| Account { login: login.into(), email: "root@example.org".into() };
        let admin = kg.create(Admin { account: account("root"), level: 9 }).await.unwrap();
        let read = kg.get_iri::<Admin>(&admin.iri).await.unwrap().unwrap();
        assert_eq!(read.value.account.email, "root@example.org", "inherited fields round-trip");
        // Guests live in another graph, but the group is the parent's.
        let twin = kg.create(Guest { account: account("guest") }).await.unwrap_err();
        assert_eq!(codes(twin), [("email".to_owned(), FieldCode::Unique)]);
        kg.create(Guest { account: Account { login: "guest".into(), email: "guest@example.org".into() } })
            .await
            .unwrap();
    });
}

fn under_rdfs_a_parents_reads_include_its_subtypes_instances(kg: Kg) {
    use trails::kg::Reasoning;
    block_on(async {
        let account = |login: &str| Account { login: login.into(), email: format!("{login}@example.org") };
        kg.create(account("plain")).await.unwrap();
        let root = kg.create(Admin { account: account("root"), level: 9 }).await.unwrap();
        let guest = kg.create(Guest { account: account("guest") }).await.unwrap();
        kg.create(Session { id: "s1".into(), account: Ref::new(root.iri.clone()) }).await.unwrap();
        kg.create(Session { id: "s2".into(), account: Ref::new(kg.iri::<Account>("plain")) }).await.unwrap();
        let own = Ctx::local().with_kg(kg.clone());
        let rdfs = Ctx::local().with_kg(kg.with_reasoning(Reasoning::Rdfs));
        let f = Account::FIELDS;
        let logins =
            |items: Vec<trails::kg::Stored<Account>>| items.into_iter().map(|a| a.value.login).collect::<Vec<_>>();

        // Without reasoning a type reads its own instances; under rdfs, its subtypes' too, each
        // read as the parent (its inherited fields), under its own IRI.
        assert_eq!(logins(Account::objects(&own).order_by(f.login).all().await.unwrap()), ["plain"]);
        let all = Account::objects(&rdfs).order_by(f.login).all().await.unwrap();
        assert_eq!(logins(all.clone()), ["guest", "plain", "root"]);
        assert_eq!((all[0].iri.as_str(), all[2].iri.as_str()), (guest.iri.as_str(), root.iri.as_str()));
        assert_eq!(all[2].value, account("root"));
        assert_eq!(Account::objects(&rdfs).count().await.unwrap(), 3);
        // Unordered equalities (the store's own lookup without reasoning), ranges and text.
        let equal = Account::objects(&rdfs).where_eq(f.email, "root@example.org").all().await.unwrap();
        assert_eq!(logins(equal), ["root"]);
        assert_eq!(Account::objects(&own).where_eq(f.email, "root@example.org").count().await.unwrap(), 0);
        assert_eq!(Account::objects(&rdfs).filter(f.login.contains("o")).count().await.unwrap(), 1);
        assert_eq!(Account::objects(&rdfs).filter(!f.login.starts_with("g")).count().await.unwrap(), 2);
        let either = f.login.eq("guest") | f.login.eq("root");
        assert_eq!(Account::objects(&rdfs).filter(either).count().await.unwrap(), 2);
        // Pages and cursors cover every instance once.
        let seen = through_cursors(|| Account::objects(&rdfs).order_by_desc(f.login)).await;
        assert_eq!(logins(seen), ["root", "plain", "guest"]);
        // Aggregates count each instance once.
        let by_email = Account::objects(&rdfs).count_by(f.email).await.unwrap();
        assert_eq!(by_email.len(), 3, "{by_email:?}");
        // A reference to the parent type reaches a subtype's instance through `has`.
        let s = Session::FIELDS;
        let admins = |ctx: &Ctx| Session::objects(ctx).filter(s.account.has(f.email.eq("root@example.org"))).count();
        assert_eq!(admins(&rdfs).await.unwrap(), 1);
        assert_eq!(admins(&own).await.unwrap(), 0);
        // By IRI: the subtype's instance is an Account under rdfs; `get` names one type's key.
        assert!(kg.with_reasoning(Reasoning::Rdfs).get_iri::<Account>(&root.iri).await.unwrap().is_some());
        assert!(kg.get_iri::<Account>(&root.iri).await.unwrap().is_none());
        assert!(kg.with_reasoning(Reasoning::Rdfs).get::<Account>("root").await.unwrap().is_none());
        // A subtype's reads do not see its parent's own instances.
        assert_eq!(Admin::objects(&rdfs).count().await.unwrap(), 1);
        // The store's own lookup over the graphs of a type and its subtypes (what the runtime's
        // resources read): in IRI order, filtered, after a cursor.
        let find = |filters: Vec<(trails::kg::NamedNode, Term)>, after: Option<&str>| trails::kg::Find {
            graphs: trails::kg::mapping::graphs_with_subtypes(kg.base(), Account::INFO),
            class: trails::kg::NamedNode::new_unchecked(Account::INFO.iri),
            filters,
            limit: 10,
            offset: 0,
            after: after.map(trails::kg::NamedNode::new_unchecked),
        };
        let found = kg.store().find(find(Vec::new(), None)).await.unwrap();
        assert_eq!(found.total, 3);
        assert_eq!(found.subjects[0].as_str(), kg.iri::<Account>("plain"), "in IRI order");
        let email = trails::kg::NamedNode::new_unchecked(f.email.predicate().iri);
        let one =
            kg.store().find(find(vec![(email, Term::Literal(Literal::new_simple_literal("guest@example.org")))], None));
        assert_eq!(one.await.unwrap().subjects, [trails::kg::NamedNode::new_unchecked(guest.iri.clone())]);
        let after = kg.store().find(find(Vec::new(), Some(&kg.iri::<Account>("plain")))).await.unwrap();
        assert_eq!((after.total, after.subjects.len()), (3, 2), "the Admin's and the Guest's IRIs sort after");
    });
}

/// Every account's login, read with its subtypes.
#[capability(id = "accounts.logins", version = "1.0.0", side_effects(none), reasoning = "rdfs")]
async fn every_login(ctx: &Ctx) -> trails::Result<String> {
    let accounts = Account::objects(ctx).order_by(Account::FIELDS.login).all().await?;
    Ok(accounts.into_iter().map(|account| account.value.login).collect::<Vec<_>>().join(","))
}

/// The logins of plain accounts only (no reasoning declared).
#[capability(id = "accounts.own_logins", version = "1.0.0", side_effects(none))]
async fn own_logins(ctx: &Ctx) -> trails::Result<String> {
    let accounts = Account::objects(ctx).order_by(Account::FIELDS.login).all().await?;
    Ok(accounts.into_iter().map(|account| account.value.login).collect::<Vec<_>>().join(","))
}

/// A capability's reads follow its declared `reasoning`, through the handle its call is given;
/// the manifest says which.
#[tokio::test(flavor = "multi_thread")]
async fn a_capability_reads_with_the_reasoning_it_declares() {
    let kg = Kg::temporary().unwrap();
    let account = |login: &str| Account { login: login.into(), email: format!("{login}@example.org") };
    kg.create(account("plain")).await.unwrap();
    kg.create(Admin { account: account("root"), level: 1 }).await.unwrap();
    let server = trails::App::new().kg(kg).build(trails_tests::in_process::settings("")).unwrap();
    let client = trails::testing::Client::anonymous(&server);
    let text = |answer: serde_json::Value| answer["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(text(client.call("accounts.logins", json!({})).await.unwrap()), "plain,root");
    assert_eq!(text(client.call("accounts.own_logins", json!({})).await.unwrap()), "plain");
}

fn a_cursor_past_a_text_key_reaches_what_was_stored_before_it(kg: Kg) {
    let ctx = Ctx::local().with_kg(kg.clone());
    block_on(async {
        // Stored out of their order: Virtuoso compared stored text by when it was stored.
        for slug in ["zeta", "alpha", "mid"] {
            kg.create(team(slug)).await.unwrap();
        }
        for descending in [false, true] {
            let query = || {
                let query = Team::objects(&ctx);
                if descending {
                    query.order_by_desc(Team::FIELDS.name)
                } else {
                    query.order_by(Team::FIELDS.name)
                }
            };
            let seen: Vec<String> = through_cursors(query).await.into_iter().map(|t| t.value.slug).collect();
            let mut expected = vec!["alpha", "mid", "zeta"];
            if descending {
                expected.reverse();
            }
            assert_eq!(seen, expected);
        }
    });
}

fn resource_text(result: rmcp::model::ReadResourceResult) -> serde_json::Value {
    match result.contents.into_iter().next().expect("one content") {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => serde_json::from_str(&text).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// The runtime's own reads of a node type — its resources, their counts, `trails_kg_list` — list
/// the instances of the types that extend it too, each as its own type (the id, URI and
/// `node_type` that read it); an instance's own resource is its type's.
#[tokio::test(flavor = "multi_thread")]
async fn a_parents_resources_and_kg_tools_list_its_subtypes_instances_as_their_own_types() {
    let kg = Kg::temporary().unwrap();
    let account = |login: &str| Account { login: login.into(), email: format!("{login}@example.org") };
    kg.create(account("plain")).await.unwrap();
    let root = kg.create(Admin { account: account("root"), level: 1 }).await.unwrap();
    let served =
        trails_tests::in_process::serve(trails::App::new().kg(kg), trails_tests::in_process::settings("")).await;
    let client = trails_tests::client::connect(served.addr, None).await;

    let listed =
        trails_tests::client::call(&client, "trails_kg_list", json!({ "node_type": "Account" })).await.unwrap();
    let page = listed.structured_content.unwrap();
    assert_eq!(page["total"], 2, "{page}");
    let admin = page["items"].as_array().unwrap().iter().find(|item| item["iri"] == root.iri.as_str()).unwrap();
    assert_eq!(admin["node_type"], "Admin", "{admin}");
    let id = admin["id"].as_str().unwrap();
    assert_eq!(admin["uri"], format!("trails://kg/Admin/{id}"));
    let plain = page["items"].as_array().unwrap().iter().find(|item| item["id"] == "plain").unwrap();
    assert!(plain.get("node_type").is_none(), "the listed type's own instances need no node_type: {plain}");
    // What the item names reads it.
    let get = json!({ "node_type": admin["node_type"], "id": id });
    let got = trails_tests::client::call(&client, "trails_kg_get", get).await.unwrap().structured_content.unwrap();
    assert_eq!(got["fields"]["level"], 1, "{got}");

    let read = |uri: &str| client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri));
    let umbrella = resource_text(read("trails://kg/Account").await.unwrap());
    assert_eq!(umbrella["total"], 2, "{umbrella}");
    let types = resource_text(read("trails://kg/types").await.unwrap());
    let count = |label: &str| {
        types["types"].as_array().unwrap().iter().find(|t| t["label"] == label).unwrap()["instances"].clone()
    };
    assert_eq!((count("Account"), count("Admin"), count("Guest")), (json!(2), json!(1), json!(0)), "{types}");
    let own = resource_text(read(admin["uri"].as_str().unwrap()).await.unwrap());
    assert_eq!(own["@id"], root.iri.as_str(), "{own}");
}

/// A blob's bytes reach a host that shows only tool results — `trails_resources_read` pages them
/// in chunks that fit the window — and an HTTP client (`GET /blobs/{sha256}`), as an attachment.
#[tokio::test(flavor = "multi_thread")]
async fn blob_bytes_are_paged_by_a_tool_and_served_over_http() {
    let kg = Kg::temporary().unwrap();
    let content = bytes(10_000, 7);
    let file = Blob::new("application/pdf", content.clone()).unwrap();
    let sha = file.sha256();
    kg.create(Document { name: "report".into(), file, pages: Vec::new(), cover: None }).await.unwrap();
    let settings = trails_tests::in_process::settings("[mcp]\ntool_window_chars = 1024\n");
    let served = trails_tests::in_process::serve(trails::App::new().kg(kg), settings).await;
    let client = trails_tests::client::connect(served.addr, None).await;

    let (mut read, mut arguments, mut calls) = (Vec::new(), json!({ "uri": format!("trails://blob/{sha}") }), 0);
    loop {
        let result = trails_tests::client::call(&client, "trails_resources_read", arguments.clone()).await.unwrap();
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.chars().count() <= 1024, "a chunk's answer fits the window: {} characters", text.len());
        let chunk = result.structured_content.unwrap();
        assert_eq!((chunk["mime_type"].as_str(), chunk["bytes"].as_u64()), (Some("application/pdf"), Some(10_000)));
        use base64::Engine as _;
        read.extend(base64::engine::general_purpose::STANDARD.decode(chunk["base64"].as_str().unwrap()).unwrap());
        calls += 1;
        match chunk["next_call"].as_object() {
            Some(next) => arguments = next["arguments"].clone(),
            None => break,
        }
    }
    assert!(read == content, "the chunks are the blob, in order ({calls} calls)");
    assert!(calls > 10, "in chunks: {calls}");
    let past = json!({ "uri": format!("trails://blob/{sha}"), "offset": 10_001 });
    let past = trails_tests::client::call(&client, "trails_resources_read", past).await.unwrap_err();
    assert_eq!(past.data.unwrap()["fields"][0]["field"], "offset");
    let whole = json!({ "uri": "trails://kg/types", "offset": 0 });
    let whole = trails_tests::client::call(&client, "trails_resources_read", whole).await.unwrap_err();
    assert!(whole.data.unwrap()["fields"][0]["message"].as_str().unwrap().contains("read whole"));

    let http = reqwest::Client::new();
    let got = http.get(format!("http://{}/blobs/{sha}", served.addr)).send().await.unwrap();
    assert_eq!(got.status(), 200);
    let header = |name: &str| got.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("content-type"), "application/pdf");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert!(header("content-disposition").starts_with("attachment"));
    assert_eq!(got.bytes().await.unwrap().to_vec(), content);
    let missing = http.get(format!("http://{}/blobs/{}", served.addr, "0".repeat(64))).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let malformed = http.get(format!("http://{}/blobs/nope", served.addr)).send().await.unwrap();
    assert_eq!(malformed.status(), 400);
}

/// Every instance `query` finds, read a page of one at a time, each after the last one's cursor.
async fn through_cursors<T: NodeType>(query: impl Fn() -> trails::kg::Query<T>) -> Vec<trails::kg::Stored<T>> {
    let (mut seen, mut cursor) = (Vec::new(), None);
    loop {
        let page = match cursor.take() {
            Some(after) => query().limit(1).after(after),
            None => query().limit(1),
        };
        let page = page.page().await.unwrap();
        seen.extend(page.items);
        match page.next {
            Some(next) => cursor = Some(next),
            None => return seen,
        }
    }
}
