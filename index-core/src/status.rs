//! What the server reports about itself: shared by `GET /api/status`, the
//! dashboard's status panel and the CLI, so all three always agree.

use serde::{Deserialize, Serialize};

/// A snapshot of the running server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerStatus {
    /// The crate version of the server binary.
    pub version: String,
    /// Seconds since the server started.
    pub uptime_secs: u64,
    pub store: StoreStatus,
    pub embedding: EmbeddingStatus,
    /// Whether Ask (answers written by a language model) is on.
    #[serde(default)]
    pub ask: AskStatus,
    /// What rescores each search's best candidates: the built-in position
    /// prior, or the cross-encoder given with `--reranker-dir`.
    #[serde(default)]
    pub reranker: String,
    /// Whether scanned PDF pages are read by OCR.
    #[serde(default)]
    pub ocr: OcrInfo,
}

/// OCR of PDF pages without a text layer, as far as a client needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OcrInfo {
    /// Whether pages without text are read (the tools are installed and
    /// `--ocr` is on).
    pub enabled: bool,
    /// Tesseract's languages, when on (`eng`, `eng+deu`).
    pub languages: Option<String>,
    /// Why it is off, and what would turn it on, when off.
    pub why_off: Option<String>,
}

/// Ask's language model, as far as a client needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AskStatus {
    /// Whether a model is configured (`--llm-url`).
    pub enabled: bool,
    /// The model's name as configured, when on.
    pub model: Option<String>,
    /// How to turn Ask on, when it is off.
    pub how_to_enable: Option<String>,
}

/// Where documents are stored and how much is there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StoreStatus {
    /// The store location as given (a directory path or an object-store URI).
    pub location: String,
    /// What the store holds; `None` while no store is open.
    pub counts: Option<StoreCounts>,
    /// The chunk table's version this server reads. Every commit, by any
    /// process on the store, makes a new one: servers sharing a store
    /// serve the same data once they show the same version.
    #[serde(default)]
    pub table_version: Option<u64>,
    /// Whether every published library version is held in this server's
    /// memory right now, so that any search answers from memory (`false`
    /// while versions are read after start-up or a publish, and while the
    /// store is larger than `--resident-mib`: see `memory`).
    #[serde(default)]
    pub in_memory: bool,
    /// What this server holds in memory and how it has served.
    #[serde(default)]
    pub memory: MemoryStatus,
}

/// The library versions a server holds in memory (`--resident-mib`):
/// searches whose every version is held answer from memory, the others
/// from the store's indexes while their versions are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemoryStatus {
    /// The budget in bytes (0: nothing is held).
    pub budget_bytes: u64,
    /// Bytes the versions held take.
    pub held_bytes: u64,
    /// Library versions held.
    pub versions_held: u64,
    /// Library versions published in the store.
    pub versions_published: u64,
    /// Chunks held.
    pub chunks_held: u64,
    /// Search legs (dense, keyword) and section reads since start-up
    /// answered from memory.
    pub hits: u64,
    /// Search legs and section reads since start-up answered from the
    /// store because a version they cover was not held.
    pub misses: u64,
    /// Versions read into memory since start-up.
    pub loads: u64,
    /// Versions dropped to make room since start-up.
    pub evictions: u64,
    /// Versions found larger than the whole budget (searched from the
    /// store only).
    pub too_large: u64,
}

/// How much a store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StoreCounts {
    /// Number of libraries stored.
    pub libraries: u64,
    /// Number of documents (files) stored across all libraries.
    pub documents: u64,
    /// Number of chunks stored across all libraries.
    pub chunks: u64,
}

/// The embedding model and the compute backend it runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EmbeddingStatus {
    /// The model's name, e.g. `all-MiniLM-L6-v2`.
    pub model: String,
    /// The directory the weights are loaded from.
    pub model_dir: String,
    /// Whether the weights are loaded and the model answers.
    pub loaded: bool,
    /// The backend in use and what its projections compute in (e.g.
    /// `cpu (burn flex), int8`; beside a GPU, the CPU copy that answers
    /// queries follows in parentheses), or `None` while nothing is loaded.
    pub backend: Option<String>,
    /// Why the model is not loaded, when it is not.
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips_through_json_with_stable_field_names() {
        let status = ServerStatus {
            version: "1.2.3".into(),
            uptime_secs: 7,
            store: StoreStatus {
                location: "./data".into(),
                counts: Some(StoreCounts {
                    libraries: 1,
                    documents: 2,
                    chunks: 3,
                }),
                table_version: Some(4),
                in_memory: true,
                memory: MemoryStatus {
                    budget_bytes: 1 << 30,
                    held_bytes: 5,
                    versions_held: 1,
                    versions_published: 2,
                    chunks_held: 3,
                    hits: 4,
                    misses: 1,
                    loads: 1,
                    evictions: 0,
                    too_large: 0,
                },
            },
            embedding: EmbeddingStatus {
                model: "all-MiniLM-L6-v2".into(),
                model_dir: "./models".into(),
                loaded: false,
                backend: None,
                error: Some("missing".into()),
            },
            ask: AskStatus::default(),
            reranker: "lead prior".into(),
            ocr: OcrInfo {
                enabled: true,
                languages: Some("eng".into()),
                why_off: None,
            },
        };
        let json = serde_json::to_value(&status).expect("serialises");
        // The JSON shape is a public API (REST clients read it): pin it.
        assert_eq!(json["store"]["location"], "./data");
        assert_eq!(json["embedding"]["backend"], serde_json::Value::Null);
        assert_eq!(json["store"]["counts"]["chunks"], 3);
        assert_eq!(json["reranker"], "lead prior");
        assert_eq!(json["ocr"]["enabled"], true);
        assert_eq!(json["ocr"]["languages"], "eng");
        let back: ServerStatus = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, status);
    }
}
