//! A corpus of many libraries ([`super::corpus`] with
//! `DOCSHELF_BENCH_LIBRARIES`), searched held in memory and not held, with
//! what a commit costs the catalog, and searches while another library is
//! published.
//!
//! `make bench-size ROWS=1000000 LIBRARIES=1000` (env
//! `DOCSHELF_BENCH_ROWS`, `DOCSHELF_BENCH_LIBRARIES`; `DOCSHELF_BENCH_MIB`
//! the served budget, default 512; `DOCSHELF_BENCH_PARTS` a comma list of
//! `catalog`, `searches`, `writes`, `http`, default all). Prints, in order:
//! - **the catalog**: the listing read whole (as at start-up, and after
//!   every commit before it was kept by fragment), then after a publish,
//!   an index refresh and a delete, each with the fragments reused,
//!   recounted and read;
//! - **not held** (`--resident-mib 0`) and **held** (every version read
//!   in): hybrid p50 / p99 of one library and of every library, the query
//!   embedded each time, and the dense leg's recall@10 over every library
//!   against exact search; for held, the time to read one version and all;
//! - **while publishing**: one held library searched while versions of
//!   another are published and deleted (with the index refresh a job
//!   runs), quiet against busy, with the catalog kept by fragment and read
//!   whole after each commit;
//! - **over HTTP**: `docshelf serve` under the budget: start-up to its
//!   first answer, one library held, libraries not held, and the server's
//!   resident memory against the budget.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use docshelf_server::access::local;
use docshelf_server::engine::Engine;
use docshelf_server::store::filter::Scope;
use docshelf_server::store::{Target, VectorSearchTuning};

use super::corpus::{self, FILTER_LIBRARY};
use super::http::{docshelf_bin, timed_search, Server};
use super::scale::{memory, params, recall_with, DenseLeg};
use super::{env_usize, percentile, queries};

/// The library the bench publishes beside the corpus.
const WRITER: &str = "zz-writer";
/// Rows of each version it publishes: a mid-sized library version.
const WRITER_ROWS: usize = 1_200;
/// Queries the recall and the every-library lines use (exact search over
/// every row is slow by design).
const RECALL_QUERIES: usize = 50;

pub async fn run(root: &Path, rows: usize) {
    let dir = corpus::ensure(root, rows).await;
    let queries = queries(root);
    let libraries = corpus::libraries();
    println!(
        "corpus {}: {rows} chunks over {libraries} libraries; one library = {FILTER_LIBRARY}; {} queries",
        dir.display(),
        queries.len()
    );
    // `DOCSHELF_BENCH_PARTS=searches,http` runs only those parts.
    let parts = std::env::var("DOCSHELF_BENCH_PARTS")
        .unwrap_or_else(|_| "catalog,searches,writes,http".into());
    let part = |name: &str| parts.split(',').any(|p| p.trim() == name);
    if part("catalog") {
        catalog(root, &dir).await;
    }
    if part("searches") {
        for held in [Held::None, Held::Half, Held::All] {
            searches(root, &dir, &queries, rows, held).await;
        }
    }
    if part("writes") {
        while_publishing(root, &dir, &queries).await;
    }
    if part("http") {
        http(root, &dir, &queries, libraries).await;
    }
}

fn open_config(root: &Path, dir: &Path, mib: u64) -> docshelf_server::config::EngineConfig {
    let mut config = corpus::engine_config(root, dir);
    config.resident_mib = mib;
    config
}

/// What listing the store costs: whole, and after each kind of commit.
async fn catalog(root: &Path, dir: &Path) {
    let engine = Engine::open(&open_config(root, dir, 0))
        .await
        .expect("engine");
    let store = engine.store();
    // What a previous run left behind.
    store
        .delete(Target::Library(WRITER))
        .await
        .expect("delete the writer");
    store.refresh_indexes().await.expect("indexes");
    let listing = |label: &'static str| async move {
        let t = Instant::now();
        let docs = store.documents().await.expect("documents");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let c = store.catalog_counts();
        println!(
            "catalog {label:<34} {ms:>9.1} ms  {:>7} documents; fragments reused {}, recounted {}, read {} ({} rows)",
            docs.len(),
            c.reused,
            c.recounted,
            c.read,
            c.rows_read
        );
    };
    store.forget_catalog().await;
    listing("read whole (start-up, or any commit before)").await;
    listing("again, no commit").await;
    let seeds = corpus::seeds(root).await;
    let docs = corpus::version(&seeds, WRITER, "1", WRITER_ROWS, 1);
    store.append_documents(&docs).await.expect("append");
    listing("after publishing 1,200 rows").await;
    store.refresh_indexes().await.expect("indexes");
    listing("after the index refresh (compaction)").await;
    store
        .delete(Target::Version(WRITER, "1"))
        .await
        .expect("delete");
    listing("after deleting that version").await;
    store.refresh_indexes().await.expect("indexes");
    listing("after the index refresh").await;
}

/// One library and every library, hybrid, and the dense leg's recall@10
/// over every library, from the store alone or from memory.
/// How much of the corpus a search bench holds in memory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Nothing (`--resident-mib 0`): LanceDB answers.
    None,
    /// About half the versions: a search of every library is answered by
    /// LanceDB whole, as one needs every version it covers held.
    Half,
    /// Every version.
    All,
}

async fn searches(root: &Path, dir: &Path, queries: &[String], rows: usize, held: Held) {
    let all = corpus::engine_config(root, dir).resident_mib;
    // A chunk of this corpus costs about 2 KiB held (the "held" line
    // prints it): half the corpus is a KiB a row.
    let half = (rows as u64 >> 10).min(all);
    let mib = match held {
        Held::None => 0,
        Held::Half => half,
        Held::All => all,
    };
    let engine = Engine::open(&open_config(root, dir, mib))
        .await
        .expect("engine");
    let store = engine.store();
    let label = match held {
        Held::None => "not held",
        Held::Half => "half held",
        Held::All => "held",
    };
    if held != Held::None {
        let t = Instant::now();
        store
            .hold_published(FILTER_LIBRARY, "1.0")
            .await
            .expect("one version");
        let one = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let all = store.reload_resident().await.expect("every version");
        let stats = store.resident_stats();
        println!(
            "{label}: one version read in {one:.0} ms; every version in {:.1} s ({}: {} versions, {} chunks, {} MiB of a {} MiB budget); process RSS {} MiB",
            t.elapsed().as_secs_f64(),
            if all { "all held" } else { "not all held" },
            stats.segments,
            stats.chunks,
            stats.held_bytes >> 20,
            stats.budget_bytes >> 20,
            memory("self").0
        );
    }
    for q in queries.iter().take(5) {
        engine
            .search(&local(), params(q, "hybrid", Some(FILTER_LIBRARY)))
            .await
            .expect("search");
    }
    for (name, library, n) in [
        ("hybrid, one library", Some(FILTER_LIBRARY), queries.len()),
        ("hybrid, every library", None, RECALL_QUERIES),
    ] {
        if held == Held::Half && library.is_some() {
            // One library is held or not as the last loads left it.
            continue;
        }
        let mut ms = Vec::new();
        for q in queries.iter().take(n) {
            let t = Instant::now();
            engine
                .search(&local(), params(q, "hybrid", library))
                .await
                .expect("search");
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "{label:<9} {name:<24} p50 {:>7.1} ms  p99 {:>7.1} ms  ({} queries)",
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            ms.len()
        );
    }
    let embedder = engine.embedder().await.expect("model");
    let (mut cases, mut exact_ms) = (Vec::new(), Vec::new());
    for q in queries.iter().take(RECALL_QUERIES) {
        let v = embedder.embed_one(q.clone()).await.expect("embed");
        let t = Instant::now();
        let truth: Vec<String> = store
            .dense_with(&v, None, 10, VectorSearchTuning::default(), true)
            .await
            .expect("exact")
            .into_iter()
            .map(|c| c.chunk.chunk_id)
            .collect();
        exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
        cases.push((v, truth));
    }
    exact_ms.sort_by(f64::total_cmp);
    let every = Scope::default();
    let (recall, leg_p50) = recall_with(store, &cases, DenseLeg::Memory(&every)).await;
    println!(
        "{label:<9} dense leg, every library: recall@10 {:.3} against exact; leg p50 {:.1} ms, exact p50 {:.1} ms ({} queries{})",
        recall,
        leg_p50,
        percentile(&exact_ms, 0.5),
        cases.len(),
        match held {
            Held::None => ", LanceDB's vector index",
            Held::Half => ", LanceDB's vector index: a search needs every version held",
            Held::All => ", 8-bit scan of the held versions",
        }
    );
}

/// One held library searched while versions of another are published.
async fn while_publishing(root: &Path, dir: &Path, queries: &[String]) {
    let engine = Arc::new(
        Engine::open(&open_config(
            root,
            dir,
            corpus::engine_config(root, dir).resident_mib,
        ))
        .await
        .expect("engine"),
    );
    engine
        .store()
        .hold_published(FILTER_LIBRARY, "1.0")
        .await
        .expect("hold");
    let search_all = |engine: Arc<Engine>| async move {
        let mut ms = Vec::new();
        for q in queries {
            let t = Instant::now();
            engine
                .search(&local(), params(q, "hybrid", Some(FILTER_LIBRARY)))
                .await
                .expect("search");
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms
    };
    search_all(engine.clone()).await;
    let mut quiet = search_all(engine.clone()).await;
    quiet.sort_by(f64::total_cmp);
    println!(
        "one library held, quiet: p50 {:.1} ms, p99 {:.1} ms, longest {:.0} ms",
        percentile(&quiet, 0.5),
        percentile(&quiet, 0.99),
        quiet.last().copied().unwrap_or(0.0)
    );
    for whole in [false, true] {
        let stop = Arc::new(AtomicBool::new(false));
        let publishes = Arc::new(AtomicUsize::new(0));
        let writer = {
            let (engine, stop, publishes) = (engine.clone(), stop.clone(), publishes.clone());
            let seeds = Arc::new(corpus::seeds(root).await);
            tokio::spawn(async move {
                let store = engine.store();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let version = format!("w{n}");
                    let docs = corpus::version(&seeds, WRITER, &version, WRITER_ROWS, n);
                    store.append_documents(&docs).await.expect("append");
                    if whole {
                        store.forget_catalog().await;
                    }
                    store.refresh_indexes().await.expect("indexes");
                    if whole {
                        store.forget_catalog().await;
                    }
                    if n > 1 {
                        let before = format!("w{}", n - 1);
                        store
                            .delete(Target::Version(WRITER, &before))
                            .await
                            .expect("delete");
                        if whole {
                            store.forget_catalog().await;
                        }
                    }
                    publishes.fetch_add(1, Ordering::Relaxed);
                }
                store
                    .delete(Target::Library(WRITER))
                    .await
                    .expect("delete the writer");
            })
        };
        let before = engine.store().resident_stats();
        let mut busy = Vec::new();
        while busy.len() < queries.len() * 4 || publishes.load(Ordering::Relaxed) < 3 {
            busy.extend(search_all(engine.clone()).await);
            if busy.len() > queries.len() * 20 {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.await.expect("writer");
        let after = engine.store().resident_stats();
        busy.sort_by(f64::total_cmp);
        println!(
            "one library held, while {WRITER} publishes ({}): p50 {:.1} ms, p99 {:.1} ms, longest {:.0} ms, {} over 100 ms; {} searches, {} publishes, legs from memory {} / from the store {}",
            if whole {
                "the catalog read whole after each commit, as before"
            } else {
                "the catalog kept by fragment"
            },
            percentile(&busy, 0.5),
            percentile(&busy, 0.99),
            busy.last().copied().unwrap_or(0.0),
            busy.iter().filter(|&&ms| ms > 100.0).count(),
            busy.len(),
            publishes.load(Ordering::Relaxed),
            after.hits - before.hits,
            after.misses - before.misses
        );
    }
}

/// `docshelf serve` under a budget, over HTTP.
async fn http(root: &Path, dir: &Path, queries: &[String], libraries: usize) {
    let mib = env_usize("DOCSHELF_BENCH_MIB").unwrap_or(512);
    let bin = docshelf_bin(root);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let started = Instant::now();
    let child = Command::new(&bin)
        .args(["serve", "--device", "cpu", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data")
        .arg(dir)
        .arg("--model-dir")
        .arg(root.join("models/all-MiniLM-L6-v2"))
        .arg("--resident-mib")
        .arg(mib.to_string())
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let server = Server(child);
    let pid = server.0.id().to_string();
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/api/search");
    let search = |query: &str, library: String| {
        let body = serde_json::json!({"query": query, "library": library, "k": 10});
        timed_search(client.clone(), url.clone(), body)
    };
    // The first answer: the server binds, then loads the model and opens
    // the store; asked until it answers (each try is bounded by the
    // server's own start, not by a clock of ours).
    loop {
        if search(&queries[0], FILTER_LIBRARY.into()).await.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "HTTP (--resident-mib {mib}): first answer {:.2} s after start; RSS then {} MiB",
        started.elapsed().as_secs_f64(),
        memory(&pid).0
    );
    // The server warms versions in the background until its budget is
    // full; the held figures are taken once it has stopped reading.
    let memory_status = || async {
        let status: serde_json::Value = match client
            .get(format!("http://127.0.0.1:{port}/api/status"))
            .send()
            .await
        {
            Ok(res) => res.json().await.unwrap_or_default(),
            Err(_) => serde_json::Value::Null,
        };
        status["store"]["memory"].clone()
    };
    let mut last = memory_status().await["loads"].as_u64();
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = memory_status().await["loads"].as_u64();
        if now == last || started.elapsed() > Duration::from_secs(600) {
            break;
        }
        last = now;
    }
    println!(
        "HTTP: warming stopped {:.0} s after start: {}",
        started.elapsed().as_secs_f64(),
        memory_status().await
    );
    let timed = |ms: &mut Vec<f64>, (ok, t): (bool, f64)| {
        assert!(ok, "a search failed");
        ms.push(t);
    };
    // Held: one library, once its version is read in.
    for q in queries.iter().take(20) {
        search(q, FILTER_LIBRARY.into()).await;
    }
    let mut held = Vec::new();
    for q in queries {
        timed(&mut held, search(q, FILTER_LIBRARY.into()).await);
    }
    // Not held: each query asks a library no search asked before.
    let mut cold = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let library = corpus::library(4 + (i * 7) % (libraries - 4));
        timed(&mut cold, search(q, library).await);
    }
    for ms in [&mut held, &mut cold] {
        ms.sort_by(f64::total_cmp);
    }
    let status: serde_json::Value = client
        .get(format!("http://127.0.0.1:{port}/api/status"))
        .send()
        .await
        .expect("status")
        .json()
        .await
        .expect("status body");
    let (rss, peak) = memory(&pid);
    println!(
        "HTTP one library held:           p50 {:.1} ms, p99 {:.1} ms\nHTTP a library not held (each once): p50 {:.1} ms, p99 {:.1} ms\nHTTP server: RSS {rss} MiB (peak {peak}) with --resident-mib {mib}; memory {}",
        percentile(&held, 0.5),
        percentile(&held, 0.99),
        percentile(&cold, 0.5),
        percentile(&cold, 0.99),
        status["store"]["memory"]
    );
}
