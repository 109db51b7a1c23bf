//! Backups of a whole store, taken while servers use it, and restores into
//! an empty one (local or on an object store, either way).
//!
//! A backup is a folder: one Arrow IPC stream per table, each read at one
//! table version (LanceDB reads a table as of one version, so a table is
//! never half-written in a backup), and `backup.json` naming the format,
//! the embedding model and each table's rows and SHA-256. What jobs have
//! staged but not published is left out: versions are published whole
//! (see [`super::staging`]), so a backup taken during an upload holds the
//! library as it was before the upload, and a restore never shows half a
//! version. The tables are read one after another, not at one instant: a
//! token made while a backup runs may be in it or not, as it would be had
//! the backup started a moment earlier or later.
//!
//! A restore checks every file against `backup.json` before it writes
//! anything, refuses a store that holds anything already, and then appends
//! each table's rows and builds the search indexes. Should a write fail
//! midway (a full disk, an object store gone), every table is set back to
//! its version before the restore, so it can be run again.

use std::io::Write;
use std::path::{Path, PathBuf};

use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use futures::TryStreamExt;
use lancedb::query::ExecutableQuery;
use lancedb::Table;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Store, StoreError};

/// Rows appended to a table per commit while restoring.
const RESTORE_PART_ROWS: usize = 50_000;

/// What `backup.json` says a backup is.
pub const FORMAT: &str = "docshelf-backup/1";
const MANIFEST: &str = "backup.json";

/// `backup.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The embedding model the chunks' vectors come from.
    pub model: String,
    /// When the backup was taken (microseconds since the epoch).
    pub taken_at_micros: i64,
    pub tables: Vec<TableFile>,
}

/// One table's file in a backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFile {
    pub table: String,
    pub file: String,
    pub rows: u64,
    /// Hex SHA-256 of the file.
    pub sha256: String,
}

/// Why a backup or restore could not be done.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not empty: a backup is written into a new or empty folder")]
    NotEmptyFolder(PathBuf),
    #[error("{0} is not a docshelf backup (no readable backup.json): {1}")]
    NotABackup(PathBuf, String),
    #[error("the backup is of the format {found:?}; this docshelf reads {FORMAT:?}")]
    OtherFormat { found: String },
    #[error("the backup's vectors come from the model {found}; this server embeds with {ours}")]
    OtherModel { found: String, ours: String },
    #[error(
        "the backup is damaged: {file} does not match backup.json ({why}); nothing was restored"
    )]
    Damaged { file: String, why: String },
    #[error("the target store is not empty ({0}); a backup is restored into a new, empty store")]
    NotEmptyStore(String),
    #[error("{table}: the backup's columns are not this docshelf's; restore it with the docshelf that took it, then upgrade")]
    Columns { table: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BackupError + '_ {
    move |source| BackupError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// The tables a backup holds, by name: everything but what jobs have
    /// staged and not published.
    fn backed_up_tables(&self) -> Vec<(&'static str, &Table)> {
        vec![
            (super::CHUNKS, &self.chunks),
            (super::sources::SOURCES, &self.sources),
            (super::tokens::TOKENS, &self.tokens),
            (super::audit::AUDIT, &self.audit),
            (super::feedback::FEEDBACK, &self.feedback),
            (super::job_log::JOBS, &self.jobs),
            (super::session_log::SESSIONS, &self.sessions),
            (super::searched::SEARCHED, &self.searched),
        ]
    }

    /// Writes a backup of the whole store into `dest` (a new or empty
    /// folder), each table as of its latest version.
    #[tracing::instrument(skip(self))]
    pub async fn backup(&self, dest: &Path, model: &str) -> Result<Manifest, BackupError> {
        std::fs::create_dir_all(dest).map_err(io(dest))?;
        if std::fs::read_dir(dest).map_err(io(dest))?.next().is_some() {
            return Err(BackupError::NotEmptyFolder(dest.to_owned()));
        }
        let mut tables = Vec::new();
        for (name, table) in self.backed_up_tables() {
            table.checkout_latest().await.map_err(StoreError::from)?;
            let file = format!("{name}.arrows");
            let path = dest.join(&file);
            let out = std::fs::File::create(&path).map_err(io(&path))?;
            let mut hashing = Hashing {
                inner: std::io::BufWriter::new(out),
                hash: Sha256::new(),
            };
            let schema = table.schema().await.map_err(StoreError::from)?;
            let mut rows = 0u64;
            {
                let mut writer = StreamWriter::try_new(&mut hashing, &schema)
                    .map_err(|e| StoreError::Shape(e.to_string()))?;
                let mut stream = table.query().execute().await.map_err(StoreError::from)?;
                while let Some(batch) = stream.try_next().await.map_err(StoreError::from)? {
                    let batch: RecordBatch = batch;
                    rows += batch.num_rows() as u64;
                    writer
                        .write(&batch)
                        .map_err(|e| StoreError::Shape(e.to_string()))?;
                }
                writer
                    .finish()
                    .map_err(|e| StoreError::Shape(e.to_string()))?;
            }
            hashing.flush().map_err(io(&path))?;
            tracing::info!(table = name, rows, "backed up");
            tables.push(TableFile {
                table: name.to_owned(),
                file,
                rows,
                sha256: hex(&hashing.hash.finalize()),
            });
        }
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            model: model.to_owned(),
            taken_at_micros: super::now_micros(),
            tables,
        };
        let path = dest.join(MANIFEST);
        let json =
            serde_json::to_vec_pretty(&manifest).map_err(|e| StoreError::Shape(e.to_string()))?;
        // Written last: a folder without it is a backup that did not finish.
        std::fs::write(&path, json).map_err(io(&path))?;
        Ok(manifest)
    }

    /// Restores the backup in `src` into this store, which must be empty.
    #[tracing::instrument(skip(self))]
    pub async fn restore(&self, src: &Path, model: &str) -> Result<Manifest, BackupError> {
        let path = src.join(MANIFEST);
        let manifest: Manifest = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .map_err(|why| BackupError::NotABackup(src.to_owned(), why))?;
        if manifest.format != FORMAT {
            return Err(BackupError::OtherFormat {
                found: manifest.format,
            });
        }
        if manifest.model != model {
            return Err(BackupError::OtherModel {
                found: manifest.model,
                ours: model.to_owned(),
            });
        }
        // Every file checked before anything is written.
        for file in &manifest.tables {
            let path = src.join(&file.file);
            let mut reader = std::fs::File::open(&path).map_err(io(&path))?;
            let mut hashing = Hashing {
                inner: std::io::sink(),
                hash: Sha256::new(),
            };
            std::io::copy(&mut reader, &mut hashing).map_err(io(&path))?;
            let found = hex(&hashing.hash.finalize());
            if found != file.sha256 {
                return Err(BackupError::Damaged {
                    file: file.file.clone(),
                    why: format!("SHA-256 {found}, expected {}", file.sha256),
                });
            }
        }
        let tables = self.backed_up_tables();
        let mut before = Vec::new();
        for (name, table) in &tables {
            table.checkout_latest().await.map_err(StoreError::from)?;
            let rows = table.count_rows(None).await.map_err(StoreError::from)?;
            if rows > 0 {
                return Err(BackupError::NotEmptyStore(format!(
                    "{name} holds {rows} rows"
                )));
            }
            before.push(table.version().await.map_err(StoreError::from)?);
        }
        if let Err(err) = self.restore_tables(src, &manifest, &tables).await {
            // Every table back to what it was (empty), so that the restore
            // can be run again once its cause is fixed.
            for ((name, table), version) in tables.iter().zip(before) {
                let undone = async {
                    table.checkout(version).await?;
                    table.restore().await?;
                    table.checkout_latest().await
                };
                if let Err(undo) = undone.await {
                    tracing::error!(table = name, %undo, "cannot undo a failed restore: the store holds part of the backup; restore into a new store");
                }
            }
            return Err(err);
        }
        self.refresh_indexes().await?;
        Ok(manifest)
    }

    /// Appends every table's rows from `src` (checked already).
    async fn restore_tables(
        &self,
        src: &Path,
        manifest: &Manifest,
        tables: &[(&'static str, &Table)],
    ) -> Result<(), BackupError> {
        for file in &manifest.tables {
            let Some((_, table)) = tables.iter().find(|(name, _)| *name == file.table) else {
                tracing::warn!(
                    table = file.table,
                    "a table this docshelf does not have: left out"
                );
                continue;
            };
            let path = src.join(&file.file);
            let reader = std::fs::File::open(&path).map_err(io(&path))?;
            let reader =
                StreamReader::try_new(std::io::BufReader::new(reader), None).map_err(|e| {
                    BackupError::Damaged {
                        file: file.file.clone(),
                        why: e.to_string(),
                    }
                })?;
            let schema = table.schema().await.map_err(StoreError::from)?;
            if reader.schema().fields() != schema.fields() {
                return Err(BackupError::Columns {
                    table: file.table.clone(),
                });
            }
            // Appended a part at a time, so that a large table is never
            // held whole in memory.
            let mut rows = 0u64;
            let mut part: Vec<RecordBatch> = Vec::new();
            let mut reader = reader;
            loop {
                let next = reader
                    .next()
                    .transpose()
                    .map_err(|e| BackupError::Damaged {
                        file: file.file.clone(),
                        why: e.to_string(),
                    })?;
                let done = next.is_none();
                if let Some(batch) = next {
                    rows += batch.num_rows() as u64;
                    part.push(batch);
                }
                let part_rows: usize = part.iter().map(RecordBatch::num_rows).sum();
                if part_rows >= RESTORE_PART_ROWS || (done && part_rows > 0) {
                    let _writer = self.write.acquire().await.map_err(StoreError::from)?;
                    let batches = std::mem::take(&mut part);
                    let add: Box<dyn arrow_array::RecordBatchReader + Send> = Box::new(
                        RecordBatchIterator::new(batches.into_iter().map(Ok), schema.clone()),
                    );
                    table.add(add).execute().await.map_err(StoreError::from)?;
                }
                if done {
                    break;
                }
            }
            if rows != file.rows {
                return Err(BackupError::Damaged {
                    file: file.file.clone(),
                    why: format!("{rows} rows, expected {}", file.rows),
                });
            }
            tracing::info!(table = file.table, rows, "restored");
        }
        Ok(())
    }
}
