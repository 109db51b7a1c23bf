//! The v1 chunk table, read only so that it can be upgraded.
//!
//! v1 stored each chunk's bare text and a vector of that text alone; v2
//! adds the `context` column and embeds context and text together (see
//! `ingest_core::context`). Vectors cannot be converted, only recomputed, so
//! `crate::upgrade` reads each v1 document here, re-embeds it and writes it
//! to the v2 table, then drops this one.

use std::collections::BTreeSet;

use arrow_array::RecordBatch;
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::schema::{self, StoredChunk};
use super::{chunks_where, filter, string_column, Store, StoreError};

/// The v1 table's name.
pub const CHUNKS_V1: &str = "chunks";

/// A document's key: library, version, file path.
pub type DocumentKey = (String, String, String);

impl Store {
    /// Whether the store still holds a v1 table.
    pub fn has_legacy(&self) -> bool {
        self.legacy.is_some()
    }

    /// Every document in the v1 table, sorted.
    pub async fn legacy_documents(&self) -> Result<Vec<DocumentKey>, StoreError> {
        let Some(table) = &self.legacy else {
            return Ok(Vec::new());
        };
        let batches: Vec<RecordBatch> = table
            .query()
            .select(Select::columns(&["library", "version", "file_path"]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut keys = BTreeSet::new();
        for batch in &batches {
            let (l, v, p) = (
                string_column(batch, "library")?,
                string_column(batch, "version")?,
                string_column(batch, "file_path")?,
            );
            for row in 0..batch.num_rows() {
                keys.insert((
                    l.value(row).to_owned(),
                    v.value(row).to_owned(),
                    p.value(row).to_owned(),
                ));
            }
        }
        Ok(keys.into_iter().collect())
    }

    /// One v1 document's chunks, in order (their `context` is empty).
    pub async fn legacy_document(&self, key: &DocumentKey) -> Result<Vec<StoredChunk>, StoreError> {
        let Some(table) = &self.legacy else {
            return Ok(Vec::new());
        };
        let columns: Vec<&str> = schema::STORED_COLUMNS
            .iter()
            .copied()
            .filter(|c| *c != "context")
            .collect();
        chunks_where(table, filter::document(&key.0, &key.1, &key.2), &columns).await
    }

    /// Drops the v1 table: every document has been written to v2.
    pub async fn drop_legacy(&mut self) -> Result<(), StoreError> {
        if self.legacy.take().is_some() {
            self.db.drop_table(CHUNKS_V1, &[]).await?;
        }
        Ok(())
    }
}
