//! The engine: the one object behind every face of docshelf.
//!
//! The HTTP handlers, the dashboard's server functions and the CLI all hold an
//! `Arc<Engine>` and call the same methods, so they cannot drift apart.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use index_core::{EmbeddingStatus, ServerStatus, StoreStatus};

use crate::config::{is_local_location, Paths};

/// The model docshelf embeds with.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Files a model directory must hold.
const MODEL_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

pub struct Engine {
    store_location: String,
    model_dir: PathBuf,
    started: Instant,
}

impl Engine {
    /// Opens the engine on the configured store and model.
    ///
    /// A local store directory is created when missing so a first `make run`
    /// just works.
    pub fn open(paths: &Paths) -> anyhow::Result<Self> {
        let location = paths.data.clone();
        if is_local_location(&location) {
            let dir = location.strip_prefix("file://").unwrap_or(&location);
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the store directory {dir}"))?;
        }
        Ok(Self {
            store_location: location,
            model_dir: paths.model_dir.clone(),
            started: Instant::now(),
        })
    }

    /// A snapshot of the engine's state.
    pub fn status(&self) -> ServerStatus {
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
                loaded: false,
                backend: None,
                error: Some(missing_model_files(&self.model_dir).map_or_else(
                    || "the embedding engine is not part of this build yet".to_owned(),
                    |missing| format!("model files missing: {missing}"),
                )),
            },
        }
    }
}

/// The model files absent from `dir`, comma-separated, or `None` if all are there.
fn missing_model_files(dir: &Path) -> Option<String> {
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

#[async_trait::async_trait]
impl app::backend::Backend for Engine {
    async fn status(&self) -> ServerStatus {
        Engine::status(self)
    }
}
