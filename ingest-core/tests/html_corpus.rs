//! HTML extraction over the whole git manual (190 real pages).

mod common;

use std::path::PathBuf;

use ingest_core::chunk::{chunk_document, ChunkConfig};
use ingest_core::extract::{extract, ArchiveLimits};

fn corpus() -> PathBuf {
    common::shared_data().join("eval/git-docs/corpus")
}

#[test]
fn every_git_manual_page_converts_to_clean_markdown() {
    let dir = corpus();
    let mut pages = 0;
    for entry in std::fs::read_dir(&dir).expect("the shared git-docs corpus is present") {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name")
            .to_owned();
        let bytes = std::fs::read(&path).expect("readable");
        let doc = extract(&name, &bytes, &ArchiveLimits::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .documents
            .remove(0);
        assert!(doc.title.is_some(), "{name}: no title");
        assert!(
            doc.text.len() > 200,
            "{name}: only {} bytes",
            doc.text.len()
        );
        for junk in ["<script", "</style>", "text/css", "</div>", "&nbsp;"] {
            assert!(!doc.text.contains(junk), "{name}: {junk} survived");
        }
        assert!(doc.text.contains("\n#"), "{name}: headings lost");
        let chunks = chunk_document(&doc, &ChunkConfig::default());
        assert!(!chunks.is_empty(), "{name}: no chunks");
        pages += 1;
    }
    assert_eq!(pages, 190);
}

#[test]
fn the_name_section_survives_as_text() {
    let path = corpus().join("git-add.html");
    let bytes = std::fs::read(path).expect("git-add.html");
    let doc = extract("git-add.html", &bytes, &ArchiveLimits::default())
        .expect("extracts")
        .documents
        .remove(0);
    assert!(
        doc.text.contains("git add"),
        "{}",
        &doc.text[..500.min(doc.text.len())]
    );
    assert!(
        doc.text.contains("```") || doc.text.contains("    "),
        "code/verbatim blocks kept"
    );
}
