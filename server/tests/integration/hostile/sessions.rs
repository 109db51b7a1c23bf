//! Another caller's session id: a session belongs to the caller that made
//! it, and one that brings another's id is in a session new to it.
//!
//! The hostile run took the admin's session id to a `read:alpha` token and
//! got the admin's earlier Ask exchange, about a library the token may not
//! read, replayed into its prompt. The same id carried the admin's sticky
//! library into the token's searches, let the token change or clear it,
//! and let the token into the admin's MCP session, whose earlier answers
//! rmcp replays to whoever resumes its streams.
//!
//! Each probe compares what the intruder gets with what an id never used
//! gets: they must not differ in anything (the time a search took and the
//! id it echoes aside). All run over real HTTP on a real store with the
//! real model; the Ask probe also needs the real language model
//! (`llm_server`).

use std::path::Path;
use std::time::Duration;

use arrow_array::{RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use docshelf_server::access::local;
use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use docshelf_server::http::{Access, RouterConfig};
use docshelf_server::llm::{Llm, LlmConfig};
use index_core::access::NewToken;
use reqwest::{Client, Method, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::common::{self, upload};
use crate::llm_server::{LlamaServer, Proxy};

const ADMIN: &str = "admin-s3cret";

/// The library every token here may read.
const ALPHA: &str = "# Hinges\n\nOil the quibbleflux hinges every spring.\n";

/// The library only the admin may read, and words only it holds.
const BETA: &str = "# Secret\n\nThe quibbleflux launch codes are zebra-kumquat-42.\n";
const BETA_WORDS: &str = "zebra-kumquat-42";

/// The session id the admin uses and the intruder brings.
const SESSION: &str = "the-admins-session";

/// A session id nobody ever used: what the intruder's answers must equal.
const NEVER_USED: &str = "a-session-never-used";

/// An engine configuration on `dir` that reads what other engines on the
/// store wrote at once.
fn config(dir: &Path) -> EngineConfig {
    EngineConfig {
        read_consistency_secs: 0.0,
        ..common::engine_config(dir)
    }
}

/// An engine on `dir` holding `alpha` and `beta`.
async fn shelf(dir: &Path) -> Engine {
    let engine = Engine::open(&config(dir)).await.expect("engine");
    common::ingest(&engine, "alpha", "1.0", vec![upload("hinges.md", ALPHA)]).await;
    common::ingest(&engine, "beta", "1.0", vec![upload("codes.md", BETA)]).await;
    engine
}

/// A `read:alpha` token made on `engine`: its secret.
async fn reader(engine: &Engine) -> String {
    engine
        .create_token(
            &local(),
            NewToken {
                name: "reader-alpha".into(),
                grants: vec!["read:alpha".parse().expect("grant")],
                expires_in_days: None,
            },
        )
        .await
        .expect("token")
        .token
}

/// Serves `engine` warm, with the admin token and reads behind tokens.
async fn serve(engine: Engine, dir: &Path) -> String {
    engine.warm().await;
    common::serve_engine(
        engine,
        &RouterConfig {
            access: Access {
                token: Some(ADMIN.into()),
                auth_reads: true,
                ..Access::default()
            },
            ..common::router_config(dir, 1024 * 1024)
        },
    )
    .await
}

/// A client that gives up on a server that never answers, so that a probe
/// the server mishandles fails instead of hanging.
fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// A keyword search as `token`: the answer's JSON (it must succeed).
async fn search(base: &str, token: &str, mut body: Value) -> Value {
    body["mode"] = json!("keyword");
    let res = client()
        .post(format!("{base}/api/search"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("search");
    let status = res.status();
    let found: Value = res.json().await.expect("json");
    assert_eq!(status, StatusCode::OK, "{found}");
    found
}

/// A search answer without what differs between any two searches (the
/// time taken, each page's age at that moment) and the id it echoes: what
/// would tell one session from another.
fn as_seen(mut found: Value) -> Value {
    let answer = found.as_object_mut().expect("an object");
    answer.remove("took_ms");
    answer.remove("session_id");
    for hit in answer
        .get_mut("results")
        .and_then(Value::as_array_mut)
        .expect("results")
    {
        hit.as_object_mut().expect("a hit").remove("days_old");
    }
    found
}

/// The libraries of an answer's results.
fn libraries(found: &Value) -> Vec<&str> {
    found["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|hit| hit["library"].as_str())
        .collect()
}

/// The admin searches beta in [`SESSION`], which makes beta its library.
async fn admin_sticks_to_beta(base: &str) {
    let found = search(
        base,
        ADMIN,
        json!({ "query": "launch codes", "library": "beta", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_library"]["library"], "beta", "{found}");
}

/// The admin searches [`SESSION`] without naming a library: still beta's.
async fn admin_is_still_in_beta(base: &str) {
    let found = search(
        base,
        ADMIN,
        json!({ "query": "quibbleflux", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_applied"], true, "{found}");
    assert_eq!(libraries(&found), ["beta"], "{found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tokens_search_finds_the_session_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = shelf(dir.path()).await;
    let token = reader(&engine).await;
    let base = serve(engine, dir.path()).await;
    // A library the reader may read too: a sticky library it would see.
    let found = search(
        &base,
        ADMIN,
        json!({ "query": "hinges", "library": "alpha", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_library"]["library"], "alpha", "{found}");

    let intruder = search(
        &base,
        &token,
        json!({ "query": "quibbleflux", "session_id": SESSION }),
    )
    .await;
    let stranger = search(
        &base,
        &token,
        json!({ "query": "quibbleflux", "session_id": NEVER_USED }),
    )
    .await;
    assert_eq!(intruder["session_id"], SESSION, "{intruder}");
    assert_eq!(intruder["sticky_library"], Value::Null, "{intruder}");
    assert_eq!(intruder["sticky_applied"], false, "{intruder}");
    assert_eq!(as_seen(intruder), as_seen(stranger));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_token_neither_changes_nor_clears_the_owners_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = shelf(dir.path()).await;
    let token = reader(&engine).await;
    let base = serve(engine, dir.path()).await;
    admin_sticks_to_beta(&base).await;

    // The reader names its own library in the same session: its session.
    let found = search(
        &base,
        &token,
        json!({ "query": "hinges", "library": "alpha", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_library"]["library"], "alpha", "{found}");
    admin_is_still_in_beta(&base).await;
    // And its follow-up stays in alpha, whatever the admin did since.
    let found = search(
        &base,
        &token,
        json!({ "query": "quibbleflux", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_applied"], true, "{found}");
    assert_eq!(libraries(&found), ["alpha"], "{found}");

    // The dashboard's "clear the library", and a search that clears it.
    let res = client()
        .post(format!("{base}/rpc/clear_sticky"))
        .bearer_auth(&token)
        .form(&[("session_id", SESSION)])
        .send()
        .await
        .expect("clear");
    assert!(res.status().is_success(), "{}", res.status());
    search(
        &base,
        &token,
        json!({ "query": "hinges", "session_id": SESSION, "clear_sticky": true }),
    )
    .await;
    admin_is_still_in_beta(&base).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_its_owners_alone_on_another_replica() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = shelf(dir.path()).await;
    let token = reader(&first).await;
    let second = Engine::open(&config(dir.path())).await.expect("replica");
    let (a, b) = (
        serve(first, dir.path()).await,
        serve(second, dir.path()).await,
    );
    let found = search(
        &a,
        ADMIN,
        json!({ "query": "hinges", "library": "alpha", "session_id": SESSION }),
    )
    .await;
    assert_eq!(found["sticky_library"]["library"], "alpha", "{found}");

    // On the replica that never saw the session, from the store: the
    // reader finds it new, the admin finds its own library.
    let intruder = search(
        &b,
        &token,
        json!({ "query": "quibbleflux", "session_id": SESSION }),
    )
    .await;
    let stranger = search(
        &b,
        &token,
        json!({ "query": "quibbleflux", "session_id": NEVER_USED }),
    )
    .await;
    assert_eq!(intruder["sticky_applied"], false, "{intruder}");
    assert_eq!(as_seen(intruder), as_seen(stranger));
    let owner = search(
        &b,
        ADMIN,
        json!({ "query": "quibbleflux", "session_id": SESSION }),
    )
    .await;
    assert_eq!(owner["sticky_applied"], true, "{owner}");
    assert_eq!(libraries(&owner), ["alpha"], "{owner}");
}

/// Writes a sessions table as docshelf wrote it before sessions had
/// owners, holding [`SESSION`] stuck to alpha, into the store at `dir`.
async fn write_ownerless_session(dir: &Path) {
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("session_id", DataType::Utf8, false),
        Field::new("library", DataType::Utf8, true),
        Field::new("version", DataType::Utf8, true),
        Field::new(
            "updated_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
    ]));
    let row = RecordBatch::try_new(
        schema,
        vec![
            std::sync::Arc::new(StringArray::from(vec![SESSION])),
            std::sync::Arc::new(StringArray::from(vec![Some("alpha")])),
            std::sync::Arc::new(StringArray::from(vec![None::<&str>])),
            std::sync::Arc::new(
                TimestampMicrosecondArray::from(vec![1_700_000_000_000_000]).with_timezone("UTC"),
            ),
        ],
    )
    .expect("row");
    let db = lancedb::connect(&dir.display().to_string())
        .execute()
        .await
        .expect("store");
    db.create_table("sessions", row)
        .execute()
        .await
        .expect("the old sessions table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stored_before_owners_is_nobodys() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_ownerless_session(dir.path()).await;
    let engine = shelf(dir.path()).await;
    let token = reader(&engine).await;
    let base = serve(engine, dir.path()).await;
    for caller in [ADMIN, token.as_str()] {
        let old = search(
            &base,
            caller,
            json!({ "query": "quibbleflux", "session_id": SESSION }),
        )
        .await;
        let stranger = search(
            &base,
            caller,
            json!({ "query": "quibbleflux", "session_id": NEVER_USED }),
        )
        .await;
        assert_eq!(old["sticky_applied"], false, "{old}");
        assert_eq!(as_seen(old), as_seen(stranger));
    }
    // The session, made again by a caller, is that caller's from then on.
    admin_sticks_to_beta(&base).await;
    admin_is_still_in_beta(&base).await;
}

/// One request to `/mcp` as `token`, in `session` if given: its status,
/// the session its answer names, and its body.
async fn mcp(
    base: &str,
    token: &str,
    method: Method,
    session: Option<&str>,
    last_event: Option<&str>,
    message: Option<Value>,
) -> (StatusCode, Option<String>, String) {
    let mut request: RequestBuilder = client()
        .request(method, format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream");
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    if let Some(id) = last_event {
        request = request.header("last-event-id", id);
    }
    if let Some(message) = message {
        request = request.json(&message);
    }
    let res = request.send().await.expect("mcp");
    let status = res.status();
    let opened = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, opened, res.text().await.expect("body"))
}

/// A `tools/call` of `search_docs` with `arguments`.
fn search_docs(arguments: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "search_docs", "arguments": arguments } })
}

/// Opens an MCP session as `token`: its id.
async fn open_mcp_session(base: &str, token: &str) -> String {
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "probe", "version": "1" } } });
    let (status, opened, body) = mcp(base, token, Method::POST, None, None, Some(initialize)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = opened.expect("the answer names the session");
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let (status, _, body) = mcp(
        base,
        token,
        Method::POST,
        Some(&id),
        None,
        Some(initialized),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_token_is_not_let_into_an_mcp_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = shelf(dir.path()).await;
    let token = reader(&engine).await;
    let base = serve(engine, dir.path()).await;
    let never_issued = uuid::Uuid::new_v4().to_string();

    let session = open_mcp_session(&base, ADMIN).await;
    let beta =
        search_docs(json!({ "query": "launch codes", "library": "beta", "mode": "keyword" }));
    let (status, _, answer) = mcp(
        &base,
        ADMIN,
        Method::POST,
        Some(&session),
        None,
        Some(beta.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer.contains(BETA_WORDS), "{answer}");
    // The stream's first event: resuming after it replays the answer.
    let first_event = answer
        .lines()
        .find_map(|line| line.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
        .expect("the answer's events have ids");

    // Each request the reader sends in the admin's session is answered as
    // in a session never issued.
    let alpha = search_docs(json!({ "query": "quibbleflux", "mode": "keyword" }));
    for (method, last_event, message) in [
        (Method::POST, None, Some(alpha)),
        (Method::POST, None, Some(beta.clone())),
        (Method::GET, Some(first_event.as_str()), None),
        (Method::DELETE, None, None),
    ] {
        let intruder = mcp(
            &base,
            &token,
            method.clone(),
            Some(&session),
            last_event,
            message.clone(),
        )
        .await;
        let stranger = mcp(
            &base,
            &token,
            method.clone(),
            Some(&never_issued),
            last_event,
            message,
        )
        .await;
        assert!(!intruder.2.contains(BETA_WORDS), "{method}: {}", intruder.2);
        assert_eq!(intruder, stranger, "{method}");
    }

    // The reader's DELETE closed nothing: the admin's session goes on.
    let (status, _, answer) =
        mcp(&base, ADMIN, Method::POST, Some(&session), None, Some(beta)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer.contains(BETA_WORDS), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tokens_question_is_not_told_the_owners_conversation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let llama = LlamaServer::start().await;
    let proxy = Proxy::start(&llama.base).await;
    let engine = shelf(dir.path()).await;
    let token = reader(&engine).await;
    let llm = Llm::from_config(&LlmConfig {
        url: Some(proxy.base.clone()),
        model: "smollm2".into(),
        key: None,
        timeout_secs: 20,
        max_tokens: 30,
    })
    .expect("llm settings");
    let base = serve(engine.with_llm(llm), dir.path()).await;
    let ask = |token: String, question: &'static str| {
        let base = base.clone();
        async move {
            let text = client()
                .post(format!("{base}/api/ask"))
                .bearer_auth(token)
                .json(&json!({ "question": question, "session_id": SESSION }))
                .send()
                .await
                .expect("ask")
                .text()
                .await
                .expect("body");
            let events = common::sse(&text);
            assert!(events.iter().any(|(e, _)| e == "done"), "{text}");
        }
    };
    // The first request whose messages ask `question`.
    let asking = |question: &str| {
        proxy
            .requests()
            .into_iter()
            .find(|r| {
                r["messages"]
                    .as_array()
                    .expect("messages")
                    .iter()
                    .any(|m| m["content"].as_str().is_some_and(|c| c.contains(question)))
            })
            .unwrap_or_else(|| panic!("{question:?} never reached the model"))
    };
    let admins = "What are the quibbleflux launch codes?";
    let readers = "How often are the hinges oiled?";
    let admins_again = "And who keeps them?";
    ask(ADMIN.to_owned(), admins).await;
    ask(token, readers).await;
    ask(ADMIN.to_owned(), admins_again).await;

    let told = |request: &Value, text: &str| {
        request["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .any(|m| m["content"] == text)
    };
    // The reader's question came with no history at all: the system rules
    // and its question with its passages.
    let reader_request = asking(readers);
    assert!(!told(&reader_request, admins), "{reader_request:#}");
    assert_eq!(
        reader_request["messages"].as_array().map(Vec::len),
        Some(2),
        "{reader_request:#}"
    );
    assert!(
        !reader_request.to_string().contains(BETA_WORDS),
        "{reader_request:#}"
    );
    // The admin's follow-up still has the admin's own first exchange, and
    // nothing of the reader's.
    let admin_request = asking(admins_again);
    assert!(told(&admin_request, admins), "{admin_request:#}");
    assert!(
        !admin_request.to_string().contains(readers),
        "{admin_request:#}"
    );
}
