//! The chunk table's in-memory copy: searches answer from it only while it
//! matches the table, and then give what the disk gives.

use std::time::Duration;

use docshelf_server::store::filter::Scope;
use docshelf_server::store::{Retrieved, Store, Target};

use crate::common;
use crate::synthetic::{document, Rng};

/// Two libraries of 8 pages × 12 chunks, under `guide/` and `api/`.
async fn fill(store: &Store, rng: &mut Rng) -> Vec<Vec<f32>> {
    let centres = rng.centres(12);
    let mut all = Vec::new();
    for library in ["alpha", "beta"] {
        for d in 0..8 {
            let folder = if d % 2 == 0 { "guide" } else { "api" };
            let vectors: Vec<Vec<f32>> = (0..12)
                .map(|i| rng.near(&centres[(d + i) % centres.len()], 0.5))
                .collect();
            all.extend(vectors.iter().cloned());
            store
                .replace_document(&document(
                    library,
                    format!("{folder}/page-{d}.md"),
                    &format!("{library}-{d}-"),
                    vectors,
                ))
                .await
                .expect("store");
        }
    }
    store.refresh_indexes().await.expect("refresh");
    all
}

/// A store at `location` that copies up to `rows` rows into memory,
/// filled by [`fill`]; with the vectors it holds.
async fn filled(location: &str, rows: usize) -> (Store, Vec<Vec<f32>>, Rng) {
    let store = Store::open(location)
        .await
        .expect("store")
        .with_resident_rows(rows);
    let mut rng = Rng::default();
    let vectors = fill(&store, &mut rng).await;
    (store, vectors, rng)
}

fn ids(hits: &[Retrieved]) -> Vec<&str> {
    hits.iter().map(|h| h.chunk.chunk_id.as_str()).collect()
}

fn scopes() -> Vec<Scope> {
    vec![
        Scope::default(),
        Scope {
            targets: vec![("beta".into(), None)],
            ..Scope::default()
        },
        Scope {
            targets: vec![("alpha".into(), Some("1".into())), ("nope".into(), None)],
            version: None,
            file_prefix: Some("api/".into()),
        },
        Scope {
            targets: Vec::new(),
            version: Some("2".into()),
            file_prefix: None,
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_from_memory_are_the_disk_s_answers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let (store, vectors, mut rng) = filled(&location, 10_000).await;
    assert!(store.reload_resident().await.expect("copy"));
    assert!(store.resident_ready().await.expect("version"));
    // The same table, searched on disk only.
    let disk = Store::open(&location).await.expect("reopen");
    // Hits compared, so that scopes matching nothing cannot pass alone.
    let (mut dense_compared, mut keyword_compared) = (0, 0);

    for scope in scopes() {
        let sql = scope.to_sql();
        for v in vectors.iter().step_by(13) {
            let query = rng.near(v, 0.2);
            let exact = disk
                .dense_with(&query, sql.as_deref(), 10, Default::default(), true)
                .await
                .expect("exact");
            let memory = store.dense(&query, &scope, 10).await.expect("memory");
            assert_eq!(memory.len(), exact.len(), "{scope:?}");
            if exact.is_empty() {
                continue;
            }
            dense_compared += exact.len();
            assert_eq!(memory[0].chunk, exact[0].chunk, "{scope:?}");
            assert!((memory[0].score - exact[0].score).abs() < 0.01);
            let overlap = ids(&memory)
                .iter()
                .filter(|id| ids(&exact).contains(id))
                .count();
            assert!(overlap >= exact.len() - 1, "{scope:?}: {overlap}");
        }
        for word in ["guide", "api", "chunk", "7"] {
            let memory = store.keyword(word, &scope, 20).await.expect("memory");
            let on_disk = disk.keyword(word, &scope, 20).await.expect("disk");
            assert_eq!(ids(&memory), ids(&on_disk), "{word} in {scope:?}");
            let scores = |h: &[Retrieved]| h.iter().map(|h| h.score).collect::<Vec<_>>();
            assert_eq!(scores(&memory), scores(&on_disk));
            keyword_compared += on_disk.len();
        }
    }
    assert!(
        dense_compared > 100 && keyword_compared > 100,
        "{dense_compared} {keyword_compared}"
    );
    assert_eq!(
        store.resident_misses(),
        0,
        "every keyword answer came from the copy"
    );
    // Scoped to a file prefix, only those files answer.
    let api_only = &scopes()[2];
    let hits = store.dense(&vectors[0], api_only, 50).await.expect("dense");
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| h.chunk.library == "alpha" && h.chunk.file_path.starts_with("api/")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_searchable_at_once_and_the_copy_catches_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, vectors, mut rng) = filled(&dir.path().display().to_string(), 10_000).await;
    assert!(store.reload_resident().await.expect("copy"));

    // A new page and a deleted one: the copy no longer matches, so
    // searches go to disk and see both changes at once.
    let centre = rng.centres(1).remove(0);
    let fresh = rng.near(&centre, 0.1);
    store
        .replace_document(&document(
            "alpha",
            "new.md".into(),
            "new-",
            vec![fresh.clone()],
        ))
        .await
        .expect("store");
    store
        .delete(Target::Document("beta", "1", "guide/page-0.md"))
        .await
        .expect("delete");
    let deleted = &vectors[8 * 12];
    assert!(!store.resident_ready().await.expect("version"));
    check(&store, &fresh, deleted).await;

    // That check started a reload; it runs once the table is quiet.
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(200),
        "the copy never caught up",
        || async { store.resident_ready().await.expect("version") },
    )
    .await;
    check(&store, &fresh, deleted).await;
}

/// The new page is found, the deleted one is not.
async fn check(store: &Store, fresh: &[f32], deleted: &[f32]) {
    let hit = store
        .dense(fresh, &Scope::default(), 1)
        .await
        .expect("dense");
    assert_eq!(hit[0].chunk.file_path, "new.md");
    let near = store
        .dense(deleted, &Scope::default(), 50)
        .await
        .expect("dense");
    assert!(near
        .iter()
        .all(|h| !h.chunk.chunk_id.starts_with("beta-0-")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_over_the_limit_is_searched_on_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, vectors, _) = filled(&dir.path().display().to_string(), 100).await;
    assert!(!store.reload_resident().await.expect("no copy"));
    assert!(!store.resident_ready().await.expect("version"));
    let hit = store
        .dense(&vectors[5], &Scope::default(), 1)
        .await
        .expect("dense");
    assert_eq!(hit[0].chunk.chunk_id, "alpha-0-5");
}
