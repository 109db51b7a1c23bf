//! ZIP uploads: nested archives, reported skips, and hostile archives refused.

mod common;

use std::io::{Cursor, Write};

use ingest_core::extract::{extract, ArchiveLimits, ExtractError};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

fn build(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, data) in entries {
        writer.start_file(*name, options).expect("start entry");
        writer.write_all(data).expect("write entry");
    }
    writer.finish().expect("finish").into_inner()
}

fn limits() -> ArchiveLimits {
    ArchiveLimits::default()
}

#[test]
fn entries_keep_their_paths_nested_zips_included_and_unsupported_are_reported() {
    let inner = build(&[("guide/intro.md", b"# Intro\n\nHello.\n")]);
    let outer = build(&[
        ("docs/readme.md", b"# Readme\n\nTop level.\n"),
        (
            "docs/page.html",
            b"<html><head><title>P</title></head><body><h1>Page</h1><p>Text</p></body></html>",
        ),
        ("docs/logo.png", b"\x89PNG...."),
        ("bundles/more.zip", &inner),
    ]);
    let out = extract("upload.zip", &outer, &limits()).expect("extracts");
    let mut paths: Vec<&str> = out.documents.iter().map(|d| d.file_path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "bundles/more.zip/guide/intro.md",
            "docs/page.html",
            "docs/readme.md"
        ]
    );
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].file_path, "docs/logo.png");
    assert!(out.skipped[0].reason.contains("unsupported"));
}

#[test]
fn a_bad_entry_is_skipped_with_its_reason_and_the_rest_extracts() {
    let pdf = std::fs::read(common::shared_data().join("pdf/03-invalid.pdf"))
        .expect("shared corrupt pdf");
    let archive = build(&[("broken.pdf", &pdf), ("ok.md", b"fine\n")]);
    let out = extract("mixed.zip", &archive, &limits()).expect("extracts");
    assert_eq!(out.documents.len(), 1);
    assert_eq!(out.skipped[0].file_path, "broken.pdf");
    assert!(
        out.skipped[0].reason.contains("damaged"),
        "{}",
        out.skipped[0].reason
    );
}

fn assert_hostile(result: Result<ingest_core::extract::Extraction, ExtractError>, needle: &str) {
    match result {
        Err(ExtractError::HostileZip(reason)) => {
            assert!(
                reason.contains(needle),
                "{reason:?} should mention {needle:?}"
            )
        }
        other => panic!("expected a refusal mentioning {needle:?}, got {other:?}"),
    }
}

#[test]
fn path_traversal_and_absolute_paths_are_refused() {
    let archive = build(&[("ok.md", b"fine"), ("../../etc/evil.md", b"pwned")]);
    assert_hostile(extract("t.zip", &archive, &limits()), "outside the archive");
    let archive = build(&[("/etc/evil.md", b"pwned")]);
    assert_hostile(extract("t.zip", &archive, &limits()), "outside the archive");
}

#[test]
fn too_many_entries_are_refused_naming_the_limit() {
    let names: Vec<String> = (0..11).map(|i| format!("f{i}.md")).collect();
    let entries: Vec<(&str, &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), b"x".as_slice()))
        .collect();
    let archive = build(&entries);
    let small = ArchiveLimits {
        max_entries: 10,
        ..limits()
    };
    assert_hostile(extract("many.zip", &archive, &small), "max_entries");
}

#[test]
fn archives_expanding_past_the_size_limit_are_refused() {
    let data = "word ".repeat(20_000);
    let archive = build(&[("a.md", data.as_bytes()), ("b.md", data.as_bytes())]);
    let small = ArchiveLimits {
        max_total_bytes: 150_000,
        ..limits()
    };
    assert_hostile(extract("big.zip", &archive, &small), "max_total_bytes");
}

#[test]
fn a_zip_bomb_is_refused_by_its_compression_ratio() {
    let zeros = vec![b'a'; 64 * 1024 * 1024];
    let archive = build(&[("bomb.txt", &zeros)]);
    assert!(
        archive.len() < 1024 * 1024,
        "the test archive should be tiny"
    );
    assert_hostile(extract("bomb.zip", &archive, &limits()), "zip bomb");
}

#[test]
fn nesting_past_the_depth_limit_is_refused() {
    let mut archive = build(&[("leaf.md", b"deep")]);
    for level in 0..5 {
        let name = format!("level{level}.zip");
        archive = build(&[(name.as_str(), &archive)]);
    }
    assert_hostile(extract("deep.zip", &archive, &limits()), "deep");
}

#[test]
fn a_damaged_archive_is_a_clear_error() {
    let err =
        extract("broken.zip", b"PK\x03\x04 not really a zip", &limits()).expect_err("damaged");
    assert!(matches!(err, ExtractError::CorruptZip(_)), "{err:?}");
}
