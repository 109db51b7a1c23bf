//! Reading chunks back by document: a whole document, every chunk with its
//! vector, and the integrity check that no document was stored in part.

use arrow_array::{Array, RecordBatch, UInt32Array};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::Table;

use super::{filter, schema, string_column, Store, StoreError, StoredChunk};

/// A document and a range of its chunks, to read.
#[derive(Debug, Clone)]
pub struct DocumentRange<'a> {
    pub library: &'a str,
    pub version: &'a str,
    pub file_path: &'a str,
    pub chunks: std::ops::RangeInclusive<u32>,
}

impl Store {
    /// The chunks of one document, in order.
    pub async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Vec<StoredChunk>, StoreError> {
        chunks_where(
            &self.chunks,
            filter::document(library, version, file_path),
            schema::STORED_COLUMNS,
        )
        .await
    }

    /// Every chunk of one version of a library, or of its documents under
    /// `file_prefix`, in no particular order: what a comparison of two
    /// versions reads.
    pub async fn version_chunks(
        &self,
        library: &str,
        version: &str,
        file_prefix: Option<&str>,
    ) -> Result<Vec<StoredChunk>, StoreError> {
        let scope = filter::Scope {
            targets: vec![(library.to_owned(), Some(version.to_owned()))],
            file_prefix: file_prefix.map(str::to_owned),
            ..filter::Scope::default()
        };
        let filter = scope.to_sql().unwrap_or_else(|| "false".to_owned());
        chunks_where(&self.chunks, filter, schema::STORED_COLUMNS).await
    }

    /// Every row of one version of a library with every column of the
    /// chunk table, its vector included, in the table's column order: what
    /// an export writes.
    pub async fn version_rows(
        &self,
        library: &str,
        version: &str,
    ) -> Result<Vec<RecordBatch>, StoreError> {
        let schema = schema::chunk_schema();
        let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .only_if(filter::version(library, version))
            .select(Select::columns(&columns))
            .execute()
            .await?
            .try_collect()
            .await?;
        batches
            .iter()
            .map(|b| {
                let ordered = columns
                    .iter()
                    .map(|name| {
                        b.column_by_name(name).cloned().ok_or_else(|| {
                            StoreError::Shape(format!("a chunk row without the column {name}"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                RecordBatch::try_new(schema.clone(), ordered)
                    .map_err(|e| StoreError::Shape(e.to_string()))
            })
            .collect()
    }

    /// Chunks of several documents, each within its range of chunk
    /// indexes, in no particular order: what a budgeted answer reads its
    /// passages' whole sections from. From the in-memory segments while
    /// their versions are held and current, else in one query.
    pub async fn documents_chunks(
        &self,
        documents: &[DocumentRange<'_>],
    ) -> Result<Vec<StoredChunk>, StoreError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let versions = filter::Scope {
            targets: documents
                .iter()
                .map(|d| (d.library.to_owned(), Some(d.version.to_owned())))
                .collect(),
            only_listed: true,
            ..filter::Scope::default()
        };
        if let Some(held) = self.held_for(&versions).await? {
            return Ok(held.documents_chunks(documents));
        }
        let filter = documents
            .iter()
            .map(|d| {
                format!(
                    "({} AND chunk_index >= {} AND chunk_index <= {})",
                    filter::document(d.library, d.version, d.file_path),
                    d.chunks.start(),
                    d.chunks.end()
                )
            })
            .collect::<Vec<_>>()
            .join(" OR ");
        chunks_where(&self.chunks, filter, schema::STORED_COLUMNS).await
    }

    /// The vectors already stored for the page `file_path` of `library`,
    /// in any of its versions, keyed by the text each was embedded from
    /// ([`ingest_core::context::embedding_input`] of its context and text):
    /// what a new upload of that page can reuse instead of embedding again.
    /// One indexed lookup per document (library and path).
    pub async fn page_vectors(
        &self,
        library: &str,
        file_path: &str,
    ) -> Result<std::collections::HashMap<String, Vec<f32>>, StoreError> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .only_if(format!(
                "library = {} AND file_path = {}",
                filter::sql_string(library),
                filter::sql_string(file_path)
            ))
            .select(Select::columns(&["context", "text", "vector"]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let vectors = schema::vectors_from_batches(&batches).map_err(StoreError::Shape)?;
        let mut inputs = Vec::with_capacity(vectors.len());
        for batch in &batches {
            let (context, text) = (
                string_column(batch, "context")?,
                string_column(batch, "text")?,
            );
            inputs.extend((0..batch.num_rows()).map(|row| {
                ingest_core::context::embedding_input(context.value(row), text.value(row))
            }));
        }
        Ok(inputs.into_iter().zip(vectors).collect())
    }

    /// The vectors stored for any of `hashes` (see [`schema::INPUT_HASH`]),
    /// anywhere in the store, keyed by hash: what a page that no earlier
    /// copy of itself could supply still reuses (the same paragraph under
    /// another path, in another library). Indexed lookups, a few hundred
    /// hashes at a time so no filter grows without bound.
    pub async fn vectors_by_input(
        &self,
        hashes: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<f32>>, StoreError> {
        const PER_LOOKUP: usize = 256;
        let mut found = std::collections::HashMap::new();
        for some in hashes.chunks(PER_LOOKUP) {
            let list = some
                .iter()
                .map(|h| filter::sql_string(h))
                .collect::<Vec<_>>()
                .join(", ");
            let batches: Vec<RecordBatch> = self
                .chunks
                .query()
                .only_if(format!("{} IN ({list})", schema::INPUT_HASH))
                .select(Select::columns(&[schema::INPUT_HASH, "vector"]))
                .execute()
                .await?
                .try_collect()
                .await?;
            let vectors = schema::vectors_from_batches(&batches).map_err(StoreError::Shape)?;
            let mut vectors = vectors.into_iter();
            for batch in &batches {
                let hash = string_column(batch, schema::INPUT_HASH)?;
                for row in 0..batch.num_rows() {
                    if let Some(vector) = vectors.next() {
                        found.insert(hash.value(row).to_owned(), vector);
                    }
                }
            }
        }
        Ok(found)
    }

    /// Every stored chunk with its vector, in no particular order: a real
    /// corpus to build the search bench's large ones from.
    pub async fn chunks_with_vectors(&self) -> Result<Vec<(StoredChunk, Vec<f32>)>, StoreError> {
        let mut columns = schema::STORED_COLUMNS.to_vec();
        columns.push("vector");
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .select(Select::columns(&columns))
            .execute()
            .await?
            .try_collect()
            .await?;
        let chunks = schema::from_batches(&batches).map_err(StoreError::Shape)?;
        let vectors = schema::vectors_from_batches(&batches).map_err(StoreError::Shape)?;
        Ok(chunks.into_iter().zip(vectors).collect())
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
}

/// The chunks of `table` matching the SQL `filter`, read with `columns`,
/// in chunk order.
pub(super) async fn chunks_where(
    table: &Table,
    filter: String,
    columns: &[&str],
) -> Result<Vec<StoredChunk>, StoreError> {
    let batches: Vec<RecordBatch> = table
        .query()
        .only_if(filter)
        .select(Select::columns(columns))
        .execute()
        .await?
        .try_collect()
        .await?;
    let mut chunks = schema::from_batches(&batches).map_err(StoreError::Shape)?;
    chunks.sort_by_key(|c| c.chunk_index);
    Ok(chunks)
}
