//! The engine: the one object behind every face of docshelf.
//!
//! The HTTP handlers, the dashboard's server functions and the CLI all hold an
//! `Arc<Engine>` and call the same methods, so they cannot drift apart.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use index_core::chunk::ChunkConfig;
use index_core::extract::ArchiveLimits;
use index_core::validate::{self, NameError};
use index_core::{EmbeddingStatus, ServerStatus, StoreStatus};

use crate::config::{is_local_location, EngineConfig};
use crate::embed::{EmbedError, EmbedQueue, Embedder};
use crate::ingest::pipeline::Pipeline;
use crate::ingest::{run_job, JobHandle, Jobs, Upload};
use crate::store::Store;

/// The model docshelf embeds with.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Why the engine refused a request.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error("the embedding model is not available: {0}")]
    NoModel(String),
    #[error("an upload needs at least one file")]
    NoFiles,
}

pub struct Engine {
    store: Store,
    model_dir: PathBuf,
    /// The embedding worker, or why it could not start. The server still
    /// starts without a model, so the dashboard can say what is wrong.
    embedder: Result<EmbedQueue, String>,
    jobs: Jobs,
    chunking: ChunkConfig,
    archive_limits: ArchiveLimits,
    started: Instant,
}

impl Engine {
    /// Opens the store (creating a local one on first use) and loads the model.
    pub async fn open(config: &EngineConfig) -> anyhow::Result<Self> {
        let location = config.data.clone();
        if is_local_location(&location) {
            let dir = location.strip_prefix("file://").unwrap_or(&location);
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the store directory {dir}"))?;
        }
        let store = Store::open(&location).await?;
        let (model_dir, device) = (config.model.model_dir.clone(), config.model.device);
        // Loading the model is CPU-bound: keep it off the async workers.
        let embedder = tokio::task::spawn_blocking(move || {
            Embedder::load(&model_dir, device).and_then(|e| {
                EmbedQueue::start(e)
                    .map_err(|err| EmbedError::Backend(format!("cannot start the worker: {err}")))
            })
        })
        .await
        .context("the model loading task failed")?
        .map_err(|err| {
            tracing::error!(%err, "the embedding model is not available");
            err.to_string()
        });
        Ok(Self {
            store,
            model_dir: config.model.model_dir.clone(),
            embedder,
            jobs: Jobs::default(),
            chunking: ChunkConfig::default(),
            archive_limits: config.archive_limits(),
            started: Instant::now(),
        })
    }

    /// The chunk store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The embedding worker.
    pub fn embedder(&self) -> Result<&EmbedQueue, EngineError> {
        self.embedder
            .as_ref()
            .map_err(|e| EngineError::NoModel(e.clone()))
    }

    /// Upload jobs.
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// Starts an upload job in the background and returns it at once.
    pub fn start_upload(
        self: &Arc<Self>,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<Arc<JobHandle>, EngineError> {
        let (library, version) = (validate::library(library)?, validate::version(version)?);
        if uploads.is_empty() {
            return Err(EngineError::NoFiles);
        }
        self.embedder()?;
        let job = self.jobs.create(&library, &version);
        let (engine, handle) = (self.clone(), job.clone());
        tokio::spawn(async move { engine.ingest(&handle, uploads).await });
        Ok(job)
    }

    /// Runs an upload job to the end (the CLI waits on this directly).
    pub async fn ingest(&self, job: &JobHandle, uploads: Vec<Upload>) {
        let embedder = match self.embedder() {
            Ok(e) => e,
            Err(err) => {
                job.set_state(index_core::job::JobState::Done, Some(err.to_string()));
                return;
            }
        };
        let pipeline = Pipeline {
            store: &self.store,
            embedder,
            chunking: self.chunking,
            archive_limits: self.archive_limits,
        };
        run_job(&pipeline, job, uploads).await;
    }

    /// A snapshot of the engine's state.
    pub async fn status(&self) -> ServerStatus {
        let (loaded, backend, error) = match &self.embedder {
            Ok(queue) => (true, Some(queue.backend().to_string()), None),
            Err(err) => (false, None, Some(err.clone())),
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
            },
            embedding: EmbeddingStatus {
                model: MODEL_NAME.to_owned(),
                model_dir: self.model_dir.display().to_string(),
                loaded,
                backend,
                error,
            },
        }
    }
}

#[async_trait::async_trait]
impl app::backend::Backend for Engine {
    async fn status(&self) -> ServerStatus {
        Engine::status(self).await
    }
}
