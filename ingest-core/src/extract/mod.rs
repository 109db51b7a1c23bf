//! Turning uploaded files into clean text.
//!
//! [`extract`] takes a file's name and bytes and returns one [`Extracted`]
//! document per file it holds: one for Markdown, text, HTML and PDF, many for
//! a ZIP (nested ZIPs included), each with the path it had in the archive.
//! Everything here is pure Rust, without I/O: the server hands bytes in
//! and gets text back, so every reader is tested on its own.

mod archive;
mod asciidoc;
mod docx;
mod dom;
mod hocr;
mod html;
pub mod links;
mod markdown_out;
mod mdx;
mod memory;
mod notebook;
mod pdf;
pub(crate) mod rst;
mod rustdoc;
mod tar;
mod text;
mod zip;

pub use self::archive::ArchiveLimits;
pub use self::hocr::hocr_to_markdown;
pub use self::html::whole_page_markdown;
pub use self::links::{page_links, PageLinks};
pub use self::memory::{declared_need, memory_estimate, MemoryGauge, Unmetered};
// For `crate::package`, which takes only a package's documentation.
pub(crate) use self::tar::{archive_files, extract_chosen, Pick};

pub use index_core::format::Format;

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
    /// Whether the page's own text could be used; a page without one is
    /// what an OCR engine may read (the server does, see
    /// [`Extracted::pages_without_text`]).
    pub layer: TextLayer,
}

/// What a PDF page's text layer gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextLayer {
    /// Text: the span holds it.
    #[default]
    Usable,
    /// No text at all (a scanned or drawn page, or text the reader could
    /// not decode): the span is empty.
    Missing,
    /// Text that is not text: mostly characters no font maps to a letter
    /// (private-use codes, control characters, U+FFFD), as fonts without a
    /// Unicode map give. The span holds it, for want of better.
    Garbage,
}

impl Extracted {
    /// The PDF pages (1-based, in order) whose text layer is missing or
    /// garbage: those an OCR engine should read.
    pub fn pages_without_text(&self) -> Vec<u32> {
        self.pages
            .iter()
            .filter(|p| p.layer != TextLayer::Usable)
            .map(|p| p.page)
            .collect()
    }

    /// Puts `texts` (page number → text read some other way, such as OCR)
    /// in place of those pages' text, keeping every page in its place and
    /// every span true; the pages replaced become [`TextLayer::Usable`].
    /// Pages not in the document are ignored.
    pub fn replace_pages(&mut self, texts: &std::collections::BTreeMap<u32, String>) {
        if texts.is_empty() || self.pages.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut pages = Vec::with_capacity(self.pages.len());
        for span in &self.pages {
            let (page_text, layer) = match texts.get(&span.page) {
                Some(replaced) => (replaced.trim(), TextLayer::Usable),
                None => (&self.text[span.start..span.end], span.layer),
            };
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            let start = text.len();
            text.push_str(page_text);
            pages.push(PageSpan {
                page: span.page,
                start,
                end: text.len(),
                layer,
            });
        }
        self.text = text;
        self.pages = pages;
    }

    /// The page that the byte offset `at` falls on, for PDFs.
    /// An offset in the blank line between two pages (where a chunk may
    /// start) falls on the page after it.
    pub fn page_at(&self, at: usize) -> Option<u32> {
        self.pages
            .iter()
            .find(|p| at >= p.start && at < p.end.max(p.start + 1))
            .or_else(|| self.pages.iter().find(|p| p.end > p.start && at < p.start))
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
    /// What the reading left out by rule (a package's pip requirements
    /// files, its site templates), said as the job's notes.
    pub notes: Vec<String>,
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
    #[error(
        "the Word document cannot be read (is it a .docx saved by Word or another editor?): {0}"
    )]
    Docx(String),
    #[error("the ZIP archive is damaged: {0}")]
    CorruptZip(String),
    #[error("the ZIP archive is refused: {0}")]
    HostileZip(String),
    #[error("the tar.gz archive is damaged (is the download complete?): {0}")]
    CorruptTar(String),
    #[error("the tar.gz archive is refused: {0}")]
    HostileTar(String),
    /// A package whose documentation alone has more files than an upload
    /// may hold.
    #[error("the package's documentation has {found} files, more than the {max} one upload may hold (--max-files)")]
    TooManyDocs { found: usize, max: usize },
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
            notes: Vec::new(),
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
        notes: Vec::new(),
    })
}

/// A PDF, read as [`extract_metered`] reads one, for a caller that reads
/// pages without text some other way (the server's OCR): a PDF whose pages
/// hold no text at all is no error here. Its pages come back empty, marked
/// [`TextLayer::Missing`], for the caller to fill with
/// [`Extracted::replace_pages`].
pub fn extract_pdf_pages(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extracted, ExtractError> {
    let doc = pdf::extract(bytes, limits.max_pdf_inflated_bytes, memory)?;
    Ok(named(doc, path))
}

/// `doc` as the document at `path`: its path, and a title from the file's
/// name where the content gave none.
fn named(mut doc: Extracted, path: &str) -> Extracted {
    doc.file_path = path.to_owned();
    if doc.title.is_none() {
        doc.title = title_from_path(path);
    }
    doc
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
    // reStructuredText, AsciiDoc and MDX are read as the Markdown they
    // convert to, so they get titles, headings and code blocks.
    let doc = match format {
        Format::Mdx => {
            let mdx = mdx::to_markdown(&text::decode(bytes)?);
            let mut doc = text::markdown(mdx.markdown.as_bytes())?;
            doc.warnings.extend(mdx.warning);
            doc
        }
        Format::Markdown => text::markdown(bytes)?,
        Format::Rst => {
            let markdown = rst::to_markdown(&text::decode(bytes)?);
            text::markdown(markdown.as_bytes())?
        }
        Format::AsciiDoc => {
            let markdown = asciidoc::to_markdown(&text::decode(bytes)?);
            text::markdown(markdown.as_bytes())?
        }
        // Plain text that is reStructuredText (Sphinx projects such as
        // Django keep their pages as `.txt`) is read as such, so its
        // sections have heading paths.
        Format::Text => {
            let decoded = text::decode(bytes)?;
            if rst::looks_like_rst(&decoded) {
                text::markdown(rst::to_markdown(&decoded).as_bytes())?
            } else {
                text::plain(bytes)?
            }
        }
        Format::Html => html::to_markdown(bytes)?,
        Format::Pdf => {
            pdf::require_text(pdf::extract(bytes, limits.max_pdf_inflated_bytes, memory)?)?
        }
        Format::Notebook => text::markdown(notebook::to_markdown(bytes)?.as_bytes())?,
        Format::Docx => {
            let word = docx::to_markdown(path, bytes, limits, memory)?;
            let mut doc = text::markdown(word.markdown.as_bytes())?;
            if word.title.is_some() {
                doc.title = word.title;
            }
            doc
        }
        // Archives are expanded by their callers; one that gets here (a
        // caller that forced the format) is refused rather than a panic.
        Format::Zip | Format::TarGz => return Err(ExtractError::Unsupported(path.to_owned())),
    };
    Ok(named(doc, path))
}

/// Expands an archive found inside another, whichever kind each is: the
/// one place that knows every archive reader, so that `zip` and `tar` need
/// not know each other.
fn expand_nested(
    format: Format,
    path: &str,
    bytes: &[u8],
    depth: usize,
    prefix: &str,
    budget: &mut archive::Budget<'_>,
) -> Result<Extraction, ExtractError> {
    match format {
        Format::TarGz => tar::walk_tar(path, bytes, depth, prefix, budget, &mut tar::every_file)
            .map(|(out, _)| out),
        _ => zip::expand(path, bytes, depth, prefix, budget),
    }
}

/// Converts one archive entry's data, or expands it if it is an archive
/// itself, into `out`, giving back the `held` bytes when done: how ZIP and
/// tar entries alike become documents. Without a `format` the entry is
/// kept as its decoded text, unconverted (source code for
/// `crate::api_reference`).
fn keep(
    path: &str,
    format: Option<Format>,
    data: Vec<u8>,
    held: u64,
    depth: usize,
    budget: &mut archive::Budget<'_>,
    out: &mut Extraction,
) -> Result<(), ExtractError> {
    let limits = budget.limits;
    if let Some(format) = format.filter(|f| f.is_archive()) {
        // The nested archive is held while it is expanded, then freed.
        let nested = expand_nested(format, path, &data, depth + 1, &format!("{path}/"), budget)?;
        drop(data);
        budget.memory.shrink(held);
        out.documents.extend(nested.documents);
        out.skipped.extend(nested.skipped);
        return Ok(());
    }
    // Converting takes about as much again as the entry while it runs.
    let converting = data.len() as u64;
    budget
        .memory
        .grow(converting)
        .map_err(ExtractError::OutOfMemory)?;
    let extracted = match format {
        Some(format) => extract_one(path, format, &data, limits, budget.memory),
        None => text::decode(&data).map(|text| Extracted {
            file_path: path.to_owned(),
            title: None,
            description: None,
            text,
            pages: Vec::new(),
            warnings: Vec::new(),
        }),
    };
    drop(data);
    budget.memory.shrink(held + converting);
    match extracted {
        Ok(doc) => {
            // What is kept is the text, until the job is done with it.
            let text = doc.text.len() as u64;
            budget.text += text;
            if budget.text > limits.max_text_bytes {
                return Err(ExtractError::TooMuchText(limits.max_text_bytes));
            }
            budget
                .memory
                .grow(text)
                .map_err(ExtractError::OutOfMemory)?;
            out.documents.push(doc);
        }
        Err(err @ ExtractError::OutOfMemory(_)) => return Err(err),
        Err(err) => out.skipped.push(Skipped {
            file_path: path.to_owned(),
            reason: err.to_string(),
        }),
    }
    Ok(())
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

/// Runs a third-party parser, turning a panic into an error: a hostile
/// file must fail alone (with `fallback` as the reason when the panic
/// carries none), not take its upload down with it.
pub(crate) fn guard<T>(fallback: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| fallback.to_owned())
    })
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

    /// A small document in each text format, with its title.
    fn sample(format: Format) -> Option<&'static [u8]> {
        Some(match format {
            Format::Markdown | Format::Mdx => b"# Kestrel guide\n\nHow to fly.\n",
            Format::Text => b"Kestrel guide.\n\nHow to fly.\n",
            Format::Rst => b"Kestrel guide\n=============\n\nHow to fly.\n",
            Format::AsciiDoc => b"= Kestrel guide\n\nHow to fly.\n",
            Format::Html => b"<html><body><h1>Kestrel guide</h1><p>How to fly.</p></body></html>",
            Format::Notebook => {
                br##"{"cells":[{"cell_type":"markdown","metadata":{},"source":["# Kestrel guide\n","How to fly."]}],"metadata":{},"nbformat":4,"nbformat_minor":5}"##
            }
            Format::Pdf | Format::Docx | Format::Zip | Format::TarGz => return None,
        })
    }

    #[test]
    fn every_extension_of_every_format_is_read_by_its_reader() {
        let limits = ArchiveLimits::default();
        for format in Format::ALL {
            for ext in format.extensions() {
                let path = format!("docs/guide.{ext}");
                match sample(format) {
                    Some(bytes) => {
                        let read = extract(&path, bytes, &limits)
                            .unwrap_or_else(|e| panic!("{path}: {e}"));
                        let doc = &read.documents[0];
                        assert!(doc.text.contains("How to fly"), "{path}: {doc:?}");
                        if format != Format::Text {
                            assert_eq!(doc.title.as_deref(), Some("Kestrel guide"), "{path}");
                        }
                    }
                    // Binary formats: whatever a reader says of bytes that
                    // are not such a file, it is not "unsupported".
                    None => {
                        let err = extract(&path, b"not really", &limits);
                        assert!(
                            !matches!(err, Err(ExtractError::Unsupported(_))),
                            "{path}: {err:?}"
                        );
                    }
                }
            }
        }
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
                    layer: TextLayer::Usable,
                },
                PageSpan {
                    page: 2,
                    start: 5,
                    end: 8,
                    layer: TextLayer::Usable,
                },
            ],
            warnings: vec![],
        };
        assert_eq!(doc.page_at(0), Some(1));
        assert_eq!(doc.page_at(5), Some(2));
        assert_eq!(doc.page_at(7), Some(2));

        // Between two pages' text: the page after.
        let gap = Extracted {
            text: "one\n\ntwo".into(),
            pages: vec![
                PageSpan {
                    page: 1,
                    start: 0,
                    end: 3,
                    layer: TextLayer::Usable,
                },
                PageSpan {
                    page: 2,
                    start: 5,
                    end: 8,
                    layer: TextLayer::Usable,
                },
            ],
            ..doc
        };
        assert_eq!(gap.page_at(2), Some(1));
        assert_eq!(gap.page_at(3), Some(2));
        assert_eq!(gap.page_at(4), Some(2));
        assert_eq!(gap.page_at(6), Some(2));
    }

    #[test]
    fn pages_read_by_ocr_take_their_place_and_spans_stay_true() {
        let span = |page, start, end, layer| PageSpan {
            page,
            start,
            end,
            layer,
        };
        let mut doc = Extracted {
            file_path: "scan.pdf".into(),
            title: None,
            description: None,
            text: "one\n\n\n\n\u{e000}\u{e001}".into(),
            pages: vec![
                span(1, 0, 3, TextLayer::Usable),
                span(2, 5, 5, TextLayer::Missing),
                span(3, 7, 13, TextLayer::Garbage),
            ],
            warnings: vec![],
        };
        assert_eq!(doc.pages_without_text(), vec![2, 3]);
        let texts = [
            (2, "## Two\n\nsecond page\n".to_owned()),
            (9, "nowhere".into()),
        ];
        doc.replace_pages(&texts.into_iter().collect());
        assert_eq!(doc.text, "one\n\n## Two\n\nsecond page\n\n\u{e000}\u{e001}");
        assert_eq!(doc.pages_without_text(), vec![3]);
        for (page, want) in [
            (1, "one"),
            (2, "## Two\n\nsecond page"),
            (3, "\u{e000}\u{e001}"),
        ] {
            let span = doc.pages[page - 1];
            assert_eq!(&doc.text[span.start..span.end], want);
        }
        assert_eq!(doc.page_at(doc.text.find("second").unwrap()), Some(2));
    }
}
