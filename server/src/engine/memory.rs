//! The library versions held in memory, as the engine reports and keeps
//! them: their status, and the searches noted to warm the next start with
//! (see `store::resident`, `store::searched`).

use std::sync::Arc;
use std::time::Duration;

use super::Engine;

/// How often the versions searches named are written to the store.
const SAVE_SEARCHED_EVERY: Duration = Duration::from_secs(30);

impl Engine {
    /// What the store's in-memory segments hold, beside what is published.
    pub(super) async fn memory_status(&self) -> index_core::status::MemoryStatus {
        let versions_published = match self.store.published().await {
            Ok(published) => published.versions.len() as u64,
            Err(err) => {
                tracing::warn!(%err, "cannot list the published versions");
                0
            }
        };
        index_core::status::MemoryStatus {
            versions_published,
            ..self.memory_figures()
        }
    }

    /// [`Self::memory_status`] but for what is published, which needs the
    /// catalog: what metrics mirror.
    pub(super) fn memory_figures(&self) -> index_core::status::MemoryStatus {
        let stats = self.store.resident_stats();
        index_core::status::MemoryStatus {
            budget_bytes: stats.budget_bytes,
            held_bytes: stats.held_bytes,
            versions_held: stats.segments,
            versions_published: 0,
            chunks_held: stats.chunks,
            hits: stats.hits,
            misses: stats.misses,
            loads: stats.loads,
            evictions: stats.evictions,
            too_large: stats.too_large,
        }
    }

    /// Writes the versions searches named to the store every
    /// [`SAVE_SEARCHED_EVERY`], for as long as the engine lives, so that
    /// the next start (of any replica) reads them into memory first.
    pub fn schedule_searched_writes(self: &Arc<Self>) {
        let engine = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(SAVE_SEARCHED_EVERY).await;
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                if let Err(err) = engine.store.save_searched().await {
                    tracing::warn!(%err, "cannot write which versions were searched; will try again");
                }
            }
        });
    }
}
