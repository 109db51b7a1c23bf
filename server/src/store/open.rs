//! Opening a store: the tables, created on first use and upgraded in
//! place, on a local disk or an object store; and the write turn every
//! writer waits for.

use std::time::Duration;

use lancedb::Connection;
use tokio::sync::RwLock;

use super::indexes::{add_input_hash, add_search_text};
use super::{
    audit, feedback, job_log, legacy, local_dir, remote, resident, runs, schema, searched,
    session_log, sources, staging, tokens, writers, S3Config, Store, StoreError,
    VectorSearchTuning, CHUNKS, VECTOR_INDEX_MIN_ROWS,
};

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
    /// On a local store the check costs nothing measurable, even on every
    /// read (docs/benchmarks.md, "Read consistency"). On an object store
    /// each check is a listing, so keep it at seconds there.
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
        let (write, probe, runs) = match (remote, local_dir(location)) {
            (Some(remote), _) => {
                remote.probe.check(location).await?;
                connect = connect.session(remote.session);
                (
                    writers::WriteLock::leased(remote.lease),
                    Some(remote.probe),
                    runs::Runs::heartbeat_only(),
                )
            }
            (None, Some(dir)) => (
                writers::WriteLock::open(&dir),
                None,
                runs::Runs::local(&dir),
            ),
            (None, None) => (
                writers::WriteLock::process_only(),
                None,
                runs::Runs::heartbeat_only(),
            ),
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
                sources::SOURCES,
                staging::STAGED,
                tokens::TOKENS,
                audit::AUDIT,
                searched::SEARCHED,
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
        let staged = open_or_create(staging::STAGED, staging::staged_schema())
            .await
            .map_err(open_err)?;
        let sources = open_or_create(sources::SOURCES, sources::sources_schema())
            .await
            .map_err(open_err)?;
        let tokens = open_or_create(tokens::TOKENS, tokens::tokens_schema())
            .await
            .map_err(open_err)?;
        let audit = open_or_create(audit::AUDIT, audit::audit_schema())
            .await
            .map_err(open_err)?;
        let searched = open_or_create(searched::SEARCHED, searched::searched_schema())
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
        let upgrade_err = |e| match e {
            StoreError::Lance(source) => open_err(source),
            other => other,
        };
        add_search_text(&chunks, &write)
            .await
            .map_err(upgrade_err)?;
        add_input_hash(&chunks, &write).await.map_err(upgrade_err)?;
        add_input_hash(&staged, &write).await.map_err(upgrade_err)?;
        session_log::add_owner(&sessions, &write)
            .await
            .map_err(upgrade_err)?;
        Ok(Self {
            location: location.to_owned(),
            db,
            chunks,
            legacy,
            feedback,
            jobs,
            sessions,
            staged,
            sources,
            tokens,
            audit,
            searched,
            audit_appends: Default::default(),
            runs,
            write,
            catalog: RwLock::new(None),
            catalog_scan: tokio::sync::Mutex::new(super::catalog::Fragments::default()),
            catalog_counts: std::sync::Mutex::new(super::catalog::ScanCounts::default()),
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
    pub(super) async fn begin_write(&self) -> Result<writers::WriteGuard<'_>, StoreError> {
        let guard = self.write.acquire().await?;
        self.chunks.checkout_latest().await?;
        Ok(guard)
    }
}
