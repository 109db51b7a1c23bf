//! What the access check costs a search, over HTTP with the real engine:
//! 1,000 libraries, 1,000 tokens, and the git-docs eval set's queries
//! searched as the admin (no scope: nothing filtered), as a `read:*` token
//! (a stored token, nothing filtered), as `read:lib-*` (every library, but
//! listed one by one: the filter's worst case), as a token for 100
//! libraries and as one for a single library (filtered before ranking). Each query runs
//! once per caller back to back, so the machine's noise falls on all alike.
//! Also: the time to identify a token among 1,000, alone.
//!
//! `cargo bench --profile dev -p docshelf-server --bench access`
//! (`make bench-access`). `DOCSHELF_BENCH_STORE` keeps the store between
//! runs (it is filled once: 1,000 uploads).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;
use docshelf_server::engine::Engine;
use docshelf_server::http::{Access, RouterConfig};
use index_core::access::{Grant, NewToken};
use index_core::job::Upload;

const LIBRARIES: usize = 1_000;
const TOKENS: usize = 1_000;
const ADMIN: &str = "bench-admin";

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn engine_config(root: &Path, store: &Path) -> EngineConfig {
    EngineConfig::new(
        store.display().to_string(),
        ModelConfig::new(root.join("models/all-MiniLM-L6-v2"), DeviceChoice::Cpu),
    )
}

#[tokio::main]
async fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let eval = root.join("../shared/data/eval/git-docs");
    let temp = tempfile::tempdir().expect("temp dir");
    let store = std::env::var("DOCSHELF_BENCH_STORE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| temp.path().to_owned());
    let engine = Engine::open(&engine_config(&root, &store))
        .await
        .expect("engine");
    let local = docshelf_server::access::local();

    // 1,000 libraries, each 1,500 characters of one git manual page's text.
    let stored = engine.libraries(&local).await.expect("libraries").len();
    if stored < LIBRARIES {
        let pages: Vec<Upload> =
            docshelf_server::cli::collect_uploads(&[eval.join("corpus")]).expect("corpus");
        let started = Instant::now();
        for i in stored..LIBRARIES {
            let page = &pages[i % pages.len()];
            let text = text_of(&String::from_utf8_lossy(&page.bytes));
            let cut: String = text.chars().take(1_500).collect();
            let upload = Upload {
                name: format!("{}.md", page.name.trim_end_matches(".html")),
                bytes: cut.into_bytes(),
            };
            let status = engine
                .ingest(&format!("lib-{i:04}"), "1", vec![upload])
                .await
                .expect("ingest");
            assert_eq!(status.tally(), (1, 0), "{status:#?}");
        }
        println!(
            "stored {LIBRARIES} libraries in {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
    let counts = engine.store().counts().await.expect("counts");
    println!(
        "store: {} libraries, {} documents, {} chunks",
        counts.libraries, counts.documents, counts.chunks
    );

    // 1,000 tokens; the last five are the ones searched with (a run on a
    // kept store makes five more).
    let existing = engine.list_tokens(&local).await.expect("tokens").len();
    let started = Instant::now();
    for i in existing..TOKENS.saturating_sub(5) {
        make(
            &engine,
            &format!("filler-{i}"),
            &format!("read:lib-{:04}", i % LIBRARIES),
        )
        .await;
    }
    let every = make(&engine, "every", "read:*").await;
    // Every library too, but as a pattern that is not `*`: the scope lists
    // all 1,000 names, the filter's worst case.
    let listed = make(&engine, "listed", "read:lib-*").await;
    let hundred = make(&engine, "hundred", "read:lib-00*").await;
    let one = make(&engine, "one", "read:lib-0042").await;
    let _writer = make(&engine, "writer", "write:lib-01*").await;
    println!(
        "tokens: {} (made {} in {:.0} s)",
        engine.list_tokens(&local).await.expect("tokens").len(),
        TOKENS.saturating_sub(existing),
        started.elapsed().as_secs_f64()
    );

    // Identifying a token among 1,000, alone (after the first, cached).
    engine.identify(&one).await.expect("known");
    let rounds = 10_000;
    let started = Instant::now();
    for _ in 0..rounds {
        engine.identify(&one).await.expect("known");
    }
    println!(
        "identify one token among {TOKENS}: {:.1} µs per call ({rounds} calls)",
        started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
    );

    // What a caller's view of the catalog costs alone: the grants matched
    // against every library, the visible ones copied.
    let info = engine.identify(&listed).await.expect("known");
    let caller = index_core::access::Caller {
        name: info.name,
        id: info.id,
        permissions: index_core::access::Permissions {
            grants: info.grants,
        },
        signed_in: true,
        tokens_required: true,
    };
    let started = Instant::now();
    for _ in 0..1_000 {
        let seen = engine.visible_libraries(&caller).await.expect("libraries");
        assert_eq!(seen.len(), LIBRARIES);
    }
    println!(
        "the catalog as `read:lib-*` sees it (1,000 of 1,000 libraries): {:.0} µs per request",
        started.elapsed().as_secs_f64() * 1e3
    );

    let engine = Arc::new(engine);
    engine.warm().await;
    let queries: Vec<String> = std::fs::read_to_string(eval.join("queries.jsonl"))
        .expect("queries")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect();

    // The engine alone, without HTTP: the owner, and `read:lib-*`.
    let mut alone = [Vec::new(), Vec::new()];
    for q in &queries {
        for (i, who) in [&local, &caller].into_iter().enumerate() {
            let params = index_core::search::SearchParams {
                query: q.clone(),
                k: Some(10),
                ..Default::default()
            };
            let started = Instant::now();
            engine.search(who, params).await.expect("search");
            alone[i].push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    for (name, mut t) in ["owner (no scope)", "1,000 listed"].into_iter().zip(alone) {
        t.sort_by(f64::total_cmp);
        println!(
            "in-process {name:<18} {:>8.1} {:>8.1}",
            percentile(&t, 0.5),
            percentile(&t, 0.99)
        );
    }
    let app = docshelf_server::http::router(
        engine.clone(),
        &RouterConfig {
            access: Access {
                token: Some(ADMIN.into()),
                auth_reads: true,
                ..Access::default()
            },
            site_dir: root.join("target/site"),
            max_body_bytes: 1 << 20,
            ..RouterConfig::default()
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(docshelf_server::http::serve::serve(
        listener,
        app,
        docshelf_server::http::serve::HEADER_TIMEOUT,
        std::future::pending(),
    ));

    let callers = [
        ("admin (no scope)", ADMIN.to_owned()),
        ("read:* token", every),
        ("1,000 listed", listed),
        ("100 libraries", hundred),
        ("1 library", one),
    ];
    let client = reqwest::Client::new();
    let search = |token: &str, query: &str| {
        client
            .post(format!("{base}/api/search"))
            .bearer_auth(token)
            .json(&serde_json::json!({ "query": query, "k": 10 }))
            .send()
    };
    // Warm up: the first searches open index files.
    for q in queries.iter().take(5) {
        for (_, token) in &callers {
            search(token, q).await.expect("search");
        }
    }
    let mut times = vec![Vec::new(); callers.len()];
    for q in &queries {
        for (i, (_, token)) in callers.iter().enumerate() {
            let started = Instant::now();
            let res = search(token, q).await.expect("search");
            assert!(res.status().is_success(), "{}", res.status());
            let _ = res.bytes().await.expect("body");
            times[i].push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    println!(
        "hybrid search over HTTP, k=10, {} queries, each caller per query back to back:",
        queries.len()
    );
    println!("{:<20} {:>8} {:>8}", "caller", "p50 ms", "p99 ms");
    for ((name, _), mut t) in callers.iter().zip(times) {
        t.sort_by(f64::total_cmp);
        println!(
            "{name:<20} {:>8.1} {:>8.1}",
            percentile(&t, 0.5),
            percentile(&t, 0.99)
        );
    }
}

async fn make(engine: &Engine, name: &str, grant: &str) -> String {
    let grant: Grant = grant.parse().expect("grant");
    engine
        .create_token(
            &docshelf_server::access::local(),
            NewToken {
                name: name.to_owned(),
                grants: vec![grant],
                expires_in_days: None,
            },
        )
        .await
        .expect("token")
        .token
}

/// A page's text with its tags left out (enough for a corpus to search;
/// not docshelf's HTML reader).
fn text_of(html: &str) -> String {
    let body = html.find("<body").map_or(html, |at| &html[at..]);
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
