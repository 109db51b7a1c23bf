//! Scanned PDF pages, read by OCR.
//!
//! `ingest_core::extract` reads a PDF's text layer and names the pages that
//! have none, or only garbage ([`Extracted::pages_without_text`]). Those
//! pages are read here, one file at a time per permit: each page is
//! rendered by Poppler's `pdftoppm` and read by Tesseract through their
//! command lines, its hOCR turned into Markdown by
//! [`ingest_core::extract::hocr_to_markdown`], and put back in its place
//! ([`Extracted::replace_pages`]), so every chunk keeps its page number.
//!
//! Every run of either tool is bounded ([`crate::process`]): CPU time per
//! page ([`OcrSettings::page_cpu`]), wall time (ten times that, for a tool
//! that waits on nothing or a machine too busy to give it the CPU), address
//! space, at nice 19 so OCR never slows a search, and killed if the job
//! stops. A file is bounded too, in pages and in wall time, since it holds
//! an OCR turn others wait for. A page that fails fails alone: the file
//! keeps its other pages and says which page could not be read, and why.
//!
//! OCR is on when both tools are installed ([`OcrStatus::detect`]); without
//! them a PDF without text is refused with a message that says what to
//! install.
//!
//! [`Extracted::pages_without_text`]: ingest_core::extract::Extracted::pages_without_text
//! [`Extracted::replace_pages`]: ingest_core::extract::Extracted::replace_pages

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ingest_core::extract::hocr_to_markdown;

use crate::process::{self, run_bounded, Bounds, ProcessError};

mod discovery;

pub use discovery::OcrStatus;

/// The resolution pages are rendered at: what OCR engines are trained on
/// (scans are made at 300 dpi).
pub const DPI: u32 = 300;

/// Wall time a page may take, as a multiple of its CPU time.
const WALL_PER_CPU: u32 = 10;

/// How OCR runs (from `--ocr-*`, see [`crate::config::OcrConfig`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OcrSettings {
    /// CPU time each tool may use on one page; it is killed past it, and
    /// past ten times as much wall time.
    pub page_cpu: Duration,
    /// Address space each tool may map, in bytes.
    pub memory_bytes: u64,
    /// Pages of one file read at most.
    pub max_pages: u32,
    /// Wall time for one file, all its pages together.
    pub file_time: Duration,
    /// Tesseract's languages, `+`-joined (`eng`, `eng+deu`).
    pub languages: String,
}

/// The default CPU seconds a tool may spend on a page (`--ocr-page-secs`).
pub const DEFAULT_PAGE_SECS: f64 = 120.0;
/// The default memory a tool may map, in MiB (`--ocr-memory-mib`).
pub const DEFAULT_MEMORY_MIB: u64 = 2048;
/// The default pages read of one file (`--ocr-max-pages`): a long
/// scanned manual, while a PDF of thousands of blank pages, a few hundred
/// bytes each, cannot hold OCR for long.
pub const DEFAULT_MAX_PAGES: u32 = 300;
/// The default wall seconds for one file (`--ocr-file-secs`).
pub const DEFAULT_FILE_SECS: f64 = 900.0;
/// The default languages (`--ocr-languages`).
pub const DEFAULT_LANGUAGES: &str = "eng";

impl Default for OcrSettings {
    fn default() -> Self {
        Self {
            page_cpu: Duration::from_secs_f64(DEFAULT_PAGE_SECS),
            memory_bytes: DEFAULT_MEMORY_MIB * 1024 * 1024,
            max_pages: DEFAULT_MAX_PAGES,
            file_time: Duration::from_secs_f64(DEFAULT_FILE_SECS),
            languages: DEFAULT_LANGUAGES.into(),
        }
    }
}

/// Tesseract and pdftoppm, found, with their bounds.
#[derive(Debug, Clone)]
pub struct Ocr {
    tesseract: PathBuf,
    pdftoppm: PathBuf,
    settings: OcrSettings,
    /// Files read at once, across every job: each runs one tool at a time
    /// on one core, so half the cores at most (searches keep the rest).
    permits: Arc<tokio::sync::Semaphore>,
}

/// Why a page (or a file's OCR) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    /// A tool ran out of a bound of the page's, or failed: its message,
    /// and the setting that sets the bound.
    #[error("{tool}{}", setting(tool))]
    Tool {
        #[from]
        tool: ProcessError,
    },
    #[error("its image could not be rendered ({0})")]
    Unrendered(String),
    #[error("OCR's working files: {0}")]
    Io(#[from] std::io::Error),
    #[error("Tesseract's hOCR output could not be read: {0}")]
    Hocr(String),
}

/// Which setting bounds what stopped a tool, for its message.
fn setting(err: &ProcessError) -> &'static str {
    match err {
        ProcessError::CpuTime { .. } | ProcessError::WallTime { .. } => " (see --ocr-page-secs)",
        ProcessError::Failed { .. } => " (see --ocr-memory-mib)",
        _ => "",
    }
}

/// One page's outcome: its Markdown (empty when the page holds no text
/// OCR can see), or why it could not be read.
#[derive(Debug)]
pub struct PageRead {
    pub page: u32,
    pub text: Result<String, OcrError>,
}

impl Ocr {
    fn new(tesseract: PathBuf, pdftoppm: PathBuf, settings: OcrSettings) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Self {
            tesseract,
            pdftoppm,
            settings,
            permits: Arc::new(tokio::sync::Semaphore::new((cores / 2).max(1))),
        }
    }

    /// Waits for a turn to read a file (see [`Self::permits`]).
    pub async fn turn(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.permits.clone().acquire_owned().await.ok()
    }

    /// Reads `pages` (1-based) of the PDF `pdf`, in order, on the calling
    /// thread (a blocking one: this runs processes and waits on them), at
    /// most [`OcrSettings::max_pages`] of them and within
    /// [`OcrSettings::file_time`]: pages past either bound are left out
    /// and named. Stops, killing the tool at work, once `stop` is set.
    /// Fails as a whole only when its working directory cannot be made.
    pub fn read_pages(
        &self,
        pdf: &[u8],
        pages: &[u32],
        stop: &AtomicBool,
    ) -> Result<Reading, OcrError> {
        let dir = tempfile::Builder::new().prefix("docshelf-ocr-").tempdir()?;
        let file = dir.path().join("doc.pdf");
        std::fs::write(&file, pdf)?;
        let max = self.settings.max_pages as usize;
        let deadline = Instant::now() + self.settings.file_time;
        let mut reading = Reading::default();
        if pages.len() > max {
            reading.left_out.push(LeftOut {
                pages: pages[max..].to_vec(),
                why: Bound::Pages(self.settings.max_pages),
            });
        }
        let pages = &pages[..pages.len().min(max)];
        for (i, &page) in pages.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                // Said once: the job was stopped, every page after is moot.
                tracing::info!(left = pages.len() - i, "OCR stopped with the job");
                reading.left_out.push(LeftOut {
                    pages: pages[i..].to_vec(),
                    why: Bound::Stopped,
                });
                break;
            }
            let span = tracing::debug_span!("ocr_page", page);
            let _entered = span.enter();
            let started = Instant::now();
            let text = self.read_page(dir.path(), &file, page, deadline, stop);
            if Instant::now() >= deadline && text.is_err() {
                // Cut short by the file's time, not by anything of its own.
                let secs = self.settings.file_time.as_secs();
                tracing::info!(
                    secs,
                    left = pages.len() - i,
                    "OCR ran out of the file's time"
                );
                reading.left_out.push(LeftOut {
                    pages: pages[i..].to_vec(),
                    why: Bound::Time(secs),
                });
                break;
            }
            match &text {
                Ok(text) => tracing::debug!(
                    secs = started.elapsed().as_secs_f64(),
                    bytes = text.len(),
                    "page read"
                ),
                Err(OcrError::Tool {
                    tool: ProcessError::Stopped,
                }) => {}
                Err(err) => tracing::warn!(%err, "a page could not be read by OCR"),
            }
            reading.reads.push(PageRead { page, text });
        }
        // Pages left out come in page order, whichever bound took them.
        reading.left_out.sort_by_key(|l| l.pages.first().copied());
        Ok(reading)
    }

    fn read_page(
        &self,
        dir: &Path,
        pdf: &Path,
        page: u32,
        deadline: Instant,
        stop: &AtomicBool,
    ) -> Result<String, OcrError> {
        let base = dir.join(format!("page-{page}"));
        let image = base.with_extension("png");
        let hocr = base.with_extension("hocr");
        let n = page.to_string();
        let rendered = self.run(
            "pdftoppm",
            Command::new(&self.pdftoppm)
                .args(["-f", &n, "-l", &n, "-r", &DPI.to_string()])
                .args(["-gray", "-png", "-singlefile"])
                .arg(pdf)
                .arg(&base),
            deadline,
            stop,
        );
        let render_errors = match rendered {
            Ok(stderr) => stderr,
            Err(err) => {
                let _ = std::fs::remove_file(&image);
                return Err(err);
            }
        };
        // pdftoppm can end well and still draw nothing: a page too large
        // to allocate ("Bogus memory allocation size") leaves a 1 × 1 image,
        // or a few bytes that are no image. Said as such, not as a page
        // without text.
        if !is_page_image(&image) {
            let _ = std::fs::remove_file(&image);
            let why = process::first_line(&render_errors).unwrap_or("pdftoppm wrote no image");
            return Err(OcrError::Unrendered(why.to_owned()));
        }
        let read = self.run(
            "tesseract",
            Command::new(&self.tesseract)
                .arg(&image)
                .arg(&base)
                .args(["-l", &self.settings.languages])
                .args(["--dpi", &DPI.to_string()])
                .arg("hocr")
                // One thread: a page at a time is one core's work, and
                // Tesseract's OpenMP threads are slower than one on a
                // shared machine.
                .env("OMP_THREAD_LIMIT", "1"),
            deadline,
            stop,
        );
        let _ = std::fs::remove_file(&image);
        read?;
        let markup = std::fs::read_to_string(&hocr);
        let _ = std::fs::remove_file(&hocr);
        let text = hocr_to_markdown(&markup?).map_err(OcrError::Hocr)?;
        // A page Poppler could not draw renders blank, or partly: said so
        // when OCR then finds nothing there.
        if text.trim().is_empty() && render_errors.contains("Error") {
            let why = render_errors
                .lines()
                .map(str::trim)
                .find(|l| l.contains("Error"))
                .unwrap_or_default();
            return Err(OcrError::Unrendered(why.to_owned()));
        }
        Ok(text)
    }

    /// Runs one tool within this server's bounds, and at most until
    /// `deadline` (the file's); its error output.
    fn run(
        &self,
        tool: &'static str,
        command: &mut Command,
        deadline: Instant,
        stop: &AtomicBool,
    ) -> Result<String, OcrError> {
        let bounds = Bounds {
            cpu: self.settings.page_cpu,
            wall: (self.settings.page_cpu * WALL_PER_CPU)
                .min(deadline.saturating_duration_since(Instant::now())),
            memory_bytes: self.settings.memory_bytes,
            file_bytes: None,
        };
        Ok(run_bounded(tool, command, &bounds, stop)?)
    }
}

/// What OCR did with a file's pages.
#[derive(Debug, Default)]
pub struct Reading {
    /// The pages it tried, in order.
    pub reads: Vec<PageRead>,
    /// The pages it did not try, and why.
    pub left_out: Vec<LeftOut>,
}

/// Pages OCR left out of a file.
#[derive(Debug)]
pub struct LeftOut {
    pub pages: Vec<u32>,
    pub why: Bound,
}

/// Which bound left pages out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--ocr-max-pages`.
    Pages(u32),
    /// `--ocr-file-secs`, in seconds.
    Time(u64),
    /// The job was stopped.
    Stopped,
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pages(max) => write!(
                f,
                "OCR reads at most {max} pages of one file (--ocr-max-pages)"
            ),
            Self::Time(secs) => write!(f, "OCR's {secs} s for one file ran out (--ocr-file-secs)"),
            Self::Stopped => f.write_str("the job was stopped"),
        }
    }
}

/// The fewest pixels a side of a rendered page has: a page at [`DPI`] is
/// hundreds of pixels on a side, so an image this small is a render that
/// failed, not a page.
const MIN_PAGE_PIXELS: u32 = 16;

/// Whether `path` holds a PNG image the size of a page: what Tesseract can
/// read.
fn is_page_image(path: &Path) -> bool {
    let mut head = [0u8; 24];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    if file.read_exact(&mut head).is_err() {
        return false;
    }
    // The signature, then the IHDR chunk's width and height.
    let width = u32::from_be_bytes([head[16], head[17], head[18], head[19]]);
    let height = u32::from_be_bytes([head[20], head[21], head[22], head[23]]);
    head.starts_with(b"\x89PNG\r\n\x1a\n")
        && &head[12..16] == b"IHDR"
        && width >= MIN_PAGE_PIXELS
        && height >= MIN_PAGE_PIXELS
}

/// The pages of `pages` as people read a list: `1–3, 5`.
pub fn page_list(pages: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &page in pages {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == page => *last = page,
            _ => runs.push((page, page)),
        }
    }
    runs.iter()
        .map(|&(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}–{last}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What OCR made of a file's pages.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The pages it read text on, for
    /// [`ingest_core::extract::Extracted::replace_pages`].
    pub texts: BTreeMap<u32, String>,
    /// The pages it did not, each with the error that stopped it (`None`:
    /// OCR found no text there).
    pub unread: Vec<(u32, Option<String>)>,
}

impl Outcome {
    pub fn of(reads: Vec<PageRead>) -> Self {
        let mut outcome = Self::default();
        for PageRead { page, text } in reads {
            match text {
                Ok(text) if !text.trim().is_empty() => {
                    outcome.texts.insert(page, text);
                }
                Ok(_) => outcome.unread.push((page, None)),
                Err(err) => outcome.unread.push((page, Some(err.to_string()))),
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_lists_read_as_ranges() {
        assert_eq!(page_list(&[1, 2, 3, 5, 7, 8]), "1–3, 5, 7–8");
        assert_eq!(page_list(&[4]), "4");
    }
}
