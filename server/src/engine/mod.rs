//! The engine: the one object behind every face of docshelf.
//!
//! The HTTP handlers, the dashboard's server functions and the CLI all hold an
//! `Arc<Engine>` and call the same methods, so they cannot drift apart.
//!
//! - [`scope`]: which libraries and versions a request covers.
//! - [`EngineError`] (in [`crate::error`]): why a request was refused.

mod scope;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use index_core::ask::{Answer, Ask, AskEvent};
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::chunk::ChunkConfig;
use index_core::document::{reassemble, Piece};
use index_core::extract::ArchiveLimits;
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::job::{JobStatus, Upload, UploadAccepted};
use index_core::library::{self, Resolution};
use index_core::search::{Mode, Search, SearchHit, SearchParams, SearchResponse, Sticky};
use index_core::validate::{self, NameError};
use index_core::version;
use index_core::{AskStatus, EmbeddingStatus, ServerStatus, StoreStatus};

use self::scope::SearchScope;
use crate::ask::conversations::Conversations;
use crate::background::Background;
use crate::config::{local_dir, EngineConfig, ModelConfig};
use crate::embed::cross_encoder::CrossEncoder;
use crate::embed::{EmbedError, EmbedQueue, Embedder};
use crate::ingest::pipeline::Pipeline;
use crate::ingest::{run_job, JobHandle, Jobs};
use crate::llm::{Llm, LlmError};
use crate::metrics::Metrics;
use crate::search::rerank::cross_encoder::CrossEncoderStage;
use crate::search::rerank::{LeadPrior, SecondStage};
use crate::search::sessions::Sessions;
use crate::search::{self, RunError, Stage};
use crate::store::job_log::{self, StoredJob};
use crate::store::{Store, StoredChunk, Target};

pub use crate::error::EngineError;

/// The model docshelf embeds with.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Searches running at once, at most. Past it a search is refused at once
/// (503 with `Retry-After`) rather than queued: 200 concurrent searches
/// were reported to queue without bound and be answered at a p50 of 9 s.
/// A search costs 35–50 ms of a 2-core machine (`make bench-search`), so 64
/// in flight is already a couple of seconds of work; a client told "busy"
/// can retry or go elsewhere.
pub const MAX_CONCURRENT_SEARCHES: usize = 64;

/// The longest one search may run before it is stopped (503).
pub const SEARCH_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

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
    search_budget: std::time::Duration,
    jobs: Jobs,
    sessions: Sessions,
    /// How long a session held here is trusted before it is read from the
    /// store again (the read-consistency interval).
    session_refresh: std::time::Duration,
    /// Ask's language model; `None` turns Ask off.
    llm: Option<Llm>,
    conversations: Conversations,
    metrics: Metrics,
    chunking: ChunkConfig,
    archive_limits: ArchiveLimits,
    job_limits: crate::ingest::JobLimits,
    /// Extraction threads' permits, shared by every job.
    extractions: Arc<tokio::sync::Semaphore>,
    /// Where upload jobs run: below searches' priority.
    background: Background,
    /// How often a long job folds new rows into the indexes.
    refresh_every: std::time::Duration,
    started: Instant,
}

impl Engine {
    /// Opens the store (creating a local one on first use). The model loads
    /// when something first needs it (see [`Self::warm`]), unless the store
    /// must be re-embedded on open.
    pub async fn open(config: &EngineConfig) -> anyhow::Result<Self> {
        let location = config.data.clone();
        if let Some(dir) = local_dir(&location) {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the store directory {}", dir.display()))?;
        }
        let store = Store::open_watching(&location, &config.s3, config.read_consistency())
            .await?
            .with_resident_rows(config.resident_chunks);
        // A job killed before it folded its rows into the full-text
        // indexes left documents the keyword leg cannot see: catch up now.
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
        // Starts copying the chunk table into memory in the background, so
        // the first searches after start-up need not start it.
        if let Err(err) = store.resident_ready().await {
            tracing::warn!(%err, "cannot read the chunk table's version");
        }
        let mut engine = Self {
            store,
            model: config.model.clone(),
            embedder: tokio::sync::OnceCell::new(),
            second_stage: second_stage(&config.model).await?,
            searches: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_SEARCHES)),
            search_limit: MAX_CONCURRENT_SEARCHES,
            search_budget: SEARCH_BUDGET,
            jobs: Jobs::default(),
            sessions: Sessions::default(),
            session_refresh: config.read_consistency(),
            llm: None,
            conversations: Conversations::default(),
            metrics: Metrics::default(),
            chunking: ChunkConfig::default(),
            archive_limits: config.archive_limits(),
            job_limits: config.job_limits(),
            extractions: Arc::new(tokio::sync::Semaphore::new(
                crate::ingest::pipeline::MAX_EXTRACTIONS,
            )),
            background: Background::start().context("cannot start the upload runtime")?,
            refresh_every: config.index_refresh(),
            started: Instant::now(),
        };
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

    /// Loads the embedding model now rather than at the first search or
    /// upload (a server does this at start, so its first answer is not
    /// slow and its status says at once whether the model works).
    pub async fn warm(&self) {
        let _ = self.model().await;
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
    pub fn with_search_limits(mut self, concurrent: usize, budget: std::time::Duration) -> Self {
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

    /// Ask's model, or why Ask is off.
    pub fn llm(&self) -> Result<&Llm, EngineError> {
        self.llm
            .as_ref()
            .ok_or(EngineError::Llm(LlmError::NotConfigured))
    }

    /// Each Ask session's last exchanges.
    pub fn conversations(&self) -> &Conversations {
        &self.conversations
    }

    /// Answers a question from the documents (see [`crate::ask`]), sending
    /// sources and text through `emit` as they come.
    pub async fn ask(
        &self,
        ask: Ask,
        emit: &mut (dyn FnMut(AskEvent) + Send),
    ) -> Result<Answer, EngineError> {
        crate::ask::answer(self, self.llm()?, ask, emit).await
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

    /// Upload jobs.
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// The engine's metrics (the HTTP layer adds its own to the same registry).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Starts an upload job in the background and returns it at once: its
    /// id, to follow it in [`Self::jobs`].
    pub async fn start_upload(
        self: &Arc<Self>,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<UploadAccepted, EngineError> {
        let (library, version) = (validate::library(library)?, validate::version(version)?);
        if uploads.is_empty() {
            return Err(EngineError::NoFiles);
        }
        self.embedder().await?;
        let job = self.jobs.create(&library, &version);
        let (engine, handle) = (self.clone(), job.clone());
        self.background.spawn(async move {
            tokio::join!(engine.run_upload(&handle, uploads), engine.record(&handle));
        });
        Ok(job.accepted())
    }

    /// Writes `job`'s status to the store as it changes (at most every
    /// [`job_log::RECORD_EVERY`]) until it is done, so that other processes
    /// on the store can report it (see [`job_log`]). A failed write costs
    /// only staleness elsewhere: it is logged and the job goes on.
    async fn record(&self, job: &JobHandle) {
        let mut changes = job.subscribe();
        loop {
            let status = changes.borrow_and_update().clone();
            let done = status.state == index_core::job::JobState::Done;
            if let Err(err) = self.store.save_job(&status, job.watch_token()).await {
                tracing::warn!(job = %status.id, %err, "cannot write the job's status to the store");
            }
            if done {
                if let Err(err) = self.store.compact_jobs().await {
                    tracing::warn!(%err, "cannot compact the job table");
                }
                return;
            }
            tokio::time::sleep(job_log::RECORD_EVERY).await;
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// A job this process does not hold, as the process running it last
    /// wrote it to the store: behind a load balancer, or after a restart.
    pub async fn stored_job(&self, id: &str) -> Result<Option<StoredJob>, EngineError> {
        Ok(self.store.stored_job(id).await?)
    }

    /// Runs an upload job here, to its end, and says how it ended: the CLI
    /// and evaluation wait on this (the server uses [`Self::start_upload`]).
    /// The job is not listed among the server's jobs.
    pub async fn ingest(
        &self,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<JobStatus, EngineError> {
        self.ingest_watched(library, version, uploads, |_| {}).await
    }

    /// As [`Self::ingest`]; `watch` is handed the job's status, which
    /// changes as each file moves on, before any work starts. Its sender
    /// is dropped when the job ends.
    pub async fn ingest_watched(
        &self,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
        watch: impl FnOnce(tokio::sync::watch::Receiver<JobStatus>),
    ) -> Result<JobStatus, EngineError> {
        let (library, version) = (validate::library(library)?, validate::version(version)?);
        let job = JobHandle::detached(&library, &version);
        watch(job.subscribe());
        self.run_upload(&job, uploads).await;
        Ok(job.status())
    }

    /// Runs `job` to the end.
    async fn run_upload(&self, job: &JobHandle, uploads: Vec<Upload>) {
        let embedder = match self.embedder().await {
            Ok(e) => e,
            Err(err) => {
                job.set_state(index_core::job::JobState::Done, Some(err.to_string()));
                return;
            }
        };
        let pipeline = Pipeline {
            store: &self.store,
            embedder,
            metrics: &self.metrics,
            chunking: self.chunking,
            archive_limits: self.archive_limits,
            job_limits: self.job_limits,
            refresh_every: self.refresh_every,
            extractions: &self.extractions,
        };
        run_job(&pipeline, job, uploads).await;
    }

    /// Searches, with the session's sticky library and loose library names
    /// resolved (see [`Self::search_staged`]).
    pub async fn search(&self, params: SearchParams) -> Result<SearchResponse, EngineError> {
        self.search_staged(params.validate()?, &mut |_, _| {}).await
    }

    /// Searches, calling `on_stage` with the hits of each stage as soon as
    /// they are ready (the streaming API forwards these).
    ///
    /// The library filter comes from, in order: the request (resolved
    /// loosely, and then sticky for the session), or the session's sticky
    /// library. With neither, every library is searched and, when strong
    /// hits come from several, the answer takes turns between them.
    ///
    /// A search is refused at once when [`MAX_CONCURRENT_SEARCHES`] are
    /// running ([`EngineError::Busy`]) and stopped past its time budget
    /// ([`EngineError::TimedOut`]).
    pub async fn search_staged(
        &self,
        search: Search,
        on_stage: &mut (dyn FnMut(Stage, &[SearchHit]) + Send),
    ) -> Result<SearchResponse, EngineError> {
        let Ok(_permit) = self.searches.try_acquire() else {
            return Err(EngineError::Busy(self.search_limit));
        };
        let result =
            match tokio::time::timeout(self.search_budget, self.search_admitted(search, on_stage))
                .await
            {
                Ok(result) => result,
                Err(_) => Err(EngineError::TimedOut(self.search_budget.as_secs().max(1))),
            };
        match result {
            // A store that failed or ran out of time may be an object store
            // that is down: then that is the answer, not an internal fault
            // or a slow query.
            Err(
                EngineError::TimedOut(_)
                | EngineError::Store(_)
                | EngineError::Search(RunError::Store(_)),
            ) if self.store.object_store_down().await => Err(EngineError::StoreUnavailable),
            other => other,
        }
    }

    async fn search_admitted(
        &self,
        search: Search,
        on_stage: &mut (dyn FnMut(Stage, &[SearchHit]) + Send),
    ) -> Result<SearchResponse, EngineError> {
        let started = Instant::now();
        let session_id = self.sessions.id_for(search.session_id.as_deref());
        // Only a session the client names is shared through the store: a
        // search without one would otherwise write a session row (a commit)
        // whenever it names a library. The id it gets back is written the
        // first time the client brings it.
        let shared_session = search.session_id.as_deref() == Some(session_id.as_str());
        if shared_session {
            self.load_session(&session_id).await;
        }
        if search.clear_sticky {
            self.sessions.set_sticky(&session_id, None);
        }
        let libraries = self.store.libraries().await?;
        let SearchScope {
            scope,
            library: target,
            version: version_used,
            resolution,
            sticky_applied,
        } = scope::for_search(&libraries, &search, &self.sessions, &session_id)?;

        // A keyword search never needs the model, so it never loads it.
        let embedder = match search.mode {
            Mode::Keyword => Err(String::new()),
            Mode::Hybrid | Mode::Dense => self.model().await.map_err(str::to_owned),
        };
        let outcome = search::run(
            &self.store,
            embedder,
            self.second_stage.as_ref(),
            &search,
            &scope,
            target.is_none(),
            on_stage,
        )
        .await?;

        self.metrics.search(search.mode.name(), started.elapsed());
        if shared_session && !self.sessions.stored(&session_id) {
            let sticky = self.sessions.sticky(&session_id);
            self.save_session(&session_id, sticky).await;
        }

        let mut notice = Vec::new();
        if let Some(Resolution::Resolved { given, library, .. }) = &resolution {
            notice.push(format!("Library \"{given}\" is {library}."));
        }
        if sticky_applied {
            if let Some(name) = &target {
                notice.push(format!(
                    "Searched {name} only, as in your last search; clear the library to search everything."
                ));
            }
        }
        if outcome.libraries_found.len() >= 2 {
            notice.push(format!(
                "Found in {}.",
                join_names(&outcome.libraries_found)
            ));
        }
        Ok(SearchResponse {
            query: search.query.clone(),
            k: search.k,
            mode: search.mode,
            fusion: search.fusion.name().to_owned(),
            rrf_k: match search.fusion {
                index_core::search::Fusion::Rrf { k } => Some(k),
                index_core::search::Fusion::Dbsf => None,
            },
            weights: search.weights.into(),
            total_results: outcome.hits.len(),
            results: outcome.hits,
            library: target,
            version: version_used,
            resolution,
            sticky_library: self.sessions.sticky(&session_id),
            session_id: Some(session_id),
            sticky_applied,
            libraries_found: outcome.libraries_found,
            notice: (!notice.is_empty()).then(|| notice.join(" ")),
            took_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// The session's sticky library, if any.
    pub async fn sticky(&self, session_id: &str) -> Option<Sticky> {
        self.load_session(session_id).await;
        self.sessions.sticky(session_id)
    }

    /// Forgets the session's sticky library.
    pub async fn clear_sticky(&self, session_id: &str) {
        self.load_session(session_id).await;
        self.sessions.set_sticky(session_id, None);
        if !self.sessions.stored(session_id) {
            self.save_session(session_id, None).await;
        }
    }

    /// Brings a session this process does not hold in from the store, if
    /// another process (or this one before a restart) wrote it. A store
    /// that cannot be read leaves the session new here: a sticky library
    /// lost is a filter to type again, not a failed search.
    ///
    /// A session held here is trusted for the store's read-consistency
    /// interval, like everything else other processes write, then read
    /// again: a client whose searches alternate between replicas sees the
    /// library it set on one in the next search on the other.
    async fn load_session(&self, session_id: &str) {
        if self.sessions.fresh(session_id, self.session_refresh) {
            return;
        }
        match self.store.stored_sticky(session_id).await {
            Ok(Some(sticky)) => self.sessions.set_stored(session_id, sticky),
            Ok(None) => self.sessions.checked(session_id),
            Err(err) => tracing::warn!(%err, "cannot read the session from the store"),
        }
    }

    /// Writes a session's changed sticky library to the store (see
    /// [`crate::store::session_log`]); a failure is logged, as in
    /// [`Self::load_session`].
    async fn save_session(&self, session_id: &str, sticky: Option<Sticky>) {
        match self.store.save_sticky(session_id, sticky.as_ref()).await {
            Ok(()) => self.sessions.set_stored(session_id, sticky),
            Err(err) => {
                tracing::warn!(%err, "cannot write the session's sticky library to the store")
            }
        }
    }

    /// Resolves a loosely given library name against the stored ones.
    pub async fn resolve_library(&self, name: &str) -> Result<Resolution, EngineError> {
        let names: Vec<String> = self
            .store
            .libraries()
            .await?
            .iter()
            .map(|l| l.name.clone())
            .collect();
        Ok(library::resolve(name, &names))
    }

    /// Every library with its versions and counts.
    pub async fn libraries(&self) -> Result<Vec<LibraryInfo>, EngineError> {
        Ok(self.store.libraries().await?.as_ref().clone())
    }

    /// The documents of a library (optionally one version of it).
    pub async fn documents(
        &self,
        library: &str,
        version: Option<&str>,
    ) -> Result<Vec<DocumentInfo>, EngineError> {
        let version = match version {
            Some(v) => Some(self.version_of(library, v).await?),
            None => {
                self.require_library(library).await?;
                None
            }
        };
        Ok(self
            .store
            .documents()
            .await?
            .iter()
            .filter(|d| d.library == library && version.as_ref().is_none_or(|v| *v == d.version))
            .cloned()
            .collect())
    }

    /// A stored version of `library`: `version` itself, or the newest for
    /// `latest`. Unknown libraries and versions are errors that list what
    /// exists.
    pub async fn version_of(&self, library: &str, version: &str) -> Result<String, EngineError> {
        let libraries = self.store.libraries().await?;
        scope::version_in(scope::library_named(&libraries, library)?, version)
    }

    /// Fails unless a library named exactly `library` is stored.
    async fn require_library(&self, library: &str) -> Result<(), EngineError> {
        let libraries = self.store.libraries().await?;
        scope::library_named(&libraries, library).map(|_| ())
    }

    /// A whole document, reassembled from its chunks (`latest` allowed).
    pub async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, EngineError> {
        let version = self.version_of(library, version).await?;
        let chunks = self.store.document(library, &version, file_path).await?;
        if chunks.is_empty() {
            return Err(EngineError::UnknownDocument {
                library: library.to_owned(),
                version,
                file_path: file_path.to_owned(),
            });
        }
        let pieces: Vec<Piece> = chunks.iter().map(StoredChunk::piece).collect();
        let whole = reassemble(pieces);
        Ok(Document {
            library: library.to_owned(),
            version,
            file_path: file_path.to_owned(),
            title: chunks.iter().find_map(|c| c.title.clone()),
            text: whole.text,
            chunks: whole.spans,
            updated_at: chunks
                .iter()
                .map(|c| c.created_at_micros / 1_000_000)
                .max()
                .unwrap_or(0),
        })
    }

    /// Deletes a document, a version or a library; names must be exact
    /// (no loose matching for deletes). Deleting nothing is an error.
    #[tracing::instrument(skip(self))]
    pub async fn delete(&self, target: Target<'_>) -> Result<Deleted, EngineError> {
        let (library, version) = match target {
            Target::Library(l) => (l, None),
            Target::Version(l, v) | Target::Document(l, v, _) => (l, Some(v)),
        };
        if let Some(v) = version {
            if version::is_latest(v) {
                return Err(EngineError::InvalidName(NameError::ReservedVersion));
            }
            self.version_of(library, v).await?;
        } else {
            self.require_library(library).await?;
        }
        let deleted = self.store.delete(target).await?;
        if deleted.documents == 0 {
            if let Target::Document(l, v, p) = target {
                return Err(EngineError::UnknownDocument {
                    library: l.to_owned(),
                    version: v.to_owned(),
                    file_path: p.to_owned(),
                });
            }
        }
        Ok(deleted)
    }

    /// Records a like or dislike, and returns the chunk's votes so far.
    pub async fn feedback(&self, request: &FeedbackRequest) -> Result<Votes, EngineError> {
        if !self.store.has_chunk(&request.chunk_id).await? {
            return Err(EngineError::UnknownChunk(request.chunk_id.clone()));
        }
        self.store
            .record_vote(&request.chunk_id, request.vote)
            .await?;
        let votes = self.store.votes(&[request.chunk_id.as_str()]).await?;
        Ok(votes.get(&request.chunk_id).copied().unwrap_or_default())
    }

    /// A snapshot of the engine's state.
    pub async fn status(&self) -> ServerStatus {
        let (loaded, backend, error) = match self.embedder.get() {
            Some(Ok(queue)) => (true, Some(queue.backend().to_string()), None),
            Some(Err(err)) => (false, None, Some(err.clone())),
            // Not needed yet (a CLI command that never embeds).
            None => (false, None, None),
        };
        let counts = match self.store.counts().await {
            Ok(c) => Some(c),
            Err(err) => {
                tracing::warn!(%err, "cannot count the store's contents");
                None
            }
        };
        ServerStatus {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            uptime_secs: self.started.elapsed().as_secs(),
            store: StoreStatus {
                location: self.store.location().to_owned(),
                counts,
                table_version: self.store.table_version().await.ok(),
                in_memory: self.store.resident_ready().await.unwrap_or(false),
            },
            embedding: EmbeddingStatus {
                model: MODEL_NAME.to_owned(),
                model_dir: self.model.model_dir.display().to_string(),
                loaded,
                backend,
                error,
            },
            ask: match &self.llm {
                Some(llm) => AskStatus {
                    enabled: true,
                    model: Some(llm.model().to_owned()),
                    how_to_enable: None,
                },
                None => AskStatus {
                    enabled: false,
                    model: None,
                    how_to_enable: Some(crate::llm::HOW_TO_ENABLE.to_owned()),
                },
            },
            reranker: self.second_stage.describe(),
        }
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
/// is CPU-bound).
async fn load_model(model: ModelConfig) -> Result<EmbedQueue, String> {
    let loaded = tokio::task::spawn_blocking(move || {
        Embedder::load(&model.model_dir, model.device).and_then(|e| {
            EmbedQueue::start(e)
                .map_err(|err| EmbedError::Backend(format!("cannot start the worker: {err}")))
        })
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

/// "a", "a and b", "a, b and c".
fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
