//! A search over the segments it covers: each segment's best hits, merged.

use std::ops::Range;
use std::sync::Arc;

use docshelf_kernels::Statistics;

use super::{Inner, Segment};
use crate::store::filter::Scope;
use crate::store::Retrieved;

/// The held, current segments of every library version a search covers,
/// in library and version order.
pub struct Held {
    segments: Vec<Arc<Segment>>,
    inner: Arc<Inner>,
}

/// A hit: its score, its segment and its row there.
type Hit = (f32, usize, usize);

impl Held {
    pub(super) fn new(segments: Vec<Arc<Segment>>, inner: Arc<Inner>) -> Self {
        Self { segments, inner }
    }

    /// How many rows the search covers (before any file prefix): what it
    /// scans at most.
    pub fn rows(&self) -> usize {
        self.segments.iter().map(|s| s.len()).sum()
    }

    /// The `limit` chunks in `scope` nearest `vector` by cosine.
    pub fn nearest(&self, vector: &[f32], scope: &Scope, limit: usize) -> Vec<Retrieved> {
        let prefix = scope.file_prefix.as_deref();
        self.best(
            limit,
            |segment, rows| segment.nearest(vector, rows, limit),
            prefix,
        )
    }

    /// The `limit` chunks in `scope` best matching `query` by BM25, scored
    /// with the statistics of every segment searched.
    pub fn keyword(&self, query: &str, scope: &Scope, limit: usize) -> Vec<Retrieved> {
        // `covering` built the analyzer before it made this.
        let Some(analyzer) = self.inner.analyzer.get() else {
            return Vec::new();
        };
        let tokens = analyzer.query_tokens(query);
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        let mut statistics = Statistics::default();
        for segment in &self.segments {
            statistics.add(&segment.statistics(&tokens));
        }
        let prefix = scope.file_prefix.as_deref();
        self.best(
            limit,
            |segment, rows| segment.keyword(&tokens, rows, limit, &statistics),
            prefix,
        )
    }

    /// The best `limit` of every segment's own best `limit` under `prefix`,
    /// ties to the earlier segment and row (the order a single copy of the
    /// table sorted by library, version, path and chunk gave them).
    ///
    /// A search over many segments splits them across the cores when it
    /// covers enough rows: each segment is scanned whole by one thread, and
    /// a segment large enough is split again by the scan itself.
    fn best(
        &self,
        limit: usize,
        search: impl Fn(&Segment, Range<usize>) -> Vec<(usize, f32)> + Sync,
        prefix: Option<&str>,
    ) -> Vec<Retrieved> {
        let of = |from: usize, segments: &[Arc<Segment>]| -> Vec<Hit> {
            let mut hits: Vec<Hit> = Vec::new();
            for (at, segment) in segments.iter().enumerate() {
                let rows = segment.rows_under(prefix);
                hits.extend(
                    search(segment, rows)
                        .into_iter()
                        .map(|(row, score)| (score, from + at, row)),
                );
                keep_best(&mut hits, limit);
            }
            hits
        };
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let mut hits = if self.segments.len() > 1
            && threads > 1
            && self.rows() >= docshelf_kernels::SPLIT_ROWS
        {
            let part = self.segments.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let parts: Vec<_> = self
                    .segments
                    .chunks(part)
                    .enumerate()
                    .map(|(i, segments)| {
                        let of = &of;
                        scope.spawn(move || of(i * part, segments))
                    })
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|p| {
                        p.join().unwrap_or_else(|_| {
                            // The others' hits still answer; the panic is
                            // a bug to see in the log, not a failed search.
                            tracing::error!("a scan of in-memory segments panicked; its segments' hits are missing from this answer");
                            Vec::new()
                        })
                    })
                    .collect::<Vec<Hit>>()
            })
        } else {
            of(0, &self.segments)
        };
        keep_best(&mut hits, limit);
        hits.into_iter()
            .map(|(score, segment, row)| Retrieved {
                chunk: self.segments[segment].chunk(row),
                score,
            })
            .collect()
    }

    /// The held segment of `library` at `version`, with its place.
    pub(super) fn segment_at(&self, library: &str, version: &str) -> Option<(usize, &Segment)> {
        self.segments
            .binary_search_by(|s| (s.library(), s.version()).cmp(&(library, version)))
            .ok()
            .map(|at| (at, self.segments[at].as_ref()))
    }

    /// The segment at place `at`.
    pub(super) fn segment_by_index(&self, at: usize) -> Option<&Segment> {
        self.segments.get(at).map(Arc::as_ref)
    }
}

/// Sorts `hits` best first (ties to the earlier segment and row) and keeps
/// the first `limit`.
fn keep_best(hits: &mut Vec<Hit>, limit: usize) {
    hits.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    hits.truncate(limit);
}
