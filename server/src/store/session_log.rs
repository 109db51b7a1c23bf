//! Sessions' sticky libraries, kept in the store so that a follow-up
//! search stays in its library whichever replica answers it.
//!
//! Each process keeps its sessions in memory (`search::sessions`); this
//! table is what another process reads when a client brings a session id
//! it has not seen. A row is written only when a session's sticky library
//! changes (a search that names another library, or clears it), not on
//! every search, so searches stay reads: an agent that names the same
//! library in every call writes once.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use arrow_array::{
    Array, RecordBatch, RecordBatchIterator, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use futures::TryStreamExt;
use index_core::search::Sticky;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::{filter::sql_string, Store, StoreError};

/// The table sessions live in.
pub(super) const SESSIONS: &str = "sessions";

pub(super) fn sessions_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("session_id", DataType::Utf8, false),
        // Null: the session has no sticky library (it was cleared).
        Field::new("library", DataType::Utf8, true),
        Field::new("version", DataType::Utf8, true),
        Field::new(
            "updated_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
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
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        let batch = RecordBatch::try_new(
            sessions_schema(),
            vec![
                Arc::new(StringArray::from(vec![session_id])),
                Arc::new(StringArray::from(vec![sticky.map(|s| s.library.as_str())])),
                Arc::new(StringArray::from(vec![
                    sticky.and_then(|s| s.version.as_deref())
                ])),
                Arc::new(TimestampMicrosecondArray::from(vec![now]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        let reader = RecordBatchIterator::new(vec![Ok(batch)], sessions_schema());
        let mut merge = self.sessions.merge_insert(&["session_id"]);
        merge
            .when_matched_update_all(None)
            .when_not_matched_insert_all();
        merge.execute(Box::new(reader)).await?;
        Ok(())
    }

    /// A session's stored sticky library: `None` if no process ever wrote
    /// the session, `Some(None)` if its sticky library was cleared.
    pub async fn stored_sticky(
        &self,
        session_id: &str,
    ) -> Result<Option<Option<Sticky>>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .sessions
            .query()
            .only_if(format!("session_id = {}", sql_string(session_id)))
            .select(Select::columns(&["library", "version"]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
            return Ok(None);
        };
        let library = super::string_column(batch, "library")?;
        let version = super::string_column(batch, "version")?;
        if library.is_null(0) {
            return Ok(Some(None));
        }
        Ok(Some(Some(Sticky {
            library: library.value(0).to_owned(),
            version: (!version.is_null(0)).then(|| version.value(0).to_owned()),
        })))
    }
}
