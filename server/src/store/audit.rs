//! The audit log: every write and every token change, appended with the
//! token's name (never its secret), the action, its target, the time and
//! the outcome. Readable by admins (`GET /api/audit`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use index_core::access::AuditEntry;
use lancedb::table::OptimizeAction;

use super::{string_column, timestamp_field};
use super::{Store, StoreError};

/// The table the log lives in.
pub(super) const AUDIT: &str = "audit";

pub(super) fn audit_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        timestamp_field("at"),
        Field::new("token", DataType::Utf8, false),
        Field::new("action", DataType::Utf8, false),
        Field::new("target", DataType::Utf8, false),
        Field::new("outcome", DataType::Utf8, false),
    ]))
}

const COLUMNS: [&str; 5] = ["at", "token", "action", "target", "outcome"];

/// Entries this process appends between compactions of the table: each
/// entry is a commit of its own, and a table of thousands of one-row
/// files is slow to read and to open.
const COMPACT_EVERY: u64 = 64;

impl Store {
    /// Appends one entry: one commit.
    #[tracing::instrument(skip_all, fields(action = %entry.action))]
    pub async fn append_audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(
            audit_schema(),
            vec![
                Arc::new(
                    TimestampMicrosecondArray::from(vec![entry.at_micros]).with_timezone("UTC"),
                ),
                Arc::new(StringArray::from(vec![entry.token.as_str()])),
                Arc::new(StringArray::from(vec![entry.action.as_str()])),
                Arc::new(StringArray::from(vec![entry.target.as_str()])),
                Arc::new(StringArray::from(vec![entry.outcome.as_str()])),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        // An append, as feedback's votes are: no writer's turn is needed
        // (LanceDB retries appends that race), and none is taken, so an
        // entry can be written while a write holds the turn.
        self.audit.add(batch).execute().await?;
        let appended = self.audit_appends.fetch_add(1, Ordering::Relaxed) + 1;
        if appended.is_multiple_of(COMPACT_EVERY) {
            // Another process compacting at once makes this one retry
            // later; the entry is written either way.
            if let Err(err) = self.audit.optimize(OptimizeAction::All).await {
                tracing::warn!(%err, "cannot compact the audit table");
            }
        }
        Ok(())
    }

    /// The newest `limit` entries, newest first.
    pub async fn audit(&self, limit: usize) -> Result<Vec<AuditEntry>, StoreError> {
        let batches = super::all_rows(&self.audit, &COLUMNS).await?;
        let mut all = Vec::new();
        for batch in &batches {
            let at = batch
                .column_by_name("at")
                .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
                .ok_or_else(|| StoreError::Shape("at is not a timestamp column".into()))?;
            let [token, action, target, outcome] =
                ["token", "action", "target", "outcome"].map(|c| string_column(batch, c));
            let (token, action, target, outcome) = (token?, action?, target?, outcome?);
            all.extend((0..batch.num_rows()).map(|row| AuditEntry {
                at_micros: if at.is_null(row) { 0 } else { at.value(row) },
                token: token.value(row).to_owned(),
                action: action.value(row).to_owned(),
                target: target.value(row).to_owned(),
                outcome: outcome.value(row).to_owned(),
            }));
        }
        all.sort_by_key(|e| std::cmp::Reverse(e.at_micros));
        all.truncate(limit);
        Ok(all)
    }
}
