//! A library version exported from one server and imported into another:
//! the same chunks, vectors and answers, nothing embedded again (the
//! importing engine never loads its model); a damaged file, another
//! model's vectors and a caller who is not an admin are refused with
//! nothing written; an import replaces its version whole.

use docshelf_server::access::local;
use docshelf_server::engine::{Engine, EngineError};
use docshelf_server::http::{Access, RouterConfig};
use index_core::search::SearchParams;
use index_core::ErrorCode;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use crate::common::{self, run, upload};

const ADMIN: &str = "admin-s3cret";

fn pages() -> Vec<index_core::job::Upload> {
    vec![
        upload(
            "hinges.md",
            "# Hinges\n\nOil the quibbleflux hinges every spring.\n\n## Winter\n\nIn winter, wax them instead.\n",
        ),
        upload(
            "doors.md",
            "# Doors\n\nA door that squeaks wants its hinges oiled.\n",
        ),
    ]
}

async fn hits(engine: &Engine, query: &str) -> Vec<(String, String, String)> {
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
        .map(|h| (h.file_path, h.heading_path, format!("{:.4}", h.score)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_moves_between_stores_whole_and_nothing_is_embedded_again() {
    let (from_dir, to_dir) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let from = common::engine(from_dir.path()).await;
    let status = run(&from, "house", "2.0", pages()).await;
    assert_eq!(status.tally(), (2, 0), "{status:#?}");
    let (header, bytes) = from
        .export_version(&local(), "house", "latest")
        .await
        .expect("export");
    assert_eq!(
        (header.library.as_str(), header.version.as_str()),
        ("house", "2.0")
    );
    assert_eq!(header.documents, 2);

    // The importing server holds another page in that version already:
    // the import makes the version what the export holds.
    let to = Engine::open(&common::engine_config(to_dir.path()))
        .await
        .expect("engine");
    let damaged = {
        let mut copy = bytes.clone();
        let last = copy.len() - 10;
        copy[last] ^= 0xff;
        copy
    };
    let err = to.import_version(&local(), &damaged).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidExport, "{err}");
    assert!(err.to_string().contains("SHA-256"), "{err}");
    let other_model = String::from_utf8_lossy(&bytes).replacen(
        "\"model\":\"all-MiniLM-L6-v2\"",
        "\"model\":\"bge-small-en\"",
        1,
    );
    let err = to
        .import_version(&local(), other_model.as_bytes())
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Transfer(_)), "{err}");
    assert_eq!(err.code(), ErrorCode::ModelMismatch, "{err}");
    assert!(err.to_string().contains("bge-small-en"), "{err}");
    let err = to
        .import_version(&local(), b"not an export")
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidExport, "{err}");
    assert!(
        to.libraries(&local()).await.expect("libraries").is_empty(),
        "nothing is written by a refused import"
    );

    let imported = to.import_version(&local(), &bytes).await.expect("import");
    assert_eq!((imported.documents, imported.chunks), (2, header.chunks));
    assert_eq!(imported.inserted, header.chunks);
    let status = to.status(&local()).await;
    assert!(
        !status.embedding.loaded,
        "the importing engine never needed its model"
    );
    // Searching needs the model for the query: loaded now, so that its
    // load on a busy machine does not count against a search's time.
    to.warm().await;
    from.warm().await;
    let (from_rows, to_rows) = (
        from.store()
            .version_rows("house", "2.0")
            .await
            .expect("rows"),
        to.store().version_rows("house", "2.0").await.expect("rows"),
    );
    let sorted = |rows: &[arrow_array::RecordBatch]| {
        let mut chunks = docshelf_server::store::schema::from_batches(rows).expect("chunks");
        let vectors = docshelf_server::store::schema::vectors_from_batches(rows).expect("vectors");
        let mut both: Vec<(String, String, Vec<f32>)> = chunks
            .drain(..)
            .zip(vectors)
            .map(|(c, v)| (c.chunk_id, c.text, v))
            .collect();
        both.sort_by(|a, b| a.0.cmp(&b.0));
        both
    };
    assert_eq!(
        sorted(&from_rows),
        sorted(&to_rows),
        "the same chunks and vectors"
    );
    assert_eq!(
        hits(&from, "how often are the hinges oiled").await,
        hits(&to, "how often are the hinges oiled").await
    );

    // Imported again after the version changed here: the page only this
    // store had goes, the rest is left as it was.
    let extra = run(
        &to,
        "house",
        "2.0",
        vec![upload("roof.md", "# Roof\n\nTiles.\n")],
    )
    .await;
    assert_eq!(extra.tally(), (1, 0));
    let again = to.import_version(&local(), &bytes).await.expect("import");
    assert_eq!((again.inserted, again.deleted), (0, 1), "{again:?}");
    let documents = to
        .documents(&local(), "house", Some("2.0"))
        .await
        .expect("documents");
    let paths: Vec<&str> = documents.iter().map(|d| d.file_path.as_str()).collect();
    assert_eq!(paths, ["doors.md", "hinges.md"]);
}

/// Over REST: only an admin exports or imports; the file an admin
/// downloads imports on another server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_rest_only_an_admin_exports_and_imports() {
    let (from_dir, to_dir) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let router = |dir: &std::path::Path| RouterConfig {
        access: Access {
            token: Some(ADMIN.into()),
            ..Access::default()
        },
        ..common::router_config(dir, 8 << 20)
    };
    let from = common::engine(from_dir.path()).await;
    assert_eq!(run(&from, "house", "1", pages()).await.tally(), (2, 0));
    let from = common::serve_engine(from, &router(from_dir.path())).await;
    let to = common::serve(&common::engine_config(to_dir.path()), router(to_dir.path())).await;
    let client = Client::new();

    let (status, made): (StatusCode, Value) = {
        let res = client
            .post(format!("{from}/api/tokens"))
            .bearer_auth(ADMIN)
            .json(&json!({"name": "writer", "grants": [{"role": "write", "libraries": "*"}]}))
            .send()
            .await
            .expect("token");
        (res.status(), res.json().await.expect("json"))
    };
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let writer = made["token"].as_str().expect("secret").to_owned();
    let export = format!("{from}/api/libraries/house/versions/1/export");
    let refused = client
        .get(&export)
        .bearer_auth(&writer)
        .send()
        .await
        .expect("export");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    let file = client
        .get(&export)
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("export");
    assert_eq!(file.status(), StatusCode::OK);
    assert_eq!(file.headers()["content-type"], "application/octet-stream");
    assert!(file.headers()["content-disposition"]
        .to_str()
        .expect("header")
        .contains("house-1.docshelf"));
    let bytes = file.bytes().await.expect("body");

    let import = |token: &'static str| {
        client
            .post(format!("{to}/api/import"))
            .bearer_auth(token)
            .header("content-type", "application/octet-stream")
            .body(bytes.clone())
            .send()
    };
    let no_token = client
        .post(format!("{to}/api/import"))
        .body(bytes.clone())
        .send()
        .await
        .expect("import");
    assert_eq!(no_token.status(), StatusCode::UNAUTHORIZED);
    let done = import(ADMIN).await.expect("import");
    assert_eq!(done.status(), StatusCode::OK);
    let imported: Value = done.json().await.expect("json");
    assert_eq!(imported["library"], "house");
    assert_eq!(imported["documents"], 2);
    let (status, found) = common::post_json(
        &to,
        "/api/search",
        json!({"query": "quibbleflux hinges", "library": "house"}),
    )
    .await;
    assert!(status.is_success(), "{found}");
    assert_eq!(found["results"][0]["file_path"], "hinges.md", "{found}");
}
