//! Upload jobs end to end: real files, the real model, the real LanceDB store.

use crate::common::{self, run, upload};

use std::io::{Cursor, Write};

use docshelf_server::access::local;
use docshelf_server::engine::Engine;
use docshelf_server::store::filter::Scope;
use index_core::job::{FileState, JobState, JobStatus};

fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in entries {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .expect("entry");
        w.write_all(data).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

fn state_of<'a>(status: &'a JobStatus, path: &str) -> &'a FileState {
    &status
        .files
        .iter()
        .find(|f| f.file_path == path)
        .unwrap_or_else(|| panic!("{path} not in job: {status:#?}"))
        .state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_format_is_stored_bad_files_fail_alone_and_keyword_search_covers_new_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let data = common::shared_data();
    let markdown = b"---\ntitle: Quasar guide\n---\n# Setup\n\nInstall the zorblax plugin first.\n\n```sh\nquasar install zorblax\n```\n".to_vec();
    let html = std::fs::read(data.join("eval/git-docs/corpus/git-add.html")).expect("html");
    let pdf = std::fs::read(data.join("pdf/pypdf-crazyones.pdf")).expect("pdf");
    let corrupt = std::fs::read(data.join("pdf/03-invalid.pdf")).expect("corrupt pdf");
    let archive = zip(&[
        (
            "inner/notes.md",
            b"# Notes\n\nThe frobnicator rotates hourly.\n",
        ),
        ("inner/logo.png", b"PNG"),
    ]);

    let status = run(
        &engine,
        "demo",
        "1.0",
        vec![
            upload("guide.md", markdown),
            upload("git-add.html", html),
            upload("crazy.pdf", pdf),
            upload("broken.pdf", corrupt),
            upload("bundle.zip", archive),
        ],
    )
    .await;

    assert_eq!(status.state, JobState::Done);
    assert_eq!(status.error, None);
    for stored in ["guide.md", "git-add.html", "crazy.pdf", "inner/notes.md"] {
        assert!(
            matches!(state_of(&status, stored), FileState::Stored { .. }),
            "{stored}: {status:#?}"
        );
    }
    match state_of(&status, "broken.pdf") {
        FileState::Failed { reason } => assert!(reason.contains("damaged"), "{reason}"),
        other => panic!("broken.pdf: {other:?}"),
    }
    assert!(matches!(
        state_of(&status, "inner/logo.png"),
        FileState::Skipped { .. }
    ));

    let counts = engine.store().counts().await.expect("counts");
    assert_eq!((counts.libraries, counts.documents), (1, 4));

    // The PDF's chunks carry their page; the Markdown its title and heading path.
    let pdf_chunks = engine
        .store()
        .document("demo", "1.0", "crazy.pdf")
        .await
        .expect("doc");
    assert!(pdf_chunks.iter().all(|c| c.page == Some(1)));
    let md = engine
        .store()
        .document("demo", "1.0", "guide.md")
        .await
        .expect("doc");
    assert_eq!(md[0].title.as_deref(), Some("Quasar guide"));
    assert_eq!(md[0].heading_path, "Setup");

    // Full-text search sees what the job stored...
    let hits = engine
        .store()
        .keyword("zorblax", &Scope::default(), 5)
        .await
        .expect("search");
    assert_eq!(
        hits.first().map(|h| h.chunk.file_path.as_str()),
        Some("guide.md")
    );

    // ...and what a later job adds after the index exists.
    let later = run(
        &engine,
        "demo",
        "1.0",
        vec![upload("later.md", "A quibbleflux appears.\n")],
    )
    .await;
    assert!(matches!(
        state_of(&later, "later.md"),
        FileState::Stored { .. }
    ));
    let hits = engine
        .store()
        .keyword("quibbleflux", &Scope::default(), 5)
        .await
        .expect("search");
    assert_eq!(
        hits.first().map(|h| h.chunk.file_path.as_str()),
        Some("later.md")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_uploads_store_nothing_new_and_changed_files_replace_the_old_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let v1 = "# Title\n\nThe old text about widgets.\n";
    let first = run(&engine, "lib", "2", vec![upload("a.md", v1)]).await;
    assert!(matches!(
        state_of(&first, "a.md"),
        FileState::Stored { new_chunks: 1, .. }
    ));

    let again = run(&engine, "lib", "2", vec![upload("a.md", v1)]).await;
    assert!(
        matches!(
            state_of(&again, "a.md"),
            FileState::Stored { new_chunks: 0, .. }
        ),
        "{again:#?}"
    );
    assert_eq!(engine.store().counts().await.expect("counts").chunks, 1);

    let v2 = "# Title\n\nThe new text about gadgets.\n";
    run(&engine, "lib", "2", vec![upload("a.md", v2)]).await;
    let chunks = engine
        .store()
        .document("lib", "2", "a.md")
        .await
        .expect("doc");
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].text.contains("gadgets"));
    assert_eq!(engine.store().counts().await.expect("counts").chunks, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_uploaded_twice_in_one_job_keeps_its_later_version() {
    // A document is staged while the next one is embedded; the later file
    // of a path must win, and the earlier one say it was replaced.
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let uploads = vec![
        upload("a.md", "# A\n\nThe first draft about gorsewick.\n"),
        upload("a.md", "# A\n\nThe final text about thimbleroot.\n"),
        upload("b.md", "# B\n\nAnother page.\n"),
    ];
    let status = run(&engine, "lib", "1", uploads).await;
    assert_eq!(status.tally(), (2, 0), "{status:#?}");
    assert!(
        matches!(&status.files[0].state, FileState::Skipped { reason } if reason.contains("same path")),
        "{status:#?}"
    );
    let chunks = engine
        .store()
        .document("lib", "1", "a.md")
        .await
        .expect("doc");
    assert_eq!(chunks.len(), 1, "{chunks:#?}");
    assert!(chunks[0].text.contains("thimbleroot"), "{chunks:#?}");
    assert_eq!(engine.store().counts().await.expect("counts").chunks, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_replacing_part_of_a_version_loses_and_doubles_nothing() {
    // The second job publishes three documents into the version the first
    // wrote, one of them replacing a document of the first, in one commit;
    // the indexes are then refreshed (compaction included).
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::open(&common::engine_config(dir.path()))
        .await
        .expect("engine");
    let first = vec![
        upload("a.md", "# A\n\nThe old zanzibrook text.\n"),
        upload("b.md", "# B\n\nA plovermint note.\n"),
    ];
    run(&engine, "lib", "1", first).await;
    let second = vec![
        upload("c.md", "# C\n\nThe quillotrope page.\n"),
        upload("a.md", "# A\n\nThe new marrowfleck text.\n"),
        upload("d.md", "# D\n\nSome vexillant words.\n"),
    ];
    let status = run(&engine, "lib", "1", second).await;
    assert_eq!(status.tally(), (3, 0), "{status:#?}");

    assert_eq!(engine.store().counts().await.expect("counts").chunks, 4);
    assert_eq!(
        engine.store().unindexed_text_rows().await.expect("stats"),
        0
    );
    for (word, file) in [
        ("plovermint", "b.md"),
        ("quillotrope", "c.md"),
        ("marrowfleck", "a.md"),
        ("vexillant", "d.md"),
    ] {
        let hits = engine
            .store()
            .keyword(word, &Scope::default(), 5)
            .await
            .expect("search");
        let files: Vec<&str> = hits.iter().map(|h| h.chunk.file_path.as_str()).collect();
        assert_eq!(files, [file], "{word}");
    }
    let old = engine
        .store()
        .keyword("zanzibrook", &Scope::default(), 5)
        .await
        .expect("search");
    assert!(old.is_empty(), "the replaced text is still found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_names_and_empty_uploads_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = std::sync::Arc::new(common::engine(dir.path()).await);
    let err = engine
        .start_upload(&local(), "bad/name", "1", vec![upload("a.md", "x")])
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("library"), "{err}");
    let err = engine
        .start_upload(&local(), "ok", "latest", vec![upload("a.md", "x")])
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("reserved"), "{err}");
    let err = engine
        .start_upload(&local(), "ok", "1", vec![])
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("at least one file"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_html_nesting_fails_or_flattens_alone_and_the_engine_keeps_serving() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    // 750 nested <div>s (8 KB) used to overflow a worker's stack and abort
    // the process; 100,000 took minutes to parse.
    let deep = format!(
        "<html><body>{}buried treasure{}</body></html>",
        "<div>".repeat(750),
        "</div>".repeat(750)
    );
    let absurd = format!("<html><body>{}x</body></html>", "<div>".repeat(100_000));
    let started = std::time::Instant::now();
    let status = run(
        &engine,
        "hostile",
        "1",
        vec![
            upload("deep.html", deep),
            upload("absurd.html", absurd),
            upload("fine.md", "# Fine\n\nStill here.\n"),
        ],
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
    assert!(
        matches!(state_of(&status, "deep.html"), FileState::Stored { .. }),
        "{status:#?}"
    );
    assert!(
        matches!(state_of(&status, "absurd.html"), FileState::Failed { reason } if reason.contains("nests elements")),
        "{status:#?}"
    );
    assert!(matches!(
        state_of(&status, "fine.md"),
        FileState::Stored { .. }
    ));
    let r = engine
        .search(
            &local(),
            index_core::search::SearchParams {
                query: "buried treasure".into(),
                library: Some("hostile".into()),
                ..Default::default()
            },
        )
        .await
        .expect("search still works");
    assert_eq!(r.results[0].file_path, "deep.html");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_over_its_budget_fails_with_a_reason_and_nothing_of_it_is_embedded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = docshelf_server::config::EngineConfig {
        max_job_text_mib: 1,
        max_job_chunks: 6,
        ..common::engine_config(dir.path())
    };
    let engine = Engine::open(&config).await.expect("engine");
    // Within every per-archive limit (few entries, ordinary ratios), but
    // 1.8 MiB of text against a job budget of 1 MiB.
    let page = "Plain documentation text, line after line. ".repeat(14_000);
    let archive = zip(&[
        ("a.md", page.as_bytes()),
        ("b.md", page.as_bytes()),
        ("c.md", page.as_bytes()),
    ]);
    let para = "A sentence about configuration that fills a chunk. ".repeat(10);
    let four_chunks =
        format!("# One\n\n{para}\n\n# Two\n\n{para}\n\n# Three\n\n{para}\n\n# Four\n\n{para}\n");
    let status = run(
        &engine,
        "budget",
        "1",
        vec![
            upload("big.zip", archive),
            upload("first.md", four_chunks.clone()),
            upload("second.md", four_chunks),
        ],
    )
    .await;
    assert!(
        matches!(state_of(&status, "big.zip"), FileState::Failed { reason } if reason.contains("MiB of text")),
        "{status:#?}"
    );
    assert!(
        matches!(
            state_of(&status, "first.md"),
            FileState::Stored { chunks: 4, .. }
        ),
        "{status:#?}"
    );
    assert!(
        matches!(state_of(&status, "second.md"), FileState::Failed { reason } if reason.contains("6 chunks")),
        "{status:#?}"
    );
    let docs = engine
        .documents(&local(), "budget", Some("1"))
        .await
        .expect("documents");
    assert_eq!(docs.len(), 1, "{docs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extraction_past_its_deadline_fails_that_file_and_the_job_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pdf =
        std::fs::read(common::shared_data().join("pdf/pypdf-Seige_of_Vicksburg_Sample_OCR.pdf"))
            .expect("shared PDF");
    // A real PDF takes far longer than a millisecond to read.
    let tight = docshelf_server::config::EngineConfig {
        extract_timeout_secs: 0.001,
        ..common::engine_config(dir.path())
    };
    let engine = Engine::open(&tight).await.expect("engine");
    let status = run(&engine, "slow", "1", vec![upload("big.pdf", &pdf)]).await;
    assert_eq!(status.state, JobState::Done);
    match state_of(&status, "big.pdf") {
        FileState::Failed { reason } => assert!(reason.contains("took longer than"), "{reason}"),
        other => panic!("big.pdf: {other:?}"),
    }
    drop(engine);

    // With the default deadline the same file is stored.
    let engine = common::engine(dir.path()).await;
    let status = run(&engine, "slow", "1", vec![upload("big.pdf", pdf)]).await;
    assert!(
        matches!(state_of(&status, "big.pdf"), FileState::Stored { .. }),
        "{status:#?}"
    );
}

/// A page unchanged from one version to the next (or uploaded again) is
/// not embedded again: its stored vectors are reused, exactly, and only
/// what changed goes through the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unchanged_pages_reuse_their_vectors_across_versions_and_uploads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let pages = |changed: &str| {
        vec![
            upload("install.md", "# Install\n\nRun the installer, then restart the shell.\n\n## Check\n\nRun `tool --version`.\n"),
            upload("usage.md", "# Usage\n\nPass a file to read it; pass two to compare them.\n"),
            upload("news.md", format!("# News\n\n{changed}\n")),
        ]
    };
    let first = run(&engine, "tool", "1.0", pages("Version one adds comparing.")).await;
    assert_eq!(first.tally(), (3, 0), "{first:#?}");
    let (embedded, reused) = engine.metrics().vectors();
    assert_eq!(reused, 0);
    let chunks_of = |status: &JobStatus, path: &str| {
        status
            .files
            .iter()
            .find(|f| f.file_path == path)
            .map(|f| match f.state {
                FileState::Stored { chunks, .. } => chunks as u64,
                _ => 0,
            })
            .expect("listed")
    };

    let second = run(&engine, "tool", "2.0", pages("Version two adds colours.")).await;
    assert_eq!(second.tally(), (3, 0), "{second:#?}");
    let (embedded_now, reused_now) = engine.metrics().vectors();
    assert_eq!(
        reused_now - reused,
        chunks_of(&second, "install.md") + chunks_of(&second, "usage.md"),
        "the unchanged pages' chunks are reused"
    );
    assert_eq!(
        embedded_now - embedded,
        chunks_of(&second, "news.md"),
        "only the changed page is embedded"
    );
    // Reused vectors are the very ones stored: the same search in either
    // version scores the same page alike.
    let search = |version: &str| {
        let engine = &engine;
        let version = version.to_owned();
        async move {
            engine
                .search(
                    &local(),
                    index_core::search::SearchParams {
                        mode: Some("dense".into()),
                        library: Some("tool".into()),
                        version: Some(version),
                        rerank: Some(false),
                        ..common::query("how do I check the installed version")
                    },
                )
                .await
                .expect("search")
        }
    };
    let (old, new) = (search("1.0").await, search("2.0").await);
    assert_eq!(old.results[0].file_path, "install.md");
    assert_eq!(new.results[0].file_path, "install.md");
    assert!((old.results[0].score - new.results[0].score).abs() < 1e-6);

    // The same files again, into the same version: nothing is embedded.
    run(&engine, "tool", "2.0", pages("Version two adds colours.")).await;
    assert_eq!(engine.metrics().vectors().0, embedded_now);
}

/// A page copied under another path, or into another library, is not
/// embedded again either: its chunks' inputs are found by their hash
/// anywhere in the store. Reuse stays exact: a chunk whose text or context
/// differs is embedded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_copied_to_another_path_or_library_reuses_its_vectors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let page = "# Install\n\nRun the installer, then restart the shell.\n\n## Check\n\nRun `tool --version` to see what was installed.\n";
    let first = run(&engine, "tool", "1.0", vec![upload("install.md", page)]).await;
    let chunks = match state_of(&first, "install.md") {
        FileState::Stored { chunks, .. } => *chunks as u64,
        other => panic!("{other:?}"),
    };
    let (embedded, reused) = engine.metrics().vectors();

    let copied = run(
        &engine,
        "fork",
        "0.1",
        vec![upload("docs/getting-started/install.md", page)],
    )
    .await;
    assert_eq!(copied.tally(), (1, 0), "{copied:#?}");
    let (embedded_now, reused_now) = engine.metrics().vectors();
    assert_eq!(embedded_now, embedded, "nothing embedded for the copy");
    assert_eq!(
        reused_now - reused,
        chunks,
        "every chunk of the copy reused"
    );

    // One changed sentence: that chunk alone goes through the model.
    let edited = page.replace("to see what was installed", "to print the version");
    run(&engine, "fork", "0.2", vec![upload("setup.md", edited)]).await;
    assert_eq!(engine.metrics().vectors().0 - embedded_now, 1);

    // The copy's vectors are the original's: both score the same.
    let top = |library: &str| {
        let (engine, library) = (&engine, library.to_owned());
        async move {
            let hits = engine
                .search(
                    &local(),
                    index_core::search::SearchParams {
                        mode: Some("dense".into()),
                        library: Some(library.clone()),
                        rerank: Some(false),
                        ..common::query("restart the shell after installing")
                    },
                )
                .await
                .expect("search");
            let hit = hits.results.first().cloned();
            hit.unwrap_or_else(|| panic!("nothing found in {library}"))
        }
    };
    let (original, copy) = (top("tool").await, top("fork").await);
    assert_eq!(original.text, copy.text);
    assert!((original.score - copy.score).abs() < 1e-6);
}

/// nbformat 5.10.4's own test notebook (`tests/test4.ipynb`, from its sdist
/// on PyPI; the file address is immutable), fetched once into
/// `~/.cache/docshelf/fixtures` and checked by its SHA-256.
async fn pinned_notebook() -> Vec<u8> {
    const URL: &str = "https://files.pythonhosted.org/packages/6d/fd/91545e604bc3dad7dca9ed03284086039b294c6b3d75c0d2fa45f9e9caf3/nbformat-5.10.4.tar.gz";
    const SHA256: &str = "322168b14f937a5d11362988ecac2a4952d3d8e3a2cbeb2319584631226d5b3a";
    let home = std::env::var_os("HOME").expect("HOME");
    let dir = std::path::Path::new(&home).join(".cache/docshelf/fixtures");
    let sdist = dir.join("nbformat-5.10.4.tar.gz");
    let sum = |path: &std::path::Path| {
        let out = std::process::Command::new("sha256sum")
            .arg(path)
            .output()
            .expect("sha256sum runs");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    if !sdist.is_file() || sum(&sdist) != SHA256 {
        std::fs::create_dir_all(&dir).expect("cache dir");
        let bytes = reqwest::get(URL)
            .await
            .and_then(|r| r.error_for_status())
            .expect("nbformat's sdist from PyPI")
            .bytes()
            .await
            .expect("nbformat's sdist from PyPI");
        let partial = dir.join("nbformat-5.10.4.tar.gz.part");
        std::fs::write(&partial, &bytes).expect("write");
        assert_eq!(sum(&partial), SHA256, "the sdist is not the pinned one");
        std::fs::rename(&partial, &sdist).expect("rename");
    }
    let out = std::process::Command::new("tar")
        .arg("-xzOf")
        .arg(&sdist)
        .arg("nbformat-5.10.4/tests/test4.ipynb")
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A real notebook: its Markdown headings make the title and heading
/// paths, its code cells are stored as code blocks, and its outputs (HTML,
/// images as base64, streams) are not stored at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_notebook_is_stored_as_its_prose_and_code_without_outputs() {
    let notebook = pinned_notebook().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = common::engine(dir.path()).await;
    let status = run(
        &engine,
        "nb",
        "1",
        vec![upload("latex-test.ipynb", notebook)],
    )
    .await;
    assert_eq!(status.tally(), (1, 0), "{status:#?}");
    let document = engine
        .document(&local(), "nb", "1", "latex-test.ipynb")
        .await
        .expect("stored");
    assert_eq!(document.title.as_deref(), Some("nbconvert latex test"));
    assert!(
        document.text.contains("## Printed Using Python"),
        "{}",
        document.text
    );
    assert!(
        document.text.contains("print(\"hello\")"),
        "{}",
        document.text
    );
    for output in ["iVBORw0KGgo", "execution_count", "output_type", "image/png"] {
        assert!(!document.text.contains(output), "{output} was stored");
    }
    let chunks = engine
        .store()
        .document("nb", "1", "latex-test.ipynb")
        .await
        .expect("chunks");
    assert!(
        chunks
            .iter()
            .any(|c| c.heading_path == "nbconvert latex test > Pyout"),
        "no chunk sits under its heading: {:?}",
        chunks.iter().map(|c| &c.heading_path).collect::<Vec<_>>()
    );
}
