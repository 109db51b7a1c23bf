//! Searches of one library while another is published over and over, from
//! the library versions held in memory and from the store alone, in one
//! run on one store.
//!
//! `make bench-segments` (env `DOCSHELF_BENCH_WRITES_STORE`): a store that
//! already holds several libraries, such as the one `make eval` keeps with
//! `DOCSHELF_EVAL_STORE`. The searched library is `git-docs`, asked the
//! git-docs eval set's queries (hybrid, k=10, the query embedded each
//! time); the published one is `DOCSHELF_BENCH_WRITES_LIBRARY` (default
//! `flask-docs`), uploaded through the whole pipeline (extraction,
//! chunking, embedding, staging, one publishing commit, index refresh) from
//! `DOCSHELF_BENCH_WRITES_CORPUS` as versions `w1`, `w2`, …, each deleting
//! the one before. For each way of answering it prints:
//! - start-up: opening the engine, then its first search's time, and the
//!   time until every published version is held;
//! - quiet: p50 / p99 over the queries;
//! - while publishing: p50 / p99 over as many passes as it takes to see at
//!   least three publishes, the publishes done, and how many search legs
//!   memory and the store answered.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use docshelf_server::access::local;
use docshelf_server::cli::collect_uploads;
use docshelf_server::engine::Engine;
use docshelf_server::store::Target;
use index_core::search::SearchParams;

use super::{corpus, percentile, queries};

const SEARCHED: &str = "git-docs";

pub async fn run(root: &Path, store: &Path) {
    let library =
        std::env::var("DOCSHELF_BENCH_WRITES_LIBRARY").unwrap_or_else(|_| "flask-docs".into());
    let corpus_dir = std::env::var_os("DOCSHELF_BENCH_WRITES_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
            PathBuf::from(home).join(format!(".cache/docshelf/eval/{library}/corpus"))
        });
    let queries = queries(root);
    println!(
        "store {}: searching {SEARCHED} ({} queries, hybrid, k=10) while {library} is published from {}",
        store.display(),
        queries.len(),
        corpus_dir.display()
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "", "p50 ms", "p99 ms", "searches", "publishes", "legs mem/store"
    );
    for (name, mib) in [
        ("memory", corpus::engine_config(root, store).resident_mib),
        ("store only (--resident-mib 0)", 0),
    ] {
        let mut config = corpus::engine_config(root, store);
        config.resident_mib = mib;
        let opened = Instant::now();
        let engine = Arc::new(Engine::open(&config).await.expect("engine"));
        engine.warm().await;
        let open_s = opened.elapsed().as_secs_f64();
        let first = Instant::now();
        search(&engine, &queries[0]).await;
        let first_ms = first.elapsed().as_secs_f64() * 1e3;
        let mut all_held = None;
        if mib > 0 {
            while !engine.store().resident_ready().await.expect("status") {
                if opened.elapsed() > Duration::from_secs(600) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            all_held = Some(opened.elapsed().as_secs_f64());
        }
        println!(
            "{name}: start-up {open_s:.1} s (model loaded), first search {first_ms:.0} ms{}",
            all_held.map_or(String::new(), |s| format!(
                ", every version held {s:.1} s after opening ({} MiB)",
                engine.store().resident_stats().held_bytes >> 20
            ))
        );
        // Warm up, then quiet.
        for q in queries.iter().take(10) {
            search(&engine, q).await;
        }
        let before = engine.store().resident_stats();
        let (mut quiet, _) = timed(&engine, &queries, 1, &|| true).await;
        let after = engine.store().resident_stats();
        report(
            &format!("  {name}, quiet"),
            &mut quiet,
            0,
            (after.hits - before.hits, after.misses - before.misses),
        );

        let publishing = Arc::new(AtomicBool::new(true));
        let published = Arc::new(AtomicUsize::new(0));
        let publisher = {
            let (engine, publishing, published) =
                (engine.clone(), publishing.clone(), published.clone());
            let (corpus_dir, library) = (corpus_dir.clone(), library.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while publishing.load(Ordering::Relaxed) {
                    n += 1;
                    let uploads =
                        collect_uploads(std::slice::from_ref(&corpus_dir)).expect("corpus");
                    let version = format!("w{n}");
                    engine
                        .ingest(&library, &version, uploads)
                        .await
                        .expect("publish");
                    if n > 1 {
                        let old = format!("w{}", n - 1);
                        engine
                            .delete(&local(), Target::Version(&library, &old))
                            .await
                            .expect("delete");
                    }
                    published.fetch_add(1, Ordering::Relaxed);
                }
                n
            })
        };
        let before = engine.store().resident_stats();
        let enough = || published.load(Ordering::Relaxed) >= 3;
        let (mut during, passes) = timed(&engine, &queries, 20, &enough).await;
        publishing.store(false, Ordering::Relaxed);
        let after = engine.store().resident_stats();
        report(
            &format!("  {name}, while publishing ({passes} passes)"),
            &mut during,
            published.load(Ordering::Relaxed),
            (after.hits - before.hits, after.misses - before.misses),
        );
        let last = publisher.await.expect("publisher");
        engine
            .delete(&local(), Target::Version(&library, &format!("w{last}")))
            .await
            .expect("delete");
    }
}

async fn search(engine: &Engine, query: &str) {
    engine
        .search(
            &local(),
            SearchParams {
                query: query.to_owned(),
                library: Some(SEARCHED.to_owned()),
                mode: Some("hybrid".to_owned()),
                k: Some(10),
                ..SearchParams::default()
            },
        )
        .await
        .expect("search");
}

/// Every query, in passes, until `done` after at least one pass (and at
/// most `max_passes`): each search's milliseconds, and the passes run.
async fn timed(
    engine: &Engine,
    queries: &[String],
    max_passes: usize,
    done: &dyn Fn() -> bool,
) -> (Vec<f64>, usize) {
    let mut ms = Vec::new();
    let mut passes = 0;
    while passes < max_passes {
        for q in queries {
            let t = Instant::now();
            search(engine, q).await;
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        passes += 1;
        if done() {
            break;
        }
    }
    (ms, passes)
}

fn report(name: &str, ms: &mut [f64], publishes: usize, (memory, store): (u64, u64)) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{name:<34} {:>9.1} {:>9.1} {:>9} {:>10} {:>12}",
        percentile(ms, 0.5),
        percentile(ms, 0.99),
        ms.len(),
        publishes,
        format!("{memory}/{store}")
    );
}
