//! Helpers shared by the integration tests.

use std::path::PathBuf;

use serde_json::Value;

use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;

/// The real model, as `make setup` installs it (or `DOCSHELF_MODEL_DIR`).
pub fn model_dir() -> PathBuf {
    let root = package_dir().join("..");
    match std::env::var_os("DOCSHELF_MODEL_DIR").map(PathBuf::from) {
        Some(p) if p.is_relative() => root.join(p),
        Some(p) => p,
        None => root.join("models/all-MiniLM-L6-v2"),
    }
}

/// The server package's directory, read when the test runs (cargo sets it
/// then too), not baked in at build time: a test binary reused from a shared
/// target directory, built from a checkout elsewhere, still finds this
/// checkout's files.
pub fn package_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The shared test data (`../shared` beside the repository).
pub fn shared_data() -> PathBuf {
    package_dir().join("../../shared/data")
}

/// An engine configuration on a fresh store with the real model on the CPU.
pub fn engine_config(store: &std::path::Path) -> EngineConfig {
    EngineConfig {
        max_files: 1000,
        max_expanded_mib: 64,
        ..EngineConfig::new(
            store.display().to_string(),
            ModelConfig::new(model_dir(), DeviceChoice::Cpu),
        )
    }
}

/// A loopback port nothing listens on (it was free a moment ago): for a
/// server a test starts, or to stand for one that is not there.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Serves docshelf's router on a free loopback port (for the rest of the
/// test's runtime) and returns its base URL.
pub async fn serve(engine: &EngineConfig, router: docshelf_server::http::RouterConfig) -> String {
    let engine = std::sync::Arc::new(
        docshelf_server::engine::Engine::open(engine)
            .await
            .expect("engine opens"),
    );
    // As `docshelf serve` does.
    engine.warm().await;
    serve_app(
        docshelf_server::http::router(engine, &router),
        docshelf_server::http::serve::HEADER_TIMEOUT,
    )
    .await
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

/// Posts an upload form to `/api/upload` (with `token` as a bearer token
/// when given), asserts it was accepted (202), and returns the job id.
pub async fn post_upload(
    client: &reqwest::Client,
    base: &str,
    form: reqwest::multipart::Form,
    token: Option<&str>,
) -> String {
    let mut request = client.post(format!("{base}/api/upload")).multipart(form);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let res = request.send().await.expect("upload");
    assert_eq!(res.status(), reqwest::StatusCode::ACCEPTED);
    res.json::<serde_json::Value>().await.expect("json")["job_id"]
        .as_str()
        .expect("job id")
        .to_owned()
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
