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
//! - [`schema`]: the table's columns and how chunks become Arrow batches.
//! - [`filter`]: scopes (library, version, path prefix) as SQL predicates.
//! - [`retrieve`]: the dense and keyword retrievers.
//! - [`vector_index`]: the vector index's partitions, probes and rebuilds.
//! - [`resident`]: the table copied into memory, which searches answer
//!   from while it is current.
//! - [`catalog`]: libraries, versions and documents; deletes.
//! - [`feedback`]: votes on chunks, in a table of their own.
//! - [`job_log`]: upload jobs' statuses, so any process can report a job.
//! - [`session_log`]: sessions' sticky libraries, so any process can follow one.
//! - [`legacy`]: reading a store written by an older docshelf, to upgrade it.
//! - [`remote`]: stores on S3-compatible object storage.
//! - [`writers`], [`lease`]: one writer at a time, across processes and
//!   replicas.

pub mod catalog;
pub mod feedback;
pub mod filter;
pub mod job_log;
pub mod lease;
pub mod legacy;
pub mod remote;
pub mod resident;
pub mod retrieve;
pub mod schema;
pub mod session_log;
pub mod vector_index;
pub mod writers;

use std::time::Duration;

use arrow_array::{Array, RecordBatch, RecordBatchIterator, StringArray, UInt32Array};
use futures::TryStreamExt;
use lancedb::index::scalar::{BTreeIndexBuilder, BitmapIndexBuilder, FtsIndexBuilder};
use lancedb::index::Index;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::OptimizeAction;
use lancedb::{Connection, Table};
use tokio::sync::RwLock;

use crate::config::S3Config;

pub use catalog::Target;
pub use retrieve::Retrieved;
pub use schema::{ChunkRow, DocumentChunks, StoredChunk};
pub use vector_index::{VectorSearchTuning, VECTOR_INDEX_MIN_ROWS};

/// The table every chunk lives in. Its name carries the schema's version:
/// v2 added the `context` column (the title and headings each chunk is
/// embedded and indexed with). A store that still holds the v1 table is
/// upgraded when the engine opens it (see [`legacy`] and `crate::upgrade`).
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
    #[error(transparent)]
    Location(#[from] remote::RemoteError),
    #[error(transparent)]
    Lock(#[from] writers::LockError),
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
    /// One writer at a time, across processes too (see [`writers`]).
    write: writers::WriteLock,
    catalog: RwLock<Option<catalog::Catalog>>,
    /// Set once the full-text index is known to exist.
    fts_ready: std::sync::atomic::AtomicBool,
    tuning: VectorSearchTuning,
    /// The vector index's partition count (see [`vector_index`]).
    vector_partitions: vector_index::KnownPartitions,
    /// Rows from which [`Self::refresh_indexes`] builds a vector index.
    vector_index_min_rows: usize,
    /// For a store on an object store: asks it whether it answers.
    probe: Option<remote::Probe>,
    /// The chunk table in memory (off unless [`Self::with_resident_rows`]).
    resident: resident::Resident,
}

/// What replacing a document changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaceStats {
    pub inserted: u64,
    pub deleted: u64,
}

impl Store {
    /// Opens the store at `location` (a directory or an object-store URI),
    /// creating the chunk table on first use. Reads see this process's
    /// writes at once and other processes' never (see
    /// [`Self::open_watching`]).
    pub async fn open(location: &str) -> Result<Self, StoreError> {
        Self::connect(location, &S3Config::default(), None).await
    }

    /// Opens the store like [`Self::open`], and has every read that comes
    /// more than `interval` after the last check look for newer table
    /// versions: what other processes write (another server on the same
    /// store, `docshelf ingest`) becomes visible within `interval`.
    ///
    /// On a local store the check costs nothing measurable: idle search p50
    /// was 59–67 ms with checks every 3600 s, 64–65 ms every 2 s and 58–61 ms
    /// on every read (`bench-load.py --idle-only`, two runs each). On an
    /// object store each check is a listing, so keep it at seconds there.
    ///
    /// `s3` says how to reach the object store of an `s3://` location
    /// (see [`remote`]); a local store ignores it.
    pub async fn open_watching(
        location: &str,
        s3: &S3Config,
        interval: Duration,
    ) -> Result<Self, StoreError> {
        Self::connect(location, s3, Some(interval)).await
    }

    #[tracing::instrument(skip_all, fields(%location))]
    async fn connect(
        location: &str,
        s3: &S3Config,
        interval: Option<Duration>,
    ) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            location: location.to_owned(),
            source,
        };
        let remote = remote::open(location, s3)?;
        let mut connect = lancedb::connect(location);
        if let Some(interval) = interval {
            connect = connect.read_consistency_interval(interval);
        }
        let (write, probe) = match (remote, crate::config::local_dir(location)) {
            (Some(remote), _) => {
                remote.probe.check(location).await?;
                connect = connect.session(remote.session);
                (writers::WriteLock::leased(remote.lease), Some(remote.probe))
            }
            (None, Some(dir)) => (writers::WriteLock::open(&dir), None),
            (None, None) => (writers::WriteLock::process_only(), None),
        };
        let db: Connection = connect.execute().await.map_err(open_err)?;
        let mut names = db.table_names().execute().await.map_err(open_err)?;
        // Creating the tables is a write like any other: several servers
        // started at once on a new store raced to create them, and all but
        // one failed to start with a commit conflict (seen with three
        // replicas on one bucket). So creators take turns, and look again
        // once it is their turn.
        let missing = |names: &[String]| {
            [
                CHUNKS,
                feedback::FEEDBACK,
                job_log::JOBS,
                session_log::SESSIONS,
            ]
            .iter()
            .any(|table| !names.iter().any(|n| n == table))
        };
        let creating = if missing(&names) {
            let turn = write.acquire().await?;
            names = db.table_names().execute().await.map_err(open_err)?;
            Some(turn)
        } else {
            None
        };
        let open_or_create = |name: &'static str, schema: arrow_schema::SchemaRef| {
            let (db, exists) = (&db, names.iter().any(|n| n == name));
            async move {
                if exists {
                    db.open_table(name).execute().await
                } else {
                    db.create_empty_table(name, schema).execute().await
                }
            }
        };
        let chunks = open_or_create(CHUNKS, schema::chunk_schema())
            .await
            .map_err(open_err)?;
        let feedback = open_or_create(feedback::FEEDBACK, feedback::feedback_schema())
            .await
            .map_err(open_err)?;
        let jobs = open_or_create(job_log::JOBS, job_log::jobs_schema())
            .await
            .map_err(open_err)?;
        let sessions = open_or_create(session_log::SESSIONS, session_log::sessions_schema())
            .await
            .map_err(open_err)?;
        let legacy = match names.iter().any(|n| n == legacy::CHUNKS_V1) {
            true => Some(
                db.open_table(legacy::CHUNKS_V1)
                    .execute()
                    .await
                    .map_err(open_err)?,
            ),
            false => None,
        };
        drop(creating);
        add_search_text(&chunks, &write)
            .await
            .map_err(|e| match e {
                StoreError::Lance(source) => open_err(source),
                other => other,
            })?;
        Ok(Self {
            location: location.to_owned(),
            db,
            chunks,
            legacy,
            feedback,
            jobs,
            sessions,
            write,
            catalog: RwLock::new(None),
            fts_ready: std::sync::atomic::AtomicBool::new(false),
            tuning: VectorSearchTuning::default(),
            vector_partitions: Default::default(),
            vector_index_min_rows: VECTOR_INDEX_MIN_ROWS,
            probe,
            resident: resident::Resident::new(0),
        })
    }

    /// Whether the store's object store is down or stalled right now:
    /// `false` for a local store, and for an object store that answers.
    /// Asked after a request failed or ran out of time, to tell the client
    /// the truth about why (see `EngineError::StoreUnavailable`).
    pub async fn object_store_down(&self) -> bool {
        match &self.probe {
            Some(probe) => !probe.answers().await,
            None => false,
        }
    }

    /// Waits for the store's write turn (see [`writers`]) and moves the
    /// chunk table to the latest version, so what is written next builds
    /// on what the last writer, in any process, left.
    async fn begin_write(&self) -> Result<writers::WriteGuard<'_>, StoreError> {
        let guard = self.write.acquire().await?;
        self.chunks.checkout_latest().await?;
        Ok(guard)
    }

    /// Builds the vector index from `rows` rows instead of the default
    /// [`VECTOR_INDEX_MIN_ROWS`] (tests and benches use small tables).
    pub fn with_vector_index_min_rows(mut self, rows: usize) -> Self {
        self.vector_index_min_rows = rows;
        self
    }

    /// Keeps a copy of the chunk table in memory for the search legs while
    /// it holds at most `rows` rows (0: never; see [`resident`]). The first
    /// copy is read in the background once the table is quiet.
    pub fn with_resident_rows(mut self, rows: usize) -> Self {
        self.resident = resident::Resident::new(rows);
        self
    }

    /// Reads the in-memory copy now (see [`Self::with_resident_rows`]);
    /// whether one matching the current version is held after.
    pub async fn reload_resident(&self) -> Result<bool, StoreError> {
        self.resident.reload(&self.chunks).await
    }

    /// Whether searches answer from memory right now, and if not, starts
    /// a copy in the background (when one is configured).
    pub async fn resident_ready(&self) -> Result<bool, StoreError> {
        Ok(self.resident.current(&self.chunks).await?.is_some())
    }

    /// Bytes the in-memory copy holds (whatever its version), if any.
    pub fn resident_bytes(&self) -> Option<usize> {
        self.resident.held().map(|c| c.bytes())
    }

    /// Keyword answers read from disk because a commit landed while the
    /// in-memory copy was answering (see [`resident::Resident::missed`]).
    pub fn resident_misses(&self) -> u64 {
        self.resident.missed()
    }

    /// Searches the vector index with these settings.
    pub fn with_tuning(mut self, tuning: VectorSearchTuning) -> Self {
        self.tuning = tuning;
        self
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

    /// Stores `doc`, replacing whatever the store held for the same library,
    /// version and file path, in one commit.
    #[tracing::instrument(skip_all, fields(library = %doc.library, version = %doc.version, file = %doc.file_path, chunks = doc.chunks.len()))]
    pub async fn replace_document(&self, doc: &DocumentChunks) -> Result<ReplaceStats, StoreError> {
        if doc.chunks.is_empty() {
            return Err(StoreError::EmptyDocument);
        }
        let batch = schema::to_batch(doc).map_err(|e| StoreError::Shape(e.to_string()))?;
        let schema = batch.schema();
        let reader = RecordBatchIterator::new(vec![Ok(batch)], schema);

        let _writer = self.begin_write().await?;
        let mut merge = self.chunks.merge_insert(&["chunk_id"]);
        // Same id means same library, version, path, position and text: an
        // identical chunk is left alone, so re-uploading a file stores nothing.
        merge
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(Some(filter::document(
                &doc.library,
                &doc.version,
                &doc.file_path,
            )));
        let result = merge.execute(Box::new(reader)).await?;
        Ok(ReplaceStats {
            inserted: result.num_inserted_rows,
            deleted: result.num_deleted_rows,
        })
    }

    /// Appends documents the store does not hold yet, all in one commit.
    ///
    /// A bulk load without [`Self::replace_document`]'s per-document merge
    /// (which reads the table to find the rows a document replaces): the
    /// caller guarantees the documents are new. The search bench loads its
    /// 100k and 1M chunk corpora this way, a few commits instead of one per
    /// document. Call [`Self::refresh_indexes`] after.
    #[tracing::instrument(skip_all, fields(documents = docs.len()))]
    pub async fn append_documents(&self, docs: &[DocumentChunks]) -> Result<u64, StoreError> {
        let mut batches = Vec::with_capacity(docs.len());
        for doc in docs {
            if doc.chunks.is_empty() {
                return Err(StoreError::EmptyDocument);
            }
            batches.push(schema::to_batch(doc).map_err(|e| StoreError::Shape(e.to_string()))?);
        }
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let reader: Box<dyn arrow_array::RecordBatchReader + Send> = Box::new(
            RecordBatchIterator::new(batches.into_iter().map(Ok), schema::chunk_schema()),
        );
        let _writer = self.begin_write().await?;
        self.chunks.add(reader).execute().await?;
        Ok(rows as u64)
    }

    /// Compacts the table, builds any missing index and folds new rows into
    /// the existing ones, so full-text search covers everything stored so
    /// far and reads stay fast.
    ///
    /// LanceDB's full-text index does not see rows added after it was built
    /// until the table is optimised; ingestion calls this before it reports
    /// a job done. Every stored document is one commit and so one small
    /// fragment: without compaction a search would open hundreds of files.
    #[tracing::instrument(skip_all)]
    pub async fn refresh_indexes(&self) -> Result<(), StoreError> {
        let _writer = self.begin_write().await?;
        let rows = self.chunks.count_rows(None).await?;
        if rows == 0 {
            return Ok(());
        }
        let compaction = self
            .chunks
            .optimize(OptimizeAction::Compact {
                options: Default::default(),
                remap_options: None,
            })
            .await?
            .compaction;
        if let Some(c) = compaction {
            tracing::info!(
                removed = c.fragments_removed,
                added = c.fragments_added,
                "compacted the chunk table"
            );
        }
        let indices = self.chunks.list_indices().await?;
        // Library and version have few distinct values: bitmaps answer their
        // equality filters fastest. File paths are nearly unique: a B-tree.
        // The keyword leg searches one full-text field, context and text
        // together (see `schema::search_text`).
        let wanted: [(&str, Index); 4] = [
            ("library", Index::Bitmap(BitmapIndexBuilder::default())),
            ("version", Index::Bitmap(BitmapIndexBuilder::default())),
            ("file_path", Index::BTree(BTreeIndexBuilder::default())),
            (schema::SEARCH_TEXT, Index::FTS(FtsIndexBuilder::default())),
        ];
        for (column, index) in wanted {
            if !indices.iter().any(|i| i.columns == [column]) {
                tracing::info!(column, "building index");
                self.chunks.create_index(&[column], index).execute().await?;
            }
        }
        // An older store searched `text` and `context` as two fields, each
        // with an index of its own: nothing reads those now, and every
        // refresh would keep folding rows into them.
        for index in &indices {
            if index.columns == ["text"] || index.columns == ["context"] {
                tracing::info!(name = %index.name, "dropping a full-text index no search uses");
                self.chunks.drop_index(&index.name).await?;
            }
        }
        self.maintain_vector_index(rows as u64, self.vector_index_min_rows)
            .await?;
        // Folds rows added since into every index (new indexes are already
        // whole; this is then cheap) and drops versions older than a week.
        self.chunks.optimize(OptimizeAction::All).await?;
        Ok(())
    }

    /// Rows that the full-text index does not cover yet: all of them
    /// while it does not exist (a store written before the keyword leg's
    /// one field, until its first refresh). Ingestion folds new rows in
    /// before a job ends, but a process killed mid-job (or a refresh that
    /// failed, say on a full disk) leaves stored rows the keyword leg
    /// cannot see.
    pub async fn unindexed_text_rows(&self) -> Result<usize, StoreError> {
        let index = self
            .chunks
            .list_indices()
            .await?
            .into_iter()
            .find(|i| i.columns == [schema::SEARCH_TEXT]);
        match index {
            Some(index) => Ok(self
                .chunks
                .index_stats(&index.name)
                .await?
                .map_or(0, |stats| stats.num_unindexed_rows)),
            None => Ok(self.chunks.count_rows(None).await?),
        }
    }

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

/// Gives a chunk table written before the keyword leg's one field existed
/// that column, filled from each row's context and text, in one commit (a
/// new data file per fragment; the rows are not rewritten). Its index is
/// built by the next [`Store::refresh_indexes`], which the engine runs on
/// open when [`Store::unindexed_text_rows`] finds the index missing (until
/// then the keyword leg finds nothing). Writers take turns, so two servers
/// opening the same old store add it once.
async fn add_search_text(chunks: &Table, write: &writers::WriteLock) -> Result<(), StoreError> {
    let has = |schema: arrow_schema::SchemaRef| {
        schema
            .fields()
            .iter()
            .any(|f| f.name() == schema::SEARCH_TEXT)
    };
    if has(chunks.schema().await?) {
        return Ok(());
    }
    let _turn = write.acquire().await?;
    chunks.checkout_latest().await?;
    if has(chunks.schema().await?) {
        return Ok(());
    }
    tracing::info!("adding the full-text field to a store written before it existed");
    chunks
        .add_columns()
        .transform(lancedb::table::NewColumnTransform::SqlExpressions(vec![(
            schema::SEARCH_TEXT.to_owned(),
            schema::SEARCH_TEXT_SQL.to_owned(),
        )]))
        .execute()
        .await?;
    Ok(())
}

/// The chunks of `table` matching the SQL `filter`, read with `columns`,
/// in chunk order.
async fn chunks_where(
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
    let schema = row.schema();
    let reader = RecordBatchIterator::new(vec![Ok(row)], schema);
    let mut merge = table.merge_insert(&[key]);
    merge
        .when_matched_update_all(None)
        .when_not_matched_insert_all();
    merge.execute(Box::new(reader)).await?;
    Ok(())
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
