//! The engine: the one object behind every face of docshelf.
//!
//! The HTTP handlers, the dashboard's server functions, MCP and the CLI
//! all hold an `Arc<Engine>` and call the same methods, so they cannot
//! drift apart. This file holds the engine itself and its opening; each
//! concern it serves is an `impl Engine` block of its own:
//!
//! - [`access`]: tokens, the audit log, and what a caller may see and do.
//! - [`upload`]: upload jobs, started in the background or run in place.
//! - [`sources`]: sites and packages as sources, fetched and refreshed as jobs.
//! - [`jobs`]: a job's status and its events, whichever process runs it.
//! - [`search`]: admission, scope and the search itself.
//! - [`scope`]: which libraries and versions a request covers (pure).
//! - [`sessions`]: each session's sticky library, and the sessions held
//!   here; [`conversations`]: each session's Ask history; [`session_key`]:
//!   what names a session (its caller and its id).
//! - [`ask`]: answers written by the language model (see [`crate::ask`]).
//! - [`catalog`]: libraries, documents, deletes and feedback;
//!   [`transfer`]: library versions exported and imported with their vectors.
//! - [`status`]: a snapshot of the engine's state; [`memory`]: the library
//!   versions held in memory, reported, and the searches noted to read
//!   first at the next start.
//! - [`EngineError`] (in [`crate::error`]): why a request was refused.

mod access;
mod ask;
mod catalog;
mod changes;
mod conversations;
mod credentials;
mod jobs;
mod memory;
mod reading;
mod scope;
mod search;
mod session_key;
mod sessions;
mod source_request;
mod sources;
mod status;
mod tracking;
mod transfer;
mod upload;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use ingest_core::chunk::ChunkConfig;
use ingest_core::extract::ArchiveLimits;

use crate::background::Background;
use crate::config::{EngineConfig, ModelConfig};
use crate::embed::cross_encoder::CrossEncoder;
use crate::embed::{Backend, DeviceChoice, EmbedError, EmbedQueue, Embedder};
use crate::ingest::ocr::OcrStatus;
use crate::ingest::{JobLimits, Jobs, MemoryBudget};
use crate::llm::Llm;
use crate::metrics::Metrics;
use crate::search::rerank::cross_encoder::CrossEncoderStage;
use crate::search::rerank::{LeadPrior, SecondStage};
use crate::store::Store;

use self::sessions::Sessions;

pub use self::access::MAX_AUDIT_ENTRIES;
pub use self::jobs::JobWatch;
pub use self::search::{MAX_CONCURRENT_SEARCHES, SEARCH_BUDGET};
pub use crate::error::EngineError;

/// The model docshelf embeds with.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

pub struct Engine {
    store: Store,
    model: ModelConfig,
    /// The embedding worker, or why it could not start, once something
    /// needed it: listing, reading, deleting and keyword search never load
    /// the model. The server still starts without one, so the dashboard
    /// can say what is wrong.
    embedder: tokio::sync::OnceCell<Result<EmbedQueue, String>>,
    /// Rescores the best fused candidates of every search.
    second_stage: Box<dyn SecondStage>,
    /// Admission for searches (see [`MAX_CONCURRENT_SEARCHES`]).
    searches: Arc<tokio::sync::Semaphore>,
    search_limit: usize,
    search_budget: Duration,
    jobs: Jobs,
    /// Sticky libraries and Ask's history, per session.
    sessions: Sessions,
    /// Ask's language model; `None` turns Ask off.
    llm: Option<Llm>,
    metrics: Metrics,
    chunking: ChunkConfig,
    archive_limits: ArchiveLimits,
    job_limits: JobLimits,
    /// Extraction threads' permits, shared by every job.
    extractions: Arc<tokio::sync::Semaphore>,
    /// The memory every extraction draws on, together (`ingest::memory`).
    memory: MemoryBudget,
    /// Whether PDF pages without text are read by OCR (`ingest::ocr`).
    ocr: OcrStatus,
    /// Where upload jobs run: below searches' priority.
    background: Background,
    /// How sources are fetched, and the client they are fetched with.
    source_settings: crate::source::SourceSettings,
    /// Turns for source fetches (`--source-fetches`): a fetch holds memory
    /// and a git or crawl's connections while it runs, so only so many run
    /// at once and the rest wait (`engine/sources.rs`).
    source_fetches: Arc<tokio::sync::Semaphore>,
    fetcher: crate::source::Fetcher,
    /// The credentials the operator declared, by name (`--credential`).
    credentials: crate::source::credential::Credentials,
    /// Comparisons `changed_since` searches reuse ([`changes::ChangedCache`]).
    changed: changes::ChangedCache,
    /// The store's access tokens, cached (see [`crate::access::registry`]).
    tokens: crate::access::Registry,
    started: Instant,
}

impl Engine {
    /// Opens the store (creating a local one on first use). The model loads
    /// when something first needs it (see [`Self::warm`]), unless the store
    /// must be re-embedded on open.
    pub async fn open(config: &EngineConfig) -> anyhow::Result<Self> {
        let location = config.data.clone();
        if let Some(dir) = crate::store::local_dir(&location) {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the store directory {}", dir.display()))?;
        }
        let store = Store::open_watching(&location, &config.s3, config.read_consistency())
            .await?
            .with_resident_budget(
                usize::try_from(config.resident_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            );
        // A job killed before it folded its rows into the full-text
        // indexes left documents that LanceDB's index cannot see (the
        // keyword leg asks it while the in-memory copy is not current):
        // catch up now.
        match store.unindexed_text_rows().await {
            Ok(0) => {}
            Ok(rows) => {
                tracing::warn!(rows, "stored rows are missing from the full-text index (an upload was interrupted, or the store predates its field): updating it");
                store
                    .refresh_indexes()
                    .await
                    .context("cannot bring the full-text index up to date")?;
            }
            Err(err) => tracing::warn!(%err, "cannot read the full-text index's coverage"),
        }
        let jobs = Jobs::new(store.runs().id());
        let ocr = detect_ocr(&config.ocr).await;
        let mut engine = Self {
            store,
            model: config.model.clone(),
            embedder: tokio::sync::OnceCell::new(),
            second_stage: second_stage(&config.model).await?,
            searches: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_SEARCHES)),
            search_limit: MAX_CONCURRENT_SEARCHES,
            search_budget: SEARCH_BUDGET,
            jobs,
            sessions: Sessions::new(config.read_consistency()),
            llm: None,
            metrics: Metrics::default(),
            chunking: ChunkConfig::default(),
            archive_limits: config.archive_limits(),
            job_limits: config.job_limits(),
            memory: config.memory_budget(),
            ocr,
            extractions: Arc::new(tokio::sync::Semaphore::new(
                crate::ingest::pipeline::MAX_EXTRACTIONS,
            )),
            background: Background::start().context("cannot start the upload runtime")?,
            source_settings: config.sources.settings(),
            source_fetches: Arc::new(tokio::sync::Semaphore::new(
                config.sources.settings().fetches,
            )),
            fetcher: crate::source::Fetcher::new(
                config.sources.settings().policy,
                config.sources.settings().fetch,
            )
            .context("cannot build the HTTP client sources are fetched with")?,
            credentials: declared_credentials(&config.sources)?,
            changed: moka::sync::Cache::new(changes::CHANGED_KEPT),
            tokens: crate::access::Registry::new(config.read_consistency()),
            started: Instant::now(),
        };
        // Jobs whose process died are ended now, and what they staged is
        // dropped (see `jobs::interrupt_dead_jobs`).
        engine.interrupt_dead_jobs().await;
        if engine.store.has_legacy() {
            let queue = engine
                .model()
                .await
                .map_err(|e| {
                    anyhow::anyhow!(
                        "this store was written by an older docshelf and is re-embedded on open, \
                         which needs the embedding model: {e}"
                    )
                })?
                .clone();
            crate::upgrade::upgrade(&mut engine.store, &queue)
                .await
                .context(
                    "upgrading the store to schema v2 failed (nothing was lost: the next start \
                     carries on where this one stopped)",
                )?;
        }
        Ok(engine)
    }

    /// Gets ready to serve: starts reading library versions into memory,
    /// and loads the embedding model now rather than at the first search or
    /// upload (a server does this at start, so its first answer is not
    /// slow and its status says at once whether the model works).
    pub async fn warm(&self) {
        // Library versions start coming into memory in the background (the
        // most recently searched first, as the budget allows): searches
        // answer from the store at once, and from memory as versions
        // arrive. Only a serving engine does this: a command that opens
        // the store once (a backup, an export) never reads them in.
        if let Err(err) = self.store.warm_resident().await {
            tracing::warn!(%err, "cannot list the published versions to hold in memory");
        }
        let _ = self.model().await;
        // The token budgets' vocabulary (200k entries) is read once, here
        // rather than by the first budgeted search.
        let _ = tokio::task::spawn_blocking(crate::search::tokens::warm).await;
    }

    /// The embedding worker, started on first use; or why it cannot start.
    async fn model(&self) -> Result<&EmbedQueue, &str> {
        self.embedder
            .get_or_init(|| load_model(self.model.clone()))
            .await
            .as_ref()
            .map_err(String::as_str)
    }

    /// Rescores search candidates with `stage` instead of the default
    /// [`LeadPrior`].
    pub fn with_second_stage(mut self, stage: Box<dyn SecondStage>) -> Self {
        self.second_stage = stage;
        self
    }

    /// Admits at most `concurrent` searches at once, each for at most
    /// `budget` (defaults: [`MAX_CONCURRENT_SEARCHES`], [`SEARCH_BUDGET`]).
    pub fn with_search_limits(mut self, concurrent: usize, budget: Duration) -> Self {
        self.searches = Arc::new(tokio::sync::Semaphore::new(concurrent));
        self.search_limit = concurrent;
        self.search_budget = budget;
        self
    }

    /// Turns Ask on, with this model.
    pub fn with_llm(mut self, llm: Option<Llm>) -> Self {
        self.llm = llm;
        self
    }

    /// Whether PDF pages without a text layer are read by OCR here.
    pub fn ocr(&self) -> &OcrStatus {
        &self.ocr
    }

    /// The chunk store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The embedding worker, loading the model if it is not loaded yet.
    pub async fn embedder(&self) -> Result<&EmbedQueue, EngineError> {
        self.model()
            .await
            .map_err(|e| EngineError::NoModel(e.to_owned()))
    }

    /// The engine's metrics (the HTTP layer adds its own to the same registry).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}

/// The second stage of every search: the cross-encoder in
/// `--reranker-dir` when one is given (loaded now, so a wrong directory
/// stops the start with its reason rather than degrading searches
/// quietly), the built-in [`LeadPrior`] otherwise.
async fn second_stage(model: &ModelConfig) -> anyhow::Result<Box<dyn SecondStage>> {
    let Some(dir) = model.reranker_dir.clone() else {
        return Ok(Box::new(LeadPrior::default()));
    };
    let device = model.device;
    let source = dir.display().to_string();
    let loaded = tokio::task::spawn_blocking(move || CrossEncoder::load(&dir, device))
        .await
        .context("the reranker's loading task failed")?
        .with_context(|| format!("cannot load the reranker from {source} (--reranker-dir)"))?;
    Ok(Box::new(CrossEncoderStage::new(loaded, source)))
}

/// Loads the model and starts its worker, off the async workers (loading
/// is CPU-bound). On a hardware GPU a second copy is loaded on the CPU for
/// queries, which it answers several times faster than the GPU does (see
/// `embed::queue`).
async fn load_model(model: ModelConfig) -> Result<EmbedQueue, String> {
    let loaded = tokio::task::spawn_blocking(move || {
        let start = |e: std::io::Result<EmbedQueue>| {
            e.map_err(|err| EmbedError::Backend(format!("cannot start the worker: {err}")))
        };
        let embedder = Embedder::load_with(&model.model_dir, model.device, model.precision)?;
        match embedder.backend() {
            Backend::Wgpu {
                software: false, ..
            } => {
                let queries =
                    Embedder::load_with(&model.model_dir, DeviceChoice::Cpu, model.precision)?;
                tracing::info!(bulk = %embedder.backend(), "uploads embed on the GPU, queries on the CPU");
                start(EmbedQueue::start_split(
                    std::sync::Arc::new(queries),
                    std::sync::Arc::new(embedder),
                ))
            }
            _ => start(EmbedQueue::start(embedder)),
        }
    })
    .await;
    let result = match loaded {
        Ok(Ok(queue)) => Ok(queue),
        Ok(Err(err)) => Err(err.to_string()),
        Err(join) => Err(format!("the model loading task failed: {join}")),
    };
    if let Err(err) = &result {
        tracing::error!(%err, "the embedding model is not available");
    }
    result
}

/// Finds the OCR tools (off the runtime: it runs `tesseract`) and says at
/// start whether scanned PDFs will be read.
async fn detect_ocr(config: &crate::config::OcrConfig) -> OcrStatus {
    let settings = config.settings();
    let status = tokio::task::spawn_blocking(move || OcrStatus::detect(settings))
        .await
        .unwrap_or_else(|join| OcrStatus::Missing(format!("the check crashed: {join}")));
    match &status {
        OcrStatus::Ready(_) => tracing::info!("OCR on: PDF pages without text are read by tesseract"),
        OcrStatus::Off => tracing::info!("OCR off (--ocr false): PDF pages without text are left out"),
        OcrStatus::Missing(why) => tracing::warn!(
            why,
            "OCR unavailable: PDF pages without text are left out until tesseract and pdftoppm are installed"
        ),
    }
    status
}

/// The credentials the operator declared; a declaration the start cannot
/// use stops it, and one whose secret cannot be read now is said in the
/// log (a source naming it fails until it can).
fn declared_credentials(
    sources: &crate::config::SourceConfig,
) -> anyhow::Result<crate::source::credential::Credentials> {
    let credentials = sources
        .credentials()
        .map_err(|e| anyhow::anyhow!("--credential: {e}"))?;
    for (name, why) in credentials.unreadable() {
        tracing::warn!(credential = %name, %why, "a declared credential cannot be read now");
    }
    Ok(credentials)
}
