//! Sessions' sticky libraries, kept in the store so that a follow-up
//! search stays in its library whichever replica answers it.
//!
//! Each process keeps its sessions in memory (`engine::sessions`); this
//! table is what another process reads when a client brings a session id
//! it has not seen. A row is written only when a session's sticky library
//! changes (a search that names another library, or clears it), not on
//! every search, so searches stay reads: an agent that names the same
//! library in every call writes once.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use index_core::search::Sticky;

use super::{filter::sql_string, first_row, now_micros, timestamp_field, upsert_row};
use super::{Store, StoreError};

/// The table sessions live in.
pub(super) const SESSIONS: &str = "sessions";

pub(super) fn sessions_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("session_id", DataType::Utf8, false),
        // Null: the session has no sticky library (it was cleared).
        Field::new("library", DataType::Utf8, true),
        Field::new("version", DataType::Utf8, true),
        timestamp_field("updated_at"),
    ]))
}

impl Store {
    /// Writes a session's sticky library (`None`: it has none): one commit.
    #[tracing::instrument(skip_all)]
    pub async fn save_sticky(
        &self,
        session_id: &str,
        sticky: Option<&Sticky>,
    ) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(
            sessions_schema(),
            vec![
                Arc::new(StringArray::from(vec![session_id])),
                Arc::new(StringArray::from(vec![sticky.map(|s| s.library.as_str())])),
                Arc::new(StringArray::from(vec![
                    sticky.and_then(|s| s.version.as_deref())
                ])),
                Arc::new(TimestampMicrosecondArray::from(vec![now_micros()]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        upsert_row(&self.sessions, "session_id", batch).await
    }

    /// A session's stored sticky library: `None` if no process ever wrote
    /// the session, `Some(None)` if its sticky library was cleared.
    pub async fn stored_sticky(
        &self,
        session_id: &str,
    ) -> Result<Option<Option<Sticky>>, StoreError> {
        let filter = format!("session_id = {}", sql_string(session_id));
        let Some(row) = first_row(&self.sessions, filter, &["library", "version"]).await? else {
            return Ok(None);
        };
        let library = super::string_column(&row, "library")?;
        let version = super::string_column(&row, "version")?;
        if library.is_null(0) {
            return Ok(Some(None));
        }
        Ok(Some(Some(Sticky {
            library: library.value(0).to_owned(),
            version: (!version.is_null(0)).then(|| version.value(0).to_owned()),
        })))
    }
}
