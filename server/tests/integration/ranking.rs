//! Ranking on the real model and the real store: titles and headings reach
//! search, results are pages, the second stage is deterministic, and a
//! store written by the previous schema is upgraded without losing a
//! document.

use crate::common::{self, ingest, paths, upload};

use arrow_array::RecordBatch;
use futures::TryStreamExt;
use lancedb::query::ExecutableQuery;
use std::collections::BTreeSet;

use docshelf_server::access::local;
use docshelf_server::engine::Engine;
use index_core::feedback::{FeedbackRequest, Vote};
use index_core::job::Upload;
use index_core::search::{SearchParams, SearchResponse};

/// A fresh store with `uploads` in library `site`, version 1.
async fn site(dir: &std::path::Path, uploads: Vec<Upload>) -> Engine {
    let engine = common::engine(dir).await;
    ingest(&engine, "site", "1", uploads).await;
    engine
}

async fn search(engine: &Engine, params: SearchParams) -> SearchResponse {
    engine.search(&local(), params).await.expect("search")
}

/// A search for `q` in library `site`.
fn query(q: &str) -> SearchParams {
    SearchParams {
        library: Some("site".into()),
        ..common::query(q)
    }
}

/// The keyword leg finds [`pages`]' `isr.mdx` by the title only its front
/// matter holds: what a rewritten store must still do.
async fn assert_keyword_finds_the_front_matter_title(engine: &Engine) {
    let r = search(
        engine,
        SearchParams {
            mode: Some("keyword".into()),
            ..query("incremental static regeneration")
        },
    )
    .await;
    assert_eq!(paths(&r).first(), Some(&"isr.mdx"), "{:?}", paths(&r));
}

/// Pages about web-app topics, none of whose bodies name its title.
fn pages() -> Vec<Upload> {
    vec![
        upload(
            "isr.mdx",
            "---\ntitle: Incremental Static Regeneration\ndescription: Refresh pre-built pages after deploying.\n---\n\nimport { Callout } from 'components'\n\n<Callout>\nPages built ahead of time can be rebuilt in the background once they are older than a chosen number of seconds, while visitors keep receiving the cached copy.\n</Callout>\n",
        ),
        upload(
            "middleware.md",
            "---\ntitle: Middleware\n---\n\nCode here runs before a request completes, so it can rewrite, redirect or add headers based on the incoming request.\n",
        ),
        upload(
            "images.md",
            "---\ntitle: Image Optimization\n---\n\nPictures are resized and served in modern formats, with lazy loading by default.\n",
        ),
        upload(
            "fonts.md",
            "---\ntitle: Font Optimization\n---\n\nTypefaces are downloaded at build time and self-hosted with the other static assets.\n",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_titled_only_in_front_matter_is_found_by_its_title() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = site(dir.path(), pages()).await;

    for mode in ["keyword", "dense", "hybrid"] {
        let r = search(
            &engine,
            SearchParams {
                mode: Some(mode.into()),
                ..query("incremental static regeneration")
            },
        )
        .await;
        assert_eq!(
            paths(&r).first(),
            Some(&"isr.mdx"),
            "{mode}: {:?}",
            paths(&r)
        );
        let top = &r.results[0];
        assert_eq!(
            top.title.as_deref(),
            Some("Incremental Static Regeneration")
        );
        // The stored text is the page's text: no title, no MDX syntax.
        assert!(!top.text.contains("Regeneration") && !top.text.contains("<Callout"));
        assert!(!top.text.contains("import "), "{}", top.text);
    }
}

/// A long page with sections, each several chunks long; the words of a
/// section's heading appear only in the heading.
fn handbook() -> String {
    let topics = [
        ("Garbage collection tuning", "heap"),
        ("Thread pools", "worker"),
        ("Connection limits", "socket"),
    ];
    let mut text = String::from("# Operations handbook\n\n");
    for (heading, word) in topics {
        text.push_str(&format!("## {heading}\n\n"));
        for i in 1..=12 {
            text.push_str(&format!(
                "Paragraph {i}: adjust the {word} setting carefully, measure the effect of each change on latency over a full day, and write down the value you chose so the next person knows why it is set that way.\n\n"
            ));
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_deep_in_a_section_is_found_by_the_section_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = site(dir.path(), vec![upload("handbook.md", handbook())]).await;

    for mode in ["keyword", "hybrid"] {
        let r = search(
            &engine,
            SearchParams {
                mode: Some(mode.into()),
                duplicates: Some(true),
                ..query("garbage collection tuning")
            },
        )
        .await;
        // Related: in the section, or holding its heading line.
        let related = |h: &index_core::search::SearchHit| {
            h.heading_path.ends_with("Garbage collection tuning")
                || h.text.contains("Garbage collection tuning")
        };
        let first_unrelated = r
            .results
            .iter()
            .position(|h| !related(h))
            .unwrap_or(r.results.len());
        assert!(
            r.results[first_unrelated..].iter().all(|h| !related(h)),
            "{mode}: the section's chunks lead: {:?}",
            r.results
                .iter()
                .map(|h| &h.heading_path)
                .collect::<Vec<_>>()
        );
        // A chunk deep in the section, whose own text never names it, is
        // found by the section's name.
        let deep = r.results[..first_unrelated].iter().find(|h| {
            h.heading_path.ends_with("Garbage collection tuning")
                && !h.text.to_lowercase().contains("garbage")
        });
        assert!(
            deep.is_some_and(|h| h.chunk_index > 0),
            "{mode}: no deep chunk found"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_results_are_ten_pages_unless_duplicates_is_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut uploads = vec![upload("handbook.md", handbook())];
    for i in 0..12 {
        uploads.push(upload(
            &format!("notes/day-{i}.md"),
            format!(
                "# Day {i}\n\nOn day {i} we adjusted a setting and measured latency for a day.\n"
            ),
        ));
    }
    let engine = site(dir.path(), uploads).await;

    let pages = search(&engine, query("adjust the setting and measure latency")).await;
    let distinct: BTreeSet<&str> = paths(&pages).into_iter().collect();
    assert_eq!(pages.results.len(), 10);
    assert_eq!(distinct.len(), 10, "{:?}", paths(&pages));
    let handbook = pages
        .results
        .iter()
        .find(|h| h.file_path == "handbook.md")
        .expect("the handbook is one of the pages");
    assert!(
        !handbook.sections.is_empty(),
        "its other matches are listed"
    );
    assert!(handbook
        .sections
        .iter()
        .all(|s| s.chunk_id != handbook.chunk_id && s.score <= handbook.score));

    let chunks = search(
        &engine,
        SearchParams {
            duplicates: Some(true),
            ..query("adjust the setting and measure latency")
        },
    )
    .await;
    let distinct: BTreeSet<&str> = paths(&chunks).into_iter().collect();
    assert_eq!(chunks.results.len(), 10);
    assert!(
        distinct.len() < 10,
        "raw chunks repeat pages: {:?}",
        paths(&chunks)
    );
    assert!(chunks.results.iter().all(|h| h.sections.is_empty()));
}

/// An option's text that three command pages print word for word.
const INSTALL_STRATEGY: &str = "The install strategy option sets how packages are placed in \
    the dependency folder. hoisted, the default, installs packages without duplicates at the top \
    level of the folder, and duplicates only where versions conflict. nested installs every \
    dependency inside the folder of the package that needs it. shallow installs only the direct \
    dependencies at the top level.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_repeated_on_several_pages_counts_once_for_the_best_ranked() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Each page says what it does, then prints the option: its chunk is
    // the same text on every page (the same closing sentence before it
    // comes along as overlap).
    let command = |name: &str, what: &str| {
        upload(
            &format!("commands/{name}.md"),
            format!(
                "# {name}\n\n{}\n\nThe options below apply to this command.\n\n\
                 ## Configuration\n\n{INSTALL_STRATEGY}\n",
                what.repeat(6)
            ),
        )
    };
    let uploads = vec![
        command(
            "install",
            "Installs a package and everything it depends on. ",
        ),
        command(
            "ci",
            "Installs a project from its lockfile in automated environments. ",
        ),
        command(
            "update",
            "Updates the packages of a project to their newest allowed versions. ",
        ),
        upload(
            "folders.md",
            "# Folders\n\n## How dependencies are laid out\n\nWhen two packages depend on the \
             same package at compatible versions, the installer keeps a single copy at the top \
             level of the dependency folder, so the tree stays flat. A package that needs another \
             version gets its own copy nested below it.\n",
        ),
    ];
    let engine = site(dir.path(), uploads).await;
    // Words of the option's own text: each copy outranks the explaining
    // page on its own, as a copy.
    let r = search(
        &engine,
        query("packages without duplicates at the top level"),
    )
    .await;
    let order = paths(&r);
    let at = |path: &str| order.iter().position(|p| *p == path);
    let copies: Vec<usize> = [
        "commands/install.md",
        "commands/ci.md",
        "commands/update.md",
    ]
    .iter()
    .map(|p| at(p).expect("every copy is still listed"))
    .collect();
    let explained = at("folders.md").expect("the explaining page is found");
    // One copy may lead; the others rank by what else they say, after the
    // page that explains the question.
    let later_copies = copies.iter().filter(|&&c| c > explained).count();
    assert!(later_copies >= 2, "{order:?}");
    // And they say why: a page listed for its copy of the text says it was
    // lowered (a lowered page may also lead with a chunk of its own); the
    // best-ranked copy and the explaining page were not.
    let lowered: Vec<&str> = r
        .results
        .iter()
        .filter(|hit| hit.parts.repeated.is_some())
        .map(|hit| hit.file_path.as_str())
        .collect();
    assert!(!lowered.is_empty(), "{order:?}");
    let first_copy = order[*copies.iter().min().expect("three copies")];
    for page in &lowered {
        let rank = at(page).expect("listed");
        assert!(copies.contains(&rank), "{page} of {order:?}");
    }
    assert!(!lowered.contains(&first_copy), "{lowered:?} of {order:?}");
    assert!(!lowered.contains(&"folders.md"), "{lowered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_stage_is_deterministic_and_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut uploads = pages();
    uploads.push(upload("handbook.md", handbook()));
    let engine = site(dir.path(), uploads).await;

    let order = |r: &SearchResponse| -> Vec<(String, u32, u32)> {
        r.results
            .iter()
            .map(|h| (h.chunk_id.clone(), h.score.to_bits(), h.chunk_index))
            .collect()
    };
    let first = search(&engine, query("optimize images and fonts")).await;
    for _ in 0..3 {
        let again = search(&engine, query("optimize images and fonts")).await;
        assert_eq!(order(&first), order(&again));
    }
    assert!(first.results.iter().all(|h| h.parts.rerank.is_some()));
    assert!(first
        .results
        .iter()
        .all(|h| h.score > 0.0 && h.score <= 1.0));

    let plain = search(
        &engine,
        SearchParams {
            rerank: Some(false),
            ..query("optimize images and fonts")
        },
    )
    .await;
    assert!(plain.results.iter().all(|h| h.parts.rerank.is_none()));
}

/// The store's chunk table without `dropped` columns, as batches to
/// write back as an older docshelf would have.
async fn chunks_without(db: &lancedb::Connection, dropped: &[&str]) -> Vec<RecordBatch> {
    let batches: Vec<RecordBatch> = db
        .open_table("chunks_v2")
        .execute()
        .await
        .expect("v2 table")
        .query()
        .execute()
        .await
        .expect("scan")
        .try_collect()
        .await
        .expect("rows");
    batches
        .iter()
        .map(|b| {
            let keep: Vec<usize> = (0..b.num_columns())
                .filter(|&i| !dropped.contains(&b.schema().field(i).name().as_str()))
                .collect();
            b.project(&keep).expect("project")
        })
        .collect()
}

async fn connect(dir: &std::path::Path) -> lancedb::Connection {
    lancedb::connect(&dir.display().to_string())
        .execute()
        .await
        .expect("connect")
}

/// Rewrites a v2 store as the previous schema wrote it: a `chunks` table
/// without the context column.
async fn downgrade_to_v1(dir: &std::path::Path) {
    let db = connect(dir).await;
    let v1 = chunks_without(&db, &["context", "search_text", "input_hash"]).await;
    db.create_table("chunks", v1)
        .execute()
        .await
        .expect("create v1 table");
    db.drop_table("chunks_v2", &[]).await.expect("drop v2");
}

/// Rewrites a store as docshelf wrote it before the keyword leg's one
/// field: no `search_text` column (nor the embedding-input hash, which came
/// later), and full-text indexes on `text` and `context`.
async fn without_search_text(dir: &std::path::Path) {
    use lancedb::index::scalar::FtsIndexBuilder;
    use lancedb::index::Index;
    let db = connect(dir).await;
    let older = chunks_without(&db, &["search_text", "input_hash"]).await;
    db.drop_table("chunks_v2", &[]).await.expect("drop");
    let table = db
        .create_table("chunks_v2", older)
        .execute()
        .await
        .expect("create the older table");
    for column in ["text", "context"] {
        table
            .create_index(&[column], Index::FTS(FtsIndexBuilder::default()))
            .execute()
            .await
            .expect("index");
    }
    // The staging table as it was then: empty between jobs, no input hash.
    let staged = db
        .open_table("staged_v2")
        .execute()
        .await
        .expect("staging table");
    let schema = staged.schema().await.expect("schema");
    let older: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .filter(|f| f.name() != "input_hash")
        .map(|f| f.as_ref().clone())
        .collect();
    db.drop_table("staged_v2", &[]).await.expect("drop");
    db.create_empty_table(
        "staged_v2",
        std::sync::Arc::new(arrow_schema::Schema::new(older)),
    )
    .execute()
    .await
    .expect("create the older staging table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_without_the_search_field_gets_it_on_open_and_keeps_every_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let before = {
        let engine = site(dir.path(), pages()).await;
        let mut before = Vec::new();
        for d in engine
            .documents(&local(), "site", Some("1"))
            .await
            .expect("docs")
        {
            let doc = engine
                .document(&local(), "site", "1", &d.file_path)
                .await
                .expect("doc");
            before.push((d.file_path, d.chunks, doc.text));
        }
        before
    };
    without_search_text(dir.path()).await;

    let engine = Engine::open(&common::engine_config(dir.path()))
        .await
        .expect("the engine adds the field on open");
    let docs = engine
        .documents(&local(), "site", Some("1"))
        .await
        .expect("docs");
    for (path, chunks, text) in &before {
        let now = docs
            .iter()
            .find(|d| &d.file_path == path)
            .unwrap_or_else(|| panic!("{path} is missing after the upgrade"));
        assert_eq!(&now.chunks, chunks, "{path}");
        let doc = engine
            .document(&local(), "site", "1", path)
            .await
            .expect("doc");
        assert_eq!(&doc.text, text, "{path}");
    }
    // The field is indexed at once (the engine refreshes on open), the old
    // indexes are gone, and a title, which lives only in the context, is
    // found by the keyword leg.
    assert_eq!(
        engine.store().unindexed_text_rows().await.expect("stats"),
        0
    );
    let db = connect(dir.path()).await;
    let table = db.open_table("chunks_v2").execute().await.expect("table");
    let indexed: Vec<Vec<String>> = table
        .list_indices()
        .await
        .expect("indices")
        .into_iter()
        .map(|i| i.columns)
        .collect();
    assert!(
        indexed.contains(&vec!["search_text".to_owned()]),
        "{indexed:?}"
    );
    assert!(!indexed.contains(&vec!["text".to_owned()]), "{indexed:?}");
    assert!(
        !indexed.contains(&vec!["context".to_owned()]),
        "{indexed:?}"
    );
    assert_keyword_finds_the_front_matter_title(&engine).await;

    // The upgraded table takes new rows (its added columns are in the order
    // a new table has them), and the rows it had, which have no input hash,
    // are still reused for their own pages.
    let (embedded, _) = engine.metrics().vectors();
    let again = ingest(&engine, "site", "2", pages()).await;
    let stored = |f: &index_core::job::FileProgress| {
        matches!(f.state, index_core::job::FileState::Stored { .. })
    };
    assert!(again.files.iter().all(stored), "{again:#?}");
    assert_eq!(
        engine.metrics().vectors().0,
        embedded,
        "nothing embedded again"
    );
    let fresh = ingest(
        &engine,
        "other",
        "1",
        vec![upload(
            "b.md",
            "# Beta\n\nA page written after the upgrade.\n",
        )],
    )
    .await;
    assert!(fresh.files.iter().all(stored), "{fresh:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_store_is_upgraded_on_open_and_keeps_every_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (before, liked) = {
        let mut uploads = pages();
        uploads.push(upload("handbook.md", handbook()));
        let engine = site(dir.path(), uploads).await;
        ingest(
            &engine,
            "other",
            "1",
            vec![upload("a.md", "# A\n\nAlpha.\n")],
        )
        .await;
        let liked = search(&engine, query("image formats")).await.results[0]
            .chunk_id
            .clone();
        engine
            .feedback(
                &local(),
                &FeedbackRequest {
                    chunk_id: liked.clone(),
                    vote: Vote::Like,
                },
            )
            .await
            .expect("vote");
        let mut before = Vec::new();
        for library in ["site", "other"] {
            for d in engine
                .documents(&local(), library, Some("1"))
                .await
                .expect("docs")
            {
                let doc = engine
                    .document(&local(), library, "1", &d.file_path)
                    .await
                    .expect("doc");
                before.push((library, d.file_path, d.chunks, doc.text));
            }
        }
        (before, liked)
    };
    downgrade_to_v1(dir.path()).await;

    let engine = Engine::open(&common::engine_config(dir.path()))
        .await
        .expect("the engine upgrades the store on open");
    let db = connect(dir.path()).await;
    let tables = db.table_names().execute().await.expect("tables");
    assert!(!tables.contains(&"chunks".to_owned()), "{tables:?}");
    assert_eq!(before.len(), 6);
    for (library, path, chunks, text) in &before {
        let docs = engine
            .documents(&local(), library, Some("1"))
            .await
            .expect("docs");
        let now = docs
            .iter()
            .find(|d| &d.file_path == path)
            .unwrap_or_else(|| panic!("{library} {path} is missing after the upgrade"));
        assert_eq!(&now.chunks, chunks, "{path}");
        let doc = engine
            .document(&local(), library, "1", path)
            .await
            .expect("doc");
        assert_eq!(&doc.text, text, "{path}");
    }
    // Ids are kept, so votes still apply; titles reach search again.
    let liked_again = engine
        .feedback(
            &local(),
            &FeedbackRequest {
                chunk_id: liked,
                vote: Vote::Like,
            },
        )
        .await
        .expect("the liked chunk still exists");
    assert_eq!(liked_again.likes, 2);
    assert_keyword_finds_the_front_matter_title(&engine).await;
}
