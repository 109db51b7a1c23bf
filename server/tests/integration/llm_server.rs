//! A real language model for Ask's tests: llama.cpp's llama-server with
//! SmolLM2-135M-Instruct, as `scripts/fetch-llm.sh` installs them (make
//! test's set-up does), and a recording pass-through proxy in front of it.
//!
//! The proxy changes nothing: it forwards every request to llama-server and
//! streams the answer back. It keeps the request bodies docshelf sent (so a
//! test can see the history and tools that reached the model), and notes
//! whether docshelf hung up while the model was still writing.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

fn llm_dir() -> PathBuf {
    match std::env::var_os("DOCSHELF_LLM_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/docshelf/llm"),
    }
}

/// A running llama-server, stopped when dropped.
pub struct LlamaServer {
    child: Child,
    pub base: String,
    _log: tempfile::NamedTempFile,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// Starts llama-server on a free loopback port and waits until it has
    /// loaded the model.
    pub async fn start() -> Self {
        let dir = llm_dir();
        let bin = dir.join("bin/llama-server");
        let model = dir.join("models").join(MODEL_FILE);
        assert!(
            bin.exists() && model.exists(),
            "no llama-server or model in {}: run scripts/fetch-llm.sh (make test's set-up does)",
            dir.display()
        );
        let log = tempfile::NamedTempFile::new().expect("log file");
        let port = crate::common::free_port();
        let child = Command::new(&bin)
            .arg("--model")
            .arg(&model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // One slot, a context with room for six passages and history,
            // two threads (the machine's cores), chat templates that know
            // tool calls.
            .args([
                "--ctx-size",
                "8192",
                "--parallel",
                "1",
                "--threads",
                "2",
                "--jinja",
            ])
            .stdin(Stdio::null())
            .stdout(log.reopen().expect("log"))
            .stderr(log.reopen().expect("log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let server = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _log: log,
        };
        let client = reqwest::Client::new();
        let health = format!("{}/health", server.base);
        crate::common::wait_until(
            Duration::from_secs(90),
            Duration::from_millis(200),
            || async {
                match client.get(&health).send().await {
                    Ok(res) if res.status().is_success() => Ok(()),
                    _ => Err(()),
                }
            },
            |()| {
                format!(
                    "llama-server did not become ready in 90 s: {}",
                    std::fs::read_to_string(server._log.path()).unwrap_or_default()
                )
            },
        )
        .await;
        server
    }

    /// How many tokens the model has generated for the answer it is
    /// working on, if it is generating one (llama-server's `/slots`:
    /// `n_decoded` of a slot that `is_processing`).
    pub async fn generating(&self) -> Option<u64> {
        let slots: Value = reqwest::get(format!("{}/slots", self.base))
            .await
            .expect("slots")
            .json()
            .await
            .expect("slots json");
        slots
            .as_array()
            .expect("slots array")
            .iter()
            .find(|s| s["is_processing"] == Value::Bool(true))
            .map(|s| s["next_token"][0]["n_decoded"].as_u64().unwrap_or(0))
    }
}

#[derive(Clone, Default)]
struct Record {
    upstream: String,
    requests: Arc<Mutex<Vec<Value>>>,
    hung_up_midway: Arc<AtomicBool>,
}

/// A pass-through proxy in front of a model server.
pub struct Proxy {
    pub base: String,
    record: Record,
}

impl Proxy {
    pub async fn start(upstream: &str) -> Self {
        let record = Record {
            upstream: upstream.to_owned(),
            ..Record::default()
        };
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(record.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { base, record }
    }

    /// The chat requests docshelf sent, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.record.requests.lock().expect("lock").clone()
    }

    /// Whether a client hung up before the model finished an answer.
    pub fn hung_up_midway(&self) -> bool {
        self.record.hung_up_midway.load(Ordering::SeqCst)
    }
}

/// Notes a hang-up if dropped before the upstream stream ended.
struct Watch {
    finished: bool,
    flag: Arc<AtomicBool>,
}

impl Watch {
    fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if !self.finished {
            self.flag.store(true, Ordering::SeqCst);
        }
    }
}

async fn forward(State(record): State<Record>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .expect("request body");
    if let Ok(json) = serde_json::from_slice::<Value>(&bytes) {
        record.requests.lock().expect("lock").push(json);
    }
    let url = format!("{}{}", record.upstream, parts.uri);
    let mut upstream = reqwest::Client::new()
        .request(parts.method, url)
        .body(bytes.to_vec());
    if let Some(ct) = parts.headers.get(axum::http::header::CONTENT_TYPE) {
        upstream = upstream.header(axum::http::header::CONTENT_TYPE, ct);
    }
    let answer = upstream.send().await.expect("upstream answers");
    let status = answer.status();
    let content_type = answer.headers().get(reqwest::header::CONTENT_TYPE).cloned();
    let watch = Watch {
        finished: false,
        flag: record.hung_up_midway.clone(),
    };
    let stream = futures::stream::unfold(
        (answer.bytes_stream().boxed(), watch),
        |(mut inner, mut watch)| async move {
            match inner.next().await {
                Some(item) => Some((item, (inner, watch))),
                None => {
                    watch.finish();
                    None
                }
            }
        },
    );
    let mut response = Response::builder().status(status.as_u16());
    if let Some(ct) = content_type {
        response = response.header(axum::http::header::CONTENT_TYPE, ct);
    }
    response.body(Body::from_stream(stream)).expect("response")
}
