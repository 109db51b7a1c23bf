//! The two retrievers over the chunk table, and neighbour lookups (the
//! vector index itself is [`super::vector_index`]'s).
//!
//! Both apply the scope as a **pre**-filter: rows outside it never compete
//! for a place, so a filtered search returns `limit` hits whenever that many
//! exist in scope. The scalar indexes on library, version and file path make
//! that filter cheap.

use std::future::Future;

use arrow_array::{Array, Float32Array, RecordBatch};
use futures::TryStreamExt;
use lancedb::index::scalar::{FtsQuery, FullTextSearchQuery, MatchQuery};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::DistanceType;

use super::filter::Scope;
use super::resident::{Coverage, Held};
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
    /// the versions held and current from the in-memory segments (see
    /// [`super::resident`]), the others from the vector index.
    #[tracing::instrument(skip_all, fields(limit, resident))]
    pub async fn dense(
        &self,
        vector: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        self.by_coverage(
            scope,
            limit,
            |held| {
                let vector = vector.to_vec();
                from_memory(held, scope, move |h, s| h.nearest(&vector, s, limit))
            },
            // Cosine similarity is the same measure on both sides.
            |sql| async move {
                self.dense_with(vector, sql.as_deref(), limit, self.tuning, false)
                    .await
            },
        )
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
    /// `scope`: the versions held and current from the in-memory segments'
    /// postings (see [`super::resident`]), the others from LanceDB's
    /// full-text index.
    ///
    /// A scope partly held is answered by both, merged by score: memory
    /// scores its versions with their own keyword statistics and LanceDB
    /// the rest with the table's, so near ties across the two may order
    /// differently than one index of everything would.
    #[tracing::instrument(skip_all, fields(limit, resident))]
    pub async fn keyword(
        &self,
        query: &str,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
        self.by_coverage(
            scope,
            limit,
            |held| {
                let query = query.to_owned();
                from_memory(held, scope, move |h, s| h.keyword(&query, s, limit))
            },
            |sql| self.keyword_on_disk(query, sql, limit),
        )
        .await
    }

    /// A leg answered as memory allows: from the segments when every
    /// version in `scope` is held (`memory`), from LanceDB within a SQL
    /// filter when none is (`disk`), and by both, merged by score, when
    /// some are.
    async fn by_coverage<M, D>(
        &self,
        scope: &Scope,
        limit: usize,
        memory: impl FnOnce(Held) -> M,
        disk: impl FnOnce(Option<String>) -> D,
    ) -> Result<Vec<Retrieved>, StoreError>
    where
        M: Future<Output = Result<Vec<Retrieved>, StoreError>>,
        D: Future<Output = Result<Vec<Retrieved>, StoreError>>,
    {
        let coverage = self.coverage_for(scope).await?;
        tracing::Span::current().record("resident", coverage.name());
        match coverage {
            Coverage::All(held) => memory(held).await,
            Coverage::Part { held, missing } => {
                let rest = rest_of(scope, &held, &missing);
                let (held, rest) = futures::try_join!(memory(held), disk(Some(rest)))?;
                Ok(merged(held, rest, limit))
            }
            Coverage::None => disk(scope.to_sql()).await,
        }
    }

    /// The keyword leg on LanceDB's full-text index, within the SQL `scope`.
    async fn keyword_on_disk(
        &self,
        query: &str,
        scope: Option<String>,
        limit: usize,
    ) -> Result<Vec<Retrieved>, StoreError> {
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
        if let Some(sql) = scope {
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

/// The SQL filter for the rows of `scope` that `held` does not answer: the
/// `missing` versions. A library none of whose versions is held is named
/// in one `IN` list (a search of every library can leave thousands out);
/// one partly held names its missing versions one by one.
fn rest_of(scope: &Scope, held: &Held, missing: &[(String, String)]) -> String {
    let partly: std::collections::HashSet<&str> = held.versions().map(|(l, _)| l).collect();
    let (mut whole, mut versions) = (Vec::new(), Vec::new());
    for (library, version) in missing {
        if partly.contains(library.as_str()) {
            versions.push(format!("({})", filter::version(library, version)));
        } else if whole.last() != Some(library) {
            whole.push(library.clone());
        }
    }
    let mut alternatives = versions;
    if !whole.is_empty() {
        let names: Vec<String> = whole.iter().map(|l| filter::sql_string(l)).collect();
        alternatives.push(format!("library IN ({})", names.join(", ")));
    }
    let rest = alternatives.join(" OR ");
    match scope.to_sql() {
        Some(sql) => format!("({sql}) AND ({rest})"),
        None => rest,
    }
}

/// The best `limit` of two legs' hits over disjoint versions, best first;
/// ties in the order of library, version, path and chunk, as one index of
/// both would give them.
fn merged(mut hits: Vec<Retrieved>, rest: Vec<Retrieved>, limit: usize) -> Vec<Retrieved> {
    hits.extend(rest);
    fn place(r: &Retrieved) -> (&str, &str, &str, u32) {
        let c = &r.chunk;
        (&c.library, &c.version, &c.file_path, c.chunk_index)
    }
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| place(a).cmp(&place(b)))
    });
    hits.truncate(limit);
    hits
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
