//! The two retrievers over the chunk table, and neighbour lookups.
//!
//! Both apply the scope as a **pre**-filter: rows outside it never compete
//! for a place, so a filtered search returns `limit` hits whenever that many
//! exist in scope. The scalar indexes on library, version and file path make
//! that filter cheap.

use arrow_array::{Array, Float32Array, RecordBatch};
use futures::TryStreamExt;
use lancedb::index::scalar::{CombinedFieldsQuery, FtsQuery, FullTextSearchQuery};
use lancedb::index::vector::IvfPqIndexBuilder;
use lancedb::index::Index;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::DistanceType;

use super::schema::{self, StoredChunk};
use super::{filter, Store, StoreError};

/// Rows before a vector index pays for itself; below this, exact search
/// over every vector is both exact and fast (a few ms for 50k×384 floats).
pub const VECTOR_INDEX_MIN_ROWS: usize = 50_000;

/// How much a query term in a chunk's context (its page title and
/// headings) counts against the same term in its text, in the keyword leg's
/// BM25F score. 1 is the least LanceDB's `combined_fields` accepts: the
/// context and the text are then one field, so a title word counts like a
/// body word and no boost is applied. Swept on the tuning sets (`docshelf
/// eval --context-boost`, hybrid nDCG@10 on git-docs / npm-docs): 1 →
/// 0.802 / 0.801, 2 → 0.800 / 0.797, 3 → 0.804 / 0.792, 5 → 0.799 / 0.793.
/// Adding the context to the indexed text is what helps; weighting it more
/// does not.
pub const CONTEXT_BOOST: f32 = 1.0;

/// Search settings for the vector index, tuned with `cargo bench --bench
/// vector_index` for recall@10 ≥ 0.95 against exact search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorSearchTuning {
    pub nprobes: usize,
    /// Candidates re-ranked with full vectors: `limit × refine_factor`.
    pub refine_factor: u32,
}

impl Default for VectorSearchTuning {
    fn default() -> Self {
        Self {
            nprobes: 20,
            refine_factor: 5,
        }
    }
}

/// A chunk and one retriever's score for it.
#[derive(Debug, Clone)]
pub struct Retrieved {
    pub chunk: StoredChunk,
    /// Cosine similarity (dense) or BM25 (keyword): higher is better.
    pub score: f32,
}

impl Store {
    /// The `limit` chunks nearest to `vector` by cosine, within `scope`.
    #[tracing::instrument(skip_all, fields(limit))]
    pub async fn dense(
        &self,
        vector: &[f32],
        scope: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        self.dense_with(vector, scope, limit, self.tuning, false)
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
            .select(Select::columns(schema::STORED_COLUMNS));
        query = if exact {
            query.bypass_vector_index()
        } else {
            query
                .nprobes(tuning.nprobes)?
                .refine_factor(tuning.refine_factor)
        };
        if let Some(scope) = scope {
            query = query.only_if(scope);
        }
        let batches: Vec<RecordBatch> = query.execute().await?.try_collect().await?;
        // Cosine distance is 1 − similarity.
        with_scores(&batches, "_distance", |d| 1.0 - d)
    }

    /// The `limit` chunks best matching `query` by BM25F over two fields,
    /// the chunk's context (boosted by [`CONTEXT_BOOST`]) and its text,
    /// within `scope`.
    #[tracing::instrument(skip_all, fields(limit))]
    pub async fn keyword(
        &self,
        query: &str,
        scope: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        if !self.has_fts_index().await? {
            // Nothing was ever indexed: an empty store.
            return Ok(Vec::new());
        }
        let fields = CombinedFieldsQuery::try_new(
            query.to_owned(),
            vec!["context".to_owned(), "text".to_owned()],
        )
        .and_then(|q| q.try_with_boosts(vec![self.context_boost, 1.0]))
        .map_err(|e| StoreError::Query(e.to_string()))?;
        let mut q = self
            .chunks
            .query()
            .full_text_search(FullTextSearchQuery::new_query(FtsQuery::CombinedFields(
                fields,
            )))
            .select(Select::columns(schema::STORED_COLUMNS))
            .limit(limit);
        if let Some(scope) = scope {
            q = q.only_if(scope);
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        with_scores(&batches, "_score", |s| s)
    }

    /// Whether the full-text indexes (text and context) exist. Indexes are
    /// never dropped, so once seen they are remembered and searches skip the
    /// metadata read.
    async fn has_fts_index(&self) -> Result<bool, StoreError> {
        use std::sync::atomic::Ordering;
        if self.fts_ready.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let indices = self.chunks.list_indices().await?;
        let found = ["text", "context"]
            .iter()
            .all(|column| indices.iter().any(|i| i.columns == [*column]));
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

    /// Whether a chunk with this id is stored.
    pub async fn has_chunk(&self, chunk_id: &str) -> Result<bool, StoreError> {
        Ok(self
            .chunks
            .count_rows(Some(format!("chunk_id = {}", filter::sql_string(chunk_id))))
            .await?
            > 0)
    }

    /// Builds the cosine IVF-PQ vector index over every stored vector,
    /// replacing any earlier one.
    #[tracing::instrument(skip(self))]
    pub async fn build_vector_index(&self) -> Result<(), StoreError> {
        let rows = self.chunks.count_rows(None).await?;
        // About √n partitions of a few hundred rows each; 48 sub-vectors of
        // 8 dimensions keep PQ codes small and distances good enough for the
        // refine step to fix the order.
        let partitions = ((rows as f64).sqrt() as u32).clamp(1, 4096);
        let builder = IvfPqIndexBuilder::default()
            .distance_type(DistanceType::Cosine)
            .num_partitions(partitions)
            .num_sub_vectors(48);
        self.chunks
            .create_index(&["vector"], Index::IvfPq(builder))
            .replace(true)
            .execute()
            .await?;
        Ok(())
    }

    /// Whether the vector index exists.
    pub async fn has_vector_index(&self) -> Result<bool, StoreError> {
        Ok(self
            .chunks
            .list_indices()
            .await?
            .iter()
            .any(|i| i.columns == ["vector"]))
    }
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
        let scores = batch
            .column_by_name(column)
            .and_then(|c| c.as_any().downcast_ref::<Float32Array>())
            .ok_or_else(|| StoreError::Shape(format!("{column} is not f32")))?;
        for (row, chunk) in chunks.into_iter().enumerate() {
            out.push(Retrieved {
                chunk,
                score: score(scores.value(row)),
            });
        }
    }
    Ok(out)
}
