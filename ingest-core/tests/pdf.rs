//! PDF extraction against real files and their expectations
//! (`../shared/data/pdf/expected.json`: page counts, phrases from the first
//! and last pages, word counts, and what must happen for the hard cases).

mod common;
#[path = "support/pdf_file.rs"]
mod pdf_file;

use std::path::PathBuf;

use ingest_core::extract::{extract, ArchiveLimits, ExtractError};
use serde_json::Value;

use pdf_file::pdf_file;

fn data_dir() -> PathBuf {
    common::shared_data().join("pdf")
}

fn expected() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(data_dir().join("expected.json"))
        .expect("../shared/data/pdf/expected.json (the shared test data) is present");
    serde_json::from_str::<Value>(&text)
        .expect("expected.json parses")
        .as_object()
        .expect("an object")
        .clone()
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn run(name: &str) -> Result<ingest_core::extract::Extracted, ExtractError> {
    let bytes = std::fs::read(data_dir().join(name)).expect("pdf readable");
    extract(name, &bytes, &ArchiveLimits::default()).map(|mut e| e.documents.remove(0))
}

/// Where expected.json's "first page" phrase is not on the first page as
/// Poppler's `pdftotext -f 1 -l 1` reads the file either: docshelf agrees
/// with Poppler, so for these the phrase must be in the document, on the
/// page named here.
const PHRASE_PAGE_EXCEPTIONS: [(&str, usize); 1] = [("01-valid.pdf", 8)];

#[test]
fn readable_pdfs_match_page_counts_and_phrases() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, want) in expected() {
        if want.get("expect").is_some() {
            continue;
        }
        let doc = run(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let pages = want["pages"].as_u64().expect("pages") as usize;
        assert_eq!(doc.pages.len(), pages, "{name}: page count");
        assert_eq!(doc.file_path, name);
        let page_text = |n: usize| {
            let span = doc.pages[n - 1];
            squash(&doc.text[span.start..span.end])
        };

        if let Some(phrase) = want["first_page_phrase"].as_str() {
            let page = PHRASE_PAGE_EXCEPTIONS
                .iter()
                .find(|(f, _)| *f == name)
                .map_or(1, |(_, p)| *p);
            if !page_text(page).contains(&squash(phrase)) {
                failures.push(format!("{name}: page {page} lacks {phrase:?}"));
            }
        }
        if let Some(phrase) = want["last_page_phrase"].as_str() {
            if !page_text(pages).contains(&squash(phrase)) {
                failures.push(format!("{name}: last page lacks {phrase:?}"));
            }
        }
        let words = doc.text.split_whitespace().count() as f64;
        let want_words = want["words"].as_f64().expect("words");
        if (words - want_words).abs() > (want_words * 0.1).max(3.0) {
            failures.push(format!(
                "{name}: {words} words, expected about {want_words}"
            ));
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} PDFs checked");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_corrupt_pdf_is_a_clear_error() {
    match run("03-invalid.pdf") {
        Err(ExtractError::CorruptPdf(reason)) => assert!(!reason.is_empty()),
        other => panic!("expected CorruptPdf, got {other:?}"),
    }
}

#[test]
fn password_protected_pdfs_say_so() {
    for name in ["pypdf-encrypted-file.pdf", "pypdf-r4-user-password.pdf"] {
        let err = run(name).expect_err(name);
        assert_eq!(err, ExtractError::EncryptedPdf, "{name}");
        assert!(err.to_string().contains("password"));
    }
}

#[test]
fn aes256_with_an_empty_password_opens() {
    let doc = run("pypdf-r6-empty-password.pdf").expect("opens");
    assert_eq!(doc.pages.len(), 1);
    assert!(doc.text.split_whitespace().count() >= 3, "{:?}", doc.text);
}

#[test]
fn a_pdf_without_a_text_layer_is_refused_with_a_message() {
    let err = run("pypdf-git.pdf").expect_err("no text");
    assert_eq!(err, ExtractError::NoTextInPdf);
    assert!(err.to_string().contains("no text layer"));
}

#[test]
fn a_reader_that_does_ocr_gets_the_pages_without_text_instead_of_an_error() {
    let bytes = std::fs::read(data_dir().join("pypdf-git.pdf")).expect("pdf readable");
    let mut memory = ingest_core::extract::Unmetered;
    let doc = ingest_core::extract::extract_pdf_pages(
        "drawn.pdf",
        &bytes,
        &ArchiveLimits::default(),
        &mut memory,
    )
    .expect("no error: the caller reads the pages itself");
    assert_eq!(doc.file_path, "drawn.pdf");
    assert_eq!(doc.pages_without_text(), vec![1]);
    assert_eq!(doc.pages[0].layer, ingest_core::extract::TextLayer::Missing);
    assert!(doc.text.is_empty());

    // Readable files have text on every page that has any.
    for name in ["pypdf-crazyones.pdf", "02-valid.pdf"] {
        let doc = run(name).expect(name);
        assert_eq!(doc.pages_without_text(), Vec::<u32>::new(), "{name}");
    }
}

/// `head` Flate compressed, followed by `padding` bytes of spaces.
fn deflated(head: &[u8], padding: usize) -> Vec<u8> {
    use std::io::Write;
    let mut out = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    out.write_all(head).expect("compress");
    let spaces = vec![b' '; 1 << 16];
    for _ in 0..padding / spaces.len() {
        out.write_all(&spaces).expect("compress");
    }
    out.finish().expect("compress")
}

/// A Flate stream object with `extra` entries in its dictionary.
fn stream_object(extra: &str, data: &[u8]) -> Vec<u8> {
    [
        format!(
            "<< /Length {} /Filter /FlateDecode {extra}>>\nstream\n",
            data.len()
        )
        .as_bytes(),
        data,
        b"\nendstream",
    ]
    .concat()
}

/// A one-page PDF that says "Hello docshelf" and whose content stream, Flate
/// compressed, then runs on with `padding` bytes of spaces.
fn padded_pdf(padding: usize) -> Vec<u8> {
    pdf_with_object_stream(padding, None)
}

/// As [`padded_pdf`], plus, with `Some(n)`, an object stream (the PDF 1.5
/// container the reader unpacks while loading the file) holding one small
/// object and then `n` bytes of spaces.
fn pdf_with_object_stream(padding: usize, object_stream_padding: Option<usize>) -> Vec<u8> {
    let stream = deflated(b"BT /F1 12 Tf 72 700 Td (Hello docshelf) Tj ET\n", padding);
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream_object("", &stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    if let Some(n) = object_stream_padding {
        let packed = deflated(b"7 0 << /Note (docshelf) >>", n);
        objects.push(stream_object("/Type /ObjStm /N 1 /First 4 ", &packed));
    }
    pdf_file(&objects)
}

#[test]
fn a_pdf_whose_streams_inflate_past_the_bound_is_refused_before_it_is_read() {
    let limits = ArchiveLimits {
        max_pdf_inflated_bytes: 4 << 20,
        ..ArchiveLimits::default()
    };
    // The same file under the bound reads; only the inflated size differs.
    let fine = padded_pdf(1 << 20);
    let read = extract("fine.pdf", &fine, &limits).expect("a PDF under the bound reads");
    assert!(
        read.documents[0].text.contains("Hello docshelf"),
        "{:?}",
        read.documents[0].text
    );

    let bomb = padded_pdf(32 << 20);
    assert!(
        bomb.len() < 200 * 1024,
        "the bomb is small: {} bytes",
        bomb.len()
    );
    match extract("bomb.pdf", &bomb, &limits) {
        Err(err @ ExtractError::PdfBomb(_)) => {
            assert!(err.to_string().contains("4 MiB"), "{err}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn an_object_stream_that_inflates_past_the_bound_is_refused_before_it_is_unpacked() {
    // Object streams are unpacked by the reader while it loads the file, so
    // they are counted as it meets them, not after.
    let limits = ArchiveLimits {
        max_pdf_inflated_bytes: 4 << 20,
        ..ArchiveLimits::default()
    };
    let fine = pdf_with_object_stream(1 << 20, Some(1 << 20));
    let read = extract("fine.pdf", &fine, &limits).expect("a PDF under the bound reads");
    assert!(read.documents[0].text.contains("Hello docshelf"));

    // Each part alone is under the bound; together they are over it.
    let over = pdf_with_object_stream(3 << 20, Some(2 << 20));
    assert!(matches!(
        extract("over.pdf", &over, &limits),
        Err(ExtractError::PdfBomb(_))
    ));

    let bomb = pdf_with_object_stream(0, Some(64 << 20));
    assert!(
        bomb.len() < 200 * 1024,
        "the bomb is small: {} bytes",
        bomb.len()
    );
    match extract("bomb.pdf", &bomb, &limits) {
        Err(err @ ExtractError::PdfBomb(_)) => assert!(err.to_string().contains("4 MiB"), "{err}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
