//! MDX, reStructuredText, AsciiDoc and Word extraction against real files,
//! fetched from package registries at test time and pinned
//! (`scripts/fetch-fixture.sh`; cached in `~/.cache/docshelf/fixtures`,
//! never committed):
//!
//! - MDX: the Docusaurus site template's pages, from the create-docusaurus
//!   3.10.2 npm tarball (sha256-checked), read through the tar.gz path as
//!   an upload of the tarball is;
//! - reStructuredText: Jinja's Sphinx docs, from the jinja2 3.1.6 sdist on
//!   PyPI (sha256-checked), read the same way;
//! - AsciiDoc: the README of Asciidoctor's reveal.js converter, from the
//!   @asciidoctor/reveal.js 5.2.0 npm tarball (sha256-checked);
//! - Word: a document written by python-docx 1.2.0 (its wheel
//!   sha256-checked) with Word's own styles, numbering and table.
//!
//! A fixture that cannot be had (no network, a changed upload) fails the
//! test with the script's message; it never passes without its file.

use std::path::PathBuf;
use std::process::Command;

use ingest_core::chunk::{chunk_document, ChunkConfig};
use ingest_core::extract::{extract, ArchiveLimits, Extracted};

fn script() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../scripts/fetch-fixture.sh")
}

/// Runs `scripts/fetch-fixture.sh ARGS` and returns the path it prints.
fn fixture(args: &[&str]) -> PathBuf {
    let out = Command::new("bash")
        .arg(script())
        .args(args)
        .output()
        .expect("bash runs scripts/fetch-fixture.sh");
    assert!(
        out.status.success(),
        "scripts/fetch-fixture.sh {} failed (the test needs its pinned file):\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8 path");
    PathBuf::from(stdout.lines().last().expect("a path").trim())
}

/// The text outside code (fenced blocks and inline spans), where markup
/// noise must not be.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let ticks: String = trimmed.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(open) if ticks.len() >= open.len() && trimmed.trim() == ticks => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                // Inline code spans out: every other stretch between backticks.
                for (i, part) in line.split('`').enumerate() {
                    if i % 2 == 0 {
                        out.push_str(part);
                    }
                }
                out.push('\n');
            }
        }
    }
    out
}

fn docusaurus_pages() -> Vec<Extracted> {
    let archive = fixture(&["create-docusaurus"]);
    let bytes = std::fs::read(&archive).expect("the tarball is readable");
    let extraction = extract(
        "create-docusaurus-3.10.2.tgz",
        &bytes,
        &ArchiveLimits::default(),
    )
    .expect("the tarball extracts");
    extraction
        .documents
        .into_iter()
        .filter(|d| d.file_path.ends_with(".mdx"))
        .collect()
}

#[test]
fn every_docusaurus_template_page_reads_as_mdx_without_its_markup() {
    let pages = docusaurus_pages();
    assert_eq!(pages.len(), 14, "the template's .mdx pages");
    for doc in &pages {
        let name = &doc.file_path;
        assert!(doc.warnings.is_empty(), "{name}: {:?}", doc.warnings);
        assert!(
            doc.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{name}: no title"
        );
        let prose = prose(&doc.text);
        for noise in [
            "{/*",
            "*/}",
            "import ",
            "export ",
            ":::",
            "<Highlight",
            "<button",
            "onClick",
            "sidebar_position",
        ] {
            assert!(
                !prose.contains(noise),
                "{name}: {noise:?} is in the text:\n{}",
                doc.text
            );
        }
        assert!(
            !chunk_document(doc, &ChunkConfig::default()).is_empty(),
            "{name}: no chunks"
        );
    }
}

#[test]
fn the_markdown_features_page_keeps_headings_code_and_admonitions() {
    let pages = docusaurus_pages();
    let doc = pages
        .iter()
        .find(|d| {
            d.file_path
                .ends_with("docs/tutorial-basics/markdown-features.mdx")
        })
        .expect("markdown-features.mdx");
    assert_eq!(doc.title.as_deref(), Some("Markdown Features"));
    let text = &doc.text;
    // Heading ids (`{/* #my-heading-id */}`) leave the headings.
    assert!(text.contains("\n## Headings\n"), "{text}");
    assert!(text.contains("\n### Heading Ids\n"), "{text}");
    // Code blocks whole, with their language, the nested fence included.
    assert!(
        text.contains(
            "```jsx\nfunction HelloDocusaurus() {\n  return <h1>Hello, Docusaurus!</h1>;\n}\n```"
        ),
        "{text}"
    );
    assert!(
        text.contains("````md\n```jsx title=\"src/components/HelloDocusaurus.js\"\n"),
        "{text}"
    );
    assert!(
        text.contains("```md\n### Heading Ids {/_ #my-custom-id _/}\n```"),
        "{text}"
    );
    assert!(
        text.contains("```text\n// highlight-start\n---\nid: my-doc-id\n"),
        "{text}"
    );
    // Admonitions by their titles; the exported component's text stays.
    assert!(
        text.contains("**My tip:**\nUse this awesome feature option"),
        "{text}"
    );
    assert!(
        text.contains("**Take care:**\nThis action is dangerous"),
        "{text}"
    );
    assert!(text.contains("This is Docusaurus green !"), "{text}");
    assert!(!prose(text).contains("backgroundColor"), "{text}");

    let chunks = chunk_document(doc, &ChunkConfig::default());
    let under = |needle: &str| {
        chunks
            .iter()
            .find(|c| c.text.contains(needle))
            .unwrap_or_else(|| panic!("no chunk holds {needle:?}"))
            .heading_path_display()
    };
    assert_eq!(
        under("This action is dangerous"),
        "Markdown Features > Admonitions"
    );
    assert_eq!(
        under("explicit anchor id"),
        "Markdown Features > Headings > Heading Ids"
    );
}

#[test]
fn a_blog_post_takes_its_front_matter_title_and_drops_its_truncate_marker() {
    let pages = docusaurus_pages();
    let doc = pages
        .iter()
        .find(|d| d.file_path.ends_with("blog/2021-08-01-mdx-blog-post.mdx"))
        .expect("the MDX blog post");
    assert_eq!(doc.title.as_deref(), Some("MDX Blog Post"));
    assert!(!doc.text.contains("truncate"), "{}", doc.text);
    assert!(
        doc.text.contains("**Tip:**\nUse the power of React"),
        "{}",
        doc.text
    );
    // The button's label is text; its markup only in the code block.
    assert!(prose(&doc.text).contains("Click me!"), "{}", doc.text);
    assert!(
        doc.text.contains(
            "```js\n<button onClick={() => alert('button clicked!')}>Click me!</button>\n```"
        ),
        "{}",
        doc.text
    );
}

#[test]
fn a_page_that_is_not_valid_mdx_is_kept_with_a_warning() {
    let page = b"---\ntitle: Legacy\n---\nimport X from './x'\n\n# Setup {#setup}\n\n<Tabs>\nUnclosed component, prose kept.\n";
    let doc = extract("docs/legacy.mdx", page, &ArchiveLimits::default())
        .expect("extracts")
        .documents
        .remove(0);
    assert_eq!(doc.title.as_deref(), Some("Legacy"));
    assert_eq!(doc.text, "# Setup\n\nUnclosed component, prose kept.\n");
    assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
    assert!(
        doc.warnings[0].contains("not valid MDX"),
        "{:?}",
        doc.warnings
    );
}

#[test]
fn a_word_document_from_python_docx_reads_as_structured_markdown() {
    let out = std::env::temp_dir().join(format!("docshelf-word-{}.docx", std::process::id()));
    let path = fixture(&["word", out.to_str().expect("utf-8 temp path")]);
    let bytes = std::fs::read(&path).expect("the generated .docx");
    let _ = std::fs::remove_file(&path);
    let doc = extract("guides/operations.docx", &bytes, &ArchiveLimits::default())
        .expect("the .docx extracts")
        .documents
        .remove(0);
    assert_eq!(doc.file_path, "guides/operations.docx");
    // The Title paragraph, not core.xml's dc:title, and not in the body.
    assert_eq!(doc.title.as_deref(), Some("Shelf Operations Guide"));
    assert_eq!(
        doc.text,
        "# Installation\n\
         \n\
         Shelf indexes documentation. It is **fast** and *self-hosted*.\n\
         \n\
         - Download the release archive\n    \
         - Check its checksum\n\
         - Unpack it anywhere\n\
         1. Start the server\n\
         2. Open the dashboard\n\
         \n\
         ## Configuration\n\
         \n\
         Every setting has a default:\n\
         \n\
         | Setting | Default | Meaning |\n\
         | --- | --- | --- |\n\
         | port | 8080 | Where the server listens |\n\
         | data | ./data | Where the index is stored |\n\
         \n\
         ```\n\
         shelf serve \\\n    \
         --port 8080 --data ./data\n\
         ```\n\
         \n\
         Then run `shelf ingest docs/` to index a folder.\n\
         \n\
         # Troubleshooting\n\
         \n\
         > A port in use stops the server at start.\n\
         \n\
         Pick another port with the setting above.\n"
    );
    // Small chunks, so that each section's blocks start chunks of their own.
    let small = ChunkConfig {
        target: 120,
        overlap: 0,
        hard_max: 6000,
    };
    let chunks = chunk_document(&doc, &small);
    let under = |needle: &str| {
        chunks
            .iter()
            .find(|c| c.text.contains(needle))
            .unwrap_or_else(|| panic!("no chunk holds {needle:?}"))
            .heading_path_display()
    };
    assert_eq!(under("Download the release"), "Installation");
    assert_eq!(
        under("Where the server listens"),
        "Installation > Configuration"
    );
    assert_eq!(under("--port 8080"), "Installation > Configuration");
    assert_eq!(under("Pick another port"), "Troubleshooting");

    // Inside a ZIP upload, the same document.
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file(
        "manuals/operations.docx",
        zip::write::SimpleFileOptions::default(),
    )
    .expect("zip entry");
    std::io::Write::write_all(&mut zip, &bytes).expect("zip write");
    let archive = zip.finish().expect("zip").into_inner();
    let extraction = extract("manuals.zip", &archive, &ArchiveLimits::default()).expect("zip");
    assert!(extraction.skipped.is_empty(), "{:?}", extraction.skipped);
    assert_eq!(extraction.documents.len(), 1);
    assert_eq!(extraction.documents[0].file_path, "manuals/operations.docx");
    assert_eq!(extraction.documents[0].text, doc.text);
}

/// The documents of a pinned package archive whose path ends with `suffix`.
fn archive_document(fixture_name: &str, archive_name: &str, suffix: &str) -> Extracted {
    let archive = fixture(&[fixture_name]);
    let bytes = std::fs::read(&archive).expect("the archive is readable");
    extract(archive_name, &bytes, &ArchiveLimits::default())
        .expect("the archive extracts")
        .documents
        .into_iter()
        .find(|d| d.file_path.ends_with(suffix))
        .unwrap_or_else(|| panic!("{suffix} is not in {archive_name}"))
}

/// Every chunk's heading path, joined with " › ".
fn heading_paths(doc: &Extracted) -> Vec<String> {
    chunk_document(doc, &ChunkConfig::default())
        .iter()
        .map(|c| c.heading_path.join(" › "))
        .collect()
}

#[test]
fn a_sphinx_page_keeps_its_sections_code_and_role_text_without_directives() {
    let doc = archive_document("jinja2", "jinja2-3.1.6.tar.gz", "docs/sandbox.rst");
    assert_eq!(doc.title.as_deref(), Some("Sandbox"));
    let paths = heading_paths(&doc);
    // (Its "API" section is only autodoc directives, which are dropped.)
    for section in ["Security Considerations", "Operator Intercepting"] {
        assert!(
            paths.iter().any(|p| p.ends_with(section)),
            "no chunk under {section}: {paths:?}"
        );
    }
    let text = &doc.text;
    // The session example is a code block whole, with its language.
    assert!(
        text.contains("```pycon\n>>> from jinja2.sandbox import SandboxedEnvironment\n"),
        "{text}"
    );
    assert!(text.contains("```python\n"), "{text}");
    // Roles are their text; directives are not prose.
    assert!(text.contains("is_safe_attribute"), "{text}");
    let prose = prose(text);
    for noise in [
        ".. code-block::",
        ".. autoclass::",
        ".. module::",
        ":meth:",
        ":class:",
        ":attr:",
        "=======",
    ] {
        assert!(!prose.contains(noise), "{noise:?} is in the text:\n{text}");
    }

    let intro = archive_document("jinja2", "jinja2-3.1.6.tar.gz", "docs/intro.rst");
    assert_eq!(intro.title.as_deref(), Some("Introduction"));
    let paths = heading_paths(&intro);
    assert!(
        paths
            .iter()
            .any(|p| p.ends_with("Installation › Dependencies")),
        "{paths:?}"
    );
}

#[test]
fn an_asciidoc_readme_keeps_its_title_and_sections_without_attribute_markup() {
    let doc = archive_document(
        "asciidoctor-revealjs",
        "asciidoctor-reveal.js-5.2.0.tgz",
        "README.adoc",
    );
    assert_eq!(
        doc.title.as_deref(),
        Some("Reveal.js converter for Asciidoctor")
    );
    // Its sections are a few lines each, so chunks span several: the
    // headings are checked in the text, and one chunk's path.
    for section in ["Documentation", "Contributing", "Copyright and Licensing"] {
        assert!(
            doc.text.contains(&format!("\n## {section}\n")),
            "no section {section}:\n{}",
            doc.text
        );
    }
    let paths = heading_paths(&doc);
    assert!(
        paths
            .iter()
            .any(|p| p == "Reveal.js converter for Asciidoctor › Contributing"),
        "{paths:?}"
    );
    let prose = prose(&doc.text);
    for noise in [
        ":toc:",
        ":url-project-repo:",
        "{url-",
        ":note-caption:",
        "\n= ",
    ] {
        assert!(
            !prose.contains(noise),
            "{noise:?} is in the text:\n{}",
            doc.text
        );
    }
}
