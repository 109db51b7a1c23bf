//! What the store holds, as people browse it: libraries, their versions and
//! documents, and whole documents put back together.

use serde::{Deserialize, Serialize};

use crate::document::ChunkSpan;

/// One library and its versions, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LibraryInfo {
    pub name: String,
    pub versions: Vec<VersionInfo>,
    pub documents: u64,
    pub chunks: u64,
    /// When anything in the library was last stored (Unix seconds).
    pub updated_at: i64,
}

/// One version of a library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionInfo {
    pub version: String,
    pub documents: u64,
    pub chunks: u64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// One stored document, without its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentInfo {
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    pub chunks: u64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// A whole document, reassembled from its chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Document {
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    pub text: String,
    /// Where each chunk sits in `text`, so a hit can be shown in place.
    pub chunks: Vec<ChunkSpan>,
    /// Unix seconds.
    pub updated_at: i64,
}

/// What a delete removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Deleted {
    pub documents: u64,
    pub chunks: u64,
}
