//! Writing documents: each one replaces its old chunks in one commit, so
//! readers see the old document or the new one, never both or neither.

use arrow_array::{RecordBatch, RecordBatchIterator};

use super::{filter, schema, DocumentChunks, Store, StoreError};

/// What replacing a document changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaceStats {
    pub inserted: u64,
    pub deleted: u64,
}

impl Store {
    /// Stores `doc`, replacing whatever the store held for the same library,
    /// version and file path, in one commit.
    #[tracing::instrument(skip_all, fields(library = %doc.library, version = %doc.version, file = %doc.file_path, chunks = doc.chunks.len()))]
    pub async fn replace_document(&self, doc: &DocumentChunks) -> Result<ReplaceStats, StoreError> {
        if doc.chunks.is_empty() {
            return Err(StoreError::EmptyDocument);
        }
        let batch = schema::to_batch(doc).map_err(|e| StoreError::Shape(e.to_string()))?;
        let schema = batch.schema();
        let reader = RecordBatchIterator::new(vec![Ok(batch)], schema);

        let _writer = self.begin_write().await?;
        let mut merge = self.chunks.merge_insert(&["chunk_id"]);
        // Same id means same library, version, path, position and text: an
        // identical chunk is left alone, so re-uploading a file stores nothing.
        merge
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(Some(filter::document(
                &doc.library,
                &doc.version,
                &doc.file_path,
            )));
        let result = merge.execute(Box::new(reader)).await?;
        Ok(ReplaceStats {
            inserted: result.num_inserted_rows,
            deleted: result.num_deleted_rows,
        })
    }

    /// Appends documents the store does not hold yet, all in one commit.
    ///
    /// A bulk load without [`Self::replace_document`]'s per-document merge
    /// (which reads the table to find the rows a document replaces): the
    /// caller guarantees the documents are new. The search bench loads its
    /// 100k and 1M chunk corpora this way, a few commits instead of one per
    /// document. Call [`Self::refresh_indexes`] after.
    #[tracing::instrument(skip_all, fields(documents = docs.len()))]
    pub async fn append_documents(&self, docs: &[DocumentChunks]) -> Result<u64, StoreError> {
        let mut batches = Vec::with_capacity(docs.len());
        for doc in docs {
            if doc.chunks.is_empty() {
                return Err(StoreError::EmptyDocument);
            }
            batches.push(schema::to_batch(doc).map_err(|e| StoreError::Shape(e.to_string()))?);
        }
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let reader: Box<dyn arrow_array::RecordBatchReader + Send> = Box::new(
            RecordBatchIterator::new(batches.into_iter().map(Ok), schema::chunk_schema()),
        );
        let _writer = self.begin_write().await?;
        self.chunks.add(reader).execute().await?;
        Ok(rows as u64)
    }
}
