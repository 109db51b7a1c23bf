//! When each library version was last searched by name, kept in the store
//! so that a server starting up reads into memory first the versions its
//! users search (see [`super::resident`]), whichever replica they searched
//! on.
//!
//! Searches stay reads: each process notes the versions its searches name
//! in memory and writes them in one commit now and then
//! ([`Store::save_searched`]), and only versions a search named (a library
//! or a few), never an every-library search, which says nothing of what
//! its users read.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancedb::table::OptimizeAction;

use super::{all_rows, string_column, timestamp_field, upsert_row_on, Store, StoreError};

/// The table of last searches.
pub(super) const SEARCHED: &str = "searched";

/// Table versions between compactions (a write every 30 s at most per
/// server: about every ten minutes for one busy server).
const COMPACT_EVERY: u64 = 20;

pub(super) fn searched_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("library", DataType::Utf8, false),
        Field::new("version", DataType::Utf8, false),
        timestamp_field("searched_at"),
    ]))
}

impl Store {
    /// Writes the last searches this process noted since it last wrote
    /// them, in one commit; nothing when there are none.
    pub async fn save_searched(&self) -> Result<usize, StoreError> {
        let noted = self.resident.take_searched();
        if noted.is_empty() {
            return Ok(0);
        }
        let (libraries, versions, at): (Vec<&str>, Vec<&str>, Vec<i64>) = noted
            .iter()
            .map(|((l, v), at)| (l.as_str(), v.as_str(), *at))
            .fold(
                (Vec::new(), Vec::new(), Vec::new()),
                |mut acc, (l, v, t)| {
                    acc.0.push(l);
                    acc.1.push(v);
                    acc.2.push(t);
                    acc
                },
            );
        let batch = RecordBatch::try_new(
            searched_schema(),
            vec![
                Arc::new(StringArray::from(libraries)),
                Arc::new(StringArray::from(versions)),
                Arc::new(TimestampMicrosecondArray::from(at).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        if let Err(err) = upsert_row_on(&self.searched, &["library", "version"], batch).await {
            // Noted again, to write with the next round.
            self.resident.note_searched_again(noted);
            return Err(err);
        }
        // Each write is a commit and its own small file: compacted now and
        // then, as the audit log is, so the table stays a few files.
        if self.searched.version().await?.is_multiple_of(COMPACT_EVERY) {
            if let Err(err) = self.searched.optimize(OptimizeAction::All).await {
                tracing::warn!(%err, "cannot compact the searched table");
            }
        }
        Ok(noted.len())
    }

    /// Every version ever noted as searched, the most recent first.
    pub async fn searched_order(&self) -> Result<Vec<(String, String)>, StoreError> {
        let batches = all_rows(&self.searched, &["library", "version", "searched_at"]).await?;
        let mut rows: Vec<(i64, String, String)> = Vec::new();
        for batch in &batches {
            let (library, version) = (
                string_column(batch, "library")?,
                string_column(batch, "version")?,
            );
            let at = batch
                .column_by_name("searched_at")
                .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
                .ok_or_else(|| StoreError::Shape("searched_at is not a timestamp".into()))?;
            for row in 0..batch.num_rows() {
                rows.push((
                    at.value(row),
                    library.value(row).to_owned(),
                    version.value(row).to_owned(),
                ));
            }
        }
        rows.sort_unstable_by_key(|row| std::cmp::Reverse(row.0));
        Ok(rows.into_iter().map(|(_, l, v)| (l, v)).collect())
    }
}
