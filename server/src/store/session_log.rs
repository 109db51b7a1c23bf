//! Sessions' sticky libraries, kept in the store so that a follow-up
//! search stays in its library whichever replica answers it.
//!
//! Each process keeps its sessions in memory (`engine::sessions`); this
//! table is what another process reads when a client brings a session id
//! it has not seen. A row is written only when a session's sticky library
//! changes (a search that names another library, or clears it), not on
//! every search, so searches stay reads: an agent that names the same
//! library in every call writes once.
//!
//! A row is keyed by its owner and its id: the caller that made the
//! session (`Caller::id`: a stored token's id, or `admin`, `anonymous`,
//! `local`; never a secret) and the id its client brings. Another caller's
//! row of the same id is never read for this one, on any replica.
//!
//! Rows written before sessions had owners have none (the column, added
//! when an older store is opened, is null in them), and nobody's key
//! matches them: such a session is unknown to every caller. Who made one
//! cannot be told, and handing it to any caller (the first to bring its
//! id, or the admin) could give one caller another's library; what is
//! lost is a sticky library, a filter to name again once.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use index_core::search::Sticky;
use lancedb::table::NewColumnTransform;
use lancedb::Table;

use super::indexes::add_column_once;
use super::writers::WriteLock;
use super::{filter::sql_string, first_row, now_micros, timestamp_field, upsert_row_on};
use super::{Store, StoreError};

/// The table sessions live in.
pub(super) const SESSIONS: &str = "sessions";

/// The column naming the caller a session belongs to.
const OWNER: &str = "owner";

/// The owner column, as a table written before it existed gets it: null
/// in every older row.
fn owner_field() -> Field {
    Field::new(OWNER, DataType::Utf8, true)
}

pub(super) fn sessions_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("session_id", DataType::Utf8, false),
        // Null: the session has no sticky library (it was cleared).
        Field::new("library", DataType::Utf8, true),
        Field::new("version", DataType::Utf8, true),
        timestamp_field("updated_at"),
        // Last, where adding it to an older table puts it, so that rows
        // written to either table have the same shape.
        owner_field(),
    ]))
}

/// Gives a sessions table written before sessions had owners the owner
/// column, null in its rows (which no caller then reads), in one commit.
pub(super) async fn add_owner(sessions: &Table, write: &WriteLock) -> Result<(), StoreError> {
    add_column_once(
        sessions,
        write,
        OWNER,
        NewColumnTransform::AllNulls(Arc::new(Schema::new(vec![owner_field()]))),
    )
    .await
}

impl Store {
    /// Writes the sticky library of `owner`'s session `session_id` (`None`:
    /// it has none): one commit.
    #[tracing::instrument(skip_all)]
    pub async fn save_sticky(
        &self,
        owner: &str,
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
                Arc::new(StringArray::from(vec![owner])),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        upsert_row_on(&self.sessions, &[OWNER, "session_id"], batch).await
    }

    /// The stored sticky library of `owner`'s session `session_id`: `None`
    /// if no process ever wrote that session for that owner (another
    /// owner's session of the same id included), `Some(None)` if its sticky
    /// library was cleared.
    pub async fn stored_sticky(
        &self,
        owner: &str,
        session_id: &str,
    ) -> Result<Option<Option<Sticky>>, StoreError> {
        let filter = format!(
            "{OWNER} = {} AND session_id = {}",
            sql_string(owner),
            sql_string(session_id)
        );
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
