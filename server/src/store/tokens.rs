//! Access tokens, kept in the store so that every replica on a shared
//! bucket knows the same ones: a token made on one is honoured by all, and
//! a revocation reaches each within its read-consistency interval (see
//! `crate::access::registry`, which caches this table).
//!
//! A row holds the SHA-256 of the secret, never the secret, and the
//! token's record (name, grants, expiry, revocation) as JSON.

use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::{now_micros, string_column, timestamp_field, upsert_row};
use super::{Store, StoreError};

/// The table tokens live in.
pub(super) const TOKENS: &str = "tokens";

pub(super) fn tokens_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("token_id", DataType::Utf8, false),
        // Hex SHA-256 of the secret.
        Field::new("hash", DataType::Utf8, false),
        // The token's record (`index_core::access::TokenInfo`, JSON).
        Field::new("record", DataType::Utf8, false),
        timestamp_field("updated_at"),
    ]))
}

/// A token as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub id: String,
    pub hash: String,
    pub record: String,
}

const COLUMNS: [&str; 3] = ["token_id", "hash", "record"];

impl Store {
    /// Writes (or replaces, to revoke) a token: one commit.
    #[tracing::instrument(skip_all, fields(token = %token.id))]
    pub async fn save_token(&self, token: &StoredToken) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(
            tokens_schema(),
            vec![
                Arc::new(StringArray::from(vec![token.id.as_str()])),
                Arc::new(StringArray::from(vec![token.hash.as_str()])),
                Arc::new(StringArray::from(vec![token.record.as_str()])),
                Arc::new(TimestampMicrosecondArray::from(vec![now_micros()]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        let _writer = self.write.acquire().await?;
        upsert_row(&self.tokens, "token_id", batch).await
    }

    /// Every token, revoked ones included, as this process sees the table
    /// now (what other processes wrote included).
    pub async fn tokens(&self) -> Result<Vec<StoredToken>, StoreError> {
        let batches = super::all_rows(&self.tokens, &COLUMNS).await?;
        let mut all = Vec::new();
        for batch in &batches {
            let [id, hash, record] = COLUMNS.map(|c| string_column(batch, c));
            let (id, hash, record) = (id?, hash?, record?);
            all.extend((0..batch.num_rows()).map(|row| StoredToken {
                id: id.value(row).to_owned(),
                hash: hash.value(row).to_owned(),
                record: record.value(row).to_owned(),
            }));
        }
        all.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(all)
    }
}
