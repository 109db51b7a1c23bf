//! OCR of scanned PDFs: seconds per page and word recall, per file.
//!
//! `make bench-ocr` (or `cargo bench --profile dev -p docshelf-server --bench ocr`).
//! Each readable PDF of the shared data (`../shared/data/pdf`, those
//! `expected.json` gives no `expect` for) is scanned into an image-only PDF
//! (`pdftoppm` at 300 dpi, then `img2pdf`, as the tests do), read by
//! docshelf's OCR exactly as an upload is (`ingest::ocr`: render, Tesseract
//! at nice 19 on one thread, hOCR to Markdown), and the words it read are
//! scored against the original's text layer (`pdftotext`) by recall: the
//! share of the text layer's words, with repeats, that OCR found. Prints
//! figures; asserts nothing. `DOCSHELF_BENCH_FILES=a.pdf,b.pdf` picks files.

#[path = "../tests/support/scans.rs"]
mod scans;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use docshelf_server::ingest::ocr::{self, OcrSettings, OcrStatus, DPI};
use ingest_core::extract::{extract_pdf_pages, ArchiveLimits, Unmetered};

fn main() {
    scans::require_tools();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let data = root.join("../shared/data/pdf");
    let expected: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(data.join("expected.json")).expect("expected.json"),
    )
    .expect("expected.json parses");
    let chosen: Option<Vec<String>> = std::env::var("DOCSHELF_BENCH_FILES")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let OcrStatus::Ready(engine) = OcrStatus::detect(Some(OcrSettings::default())) else {
        panic!("OCR is not available: `make setup` installs tesseract and poppler-utils");
    };
    let work = tempfile::tempdir().expect("temp dir");
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "OCR at {DPI} dpi, one page at a time on one thread at nice 19; {cores} cores; {}",
        tesseract_version()
    );
    println!(
        "{:<42} {:>5} {:>10} {:>8} {:>8} {:>7}",
        "file", "pages", "scan s", "s/page", "words", "recall"
    );

    let (mut all_pages, mut all_secs, mut all_words, mut all_found) = (0u32, 0.0f64, 0usize, 0.0);
    for (name, want) in &expected {
        if want.get("expect").is_some() || chosen.as_ref().is_some_and(|c| !c.contains(name)) {
            continue;
        }
        let source = data.join(name);
        let started = Instant::now();
        let scan = scans::scan(&source, None, DPI, &work.path().join(name));
        let scan_secs = started.elapsed().as_secs_f64();

        let mut doc = extract_pdf_pages(name, &scan, &ArchiveLimits::default(), &mut Unmetered)
            .expect("the scan opens");
        let pages = doc.pages_without_text();
        let started = Instant::now();
        let ocr::Reading { reads, left_out } = engine
            .read_pages(&scan, &pages, &AtomicBool::new(false))
            .expect("OCR runs");
        assert!(left_out.is_empty(), "pages left out: {left_out:?}");
        let secs = started.elapsed().as_secs_f64();
        let ocr::Outcome { texts, unread } = ocr::Outcome::of(reads);
        doc.replace_pages(&texts);

        let reference = scans::words(&scans::text_layer(&source));
        let recall = scans::recall(&reference, &scans::words(&doc.text));
        println!(
            "{name:<42} {:>5} {scan_secs:>10.1} {:>8.2} {:>8} {recall:>7.3}",
            doc.pages.len(),
            secs / doc.pages.len().max(1) as f64,
            reference.len(),
        );
        for (page, error) in unread {
            let why = error.unwrap_or_else(|| "no text found".into());
            println!("    page {page}: {why}");
        }
        all_pages += doc.pages.len() as u32;
        all_secs += secs;
        all_words += reference.len();
        all_found += recall * reference.len() as f64;
    }
    println!(
        "{:<42} {all_pages:>5} {:>10} {:>8.2} {all_words:>8} {:>7.3}",
        "all (recall weighted by words)",
        "",
        all_secs / f64::from(all_pages.max(1)),
        all_found / all_words.max(1) as f64
    );
}

fn tesseract_version() -> String {
    std::process::Command::new("tesseract")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "tesseract (version unknown)".into())
}
