//! The engine: the one object behind every face of docshelf.
//!
//! The HTTP handlers, the dashboard's server functions and the CLI all hold an
//! `Arc<Engine>` and call the same methods, so they cannot drift apart.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use index_core::{EmbeddingStatus, ServerStatus, StoreStatus};

use crate::config::{is_local_location, EngineConfig};
use crate::embed::{EmbedError, EmbedQueue, Embedder};

/// The model docshelf embeds with.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

pub struct Engine {
    store_location: String,
    model_dir: PathBuf,
    /// The embedding worker, or why it could not start. The server still
    /// starts without a model, so the dashboard can say what is wrong.
    embedder: Result<EmbedQueue, String>,
    started: Instant,
}

impl Engine {
    /// Opens the engine on the configured store and model.
    ///
    /// A local store directory is created when missing so a first `make run`
    /// just works. Loading the model blocks: call from a blocking context.
    pub fn open(config: &EngineConfig) -> anyhow::Result<Self> {
        let location = config.data.clone();
        if is_local_location(&location) {
            let dir = location.strip_prefix("file://").unwrap_or(&location);
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the store directory {dir}"))?;
        }
        let embedder = Embedder::load(&config.model_dir, config.device)
            .and_then(|e| {
                EmbedQueue::start(e)
                    .map_err(|err| EmbedError::Backend(format!("cannot start the worker: {err}")))
            })
            .map_err(|err| {
                tracing::error!(%err, "the embedding model is not available");
                err.to_string()
            });
        Ok(Self {
            store_location: location,
            model_dir: config.model_dir.clone(),
            embedder,
            started: Instant::now(),
        })
    }

    /// A snapshot of the engine's state.
    pub fn status(&self) -> ServerStatus {
        let (loaded, backend, error) = match &self.embedder {
            Ok(queue) => (true, Some(queue.backend().to_string()), None),
            Err(err) => (false, None, Some(err.clone())),
        };
        ServerStatus {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            uptime_secs: self.started.elapsed().as_secs(),
            store: StoreStatus {
                location: self.store_location.clone(),
                counts: None,
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
        Engine::status(self)
    }
}

/// Opens the engine off the async runtime (model loading is CPU-bound).
pub async fn open_shared(config: EngineConfig) -> anyhow::Result<Arc<Engine>> {
    tokio::task::spawn_blocking(move || Engine::open(&config))
        .await
        .context("the engine start-up task failed")?
        .map(Arc::new)
}
