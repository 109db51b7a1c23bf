//! One library version of the chunk table, held in memory: its stored
//! columns, its vectors as 8-bit codes and its text as BM25 postings.
//!
//! A published version is never changed in place (a publish replaces it
//! whole, see [`crate::store::staging`]), so a segment is read once, with a
//! query that the scalar indexes on library and version narrow to its own
//! rows, and stays good until its [`Stamp`] no longer matches the table's.

use std::ops::{Range, RangeInclusive};

use arrow_array::RecordBatch;
use docshelf_kernels::{Bm25Index, QuantizedRows, Statistics};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::Table;

use super::published::Stamp;
use crate::embed::DIM;
use crate::store::filter;
use crate::store::keywords;
use crate::store::schema::{self, ChunkColumns, StoredChunk};
use crate::store::StoreError;

/// A library version in memory.
pub struct Segment {
    library: String,
    version: String,
    /// The rows' stamp, from the rows read (so it names exactly them).
    stamp: Stamp,
    /// The stored columns, batch by batch as read: Arrow arrays keep the
    /// text in a few large buffers rather than a string per field per chunk.
    batches: Vec<ChunkColumns>,
    /// The rows sorted by path and chunk index, as (batch, row within it):
    /// a document is then one run, and so is every file-path prefix.
    rows: Vec<(u32, u32)>,
    /// The rows' vectors, in the same order.
    vectors: QuantizedRows,
    /// The rows' `search_text` as BM25 postings, in the same order.
    keywords: Bm25Index,
}

impl Segment {
    /// Reads `library` at `version` from `table`.
    #[tracing::instrument(skip(table))]
    pub async fn read(table: &Table, library: &str, version: &str) -> Result<Self, StoreError> {
        let mut columns = schema::STORED_COLUMNS.to_vec();
        columns.push("vector");
        let mut stream = table
            .query()
            .only_if(filter::version(library, version))
            .select(Select::columns(&columns))
            .execute()
            .await?;
        let (mut batches, mut read_order) = (Vec::new(), Vec::new());
        let mut vectors = QuantizedRows::with_capacity(DIM, 0);
        let mut stamp = Stamp::default();
        while let Some(batch) = stream.try_next().await? {
            let batch: RecordBatch = batch;
            let stored = ChunkColumns::copied_out(&batch).map_err(StoreError::Shape)?;
            let index = u32::try_from(batches.len())
                .map_err(|_| StoreError::Shape("too many batches".into()))?;
            for row in 0..stored.len() {
                stamp.add(stored.chunk_id(row), stored.created_at_micros(row));
                read_order.push((index, row as u32));
            }
            let slice = std::slice::from_ref(&batch);
            for vector in schema::vectors_from_batches(slice).map_err(StoreError::Shape)? {
                if vector.len() != DIM {
                    return Err(StoreError::Shape(format!(
                        "a stored vector has {} components, not {DIM}",
                        vector.len()
                    )));
                }
                vectors.push(&vector);
            }
            batches.push(stored);
        }
        let place = |&(batch, row): &(u32, u32)| {
            let c: &ChunkColumns = &batches[batch as usize];
            (c.file_path(row as usize), c.chunk_index(row as usize))
        };
        let mut order: Vec<usize> = (0..read_order.len()).collect();
        order.sort_unstable_by(|&a, &b| place(&read_order[a]).cmp(&place(&read_order[b])));
        let rows: Vec<(u32, u32)> = order.iter().map(|&at| read_order[at]).collect();
        let vectors = vectors.reordered(&order);
        // Reading text into postings takes a while for a large version:
        // off the async workers, which serve searches.
        let (batches, rows, keywords) = tokio::task::spawn_blocking(move || {
            let keywords = keywords::index(&batches, &rows);
            (batches, rows, keywords)
        })
        .await
        .map_err(|e| StoreError::TaskStopped(format!("indexing a segment's text: {e}")))?;
        Ok(Self {
            library: library.to_owned(),
            version: version.to_owned(),
            stamp,
            batches,
            rows,
            vectors,
            keywords: keywords?,
        })
    }

    pub fn library(&self) -> &str {
        &self.library
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// How many chunks it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Bytes held: the columns' buffers, the vectors' codes, the keyword
    /// postings and the row table.
    pub fn bytes(&self) -> usize {
        let columns: usize = self.batches.iter().map(ChunkColumns::buffer_bytes).sum();
        columns
            + self.vectors.bytes()
            + self.keywords.bytes()
            + self.rows.capacity() * std::mem::size_of::<(u32, u32)>()
    }

    /// The rows whose path starts with `prefix` (all without one): one run,
    /// since rows are in path order and the paths sharing a prefix sort
    /// together.
    pub fn rows_under(&self, prefix: Option<&str>) -> Range<usize> {
        let Some(prefix) = prefix else {
            return 0..self.rows.len();
        };
        let start = self.rows.partition_point(|r| self.path(r) < prefix);
        let end = start + self.rows[start..].partition_point(|r| self.path(r).starts_with(prefix));
        start..end
    }

    /// The `limit` rows of `rows` nearest `vector` by cosine, as (row, score).
    pub fn nearest(&self, vector: &[f32], rows: Range<usize>, limit: usize) -> Vec<(usize, f32)> {
        if rows.is_empty() {
            return Vec::new();
        }
        self.vectors.nearest(vector, &[rows], None, limit)
    }

    /// This segment's BM25 statistics for `tokens`.
    pub fn statistics(&self, tokens: &[&str]) -> Statistics {
        self.keywords.statistics(tokens)
    }

    /// The `limit` rows of `rows` best matching `tokens` by BM25, scored
    /// with `statistics` (those of every segment searched), as (row, score).
    pub fn keyword(
        &self,
        tokens: &[&str],
        rows: Range<usize>,
        limit: usize,
        statistics: &Statistics,
    ) -> Vec<(usize, f32)> {
        if rows.is_empty() {
            return Vec::new();
        }
        self.keywords
            .search_with(tokens, &[rows], None, limit, statistics)
    }

    /// The stored chunk at `row`.
    pub fn chunk(&self, row: usize) -> StoredChunk {
        let (batch, at) = self.rows[row];
        self.batches[batch as usize].chunk(at as usize)
    }

    /// The rows of `file_path` whose chunk index is in `chunks`.
    pub fn document_rows(&self, file_path: &str, chunks: &RangeInclusive<u32>) -> Range<usize> {
        let place = |r: &(u32, u32)| {
            let c = &self.batches[r.0 as usize];
            (c.file_path(r.1 as usize), c.chunk_index(r.1 as usize))
        };
        let (first, last) = ((file_path, *chunks.start()), (file_path, *chunks.end()));
        let start = self.rows.partition_point(|r| place(r) < first);
        let end = self.rows.partition_point(|r| place(r) <= last).max(start);
        start..end
    }

    fn path(&self, &(batch, row): &(u32, u32)) -> &str {
        self.batches[batch as usize].file_path(row as usize)
    }
}
