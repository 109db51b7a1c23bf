//! The vector index against exact search: recall@10 and latency.
//!
//! `make bench-vector` (or `cargo bench --profile dev -p docshelf-server
//! --bench vector_index`). Stores `DOCSHELF_BENCH_ROWS` (default 100,000)
//! synthetic 384-d unit vectors drawn around 1,000 centres (real embeddings
//! cluster by topic the same way), builds the IVF-PQ index as the store
//! does, then for 200 queries near stored vectors compares the top 10 of
//! the index, under several probe/refine settings, with the exact top 10.

use std::time::Instant;

use docshelf_server::store::{Store, VectorSearchTuning};

#[path = "../tests/support/synthetic.rs"]
mod synthetic;
use synthetic::{document, Rng};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let rows: usize = std::env::var("DOCSHELF_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let per_doc = 1000;
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().display().to_string())
        .await
        .expect("store");
    let mut rng = Rng::default();
    let centres = rng.centres(1000);

    let started = Instant::now();
    let mut samples = Vec::new();
    for d in 0..rows.div_ceil(per_doc) {
        let vectors: Vec<Vec<f32>> = (0..per_doc.min(rows - d * per_doc))
            .map(|i| {
                let v = rng.near(&centres[(d * 7919 + i * 104_729) % centres.len()], 0.8);
                if (d * per_doc + i) % (rows / 200).max(1) == 0 {
                    samples.push(v.clone());
                }
                v
            })
            .collect();
        store
            .replace_document(&document(
                "bench",
                format!("doc-{d}.md"),
                &format!("{d}-"),
                vectors,
            ))
            .await
            .expect("store");
    }
    println!(
        "stored {rows} vectors in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    store.build_vector_index().await.expect("index");
    println!(
        "built the IVF-PQ index in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let queries: Vec<Vec<f32>> = samples.iter().map(|s| rng.near(s, 0.05)).collect();
    let mut exact = Vec::new();
    let mut exact_ms = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let hits = store
            .dense_with(q, None, 10, VectorSearchTuning::default(), true)
            .await
            .expect("exact");
        exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
        exact.push(
            hits.into_iter()
                .map(|h| h.chunk.chunk_id)
                .collect::<Vec<_>>(),
        );
    }
    exact_ms.sort_by(f64::total_cmp);
    println!(
        "{} queries; exact search p50 {:.1} ms, p99 {:.1} ms",
        queries.len(),
        percentile(&exact_ms, 0.5),
        percentile(&exact_ms, 0.99)
    );
    // `fetch` is how many neighbours are asked for; recall is over the
    // first 10 of them. Search's dense leg fetches 5·k, at least 50, so the
    // fetch-50 rows are what a k=10 search gets.
    println!(
        "{:>8} {:>7} {:>6} {:>10} {:>8} {:>8}",
        "nprobes", "refine", "fetch", "recall@10", "p50 ms", "p99 ms"
    );
    let default = VectorSearchTuning::default();
    for (nprobes, refine_factor) in [
        (5, 1),
        (10, 1),
        (20, 1),
        (10, 5),
        (20, 5),
        (40, 5),
        (20, 10),
        (40, 10),
    ] {
        let tuning = VectorSearchTuning {
            nprobes,
            // Fixed counts here: this table compares them.
            probe_share: 0.0,
            refine_factor,
            refine_share: 0.0,
        };
        for fetch in [10, 50] {
            let (mut found, mut ms) = (0usize, Vec::new());
            for (q, truth) in queries.iter().zip(&exact) {
                let t = Instant::now();
                let hits = store
                    .dense_with(q, None, fetch, tuning, false)
                    .await
                    .expect("approx");
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                found += hits
                    .iter()
                    .take(10)
                    .filter(|h| truth.contains(&h.chunk.chunk_id))
                    .count();
            }
            ms.sort_by(f64::total_cmp);
            println!(
                "{nprobes:>8} {refine_factor:>7} {fetch:>6} {:>10.3} {:>8.1} {:>8.1}{}",
                found as f64 / (queries.len() * 10) as f64,
                percentile(&ms, 0.5),
                percentile(&ms, 0.99),
                if tuning == default { "  (default)" } else { "" }
            );
        }
    }
}
