//! Moving a library version between servers without embedding it again:
//! what an import reports (the file itself is the server's business).

use serde::{Deserialize, Serialize};

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportedVersion {
    pub library: String,
    pub version: String,
    /// Documents and chunks the export held, which the version now is.
    pub documents: u64,
    pub chunks: u64,
    /// Chunks written that the version did not hold, and chunks of the
    /// version before that the export did not hold (removed).
    pub inserted: u64,
    pub deleted: u64,
}
