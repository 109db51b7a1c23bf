//! The vector index: built once the table is large enough, and close to
//! exact search. Synthetic vectors (clustered, like real embeddings) keep
//! this fast; `cargo bench --bench vector_index` measures it at scale.

use docshelf_server::store::filter::Scope;
use docshelf_server::store::Store;

use crate::synthetic::{document, Rng};

/// Stores `docs` documents of `per_doc` vectors around 40 centres; returns
/// the vectors.
async fn fill(
    store: &Store,
    rng: &mut Rng,
    prefix: &str,
    docs: usize,
    per_doc: usize,
) -> Vec<Vec<f32>> {
    let centres = rng.centres(40);
    let mut all = Vec::new();
    for d in 0..docs {
        let vectors: Vec<Vec<f32>> = (0..per_doc)
            .map(|i| rng.near(&centres[(d * per_doc + i) % centres.len()], 0.6))
            .collect();
        all.extend(vectors.iter().cloned());
        store
            .replace_document(&document(
                "synthetic",
                format!("{prefix}doc-{d}.md"),
                &format!("{prefix}{d}-"),
                vectors,
            ))
            .await
            .expect("store");
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_is_built_at_the_threshold_and_stays_close_to_exact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().display().to_string())
        .await
        .expect("store")
        .with_vector_index_min_rows(3000);
    let mut rng = Rng::default();
    let vectors = fill(&store, &mut rng, "a", 20, 100).await;
    store.refresh_indexes().await.expect("refresh");
    assert!(
        !store.has_vector_index().await.expect("indices"),
        "too small for an index"
    );

    let more = fill(&store, &mut rng, "b", 20, 100).await;
    store.refresh_indexes().await.expect("refresh");
    assert!(store.has_vector_index().await.expect("indices"));

    let (mut found, mut wanted) = (0, 0);
    for q in vectors.iter().chain(&more).step_by(97).take(30) {
        let query = rng.near(q, 0.1);
        let exact = store
            .dense_with(&query, None, 10, Default::default(), true)
            .await
            .expect("exact");
        let approx = store
            .dense(&query, &Scope::default(), 10)
            .await
            .expect("approx");
        assert_eq!(approx.len(), 10);
        let ids: Vec<&str> = approx.iter().map(|r| r.chunk.chunk_id.as_str()).collect();
        found += exact
            .iter()
            .filter(|r| ids.contains(&r.chunk.chunk_id.as_str()))
            .count();
        wanted += exact.len();
        // Scores are cosine similarities either way.
        assert!(approx[0].score <= 1.0 + 1e-4 && approx[0].score > 0.5);
    }
    let recall = found as f64 / wanted as f64;
    assert!(recall >= 0.95, "recall@10 {recall:.3}");

    // Rows added after the index are still found (searched exactly until
    // the next optimise folds them in).
    let late = fill(&store, &mut rng, "late", 1, 5).await;
    let hits = store
        .dense(&late[0], &Scope::default(), 1)
        .await
        .expect("search");
    assert_eq!(hits[0].chunk.file_path, "latedoc-0.md");
    assert!(hits[0].score > 0.999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outgrown_index_is_rebuilt_with_more_partitions_and_the_old_one_dropped() {
    use docshelf_server::store::vector_index::partitions_for;
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let store = Store::open(&location)
        .await
        .expect("store")
        .with_vector_index_min_rows(300);
    // A second server on the same store, which never writes: it must
    // follow the other's rebuild (it reads on every call here).
    let reader = Store::open_watching(&location, &Default::default(), std::time::Duration::ZERO)
        .await
        .expect("reader");
    assert_eq!(partitions(&reader).await, None);
    let mut rng = Rng::default();
    fill(&store, &mut rng, "a", 4, 100).await;
    store.refresh_indexes().await.expect("refresh");
    let first = partitions_for(400);
    assert_eq!(partitions(&store).await, Some(first));

    // Grown, but not 4× what its partitions suit: folded in, not rebuilt.
    fill(&store, &mut rng, "b", 4, 100).await;
    store.refresh_indexes().await.expect("refresh");
    assert_eq!(partitions(&store).await, Some(first));

    // 4× the rows of `first`² and more: rebuilt.
    let grown = fill(&store, &mut rng, "c", 8, 100).await;
    store.refresh_indexes().await.expect("refresh");
    let rebuilt = partitions_for(1600);
    assert!(rebuilt > first);
    assert_eq!(partitions(&store).await, Some(rebuilt));
    assert_eq!(partitions(&reader).await, Some(rebuilt));

    // One vector index remains, and a store opened anew reads its size.
    let db = lancedb::connect(&location)
        .execute()
        .await
        .expect("connect");
    let table = db.open_table("chunks_v2").execute().await.expect("table");
    let vector_indexes: Vec<String> = table
        .list_indices()
        .await
        .expect("indices")
        .into_iter()
        .filter(|i| i.columns == ["vector"])
        .map(|i| i.name)
        .collect();
    assert_eq!(vector_indexes, [format!("vector_ivf_pq_p{rebuilt}")]);
    let reopened = Store::open(&location).await.expect("reopen");
    assert_eq!(partitions(&reopened).await, Some(rebuilt));

    // And it still finds a stored vector first.
    let hits = reopened
        .dense(&grown[7], &Scope::default(), 1)
        .await
        .expect("search");
    assert!(hits[0].score > 0.999, "{:?}", hits[0].score);
}

async fn partitions(store: &Store) -> Option<u32> {
    store.vector_partitions().await.expect("partitions")
}
