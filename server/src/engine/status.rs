//! What the engine reports about itself: the store, the model, Ask and
//! the second stage.

use index_core::access::Caller;
use index_core::{AskStatus, EmbeddingStatus, ServerStatus, StoreCounts, StoreStatus};

use super::{Engine, EngineError, MODEL_NAME};
use crate::metrics::View;

impl Engine {
    /// A snapshot of the engine's state. Its counts are of the libraries
    /// the caller may read.
    pub async fn status(&self, caller: &Caller) -> ServerStatus {
        let (loaded, backend, error) = match self.embedder.get() {
            Some(Ok(queue))
                if (queue.query_backend(), queue.query_precision())
                    != (queue.backend(), queue.precision()) =>
            {
                (
                    true,
                    Some(format!(
                        "{}, {} (queries: {}, {})",
                        queue.backend(),
                        queue.precision(),
                        queue.query_backend(),
                        queue.query_precision()
                    )),
                    None,
                )
            }
            Some(Ok(queue)) => (
                true,
                Some(format!("{}, {}", queue.backend(), queue.precision())),
                None,
            ),
            Some(Err(err)) => (false, None, Some(err.clone())),
            // Not needed yet (a CLI command that never embeds).
            None => (false, None, None),
        };
        let counts = match self.counts(caller).await {
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
                memory: self.memory_status().await,
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
            ocr: self.ocr.info(),
        }
    }
}

impl Engine {
    /// The metrics `caller` may see, as Prometheus text: every metric for a
    /// caller who may read every library (an admin, a `read:*` token, the
    /// caller without a token where reads are open), who learns nothing
    /// from the store's counts that the catalog does not show it; the
    /// process's own for any other. Counters cannot be split by library,
    /// so a scoped caller gets none of the store's rather than all of them:
    /// uploads into libraries it cannot see would show as counts moving.
    pub fn metrics_text(&self, caller: &Caller) -> String {
        let view = match caller.permissions.reads_everything() {
            true => View::Everything,
            false => View::Process,
        };
        self.metrics.memory(&self.memory_figures());
        self.metrics.render(view)
    }

    /// The store's counts, or those of the caller's libraries.
    async fn counts(&self, caller: &Caller) -> Result<StoreCounts, EngineError> {
        if caller.permissions.reads_everything() {
            return Ok(self.store.counts().await?);
        }
        let visible = self.visible_libraries(caller).await?;
        Ok(StoreCounts {
            libraries: visible.len() as u64,
            documents: visible.iter().map(|l| l.documents).sum(),
            chunks: visible.iter().map(|l| l.chunks).sum(),
        })
    }
}
