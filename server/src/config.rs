//! Settings, from flags with environment fallbacks.
//!
//! Every setting has a flag and a `DOCSHELF_*` variable so the same binary
//! runs from a shell, from `make run` and from a service manager unchanged.
//!
//! Longer than this crate's other files on purpose: it is the one table of
//! settings (one struct per group, as `--help` lists them, each flag's doc
//! comment its help text), which reads best whole, beside the tests that
//! keep the groups' ids apart and their defaults in step.

use std::path::PathBuf;

use clap::Args;

use ingest_core::extract::ArchiveLimits;

use crate::embed::{DeviceChoice, Precision};
use crate::store::S3Config;

/// Each setting's default, written once: its flag reads it, and so do the
/// settings built in code (tests, benches, tools), so the two cannot drift.
mod default {
    pub const MAX_FILES: usize = 10_000;
    pub const MAX_EXPANDED_MIB: u64 = 1024;
    pub const MAX_JOB_TEXT_MIB: u64 = 256;
    pub const MAX_JOB_CHUNKS: usize = 200_000;
    pub const EXTRACT_TIMEOUT_SECS: f64 = 120.0;
    pub const READ_CONSISTENCY_SECS: f64 = 2.0;
    pub const CRAWL_RATE: f64 = 5.0;
    pub const CRAWL_CONCURRENCY: usize = 4;
    pub const CRAWL_MAX_SECS: f64 = 3600.0;
    pub const CRAWL_PAGE_MIB: u64 = 10;
    pub const FETCH_TIMEOUT_SECS: f64 = 30.0;
    pub const SOURCE_FETCHES: usize = 2;
    pub const GIT_MAX_TREE_ENTRIES: usize = 500_000;
    pub const GIT_MAX_TREE_MIB: u64 = 128;
}

/// The models: where they live and what runs them. Shared by every command
/// that embeds or searches.
#[derive(Debug, Clone, Args)]
pub struct ModelConfig {
    /// Directory holding the embedding model (`model.safetensors`, `tokenizer.json`, `config.json`).
    #[arg(
        long = "model-dir",
        env = "DOCSHELF_MODEL_DIR",
        default_value = "./models/all-MiniLM-L6-v2"
    )]
    pub model_dir: PathBuf,

    /// Where the embedding model runs: a GPU through wgpu when one exists (auto), a GPU or nothing (gpu), or the CPU.
    #[arg(long = "device", env = "DOCSHELF_DEVICE", value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,

    /// What the embedding model's projections compute in on the CPU: fp32 (the model's own numbers), bf16 or int8 (faster with AVX-512 BF16 / VNNI, slightly different vectors: see docs/benchmarks.md, "Reduced precision"). A GPU always runs fp32.
    #[arg(long = "embed-precision", env = "DOCSHELF_EMBED_PRECISION", value_enum, default_value_t = Precision::Fp32)]
    pub precision: Precision,

    /// A cross-encoder to rerank each search's best 50 candidates with:
    /// a directory holding a Hugging Face `BertForSequenceClassification`
    /// with one label (`model.safetensors`, `tokenizer.json`,
    /// `config.json`), such as cross-encoder/ms-marco-MiniLM-L-6-v2.
    /// Without it, docshelf's built-in second stage (a position prior)
    /// runs. It costs a forward pass over 50 pairs per search: see
    /// docs/search.md before turning it on without a GPU.
    #[arg(long = "reranker-dir", env = "DOCSHELF_RERANKER_DIR")]
    pub reranker_dir: Option<PathBuf>,
}

impl ModelConfig {
    /// The embedding model in `model_dir` on `device`, and no reranker.
    pub fn new(model_dir: impl Into<PathBuf>, device: DeviceChoice) -> Self {
        Self {
            model_dir: model_dir.into(),
            device,
            precision: Precision::Fp32,
            reranker_dir: None,
        }
    }
}

/// Where the store and the model live, and the limits on uploads. Shared by
/// every command that opens the engine.
#[derive(Debug, Clone, Args)]
pub struct EngineConfig {
    /// Store location: a directory, or an S3-compatible bucket and prefix (`s3://bucket/docshelf`, see `--s3-endpoint`).
    #[arg(long = "data", env = "DOCSHELF_DATA", default_value = "./data")]
    pub data: String,

    #[command(flatten)]
    pub s3: S3Config,

    #[command(flatten)]
    pub model: ModelConfig,

    /// Most files one upload may expand to (archive entries included).
    #[arg(
        long = "max-files",
        env = "DOCSHELF_MAX_FILES",
        default_value_t = default::MAX_FILES
    )]
    pub max_files: usize,

    /// Most bytes one archive may expand to, in MiB.
    #[arg(
        long = "max-expanded-mib",
        env = "DOCSHELF_MAX_EXPANDED_MIB",
        default_value_t = default::MAX_EXPANDED_MIB
    )]
    pub max_expanded_mib: u64,

    /// Most extracted text one upload job may hold over all its files, in
    /// MiB (about 1,500 chunks of 700 bytes a MiB).
    #[arg(
        long = "max-job-text-mib",
        env = "DOCSHELF_MAX_JOB_TEXT_MIB",
        default_value_t = default::MAX_JOB_TEXT_MIB
    )]
    pub max_job_text_mib: u64,

    /// Most chunks one upload job may hold over all its files.
    #[arg(
        long = "max-job-chunks",
        env = "DOCSHELF_MAX_JOB_CHUNKS",
        default_value_t = default::MAX_JOB_CHUNKS
    )]
    pub max_job_chunks: usize,

    /// Memory every running extraction may hold together, in MiB: uploads
    /// waiting to be read, archives as they inflate, and the text they
    /// hold until it is embedded. Past it a file waits (up to a minute) or
    /// fails with that reason, and a new upload is refused with 503 busy.
    /// Default: an eighth of the machine's memory, between 256 and 2048.
    #[arg(
        long = "extract-memory-mib",
        env = "DOCSHELF_EXTRACT_MEMORY_MIB",
        default_value_t = crate::ingest::memory::default_budget_mib()
    )]
    pub extract_memory_mib: u64,

    /// Seconds one uploaded file's extraction may take; past it the file
    /// fails with that reason and the job goes on.
    #[arg(
        long = "extract-timeout-secs",
        env = "DOCSHELF_EXTRACT_TIMEOUT_SECS",
        default_value_t = default::EXTRACT_TIMEOUT_SECS
    )]
    pub extract_timeout_secs: f64,

    /// Seconds after which a read looks for what other processes wrote to
    /// the store (another server, `docshelf ingest`): their documents
    /// become searchable here within this time. 0 checks on every read.
    #[arg(
        long = "read-consistency-secs",
        env = "DOCSHELF_READ_CONSISTENCY_SECS",
        default_value_t = default::READ_CONSISTENCY_SECS
    )]
    pub read_consistency_secs: f64,

    /// Memory for the library versions held in memory, which searches
    /// answer from (their text, 8-bit vectors and keyword postings), in
    /// MiB. Versions are read as they are first searched and dropped least
    /// recently searched first; a version not held is searched on disk.
    /// 0 holds none. Default: a third of the machine's memory.
    #[arg(
        long = "resident-mib",
        env = "DOCSHELF_RESIDENT_MIB",
        default_value_t = crate::store::resident::default_budget_mib()
    )]
    pub resident_mib: u64,

    #[command(flatten)]
    pub sources: SourceConfig,

    #[command(flatten)]
    pub ocr: OcrConfig,
}

/// How PDF pages without a text layer (scans) are read: by OCR, with
/// Tesseract and Poppler's `pdftoppm` when both are installed.
#[derive(Debug, Clone, Args)]
pub struct OcrConfig {
    /// Reads PDF pages that have no text layer (scans), or only garbage,
    /// by OCR: on when `tesseract` and `pdftoppm` are installed (`--ocr
    /// false` turns it off). Without it such pages are left out, and a PDF
    /// with no text at all is refused.
    #[arg(
        long = "ocr",
        env = "DOCSHELF_OCR",
        default_value_t = true,
        action = clap::ArgAction::Set,
        value_parser = switch(),
        value_name = "BOOL"
    )]
    pub enabled: bool,

    /// CPU seconds each OCR tool may spend on one page (rendering it, then
    /// reading it); past it, or past ten times as much wall time, it is
    /// killed and the page is reported unread.
    #[arg(
        long = "ocr-page-secs",
        env = "DOCSHELF_OCR_PAGE_SECS",
        default_value_t = crate::ingest::ocr::DEFAULT_PAGE_SECS
    )]
    pub page_secs: f64,

    /// Memory (address space) each OCR tool may map, in MiB.
    #[arg(
        long = "ocr-memory-mib",
        env = "DOCSHELF_OCR_MEMORY_MIB",
        default_value_t = crate::ingest::ocr::DEFAULT_MEMORY_MIB
    )]
    pub memory_mib: u64,

    /// Pages of one file OCR reads at most; the rest are left out, and the
    /// file's warnings name them.
    #[arg(
        id = "ocr_max_pages",
        long = "ocr-max-pages",
        env = "DOCSHELF_OCR_MAX_PAGES",
        default_value_t = crate::ingest::ocr::DEFAULT_MAX_PAGES
    )]
    pub max_pages: u32,

    /// Wall seconds OCR may spend on one file, all its pages together;
    /// pages not reached by then are left out, and the file's warnings
    /// name them. One file at a time per two cores is read by OCR, so
    /// this is also how long one file can keep the others waiting.
    #[arg(
        id = "ocr_file_secs",
        long = "ocr-file-secs",
        env = "DOCSHELF_OCR_FILE_SECS",
        default_value_t = crate::ingest::ocr::DEFAULT_FILE_SECS
    )]
    pub file_secs: f64,

    /// Tesseract's languages for OCR, `+`-joined (`eng+deu`); each needs
    /// its data installed (Debian: `tesseract-ocr-deu`).
    #[arg(
        long = "ocr-languages",
        env = "DOCSHELF_OCR_LANGUAGES",
        default_value = crate::ingest::ocr::DEFAULT_LANGUAGES
    )]
    pub languages: String,
}

impl Default for OcrConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            page_secs: crate::ingest::ocr::DEFAULT_PAGE_SECS,
            memory_mib: crate::ingest::ocr::DEFAULT_MEMORY_MIB,
            max_pages: crate::ingest::ocr::DEFAULT_MAX_PAGES,
            file_secs: crate::ingest::ocr::DEFAULT_FILE_SECS,
            languages: crate::ingest::ocr::DEFAULT_LANGUAGES.into(),
        }
    }
}

impl OcrConfig {
    /// How OCR runs; `None` when it is turned off.
    pub fn settings(&self) -> Option<crate::ingest::ocr::OcrSettings> {
        self.enabled.then(|| crate::ingest::ocr::OcrSettings {
            page_cpu: seconds(self.page_secs, 1.0, 86_400.0),
            memory_bytes: self
                .memory_mib
                .clamp(64, 1 << 20)
                .saturating_mul(1024 * 1024),
            max_pages: self.max_pages.max(1),
            file_time: seconds(self.file_secs, 1.0, 7.0 * 86_400.0),
            languages: self.languages.trim().to_owned(),
        })
    }
}

/// How documentation sources (crawled sites, registry packages) are
/// fetched.
#[derive(Debug, Clone, Args)]
pub struct SourceConfig {
    /// Lets crawls and fetches reach loopback, private, link-local and
    /// metadata addresses. Off by default: a URL from a client could
    /// otherwise turn the crawler on the server's own network. Turn it on
    /// for intranet documentation (and trusted clients only).
    #[arg(
        long = "allow-private-urls",
        env = "DOCSHELF_ALLOW_PRIVATE_URLS",
        value_parser = switch()
    )]
    pub allow_private_urls: bool,

    /// Private addresses crawls may reach, one by one (an intranet docs
    /// server), without opening the rest as --allow-private-urls does.
    #[arg(
        long = "allow-address",
        env = "DOCSHELF_ALLOW_ADDRESSES",
        value_delimiter = ','
    )]
    pub allow_addresses: Vec<std::net::IpAddr>,

    /// Requests per second a crawl sends to one host, at most (a site's
    /// robots.txt `Crawl-delay` slows it further).
    #[arg(
        long = "crawl-rate",
        env = "DOCSHELF_CRAWL_RATE",
        default_value_t = default::CRAWL_RATE
    )]
    pub crawl_rate: f64,

    /// Requests one crawl has in flight at once.
    #[arg(
        long = "crawl-concurrency",
        env = "DOCSHELF_CRAWL_CONCURRENCY",
        default_value_t = default::CRAWL_CONCURRENCY
    )]
    pub crawl_concurrency: usize,

    /// The longest one crawl may take, in seconds; what it fetched by
    /// then is published.
    #[arg(
        long = "crawl-max-secs",
        env = "DOCSHELF_CRAWL_MAX_SECS",
        default_value_t = default::CRAWL_MAX_SECS
    )]
    pub crawl_max_secs: f64,

    /// The largest page a crawl reads, in MiB; larger pages fail with
    /// that reason.
    #[arg(
        long = "crawl-page-mib",
        env = "DOCSHELF_CRAWL_PAGE_MIB",
        default_value_t = default::CRAWL_PAGE_MIB
    )]
    pub crawl_page_mib: u64,

    /// Seconds one request may take, its body included.
    #[arg(
        long = "fetch-timeout-secs",
        env = "DOCSHELF_FETCH_TIMEOUT_SECS",
        default_value_t = default::FETCH_TIMEOUT_SECS
    )]
    pub fetch_timeout_secs: f64,

    /// Source fetches (crawls, repositories, packages) run at once, at
    /// most; the others wait their turn, their job saying so.
    #[arg(
        long = "source-fetches",
        env = "DOCSHELF_SOURCE_FETCHES",
        default_value_t = default::SOURCE_FETCHES
    )]
    pub source_fetches: usize,

    /// Paths a Git repository's tree may list, at most (the docs folder's
    /// alone when the source gives `docs_path`): trees share subtrees, so
    /// a tiny repository can list millions.
    #[arg(
        long = "git-max-tree-entries",
        env = "DOCSHELF_GIT_MAX_TREE_ENTRIES",
        default_value_t = default::GIT_MAX_TREE_ENTRIES
    )]
    pub git_max_tree_entries: usize,

    /// The most of a Git tree's listing read, in MiB.
    #[arg(
        long = "git-max-tree-mib",
        env = "DOCSHELF_GIT_MAX_TREE_MIB",
        default_value_t = default::GIT_MAX_TREE_MIB
    )]
    pub git_max_tree_mib: u64,

    /// Refreshes every source this often (`30m`, `6h`, `1d`; seconds
    /// without a unit). Off by default; `POST /api/sources/{id}/refresh`
    /// refreshes one at any time.
    #[arg(long = "refresh-every", env = "DOCSHELF_REFRESH_EVERY", value_parser = parse_every)]
    pub refresh_every: Option<std::time::Duration>,

    /// Fetches URLs that start with FROM from TO instead, as git's
    /// `insteadOf` does: `https://github.com/=https://git.intranet/mirror/`
    /// sends sources, and the repositories and docs sites packages name,
    /// to a mirror (air-gapped set-ups); pages keep their source's
    /// addresses. Repeatable; the longest FROM that matches wins. The
    /// address rules apply to the rewritten URL.
    #[arg(
        long = "rewrite-url",
        env = "DOCSHELF_REWRITE_URLS",
        value_delimiter = ' ',
        value_name = "FROM=TO",
        value_parser = parse_rewrite
    )]
    pub rewrite_urls: Vec<(String, String)>,

    /// A credential sources may name, declared by the operator as
    /// `NAME=REFERENCE@WHERE[,WHERE…][;libraries=PATTERN,…]`:
    /// `gitlab-ci=env:GITLAB_TOKEN@gitlab.example.com` sends the variable
    /// GITLAB_TOKEN, to gitlab.example.com alone, for a source naming
    /// `"credential": "gitlab-ci"`. REFERENCE is `env:VARIABLE` or
    /// `file:/absolute/path` (read at each fetch); WHERE a host, a
    /// `host:port` or an http(s) URL prefix; the patterns (`team-*`)
    /// limit which libraries' sources may name it. Repeatable (space
    /// between them in the variable).
    #[arg(
        long = "credential",
        env = "DOCSHELF_CREDENTIALS",
        value_delimiter = ' ',
        value_name = "NAME=REFERENCE@WHERE",
        value_parser = crate::source::credential::Declared::parse
    )]
    pub credentials: Vec<crate::source::credential::Declared>,

    /// A file of credential declarations, one a line as --credential
    /// writes them (blank lines and lines starting with `#` aside): for
    /// many, or references holding spaces.
    #[arg(
        long = "credentials-file",
        env = "DOCSHELF_CREDENTIALS_FILE",
        value_name = "PATH",
        value_parser = read_credentials_file
    )]
    pub credentials_file: Option<DeclaredFile>,
}

/// The declarations a `--credentials-file` holds, read at start-up.
#[derive(Debug, Clone, Default)]
pub struct DeclaredFile(pub Vec<crate::source::credential::Declared>);

fn read_credentials_file(path: &str) -> Result<DeclaredFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(n, line)| {
            crate::source::credential::Declared::parse(line)
                .map_err(|e| format!("{path}, line {}: {e}", n + 1))
        })
        .collect::<Result<_, _>>()
        .map(DeclaredFile)
}

/// `FROM=TO`, both http(s) URL prefixes. A prefix that is a whole URL is
/// written as the URL parser writes it (`http://Mirror.lan:80/x/` as
/// `http://mirror.lan/x/`), since the addresses it is matched against are.
fn parse_rewrite(raw: &str) -> Result<(String, String), String> {
    let (from, to) = raw
        .split_once('=')
        .ok_or_else(|| format!("{raw:?}: write it as FROM=TO"))?;
    let prefix = |part: &str| {
        if !(part.starts_with("https://") || part.starts_with("http://")) {
            return Err(format!("{part:?} is not an http(s) URL prefix"));
        }
        Ok(match url::Url::parse(part) {
            Ok(url) if url.has_host() => url.to_string(),
            _ => part.to_owned(),
        })
    };
    Ok((prefix(from)?, prefix(to)?))
}

impl Default for SourceConfig {
    fn default() -> Self {
        Self {
            allow_private_urls: false,
            allow_addresses: Vec::new(),
            crawl_rate: default::CRAWL_RATE,
            crawl_concurrency: default::CRAWL_CONCURRENCY,
            crawl_max_secs: default::CRAWL_MAX_SECS,
            crawl_page_mib: default::CRAWL_PAGE_MIB,
            fetch_timeout_secs: default::FETCH_TIMEOUT_SECS,
            source_fetches: default::SOURCE_FETCHES,
            git_max_tree_entries: default::GIT_MAX_TREE_ENTRIES,
            git_max_tree_mib: default::GIT_MAX_TREE_MIB,
            refresh_every: None,
            rewrite_urls: Vec::new(),
            credentials: Vec::new(),
            credentials_file: None,
        }
    }
}

impl SourceConfig {
    /// Every credential declared, by flag, variable or file; a name
    /// declared twice stops the start.
    pub fn credentials(&self) -> Result<crate::source::credential::Credentials, String> {
        let from_file = self.credentials_file.iter().flat_map(|f| f.0.iter());
        crate::source::credential::Credentials::new(
            self.credentials.iter().chain(from_file).cloned().collect(),
        )
    }

    pub fn settings(&self) -> crate::source::SourceSettings {
        let rate = if self.crawl_rate.is_finite() && self.crawl_rate > 0.0 {
            self.crawl_rate.min(10_000.0)
        } else {
            default::CRAWL_RATE
        };
        crate::source::SourceSettings {
            policy: crate::source::AddressPolicy {
                allow_private: self.allow_private_urls,
                allowed: self.allow_addresses.clone(),
            },
            fetch: crate::source::FetchLimits {
                max_bytes: self.crawl_page_mib.clamp(1, 1024) * 1024 * 1024,
                timeout: seconds(self.fetch_timeout_secs, 0.1, 3600.0),
                ..crate::source::FetchLimits::default()
            },
            interval: std::time::Duration::from_secs_f64(1.0 / rate),
            concurrency: self.crawl_concurrency.clamp(1, 64),
            max_time: seconds(self.crawl_max_secs, 1.0, 7.0 * 86_400.0),
            rewrites: crate::source::Rewrites::new(self.rewrite_urls.clone()),
            fetches: self.source_fetches.clamp(1, 64),
            tree: crate::source::git::listing::TreeLimits {
                max_entries: self.git_max_tree_entries.max(1),
                max_bytes: self.git_max_tree_mib.clamp(1, 4096) << 20,
            },
        }
    }
}

/// The parser of every on/off setting: environment variables are
/// conventionally `1`/`0`, `yes`/`no` or `on`/`off` as well as
/// `true`/`false`, so all of them are accepted (in any case), on the
/// command line too.
pub fn switch() -> clap::builder::BoolishValueParser {
    clap::builder::BoolishValueParser::new()
}

/// `30m`, `6h`, `1d`, `90s` (humantime's durations) or a number of seconds.
fn parse_every(raw: &str) -> Result<std::time::Duration, String> {
    let raw = raw.trim();
    let every = match raw.parse::<u64>() {
        Ok(secs) => std::time::Duration::from_secs(secs),
        Err(_) => humantime::parse_duration(raw)
            .map_err(|e| format!("{raw:?} is not a duration (30m, 6h, 1d): {e}"))?,
    };
    if every < std::time::Duration::from_secs(60) {
        return Err(format!("{raw:?}: refresh at most once a minute"));
    }
    Ok(every)
}

impl EngineConfig {
    /// The settings `docshelf` uses by default, for a store at `data` with
    /// this model (tests, benches and tools adjust the limits from here).
    pub fn new(data: impl Into<String>, model: ModelConfig) -> Self {
        Self {
            data: data.into(),
            s3: S3Config::default(),
            model,
            max_files: default::MAX_FILES,
            max_expanded_mib: default::MAX_EXPANDED_MIB,
            max_job_text_mib: default::MAX_JOB_TEXT_MIB,
            max_job_chunks: default::MAX_JOB_CHUNKS,
            extract_memory_mib: crate::ingest::memory::default_budget_mib(),
            extract_timeout_secs: default::EXTRACT_TIMEOUT_SECS,
            read_consistency_secs: default::READ_CONSISTENCY_SECS,
            resident_mib: crate::store::resident::default_budget_mib(),
            sources: SourceConfig::default(),
            ocr: OcrConfig::default(),
        }
    }

    /// How stale a read may be (see `--read-consistency-secs`).
    pub fn read_consistency(&self) -> std::time::Duration {
        seconds(self.read_consistency_secs, 0.0, 3600.0)
    }

    /// What one upload job may cost in all.
    pub fn job_limits(&self) -> crate::ingest::JobLimits {
        crate::ingest::JobLimits {
            max_text_bytes: self.max_job_text_mib.saturating_mul(1024 * 1024),
            max_chunks: self.max_job_chunks,
            extract_deadline: seconds(self.extract_timeout_secs, 0.001, 86_400.0),
        }
    }

    /// Archive limits from the settings (ratio and depth keep safe
    /// defaults). An archive may keep no more text than its job may.
    pub fn archive_limits(&self) -> ArchiveLimits {
        ArchiveLimits {
            max_entries: self.max_files,
            max_total_bytes: self.max_expanded_mib.saturating_mul(1024 * 1024),
            max_text_bytes: self.max_job_text_mib.saturating_mul(1024 * 1024),
            ..ArchiveLimits::default()
        }
    }

    /// The memory budget every extraction shares (see
    /// `--extract-memory-mib`).
    pub fn memory_budget(&self) -> crate::ingest::MemoryBudget {
        crate::ingest::MemoryBudget::new(self.extract_memory_mib.saturating_mul(1024 * 1024))
    }
}

/// A seconds setting as a duration, held within `[min, max]`. clap reads
/// `nan` and `inf` as numbers too: NaN counts as `min` (a duration from NaN
/// would panic), infinity as `max`.
fn seconds(value: f64, min: f64, max: f64) -> std::time::Duration {
    let value = if value.is_nan() {
        min
    } else {
        value.clamp(min, max)
    };
    std::time::Duration::from_secs_f64(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_prefixes_are_written_as_urls_are() {
        assert_eq!(
            parse_rewrite("https://Docs.RS=http://Mirror.lan:80/docs.rs/"),
            Ok((
                "https://docs.rs/".into(),
                "http://mirror.lan/docs.rs/".into()
            ))
        );
        // A scheme alone is a prefix too, kept as written.
        assert_eq!(
            parse_rewrite("https://=http://127.0.0.1:9/"),
            Ok(("https://".into(), "http://127.0.0.1:9/".into()))
        );
        assert!(parse_rewrite("ftp://x/=http://y/").is_err());
        assert!(parse_rewrite("https://x/").is_err());
    }

    #[test]
    fn seconds_settings_are_held_in_range_even_when_not_numbers() {
        assert_eq!(
            seconds(f64::NAN, 0.5, 9.0),
            std::time::Duration::from_millis(500)
        );
        assert_eq!(
            seconds(f64::INFINITY, 0.5, 9.0),
            std::time::Duration::from_secs(9)
        );
        assert_eq!(
            seconds(-3.0, 0.5, 9.0),
            std::time::Duration::from_millis(500)
        );
        assert_eq!(seconds(2.0, 0.5, 9.0), std::time::Duration::from_secs(2));
    }

    #[test]
    fn switches_from_the_environment_take_the_usual_spellings() {
        use clap::Parser;
        #[derive(Parser)]
        struct Probe {
            #[command(flatten)]
            engine: EngineConfig,
        }
        for (on, off) in [("1", "0"), ("yes", "no"), ("on", "off"), ("TRUE", "False")] {
            let parsed = Probe::try_parse_from(["probe", "--ocr", off]).expect("--ocr takes {off}");
            assert!(!parsed.engine.ocr.enabled, "--ocr {off}");
            let parsed = Probe::try_parse_from(["probe", "--ocr", on]).expect("--ocr takes {on}");
            assert!(parsed.engine.ocr.enabled, "--ocr {on}");
        }
        assert!(Probe::try_parse_from(["probe", "--ocr", "maybe"]).is_err());
    }

    #[test]
    fn the_defaults_in_code_are_the_command_line_defaults() {
        use clap::Parser;
        #[derive(Parser)]
        struct Probe {
            #[command(flatten)]
            engine: EngineConfig,
        }
        let parsed = Probe::try_parse_from(["probe"]).expect("defaults parse");
        let model = parsed.engine.model.clone();
        let coded = EngineConfig::new(parsed.engine.data.clone(), model);
        assert_eq!(format!("{:?}", parsed.engine), format!("{coded:?}"));
    }

    #[test]
    fn ocr_is_on_by_default_and_a_flag_turns_it_off_or_bounds_its_pages() {
        use clap::Parser;
        #[derive(Parser)]
        struct Probe {
            #[command(flatten)]
            ocr: OcrConfig,
        }
        let on = Probe::try_parse_from(["probe"]).expect("defaults parse");
        let settings = on.ocr.settings().expect("on by default");
        assert_eq!(settings.page_cpu, std::time::Duration::from_secs(120));
        assert_eq!(settings.languages, "eng");
        let off = Probe::try_parse_from(["probe", "--ocr", "false"]).expect("parses");
        assert!(off.ocr.settings().is_none());
        let bounded =
            Probe::try_parse_from(["probe", "--ocr-page-secs", "30", "--ocr-memory-mib", "512"])
                .expect("parses");
        let settings = bounded.ocr.settings().expect("on");
        assert_eq!(settings.page_cpu, std::time::Duration::from_secs(30));
        assert_eq!(settings.memory_bytes, 512 << 20);
    }

    #[test]
    fn refresh_intervals_read_with_units_and_not_below_a_minute() {
        let every = |s| parse_every(s);
        assert_eq!(every("6h"), Ok(std::time::Duration::from_secs(6 * 3600)));
        assert_eq!(every("30m"), Ok(std::time::Duration::from_secs(1800)));
        assert_eq!(every("1d"), Ok(std::time::Duration::from_secs(86_400)));
        assert_eq!(every("90"), Ok(std::time::Duration::from_secs(90)));
        assert!(every("10s").unwrap_err().contains("once a minute"));
        assert!(every("6 fortnights")
            .unwrap_err()
            .contains("not a duration"));
        assert!(every("soon").is_err());
        assert!(every("NaNh").is_err());
    }
}
