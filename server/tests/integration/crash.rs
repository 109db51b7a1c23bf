//! A crash in the middle of an upload never leaves a document half-written,
//! nor a version half-published.
//!
//! The real `docshelf ingest` replaces twenty stored documents with new
//! versions and is killed (SIGKILL) after a few of them are staged. The
//! store is then reopened: every document must be whole and still the old
//! version (a job publishes all of its documents at its end, or none), and
//! what the dead job staged is dropped when an engine opens the store.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use docshelf_server::store::Store;

use crate::s3_server::S3Server;

const FILES: usize = 20;

fn write_version(dir: &std::path::Path, marker: &str) {
    for i in 0..FILES {
        let para =
            format!("The {marker} release notes for component {i} describe behaviour in detail. ")
                .repeat(9);
        let text = format!("# Component {i}\n\n{para}\n\n{para}\n\n{para}\n");
        std::fs::write(dir.join(format!("doc{i:02}.md")), text).expect("write doc");
    }
}

/// `docshelf ingest` of `docs` into the store at `location`, reaching it
/// through `s3` when it is on the object store.
fn ingest(location: &str, docs: &std::path::Path, s3: Option<&S3Server>) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_docshelf"));
    command
        .args([
            "ingest",
            "--library",
            "crashlib",
            "--version",
            "1",
            "--device",
            "cpu",
            "--data",
            location,
        ])
        .arg("--model-dir")
        .arg(common::model_dir())
        .arg(docs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(server) = s3 {
        let config = server.config();
        command
            .arg("--s3-endpoint")
            .arg(&server.endpoint)
            .env(
                "DOCSHELF_S3_ACCESS_KEY_ID",
                config.access_key_id.unwrap_or_default(),
            )
            .env(
                "DOCSHELF_S3_SECRET_ACCESS_KEY",
                config.secret_access_key.unwrap_or_default(),
            );
    }
    command.spawn().expect("docshelf runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_an_upload_leaves_every_document_whole_old_or_new() {
    let store_dir = tempfile::tempdir().expect("temp dir");
    let docs = tempfile::tempdir().expect("temp dir");

    write_version(docs.path(), "OLD");
    let location = store_dir.path().display().to_string();
    let status = ingest(&location, docs.path(), None)
        .wait_with_output()
        .expect("first ingest");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );

    write_version(docs.path(), "NEW");
    ingest_and_kill_after_three(&location, docs.path(), None);

    let store = Store::open(&location).await.expect("reopens");
    let (old, new) = assert_whole_versions(&store, "OLD", "NEW").await;
    assert_eq!(
        (old, new),
        (FILES, 0),
        "nothing of the killed job was published"
    );
    assert_eq!(
        store.staging_jobs().await.expect("staged").len(),
        1,
        "the killed job left what it staged"
    );
    drop(store);

    // An engine opening the store finds the job's process gone and drops
    // what it staged; searches never saw any of it.
    let engine = Engine::open(&common::engine_config(store_dir.path()))
        .await
        .expect("engine opens");
    assert!(engine
        .store()
        .staging_jobs()
        .await
        .expect("staged")
        .is_empty());
    assert!(keyword_new(&engine)
        .await
        .iter()
        .all(|h| !h.text.contains("NEW")));
}

/// Starts `docshelf ingest` and kills it (SIGKILL) once it has staged
/// three documents, mid-job: it may well die holding the store's lock.
fn ingest_and_kill_after_three(location: &str, docs: &std::path::Path, s3: Option<&S3Server>) {
    let mut child = ingest(location, docs, s3);
    let stderr = child.stderr.take().expect("stderr");
    let mut stored = 0;
    for line in BufReader::new(stderr).lines() {
        if line.expect("line").starts_with("staged") {
            stored += 1;
            if stored == 3 {
                break;
            }
        }
    }
    assert_eq!(stored, 3, "the ingest ended before it could be killed");
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_mid_upload_leaves_the_other_process_serving_and_writing() {
    let store_dir = tempfile::tempdir().expect("temp dir");
    let config = EngineConfig {
        read_consistency_secs: 0.0,
        ..common::engine_config(store_dir.path())
    };
    writer_killed_mid_upload(&config, None).await;
}

/// The same on an object store: the killed replica most likely dies
/// holding the writers' lease, which the survivor takes over once it has
/// gone unrenewed for its time to live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_upload_leaves_the_others_serving_and_writing_on_s3() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.0,
        ..server.engine_config("crash")
    };
    writer_killed_mid_upload(&config, Some(&server)).await;
}

async fn writer_killed_mid_upload(config: &EngineConfig, s3: Option<&S3Server>) {
    let docs = tempfile::tempdir().expect("temp dir");
    // The other process: open before, and through, the kill. It stores the
    // old versions; the process that is killed replaces some of them.
    let survivor = Engine::open(config).await.expect("engine");
    write_version(docs.path(), "OLD");
    let files = || docshelf_server::cli::collect_uploads(&[docs.path().to_owned()]).expect("files");
    let status = survivor
        .ingest("crashlib", "1", files())
        .await
        .expect("valid library");
    assert_eq!(status.tally(), (FILES, 0), "{status:#?}");

    write_version(docs.path(), "NEW");
    ingest_and_kill_after_three(&config.data, docs.path(), s3);

    // It still answers, and every document is whole and old: the dead
    // process published nothing.
    assert!(keyword_new(&survivor)
        .await
        .iter()
        .all(|h| !h.text.contains("NEW")));
    let (old, new) = assert_whole_versions(survivor.store(), "OLD", "NEW").await;
    assert_eq!((old, new), (FILES, 0));

    // Its own upload of the new files goes through: the dead process's lock
    // or lease (if it died holding it) went with it.
    let status = tokio::time::timeout(
        std::time::Duration::from_secs(180),
        survivor.ingest("crashlib", "1", files()),
    )
    .await
    .expect("the upload did not wait forever for the dead writer's lock")
    .expect("valid library");
    assert_eq!(status.tally(), (FILES, 0), "{status:#?}");
    assert_eq!(status.error, None, "{status:#?}");
    let (old, new) = assert_whole_versions(survivor.store(), "OLD", "NEW").await;
    assert_eq!((old, new), (0, FILES));
}

/// A keyword search for the new version's words, every chunk it finds.
async fn keyword_new(engine: &Engine) -> Vec<index_core::search::SearchHit> {
    engine
        .search(
            &docshelf_server::access::local(),
            index_core::search::SearchParams {
                k: Some(50),
                duplicates: Some(true),
                ..common::keyword("NEW release notes")
            },
        )
        .await
        .expect("keyword search")
        .results
}

/// Every document is stored whole and holds one of the two versions only;
/// returns how many hold each.
async fn assert_whole_versions(store: &Store, a: &str, b: &str) -> (usize, usize) {
    let (mut with_a, mut with_b) = (0, 0);
    let docs = store.document_integrity().await.expect("integrity");
    assert_eq!(docs.len(), FILES, "every document is there");
    for (library, version, path, stored, expected) in &docs {
        assert_eq!(stored, expected, "{path} is partly stored");
        let chunks = store
            .document(library, version, path)
            .await
            .expect("chunks");
        let count = |marker: &str| chunks.iter().filter(|c| c.text.contains(marker)).count();
        match (count(a), count(b)) {
            (_, 0) => with_a += 1,
            (0, _) => with_b += 1,
            _ => panic!("{path} mixes versions"),
        }
    }
    (with_a, with_b)
}
