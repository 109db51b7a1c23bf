//! The two retrievers over the chunk table, and neighbour lookups (the
//! vector index itself is [`super::vector_index`]'s).
//!
//! Both apply the scope as a **pre**-filter: rows outside it never compete
//! for a place, so a filtered search returns `limit` hits whenever that many
//! exist in scope. The scalar indexes on library, version and file path make
//! that filter cheap.

use arrow_array::{Array, Float32Array, RecordBatch};
use futures::TryStreamExt;
use lancedb::index::scalar::{FtsQuery, FullTextSearchQuery, MatchQuery};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::DistanceType;

use super::filter::Scope;
use super::resident::Held;
use super::schema::{self, StoredChunk};
use super::vector_index::VectorSearchTuning;
use super::{filter, Store, StoreError};

/// The stored chunk's columns and the leg's score column (`_distance` or
/// `_score`). Naming the score column is what LanceDB asks for: it still
/// adds one that a projection leaves out, but warns on every search (a log
/// line per query under `RUST_LOG=info`) that it will stop doing so.
fn columns_with(score: &'static str) -> Vec<&'static str> {
    schema::STORED_COLUMNS
        .iter()
        .copied()
        .chain([score])
        .collect()
}

/// A chunk and one retriever's score for it.
#[derive(Debug, Clone)]
pub struct Retrieved {
    pub chunk: StoredChunk,
    /// Cosine similarity (dense) or BM25 (keyword): higher is better.
    pub score: f32,
}

impl Store {
    /// The `limit` chunks nearest to `vector` by cosine, within `scope`:
    /// from the in-memory segments while every version in scope is held and
    /// current (see [`super::resident`]), else from the vector index.
    #[tracing::instrument(skip_all, fields(limit, resident))]
    pub async fn dense(
        &self,
        vector: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        let held = self.held_for(scope).await?;
        tracing::Span::current().record("resident", held.is_some());
        if let Some(held) = held {
            let vector = vector.to_vec();
            return from_memory(held, scope, move |h, s| h.nearest(&vector, s, limit)).await;
        }
        let sql = scope.to_sql();
        self.dense_with(vector, sql.as_deref(), limit, self.tuning, false)
            .await
    }

    /// [`Self::dense`] with explicit index settings, or exact (`exact`):
    /// the vector-index bench compares the two.
    pub async fn dense_with(
        &self,
        vector: &[f32],
        scope: Option<&str>,
        limit: usize,
        tuning: VectorSearchTuning,
        exact: bool,
    ) -> Result<Vec<Retrieved>, StoreError> {
        let mut query = self
            .chunks
            .query()
            .nearest_to(vector)?
            .distance_type(DistanceType::Cosine)
            .limit(limit)
            .select(Select::columns(&columns_with("_distance")));
        query = if exact {
            query.bypass_vector_index()
        } else {
            let partitions = self.vector_partitions().await?;
            query
                .nprobes(tuning.probes(partitions))?
                .refine_factor(tuning.refine(partitions))
        };
        if let Some(scope) = scope {
            query = query.only_if(scope);
        }
        let batches: Vec<RecordBatch> = query.execute().await?.try_collect().await?;
        // Cosine distance is 1 − similarity.
        with_scores(&batches, "_distance", |d| 1.0 - d)
    }

    /// The `limit` chunks best matching `query` by BM25 over the chunk's
    /// context and text as one field (see [`schema::search_text`]), within
    /// `scope`: from the in-memory segments' postings while every version in
    /// scope is held and current (see [`super::resident`]), else from
    /// LanceDB's full-text index.
    #[tracing::instrument(skip_all, fields(limit, resident))]
    pub async fn keyword(
        &self,
        query: &str,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        let held = self.held_for(scope).await?;
        tracing::Span::current().record("resident", held.is_some());
        if let Some(held) = held {
            let query = query.to_owned();
            return from_memory(held, scope, move |h, s| h.keyword(&query, s, limit)).await;
        }
        if !self.has_fts_index().await? {
            // Nothing was ever indexed: an empty store.
            return Ok(Vec::new());
        }
        let matching =
            MatchQuery::new(query.to_owned()).with_column(Some(schema::SEARCH_TEXT.to_owned()));
        let mut q = self
            .chunks
            .query()
            .full_text_search(FullTextSearchQuery::new_query(FtsQuery::Match(matching)))
            .select(Select::columns(&columns_with("_score")))
            .limit(limit);
        if let Some(sql) = scope.to_sql() {
            q = q.only_if(sql);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        with_scores(&batches, "_score", |s| s)
    }

    /// Whether the full-text index exists. It is never dropped, so once
    /// seen it is remembered and searches skip the metadata read.
    async fn has_fts_index(&self) -> Result<bool, StoreError> {
        use std::sync::atomic::Ordering;
        if self.fts_ready.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let indices = self.chunks.list_indices().await?;
        let found = indices.iter().any(|i| i.columns == [schema::SEARCH_TEXT]);
        self.fts_ready.store(found, Ordering::Relaxed);
        Ok(found)
    }

    /// Chunks `from..=to` of one document, in order.
    pub async fn chunk_range(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<StoredChunk>, StoreError> {
        super::chunks_where(
            &self.chunks,
            format!(
                "{} AND chunk_index >= {from} AND chunk_index <= {to}",
                filter::document(library, version, file_path)
            ),
            schema::STORED_COLUMNS,
        )
        .await
    }

    /// The library of the chunk with this id, if one is stored (what its
    /// caller must be allowed to see before it learns the chunk exists).
    pub async fn chunk_library(&self, chunk_id: &str) -> Result<Option<String>, StoreError> {
        let filter = format!("chunk_id = {}", filter::sql_string(chunk_id));
        let Some(row) = super::first_row(&self.chunks, filter, &["library"]).await? else {
            return Ok(None);
        };
        Ok(Some(
            super::string_column(&row, "library")?.value(0).to_owned(),
        ))
    }
}

/// Rows in scope from which a search of the in-memory segments runs on a
/// thread of its own ([`from_memory`]): the size from which the scans are
/// split across the cores, which must not happen on an async worker.
const OFF_THE_WORKERS: usize = docshelf_kernels::SPLIT_ROWS;

/// `search` of `held` within `scope`: on this task for a small scope, where
/// a hand-over would cost a noticeable share of the search
/// (docs/benchmarks.md, "Every library of a million chunks"), else on the
/// blocking pool. On the async task, a large scan would run one leg of a
/// hybrid search after the other, since both legs are polled by the same
/// task, and stall whatever else shares its worker; on its own thread the
/// keyword leg runs while the query is embedded and the dense leg scans, as
/// LanceDB's own searches did on its threads.
async fn from_memory<T: Send + 'static>(
    held: Held,
    scope: &Scope,
    search: impl FnOnce(&Held, &Scope) -> T + Send + 'static,
) -> Result<T, StoreError> {
    if held.rows() < OFF_THE_WORKERS {
        return Ok(search(&held, scope));
    }
    let (scope, span) = (scope.clone(), tracing::Span::current());
    tokio::task::spawn_blocking(move || span.in_scope(|| search(&held, &scope)))
        .await
        .map_err(|e| StoreError::TaskStopped(format!("a search of the in-memory copy: {e}")))
}

/// Stored chunks with the score column mapped through `score`.
fn with_scores(
    batches: &[RecordBatch],
    column: &str,
    score: impl Fn(f32) -> f32,
) -> Result<Vec<Retrieved>, StoreError> {
    let mut out = Vec::new();
    for batch in batches {
        let chunks =
            schema::from_batches(std::slice::from_ref(batch)).map_err(StoreError::Shape)?;
        let scores = score_column(batch, column)?;
        for (row, chunk) in chunks.into_iter().enumerate() {
            out.push(Retrieved {
                chunk,
                score: score(scores.value(row)),
            });
        }
    }
    Ok(out)
}

/// A leg's score column (`_distance`, `_score`).
fn score_column<'a>(batch: &'a RecordBatch, column: &str) -> Result<&'a Float32Array, StoreError> {
    batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<Float32Array>())
        .ok_or_else(|| StoreError::Shape(format!("{column} is not f32")))
}
