//! The OAuth 2.1 resource server (`[auth.oauth]`) against a real authorization server: npm
//! `oidc-provider` (OpenID Certified), started by the test, issuing access tokens for the fixture
//! app through a resource indicator — JWTs, and opaque tokens the app introspects. Tokens the
//! provider would never issue (expired, another issuer, another key, `alg: none`, tampered) are
//! signed by the test with the provider's own key, so only the claim under test is wrong.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::fixture;

/// A `[[http.tokens]]` token configured beside the provider.
const STATIC_TOKEN: &str = "static-ci-token";

/// A builder-scope tool of the fixture app (enabling an enabled tool changes nothing).
const BUILDER_TOOL: &str = "trails_meta_tools_enable";

/// A P-256 signing key and its id.
struct Key {
    kid: String,
    pem: String,
}

impl Key {
    fn new(kid: &str) -> Key {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        Key { kid: kid.to_owned(), pem: pair.serialize_pem() }
    }

    /// A token with `claims`, signed by this key.
    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_pem(self.pem.as_bytes()).unwrap()).unwrap()
    }
}

/// `oidc-provider` on a port of its own, killed when dropped.
struct Provider {
    child: Child,
    /// Its stdout, held open: a write to a closed pipe would end it.
    _stdout: std::io::BufReader<std::process::ChildStdout>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Provider {
    /// Serving with `keys` (the first signs).
    fn start(port: u16, keys: &[&Key]) -> Provider {
        let node = trails_tests::servers::node_packages(&["oidc/provider.mjs"]);
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<Value> = keys.iter().map(|k| json!({"kid": k.kid, "pem": k.pem})).collect();
        let keys_file = dir.path().join("keys.json");
        std::fs::write(&keys_file, serde_json::to_vec(&keys).unwrap()).unwrap();
        let log = std::fs::File::create(dir.path().join("provider.log")).unwrap();
        let mut child = Command::new("node")
            .arg(node.join("provider.mjs"))
            .arg(port.to_string())
            .arg(&keys_file)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("node is installed");
        // It prints "listening" once it serves.
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        let provider = Provider { child, _stdout: stdout, port, dir };
        assert_eq!(line.trim(), "listening", "oidc-provider did not start: {}", provider.log());
        provider
    }

    fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("provider.log")).unwrap_or_default()
    }

    /// An access token for `resource` by client credentials: the answer's JSON.
    async fn token(&self, client: &str, scope: &str, resource: &str) -> Value {
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer()))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[("grant_type", "client_credentials"), ("scope", scope), ("resource", resource)])
            .send()
            .await
            .unwrap();
        let answer: Value = response.json().await.unwrap();
        assert!(answer["access_token"].is_string(), "no token for {client}: {answer} {}", self.log());
        answer
    }

    /// How many times the key set was fetched.
    async fn jwks_fetches(&self) -> u64 {
        let answer: Value =
            reqwest::get(format!("{}/jwks-fetches", self.issuer())).await.unwrap().json().await.unwrap();
        answer["count"].as_u64().unwrap()
    }

    async fn access_token(&self, client: &str, scope: &str, resource: &str) -> String {
        self.token(client, scope, resource).await["access_token"].as_str().unwrap().to_owned()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// The fixture app serving builder tools, accepting tokens of `issuer`.
fn app(issuer: &str, extra: &str) -> trails_tests::Served {
    fixture()
        .config(format!(
            r#"
            [mcp]
            scopes = ["builder"]
            [http]
            public_url = "http://{{addr}}"
            sessions = false
            [auth.oauth]
            issuer = "{issuer}"
            scopes = {{ "mcp:runtime" = "runtime", "mcp:builder" = "builder" }}
            key_refetch_secs = 1
            {extra}
            "#
        ))
        // Debug lines too: where a token would leak if any line quoted one.
        .log(Some("trails_serve=debug,warn"))
        .http()
}

/// What `/mcp` answers a `tools/call` of `tool` with `token`: status, `WWW-Authenticate`, body.
async fn call(addr: SocketAddr, token: Option<&str>, tool: &str) -> (u16, String, Value) {
    let arguments = json!({ "tool": "research_search", "enabled": true });
    post(addr, token, &json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": tool, "arguments": arguments } })).await
}

async fn post(addr: SocketAddr, token: Option<&str>, body: &Value) -> (u16, String, Value) {
    let answered = trails_tests::client::post_with(addr, token, &[], body).await;
    (answered.status, answered.challenge, answered.answer)
}

/// Accepted: a tool result, not an error.
fn accepted((status, challenge, body): &(u16, String, Value)) -> bool {
    let ok = *status == 200 && body["result"].is_object() && body["result"]["isError"] != true;
    if !ok {
        eprintln!("not accepted: {status} {challenge} {body}");
    }
    ok
}

/// Refused with 401 `invalid_token`, the description saying `why`.
#[track_caller]
fn refused(answer: &(u16, String, Value), why: &str) {
    let (status, challenge, body) = answer;
    assert_eq!(*status, 401, "{body}");
    assert!(challenge.contains(r#"error="invalid_token""#), "{challenge}");
    assert!(challenge.contains(why), "the challenge should say {why:?}: {challenge}");
    assert_eq!(body["error"]["code"], -32001, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_the_issuer_are_checked_and_a_missing_scope_is_asked_for() {
    let key = Key::new("k1");
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(port, &[&key]);
    // A static token beside the provider's (the simple set-up keeps working).
    let extra = format!(
        "[auth.oauth.introspection]\nclient_id = \"trails\"\nclient_secret = \"trails-secret\"\n\
         [[http.tokens]]\nname = \"ci\"\nsha256 = \"{}\"\nscopes = [\"builder\"]\n",
        trails::auth::sha256_hex(STATIC_TOKEN)
    );
    let served = app(&issuer, &extra);
    let resource = format!("http://{}/mcp", served.addr);
    let addr = served.addr;

    // RFC 9728: what a client reads to find the authorization server, without a token.
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    for url in [metadata_url.clone(), format!("http://{addr}/.well-known/oauth-protected-resource")] {
        let metadata: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], resource);
        assert_eq!(metadata["authorization_servers"], json!([issuer]));
        assert_eq!(metadata["scopes_supported"], json!(["mcp:builder", "mcp:runtime"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(metadata["resource_name"], "trails-fixture-server", "the app's serverInfo name");
    }

    // No token for a builder tool: 401 naming the metadata and the scope to ask for; the body is
    // the JSON-RPC error under the request's id.
    let (status, challenge, body) = call(addr, None, BUILDER_TOOL).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(challenge, format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp:builder""#));
    assert_eq!((body["id"].clone(), body["error"]["code"].clone()), (json!(7), json!(-32001)), "{body}");

    // A token the provider issued for this resource with the builder scope.
    let builder = provider.access_token("builder", "mcp:runtime mcp:builder", &resource).await;
    assert!(accepted(&call(addr, Some(&builder), BUILDER_TOOL).await));

    // A scope too few: 403 insufficient_scope, asking for the one that is missing.
    let reader = provider.access_token("reader", "mcp:runtime", &resource).await;
    let (status, challenge, body) = call(addr, Some(&reader), BUILDER_TOOL).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="mcp:builder""#),
        "{challenge}"
    );
    assert_eq!(body["error"]["code"], -32004, "{body}");
    // The reader's token is good for what it allows: listing shows it runtime tools only.
    let (status, _, listed) =
        post(addr, Some(&reader), &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(status == 200 && !names.contains(&BUILDER_TOOL) && names.contains(&"research_search"), "{names:?}");

    // A token the provider issued for another resource.
    let elsewhere = provider.access_token("builder", "mcp:builder", "https://other.example/mcp").await;
    refused(&call(addr, Some(&elsewhere), BUILDER_TOOL).await, "another resource");

    // Tokens only the claim under test makes wrong, signed with the provider's own key.
    let claims = |changes: Value| {
        let mut claims = json!({ "iss": issuer, "aud": resource, "sub": "mallory", "client_id": "builder",
                                 "scope": "mcp:builder", "iat": now(), "exp": now() + 300 });
        claims.as_object_mut().unwrap().extend(changes.as_object().unwrap().clone());
        claims
    };
    assert!(accepted(&call(addr, Some(&key.sign(&claims(json!({})))), BUILDER_TOOL).await), "the control case");
    refused(&call(addr, Some(&key.sign(&claims(json!({"exp": now() - 3600})))), BUILDER_TOOL).await, "expired");
    refused(&call(addr, Some(&key.sign(&claims(json!({"nbf": now() + 3600})))), BUILDER_TOOL).await, "not valid yet");
    let other_issuer = key.sign(&claims(json!({"iss": "https://evil.example"})));
    refused(&call(addr, Some(&other_issuer), BUILDER_TOOL).await, "another authorization server");
    let no_expiry = key.sign(
        &claims(json!({}))
            .as_object()
            .map(|c| {
                let mut c = c.clone();
                c.remove("exp");
                Value::Object(c)
            })
            .unwrap(),
    );
    refused(&call(addr, Some(&no_expiry), BUILDER_TOOL).await, "no `exp`");
    // Signed by a key the provider does not publish (under an id it does not know, and under its id).
    let stranger = Key::new("k-unknown");
    refused(&call(addr, Some(&stranger.sign(&claims(json!({})))), BUILDER_TOOL).await, "does not publish");
    let impostor = Key { kid: "k1".into(), pem: stranger.pem.clone() };
    refused(&call(addr, Some(&impostor.sign(&claims(json!({})))), BUILDER_TOOL).await, "signature");
    // `alg: none`, and HMAC keyed with anything: never accepted.
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!("{}.{}.", b64(json!({"alg": "none", "typ": "at+jwt", "kid": "k1"})), b64(claims(json!({}))));
    refused(&call(addr, Some(&none), BUILDER_TOOL).await, "algorithm this server does not accept");
    let mut hmac = Header::new(Algorithm::HS256);
    hmac.kid = Some("k1".into());
    let hmac = jsonwebtoken::encode(&hmac, &claims(json!({})), &EncodingKey::from_secret(key.pem.as_bytes())).unwrap();
    refused(&call(addr, Some(&hmac), BUILDER_TOOL).await, "algorithm this server does not accept");
    // The provider's own token with its payload changed (a wider scope): the signature breaks.
    let parts: Vec<&str> = builder.split('.').collect();
    let tampered = format!("{}.{}.{}", parts[0], b64(claims(json!({"scope": "mcp:builder mcp:dev"}))), parts[2]);
    refused(&call(addr, Some(&tampered), BUILDER_TOOL).await, "signature");

    // The key-matching rules: an EdDSA token under the P-256 key's id, a token typed as something
    // else than an access token, unknown critical extensions, a token bound to a client key.
    let ed = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap().serialize_pem();
    let mut ed_header = Header::new(Algorithm::EdDSA);
    ed_header.kid = Some("k1".into());
    let ed = jsonwebtoken::encode(&ed_header, &claims(json!({})), &EncodingKey::from_ed_pem(ed.as_bytes()).unwrap())
        .unwrap();
    refused(&call(addr, Some(&ed), BUILDER_TOOL).await, "not the one its key is published for");
    let mut id_token = Header::new(Algorithm::ES256);
    (id_token.kid, id_token.typ) = (Some("k1".into()), Some("id+jwt".into()));
    let ec = EncodingKey::from_ec_pem(key.pem.as_bytes()).unwrap();
    let id_token = jsonwebtoken::encode(&id_token, &claims(json!({})), &ec).unwrap();
    refused(&call(addr, Some(&id_token), BUILDER_TOOL).await, "not an access token");
    let message = format!(
        "{}.{}",
        b64(json!({"alg": "ES256", "kid": "k1", "crit": ["x-bind"], "x-bind": 1})),
        b64(claims(json!({})))
    );
    let crit = format!("{message}.{}", jsonwebtoken::crypto::sign(message.as_bytes(), &ec, Algorithm::ES256).unwrap());
    refused(&call(addr, Some(&crit), BUILDER_TOOL).await, "`crit`");
    let bound = key.sign(&claims(json!({"cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}})));
    refused(&call(addr, Some(&bound), BUILDER_TOOL).await, "bound to a client key");
    // Without a `kid`, the one key of the algorithm's family is the key.
    let no_kid = jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims(json!({})), &ec).unwrap();
    assert!(accepted(&call(addr, Some(&no_kid), BUILDER_TOOL).await), "a token without kid, one key published");
    // Another scheme than Bearer: 401 with the metadata all the same.
    let basic = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("authorization", "Basic dXNlcjpwYXNz")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);
    let challenge = basic.headers()["www-authenticate"].to_str().unwrap().to_owned();
    // No Bearer credential at all: where to get one, and no error code (RFC 6750 §3).
    assert!(challenge.contains(&metadata_url) && !challenge.contains("error="), "{challenge}");
    // A subject that is a static token's name would act as that token (its sessions, budget,
    // keys and Cedar permits): refused, without confirming that a token of that name exists.
    let as_ci = key.sign(&claims(json!({"sub": "ci"})));
    let answer = call(addr, Some(&as_ci), BUILDER_TOOL).await;
    refused(&answer, "does not accept the token");
    let told = format!("{} {}", answer.1, answer.2);
    assert!(!told.contains("http.tokens") && !told.contains("subject"), "{told}");

    // Opaque tokens, asked about at the provider's introspection endpoint.
    let opaque = provider.access_token("opaque", "mcp:runtime mcp:builder", &resource).await;
    assert_eq!(opaque.matches('.').count(), 0, "an opaque token: {opaque}");
    assert!(accepted(&call(addr, Some(&opaque), BUILDER_TOOL).await));
    let opaque_elsewhere = provider.access_token("opaque", "mcp:builder", "https://other.example/mcp").await;
    refused(&call(addr, Some(&opaque_elsewhere), BUILDER_TOOL).await, "another resource");
    refused(&call(addr, Some("made-up-opaque-token"), BUILDER_TOOL).await, "not active");

    // `/invoke` answers the same challenge.
    let invoke = reqwest::Client::new()
        .post(format!("http://{addr}/invoke/trails.meta.tools.enable"))
        .json(&json!({"tool": "research_search", "enabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(invoke.status(), 401);
    assert!(invoke.headers()["www-authenticate"].to_str().unwrap().contains(&metadata_url));

    // A static token still works, and every caller is its own: provenance names the token's
    // subject (the provider's client, the signed `sub`) and the static token's name.
    assert!(accepted(&call(addr, Some(STATIC_TOKEN), BUILDER_TOOL).await));
    let read =
        json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "trails://prov/latest"}});
    let (_, _, latest) = post(addr, Some(&builder), &read).await;
    let latest: Value = serde_json::from_str(latest["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let agents: Vec<&str> =
        latest["activities"].as_array().unwrap().iter().map(|a| a["agent"].as_str().unwrap()).collect();
    for agent in ["/agent/builder", "/agent/mallory", "/agent/ci", "/agent/opaque"] {
        assert!(agents.iter().any(|a| a.ends_with(agent)), "{agent} in {agents:?}");
    }
    // Which OAuth client acted for the subject; a static token has none.
    let client_of = |agent: &str| {
        let activities = latest["activities"].as_array().unwrap();
        let activity = activities.iter().find(|a| a["agent"].as_str().unwrap().ends_with(agent)).unwrap();
        activity["client"].as_str().map(str::to_owned)
    };
    assert_eq!(client_of("/agent/mallory").as_deref(), Some("builder"));
    assert_eq!(client_of("/agent/ci"), None);

    // No token reached the log.
    let log = served.stderr();
    let made_up = "made-up-opaque-token".to_owned();
    for token in [
        &builder,
        &reader,
        &elsewhere,
        &opaque,
        &opaque_elsewhere,
        &tampered,
        &none,
        &hmac,
        &ed,
        &id_token,
        &crit,
        &bound,
        &made_up,
        &as_ci,
        &other_issuer,
        &no_expiry,
        &no_kid,
        &STATIC_TOKEN.to_owned(),
    ] {
        assert!(!log.contains(token.as_str()), "a token in the log:\n{log}");
    }
    drop(provider);
}

/// A continuation is read under the caller's token as it is at the read: the same person through
/// the same client, with a token that no longer grants the tool's scope, is refused and reads
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_read_after_the_callers_scope_narrowed_is_refused() {
    let key = Key::new("k1");
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let _provider = Provider::start(port, &[&key]);
    let served = app(&issuer, "");
    let resource = format!("http://{}/mcp", served.addr);
    let token = |scope: &str| {
        key.sign(&json!({ "iss": issuer, "aud": resource, "sub": "ada", "client_id": "host", "scope": scope,
                          "iat": now(), "exp": now() + 300 }))
    };
    let (builder, narrowed) = (token("mcp:runtime mcp:builder"), token("mcp:runtime"));
    let call = |name: &str, arguments: Value| json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let (_, _, cut) =
        post(served.addr, Some(&builder), &call("trails_meta_fixture_people", json!({"count": 500}))).await;
    let next = cut["result"]["structuredContent"]["next_call"]["arguments"].clone();
    assert!(next["handle"].is_string(), "{cut}");
    assert!(accepted(&post(served.addr, Some(&builder), &call("trails_result_read", next.clone())).await));
    let (status, _, refused) = post(served.addr, Some(&narrowed), &call("trails_result_read", next)).await;
    assert_eq!((status, &refused["error"]["code"]), (200, &json!(-32002)), "policy denied: {refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("trails_meta_fixture_people, which needs the `builder` scope"), "{message}");
    assert!(refused.get("result").is_none(), "nothing of the result: {refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_keys_are_fetched_and_held_keys_outlive_an_issuer_outage() {
    let (old, new) = (Key::new("old"), Key::new("new"));
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(port, &[&old]);
    let served = app(&issuer, "leeway_secs = 0");
    let resource = format!("http://{}/mcp", served.addr);
    let addr = served.addr;
    let before = provider.access_token("builder", "mcp:builder", &resource).await;
    assert!(accepted(&call(addr, Some(&before), BUILDER_TOOL).await));

    // The provider rotates: it signs with the new key and still publishes the old one. The app
    // learns the new key from the first token signed by it, without a restart; the old key's
    // tokens keep working until they expire.
    drop(provider);
    let provider = Provider::start(port, &[&new, &old]);
    tokio::time::sleep(Duration::from_millis(1100)).await; // past key_refetch_secs
    let after = provider.access_token("builder", "mcp:builder", &resource).await;
    assert!(accepted(&call(addr, Some(&after), BUILDER_TOOL).await), "a token of the new key");
    assert!(accepted(&call(addr, Some(&before), BUILDER_TOOL).await), "the old key is still published");
    let claims = json!({"iss": issuer, "aud": resource, "sub": "s", "scope": "mcp:builder", "exp": now() + 2});
    let short = old.sign(&claims);
    assert!(accepted(&call(addr, Some(&short), BUILDER_TOOL).await), "an old-key token before it expires");
    tokio::time::sleep(Duration::from_millis(3100)).await;
    refused(&call(addr, Some(&short), BUILDER_TOOL).await, "expired");

    // The provider retires the old key: once the app fetches the keys again (here, for a token
    // under a key id nobody publishes), the old key's tokens are refused.
    drop(provider);
    let provider = Provider::start(port, &[&new]);
    let probe = Key::new("probe").sign(&claims);
    refused(&call(addr, Some(&probe), BUILDER_TOOL).await, "does not publish");
    refused(&call(addr, Some(&before), BUILDER_TOOL).await, "does not publish");
    assert!(accepted(&call(addr, Some(&after), BUILDER_TOOL).await), "the new key's token");

    // A flood of made-up key ids: at most one fetch per key_refetch_secs (1 s here).
    let fetched = provider.jwks_fetches().await;
    let started = std::time::Instant::now();
    for n in 0..200 {
        let bogus = Key::new(&format!("bogus-{n}")).sign(&claims);
        refused(&call(addr, Some(&bogus), BUILDER_TOOL).await, "does not publish");
    }
    let (fetches, secs) = (provider.jwks_fetches().await - fetched, started.elapsed().as_secs());
    assert!(fetches <= secs + 1, "{fetches} key-set fetches for 200 made-up key ids in {secs} s");

    // The provider goes away: the key held keeps working; a token that needs another key is
    // answered 503 (retry later), not 401: it may be good.
    drop(provider);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(accepted(&call(addr, Some(&after), BUILDER_TOOL).await), "held keys outlive the outage");
    let unknown = Key::new("newer").sign(&json!({"iss": issuer, "aud": resource, "sub": "s", "exp": now() + 60}));
    let (status, _, body) = call(addr, Some(&unknown), BUILDER_TOOL).await;
    assert_eq!(status, 503, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("cannot be fetched"), "{body}");
    // Again at once (within key_refetch_secs, no new fetch): still unavailable, not invalid.
    let (status, _, body) = call(addr, Some(&unknown), BUILDER_TOOL).await;
    assert_eq!(status, 503, "{body}");
}

/// End to end with an official client: the MCP Python SDK's OAuth support finds everything from
/// the 401 alone (the metadata, then the provider) and comes back with a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_oauth_client_finds_the_provider_from_the_401_and_calls() {
    let venv = trails_tests::servers::python().expect("the Python test environment");
    let key = Key::new("k1");
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(port, &[&key]);
    let served = app(&issuer, "");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/oauth_client.py");
    let arguments = json!({ "tool": "research_search", "enabled": true }).to_string();
    let output = tokio::process::Command::new(venv.join("bin/python"))
        .arg(script)
        .args([&served.url("/mcp"), &issuer, BUILDER_TOOL, &arguments])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the Python client failed:\n{stderr}\nprovider: {}", provider.log());
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_ne!(report["result"]["isError"], true, "{report}");
    let requests = report["requests"].as_array().unwrap();
    let path = |step: &Value| step[1].as_str().unwrap().to_owned();
    // The call refused, the metadata read, a token obtained from the provider, the call again.
    let first_401 = requests.iter().position(|r| r[2] == 401 && path(r) == "/mcp").expect("a 401 from /mcp");
    let metadata = requests.iter().position(|r| path(r).starts_with("/.well-known/oauth-protected-resource"));
    let token = requests.iter().position(|r| path(r) == "/token" && r[2] == 200);
    let accepted = requests.iter().rposition(|r| path(r) == "/mcp" && r[2] == 200);
    assert!(metadata.is_some_and(|m| m > first_401) && token > metadata && accepted > token, "the flow: {requests:?}");
}

/// `[auth] anonymous = false`: nothing but the health check and the metadata without a token, so
/// a host meets the challenge as it connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_anonymous_callers_off_every_request_meets_the_challenge() {
    let key = Key::new("k1");
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(port, &[&key]);
    let served = app(&issuer, "[auth]\nanonymous = false");
    let (addr, resource) = (served.addr, format!("http://{}/mcp", served.addr));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, challenge, body) = post(addr, None, &initialize).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.contains("resource_metadata=") && !challenge.contains("error="), "{challenge}");
    assert_eq!(body["error"]["code"], -32001, "{body}");
    let openapi = reqwest::get(format!("http://{addr}/openapi.json")).await.unwrap();
    assert_eq!(openapi.status(), 401);
    for open in ["/healthz", "/.well-known/oauth-protected-resource/mcp"] {
        assert_eq!(reqwest::get(format!("http://{addr}{open}")).await.unwrap().status(), 200, "{open}");
    }
    let token = provider.access_token("reader", "mcp:runtime", &resource).await;
    let (status, _, body) = post(addr, Some(&token), &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(status, 200, "{body}");
}
