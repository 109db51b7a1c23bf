//! Several processes on one store: what one writes, the others read within
//! the read-consistency interval (another server, or `docshelf ingest`
//! beside a running server). Two engines on one real LanceDB directory
//! stand for the two processes: each has its own connection and tables.

use std::time::{Duration, Instant};

use crate::common;

use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use index_core::job::Upload;
use index_core::search::SearchParams;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_stored_by_one_process_is_searchable_in_another() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = EngineConfig {
        read_consistency_secs: 0.5,
        ..common::engine_config(dir.path())
    };
    let reader = Engine::open(&config).await.expect("reader");
    let writer = Engine::open(&config).await.expect("writer");
    assert!(reader.libraries().await.expect("libraries").is_empty());
    let before = reader.status().await.store.table_version;

    let status = writer
        .ingest(
            "shared",
            "1",
            vec![Upload {
                name: "replica.md".into(),
                bytes: b"# Replicas\n\nA quibbleflux keeps replicas in step.\n".to_vec(),
            }],
        )
        .await;
    let status = status.expect("a valid library");
    assert_eq!(status.tally().1, 0, "{status:#?}");
    let written = writer.status().await.store.table_version;
    assert_ne!(written, before);

    let search = || {
        reader.search(SearchParams {
            query: "quibbleflux".into(),
            mode: Some("keyword".into()),
            ..SearchParams::default()
        })
    };
    let started = Instant::now();
    loop {
        let found = search().await.expect("search");
        let libraries = reader.libraries().await.expect("libraries");
        if found.results.iter().any(|h| h.file_path == "replica.md")
            && libraries.iter().any(|l| l.name == "shared")
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the reader did not see the writer's document in 10 s (interval 0.5 s)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Once caught up, both serve the same table version.
    assert_eq!(reader.status().await.store.table_version, written);
}
