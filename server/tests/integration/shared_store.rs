//! Several processes on one store: what one writes, the others read within
//! the read-consistency interval (another server, or `docshelf ingest`
//! beside a running server). Two engines on one real LanceDB directory
//! stand for the two processes: each has its own connection and tables.

use std::time::Duration;

use crate::common::{self, ingest, keyword, run, upload};

use docshelf_server::access::local;
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
    assert!(reader
        .libraries(&local())
        .await
        .expect("libraries")
        .is_empty());
    let before = reader.status(&local()).await.store.table_version;

    ingest(
        &writer,
        "shared",
        "1",
        vec![upload(
            "replica.md",
            "# Replicas\n\nA quibbleflux keeps replicas in step.\n",
        )],
    )
    .await;
    let written = writer.status(&local()).await.store.table_version;
    assert_ne!(written, before);

    common::wait_for(
        Duration::from_secs(10),
        Duration::from_millis(100),
        "the reader did not see the writer's document in 10 s (interval 0.5 s)",
        || async {
            let found = reader
                .search(&local(), keyword("quibbleflux"))
                .await
                .expect("search");
            let libraries = reader.libraries(&local()).await.expect("libraries");
            found.results.iter().any(|h| h.file_path == "replica.md")
                && libraries.iter().any(|l| l.name == "shared")
        },
    )
    .await;
    // Once caught up, both serve the same table version.
    assert_eq!(reader.status(&local()).await.store.table_version, written);
}

/// A page of several chunks, every one carrying `marker`, so a document
/// mixing two writers' versions would show it.
fn long_page(marker: &str) -> String {
    let mut text = format!("# Shared page\n\nWritten by {marker}.\n");
    for i in 0..12 {
        text.push_str(&format!(
            "\n## Part {i}\n\n{}\n",
            format!("Paragraph {i} of the page written by {marker}. ").repeat(12)
        ));
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_writing_at_once_lose_nothing_and_replace_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    writers_at_once_lose_nothing_and_replace_whole(&common::engine_config(dir.path()), 6).await;
}

/// Two engines on the store `config` names (two processes, or two
/// replicas of an object store) upload `pages` different documents each at
/// once, then replace one document at once; a third then finds every
/// document whole, and the replaced one entirely one writer's version.
pub async fn writers_at_once_lose_nothing_and_replace_whole(config: &EngineConfig, pages: usize) {
    let a = Engine::open(config).await.expect("engine a");
    let b = Engine::open(config).await.expect("engine b");

    // Different documents at once, each committing its own.
    let from_a: Vec<Upload> = (0..pages)
        .map(|i| upload(&format!("a{i}.md"), format!("# A{i}\n\nAlpha page {i}.\n")))
        .collect();
    let from_b: Vec<Upload> = (0..pages)
        .map(|i| upload(&format!("b{i}.md"), format!("# B{i}\n\nBeta page {i}.\n")))
        .collect();
    let (sa, sb) = tokio::join!(
        a.ingest("shared", "1", from_a),
        b.ingest("shared", "1", from_b)
    );
    for status in [sa.expect("valid"), sb.expect("valid")] {
        assert_eq!(status.tally(), (pages, 0), "{status:#?}");
        assert_eq!(status.error, None, "{status:#?}");
    }

    // The same document replaced by both at once: one version wins whole.
    let (sa, sb) = tokio::join!(
        a.ingest(
            "shared",
            "1",
            vec![upload("same.md", long_page("writer-a"))]
        ),
        b.ingest(
            "shared",
            "1",
            vec![upload("same.md", long_page("writer-b"))]
        )
    );
    for status in [sa.expect("valid"), sb.expect("valid")] {
        assert_eq!(status.tally().1, 0, "{status:#?}");
    }

    // A third sees it all, every document whole.
    let c = Engine::open(config).await.expect("engine c");
    let documents = c
        .documents(&local(), "shared", Some("1"))
        .await
        .expect("documents");
    let mut names: Vec<&str> = documents.iter().map(|d| d.file_path.as_str()).collect();
    names.sort_unstable();
    let mut expected: Vec<String> = (0..pages)
        .flat_map(|i| [format!("a{i}.md"), format!("b{i}.md")])
        .collect();
    expected.push("same.md".into());
    expected.sort_unstable();
    assert_eq!(names, expected);
    for (library, version, path, stored, written) in
        c.store().document_integrity().await.expect("integrity")
    {
        assert_eq!(stored, written, "{library}/{version}/{path} is partial");
    }
    let chunks = c
        .store()
        .document("shared", "1", "same.md")
        .await
        .expect("same.md");
    assert!(chunks.len() > 1, "{chunks:#?}");
    let writers: std::collections::BTreeSet<&str> = chunks
        .iter()
        .map(|c| {
            if c.text.contains("writer-a") {
                "a"
            } else if c.text.contains("writer-b") {
                "b"
            } else {
                "neither"
            }
        })
        .collect();
    assert_eq!(writers.len(), 1, "a mix of versions: {writers:?}");
    assert!(!writers.contains("neither"));
    let indexes: Vec<usize> = chunks.iter().map(|c| c.chunk_index as usize).collect();
    assert_eq!(
        indexes,
        (0..chunks.len()).collect::<Vec<_>>(),
        "{indexes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_started_at_once_on_a_new_store_all_open_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    started_at_once_all_open(&common::engine_config(dir.path())).await;
}

/// Three engines opening a store that does not exist yet at the same
/// moment: each creates the tables or finds them created, none fails.
pub async fn started_at_once_all_open(config: &EngineConfig) {
    let (a, b, c) = tokio::join!(
        Engine::open(config),
        Engine::open(config),
        Engine::open(config)
    );
    for engine in [a, b, c] {
        let engine = engine.expect("every one opens the new store");
        assert!(engine
            .libraries(&local())
            .await
            .expect("libraries")
            .is_empty());
    }
}

/// Searches stay reads: a search that names a library without a session
/// id writes no session to the store (it did, a commit per search, until
/// the bench caught it); the session id it returns is written once the
/// client brings it back, so another process can follow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_sessions_a_client_brings_back_are_written_to_the_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let status = run(
        &engine,
        "alpha",
        "1",
        vec![upload("a.md", "# A\n\nA quibbleflux.\n")],
    )
    .await;
    assert_eq!(status.tally(), (1, 0), "{status:#?}");
    let versions = engine.store().table_versions().await.expect("versions");
    let search = |library: Option<&str>, session_id: Option<String>| SearchParams {
        library: library.map(str::to_owned),
        session_id,
        ..keyword("quibbleflux")
    };
    let first = engine
        .search(&local(), search(Some("alpha"), None))
        .await
        .expect("search");
    let id = first.session_id.expect("a session id comes back");
    assert_eq!(
        engine.store().table_versions().await.expect("versions"),
        versions,
        "a search without a session id wrote to the store"
    );
    assert!(engine
        .store()
        .stored_sticky(&local().id, &id)
        .await
        .expect("read")
        .is_none());

    let again = engine
        .search(&local(), search(None, Some(id.clone())))
        .await
        .expect("follow-up");
    assert!(again.sticky_applied, "{again:#?}");
    let stored = engine
        .store()
        .stored_sticky(&local().id, &id)
        .await
        .expect("read");
    assert_eq!(
        stored.flatten().map(|s| s.library).as_deref(),
        Some("alpha")
    );
}
