//! The chunk table held in memory, one segment per published library
//! version, under a memory budget; what the search legs answer from while
//! every version a search covers is held and current.
//!
//! Why a copy at all: on the 100k-chunk search bench (one library of 10k
//! searched) most of the dense leg's LanceDB query was a fixed cost that no
//! index setting removed, and reading the stored text of a leg's 50
//! candidates cost more again. Scanning a library's vectors as 8-bit codes
//! takes a small fraction of that (`make bench-kernels`), and a chunk read
//! from memory costs a copy. So the dense leg scans the segments'
//! [`docshelf_kernels::QuantizedRows`] (exact up to quantisation, so no
//! recall to tune), and the keyword leg searches their own BM25 postings
//! ([`super::keywords`]), read by LanceDB's own analyzer (docs/benchmarks.md,
//! "Searches answer from memory").
//!
//! **Why segments.** A copy of the whole table was stale after any commit
//! anywhere (every search then went to LanceDB until the whole table had
//! been read again), was all or nothing above a row cap, and made start-up
//! read everything before it served. A published version never changes in
//! place, so a [`Segment`] per version is read once, and a publish or a
//! delete touches only its own: a segment is current while its rows'
//! [`published::Stamp`] matches the one the catalog reads for the table's
//! current version, whoever wrote to the table meanwhile.
//!
//! **Consistency.** A search uses the segments only when every library
//! version in its scope is held and current; otherwise LanceDB answers it
//! whole (so a write is searchable at once and a delete gone at once) and
//! the versions missing are loaded in the background, one at a time.
//!
//! **Keyword statistics.** BM25's N, average length and each term's n are
//! summed over the segments a search covers ([`docshelf_kernels::Statistics`]):
//! the statistics of what is searched. LanceDB's own index counts the whole
//! table whatever the scope, so for a search scoped to some libraries the
//! two can rank a near tie differently; the eval sets' figures for both are
//! in docs/benchmarks.md ("Segments by library version").
//!
//! **Memory.** Segments are kept under a budget (`--resident-mib`) and
//! evicted whole, least recently searched first: a version not held is
//! searched on disk, then loaded if it fits. A version larger than the
//! whole budget is never held. While a version is reloaded after a publish
//! its old segment is still held until the new one replaces it.

mod documents;
mod held;
mod loads;
pub mod published;
mod segment;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use lancedb::Table;

pub use held::Held;
use loads::Wanted;
use published::{PublishedVersion, PublishedVersions, Stamp};
pub use segment::Segment;

use super::filter::Scope;
use super::keywords::Analyzer;
use super::StoreError;

/// The default budget: a third of the machine's memory,
/// at least 256 MiB. A third leaves the rest to the upload's extraction
/// budget (an eighth), the model, searches and the page cache that
/// LanceDB reads through.
pub fn default_budget_mib() -> u64 {
    const MIB: u64 = 1 << 20;
    let total = crate::machine::memory_bytes().unwrap_or(8 * 1024 * MIB);
    (total / 3 / MIB).max(256)
}

/// Most versions a search may cover for its versions to be noted as
/// searched: a search of one library's few versions says what its users
/// read; one of hundreds (a token's every library) does not.
const NAMED_AT_MOST: usize = 16;

/// What a row costs in memory at the least: its vector's 8-bit codes.
/// A version whose rows cost more than the budget by this alone is not
/// read at all (reading it to measure it would take that much memory and
/// more); one that passes is read, measured, and kept only if it fits.
const LEAST_ROW_BYTES: usize = crate::embed::DIM;

/// What the copy holds and how it has served, for status and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResidentStats {
    /// The budget in bytes (0: no copy).
    pub budget_bytes: u64,
    /// Bytes the held segments take.
    pub held_bytes: u64,
    /// Library versions held.
    pub segments: u64,
    /// Chunks held.
    pub chunks: u64,
    /// Search legs (and section reads) answered from memory.
    pub hits: u64,
    /// Search legs (and section reads) answered from disk because a
    /// version they cover was not held.
    pub misses: u64,
    /// Segments read.
    pub loads: u64,
    /// Segments dropped to make room.
    pub evictions: u64,
    /// Versions found larger than the whole budget.
    pub too_large: u64,
}

/// The store's in-memory segments, their budget and their loads.
pub struct Resident {
    inner: Arc<Inner>,
}

struct Inner {
    budget: usize,
    /// Held segments by library, then version (borrowed names look up
    /// without an allocation).
    held: RwLock<HashMap<String, HashMap<String, Entry>>>,
    held_bytes: AtomicUsize,
    /// Ticks once per search: when each segment was last used.
    clock: AtomicU64,
    /// Versions waiting to be loaded.
    queue: Mutex<loads::Queue>,
    /// Whether the loading task runs.
    loading: AtomicBool,
    /// One segment read at a time, by the loader or [`Resident::load_all`].
    reading: tokio::sync::Mutex<()>,
    /// What a row has cost held, on average over the segments read (till
    /// one is read, the least a row costs: an estimate errs low, so that a
    /// version is read and measured rather than never tried).
    row_bytes: AtomicUsize,
    /// Versions larger than the whole budget, at the stamp seen: not
    /// tried again until they change.
    refused: Mutex<HashMap<(String, String), Stamp>>,
    /// The table version whose deleted versions were last dropped.
    swept: AtomicU64,
    /// Versions searches named since they were last written to the store
    /// (see `store::searched`), and when (microseconds since the epoch).
    searched: Mutex<HashMap<(String, String), i64>>,
    analyzer: tokio::sync::OnceCell<Analyzer>,
    hits: AtomicU64,
    misses: AtomicU64,
    loads: AtomicU64,
    evictions: AtomicU64,
    too_large: AtomicU64,
}

struct Entry {
    segment: Arc<Segment>,
    used: AtomicU64,
}

impl Resident {
    /// Holds segments up to `budget` bytes (0: none).
    pub fn new(budget: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                budget,
                held: RwLock::new(HashMap::new()),
                held_bytes: AtomicUsize::new(0),
                clock: AtomicU64::new(1),
                queue: Mutex::new((VecDeque::new(), HashSet::new())),
                loading: AtomicBool::new(false),
                reading: tokio::sync::Mutex::new(()),
                row_bytes: AtomicUsize::new(LEAST_ROW_BYTES),
                refused: Mutex::new(HashMap::new()),
                swept: AtomicU64::new(u64::MAX),
                searched: Mutex::new(HashMap::new()),
                analyzer: tokio::sync::OnceCell::new(),
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                loads: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                too_large: AtomicU64::new(0),
            }),
        }
    }

    /// Whether segments are held at all.
    pub fn enabled(&self) -> bool {
        self.inner.budget > 0
    }

    /// The segments of every version `scope` covers, if all are held and
    /// current as of `published`. Otherwise `None`, and for a search
    /// (`counted`) the missing ones are queued to load from `table`. A
    /// search is counted as a hit or a miss; a question about readiness
    /// (not `counted`) is neither, and reads nothing in: a status page
    /// polled, or a replica's health check, must not fill the memory with
    /// versions no search asked for.
    pub async fn covering(
        &self,
        table: &Table,
        published: &PublishedVersions,
        scope: &Scope,
        counted: bool,
    ) -> Result<Option<Held>, StoreError> {
        if !self.enabled() {
            return Ok(None);
        }
        let inner = &self.inner;
        inner.sweep(published);
        let matcher = scope.matcher();
        let now = inner.clock.fetch_add(1, Ordering::Relaxed);
        let (mut segments, mut missing) = (Vec::new(), Vec::new());
        let mut named: Vec<(String, String)> = Vec::new();
        let naming = counted && !scope.targets.is_empty();
        {
            let held = inner.read_held();
            for p in published
                .versions
                .iter()
                .filter(|p| matcher.covers(&p.library, &p.version))
            {
                if naming && named.len() <= NAMED_AT_MOST {
                    named.push((p.library.clone(), p.version.clone()));
                }
                match held.get(&p.library).and_then(|v| v.get(&p.version)) {
                    Some(entry) if entry.segment.stamp() == p.stamp => {
                        // Only a search makes a segment recently used: a
                        // readiness question asks about every one at once.
                        if counted {
                            entry.used.store(now, Ordering::Relaxed);
                        }
                        segments.push(Arc::clone(&entry.segment));
                    }
                    _ => missing.push(p),
                }
            }
        }
        if !named.is_empty() && named.len() <= NAMED_AT_MOST {
            inner.note_searched(named);
        }
        if !missing.is_empty() {
            if counted {
                inner.misses.fetch_add(1, Ordering::Relaxed);
                // A scope whose versions cannot all be held at once would
                // drop one version to read the next, search after search,
                // and never answer from memory: its missing versions take
                // only room that is free.
                let held: usize = segments.iter().map(|s| s.bytes()).sum();
                let wanted: usize = missing
                    .iter()
                    .map(|p| p.chunks.saturating_mul(inner.row_bytes()))
                    .sum();
                let fits = held.saturating_add(wanted) <= inner.budget;
                self.request(table, missing.into_iter().map(|p| Wanted::of(p, fits)));
            }
            return Ok(None);
        }
        if counted {
            inner.hits.fetch_add(1, Ordering::Relaxed);
        }
        // Built once, by the first search that needs it.
        inner
            .analyzer
            .get_or_try_init(|| async { Analyzer::new() })
            .await?;
        Ok(Some(Held::new(segments, Arc::clone(&self.inner))))
    }

    /// Takes the searches noted since the last call (see
    /// `store::searched`).
    pub fn take_searched(&self) -> HashMap<(String, String), i64> {
        std::mem::take(
            &mut *self
                .inner
                .searched
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Notes again searches that could not be written, unless a newer
    /// search of the same version was noted meanwhile.
    pub fn note_searched_again(&self, noted: HashMap<(String, String), i64>) {
        let mut searched = self
            .inner
            .searched
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (key, at) in noted {
            let entry = searched.entry(key).or_insert(at);
            *entry = (*entry).max(at);
        }
    }

    /// Whether every published version is held and current.
    pub fn holds_all(&self, published: &PublishedVersions) -> bool {
        let held = self.inner.read_held();
        self.enabled()
            && published.versions.iter().all(|p| {
                held.get(&p.library)
                    .and_then(|v| v.get(&p.version))
                    .is_some_and(|e| e.segment.stamp() == p.stamp)
            })
    }

    /// Queues every published version to load in the background: first
    /// those in `searched` (the most recently searched first), then the
    /// others, the most recently published first. What start-up calls, so
    /// that searches answer from the store at once and from memory as
    /// versions arrive, the versions users read first.
    pub fn warm(
        &self,
        table: &Table,
        published: &PublishedVersions,
        searched: &[(String, String)],
    ) {
        if !self.enabled() {
            return;
        }
        let mut order: Vec<&PublishedVersion> = published.versions.iter().collect();
        let rank: HashMap<(&str, &str), usize> = searched
            .iter()
            .enumerate()
            .map(|(at, (l, v))| ((l.as_str(), v.as_str()), at))
            .collect();
        order.sort_by_key(|p| {
            let searched = rank.get(&(p.library.as_str(), p.version.as_str()));
            (
                searched.copied().unwrap_or(usize::MAX),
                std::cmp::Reverse(p.updated_at),
            )
        });
        self.request(table, order.into_iter().map(|p| Wanted::of(p, false)));
    }

    /// Reads `published`, just published by this process, now: in place of
    /// its old segment when that is held (it costs about the same), else
    /// only into free room. Awaited before the job that published it ends,
    /// so that once a job is `done` its version's searches answer one way,
    /// from memory, rather than from the store until a background read
    /// lands and from memory after (the two differ by the vectors' 8-bit
    /// rounding in the last digits of a score).
    pub async fn after_publish(
        &self,
        table: &Table,
        published: &PublishedVersion,
    ) -> Result<(), StoreError> {
        if !self.enabled() {
            return Ok(());
        }
        let held = self
            .inner
            .read_held()
            .get(&published.library)
            .is_some_and(|v| v.contains_key(&published.version));
        self.inner.load(table, Wanted::of(published, held)).await
    }

    /// Reads every published version not held now, in `published`'s
    /// order, within the budget: what tests, benches and the eval harness
    /// call to search from memory at once. Returns whether all are held.
    pub async fn load_all(
        &self,
        table: &Table,
        published: &PublishedVersions,
    ) -> Result<bool, StoreError> {
        if !self.enabled() {
            return Ok(false);
        }
        for p in &published.versions {
            self.inner.load(table, Wanted::of(p, true)).await?;
        }
        Ok(self.holds_all(published))
    }

    /// What is held and how it has served.
    pub fn stats(&self) -> ResidentStats {
        let inner = &self.inner;
        let held = inner.read_held();
        let (segments, chunks) = held
            .values()
            .flat_map(HashMap::values)
            .fold((0u64, 0u64), |(s, c), e| {
                (s + 1, c + e.segment.len() as u64)
            });
        ResidentStats {
            budget_bytes: inner.budget as u64,
            held_bytes: inner.held_bytes.load(Ordering::Relaxed) as u64,
            segments,
            chunks,
            hits: inner.hits.load(Ordering::Relaxed),
            misses: inner.misses.load(Ordering::Relaxed),
            loads: inner.loads.load(Ordering::Relaxed),
            evictions: inner.evictions.load(Ordering::Relaxed),
            too_large: inner.too_large.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    /// What a row costs held, as estimated so far.
    fn row_bytes(&self) -> usize {
        self.row_bytes.load(Ordering::Relaxed)
    }

    /// Notes that a search named `versions` now.
    fn note_searched(&self, versions: Vec<(String, String)>) {
        let now = super::now_micros();
        let mut searched = self.searched.lock().unwrap_or_else(|e| e.into_inner());
        for key in versions {
            searched.insert(key, now);
        }
    }

    fn read_held(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, HashMap<String, Entry>>> {
        // A poisoned lock only means a holder panicked; the map is intact.
        self.held.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_held(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, HashMap<String, HashMap<String, Entry>>> {
        self.held.write().unwrap_or_else(|e| e.into_inner())
    }
}
