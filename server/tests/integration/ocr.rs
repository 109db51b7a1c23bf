//! Scanned PDFs read by OCR, end to end: real PDFs from the shared data
//! scanned into image-only PDFs (`tests/support/scans.rs`), uploaded to a
//! real engine, read by the real Tesseract, embedded by the real model and
//! searched. Nothing here depends on how fast the machine is: each page's
//! bound is CPU time, far above what a page takes.

use std::path::{Path, PathBuf};

use docshelf_server::config::OcrConfig;
use docshelf_server::engine::Engine;
use docshelf_server::ingest::ocr::OcrStatus;
use index_core::job::{FileProgress, FileState, JobStatus};
use index_core::search::SearchParams;

use crate::common::{self, upload};
use crate::scans;
use docshelf_server::access::local;

/// The word recall every scan must reach against its original's text
/// layer: well under what these files were measured at (docs/benchmarks.md,
/// `make bench-ocr`), leaving room for another Tesseract version or scan.
const MIN_RECALL: f64 = 0.85;

/// The scans read: a scanned book page set (the file is itself a scan, with
/// an OCR layer), a two-column paper, and a one-page essay with a title.
const FILES: [&str; 3] = [
    "pypdf-Seige_of_Vicksburg_Sample_OCR.pdf",
    "02-valid.pdf",
    "pypdf-crazyones.pdf",
];

fn pdf_dir() -> PathBuf {
    common::shared_data().join("pdf")
}

fn expected(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(pdf_dir().join("expected.json"))
        .expect("../shared/data/pdf/expected.json is present");
    let all: serde_json::Value = serde_json::from_str(&text).expect("expected.json parses");
    all[name].clone()
}

/// An engine on a fresh store in `dir`, which must read by OCR.
async fn ocr_engine(dir: &Path) -> Engine {
    scans::require_tools();
    let engine = common::engine(dir).await;
    match engine.ocr() {
        OcrStatus::Ready(_) => {
            let said = engine.status(&local()).await.ocr;
            assert!(said.enabled, "{said:?}");
            assert_eq!(said.languages.as_deref(), Some("eng"));
            engine
        }
        other => panic!(
            "OCR is not available ({other:?}): `make test` (scripts/setup.sh) installs \
             tesseract-ocr, tesseract-ocr-eng and poppler-utils"
        ),
    }
}

/// An engine on a fresh store in `dir`, with these OCR settings.
async fn engine_with(dir: &Path, ocr: OcrConfig) -> Engine {
    let config = docshelf_server::config::EngineConfig {
        ocr,
        ..common::engine_config(dir)
    };
    Engine::open(&config).await.expect("engine")
}

fn file<'a>(status: &'a JobStatus, path: &str) -> &'a FileProgress {
    status
        .files
        .iter()
        .find(|f| f.file_path == path)
        .unwrap_or_else(|| panic!("{path} not in the job: {status:#?}"))
}

/// The share of `phrase`'s words that `text` holds.
fn phrase_words_in(phrase: &str, text: &str) -> f64 {
    scans::recall(&scans::words(phrase), &scans::words(text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scanned_pdfs_are_read_by_ocr_in_page_order_and_found_by_search() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = ocr_engine(&dir.path().join("store")).await;
    let uploads = FILES
        .iter()
        .map(|name| {
            let scan = scans::scan(&pdf_dir().join(name), None, 300, &dir.path().join(name));
            upload(&format!("scan-{name}"), scan)
        })
        .collect();
    let status = common::ingest(&engine, "scans", "1", uploads).await;

    let mut failures = Vec::new();
    for name in FILES {
        let path = format!("scan-{name}");
        let want = expected(name);
        let pages = want["pages"].as_u64().expect("pages") as u32;
        let progress = file(&status, &path);
        assert!(
            matches!(progress.state, FileState::Stored { .. }),
            "{path}: {progress:#?}"
        );
        assert!(
            progress.warnings.iter().any(|w| w.contains("read by OCR")),
            "{path} says it was read by OCR: {progress:#?}"
        );

        // Every page kept its number.
        let chunks = engine
            .store()
            .document("scans", "1", &path)
            .await
            .expect("chunks");
        let numbered: Vec<u32> = chunks.iter().filter_map(|c| c.page).collect();
        assert_eq!(
            numbered.len(),
            chunks.len(),
            "{path}: every chunk has its page"
        );
        assert!(
            numbered.windows(2).all(|w| w[0] <= w[1]),
            "{path}: pages in order: {numbered:?}"
        );
        assert_eq!(numbered.first(), Some(&1), "{path}");
        assert_eq!(numbered.last(), Some(&pages), "{path}");

        // What OCR read, against the original's text layer.
        let document = engine
            .document(&local(), "scans", "1", &path)
            .await
            .expect("document");
        let reference = scans::words(&scans::text_layer(&pdf_dir().join(name)));
        let recall = scans::recall(&reference, &scans::words(&document.text));
        println!(
            "{name}: {pages} pages, {} words in the text layer, OCR word recall {recall:.3}",
            reference.len()
        );
        if recall < MIN_RECALL {
            failures.push(format!("{name}: recall {recall:.3} < {MIN_RECALL}"));
        }

        // A phrase of the first page and one of the last are found, there:
        // among the best passages (raw chunks, not one result per file: a
        // paper's title on page 1 may outrank its reference list).
        for (key, page) in [("first_page_phrase", 1), ("last_page_phrase", pages)] {
            let phrase = want[key]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: the expectations lack {key}"));
            let response = engine
                .search(
                    &local(),
                    SearchParams {
                        library: Some("scans".into()),
                        duplicates: Some(true),
                        k: Some(5),
                        ..common::query(phrase)
                    },
                )
                .await
                .expect("search");
            // The passage may start at the end of the page before.
            let found = response.results.iter().any(|hit| {
                hit.file_path == path
                    && phrase_words_in(phrase, &hit.text) >= 0.8
                    && hit.page.is_some_and(|p| p == page || p + 1 == page)
            });
            if !found {
                let top: Vec<_> = response
                    .results
                    .iter()
                    .map(|h| (&h.file_path, h.page, &h.text))
                    .collect();
                failures.push(format!(
                    "{name}: {phrase:?} (page {page}) not among the best passages: {top:#?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_image_is_damaged_fails_alone_and_the_others_are_indexed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = ocr_engine(&dir.path().join("store")).await;
    let source = pdf_dir().join("pypdf-Seige_of_Vicksburg_Sample_OCR.pdf");
    let mut scan = scans::scan(&source, Some((1, 3)), 300, &dir.path().join("scan"));
    scans::damage_page_image(&mut scan, 2);

    let status = common::run(&engine, "damaged", "1", vec![upload("damaged.pdf", scan)]).await;
    let progress = file(&status, "damaged.pdf");
    assert!(
        matches!(progress.state, FileState::Stored { .. }),
        "{progress:#?}"
    );
    let about_page_2: Vec<&String> = progress
        .warnings
        .iter()
        .filter(|w| w.contains("page 2 is not indexed"))
        .collect();
    assert_eq!(about_page_2.len(), 1, "{progress:#?}");
    assert!(
        about_page_2[0].contains("could not be"),
        "the reason is given: {about_page_2:?}"
    );
    assert!(
        progress.warnings.iter().any(|w| w.contains("pages 1, 3")),
        "pages 1 and 3 were read: {progress:#?}"
    );

    let chunks = engine
        .store()
        .document("damaged", "1", "damaged.pdf")
        .await
        .expect("chunks");
    let pages: std::collections::BTreeSet<u32> = chunks.iter().filter_map(|c| c.page).collect();
    assert_eq!(
        pages,
        [1, 3].into(),
        "pages 1 and 3 are indexed, page 2 is not"
    );
    let first = expected("pypdf-Seige_of_Vicksburg_Sample_OCR.pdf")["first_page_phrase"]
        .as_str()
        .expect("phrase")
        .to_owned();
    let text = engine
        .document(&local(), "damaged", "1", "damaged.pdf")
        .await
        .expect("document")
        .text;
    assert!(phrase_words_in(&first, &text) >= 0.8, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_ocr_off_a_scan_is_refused_with_a_message_that_says_so() {
    scans::require_tools();
    let dir = tempfile::tempdir().expect("temp dir");
    let off = OcrConfig {
        enabled: false,
        ..OcrConfig::default()
    };
    let engine = engine_with(&dir.path().join("store"), off).await;
    assert!(matches!(engine.ocr(), OcrStatus::Off));
    let said = engine.status(&local()).await.ocr;
    assert!(!said.enabled);
    assert!(
        said.why_off
            .as_deref()
            .is_some_and(|w| w.contains("--ocr false")),
        "{said:?}"
    );
    let scan = scans::scan(
        &pdf_dir().join("pypdf-crazyones.pdf"),
        None,
        150,
        &dir.path().join("scan"),
    );
    let status = common::run(&engine, "off", "1", vec![upload("scan.pdf", scan)]).await;
    match &file(&status, "scan.pdf").state {
        FileState::Failed { reason } => {
            assert!(reason.contains("no text layer"), "{reason}");
            assert!(reason.contains("--ocr false"), "{reason}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    // Without the tools the message carries why, and the packages to install.
    let why = "not installed: tesseract (Debian: tesseract-ocr)";
    let hint = OcrStatus::Missing(why.into()).hint();
    assert!(
        hint.ends_with(why) && hint.contains("tesseract-ocr-eng"),
        "{hint}"
    );
}

/// One file cannot hold OCR for long: past `--ocr-max-pages` the pages
/// are left out, named in the file's warnings with the bound, and the
/// pages read are indexed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_past_the_files_bound_are_left_out_and_named() {
    scans::require_tools();
    let dir = tempfile::tempdir().expect("temp dir");
    let bounded = OcrConfig {
        max_pages: 2,
        ..OcrConfig::default()
    };
    let engine = engine_with(&dir.path().join("store"), bounded).await;
    assert!(matches!(engine.ocr(), OcrStatus::Ready(_)));
    let source = pdf_dir().join("pypdf-Seige_of_Vicksburg_Sample_OCR.pdf");
    let scan = scans::scan(&source, Some((1, 3)), 150, &dir.path().join("scan"));
    let status = common::run(&engine, "bounded", "1", vec![upload("bounded.pdf", scan)]).await;
    let progress = file(&status, "bounded.pdf");
    assert!(
        matches!(progress.state, FileState::Stored { .. }),
        "{progress:#?}"
    );
    assert!(
        progress
            .warnings
            .iter()
            .any(|w| w.contains("page 3 left out") && w.contains("--ocr-max-pages")),
        "{progress:#?}"
    );
    let chunks = engine
        .store()
        .document("bounded", "1", "bounded.pdf")
        .await
        .expect("chunks");
    let pages: std::collections::BTreeSet<u32> = chunks.iter().filter_map(|c| c.page).collect();
    assert_eq!(pages, [1, 2].into());
}

/// A PDF of one page too large for `pdftoppm` to allocate (14,400 pt
/// square: pdftoppm says "Bogus memory allocation size" and leaves a 1 × 1
/// image). The file is valid; only its page size is hostile.
fn huge_page_pdf() -> Vec<u8> {
    let content = b"0 0 1 rg 10 10 100 100 re f\n";
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(content);
    stream.extend_from_slice(b"endstream");
    crate::pdf_file::pdf_file(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Contents 4 0 R >>".to_vec(),
        stream,
    ])
}

/// A page `pdftoppm` cannot render is reported as not rendered, with its
/// reason, not as a page on which OCR found no text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_cannot_be_rendered_is_said_to_be_unrendered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = ocr_engine(&dir.path().join("store")).await;
    let status = common::run(
        &engine,
        "huge",
        "1",
        vec![upload("huge.pdf", huge_page_pdf())],
    )
    .await;
    match &file(&status, "huge.pdf").state {
        FileState::Failed { reason } => {
            assert!(reason.contains("could not be rendered"), "{reason}");
            assert!(
                !reason.contains("OCR found no text on its page"),
                "{reason}"
            );
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}
