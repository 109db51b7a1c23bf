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
//! - [`open`](Store::open): opening a store, local or remote, and upgrading
//!   its tables in place; [`write`], [`indexes`], [`read`]: the chunk
//!   table's writes, its indexes, and its reads by document.
//! - [`schema`]: the table's columns and how chunks become Arrow batches.
//! - [`filter`]: scopes (library, version, path prefix) as SQL predicates.
//! - [`retrieve`]: the dense and keyword retrievers.
//! - [`vector_index`]: the vector index's partitions, probes and rebuilds.
//! - [`resident`]: library versions held in memory, one segment each,
//!   which searches answer from while every version they cover is held
//!   and current; [`searched`]: which versions were searched last, to hold
//!   those first after a start.
//! - [`staging`]: what a job has embedded, set aside until it publishes
//!   the whole of it in one commit.
//! - [`catalog`]: libraries, versions and documents; deletes.
//! - [`feedback`]: votes on chunks, in a table of their own.
//! - [`job_log`]: upload jobs' statuses, so any process can report a job;
//!   [`runs`]: which processes on the store are alive, so a dead one's
//!   jobs are known to be interrupted.
//! - [`session_log`]: sessions' sticky libraries, so any process can follow one.
//! - [`sources`]: crawled sites and registry packages, so any process can refresh one.
//! - [`tokens`]: access tokens by hash, so every replica knows them;
//!   [`audit`]: the log of writes and token changes.
//! - [`legacy`]: reading a store written by an older docshelf, to upgrade it.
//! - [`backup`]: backups of a whole store while it serves, restored into an empty one.
//! - [`location`]: a local directory or an object store's URI.
//! - [`remote`]: stores on S3-compatible object storage.
//! - [`failure`]: what a storage failure was (disk full, permissions, an
//!   object store down), for the job and the user.
//! - [`writers`], [`lease`]: one writer at a time, across processes and
//!   replicas.

pub mod audit;
pub mod backup;
pub mod catalog;
pub mod failure;
pub mod feedback;
pub mod filter;
mod indexes;
pub mod job_log;
mod keywords;
pub mod lease;
pub mod legacy;
pub mod location;
mod open;
mod read;
pub mod remote;
pub mod resident;
pub mod retrieve;
pub mod runs;
pub mod schema;
mod searched;
pub mod session_log;
pub mod sources;
pub mod staging;
pub mod tokens;
pub mod vector_index;
mod write;
pub mod writers;

use arrow_array::{Array, RecordBatch, RecordBatchIterator, StringArray};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::{Connection, Table};
use tokio::sync::RwLock;

pub use catalog::Target;
pub use failure::StorageFailure;
pub use location::local_dir;
pub use read::DocumentRange;
pub use remote::S3Config;
pub use retrieve::Retrieved;
pub use schema::{ChunkRow, DocumentChunks, StoredChunk};
pub use staging::{Published, Replace};
pub use vector_index::{VectorSearchTuning, VECTOR_INDEX_MIN_ROWS};
pub use write::ReplaceStats;

use self::read::chunks_where;

/// The table every chunk lives in. Its name carries the schema's version:
/// v2 added the `context` column (the title and headings each chunk is
/// embedded and indexed with). A store that still holds the v1 table is
/// upgraded when the engine opens it (see [`legacy`]).
const CHUNKS: &str = "chunks_v2";

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
    #[error("the query could not be built: {0}")]
    Query(String),
    /// Work handed to a thread of its own panicked or was cancelled.
    #[error("a store task stopped before it finished: {0}")]
    TaskStopped(String),
    #[error(transparent)]
    Location(#[from] remote::RemoteError),
    #[error(transparent)]
    Lock(#[from] writers::LockError),
    /// A job's staged rows were dropped before it published them: its
    /// version or library was deleted meanwhile (by any process).
    #[error("the version was deleted while the job ran ({found} of {staged} staged rows left)")]
    Withdrawn { staged: usize, found: usize },
}

/// The chunk store.
pub struct Store {
    location: String,
    db: Connection,
    chunks: Table,
    /// The v1 chunk table, while the store still holds one.
    legacy: Option<Table>,
    feedback: Table,
    jobs: Table,
    sessions: Table,
    /// Documents jobs have embedded but not published (see [`staging`]).
    staged: Table,
    /// Documentation sources (see [`sources`]).
    sources: Table,
    /// Access tokens, by hash (see [`tokens`]).
    tokens: Table,
    /// Writes and token changes (see [`audit`]).
    audit: Table,
    /// Audit entries this process appended, for the table's compaction.
    audit_appends: std::sync::atomic::AtomicU64,
    /// This process's run, and which others are alive (see [`runs`]).
    runs: runs::Runs,
    /// One writer at a time, across processes too (see [`writers`]).
    write: writers::WriteLock,
    catalog: RwLock<Option<catalog::Catalog>>,
    /// What the catalog read of each fragment, held while it reads (see
    /// [`catalog`]).
    catalog_scan: tokio::sync::Mutex<catalog::Fragments>,
    /// How the last listing was read.
    catalog_counts: std::sync::Mutex<catalog::ScanCounts>,
    /// Set once the full-text index is known to exist.
    fts_ready: std::sync::atomic::AtomicBool,
    tuning: VectorSearchTuning,
    /// The vector index's partition count (see [`vector_index`]).
    vector_partitions: vector_index::KnownPartitions,
    /// Rows from which [`Self::refresh_indexes`] builds a vector index.
    vector_index_min_rows: usize,
    /// For a store on an object store: asks it whether it answers.
    probe: Option<remote::Probe>,
    /// When library versions were last searched by name (see [`searched`]).
    searched: Table,
    /// Library versions in memory (off unless [`Self::with_resident_budget`]).
    resident: resident::Resident,
}

impl Store {
    /// Builds the vector index from `rows` rows instead of the default
    /// [`VECTOR_INDEX_MIN_ROWS`] (tests and benches use small tables).
    pub fn with_vector_index_min_rows(mut self, rows: usize) -> Self {
        self.vector_index_min_rows = rows;
        self
    }

    /// Holds library versions in memory for the search legs, up to
    /// `budget` bytes (0: never; see [`resident`]). Versions are read in
    /// the background as searches first ask for them.
    pub fn with_resident_budget(mut self, budget: usize) -> Self {
        self.resident = resident::Resident::new(budget);
        self
    }

    /// Reads every published version not held into memory now, within the
    /// budget (see [`Self::with_resident_budget`]); whether all are held
    /// after.
    pub async fn reload_resident(&self) -> Result<bool, StoreError> {
        let published = self.published().await?;
        self.resident.load_all(&self.chunks, &published).await
    }

    /// Starts reading every published version into memory in the
    /// background as the budget allows: the most recently searched first
    /// (as any process on the store noted them, see [`searched`]), then
    /// the most recently published.
    pub async fn warm_resident(&self) -> Result<(), StoreError> {
        if self.resident.enabled() {
            let published = self.published().await?;
            let searched = match self.searched_order().await {
                Ok(order) => order,
                Err(err) => {
                    tracing::warn!(%err, "cannot read which versions were searched last");
                    Vec::new()
                }
            };
            self.resident.warm(&self.chunks, &published, &searched);
        }
        Ok(())
    }

    /// Reads `library` at `version` into memory after this process
    /// published it: in place of its old segment if that was held, else
    /// only into room the budget has free (see
    /// [`resident::Resident::after_publish`]).
    pub async fn hold_published(&self, library: &str, version: &str) -> Result<(), StoreError> {
        if self.resident.enabled() {
            let published = self.published().await?;
            if let Some(p) = published.get(library, version) {
                self.resident.after_publish(&self.chunks, p).await?;
            }
        }
        Ok(())
    }

    /// Whether every published version is held and current, so that any
    /// search answers from memory right now. Asking reads nothing in.
    pub async fn resident_ready(&self) -> Result<bool, StoreError> {
        self.resident_covers(&filter::Scope::default()).await
    }

    /// Whether a search of `scope` would answer from memory right now.
    /// Asking reads nothing in: only searches do.
    pub async fn resident_covers(&self, scope: &filter::Scope) -> Result<bool, StoreError> {
        if !self.resident.enabled() {
            return Ok(false);
        }
        let published = self.published().await?;
        let held = self
            .resident
            .covering(&self.chunks, &published, scope, false);
        Ok(held.await?.is_some())
    }

    /// What the in-memory segments hold and how they have served.
    pub fn resident_stats(&self) -> resident::ResidentStats {
        self.resident.stats()
    }

    /// Bytes the in-memory segments hold.
    pub fn resident_bytes(&self) -> Option<usize> {
        let held = self.resident.stats().held_bytes as usize;
        (held > 0).then_some(held)
    }

    /// The held segments of every version `scope` covers, when all are
    /// held and current (see [`resident::Resident::covering`]).
    pub(crate) async fn held_for(
        &self,
        scope: &filter::Scope,
    ) -> Result<Option<resident::Held>, StoreError> {
        if !self.resident.enabled() {
            return Ok(None);
        }
        let published = self.published().await?;
        self.resident
            .covering(&self.chunks, &published, scope, true)
            .await
    }

    /// Searches the vector index with these settings.
    pub fn with_tuning(mut self, tuning: VectorSearchTuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// This process's run on the store, and how others are asked after.
    pub fn runs(&self) -> &runs::Runs {
        &self.runs
    }

    /// Where the store lives.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The chunk table's version as this process sees it: each commit, by
    /// any process, makes a new one.
    pub async fn table_version(&self) -> Result<u64, StoreError> {
        Ok(self.chunks.version().await?)
    }

    /// Every table's version as this process sees it (chunks, feedback,
    /// jobs, sessions): what a test reads to prove something wrote nothing.
    pub async fn table_versions(&self) -> Result<[u64; 4], StoreError> {
        Ok([
            self.chunks.version().await?,
            self.feedback.version().await?,
            self.jobs.version().await?,
            self.sessions.version().await?,
        ])
    }
}

/// Now, in microseconds since the Unix epoch: the store's timestamps.
pub(crate) fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// A UTC timestamp column in microseconds, as every table's times are.
pub(crate) fn timestamp_field(name: &str) -> arrow_schema::Field {
    arrow_schema::Field::new(
        name,
        arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )
}

/// Writes one row of `table` keyed on `key`, replacing the row with the
/// same key if there is one: one commit.
async fn upsert_row(table: &Table, key: &str, row: RecordBatch) -> Result<(), StoreError> {
    upsert_row_on(table, &[key], row).await
}

/// [`upsert_row`] with a key of several columns: the row replaced is the
/// one equal in all of them.
async fn upsert_row_on(table: &Table, key: &[&str], row: RecordBatch) -> Result<(), StoreError> {
    let schema = row.schema();
    let reader = RecordBatchIterator::new(vec![Ok(row)], schema);
    let mut merge = table.merge_insert(key);
    merge
        .when_matched_update_all(None)
        .when_not_matched_insert_all();
    merge.execute(Box::new(reader)).await?;
    Ok(())
}

/// Every row of `table` as it stands now (what other processes wrote
/// included), with `columns`: how the small tables (sources, tokens, the
/// audit log) are read whole.
async fn all_rows(table: &Table, columns: &[&str]) -> Result<Vec<RecordBatch>, StoreError> {
    table.checkout_latest().await?;
    Ok(table
        .query()
        .select(Select::columns(columns))
        .execute()
        .await?
        .try_collect()
        .await?)
}

/// The first row of `table` matching the SQL `filter`, with `columns`, as
/// a batch of one row (`None` if no row matches).
async fn first_row(
    table: &Table,
    filter: String,
    columns: &[&str],
) -> Result<Option<RecordBatch>, StoreError> {
    let batches: Vec<RecordBatch> = table
        .query()
        .only_if(filter)
        .select(Select::columns(columns))
        .limit(1)
        .execute()
        .await?
        .try_collect()
        .await?;
    Ok(batches
        .into_iter()
        .find(|b| b.num_rows() > 0)
        .map(|b| b.slice(0, 1)))
}

/// A column of `batch` that must hold strings.
pub(crate) fn string_column<'a>(
    batch: &'a RecordBatch,
    name: &str,
) -> Result<&'a StringArray, StoreError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| StoreError::Shape(format!("{name} is not a string column")))
}
