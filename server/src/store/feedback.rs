//! Likes and dislikes, kept in their own append-only table.
//!
//! Votes never touch the chunk table: recording one does not rewrite a
//! chunk's vector or text, and a vote survives its chunk being re-uploaded
//! unchanged (chunk ids are content-derived, see [`ingest_core::ids`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, Int8Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use index_core::feedback::{Vote, Votes};
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::{filter::sql_string, Store, StoreError};

/// The table votes live in.
pub(super) const FEEDBACK: &str = "feedback";

pub(super) fn feedback_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("chunk_id", DataType::Utf8, false),
        // +1 like, -1 dislike.
        Field::new("vote", DataType::Int8, false),
        super::timestamp_field("at"),
    ]))
}

impl Store {
    /// Records one vote, durably (one commit).
    #[tracing::instrument(skip(self))]
    pub async fn record_vote(&self, chunk_id: &str, vote: Vote) -> Result<(), StoreError> {
        let now = super::now_micros();
        let value: i8 = match vote {
            Vote::Like => 1,
            Vote::Dislike => -1,
        };
        let batch = RecordBatch::try_new(
            feedback_schema(),
            vec![
                Arc::new(StringArray::from(vec![chunk_id])),
                Arc::new(Int8Array::from(vec![value])),
                Arc::new(TimestampMicrosecondArray::from(vec![now]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        self.feedback.add(batch).execute().await?;
        Ok(())
    }

    /// The votes on each of `chunk_ids` (chunks nobody voted on are absent).
    pub async fn votes(&self, chunk_ids: &[&str]) -> Result<HashMap<String, Votes>, StoreError> {
        let mut out: HashMap<String, Votes> = HashMap::new();
        if chunk_ids.is_empty() {
            return Ok(out);
        }
        let list: Vec<String> = chunk_ids.iter().map(|id| sql_string(id)).collect();
        let batches: Vec<RecordBatch> = self
            .feedback
            .query()
            .only_if(format!("chunk_id IN ({})", list.join(", ")))
            .select(Select::columns(&["chunk_id", "vote"]))
            .execute()
            .await?
            .try_collect()
            .await?;
        for batch in &batches {
            let ids = super::string_column(batch, "chunk_id")?;
            let votes = batch
                .column_by_name("vote")
                .and_then(|c| c.as_any().downcast_ref::<Int8Array>())
                .ok_or_else(|| StoreError::Shape("vote is not i8".into()))?;
            for row in 0..batch.num_rows() {
                let entry = out.entry(ids.value(row).to_owned()).or_default();
                if votes.value(row) > 0 {
                    entry.likes += 1;
                } else {
                    entry.dislikes += 1;
                }
            }
        }
        Ok(out)
    }
}
