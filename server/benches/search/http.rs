//! Concurrent searches over HTTP against the `docshelf` binary exactly as
//! `make run` builds it: `DOCSHELF_BIN`, else the dev build in the target
//! directory. Clients send `POST /api/search` back to back for
//! `DOCSHELF_BENCH_SECONDS` (default 30).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::corpus::FILTER_LIBRARY;
use super::percentile;
use super::scale::memory;

/// Stops the server when the bench ends, however it ends.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `docshelf` binary: `DOCSHELF_BIN`, else the dev build in the target
/// directory.
pub fn docshelf_bin(root: &Path) -> PathBuf {
    std::env::var_os("DOCSHELF_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target"));
            target.join("debug/docshelf")
        })
}

/// One `POST /api/search` of `body`: whether it answered 2xx with a whole
/// body, and how long it took in ms.
pub async fn timed_search(
    client: reqwest::Client,
    url: String,
    body: serde_json::Value,
) -> (bool, f64) {
    let t = Instant::now();
    let ok = match client.post(&url).json(&body).send().await {
        Ok(res) => res.status().is_success() && res.bytes().await.is_ok(),
        Err(_) => false,
    };
    (ok, t.elapsed().as_secs_f64() * 1e3)
}

pub async fn load(root: &Path, store: &Path, queries: &[String], clients: usize) {
    let seconds: u64 = std::env::var("DOCSHELF_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let bin = docshelf_bin(root);
    let mut child = Command::new(&bin)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--device",
            "cpu",
            "--data",
        ])
        .arg(store)
        .arg("--model-dir")
        .arg(root.join("models/all-MiniLM-L6-v2"))
        // The log filter `make run` serves with: `RUST_LOG=info` would also
        // turn on LanceDB's per-query plan summaries, CPU on every search
        // that a default server never spends (docs/benchmarks.md, "The
        // domain crate optimised, and what a search spends").
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    // The server logs (its address among them) to stderr.
    let log = child.stderr.take().expect("stderr");
    let server = Server(child);
    let base = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(log).lines();
        let base = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.split("listening on ")
                    .nth(1)
                    .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned())
            })
            .expect("the server's address in its log");
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        base
    })
    .await
    .expect("log reader");
    let pid = server.0.id().to_string();

    let client = reqwest::Client::new();
    let url = format!("{base}/api/search");
    let search = |i: usize| {
        let body = serde_json::json!({
            "query": queries[i % queries.len()],
            "library": FILTER_LIBRARY,
            "k": 10,
        });
        timed_search(client.clone(), url.clone(), body)
    };
    // Whether the server answers from its in-memory copy of the table
    // (`/api/status`, as the dashboard shows it).
    let status_url = format!("{base}/api/status");
    let in_memory = || async {
        let status: serde_json::Value = match client.get(&status_url).send().await {
            Ok(res) => res.json().await.unwrap_or_default(),
            Err(_) => serde_json::Value::Null,
        };
        status["store"]["in_memory"].as_bool().unwrap_or(false)
    };
    // Warm up, one client, until the server holds the table in memory (it
    // reads it once the store is quiet; a minute at most here).
    let waited = Instant::now();
    let mut i = 0;
    while i < 20 || (!in_memory().await && waited.elapsed() < Duration::from_secs(60)) {
        search(i).await;
        i += 1;
    }
    println!(
        "HTTP warm-up: {i} searches in {:.1} s",
        waited.elapsed().as_secs_f64()
    );
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let search = Arc::new(search);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let search = search.clone();
            async move {
                let (mut ms, mut errors, mut i) = (Vec::new(), 0usize, c * 7);
                while Instant::now() < deadline {
                    let (ok, t) = search(i).await;
                    ms.push(t);
                    errors += usize::from(!ok);
                    i += 1;
                }
                (ms, errors)
            }
        })
        .collect();
    let results = futures::future::join_all(tasks).await;
    let elapsed = started.elapsed().as_secs_f64();
    let mut ms: Vec<f64> = results.iter().flat_map(|(m, _)| m.clone()).collect();
    let errors: usize = results.iter().map(|(_, e)| e).sum();
    ms.sort_by(f64::total_cmp);
    let (rss, peak) = memory(&pid);
    println!(
        "HTTP, {clients} clients for {seconds} s ({}): {:.1} searches/s, p50 {:.1} ms, p99 {:.1} ms, {errors} errors of {}; server RSS {rss} MiB, peak {peak} MiB",
        bin.display(),
        ms.len() as f64 / elapsed,
        percentile(&ms, 0.5),
        percentile(&ms, 0.99),
        ms.len()
    );
    drop(server);
}
