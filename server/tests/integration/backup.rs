//! Backups of a whole store taken while it is written, and restores into
//! an empty store: a backup taken during an upload holds the version that
//! upload writes whole or not at all; a local backup restores into the S3
//! test server and back with the same documents and answers; a damaged
//! backup, a used folder and a store that holds anything are refused with
//! nothing written.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use docshelf_server::access::local;
use docshelf_server::engine::{Engine, MODEL_NAME};
use docshelf_server::store::backup::BackupError;
use index_core::access::{Grant, NewToken, Role};
use index_core::job::FileState;
use index_core::search::SearchParams;

use crate::common::{self, run, upload};
use crate::s3_server::S3Server;

fn pages(count: usize, word: &str) -> Vec<index_core::job::Upload> {
    (0..count)
        .map(|i| {
            upload(
                &format!("page-{i:02}.md"),
                format!("# Page {i}\n\nThe {word} number {i} keeps the hinges quiet.\n\n## More\n\nPage {i} says more about the {word}.\n"),
            )
        })
        .collect()
}

async fn answers(engine: &Engine, query: &str) -> Vec<String> {
    engine
        .search(
            &local(),
            SearchParams {
                query: query.into(),
                library: Some("house".into()),
                ..SearchParams::default()
            },
        )
        .await
        .expect("search")
        .results
        .into_iter()
        .map(|h| format!("{}@{} {}", h.file_path, h.version, h.heading_path))
        .collect()
}

fn documents(engine_docs: &[index_core::catalog::DocumentInfo]) -> Vec<String> {
    engine_docs
        .iter()
        .map(|d| format!("{}@{} {} ({})", d.library, d.version, d.file_path, d.chunks))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_during_an_upload_restores_the_published_state_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Arc::new(common::engine(&dir.path().join("store")).await);
    assert_eq!(
        run(&engine, "house", "1", pages(3, "quibbleflux"))
            .await
            .tally(),
        (3, 0)
    );
    engine
        .create_token(
            &local(),
            NewToken {
                name: "agents".into(),
                grants: vec![Grant {
                    role: Role::Read,
                    libraries: "*".into(),
                }],
                expires_in_days: None,
            },
        )
        .await
        .expect("token");

    // An upload of version 2, backed up once its first page is staged.
    let accepted = engine
        .start_upload(&local(), "house", "2", pages(60, "zorblatt"))
        .await
        .expect("upload");
    common::wait_for(
        Duration::from_secs(120),
        Duration::from_millis(20),
        "no page of the upload was staged",
        || async {
            let status = engine.job(&local(), &accepted.job_id).await.expect("job");
            status.state.is_finished()
                || status
                    .files
                    .iter()
                    .any(|f| matches!(f.state, FileState::Staged { .. }))
        },
    )
    .await;
    let backup = dir.path().join("backup");
    let manifest = engine
        .store()
        .backup(&backup, MODEL_NAME)
        .await
        .expect("backup");
    assert!(manifest
        .tables
        .iter()
        .any(|t| t.table == "tokens" && t.rows == 1));
    let running_after = !engine
        .job(&local(), &accepted.job_id)
        .await
        .expect("job")
        .state
        .is_finished();

    let restored_dir = tempfile::tempdir().expect("temp dir");
    let restored = common::engine(restored_dir.path()).await;
    restored
        .store()
        .restore(&backup, MODEL_NAME)
        .await
        .expect("restore");
    let version_2 = restored
        .store()
        .documents()
        .await
        .expect("documents")
        .iter()
        .filter(|d| d.library == "house" && d.version == "2")
        .count();
    assert!(
        version_2 == 0 || version_2 == 60,
        "version 2 is whole or absent, never {version_2} pages of 60"
    );
    if running_after {
        // Still running when the backup ended: nothing of it was published.
        assert_eq!(version_2, 0);
    }
    eprintln!("the upload was running when the backup ended: {running_after}");
    let version_1 = restored
        .documents(&local(), "house", Some("1"))
        .await
        .expect("documents");
    assert_eq!(version_1.len(), 3);
    let tokens = restored.list_tokens(&local()).await.expect("tokens");
    assert_eq!(
        tokens.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["agents"]
    );
    assert!(
        answers(&restored, "quibbleflux number 2")
            .await
            .first()
            .is_some_and(|a| a.starts_with("page-02.md@1")),
        "{:?}",
        answers(&restored, "quibbleflux number 2").await
    );
    // The upload itself ends as it would have.
    common::wait_for(
        Duration::from_secs(300),
        Duration::from_millis(200),
        "the upload never ended",
        || async {
            let status = engine.job(&local(), &accepted.job_id).await.expect("job");
            status.state.is_finished()
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_backup_restores_into_s3_and_back_and_damage_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let local_store = common::engine(&dir.path().join("store")).await;
    assert_eq!(
        run(&local_store, "house", "1", pages(4, "quibbleflux"))
            .await
            .tally(),
        (4, 0)
    );
    let (original_docs, original_answers) = (
        documents(&local_store.store().documents().await.expect("documents")),
        answers(&local_store, "quibbleflux number 3").await,
    );
    let first = dir.path().join("first");
    local_store
        .store()
        .backup(&first, MODEL_NAME)
        .await
        .expect("backup");
    let again = local_store
        .store()
        .backup(&first, MODEL_NAME)
        .await
        .unwrap_err();
    assert!(matches!(again, BackupError::NotEmptyFolder(_)), "{again}");

    // Into the S3 test server.
    let server = S3Server::start();
    let on_s3 = Engine::open(&server.engine_config("restored"))
        .await
        .expect("engine on S3");
    // A damaged file is refused before anything is written.
    let damaged = dir.path().join("damaged");
    copy_folder(&first, &damaged);
    let chunks = damaged.join("chunks_v2.arrows");
    let mut bytes = std::fs::read(&chunks).expect("chunks");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(&chunks, bytes).expect("write");
    let err = on_s3
        .store()
        .restore(&damaged, MODEL_NAME)
        .await
        .unwrap_err();
    assert!(matches!(err, BackupError::Damaged { .. }), "{err}");
    assert!(on_s3
        .store()
        .documents()
        .await
        .expect("documents")
        .is_empty());
    let other = on_s3
        .store()
        .restore(&first, "bge-small-en")
        .await
        .unwrap_err();
    assert!(matches!(other, BackupError::OtherModel { .. }), "{other}");

    on_s3
        .store()
        .restore(&first, MODEL_NAME)
        .await
        .expect("restore into S3");
    assert_eq!(
        documents(&on_s3.store().documents().await.expect("documents")),
        original_docs
    );
    assert_eq!(
        answers(&on_s3, "quibbleflux number 3").await,
        original_answers
    );
    let twice = on_s3.store().restore(&first, MODEL_NAME).await.unwrap_err();
    assert!(matches!(twice, BackupError::NotEmptyStore(_)), "{twice}");

    // And back, from a backup of the S3 store.
    let second = dir.path().join("second");
    on_s3
        .store()
        .backup(&second, MODEL_NAME)
        .await
        .expect("backup of S3");
    let back_dir = tempfile::tempdir().expect("temp dir");
    let back = common::engine(back_dir.path()).await;
    back.store()
        .restore(&second, MODEL_NAME)
        .await
        .expect("restore");
    assert_eq!(
        documents(&back.store().documents().await.expect("documents")),
        original_docs
    );
    assert_eq!(
        answers(&back, "quibbleflux number 3").await,
        original_answers
    );
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("folder");
    for entry in std::fs::read_dir(from).expect("backup") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}
