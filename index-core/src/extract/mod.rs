//! Turning uploaded files into clean text.
//!
//! [`extract`] takes a file's name and bytes and returns one [`Extracted`]
//! document per file it holds: one for Markdown, text, HTML and PDF, many for
//! a ZIP (nested ZIPs included), each with the path it had in the archive.
//! Everything here is pure Rust so the dashboard (wasm32) can run the same
//! code the server does.

mod asciidoc;
mod html;
pub mod links;
mod memory;
mod notebook;
mod pdf;
mod rst;
mod tar;
mod text;
mod zip;

pub use self::html::whole_page_markdown;
pub use self::links::{page_links, PageLinks};
pub use self::memory::{memory_estimate, MemoryGauge, Unmetered};
pub use self::zip::ArchiveLimits;
// For `crate::package`, which takes only a package's documentation.
pub(crate) use self::tar::{archive_files, extract_chosen, Pick};

pub use crate::format::Format;

/// One document's text, ready to chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// The document's path: the upload's file name, or its path inside an archive.
    pub file_path: String,
    /// The title: from front matter, `<title>`/`<h1>`, PDF metadata or a
    /// first heading, else made from the file name, so every document has one.
    pub title: Option<String>,
    /// A one-line summary the document carries as metadata (front matter's
    /// `description`, `<meta name="description">`), which is not in `text`.
    pub description: Option<String>,
    /// Clean text; Markdown for Markdown and HTML input.
    pub text: String,
    /// For PDFs: where each page's text lies in `text` (byte offsets).
    pub pages: Vec<PageSpan>,
    /// Things a user should know that did not stop extraction (e.g. an empty page).
    pub warnings: Vec<String>,
}

/// The byte range of one PDF page's text within [`Extracted::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// 1-based page number.
    pub page: u32,
    pub start: usize,
    pub end: usize,
}

impl Extracted {
    /// The page that the byte offset `at` falls on, for PDFs.
    pub fn page_at(&self, at: usize) -> Option<u32> {
        self.pages
            .iter()
            .find(|p| at >= p.start && at < p.end.max(p.start + 1))
            .or_else(|| self.pages.last().filter(|p| at >= p.start))
            .map(|p| p.page)
    }
}

/// An archive entry that was not extracted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub file_path: String,
    pub reason: String,
}

/// Everything one upload produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub documents: Vec<Extracted>,
    /// Archive entries left out (unsupported types, unreadable entries).
    pub skipped: Vec<Skipped>,
    /// Whether the upload was an archive, whose documents are its entries.
    pub archive: bool,
}

/// Why a file could not be extracted. Each message names the file's problem
/// in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("unsupported file type: {0} (docshelf reads {formats})", formats = Format::summary())]
    Unsupported(String),
    #[error("the text is not UTF-8 and its encoding could not be recognised")]
    UnknownEncoding,
    #[error("the PDF is damaged and cannot be read: {0}")]
    CorruptPdf(String),
    #[error("the PDF is encrypted with a password; upload a copy without one")]
    EncryptedPdf,
    #[error(
        "the PDF's compressed streams inflate to more than {} MiB; refused as a decompression bomb",
        .0 / (1024 * 1024)
    )]
    PdfBomb(u64),
    #[error("the PDF has no text layer (scanned or drawn pages?); nothing to index")]
    NoTextInPdf,
    #[error("the HTML could not be converted: {0}")]
    Html(String),
    #[error("the notebook is not a Jupyter notebook docshelf can read: {0}")]
    Notebook(String),
    #[error("the ZIP archive is damaged: {0}")]
    CorruptZip(String),
    #[error("the ZIP archive is refused: {0}")]
    HostileZip(String),
    #[error("the tar.gz archive is damaged (is the download complete?): {0}")]
    CorruptTar(String),
    #[error("the tar.gz archive is refused: {0}")]
    HostileTar(String),
    /// The archive's documents hold more text than one upload may: it is
    /// refused as soon as that is known, not once all of it is in memory.
    #[error(
        "the archive's documents come to more than {} MiB of text, the most one upload may hold; upload them in several parts",
        .0 / (1024 * 1024)
    )]
    TooMuchText(u64),
    /// The memory the extraction needed was not there (the server's
    /// extraction budget, shared by every upload, is spent).
    #[error("{0}")]
    OutOfMemory(String),
}

/// Extracts every document in the file `path` with contents `bytes`.
///
/// A plain file yields one document or an error. A ZIP yields its supported
/// entries; entries of other types land in [`Extraction::skipped`], and a
/// hostile archive (path traversal, too many entries, too large, a zip bomb)
/// is refused whole so nothing of it is stored.
pub fn extract(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
) -> Result<Extraction, ExtractError> {
    extract_metered(path, bytes, limits, &mut Unmetered)
}

/// As [`extract`], asking `memory` for the bytes it holds before it holds
/// them (decompressed entries, nested archives, the documents' text), so
/// that a server can bound what all its extractions hold at once. When
/// `memory` refuses, extraction stops with [`ExtractError::OutOfMemory`].
pub fn extract_metered(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extraction, ExtractError> {
    match Format::from_path(path) {
        Some(Format::Zip) => zip::extract_archive(path, bytes, limits, memory),
        Some(Format::TarGz) => tar::extract_archive(path, bytes, limits, memory),
        Some(format) => Ok(Extraction {
            documents: vec![extract_one(path, format, bytes, limits, memory)?],
            skipped: Vec::new(),
            archive: false,
        }),
        None => Err(ExtractError::Unsupported(path.to_owned())),
    }
}

/// As [`extract_metered`], read as `format` whatever `path` says: a page
/// fetched from a site is named by its URL, which often has no extension,
/// and its `Content-Type` tells what it is.
pub fn extract_as(
    path: &str,
    format: Format,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extraction, ExtractError> {
    if Format::from_path(path) == Some(format) {
        return extract_metered(path, bytes, limits, memory);
    }
    if format.is_archive() {
        // Archives are read by their names' extensions only.
        return Err(ExtractError::Unsupported(path.to_owned()));
    }
    Ok(Extraction {
        documents: vec![extract_one(path, format, bytes, limits, memory)?],
        skipped: Vec::new(),
        archive: false,
    })
}

/// Extracts a single non-archive document.
///
/// Converting text takes about as much again as the input while it runs
/// (`memory_estimate` counts that); a PDF's inflated streams are asked of
/// `memory` once counted, before the reader decodes them.
fn extract_one(
    path: &str,
    format: Format,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extracted, ExtractError> {
    let mdx = path.to_ascii_lowercase().ends_with(".mdx");
    // reStructuredText and AsciiDoc are text to `Format`, but read as the
    // Markdown they convert to, so they get titles, headings and code blocks.
    let extension = path
        .rsplit(['/', '\\'])
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase());
    let mut doc = match format {
        Format::Markdown => text::markdown(bytes, mdx)?,
        Format::Text if matches!(extension.as_deref(), Some("rst" | "rest")) => {
            let markdown = rst::to_markdown(&text::decode(bytes)?);
            text::markdown(markdown.as_bytes(), false)?
        }
        Format::Text if matches!(extension.as_deref(), Some("adoc" | "asciidoc" | "asc")) => {
            let markdown = asciidoc::to_markdown(&text::decode(bytes)?);
            text::markdown(markdown.as_bytes(), false)?
        }
        Format::Text => text::plain(bytes)?,
        Format::Html => html::to_markdown(bytes)?,
        Format::Pdf => pdf::extract(bytes, limits.max_pdf_inflated_bytes, memory)?,
        Format::Notebook => text::markdown(notebook::to_markdown(bytes)?.as_bytes(), false)?,
        // Archives are expanded by their callers; one that gets here (a
        // caller that forced the format) is refused rather than a panic.
        Format::Zip | Format::TarGz => return Err(ExtractError::Unsupported(path.to_owned())),
    };
    doc.file_path = path.to_owned();
    if doc.title.is_none() {
        doc.title = title_from_path(path);
    }
    Ok(doc)
}

/// A title made from a file name, for documents that name themselves nowhere
/// else: `guides/getting-started.md` → `getting started`. Documentation
/// file names are slugs of their subject; `index` and `README` pages take
/// their folder's name.
pub fn title_from_path(path: &str) -> Option<String> {
    let mut parts = path.rsplit(['/', '\\']);
    let file = parts.next()?;
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let stem = if matches!(
        stem.to_ascii_lowercase().as_str(),
        "index" | "readme" | "_index"
    ) {
        parts.next().unwrap_or(stem)
    } else {
        stem
    };
    let words: Vec<&str> = stem
        .split(|c: char| c == '-' || c == '_' || c == '.' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_the_extension_case_insensitively() {
        assert_eq!(Format::from_path("a/b/README.MD"), Some(Format::Markdown));
        assert_eq!(Format::from_path("x.htm"), Some(Format::Html));
        assert_eq!(Format::from_path("doc.pdf"), Some(Format::Pdf));
        assert_eq!(Format::from_path("docs.zip"), Some(Format::Zip));
        assert_eq!(Format::from_path("image.png"), None);
        assert_eq!(Format::from_path("Makefile"), None);
    }

    #[test]
    fn unsupported_files_are_named_in_the_error() {
        let err = extract("logo.png", b"\x89PNG", &ArchiveLimits::default()).unwrap_err();
        assert_eq!(err, ExtractError::Unsupported("logo.png".into()));
        assert!(err.to_string().contains(".pdf"));
    }

    #[test]
    fn every_document_gets_a_title() {
        let none = ArchiveLimits::default();
        let doc = &extract("guides/getting-started.txt", b"plain words", &none)
            .unwrap()
            .documents[0];
        assert_eq!(doc.title.as_deref(), Some("getting started"));
        assert_eq!(
            title_from_path("docs/caching/index.mdx").as_deref(),
            Some("caching")
        );
        assert_eq!(title_from_path("README.md").as_deref(), Some("README"));
        assert_eq!(
            title_from_path("git_cherry-pick.html").as_deref(),
            Some("git cherry pick")
        );
    }

    #[test]
    fn page_at_maps_offsets_to_pages() {
        let doc = Extracted {
            file_path: "a.pdf".into(),
            title: None,
            description: None,
            text: "one\n\ntwo".into(),
            pages: vec![
                PageSpan {
                    page: 1,
                    start: 0,
                    end: 5,
                },
                PageSpan {
                    page: 2,
                    start: 5,
                    end: 8,
                },
            ],
            warnings: vec![],
        };
        assert_eq!(doc.page_at(0), Some(1));
        assert_eq!(doc.page_at(5), Some(2));
        assert_eq!(doc.page_at(7), Some(2));
    }
}
