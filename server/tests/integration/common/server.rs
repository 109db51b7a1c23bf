//! docshelf over HTTP: served on a free loopback port as `docshelf serve`
//! serves it, and a client's side of its REST API (JSON calls, upload
//! forms, job events, raw request heads, server-sent events).

use std::path::Path;
use std::sync::Arc;

use reqwest::multipart::{Form, Part};
use reqwest::{Client, StatusCode};
use serde_json::Value;

use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use docshelf_server::http::RouterConfig;

/// Router settings with the dashboard's files under `dir/site` and request
/// bodies up to `max_body_bytes`; the rest as by default (no token, no
/// CORS origins, loopback host names only).
pub fn router_config(dir: &Path, max_body_bytes: usize) -> RouterConfig {
    RouterConfig {
        site_dir: dir.join("site"),
        max_body_bytes,
        ..RouterConfig::default()
    }
}

/// Opens an engine on `engine`, warms it, and serves it with `router`, as
/// `docshelf serve` does, for the rest of the test's runtime. Returns the
/// base URL.
pub async fn serve(engine: &EngineConfig, router: RouterConfig) -> String {
    let engine = Engine::open(engine).await.expect("engine opens");
    engine.warm().await;
    serve_engine(engine, &router).await
}

/// Serves `engine` as it is (its model not warmed unless the caller did)
/// with `router`; returns the base URL.
pub async fn serve_engine(engine: Engine, router: &RouterConfig) -> String {
    serve_app(
        docshelf_server::http::router(Arc::new(engine), router),
        docshelf_server::http::serve::HEADER_TIMEOUT,
    )
    .await
}

/// docshelf on a store in `dir`, its sources fetched by `sources`, warm
/// and served over HTTP (1 MiB bodies): the engine, and the base URL.
pub async fn serve_with_sources(
    dir: &Path,
    sources: docshelf_server::config::SourceConfig,
) -> (Arc<Engine>, String) {
    let config = EngineConfig {
        sources,
        ..super::engine_config(dir)
    };
    let engine = Arc::new(Engine::open(&config).await.expect("engine"));
    engine.warm().await;
    let router = router_config(dir, 1024 * 1024);
    let app = docshelf_server::http::router(engine.clone(), &router);
    let base = serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await;
    (engine, base)
}

/// Serves `app` with docshelf's own accept loop (as `docshelf serve` does)
/// on a free loopback port, for the rest of the test's runtime.
pub async fn serve_app(app: axum::Router, header_timeout: std::time::Duration) -> String {
    let listener = tokio::net::TcpListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(docshelf_server::http::serve::serve(
        listener,
        app,
        header_timeout,
        std::future::pending(),
    ));
    format!("http://{addr}")
}

/// GETs `path` and returns the status and the JSON body (`null` when the
/// body is not JSON).
pub async fn get_json(base: &str, path: &str) -> (StatusCode, Value) {
    let res = reqwest::get(format!("{base}{path}"))
        .await
        .expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// POSTs `body` as JSON to `path` and returns the status and the JSON
/// body (`null` when the body is not JSON).
pub async fn post_json(base: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let res = Client::new()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// A file of an upload form: `name` holding `bytes`.
pub fn file_part(name: &str, bytes: impl AsRef<[u8]>) -> Part {
    Part::bytes(bytes.as_ref().to_vec()).file_name(name.to_owned())
}

/// The form `POST /api/upload` takes: `library`, `version`, and each of
/// `files` (name, contents) as a `file` part.
pub fn upload_form(library: &str, version: &str, files: &[(&str, &[u8])]) -> Form {
    files.iter().fold(
        Form::new()
            .text("library", library.to_owned())
            .text("version", version.to_owned()),
        |form, (name, bytes)| form.part("file", file_part(name, bytes)),
    )
}

/// Posts an upload form to `/api/upload` (with `token` as a bearer token
/// when given), asserts it was accepted (202), and returns the job id.
pub async fn post_upload(client: &Client, base: &str, form: Form, token: Option<&str>) -> String {
    let mut request = client.post(format!("{base}/api/upload")).multipart(form);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let res = request.send().await.expect("upload");
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    res.json::<Value>().await.expect("json")["job_id"]
        .as_str()
        .expect("job id")
        .to_owned()
}

/// A job's server-sent events (`/api/jobs/{id}/events`, reads open), read
/// to the end of the stream, which ends once the job is done.
pub async fn job_events(client: &Client, base: &str, id: &str) -> String {
    let res = client
        .get(format!("{base}/api/jobs/{id}/events"))
        .send()
        .await
        .expect("events");
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.expect("stream")
}

/// Follows the job a `202` answer names to its end ([`finished_job_id`]).
pub async fn finished_job(base: &str, accepted: &Value) -> Value {
    finished_job_id(base, accepted["job_id"].as_str().expect("job id")).await
}

/// Follows job `id` to its end (its events to `done`) and returns the
/// job's status.
pub async fn finished_job_id(base: &str, id: &str) -> Value {
    let events = job_events(&Client::new(), base, id).await;
    assert!(events.contains("event: done"), "{events}");
    let (status, job) = get_json(base, &format!("/api/jobs/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{job}");
    job
}

/// The versions of the first library `GET /api/libraries` lists, newest
/// first.
pub async fn first_library_versions(base: &str) -> Vec<String> {
    let (_, libraries) = get_json(base, "/api/libraries").await;
    libraries[0]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| v["version"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Uploads `form` ([`post_upload`]), follows the job's events to `done`
/// (reads must be open), and returns the events and the job's status.
pub async fn upload_and_follow(
    client: &Client,
    base: &str,
    form: Form,
    token: Option<&str>,
) -> (String, Value) {
    let id = post_upload(client, base, form, token).await;
    let events = job_events(client, base, &id).await;
    assert!(events.contains("event: done"), "{events}");
    let (status, job) = get_json(base, &format!("/api/jobs/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{job}");
    (events, job)
}

/// Sends only the head of an HTTP/1.1 request (request line and headers,
/// `Content-Length` included, no body) and reads the response: how a server
/// answers before reading a body. Returns the status and the body text.
///
/// A real client streaming a large body may instead see its write fail once
/// the server answers and closes: that race is why this stops at the head.
pub async fn request_head_only(base: &str, head: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write head");
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                let status = text
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .expect("status line");
                return (status, text[end + 4..end + 4 + length].to_owned());
            }
        }
        // A server that waits for the body instead of answering fails here.
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("no answer within 10 s without the body")
            .expect("read response");
        assert!(n > 0, "the server closed before answering: {text:?}");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Server-sent events as (event, data) pairs.
pub fn sse(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = Some(e.trim().to_owned());
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            Some((event?, serde_json::from_str(&data).ok()?))
        })
        .collect()
}
