//! Hybrid search: the keyword and dense legs over the store, fused, blended
//! with recency and feedback, then trimmed, grouped and expanded.
//!
//! The order of work, and why:
//! 1. Both legs run at once and **over-fetch** (`5·k`, 50 to 250 chunks):
//!    fusion, one-hit-per-document and grouping by library all pick from the
//!    pool, so it must be deeper than `k`. The scope is a pre-filter in both
//!    legs (see [`crate::store::retrieve`]).
//! 2. Fusion ([`index_core::fusion`]) merges the legs by chunk id; the fused
//!    score is mapped to [0, 1] so it blends with recency and the feedback
//!    signal ([`index_core::scoring`]).
//! 3. The second stage ([`rerank`]) rescores the best fused candidates;
//!    the result is blended with recency and feedback when asked.
//! 4. Candidates become pages ([`pages`]): one result per document, its best
//!    chunk leading and its other strong chunks as sections (unless
//!    `duplicates` asks for raw chunks). Text a library version repeats on
//!    several pages counts once, for the page that ranks it best
//!    ([`copies`]). Interleaving libraries works on pages.
//! 5. With `expand`, the hit's neighbours are merged in, overlaps removed.
//!
//! The caller sees each stage as it completes ([`Stage`]), which is what the
//! streaming endpoint forwards.
//!
//! - [`rerank`]: the second-stage scorer.
//! - [`pages`]: candidates grouped into one result per page.
//! - [`copies`]: the same passage in several places.
//! - [`tokens`]: what a token budget counts with.
//! - [`budget`]: an answer filled to a token budget.

pub mod budget;
pub mod copies;
pub mod pages;
pub mod rerank;
pub mod tokens;

use std::collections::HashMap;

use index_core::document::{reassemble, Piece};
use index_core::fusion::{dbsf, rrf, Fused, Scored};
use index_core::highlight;
use index_core::markdown::markdown_snippet;
use index_core::scoring;
use index_core::search::{Expansion, Fusion, Mode, PageSection, ScoreParts, Search, SearchHit};

use crate::embed::EmbedQueue;
use crate::store::filter::Scope;
use crate::store::{Retrieved, Store, StoreError, StoredChunk};

use self::pages::Page;
use self::rerank::{SecondStage, RERANK_DEPTH};

/// A hit within this share of the best score counts as strong when deciding
/// whether an unfiltered query was answered by several libraries.
const STRONG_SHARE: f32 = 0.75;

/// Why a search could not run (bad requests are refused before this).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the query could not be embedded: {0}")]
    Embed(String),
    #[error("dense search needs the embedding model, which is not available: {0}")]
    NoModel(String),
}

/// A point in the search at which results are ready (part of the contract:
/// the streaming API names its events after it).
pub use index_core::search::Stage;

/// What sees the hits of each stage as it completes ([`run`]).
pub type OnStage<'a> = dyn FnMut(Stage, &[SearchHit]) + Send + 'a;

/// What a finished search found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub hits: Vec<SearchHit>,
    /// When grouping was allowed and several libraries had strong hits.
    pub libraries_found: Vec<String>,
}

/// Runs one search over `scope`. `group_libraries` allows answering per
/// library when strong hits come from several (only for queries that named
/// no library). `on_stage`, when given, sees the hits of every stage as it
/// completes; without it the hits of the stages before the answer are
/// never built (the keyword preview costs a snippet per hit).
#[tracing::instrument(skip_all, fields(query = %search.query, mode = ?search.mode, k = search.k))]
pub async fn run(
    store: &Store,
    embedder: Result<&EmbedQueue, String>,
    second_stage: &dyn SecondStage,
    search: &Search,
    scope: &Scope,
    group_libraries: bool,
    mut on_stage: Option<&mut OnStage<'_>>,
) -> Result<Outcome, RunError> {
    let fetch = (search.k * 5).clamp(50, 250);
    let terms = highlight::query_terms(&search.query);
    let now = crate::store::now_micros();

    let keyword_leg = async {
        if search.mode == Mode::Dense {
            return Ok(Vec::new());
        }
        let hits = store.keyword(&search.query, scope, fetch).await?;
        // The preview is for a caller that streams the stages; nobody else
        // would read its snippets.
        let streaming = on_stage.as_deref_mut();
        if let (Mode::Hybrid, Some(on_stage)) = (search.mode, streaming) {
            let preview: Vec<SearchHit> = normalise_bm25(&hits)
                .into_iter()
                .take(search.k)
                .map(|(r, rel)| {
                    let parts = ScoreParts {
                        keyword: Some(r.score),
                        fused: rel,
                        ..ScoreParts::default()
                    };
                    hit(r.chunk.clone(), rel, parts, &terms, now)
                })
                .collect();
            on_stage(Stage::Keyword, &preview);
        }
        Ok::<_, RunError>(hits)
    };
    let dense_leg = async {
        if search.mode == Mode::Keyword {
            return Ok(Vec::new());
        }
        // A client that embedded the query itself saves the embedder's
        // pass (and needs no model here).
        let vector = match &search.embedding {
            Some(vector) => vector.clone(),
            None => embedder
                .map_err(RunError::NoModel)?
                .embed_one(search.query.clone())
                .await
                .map_err(|e| RunError::Embed(e.to_string()))?,
        };
        Ok::<_, RunError>(store.dense(&vector, scope, fetch).await?)
    };
    // The dense leg first: it hands the query to the embedder and waits,
    // and the keyword leg's search of a small copy, which runs on this task,
    // then overlaps the embedding.
    let (dense, keyword) = futures::join!(dense_leg, keyword_leg);
    let (keyword, dense) = (keyword?, dense?);

    let mut pool = fuse(search, dense, keyword);
    // The second stage reads the query's words; a search by vector alone
    // has none, and keeps the first stage's order.
    if search.rerank && !search.query.is_empty() {
        rerank(second_stage, &search.query, &mut pool).await;
    }
    if search.weights.w_sig > 0.0 {
        let ids: Vec<&str> = pool.iter().map(|c| c.chunk.chunk_id.as_str()).collect();
        let votes = store.votes(&ids).await?;
        for c in &mut pool {
            let v = votes.get(&c.chunk.chunk_id).copied().unwrap_or_default();
            c.parts.signal = Some(v.signal());
        }
    }
    for c in &mut pool {
        let days = days_old(c.chunk.created_at_micros, now);
        if search.weights.w_rec > 0.0 {
            c.parts.recency = Some(scoring::recency(days));
        }
        // `score` holds the relevance here: fused, then reranked.
        c.score = search.weights.blend(
            c.score,
            c.parts.recency.unwrap_or(0.0),
            c.parts.signal.unwrap_or(0.0),
        );
    }
    pool.sort_by(best_first);

    let mut results: Vec<Page> = if search.duplicates {
        pool.into_iter().map(Page::single).collect()
    } else {
        copies::demote_repeated(&mut pool);
        pages::group(pool)
    };
    let libraries_found = if group_libraries {
        group_by_library(&mut results, search.k)
    } else {
        Vec::new()
    };
    results.truncate(search.k);

    // The pages are not needed past here: their chunks move into the hits.
    let mut hits: Vec<SearchHit> = results
        .into_iter()
        .map(|p| {
            let mut h = hit(p.lead.chunk, p.lead.score, p.lead.parts, &terms, now);
            h.sections = p
                .sections
                .into_iter()
                .map(|s| PageSection {
                    snippet: markdown_snippet(&s.chunk.text, &terms, highlight::SNIPPET_CHARS),
                    chunk_id: s.chunk.chunk_id,
                    chunk_index: s.chunk.chunk_index,
                    heading_path: s.chunk.heading_path,
                    page: s.chunk.page,
                    score: s.score,
                })
                .collect();
            h
        })
        .collect();
    if let Some(on_stage) = on_stage.as_deref_mut() {
        on_stage(Stage::Fused, &hits);
    }

    if search.expand > 0 {
        for h in &mut hits {
            h.expanded = Some(expand(store, h, search.expand).await?);
        }
        if let Some(on_stage) = on_stage {
            on_stage(Stage::Expanded, &hits);
        }
    }
    Ok(Outcome {
        hits,
        libraries_found,
    })
}

/// Lets the second stage rescore the best [`RERANK_DEPTH`] candidates by
/// fused relevance, then maps every candidate's relevance back into [0, 1]
/// (dividing by one plus the most the stage can add), so it still blends
/// with recency and feedback on one scale.
async fn rerank(stage: &dyn SecondStage, query: &str, pool: &mut [Candidate]) {
    pool.sort_by(|a, b| b.score.total_cmp(&a.score));
    let depth = pool.len().min(RERANK_DEPTH);
    stage.rescore(query, &mut pool[..depth]).await;
    let scale = 1.0 + stage.max_bonus();
    for c in pool.iter_mut() {
        c.score = (c.score + c.parts.rerank.unwrap_or(0.0)) / scale;
    }
}

/// A candidate between fusion and the answer.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub chunk: StoredChunk,
    pub parts: ScoreParts,
    pub score: f32,
}

impl Candidate {
    /// Chunk `index` of `path` with relevance `score`, for unit tests.
    #[cfg(test)]
    pub(crate) fn for_test(path: &str, index: u32, score: f32) -> Self {
        Self {
            chunk: StoredChunk {
                chunk_id: format!("{path}#{index}"),
                library: "lib".into(),
                version: "1".into(),
                file_path: path.into(),
                title: None,
                chunk_index: index,
                doc_chunks: 20,
                heading_path: String::new(),
                context: String::new(),
                page: None,
                span_start: 0,
                span_end: 0,
                text: String::new(),
                created_at_micros: 0,
            },
            parts: ScoreParts::default(),
            score,
        }
    }
}

/// Merges the legs' lists by chunk id, with relevance in [0, 1]. Each
/// chunk moves into its candidate (the dense leg's copy where both legs
/// found it).
fn fuse(search: &Search, dense: Vec<Retrieved>, keyword: Vec<Retrieved>) -> Vec<Candidate> {
    let scored = |list: &[Retrieved]| -> Vec<Scored<String>> {
        list.iter()
            .map(|r| Scored {
                id: r.chunk.chunk_id.clone(),
                score: r.score,
            })
            .collect()
    };
    let lists = [scored(&dense), scored(&keyword)];
    let fused: Vec<Fused<String>> = match search.fusion {
        Fusion::Rrf { k } => rrf(&lists, k),
        Fusion::Dbsf => dbsf(&lists),
    };
    let ceiling = search.fusion.ceiling(search.mode.legs());
    let bm25_max = best_score(&keyword);

    let mut chunks: HashMap<&str, StoredChunk> = HashMap::new();
    for (list, leg) in lists.iter().zip([dense, keyword]) {
        for (scored, r) in list.iter().zip(leg) {
            chunks.entry(scored.id.as_str()).or_insert(r.chunk);
        }
    }
    fused
        .into_iter()
        .filter_map(|f| {
            let chunk = chunks.remove(f.id.as_str())?;
            let dense_score = f.ranks[0].map(|r| lists[0][r].score);
            let keyword_score = f.ranks[1].map(|r| lists[1][r].score);
            // A single leg keeps its own scale where it has one: cosine is
            // already absolute; BM25 is relative to the best hit.
            let relevance = match search.mode {
                Mode::Dense => dense_score.unwrap_or(0.0).clamp(0.0, 1.0),
                Mode::Keyword if bm25_max > 0.0 => keyword_score.unwrap_or(0.0) / bm25_max,
                _ => (f.score / ceiling).clamp(0.0, 1.0),
            };
            Some(Candidate {
                chunk,
                parts: ScoreParts {
                    dense: dense_score,
                    keyword: keyword_score,
                    dense_rank: f.ranks[0].map(|r| r + 1),
                    keyword_rank: f.ranks[1].map(|r| r + 1),
                    fused: relevance,
                    recency: None,
                    signal: None,
                    rerank: None,
                    repeated: None,
                },
                score: relevance,
            })
        })
        .collect()
}

/// The best score in a leg's hits (0 for none).
fn best_score(hits: &[Retrieved]) -> f32 {
    hits.iter().map(|r| r.score).fold(0.0f32, f32::max)
}

/// BM25 hits with scores relative to the best one: BM25 has no scale of
/// its own, so a keyword-only relevance is a fraction of the top hit's.
fn normalise_bm25(hits: &[Retrieved]) -> Vec<(&Retrieved, f32)> {
    let max = best_score(hits);
    hits.iter()
        .map(|r| (r, if max > 0.0 { r.score / max } else { 0.0 }))
        .collect()
}

/// When the strong results among the first `k` come from several
/// libraries, reorders them to take turns between those libraries (each
/// library's results keep their order), and returns their names, best first.
fn group_by_library(results: &mut Vec<Page>, k: usize) -> Vec<String> {
    let Some(best) = results.first().map(Page::score) else {
        return Vec::new();
    };
    let mut libraries: Vec<String> = Vec::new();
    for p in results.iter().take(k) {
        if p.score() >= best * STRONG_SHARE && !libraries.iter().any(|l| l == p.library()) {
            libraries.push(p.library().to_owned());
        }
    }
    if libraries.len() < 2 {
        return Vec::new();
    }
    let mut queues: Vec<std::collections::VecDeque<Page>> =
        vec![Default::default(); libraries.len()];
    for p in results.drain(..) {
        if let Some(i) = libraries.iter().position(|l| l == p.library()) {
            queues[i].push_back(p);
        }
    }
    while queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if let Some(p) = q.pop_front() {
                results.push(p);
            }
        }
    }
    libraries
}

/// The hit's neighbours merged into one passage.
async fn expand(store: &Store, hit: &SearchHit, n: u32) -> Result<Expansion, StoreError> {
    let from = hit.chunk_index.saturating_sub(n);
    let to = hit.chunk_index.saturating_add(n);
    let chunks = store
        .chunk_range(&hit.library, &hit.version, &hit.file_path, from, to)
        .await?;
    let pieces: Vec<Piece> = chunks.iter().map(StoredChunk::piece).collect();
    Ok(Expansion {
        from_chunk: chunks.first().map_or(hit.chunk_index, |c| c.chunk_index),
        to_chunk: chunks.last().map_or(hit.chunk_index, |c| c.chunk_index),
        text: reassemble(pieces).text,
    })
}

fn hit(chunk: StoredChunk, score: f32, parts: ScoreParts, terms: &[String], now: i64) -> SearchHit {
    SearchHit {
        snippet: markdown_snippet(&chunk.text, terms, highlight::SNIPPET_CHARS),
        days_old: days_old(chunk.created_at_micros, now),
        chunk_id: chunk.chunk_id,
        library: chunk.library,
        version: chunk.version,
        file_path: chunk.file_path,
        title: chunk.title,
        chunk_index: chunk.chunk_index,
        heading_path: chunk.heading_path,
        page: chunk.page,
        text: chunk.text,
        score,
        parts,
        expanded: None,
        sections: Vec::new(),
    }
}

fn days_old(created_micros: i64, now_micros: i64) -> f32 {
    ((now_micros - created_micros).max(0) as f64 / 86_400e6) as f32
}

/// Candidates best first; equal scores by chunk id, so the order never
/// depends on which leg answered first.
fn best_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| a.chunk.chunk_id.cmp(&b.chunk.chunk_id))
}
