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
    /// Upload jobs into what was deleted that were stopped first (their
    /// documents were never published).
    #[serde(default)]
    pub cancelled_jobs: u64,
    /// Sources that filled what was deleted, forgotten with it (a source
    /// that stored nothing is deleted so too).
    #[serde(default)]
    pub sources: u64,
}

/// What a delete removes: a library (every version), a version, or one
/// document. Names are exact: deletes never resolve loosely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    Library(&'a str),
    Version(&'a str, &'a str),
    Document(&'a str, &'a str, &'a str),
}

impl<'a> Target<'a> {
    /// A library without a version, a version without a path, else a document.
    pub fn from_parts(
        library: &'a str,
        version: Option<&'a str>,
        file_path: Option<&'a str>,
    ) -> Self {
        match (version, file_path) {
            (None, _) => Self::Library(library),
            (Some(v), None) => Self::Version(library, v),
            (Some(v), Some(p)) => Self::Document(library, v, p),
        }
    }

    /// The library the target is in.
    pub fn library(&self) -> &'a str {
        match *self {
            Self::Library(l) | Self::Version(l, _) | Self::Document(l, _, _) => l,
        }
    }

    /// Whether `document` is one of those the target covers.
    pub fn matches(&self, document: &DocumentInfo) -> bool {
        match *self {
            Self::Library(l) => document.library == l,
            Self::Version(l, v) => document.library == l && document.version == v,
            Self::Document(l, v, p) => {
                document.library == l && document.version == v && document.file_path == p
            }
        }
    }
}

impl std::fmt::Display for Target<'_> {
    /// As a person reads it: "library X (every version)", "X 1.0", "a.md from X 1.0".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Library(l) => write!(f, "library {l} (every version)"),
            Self::Version(l, v) => write!(f, "{l} {v}"),
            Self::Document(l, v, p) => write!(f, "{p} from {l} {v}"),
        }
    }
}
