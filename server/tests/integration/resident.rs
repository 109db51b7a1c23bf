//! The library versions held in memory: searches answer from them only
//! while every version they cover is held and current, and then give what
//! the disk gives; a write to one version leaves the others held; a budget
//! keeps the versions most recently searched.

use std::time::Duration;

use docshelf_server::store::filter::Scope;
use docshelf_server::store::{ChunkRow, DocumentChunks, DocumentRange, Retrieved, Store, Target};
use ingest_core::chunk::Chunk;

use crate::common;
use crate::synthetic::{document, Rng};

/// A budget that holds everything these tests store.
const ROOMY: usize = 256 << 20;

/// Two libraries of 8 pages × 12 chunks, under `guide/` and `api/`; the
/// vectors stored, and the documents.
async fn fill(store: &Store, rng: &mut Rng) -> (Vec<Vec<f32>>, Vec<DocumentChunks>) {
    let centres = rng.centres(12);
    let (mut all, mut documents) = (Vec::new(), Vec::new());
    for library in ["alpha", "beta"] {
        for d in 0..8 {
            let folder = if d % 2 == 0 { "guide" } else { "api" };
            let vectors: Vec<Vec<f32>> = (0..12)
                .map(|i| rng.near(&centres[(d + i) % centres.len()], 0.5))
                .collect();
            all.extend(vectors.iter().cloned());
            let page = document(
                library,
                format!("{folder}/page-{d}.md"),
                &format!("{library}-{d}-"),
                vectors,
            );
            store.replace_document(&page).await.expect("store");
            documents.push(page);
        }
    }
    store.refresh_indexes().await.expect("refresh");
    (all, documents)
}

/// An empty store at `location` that holds up to `budget` bytes of
/// library versions in memory.
async fn resident_store(location: &str, budget: usize) -> Store {
    Store::open(location)
        .await
        .expect("store")
        .with_resident_budget(budget)
}

/// A store at `location` holding up to `budget` bytes in memory, filled
/// by [`fill`]; with the vectors and documents it holds.
async fn filled(location: &str, budget: usize) -> (Store, Vec<Vec<f32>>, Vec<DocumentChunks>, Rng) {
    let store = resident_store(location, budget).await;
    let mut rng = Rng::default();
    let (vectors, documents) = fill(&store, &mut rng).await;
    (store, vectors, documents, rng)
}

/// A store searched on disk only that holds just the documents of the
/// library versions `scope` covers: LanceDB then counts the keyword
/// statistics of those versions alone, as memory does for a search of
/// `scope` (see `store::resident`, "Keyword statistics").
async fn disk_of(documents: &[DocumentChunks], scope: &Scope) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().display().to_string())
        .await
        .expect("store");
    let within: Vec<DocumentChunks> = documents
        .iter()
        .filter(|d| scope.covers(&d.library, &d.version))
        .cloned()
        .collect();
    if !within.is_empty() {
        store.append_documents(&within).await.expect("append");
        store.refresh_indexes().await.expect("refresh");
    }
    (dir, store)
}

fn ids(hits: &[Retrieved]) -> Vec<&str> {
    hits.iter().map(|h| h.chunk.chunk_id.as_str()).collect()
}

/// Searches `store` (from its copy) and `disk` (exactly) for the 10
/// nearest to `query` in `scope`, and checks that they agree
/// ([`same_nearest`]); returns memory's hits and how many were compared.
async fn dense_agrees(
    store: &Store,
    disk: &Store,
    query: &[f32],
    scope: &Scope,
) -> (Vec<Retrieved>, usize) {
    let sql = scope.to_sql();
    let exact = disk
        .dense_with(query, sql.as_deref(), 10, Default::default(), true)
        .await
        .expect("exact");
    let memory = store.dense(query, scope, 10).await.expect("memory");
    let compared = same_nearest(&memory, &exact, &format!("{scope:?}"));
    (memory, compared)
}

/// Whether a dense answer from memory (8-bit codes) agrees with the exact
/// one from disk: as many hits, the same best chunk at about its score, and
/// all but one of the rest (quantisation may swap a near-tie at the edge).
/// Returns how many hits were compared.
fn same_nearest(memory: &[Retrieved], exact: &[Retrieved], what: &str) -> usize {
    assert_eq!(memory.len(), exact.len(), "{what}");
    let Some(best) = exact.first() else {
        return 0;
    };
    assert_eq!(memory[0].chunk, best.chunk, "{what}");
    assert!((memory[0].score - best.score).abs() < 0.01, "{what}");
    let overlap = ids(memory)
        .iter()
        .filter(|id| ids(exact).contains(id))
        .count();
    assert!(overlap + 1 >= exact.len(), "{what}: {overlap}");
    exact.len()
}

/// Whether two keyword answers agree: the same scores rank by rank (to
/// f32 rounding: the two sum a query's terms in their own order), and the
/// same chunks but where equal scores may come in either order.
fn same_ranking(memory: &[Retrieved], disk: &[Retrieved], what: &str) {
    assert_eq!(ids(memory).len(), disk.len(), "{what}");
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * a.abs().max(1.0);
    for (m, d) in memory.iter().zip(disk) {
        assert!(
            close(m.score, d.score),
            "{what}: {} vs {}",
            m.score,
            d.score
        );
        if m.chunk.chunk_id != d.chunk.chunk_id {
            // A tie: the other side holds the chunk at the same score,
            // unless the tie runs past the answer's end.
            let last = disk.last().map_or(0.0, |h| h.score);
            let other = disk.iter().find(|h| h.chunk.chunk_id == m.chunk.chunk_id);
            assert!(
                other.is_some_and(|o| close(o.score, m.score)) || close(m.score, last),
                "{what}: {} at {} is not a tie",
                m.chunk.chunk_id,
                m.score
            );
        }
    }
}

/// This repository's own documentation, a paragraph a chunk under its
/// nearest heading: real prose, tables and code for the analyzer.
fn real_documents() -> Vec<DocumentChunks> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = [
        ("guides", "docs/search.md"),
        ("guides", "docs/operations.md"),
        ("guides", "docs/configuration.md"),
        ("guides", "docs/sources.md"),
        ("readme", "README.md"),
        ("readme", "docs/development.md"),
    ];
    let mut rng = Rng::default();
    let centre = rng.centres(1).remove(0);
    let mut out = Vec::new();
    for (version, (library, path)) in ["1", "2"]
        .iter()
        .zip([&files[..], &files[..3]])
        .flat_map(|(v, files)| files.iter().map(move |f| (*v, f)))
    {
        let text = std::fs::read_to_string(root.join(path)).expect("a documentation file");
        let mut heading = String::new();
        let mut chunks = Vec::new();
        for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(h) = paragraph.strip_prefix('#') {
                heading = h.trim_start_matches('#').trim().to_owned();
            }
            let index = chunks.len();
            chunks.push(ChunkRow {
                id: format!("{library}-{version}-{path}-{index}"),
                chunk: Chunk {
                    index,
                    start: 0,
                    end: paragraph.len(),
                    text: paragraph.to_owned(),
                    heading_path: Vec::new(),
                    page: None,
                },
                context: heading.clone(),
                vector: rng.near(&centre, 0.5),
            });
        }
        out.push(DocumentChunks {
            library: (*library).into(),
            version: version.into(),
            file_path: (*path).into(),
            title: None,
            created_at_micros: 0,
            chunks,
        });
    }
    out
}

/// The copy's keyword index ranks real documentation as LanceDB's
/// full-text index does: the same analyzer (stems, stop words, folding),
/// the same BM25, the same statistics, in every scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyword_answers_from_memory_rank_real_text_as_lancedb_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let store = resident_store(&location, ROOMY).await;
    let documents = real_documents();
    for (i, document) in documents.iter().enumerate() {
        store.replace_document(document).await.expect("store");
        if i % 3 == 2 {
            store.refresh_indexes().await.expect("refresh");
        }
    }
    store.refresh_indexes().await.expect("refresh");
    assert!(store.reload_resident().await.expect("copy"));

    // Queries: fixed ones (stems, stop words, case, punctuation, a word in
    // no chunk, a repeated word) and word runs taken from the text itself.
    let mut queries: Vec<String> = [
        "How do I search one library's versions?",
        "the vector index and its recall",
        "OCR languages for scanned PDFs",
        "Running TESTS with make",
        "crawling sitemaps, robots.txt and canonical URLs",
        "zzyzx-not-a-word",
        "the of and",
        "search Search searching the search index",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut rng = Rng::default();
    for document in &documents {
        for chunk in document.chunks.iter().step_by(7) {
            let words: Vec<&str> = chunk.chunk.text.split_whitespace().collect();
            if words.len() < 4 {
                continue;
            }
            let from = ((rng.next() + 0.5) * (words.len() - 3) as f32) as usize;
            let take = 1 + ((rng.next() + 0.5) * 3.0) as usize;
            queries.push(words[from..(from + take).min(words.len())].join(" "));
        }
    }
    let scopes = [
        Scope::default(),
        Scope {
            targets: vec![("guides".into(), Some("2".into()))],
            ..Scope::default()
        },
        Scope {
            targets: vec![("readme".into(), None)],
            version: None,
            file_prefix: Some("docs/".into()),
            only_listed: false,
        },
    ];
    let mut compared = 0;
    for scope in &scopes {
        let (_dir, disk) = disk_of(&documents, scope).await;
        for query in &queries {
            let memory = store.keyword(query, scope, 10).await.expect("memory");
            let on_disk = disk.keyword(query, scope, 10).await.expect("disk");
            same_ranking(&memory, &on_disk, &format!("{query:?} in {scope:?}"));
            compared += on_disk.len();
        }
    }
    assert!(
        queries.len() > 40 && compared > 600,
        "{} queries, {compared} hits",
        queries.len()
    );
    assert!(
        store.resident_ready().await.expect("version"),
        "the copy answered throughout"
    );
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
            only_listed: false,
        },
        Scope {
            targets: Vec::new(),
            version: Some("2".into()),
            file_prefix: None,
            only_listed: false,
        },
        // A token's libraries: one `IN` list on disk.
        Scope {
            targets: vec![("alpha".into(), None), ("beta".into(), None)],
            version: Some("1".into()),
            file_prefix: None,
            only_listed: true,
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_from_memory_are_the_disk_s_answers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let (store, vectors, documents, mut rng) = filled(&location, ROOMY).await;
    assert!(store.reload_resident().await.expect("copy"));
    assert!(store.resident_ready().await.expect("version"));
    // The same table, searched on disk only.
    let disk = Store::open(&location).await.expect("reopen");
    // Hits compared, so that scopes matching nothing cannot pass alone.
    let (mut dense_compared, mut keyword_compared) = (0, 0);

    for scope in scopes() {
        for v in vectors.iter().step_by(13) {
            let query = rng.near(v, 0.2);
            dense_compared += dense_agrees(&store, &disk, &query, &scope).await.1;
        }
        let (_dir, scoped_disk) = disk_of(&documents, &scope).await;
        for word in ["guide", "api", "chunk", "7"] {
            let memory = store.keyword(word, &scope, 20).await.expect("memory");
            let on_disk = scoped_disk.keyword(word, &scope, 20).await.expect("disk");
            same_ranking(&memory, &on_disk, &format!("{word} in {scope:?}"));
            keyword_compared += on_disk.len();
        }
    }
    assert!(
        dense_compared > 100 && keyword_compared > 100,
        "{dense_compared} {keyword_compared}"
    );
    assert!(
        store.resident_ready().await.expect("version"),
        "the copy answered throughout"
    );
    // Scoped to a file prefix, only those files answer.
    let api_only = &scopes()[2];
    let hits = store.dense(&vectors[0], api_only, 50).await.expect("dense");
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| h.chunk.library == "alpha" && h.chunk.file_path.starts_with("api/")));

    // The chunks a budget reads sections from: the same from memory as
    // from disk, each document within its range, a chunk that two ranges
    // hold once, and nothing for a library the store lacks.
    let range = |library, version, file_path, chunks| DocumentRange {
        library,
        version,
        file_path,
        chunks,
    };
    let wanted = [
        range("alpha", "1", "guide/page-2.md", 3..=7),
        range("alpha", "1", "guide/page-2.md", 5..=9),
        range("gamma", "1", "guide/page-2.md", 0..=100),
        range("beta", "1", "api/page-1.md", 0..=100),
        range("beta", "2", "api/page-1.md", 0..=100),
    ];
    let sorted = |mut chunks: Vec<docshelf_server::store::StoredChunk>| {
        chunks.sort_by(|a, b| a.chunk_id.cmp(&b.chunk_id));
        chunks.into_iter().map(|c| c.chunk_id).collect::<Vec<_>>()
    };
    let memory = sorted(store.documents_chunks(&wanted).await.expect("memory"));
    let on_disk = sorted(disk.documents_chunks(&wanted).await.expect("disk"));
    assert_eq!(memory.len(), 7 + 12, "{memory:?}");
    assert_eq!(memory, on_disk);
    assert!(memory.contains(&"alpha-2-3".to_owned()) && memory.contains(&"alpha-2-9".to_owned()));
    assert!(
        !memory.contains(&"alpha-2-2".to_owned()) && !memory.contains(&"alpha-2-10".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_searchable_at_once_and_the_copy_catches_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, vectors, _, mut rng) = filled(&dir.path().display().to_string(), ROOMY).await;
    assert!(store.reload_resident().await.expect("copy"));

    // A new page and a deleted one: their versions' segments no longer
    // match, so searches go to disk and see both changes at once.
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

    // That check queued the two versions to read again.
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(200),
        "the segments never caught up",
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
async fn a_version_over_the_budget_is_searched_on_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, vectors, _, _) = filled(&dir.path().display().to_string(), 1024).await;
    assert!(!store.reload_resident().await.expect("no copy"));
    assert!(!store.resident_ready().await.expect("version"));
    let hit = store
        .dense(&vectors[5], &Scope::default(), 1)
        .await
        .expect("dense");
    assert_eq!(hit[0].chunk.chunk_id, "alpha-0-5");
    let stats = store.resident_stats();
    assert_eq!((stats.segments, stats.held_bytes), (0, 0), "{stats:?}");
    assert!(stats.too_large >= 2, "{stats:?}");
}

/// A scope of at least `SPLIT_ROWS` rows is searched on a thread of its
/// own, and its dense scan split across the cores; the answers are still
/// the disk's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_large_enough_to_split_answers_as_the_disk_does() {
    const PER_DOCUMENT: usize = 200;
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let store = resident_store(&location, ROOMY).await;
    let mut rng = Rng::default();
    let centres = rng.centres(40);
    let documents = (docshelf_kernels::SPLIT_ROWS + 1_000).div_ceil(PER_DOCUMENT);
    let (mut vectors, mut stored) = (Vec::new(), Vec::new());
    let mut batch = Vec::new();
    for d in 0..documents {
        let these: Vec<Vec<f32>> = (0..PER_DOCUMENT)
            .map(|i| rng.near(&centres[(d * 7 + i) % centres.len()], 0.5))
            .collect();
        vectors.extend(these.iter().cloned());
        batch.push(document(
            "big",
            format!("page-{d}.md"),
            &format!("big-{d}-"),
            these,
        ));
        if batch.len() == 50 || d + 1 == documents {
            store.append_documents(&batch).await.expect("append");
            stored.append(&mut batch);
        }
    }
    let small = document("small", "one.md".into(), "small-", vec![vectors[0].clone()]);
    store.append_documents(&[small]).await.expect("append");
    store.refresh_indexes().await.expect("refresh");
    assert!(store.reload_resident().await.expect("copy"));
    let scope = Scope {
        targets: vec![("big".into(), None)],
        ..Scope::default()
    };
    let (_disk_dir, disk) = disk_of(&stored, &scope).await;
    for v in vectors.iter().step_by(7_919) {
        let query = rng.near(v, 0.2);
        let (memory, compared) = dense_agrees(&store, &disk, &query, &scope).await;
        assert_eq!(compared, 10);
        assert!(memory.iter().all(|h| h.chunk.library == "big"));
    }
    for word in ["chunk", "7", "page", "199"] {
        let memory = store.keyword(word, &scope, 20).await.expect("memory");
        let on_disk = disk.keyword(word, &scope, 20).await.expect("disk");
        assert_eq!(on_disk.len(), 20, "{word}");
        same_ranking(&memory, &on_disk, word);
    }
    assert!(
        store.resident_ready().await.expect("version"),
        "the copy answered throughout"
    );
}

fn library(name: &str) -> Scope {
    Scope {
        targets: vec![(name.into(), None)],
        ..Scope::default()
    }
}

/// A write to one library makes only that library's segment stale: the
/// other's searches still answer from memory, and give the disk's answer;
/// the written one answers from disk at once and is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_one_library_leaves_the_others_in_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let (store, vectors, _, mut rng) = filled(&location, ROOMY).await;
    assert!(store.reload_resident().await.expect("copy"));
    let loads = store.resident_stats().loads;

    let centre = rng.centres(1).remove(0);
    let fresh = rng.near(&centre, 0.1);
    let page = document("beta", "new.md".into(), "new-", vec![fresh.clone()]);
    store.replace_document(&page).await.expect("store");

    assert!(
        store
            .resident_covers(&library("alpha"))
            .await
            .expect("alpha"),
        "alpha's segment is still current"
    );
    let disk = Store::open(&location).await.expect("reopen");
    for v in vectors.iter().take(8 * 12).step_by(11) {
        let query = rng.near(v, 0.2);
        dense_agrees(&store, &disk, &query, &library("alpha")).await;
    }
    // beta's search sees the new page at once, from disk or memory.
    let hit = store
        .dense(&fresh, &library("beta"), 1)
        .await
        .expect("dense");
    assert_eq!(hit[0].chunk.file_path, "new.md");
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(100),
        "beta was never read again",
        || async { store.resident_covers(&library("beta")).await.expect("beta") },
    )
    .await;
    let hit = store
        .dense(&fresh, &library("beta"), 1)
        .await
        .expect("dense");
    assert_eq!(hit[0].chunk.file_path, "new.md");
    assert_eq!(
        store.resident_stats().loads,
        loads + 1,
        "only beta was read again"
    );
}

/// Under a budget that holds one library, the library searched last is
/// held and the other dropped; a deleted version's segment is dropped as
/// soon as a search sees the delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_keeps_the_library_searched_last_and_deletes_free_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let (roomy, vectors, _, _) = filled(&location, ROOMY).await;
    assert!(roomy.reload_resident().await.expect("copy"));
    let both = roomy.resident_stats();
    assert_eq!(both.segments, 2, "{both:?}");
    drop(roomy);

    // Room for one of the two (they are about the same size).
    let store = resident_store(&location, both.held_bytes as usize * 3 / 4).await;
    // A search of the library (which reads it in when it is not held),
    // then whether it is held now.
    let held = |name: &'static str| {
        let (store, vector) = (&store, &vectors[0]);
        move || async move {
            store.dense(vector, &library(name), 1).await.expect("dense");
            store.resident_covers(&library(name)).await.expect("covers")
        }
    };
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(100),
        "alpha was never held",
        held("alpha"),
    )
    .await;
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(100),
        "beta was never held",
        held("beta"),
    )
    .await;
    let stats = store.resident_stats();
    assert_eq!(stats.segments, 1, "{stats:?}");
    assert!(stats.evictions >= 1, "{stats:?}");
    assert!(stats.held_bytes <= stats.budget_bytes, "{stats:?}");
    // A search of everything needs both: it answers from disk, whole.
    let all = store
        .dense(&vectors[0], &Scope::default(), 200)
        .await
        .expect("dense");
    assert_eq!(all.len(), 2 * 8 * 12);

    store
        .delete(Target::Version("beta", "1"))
        .await
        .expect("delete");
    let hits = store
        .dense(&vectors[8 * 12], &Scope::default(), 200)
        .await
        .expect("dense");
    assert!(hits.iter().all(|h| h.chunk.library == "alpha"));
    assert_eq!(hits.len(), 8 * 12);
    let stats = store.resident_stats();
    assert!(
        stats.segments <= 1 && stats.chunks <= 8 * 12,
        "beta's segment is gone: {stats:?}"
    );
}

/// The versions searched by name are noted in the store; a server started
/// on it later reads those into memory first, and warming stops when the
/// budget is full rather than dropping them for the versions after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_reads_the_versions_searched_last_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = dir.path().display().to_string();
    let (first, vectors, _, _) = filled(&location, ROOMY).await;
    assert!(first.reload_resident().await.expect("copy"));
    let both = first.resident_stats().held_bytes as usize;
    // beta is the library searched by name; an every-library search
    // notes nothing.
    first
        .dense(&vectors[0], &library("beta"), 5)
        .await
        .expect("dense");
    first
        .dense(&vectors[0], &Scope::default(), 5)
        .await
        .expect("dense");
    assert_eq!(first.save_searched().await.expect("save"), 1);
    assert_eq!(first.save_searched().await.expect("nothing new"), 0);
    drop(first);

    for _ in 0..2 {
        // Room for one of the two: warming reads beta and stops.
        let store = resident_store(&location, both * 3 / 4).await;
        store.warm_resident().await.expect("warm");
        common::wait_for(
            Duration::from_secs(60),
            Duration::from_millis(100),
            "nothing was read at start-up",
            || async { store.resident_stats().segments == 1 },
        )
        .await;
        assert!(
            store.resident_covers(&library("beta")).await.expect("beta"),
            "{:?}",
            store.resident_stats()
        );
        let stats = store.resident_stats();
        assert_eq!((stats.segments, stats.evictions), (1, 0), "{stats:?}");
    }
}
