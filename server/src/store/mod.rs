//! The chunk store: an embedded LanceDB database.
//!
//! One table, `chunks`, holds every chunk with its metadata and vector. A
//! document is written with a single `merge_insert` keyed on `chunk_id` that
//! inserts its new chunks and deletes the chunks of the same document that
//! are not in the new set, all in one commit: readers see the old document
//! or the new one, never both or neither, and a crash mid-write leaves the
//! previous version. Writes are serialised (one writer per process) so
//! concurrent jobs never race on commits.
//!
//! - [`schema`]: the table's columns and how chunks become Arrow batches.

pub mod schema;

use std::collections::BTreeSet;

use arrow_array::{Array, RecordBatch, RecordBatchIterator, StringArray, UInt32Array};
use futures::TryStreamExt;
use index_core::StoreCounts;
use lancedb::index::scalar::{
    BTreeIndexBuilder, BitmapIndexBuilder, FtsIndexBuilder, FullTextSearchQuery,
};
use lancedb::index::Index;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::OptimizeAction;
use lancedb::{Connection, Table};
use tokio::sync::Mutex;

pub use schema::{DocumentChunks, StoredChunk};

/// The table every chunk lives in.
const CHUNKS: &str = "chunks";

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {location}: {source}")]
    Open {
        location: String,
        source: lancedb::Error,
    },
    #[error("the store failed: {0}")]
    Lance(#[from] lancedb::Error),
    #[error("the store returned data of an unexpected shape: {0}")]
    Shape(String),
    #[error("a document needs at least one chunk")]
    EmptyDocument,
}

/// The chunk store.
pub struct Store {
    location: String,
    chunks: Table,
    /// One writer at a time: LanceDB commits are optimistic, and retries on
    /// conflict would only waste the embedding work behind them.
    write: Mutex<()>,
}

/// What replacing a document changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaceStats {
    pub inserted: u64,
    pub deleted: u64,
}

impl Store {
    /// Opens the store at `location` (a directory or an object-store URI),
    /// creating the chunk table on first use.
    #[tracing::instrument(skip_all, fields(%location))]
    pub async fn open(location: &str) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            location: location.to_owned(),
            source,
        };
        let db: Connection = lancedb::connect(location)
            .execute()
            .await
            .map_err(open_err)?;
        let names = db.table_names().execute().await.map_err(open_err)?;
        let chunks = if names.iter().any(|n| n == CHUNKS) {
            db.open_table(CHUNKS).execute().await.map_err(open_err)?
        } else {
            db.create_empty_table(CHUNKS, schema::chunk_schema())
                .execute()
                .await
                .map_err(open_err)?
        };
        Ok(Self {
            location: location.to_owned(),
            chunks,
            write: Mutex::new(()),
        })
    }

    /// Where the store lives.
    pub fn location(&self) -> &str {
        &self.location
    }

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

        let _writer = self.write.lock().await;
        let mut merge = self.chunks.merge_insert(&["chunk_id"]);
        // Same id means same library, version, path, position and text: an
        // identical chunk is left alone, so re-uploading a file stores nothing.
        merge
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(Some(document_filter(
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

    /// Builds any missing index and folds new rows into the existing ones,
    /// so full-text search covers everything stored so far.
    ///
    /// LanceDB's full-text index does not see rows added after it was built
    /// until the table is optimised; ingestion calls this before it reports
    /// a job done.
    #[tracing::instrument(skip_all)]
    pub async fn refresh_indexes(&self) -> Result<(), StoreError> {
        let _writer = self.write.lock().await;
        if self.chunks.count_rows(None).await? == 0 {
            return Ok(());
        }
        let existing: BTreeSet<Vec<String>> = self
            .chunks
            .list_indices()
            .await?
            .into_iter()
            .map(|i| i.columns)
            .collect();
        // Library and version have few distinct values: bitmaps answer their
        // equality filters fastest. File paths are nearly unique: a B-tree.
        let wanted: [(&str, Index); 4] = [
            ("library", Index::Bitmap(BitmapIndexBuilder::default())),
            ("version", Index::Bitmap(BitmapIndexBuilder::default())),
            ("file_path", Index::BTree(BTreeIndexBuilder::default())),
            ("text", Index::FTS(FtsIndexBuilder::default())),
        ];
        let mut created = false;
        for (column, index) in wanted {
            if !existing.contains(&vec![column.to_owned()]) {
                tracing::info!(column, "building index");
                self.chunks.create_index(&[column], index).execute().await?;
                created = true;
            }
        }
        if !created {
            self.chunks.optimize(OptimizeAction::All).await?;
        }
        Ok(())
    }

    /// How many libraries, documents and chunks are stored.
    pub async fn counts(&self) -> Result<StoreCounts, StoreError> {
        let chunks = self.chunks.count_rows(None).await? as u64;
        let mut libraries = BTreeSet::new();
        let mut documents = BTreeSet::new();
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .select(Select::columns(&["library", "version", "file_path"]))
            .execute()
            .await?
            .try_collect()
            .await?;
        for batch in &batches {
            let library = string_column(batch, "library")?;
            let version = string_column(batch, "version")?;
            let path = string_column(batch, "file_path")?;
            for row in 0..batch.num_rows() {
                libraries.insert(library.value(row).to_owned());
                documents.insert((
                    library.value(row).to_owned(),
                    version.value(row).to_owned(),
                    path.value(row).to_owned(),
                ));
            }
        }
        Ok(StoreCounts {
            libraries: libraries.len() as u64,
            documents: documents.len() as u64,
            chunks,
        })
    }

    /// The chunks of one document, in order.
    pub async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Vec<StoredChunk>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .only_if(document_filter(library, version, file_path))
            .select(Select::columns(schema::STORED_COLUMNS))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut chunks = schema::from_batches(&batches).map_err(StoreError::Shape)?;
        chunks.sort_by_key(|c| c.chunk_index);
        Ok(chunks)
    }

    /// Every stored document as (library, version, file path, chunks
    /// stored, chunks it was written with): the two counts differ only if
    /// a document was stored in part, which must never happen.
    pub async fn document_integrity(
        &self,
    ) -> Result<Vec<(String, String, String, u32, u32)>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .select(Select::columns(&[
                "library",
                "version",
                "file_path",
                "doc_chunks",
            ]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut docs: std::collections::BTreeMap<(String, String, String), (u32, u32)> =
            std::collections::BTreeMap::new();
        for batch in &batches {
            let library = string_column(batch, "library")?;
            let version = string_column(batch, "version")?;
            let path = string_column(batch, "file_path")?;
            let expected = batch
                .column_by_name("doc_chunks")
                .and_then(|c| c.as_any().downcast_ref::<UInt32Array>())
                .ok_or_else(|| StoreError::Shape("doc_chunks is not u32".into()))?;
            for row in 0..batch.num_rows() {
                let entry = docs
                    .entry((
                        library.value(row).to_owned(),
                        version.value(row).to_owned(),
                        path.value(row).to_owned(),
                    ))
                    .or_insert((0, expected.value(row)));
                entry.0 += 1;
            }
        }
        Ok(docs
            .into_iter()
            .map(|((l, v, p), (stored, expected))| (l, v, p, stored, expected))
            .collect())
    }

    /// Chunks whose text matches `query` by BM25, best first.
    pub async fn keyword_search(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<StoredChunk>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .full_text_search(FullTextSearchQuery::new(query.to_owned()))
            .select(Select::columns(schema::STORED_COLUMNS))
            .limit(limit)
            .execute()
            .await?
            .try_collect()
            .await?;
        schema::from_batches(&batches).map_err(StoreError::Shape)
    }
}

/// The SQL filter selecting one document's rows.
fn document_filter(library: &str, version: &str, file_path: &str) -> String {
    format!(
        "library = {} AND version = {} AND file_path = {}",
        sql_string(library),
        sql_string(version),
        sql_string(file_path)
    )
}

/// A SQL string literal: quotes doubled, so names cannot break out of it.
pub fn sql_string(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn string_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray, StoreError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| StoreError::Shape(format!("{name} is not a string column")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_quote_names_safely() {
        assert_eq!(
            document_filter("o'reilly", "1", "a.md"),
            "library = 'o''reilly' AND version = '1' AND file_path = 'a.md'"
        );
    }
}
