//! Search at scale: 100k or 1M chunks ([`super::corpus`]), k=10, filtered
//! to one library, query embedding included.
//!
//! Prints, in order:
//! - sequential latency per mode through the engine (p50 / p99 over every
//!   query, twice), and the query embedding alone for reference;
//! - the dense leg's recall@10 against exact search, same filter, and with
//!   `DOCSHELF_BENCH_RECALL_SWEEP` set, over probe shares × refine factors;
//! - the process's resident memory (now, and its peak);
//! - with a concurrency, the `docshelf` binary itself serving the store
//!   over HTTP to that many clients for a fixed time: searches/s, p50 /
//!   p99, errors, and the server's resident memory.

use std::path::Path;
use std::time::{Duration, Instant};

use docshelf_server::engine::Engine;
use docshelf_server::store::filter::Scope;
use docshelf_server::store::{Store, VectorSearchTuning};
use index_core::search::SearchParams;

use super::corpus::{self, FILTER_LIBRARY};
use super::{percentile, queries};
use docshelf_server::access::local;

pub async fn run(root: &Path, rows: usize, concurrency: usize) {
    let dir = corpus::ensure(root, rows).await;
    let queries = queries(root);
    {
        let engine = Engine::open(&corpus::engine_config(root, &dir))
            .await
            .expect("engine");
        let counts = engine.store().counts().await.expect("counts");
        println!(
            "store: {} chunks in {} documents, {} libraries; filter library={FILTER_LIBRARY}; {} queries",
            counts.chunks,
            counts.documents,
            counts.libraries,
            queries.len()
        );
        let t = Instant::now();
        let copied = engine.store().reload_resident().await.expect("copy");
        println!(
            "in-memory copy of the table: {} ({:.1} s, {} MiB)",
            if copied {
                "read"
            } else {
                "not held (too large or moving)"
            },
            t.elapsed().as_secs_f64(),
            engine.store().resident_bytes().unwrap_or(0) >> 20
        );
        // `DOCSHELF_BENCH_RELOADS=N`: the copy read N more times, with the
        // process's memory after each (does RSS settle or grow?).
        let reloads = super::env_usize("DOCSHELF_BENCH_RELOADS").unwrap_or(0);
        for i in 1..=reloads {
            let t = Instant::now();
            engine.store().reload_resident().await.expect("copy");
            let (rss, peak) = memory("self");
            println!(
                "reload {i}: {:.1} s, RSS {rss} MiB, peak {peak} MiB",
                t.elapsed().as_secs_f64()
            );
        }
        sequential(&engine, &queries).await;
        recall(&engine, &queries).await;
        let (rss, peak) = memory("self");
        println!("bench process memory: RSS {rss} MiB, peak {peak} MiB");
    }
    if concurrency > 0 {
        super::http::load(root, &dir, &queries, concurrency).await;
    }
}

async fn sequential(engine: &Engine, queries: &[String]) {
    // Warm up: the first searches open index files and fill caches.
    for q in queries.iter().take(10) {
        for mode in ["keyword", "dense", "hybrid"] {
            engine
                .search(&local(), params(q, mode, Some(FILTER_LIBRARY)))
                .await
                .expect("search");
        }
    }
    println!(
        "{:<28} {:>8} {:>8} {:>8}",
        "sequential (k=10)", "p50 ms", "p99 ms", "qps"
    );
    let embedder = engine.embedder().await.expect("model");
    let mut ms = Vec::new();
    for q in queries {
        let t = Instant::now();
        embedder.embed_one(q.clone()).await.expect("embed");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    report("query embedding alone", &mut ms, Duration::ZERO);
    // The keyword leg's store query alone (50 candidates, as a k=10
    // search fetches): the rest of a keyword search is fusion, pages and
    // snippets.
    let scope = Scope {
        targets: vec![(FILTER_LIBRARY.to_owned(), None)],
        ..Scope::default()
    };
    let mut ms = Vec::new();
    for q in queries {
        let t = Instant::now();
        engine
            .store()
            .keyword(q, &scope, 50)
            .await
            .expect("keyword leg");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    report("keyword leg alone (store)", &mut ms, Duration::ZERO);
    // The budgeted line fills 4,000 tokens with whole sections, which it
    // reads back from the copy by document: what grows with the library.
    for (name, mode, library, max_tokens) in [
        (
            "keyword, one library",
            "keyword",
            Some(FILTER_LIBRARY),
            None,
        ),
        ("dense, one library", "dense", Some(FILTER_LIBRARY), None),
        ("hybrid, one library", "hybrid", Some(FILTER_LIBRARY), None),
        (
            "hybrid, one library, 4k tok",
            "hybrid",
            Some(FILTER_LIBRARY),
            Some(4000),
        ),
        ("keyword, every library", "keyword", None, None),
        ("dense, every library", "dense", None, None),
        ("hybrid, every library", "hybrid", None, None),
    ] {
        let mut ms = Vec::new();
        let started = Instant::now();
        for _ in 0..2 {
            for q in queries {
                let t = Instant::now();
                // A budgeted search ranks as many results as its budget
                // asks for by default, not the bench's k.
                let params = SearchParams {
                    max_tokens,
                    k: if max_tokens.is_some() { None } else { Some(10) },
                    ..params(q, mode, library)
                };
                engine.search(&local(), params).await.expect("search");
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        report(name, &mut ms, started.elapsed());
    }
}

/// The dense leg as search runs it (50 fetched, the first 10 compared)
/// against exact search, both within the filtered library. With
/// `DOCSHELF_BENCH_RECALL_SWEEP` set, also other probe shares and refine
/// factors, each with its own latency, to choose the defaults from.
async fn recall(engine: &Engine, queries: &[String]) {
    let store = engine.store();
    if !store.has_vector_index().await.expect("indices") {
        println!("dense recall@10: exact search (no vector index below this size)");
        return;
    }
    let scope = Scope {
        targets: vec![(FILTER_LIBRARY.to_owned(), None)],
        ..Scope::default()
    }
    .to_sql();
    let embedder = engine.embedder().await.expect("model");
    let (mut cases, mut exact_ms) = (Vec::new(), Vec::new());
    for q in queries {
        let v = embedder.embed_one(q.clone()).await.expect("embed");
        let t = Instant::now();
        let truth: Vec<String> = store
            .dense_with(
                &v,
                scope.as_deref(),
                10,
                VectorSearchTuning::default(),
                true,
            )
            .await
            .expect("exact")
            .into_iter()
            .map(|c| c.chunk.chunk_id)
            .collect();
        exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
        cases.push((v, truth));
    }
    exact_ms.sort_by(f64::total_cmp);
    if store.resident_ready().await.expect("version") {
        let filter = Scope {
            targets: vec![(FILTER_LIBRARY.to_owned(), None)],
            ..Scope::default()
        };
        let (found, p50) = recall_with(store, &cases, DenseLeg::Memory(&filter)).await;
        println!(
            "dense recall@10 vs exact, one library, in-memory 8-bit scan: {found:.3} (p50 {p50:.2} ms)"
        );
    }
    let partitions = store.vector_partitions().await.expect("partitions");
    let default = VectorSearchTuning::default();
    let (found, _) = recall_with(store, &cases, DenseLeg::Index(scope.as_deref(), default)).await;
    println!(
        "dense recall@10 vs exact, one library: {found:.3} (exact search alone p50 {:.1} ms; index of {} partitions, {} probed, refine factor {})",
        percentile(&exact_ms, 0.5),
        partitions.map_or_else(|| "?".to_owned(), |p| p.to_string()),
        default.probes(partitions),
        default.refine(partitions)
    );
    if std::env::var_os("DOCSHELF_BENCH_RECALL_SWEEP").is_none() {
        return;
    }
    println!("probe share  refine  probes  recall@10  dense p50 ms");
    for share in [1.0 / 32.0, 1.0 / 16.0, 1.0 / 8.0, 1.0 / 4.0] {
        for refine_factor in [5, 10, 20] {
            let tuning = VectorSearchTuning {
                probe_share: share,
                refine_factor,
                refine_share: 0.0,
                ..default
            };
            let (found, p50) =
                recall_with(store, &cases, DenseLeg::Index(scope.as_deref(), tuning)).await;
            println!(
                "1/{:<10} {refine_factor:>6}  {:>6}  {found:>9.3}  {p50:>12.1}",
                (1.0 / share).round(),
                tuning.probes(partitions)
            );
        }
    }
}

/// Which dense search a recall measurement times.
pub enum DenseLeg<'a> {
    /// LanceDB's vector index at these settings, within this SQL scope.
    Index(Option<&'a str>, VectorSearchTuning),
    /// The store's own dense leg within this scope: from memory where it
    /// holds every version, else from the vector index.
    Memory(&'a Scope),
}

/// Recall@10 of `leg` over `cases` (query vector, exact top 10), and its
/// p50 latency in ms.
pub async fn recall_with(
    store: &Store,
    cases: &[(Vec<f32>, Vec<String>)],
    leg: DenseLeg<'_>,
) -> (f64, f64) {
    let (mut found, mut ms) = (0usize, Vec::new());
    for (v, truth) in cases {
        let t = Instant::now();
        let approx = match &leg {
            DenseLeg::Index(scope, tuning) => store.dense_with(v, *scope, 50, *tuning, false).await,
            DenseLeg::Memory(scope) => store.dense(v, scope, 50).await,
        }
        .expect("dense");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        found += approx
            .iter()
            .take(10)
            .filter(|a| truth.contains(&a.chunk.chunk_id))
            .count();
    }
    ms.sort_by(f64::total_cmp);
    (
        found as f64 / (cases.len() * 10).max(1) as f64,
        percentile(&ms, 0.5),
    )
}

pub fn params(query: &str, mode: &str, library: Option<&str>) -> SearchParams {
    SearchParams {
        query: query.to_owned(),
        k: Some(10),
        mode: Some(mode.into()),
        library: library.map(str::to_owned),
        ..SearchParams::default()
    }
}

fn report(name: &str, ms: &mut [f64], elapsed: Duration) {
    ms.sort_by(f64::total_cmp);
    let qps = if elapsed.is_zero() {
        String::from("-")
    } else {
        format!("{:.1}", ms.len() as f64 / elapsed.as_secs_f64())
    };
    println!(
        "{name:<28} {:>8.1} {:>8.1} {qps:>8}",
        percentile(ms, 0.5),
        percentile(ms, 0.99)
    );
}

/// Resident and peak resident memory of a process (`self` or a pid), MiB.
pub fn memory(pid: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
