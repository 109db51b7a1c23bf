//! Documents and searches: files to upload, upload jobs run on an engine,
//! and search parameters.

use docshelf_server::engine::Engine;
use index_core::job::{JobStatus, Upload};
use index_core::search::{SearchParams, SearchResponse};

/// A file to upload: `name` holding `bytes` (text or binary).
pub fn upload(name: &str, bytes: impl AsRef<[u8]>) -> Upload {
    Upload {
        name: name.to_owned(),
        bytes: bytes.as_ref().to_vec(),
    }
}

/// Runs an upload job on `engine`, where it is called, and returns its
/// status; `library` and `version` must be valid names.
pub async fn run(engine: &Engine, library: &str, version: &str, uploads: Vec<Upload>) -> JobStatus {
    engine
        .ingest(library, version, uploads)
        .await
        .expect("a valid library")
}

/// As [`run`], for uploads that must all be stored: asserts that no file
/// failed and that the job as a whole did not fail.
pub async fn ingest(
    engine: &Engine,
    library: &str,
    version: &str,
    uploads: Vec<Upload>,
) -> JobStatus {
    let status = run(engine, library, version, uploads).await;
    assert_eq!(status.tally().1, 0, "{status:#?}");
    assert_eq!(status.error, None, "{status:#?}");
    status
}

/// A search for `q` with every other parameter left to the engine.
pub fn query(q: &str) -> SearchParams {
    SearchParams {
        query: q.to_owned(),
        ..SearchParams::default()
    }
}

/// A keyword-only search for `q` (no model needed).
pub fn keyword(q: &str) -> SearchParams {
    SearchParams {
        mode: Some("keyword".into()),
        ..query(q)
    }
}

/// The file path of each result, in order.
pub fn paths(r: &SearchResponse) -> Vec<&str> {
    r.results.iter().map(|h| h.file_path.as_str()).collect()
}
