//! Scanned PDF pages, read by OCR.
//!
//! `index_core::extract` reads a PDF's text layer and names the pages that
//! have none, or only garbage ([`Extracted::pages_without_text`]). Those
//! pages are read here, one file at a time per permit: each page is
//! rendered by Poppler's `pdftoppm` and read by Tesseract through their
//! command lines, its hOCR turned into Markdown (Tesseract's page
//! segmentation gives the reading order; lines set clearly larger than the
//! page's text become headings), and put back in its place
//! ([`Extracted::replace_pages`]), so every chunk keeps its page number.
//!
//! Every run of either tool is bounded: CPU time per page (`RLIMIT_CPU`,
//! [`OcrSettings::page_cpu`]), wall time (ten times that, for a tool that
//! waits on nothing or a machine too busy to give it the CPU), address
//! space (`RLIMIT_AS`), at nice 19 so OCR never slows a search, and killed
//! if the job stops. A page that fails fails alone: the file keeps its
//! other pages and says which page could not be read, and why.
//!
//! OCR is on when both tools are installed ([`OcrStatus::detect`]); without
//! them a PDF without text is refused, as before, with a message that says
//! what to install.
//!
//! [`Extracted::pages_without_text`]: index_core::extract::Extracted::pages_without_text
//! [`Extracted::replace_pages`]: index_core::extract::Extracted::replace_pages

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// The resolution pages are rendered at: what OCR engines are trained on
/// (scans are made at 300 dpi).
pub const DPI: u32 = 300;

/// Wall time a page may take, as a multiple of its CPU time.
const WALL_PER_CPU: u32 = 10;

/// The most of a tool's error output kept for a message.
const STDERR_KEPT: usize = 4096;

/// How OCR runs (from `--ocr-*`, see [`crate::config::OcrConfig`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OcrSettings {
    /// CPU time each tool may use on one page; it is killed past it, and
    /// past ten times as much wall time.
    pub page_cpu: Duration,
    /// Address space each tool may map, in bytes.
    pub memory_bytes: u64,
    /// Tesseract's languages, `+`-joined (`eng`, `eng+deu`).
    pub languages: String,
}

/// The default CPU seconds a tool may spend on a page (`--ocr-page-secs`).
pub const DEFAULT_PAGE_SECS: f64 = 120.0;
/// The default memory a tool may map, in MiB (`--ocr-memory-mib`).
pub const DEFAULT_MEMORY_MIB: u64 = 2048;
/// The default languages (`--ocr-languages`).
pub const DEFAULT_LANGUAGES: &str = "eng";

impl Default for OcrSettings {
    fn default() -> Self {
        Self {
            page_cpu: Duration::from_secs_f64(DEFAULT_PAGE_SECS),
            memory_bytes: DEFAULT_MEMORY_MIB * 1024 * 1024,
            languages: DEFAULT_LANGUAGES.into(),
        }
    }
}

/// Whether this server reads pages by OCR.
#[derive(Debug, Clone)]
pub enum OcrStatus {
    Ready(Ocr),
    /// Turned off (`--ocr false`).
    Off,
    /// A tool or a language's data is not installed: what is missing.
    Missing(String),
}

impl OcrStatus {
    /// Finds `tesseract` and `pdftoppm` on `PATH` and checks that
    /// Tesseract has every language asked for. `None` settings: off.
    /// Blocks for as long as `tesseract --list-langs` takes (bounded).
    pub fn detect(settings: Option<OcrSettings>) -> Self {
        let Some(settings) = settings else {
            return Self::Off;
        };
        let (Some(tesseract), Some(pdftoppm)) = (on_path("tesseract"), on_path("pdftoppm")) else {
            let missing = [
                ("tesseract", "tesseract-ocr"),
                ("pdftoppm", "poppler-utils"),
            ]
            .into_iter()
            .filter(|(tool, _)| on_path(tool).is_none())
            .map(|(tool, package)| format!("{tool} (Debian: {package})"))
            .collect::<Vec<_>>();
            return Self::Missing(format!("not installed: {}", missing.join(", ")));
        };
        let installed = match list_languages(&tesseract, &settings) {
            Ok(installed) => installed,
            Err(err) => return Self::Missing(format!("tesseract does not run: {err}")),
        };
        let absent: Vec<&str> = settings
            .languages
            .split('+')
            .filter(|l| !installed.iter().any(|i| i == l))
            .collect();
        if !absent.is_empty() {
            let packages: Vec<String> = absent
                .iter()
                .map(|l| format!("tesseract-ocr-{}", l.replace('_', "-").to_lowercase()))
                .collect();
            return Self::Missing(format!(
                "tesseract has no data for {} (Debian: {})",
                absent.join(", "),
                packages.join(", ")
            ));
        }
        Self::Ready(Ocr::new(tesseract, pdftoppm, settings))
    }

    /// The OCR engine, when it is ready.
    pub fn ready(&self) -> Option<&Ocr> {
        match self {
            Self::Ready(ocr) => Some(ocr),
            Self::Off | Self::Missing(_) => None,
        }
    }

    /// What the status API says of OCR.
    pub fn info(&self) -> index_core::OcrInfo {
        match self {
            Self::Ready(ocr) => index_core::OcrInfo {
                enabled: true,
                languages: Some(ocr.settings.languages.clone()),
                why_off: None,
            },
            Self::Off => index_core::OcrInfo {
                enabled: false,
                languages: None,
                why_off: Some("turned off (--ocr false)".into()),
            },
            Self::Missing(why) => index_core::OcrInfo {
                enabled: false,
                languages: None,
                why_off: Some(format!(
                    "{why}; install the Debian packages tesseract-ocr, tesseract-ocr-eng and \
                     poppler-utils (`make setup` does)"
                )),
            },
        }
    }

    /// What a user is told about a PDF (or pages) without text that OCR
    /// did not read: why, and what would change that.
    pub fn hint(&self) -> String {
        match self {
            Self::Ready(_) => "OCR reads scanned PDFs uploaded on their own, not inside an archive: upload it alone".into(),
            Self::Off => "OCR, which would read it, is turned off on this server (--ocr false)".into(),
            Self::Missing(why) => format!(
                "OCR would read it once tesseract is installed on the server (Debian packages \
                 tesseract-ocr, tesseract-ocr-eng and poppler-utils; `make setup` installs them): {why}"
            ),
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
    #[error("{tool} used more than {secs} s of CPU time on the page and was stopped (see --ocr-page-secs)")]
    CpuTime { tool: &'static str, secs: u64 },
    #[error("{tool} took longer than {secs} s on the page and was stopped (see --ocr-page-secs)")]
    WallTime { tool: &'static str, secs: u64 },
    #[error("{tool} failed ({status}) within its {mib} MiB of memory (see --ocr-memory-mib){}", detail(.stderr))]
    Failed {
        tool: &'static str,
        status: ExitStatus,
        mib: u64,
        stderr: String,
    },
    #[error("its image could not be rendered ({0})")]
    Unrendered(String),
    #[error("cannot run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        source: std::io::Error,
    },
    #[error("OCR's working files: {0}")]
    Io(#[from] std::io::Error),
    #[error("Tesseract's hOCR output could not be read: {0}")]
    Hocr(String),
    #[error("the job was stopped")]
    Stopped,
}

fn detail(stderr: &str) -> String {
    first_line(stderr).map_or_else(String::new, |line| format!(": {line}"))
}

/// The first line a tool wrote that says something.
fn first_line(stderr: &str) -> Option<&str> {
    stderr.lines().map(str::trim).find(|l| !l.is_empty())
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
    /// thread (a blocking one: this runs processes and waits on them).
    /// Stops, killing the tool at work, once `stop` is set. Fails as a
    /// whole only when its working directory cannot be made.
    pub fn read_pages(
        &self,
        pdf: &[u8],
        pages: &[u32],
        stop: &AtomicBool,
    ) -> Result<Vec<PageRead>, OcrError> {
        let dir = tempfile::Builder::new().prefix("docshelf-ocr-").tempdir()?;
        let file = dir.path().join("doc.pdf");
        std::fs::write(&file, pdf)?;
        let mut reads = Vec::with_capacity(pages.len());
        for &page in pages {
            let span = tracing::debug_span!("ocr_page", page);
            let _entered = span.enter();
            let started = Instant::now();
            let text = if stop.load(Ordering::Relaxed) {
                Err(OcrError::Stopped)
            } else {
                self.read_page(dir.path(), &file, page, stop)
            };
            match &text {
                Ok(text) => tracing::debug!(
                    secs = started.elapsed().as_secs_f64(),
                    bytes = text.len(),
                    "page read"
                ),
                Err(err) => tracing::warn!(%err, "a page could not be read by OCR"),
            }
            reads.push(PageRead { page, text });
        }
        Ok(reads)
    }

    fn read_page(
        &self,
        dir: &Path,
        pdf: &Path,
        page: u32,
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
            stop,
        );
        let render_errors = match rendered {
            Ok(stderr) => stderr,
            Err(err) => {
                let _ = std::fs::remove_file(&image);
                return Err(err);
            }
        };
        if !image.exists() {
            let why = first_line(&render_errors).unwrap_or("pdftoppm wrote no image");
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

    /// Runs one tool within this server's bounds; its error output.
    fn run(
        &self,
        tool: &'static str,
        command: &mut Command,
        stop: &AtomicBool,
    ) -> Result<String, OcrError> {
        let bounds = Bounds {
            cpu: self.settings.page_cpu,
            wall: self.settings.page_cpu * WALL_PER_CPU,
            memory_bytes: self.settings.memory_bytes,
        };
        run_bounded(tool, command, &bounds, stop)
    }
}

/// What one run of a tool may take.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// CPU time (`RLIMIT_CPU`, whole seconds, at least one).
    pub cpu: Duration,
    /// Wall time, after which it is killed.
    pub wall: Duration,
    /// Address space (`RLIMIT_AS`).
    pub memory_bytes: u64,
}

/// Runs `command` at nice 19 within `bounds`, its output discarded and its
/// error output returned (the first few KiB). Kills it when its wall time
/// is up or `stop` is set; the kernel kills it past its CPU time, and its
/// allocations fail past its memory. Blocks until it has ended.
pub fn run_bounded(
    tool: &'static str,
    command: &mut Command,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<String, OcrError> {
    run_within(tool, command, Stdio::null(), bounds, stop)
}

/// [`run_bounded`], with the child's output going to `stdout`.
fn run_within(
    tool: &'static str,
    command: &mut Command,
    stdout: Stdio,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<String, OcrError> {
    command
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    limit_child(command, bounds);
    let mut child = command
        .spawn()
        .map_err(|source| OcrError::Spawn { tool, source })?;
    // Drained on a thread of its own, so a tool that writes a lot of
    // errors never blocks on a full pipe; the first few KiB are kept.
    let drain = child.stderr.take().map(|stderr| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr)
                .take(STDERR_KEPT as u64)
                .read_to_end(&mut kept);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            String::from_utf8_lossy(&kept).into_owned()
        })
    });
    let deadline = Instant::now() + bounds.wall;
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(err) => {
                // Never leave it running (nor the drain below waiting on it).
                let _ = child.kill();
                let _ = child.wait();
                break Err(OcrError::Io(err));
            }
        }
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break Err(if stop.load(Ordering::Relaxed) {
                OcrError::Stopped
            } else {
                OcrError::WallTime {
                    tool,
                    secs: bounds.wall.as_secs(),
                }
            });
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
    };
    let stderr = drain.and_then(|d| d.join().ok()).unwrap_or_default();
    let status = ended?;
    if status.success() {
        return Ok(stderr);
    }
    if killed_for_cpu(&status) {
        return Err(OcrError::CpuTime {
            tool,
            secs: cpu_seconds(bounds.cpu),
        });
    }
    Err(OcrError::Failed {
        tool,
        status,
        mib: bounds.memory_bytes / (1024 * 1024),
        stderr,
    })
}

fn cpu_seconds(cpu: Duration) -> u64 {
    cpu.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(unix)]
fn killed_for_cpu(status: &ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    // Past the soft limit the kernel sends SIGXCPU, past the hard one (a
    // second later) SIGKILL; nothing else here sends SIGKILL once the
    // child has ended by itself.
    matches!(status.signal(), Some(libc::SIGXCPU | libc::SIGKILL))
}

#[cfg(not(unix))]
fn killed_for_cpu(_: &ExitStatus) -> bool {
    false
}

/// Sets the child's limits between fork and exec.
#[cfg(unix)]
fn limit_child(command: &mut Command, bounds: &Bounds) {
    use std::os::unix::process::CommandExt;
    let memory = libc::rlim_t::try_from(bounds.memory_bytes).unwrap_or(libc::RLIM_INFINITY);
    let cpu = libc::rlim_t::try_from(cpu_seconds(bounds.cpu)).unwrap_or(libc::RLIM_INFINITY);
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed: it calls setrlimit,
    // setpriority and prctl (system calls) on values computed before the
    // fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let address_space = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &address_space) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let cpu_time = libc::rlimit {
                rlim_cur: cpu,
                rlim_max: cpu.saturating_add(1),
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &cpu_time) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Lowest priority: OCR takes only what searches leave. Raising
            // the nice value needs no privilege; a failure leaves it as is.
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            // The tool dies with the thread waiting on it (a server
            // killed mid-page leaves no OCR behind).
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn limit_child(_: &mut Command, _: &Bounds) {}

/// An executable named `name` in a directory of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// The languages Tesseract has data for (`tesseract --list-langs`).
fn list_languages(tesseract: &Path, settings: &OcrSettings) -> Result<Vec<String>, OcrError> {
    let mut command = Command::new(tesseract);
    command.arg("--list-langs");
    // Its list goes to stdout: into a file, read afterwards.
    let dir = tempfile::Builder::new().prefix("docshelf-ocr-").tempdir()?;
    let listed = dir.path().join("langs");
    let stdout = Stdio::from(std::fs::File::create(&listed)?);
    let bounds = Bounds {
        cpu: Duration::from_secs(10),
        wall: Duration::from_secs(30),
        memory_bytes: settings.memory_bytes,
    };
    run_within(
        "tesseract",
        &mut command,
        stdout,
        &bounds,
        &AtomicBool::new(false),
    )?;
    let listed = std::fs::read_to_string(&listed)?;
    Ok(listed
        .lines()
        .skip_while(|l| !l.starts_with("List of available languages"))
        .skip(1)
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect())
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

/// Sets a flag when dropped: the job's future, dropped when the job is
/// cancelled, stops the OCR running for it on a blocking thread.
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What OCR made of a file's pages.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The pages it read text on, for
    /// [`index_core::extract::Extracted::replace_pages`].
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

// ---------------------------------------------------------------------------
// hOCR → Markdown

/// One line as Tesseract read it.
#[derive(Debug, Default)]
struct Line {
    words: Vec<String>,
    /// Tesseract's `x_size` (the line's font size, in pixels), or the
    /// height of its box when it gives none.
    size: f32,
    /// Whether Tesseract classed it as a heading (`ocr_header`).
    header: bool,
}

/// Turns Tesseract's hOCR for one page into Markdown: its paragraphs in
/// Tesseract's reading order, lines set clearly larger than the page's
/// text (its median line size, by words) as headings (`#` at twice that
/// size, `##` at 1.4 times), words hyphenated across lines joined, and
/// marks with no letter or digit that Tesseract is unsure of (specks,
/// rules, the edges of figures) dropped.
pub fn hocr_to_markdown(hocr: &str) -> Result<String, String> {
    let paragraphs = parse_hocr(hocr)?;
    let mut sizes: Vec<(f32, usize)> = paragraphs
        .iter()
        .flatten()
        .filter(|l| l.size > 0.0 && !l.words.is_empty())
        .map(|l| (l.size, l.words.len()))
        .collect();
    let median = weighted_median(&mut sizes);

    let mut blocks: Vec<String> = Vec::new();
    for lines in &paragraphs {
        // Consecutive lines of one kind (heading or not) make one block.
        let mut current: Option<(Option<u8>, Vec<&Line>)> = None;
        for line in lines.iter().filter(|l| !l.words.is_empty()) {
            let level = heading_level(line, median);
            match current.as_mut() {
                Some((l, group)) if *l == level => group.push(line),
                _ => {
                    if let Some((l, group)) = current.take() {
                        blocks.push(block(l, &group));
                    }
                    current = Some((level, vec![line]));
                }
            }
        }
        if let Some((l, group)) = current {
            blocks.push(block(l, &group));
        }
    }
    Ok(blocks
        .into_iter()
        .filter(|b| !b.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n"))
}

/// A line's heading level, if it is a heading: short, and set clearly
/// larger than the page's text.
fn heading_level(line: &Line, median: Option<f32>) -> Option<u8> {
    let median = median?;
    if line.words.len() > 15 || line.size <= 0.0 {
        return None;
    }
    let ratio = line.size / median;
    if ratio >= 2.0 {
        Some(1)
    } else if ratio >= 1.4 || (line.header && ratio >= 1.15) {
        Some(2)
    } else {
        None
    }
}

/// One Markdown block from consecutive lines.
fn block(level: Option<u8>, lines: &[&Line]) -> String {
    let mut text = String::new();
    for line in lines {
        let joined = line.words.join(" ");
        if text.is_empty() {
            text = joined;
            continue;
        }
        let hyphenated = text.ends_with('-')
            && text[..text.len() - 1]
                .chars()
                .last()
                .is_some_and(char::is_alphabetic)
            && joined.starts_with(char::is_lowercase);
        if hyphenated {
            text.pop();
        } else {
            text.push(if level.is_some() { ' ' } else { '\n' });
        }
        text.push_str(&joined);
    }
    match level {
        Some(level) => format!("{} {text}", "#".repeat(usize::from(level))),
        // Text that Markdown would read as markup of its own is escaped.
        None if text.starts_with(['#', '>'])
            || text.starts_with("```")
            || text.starts_with("~~~") =>
        {
            format!("\\{text}")
        }
        None => text,
    }
}

/// The median of `(value, weight)` pairs.
fn weighted_median(values: &mut [(f32, usize)]) -> Option<f32> {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    for &(value, weight) in values.iter() {
        seen += weight;
        if seen * 2 >= total {
            return Some(value);
        }
    }
    None
}

/// The element an hOCR tag opens, by its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Paragraph,
    Line,
    Word,
    Other,
}

/// hOCR's paragraphs, each a list of lines, in document order.
fn parse_hocr(hocr: &str) -> Result<Vec<Vec<Line>>, String> {
    let mut reader = Reader::from_str(hocr);
    reader.config_mut().trim_text(false);
    let mut paragraphs: Vec<Vec<Line>> = Vec::new();
    let mut open: Vec<Part> = Vec::new();
    // The word being read, and its confidence.
    let mut word: Option<(String, f32)> = None;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(tag) => {
                let (class, title) = class_and_title(&tag);
                let part = match class.as_str() {
                    "ocr_par" => Part::Paragraph,
                    "ocr_line" | "ocr_header" | "ocr_caption" | "ocr_textfloat" => Part::Line,
                    "ocrx_word" => Part::Word,
                    _ => Part::Other,
                };
                match part {
                    Part::Paragraph => paragraphs.push(Vec::new()),
                    Part::Line => {
                        if paragraphs.is_empty() {
                            paragraphs.push(Vec::new());
                        }
                        if let Some(lines) = paragraphs.last_mut() {
                            lines.push(Line {
                                words: Vec::new(),
                                size: line_size(&title),
                                header: class == "ocr_header",
                            });
                        }
                    }
                    Part::Word => {
                        word = Some((String::new(), property(&title, "x_wconf").unwrap_or(100.0)))
                    }
                    Part::Other => {}
                }
                open.push(part);
            }
            Event::End(_) => {
                let closes_word = open.pop() == Some(Part::Word);
                if let Some((text, confidence)) = word.take_if(|_| closes_word) {
                    let text = text.trim();
                    let unsure_mark = confidence < 60.0 && !text.chars().any(char::is_alphanumeric);
                    let line = paragraphs.last_mut().and_then(|p| p.last_mut());
                    if let (false, false, Some(line)) = (text.is_empty(), unsure_mark, line) {
                        line.words.push(text.to_owned());
                    }
                }
            }
            Event::Text(text) => {
                if let Some((word, _)) = word.as_mut() {
                    word.push_str(&text.decode().map_err(|e| e.to_string())?);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some((word, _)) = word.as_mut() {
                    if let Ok(Some(c)) = reference.resolve_char_ref() {
                        word.push(c);
                    } else if let Some(s) = reference
                        .decode()
                        .ok()
                        .and_then(|name| quick_xml::escape::resolve_predefined_entity(&name))
                    {
                        word.push_str(s);
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(paragraphs)
}

/// A tag's `class` and `title` attributes.
fn class_and_title(tag: &BytesStart<'_>) -> (String, String) {
    let mut class = String::new();
    let mut title = String::new();
    for attribute in tag.attributes().flatten() {
        let value = String::from_utf8_lossy(&attribute.value).into_owned();
        match attribute.key.as_ref() {
            b"class" => class = value,
            b"title" => title = value,
            _ => {}
        }
    }
    (class, title)
}

/// A line's size: `x_size`, else its box's height.
fn line_size(title: &str) -> f32 {
    property(title, "x_size").unwrap_or_else(|| {
        let bbox: Vec<f32> = title
            .split(';')
            .find_map(|p| p.trim().strip_prefix("bbox "))
            .map(|b| {
                b.split_whitespace()
                    .filter_map(|n| n.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        match bbox[..] {
            [_, top, _, bottom] => bottom - top,
            _ => 0.0,
        }
    })
}

/// A number property of an hOCR `title` (`x_size 54; x_wconf 96`).
fn property(title: &str, name: &str) -> Option<f32> {
    title.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once(' ')?;
        (key == name).then(|| value.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(title: &str, words: &[(&str, u32)]) -> String {
        let words: String = words
            .iter()
            .map(|(w, conf)| {
                format!("<span class='ocrx_word' title='bbox 0 0 1 1; x_wconf {conf}'>{w}</span>")
            })
            .collect();
        format!("<span class='ocr_line' title=\"{title}\">{words}</span>")
    }

    fn page(paragraphs: &[Vec<String>]) -> String {
        let body: String = paragraphs
            .iter()
            .map(|lines| format!("<p class='ocr_par'>{}</p>", lines.concat()))
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title></title><meta name='ocr-system' content='tesseract 5.3.0' /></head><body><div class='ocr_page' title='bbox 0 0 2550 3300'><div class='ocr_carea'>{body}</div></div></body></html>"
        )
    }

    #[test]
    fn large_lines_become_headings_and_paragraphs_keep_their_order() {
        let hocr = page(&[
            vec![
                line(
                    "bbox 0 0 9 9; x_size 54",
                    &[("The", 96), ("Crazy", 96), ("Ones", 96)],
                ),
                line("x_size 34", &[("October", 96), ("14,", 96), ("1998", 96)]),
            ],
            vec![
                line(
                    "x_size 34",
                    &[("Here&#39;s", 95), ("to", 96), ("the", 96), ("well-", 90)],
                ),
                line(
                    "x_size 33",
                    &[("known", 96), ("crazy", 96), ("ones", 96), ("&amp;", 80)],
                ),
                line("x_size 35", &[("misfits", 96), ("|", 20), ("—", 95)]),
            ],
            vec![line("x_size 70", &[("Big", 96), ("Title", 96)])],
            vec![line("x_size 34", &[("#1", 96), ("rebel", 96)])],
        ]);
        let markdown = hocr_to_markdown(&hocr).expect("parses");
        assert_eq!(
            markdown,
            "## The Crazy Ones\n\nOctober 14, 1998\n\nHere's to the wellknown crazy ones &\nmisfits —\n\n# Big Title\n\n\\#1 rebel"
        );
    }

    #[test]
    fn words_hyphenated_across_lines_are_joined() {
        let hocr = page(&[vec![
            line("x_size 30", &[("the", 96), ("recog-", 96)]),
            line("x_size 30", &[("nition", 96), ("works", 96)]),
        ]]);
        assert_eq!(hocr_to_markdown(&hocr).unwrap(), "the recognition works");
    }

    #[test]
    fn an_empty_page_is_empty_text_and_broken_markup_an_error() {
        assert_eq!(hocr_to_markdown(&page(&[])).unwrap(), "");
        assert!(hocr_to_markdown("<html><body><p class='ocr_par'><span a='1>").is_err());
    }

    #[test]
    fn page_lists_read_as_ranges() {
        assert_eq!(page_list(&[1, 2, 3, 5, 7, 8]), "1–3, 5, 7–8");
        assert_eq!(page_list(&[4]), "4");
    }

    #[cfg(unix)]
    #[test]
    fn a_tool_past_its_time_is_killed_and_one_past_its_memory_fails() {
        let stop = AtomicBool::new(false);
        let bounds = Bounds {
            cpu: Duration::from_secs(600),
            wall: Duration::from_millis(200),
            memory_bytes: 1 << 30,
        };
        // `sleep` uses no CPU: only the wall time stops it.
        let err = run_bounded("sleep", Command::new("sleep").arg("600"), &bounds, &stop)
            .expect_err("stopped");
        assert!(matches!(err, OcrError::WallTime { .. }), "{err}");

        // A busy loop is stopped by its CPU time, whatever the wall time.
        let bounds = Bounds {
            cpu: Duration::from_secs(1),
            wall: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
        };
        let mut busy = Command::new("sh");
        busy.args(["-c", "while :; do :; done"]);
        let err = run_bounded("sh", &mut busy, &bounds, &stop).expect_err("stopped");
        assert!(matches!(err, OcrError::CpuTime { secs: 1, .. }), "{err}");

        // 64 MiB of address space is too little for a 512 MiB buffer.
        let bounds = Bounds {
            cpu: Duration::from_secs(60),
            wall: Duration::from_secs(3600),
            memory_bytes: 64 << 20,
        };
        let err = run_bounded(
            "python3",
            Command::new("python3").args(["-c", "b = bytearray(512 << 20)"]),
            &bounds,
            &stop,
        )
        .expect_err("out of memory");
        // The limit, not something else, stopped it: Python says so.
        assert!(
            matches!(&err, OcrError::Failed { mib: 64, stderr, .. } if stderr.contains("MemoryError")),
            "{err}"
        );

        // And it runs at nice 19.
        let mut nice = Command::new("sh");
        nice.args([
            "-c",
            "test \"$(nice)\" = 19 || { echo \"nice $(nice)\" >&2; exit 1; }",
        ]);
        run_bounded("sh", &mut nice, &bounds, &stop).expect("nice 19");
    }

    #[cfg(unix)]
    #[test]
    fn a_stopped_job_kills_its_tool() {
        let stop = Arc::new(AtomicBool::new(false));
        let bounds = Bounds {
            cpu: Duration::from_secs(600),
            wall: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
        };
        let flag = stop.clone();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(StopOnDrop(flag));
        });
        let err = run_bounded("sleep", Command::new("sleep").arg("3600"), &bounds, &stop)
            .expect_err("stopped");
        setter.join().expect("setter");
        assert!(matches!(err, OcrError::Stopped), "{err}");
    }
}
