//! A copy of the chunk table held in memory, which the search legs answer
//! from while it matches the table's current version.
//!
//! Why: on the 100k-chunk search bench (one library of 10k searched) most
//! of the dense leg's LanceDB query was a fixed cost that no index setting
//! removed, and reading the stored text of a leg's 50 candidates cost more
//! again. Scanning the library's 10k vectors as 8-bit codes takes a small
//! fraction of that (`make bench-kernels`), and a chunk read from memory
//! costs a copy. So the dense leg scans this copy
//! ([`QuantizedRows`], exact up to quantisation, so no recall to tune), and
//! the keyword leg searches the copy's own BM25 postings
//! ([`super::keywords`]), which read text and score as LanceDB's full-text
//! index does: asking that index cost a few milliseconds a search however
//! small the table.
//!
//! **Consistency.** A copy is tagged with the table version it was read
//! at, and a search uses it only while the table (as this process sees
//! it) is still at that version. After any commit, by this process or
//! another, searches go to LanceDB as before, so a write is searchable at
//! once, and a reload starts in the background once the table has been
//! quiet for [`QUIET`] (an upload commits once per document: reloading
//! after each would compete with its embedding for the CPU).
//!
//! On that bench (`make bench-search`) the dense search became several
//! times faster; with the keyword leg's single field as well (see
//! `schema::search_text`), hybrid search took about a third of its time
//! and 16 clients over HTTP got three times the searches a second
//! (docs/benchmarks.md, "Searches answer from memory").
//!
//! **Memory.** A chunk's 384 bytes of codes, its stored columns and its
//! share of the keyword postings (measured per chunk in docs/benchmarks.md,
//! "Search on 700-byte chunks" and "The keyword leg from memory"). While a
//! new copy is read the old one is still held, and while its postings are
//! built their per-term lists sit beside the final arrays. A
//! table of more than the configured rows (`--resident-chunks`) is not
//! copied and is searched on disk only.

mod documents;
mod order;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use docshelf_kernels::{Bm25Index, Keep, QuantizedRows};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::Table;

use super::filter::Scope;
use super::keywords::{self, Analyzer};
use super::schema::{self, ChunkColumns, StoredChunk};
use super::{Retrieved, StoreError};
use crate::embed::DIM;

/// How long the table must go without a commit before a reload starts.
pub const QUIET: Duration = Duration::from_secs(2);

/// The default most rows held in memory (what a million chunks of 700
/// bytes cost: docs/benchmarks.md, "The keyword leg from memory").
pub const DEFAULT_MAX_ROWS: usize = 1_000_000;

/// The chunk table at one version, in memory.
pub struct Copy {
    version: u64,
    /// The table's stored columns, batch by batch as read: Arrow arrays
    /// keep the text in a few large buffers rather than a string per field
    /// per chunk.
    batches: Vec<ChunkColumns>,
    /// The copy's rows, sorted by library, version, path and chunk index,
    /// so that a scope is a few row ranges and a document's chunks a run
    /// within one: (batch, row within it).
    rows: Vec<(u32, u32)>,
    /// The rows' vectors, in the same order.
    vectors: QuantizedRows,
    /// The rows' `search_text` as BM25 postings, in the same order.
    keywords: Bm25Index,
    /// What reads a query into the tokens `keywords` holds.
    analyzer: Analyzer,
    /// Each (library, version) and its rows, in name order.
    groups: Vec<order::Group>,
}

impl Copy {
    /// The table version this copy was read at.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// How many chunks it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `limit` chunks in `scope` nearest `vector` by cosine.
    pub fn nearest(&self, vector: &[f32], scope: &Scope, limit: usize) -> Vec<Retrieved> {
        self.in_scope(scope, |ranges, keep| {
            self.vectors.nearest(vector, ranges, keep, limit)
        })
    }

    /// The `limit` chunks in `scope` best matching `query` by BM25, as
    /// LanceDB's full-text index would rank them (see [`super::keywords`]).
    pub fn keyword(&self, query: &str, scope: &Scope, limit: usize) -> Vec<Retrieved> {
        let tokens = self.analyzer.query_tokens(query);
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        self.in_scope(scope, |ranges, keep| {
            self.keywords.search(&tokens, ranges, keep, limit)
        })
    }

    /// How many rows `scope`'s libraries and versions hold (before any file
    /// prefix): what a search of it scans at most.
    pub fn rows_in(&self, scope: &Scope) -> usize {
        self.ranges(scope).map(|rows| rows.len()).sum()
    }

    /// The row ranges of `scope`'s libraries and versions, in row order.
    fn ranges<'a>(&'a self, scope: &'a Scope) -> impl Iterator<Item = Range<usize>> + 'a {
        let matcher = scope.matcher();
        self.groups
            .iter()
            .filter(move |(library, version, _)| matcher.covers(library, version))
            .map(|(_, _, rows)| rows.clone())
    }

    /// The hits `search` finds among the rows in `scope`, given as row
    /// ranges and, with a file prefix, a test per row.
    fn in_scope(
        &self,
        scope: &Scope,
        search: impl FnOnce(&[Range<usize>], Option<&Keep<'_>>) -> Vec<(usize, f32)>,
    ) -> Vec<Retrieved> {
        let ranges = coalesced(self.ranges(scope));
        let keep = |row: usize| {
            let (batch, at) = self.rows[row];
            scope.covers_path(self.batches[batch as usize].file_path(at as usize))
        };
        // Without a prefix every row in range is kept: no call per row.
        let keep: Option<&Keep<'_>> = scope.file_prefix.as_ref().map(|_| &keep as _);
        search(&ranges, keep)
            .into_iter()
            .map(|(row, score)| Retrieved {
                chunk: self.chunk(row),
                score,
            })
            .collect()
    }

    fn chunk(&self, row: usize) -> StoredChunk {
        let (batch, at) = self.rows[row];
        self.batches[batch as usize].chunk(at as usize)
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

    /// Reads every row of `table`; `None` when the table moved on while it
    /// was being read (the copy would match no version).
    async fn read(table: &Table) -> Result<Option<Self>, StoreError> {
        let version = table.version().await?;
        let mut columns = schema::STORED_COLUMNS.to_vec();
        columns.push("vector");
        let mut stream = table
            .query()
            .select(Select::columns(&columns))
            .execute()
            .await?;
        let (mut batches, mut read_order) = (Vec::new(), Vec::new());
        let mut vectors = QuantizedRows::with_capacity(DIM, 0);
        while let Some(batch) = stream.try_next().await? {
            let batch: RecordBatch = batch;
            let stored = ChunkColumns::copied_out(&batch).map_err(StoreError::Shape)?;
            let index = u32::try_from(batches.len())
                .map_err(|_| StoreError::Shape("too many batches".into()))?;
            read_order.extend((0..stored.len() as u32).map(|row| (index, row)));
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
        if table.version().await? != version {
            return Ok(None);
        }
        let (order, groups) = order::by_document(&batches, &read_order);
        let rows: Vec<(u32, u32)> = order.iter().map(|&read| read_order[read]).collect();
        let vectors = vectors.reordered(&order);
        // Reading every chunk's text into postings takes seconds at a
        // million chunks: off the async workers, which serve searches.
        let (batches, rows, keywords) = tokio::task::spawn_blocking(move || {
            let keywords = keywords::index(&batches, &rows);
            (batches, rows, keywords)
        })
        .await
        .map_err(|e| StoreError::TaskStopped(format!("indexing the copy's text: {e}")))?;
        Ok(Some(Self {
            version,
            batches,
            rows,
            vectors,
            keywords: keywords?,
            analyzer: Analyzer::new()?,
            groups,
        }))
    }
}

/// Hands memory the allocator holds free back to the system. Reading a
/// copy allocates its size again in many pieces (Arrow batches, their
/// compacted columns, the old copy until it is dropped), and glibc keeps
/// much of what is freed: over ten reloads in a row of the 100k bench
/// table, the bench process's resident memory stayed about a third lower
/// with this, for a little more time a reload (`DOCSHELF_BENCH_RELOADS=10`;
/// docs/benchmarks.md, "Searches answer from memory"). A search still
/// holding the old copy frees it later; that memory then waits for the next
/// reload.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's heap to the
    // system; it takes no pointers and is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The store's in-memory copy and its reloads.
pub struct Resident {
    inner: Arc<Inner>,
}

struct Inner {
    /// Most rows copied; 0 turns the copy off.
    max_rows: usize,
    copy: RwLock<Option<Arc<Copy>>>,
    /// Set while a reload task runs.
    loading: AtomicBool,
    /// Held while a copy is read: a reload asked for while another runs
    /// waits for it (and then finds its copy current) instead of reading a
    /// second copy beside it, which doubles both the time and the memory
    /// (docs/benchmarks.md, "Every library of a million chunks").
    reading: tokio::sync::Mutex<()>,
    /// The last version found too large to copy (not counted again).
    too_large: AtomicU64,
}

impl Resident {
    /// Copies tables of at most `max_rows` rows (0: never).
    pub fn new(max_rows: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                max_rows,
                copy: RwLock::new(None),
                loading: AtomicBool::new(false),
                reading: tokio::sync::Mutex::new(()),
                too_large: AtomicU64::new(u64::MAX),
            }),
        }
    }

    /// The copy, if it matches `table`'s current version. Otherwise `None`,
    /// and a reload is started unless one is running.
    pub async fn current(&self, table: &Table) -> Result<Option<Arc<Copy>>, StoreError> {
        if self.inner.max_rows == 0 {
            return Ok(None);
        }
        let version = table.version().await?;
        if let Some(copy) = self.held().filter(|c| c.version == version) {
            return Ok(Some(copy));
        }
        if self.inner.too_large.load(Ordering::Relaxed) != version {
            self.reload_in_background(table.clone());
        }
        Ok(None)
    }

    /// The copy held now, whatever its version.
    pub fn held(&self) -> Option<Arc<Copy>> {
        self.inner.held()
    }

    /// Reads the table into a new copy now, unless it is too large; what
    /// the background reload does once the table is quiet. Returns whether
    /// a copy of the current version is held after.
    pub async fn reload(&self, table: &Table) -> Result<bool, StoreError> {
        self.inner.reload(table).await
    }

    fn reload_in_background(&self, table: Table) {
        if self.inner.loading.swap(true, Ordering::AcqRel) {
            return;
        }
        let inner = Arc::clone(&self.inner);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.inner.loading.store(false, Ordering::Release);
            return;
        };
        runtime.spawn(async move {
            if let Err(err) = inner.reload_when_quiet(&table).await {
                tracing::warn!(%err, "cannot copy the chunk table into memory; searching on disk");
            }
            inner.loading.store(false, Ordering::Release);
        });
    }
}

impl Inner {
    /// The copy held now, whatever its version.
    fn held(&self) -> Option<Arc<Copy>> {
        // A poisoned lock only means a reader panicked; the copy is intact.
        self.copy.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until the table has gone [`QUIET`] without a commit, then
    /// reloads.
    async fn reload_when_quiet(&self, table: &Table) -> Result<(), StoreError> {
        let mut seen = table.version().await?;
        loop {
            tokio::time::sleep(QUIET).await;
            let now = table.version().await?;
            if now == seen {
                break;
            }
            seen = now;
        }
        self.reload(table).await.map(|_| ())
    }

    #[tracing::instrument(skip_all, fields(rows))]
    async fn reload(&self, table: &Table) -> Result<bool, StoreError> {
        if self.max_rows == 0 {
            return Ok(false);
        }
        let _one_at_a_time = self.reading.lock().await;
        let version = table.version().await?;
        if self.held().is_some_and(|copy| copy.version == version) {
            return Ok(true);
        }
        let rows = table.count_rows(None).await?;
        tracing::Span::current().record("rows", rows);
        if rows > self.max_rows {
            self.too_large.store(version, Ordering::Relaxed);
            tracing::info!(
                rows,
                max = self.max_rows,
                "the chunk table is larger than --resident-chunks: searching on disk"
            );
            return Ok(false);
        }
        let started = Instant::now();
        let Some(copy) = Copy::read(table).await? else {
            return Ok(false);
        };
        tracing::info!(
            rows = copy.len(),
            mib = copy.bytes() >> 20,
            version = copy.version,
            ms = started.elapsed().as_millis() as u64,
            "copied the chunk table into memory"
        );
        let current = copy.version == table.version().await?;
        let old = self
            .copy
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .replace(Arc::new(copy));
        drop(old);
        release_freed_memory();
        Ok(current)
    }
}

/// `ranges` (in row order) with touching ones joined: a token that reads
/// a thousand small libraries scopes a thousand adjacent groups, which the
/// scans then cross as one run instead of a thousand short ones.
fn coalesced(ranges: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for range in ranges {
        match out.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn touching_ranges_are_joined_and_gaps_kept() {
        let joined = super::coalesced([0..3, 3..5, 7..9, 9..10, 12..12].into_iter());
        assert_eq!(joined, vec![0..5, 7..10, 12..12]);
    }
}
