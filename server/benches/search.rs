//! Search latency, end to end through the engine (embedding the query,
//! both legs, fusion, snippets), per mode.
//!
//! `make bench-search` (or `cargo bench --profile dev -p docshelf-server
//! --bench search`) has two forms:
//! - **The git manual** (default): uploads the first `DOCSHELF_BENCH_FILES`
//!   pages (default 40; all 190 take minutes on a CPU) into a temporary
//!   store, or reuses the store at `DOCSHELF_BENCH_STORE` if it already
//!   holds them, then runs the eval set's 190 queries in each mode, and
//!   measures what the second stage (rerank over the best 50 candidates)
//!   adds: each query runs with and without it back to back, and the
//!   per-query differences are summarised, so machine noise between runs
//!   cancels. Then the same for a cross-encoder as the second stage
//!   (`DOCSHELF_RERANKER_DIR`, or one built from the embedding model's
//!   weights) over the first `DOCSHELF_BENCH_RERANK_QUERIES` (20) queries.
//! - **At scale** (`make bench-search ROWS=100000 CONCURRENCY=16`, env
//!   `DOCSHELF_BENCH_ROWS`, `DOCSHELF_BENCH_CONCURRENCY`): a corpus of that
//!   many chunks grown from the git manual's real ones ([`corpus`]),
//!   searched in-process and over HTTP ([`scale`], [`http`]).
//! - **Many libraries** (`make bench-size ROWS=1000000 LIBRARIES=1000`,
//!   env `DOCSHELF_BENCH_LIBRARIES` beside the rows): held and not held,
//!   what a commit costs the catalog, searches while another library is
//!   published, and the server under a budget over HTTP ([`size`]).
//! - **While another library is published** (`make bench-segments`, env
//!   `DOCSHELF_BENCH_WRITES_STORE`): one library searched while another is
//!   published over and over, from memory and from the store ([`writes`]).

#[path = "search/corpus.rs"]
mod corpus;
#[path = "../tests/support/cross_encoder_dir.rs"]
mod cross_encoder_dir;
#[path = "search/http.rs"]
mod http;
#[path = "search/scale.rs"]
mod scale;
#[path = "search/size.rs"]
mod size;
#[path = "search/writes.rs"]
mod writes;

use std::path::{Path, PathBuf};
use std::time::Instant;

use docshelf_server::access::local;
use docshelf_server::cli::collect_uploads;
use docshelf_server::engine::Engine;
use index_core::search::SearchParams;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The git-docs eval set's 190 queries.
fn queries(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("../shared/data/eval/git-docs/queries.jsonl"))
        .expect("queries")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect()
}

pub fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().filter(|v| !v.is_empty()).map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number"))
    })
}

#[tokio::main]
async fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    if let Some(store) = std::env::var_os("DOCSHELF_BENCH_WRITES_STORE") {
        return writes::run(&root, Path::new(&store)).await;
    }
    match env_usize("DOCSHELF_BENCH_ROWS") {
        // The side-by-side script only needs the corpus made and its path.
        Some(rows) if std::env::var_os("DOCSHELF_BENCH_PREPARE_ONLY").is_some() => {
            let dir = corpus::ensure(&root, rows).await;
            println!("corpus-dir: {}", dir.display());
        }
        Some(rows) if std::env::var_os("DOCSHELF_BENCH_SIZE").is_some() => {
            size::run(&root, rows).await;
        }
        Some(rows) => {
            let concurrency = env_usize("DOCSHELF_BENCH_CONCURRENCY").unwrap_or(0);
            scale::run(&root, rows, concurrency).await;
        }
        None => git_pages(&root).await,
    }
}

async fn git_pages(root: &Path) {
    let eval = root.join("../shared/data/eval/git-docs");
    let files: usize = std::env::var("DOCSHELF_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let temp = tempfile::tempdir().expect("temp dir");
    let store = std::env::var("DOCSHELF_BENCH_STORE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| temp.path().to_owned());
    let engine = Engine::open(&corpus::engine_config(root, &store))
        .await
        .expect("engine");

    let present = engine
        .libraries(&local())
        .await
        .expect("libraries")
        .iter()
        .any(|l| l.name == "git");
    if !present {
        let uploads: Vec<_> = collect_uploads(&[eval.join("corpus")])
            .expect("corpus")
            .into_iter()
            .take(files)
            .collect();
        let started = Instant::now();
        let status = engine
            .ingest("git", "2.39", uploads)
            .await
            .expect("a valid library");
        println!(
            "uploaded {} pages in {:.1} s",
            status.files.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let counts = engine.store().counts().await.expect("counts");
    println!(
        "store: {} documents, {} chunks",
        counts.documents, counts.chunks
    );

    let queries = queries(root);
    // Warm up: first queries pay for opening index files.
    for q in queries.iter().take(5) {
        engine
            .search(
                &local(),
                SearchParams {
                    query: q.clone(),
                    ..SearchParams::default()
                },
            )
            .await
            .expect("search");
    }
    println!(
        "{:<22} {:>8} {:>8} {:>8}",
        "mode (k=10)", "p50 ms", "p99 ms", "qps"
    );
    for (name, mode, library) in [
        ("keyword", "keyword", None),
        ("dense", "dense", None),
        ("hybrid", "hybrid", None),
        ("hybrid, library=git", "hybrid", Some("git")),
    ] {
        let mut ms = Vec::new();
        let started = Instant::now();
        for q in &queries {
            let t = Instant::now();
            engine
                .search(
                    &local(),
                    SearchParams {
                        query: q.clone(),
                        mode: Some(mode.into()),
                        library: library.map(str::to_owned),
                        ..SearchParams::default()
                    },
                )
                .await
                .expect("search");
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let qps = queries.len() as f64 / started.elapsed().as_secs_f64();
        ms.sort_by(f64::total_cmp);
        println!(
            "{name:<22} {:>8.1} {:>8.1} {:>8.1}",
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            qps
        );
    }

    second_stage_cost(&engine, &queries, "second stage (N=50)").await;

    // A cross-encoder in its place: the user's (`DOCSHELF_RERANKER_DIR`),
    // or one built from the embedding model's weights, which costs the
    // same as any MiniLM-L6 cross-encoder (its scores are meaningless, its
    // arithmetic is not). Each query costs seconds here, hence fewer.
    let reranker = match std::env::var_os("DOCSHELF_RERANKER_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let dir = temp.path().join("cross-encoder");
            cross_encoder_dir::write(&root.join("models/all-MiniLM-L6-v2"), &dir)
                .expect("the test cross-encoder");
            dir
        }
    };
    let mut config = corpus::engine_config(root, &store);
    config.model.reranker_dir = Some(reranker);
    let reranked = Engine::open(&config)
        .await
        .expect("engine with the reranker");
    println!("{}", reranked.status(&local()).await.reranker);
    let n = env_usize("DOCSHELF_BENCH_RERANK_QUERIES").unwrap_or(20);
    second_stage_cost(
        &reranked,
        &queries[..n.min(queries.len())],
        "cross-encoder (N=50)",
    )
    .await;
}

/// What the engine's second stage adds to a hybrid search: paired runs,
/// each query with and without it back to back, so machine noise between
/// runs cancels.
async fn second_stage_cost(engine: &Engine, queries: &[String], label: &str) {
    let (mut with, mut without, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let time = |rerank: bool| {
            let params = SearchParams {
                query: q.clone(),
                rerank: Some(rerank),
                ..SearchParams::default()
            };
            async move {
                let t = Instant::now();
                engine.search(&local(), params).await.expect("search");
                t.elapsed().as_secs_f64() * 1e3
            }
        };
        let (a, b) = (time(true).await, time(false).await);
        with.push(a);
        without.push(b);
        added.push(a - b);
    }
    for v in [&mut with, &mut without, &mut added] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "{label}, {} queries: hybrid p50 {:.1} ms with, {:.1} ms without; added per query p50 {:+.2} ms, p90 {:+.2} ms",
        queries.len(),
        percentile(&with, 0.5),
        percentile(&without, 0.5),
        percentile(&added, 0.5),
        percentile(&added, 0.9)
    );
}
