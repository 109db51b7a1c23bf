//! The catalog read fragment by fragment: after every kind of commit (a
//! publish, a document replaced, a compaction, a version and a library
//! deleted) it lists what a store opened afresh, which reads every row,
//! lists; and a commit reads only what it wrote.

use docshelf_server::store::{DocumentChunks, Store, Target};

use crate::synthetic::{document, Rng};

/// Pages of `library` at `version`, 12 chunks each.
fn pages(rng: &mut Rng, library: &str, version: &str, count: usize) -> Vec<DocumentChunks> {
    let centres = rng.centres(4);
    (0..count)
        .map(|d| {
            let vectors = (0..12)
                .map(|i| rng.near(&centres[(d + i) % 4], 0.5))
                .collect();
            let mut page = document(
                library,
                format!("guide/page-{d}.md"),
                &format!("{library}-{version}-{d}-"),
                vectors,
            );
            page.version = version.into();
            page
        })
        .collect()
}

/// Checks `store`'s listing against a store opened afresh on `location`,
/// and returns how `store` read it: (fragments reused, recounted, read).
async fn lists_as_a_fresh_store(
    store: &Store,
    location: &str,
    step: &str,
) -> (usize, usize, usize) {
    let documents = store.documents().await.expect("documents");
    let published = store.published().await.expect("published");
    let counts = store.catalog_counts();
    let fresh = Store::open(location).await.expect("reopen");
    assert_eq!(
        *documents,
        *fresh.documents().await.expect("documents"),
        "{step}: the documents differ from a whole read"
    );
    assert_eq!(
        published.versions,
        fresh.published().await.expect("published").versions,
        "{step}: the published versions (or their stamps) differ from a whole read"
    );
    (counts.reused, counts.recounted, counts.read)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_reads_only_what_it_wrote_and_lists_what_a_whole_read_lists() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let store = Store::open(&location).await.expect("store");
    let mut rng = Rng::default();
    for library in ["alpha", "beta", "gamma"] {
        store
            .append_documents(&pages(&mut rng, library, "1", 6))
            .await
            .expect("append");
    }
    let (_, _, read) = lists_as_a_fresh_store(&store, &location, "three libraries").await;
    assert_eq!(read, 3, "the first listing reads every fragment");

    store
        .append_documents(&pages(&mut rng, "alpha", "2", 4))
        .await
        .expect("append");
    let (reused, recounted, read) = lists_as_a_fresh_store(&store, &location, "a publish").await;
    assert_eq!(
        (reused, recounted, read),
        (3, 0, 1),
        "a publish reads its own fragment"
    );

    // The same page with other chunks: its old rows deleted, the new ones
    // written, in one commit.
    let mut replaced = pages(&mut rng, "beta", "1", 2).remove(1);
    for (i, row) in replaced.chunks.iter_mut().enumerate() {
        row.id = format!("beta-1-new-{i}");
    }
    store.replace_document(&replaced).await.expect("replace");
    let (reused, _, _) = lists_as_a_fresh_store(&store, &location, "a document replaced").await;
    assert!(
        reused >= 3,
        "the fragments the replace did not touch are reused ({reused})"
    );

    store.refresh_indexes().await.expect("compaction");
    lists_as_a_fresh_store(&store, &location, "a compaction").await;

    store
        .delete(Target::Version("alpha", "1"))
        .await
        .expect("delete a version");
    let (_, recounted, read) = lists_as_a_fresh_store(&store, &location, "a version deleted").await;
    assert!(recounted >= 1 && read == 0, "a delete reads no row");

    store
        .delete(Target::Library("gamma"))
        .await
        .expect("delete a library");
    let (_, _, read) = lists_as_a_fresh_store(&store, &location, "a library deleted").await;
    assert_eq!(read, 0, "a delete reads no row");
    let libraries: Vec<String> = store
        .libraries()
        .await
        .expect("libraries")
        .iter()
        .map(|l| l.name.clone())
        .collect();
    assert_eq!(libraries, ["alpha", "beta"]);
}
