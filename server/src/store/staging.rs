//! Staged documents: what a job has embedded but not yet published.
//!
//! Why: a job that stored each document in its own commit as it went
//! would leave a version searchable half-written, let `latest` point at
//! it, bring a version deleted mid-upload back with the documents stored
//! after the delete, and interleave two uploads into one version. So a job
//! appends each embedded document to a table of its own, [`STAGED`], which
//! no search, listing or count reads, and at its end
//! [`Store::publish`] moves all of it into the chunk table in **one
//! commit**: readers see the version as it was, or with the whole job.
//!
//! A job that fails, is cancelled or dies publishes nothing; its staged
//! rows are dropped by the job, or, if its process died, by the next
//! process to open the store (see [`super::runs`]). Deleting a version or
//! library also drops what is staged for it, so a job still running
//! elsewhere finds its rows gone when it comes to publish, and publishes
//! nothing ([`StoreError::Withdrawn`]).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::OptimizeAction;

use super::filter::sql_string;
use super::{schema, string_column, DocumentChunks, Store, StoreError, Target};

/// The staging table: the chunk table's columns, and the job's id.
pub(super) const STAGED: &str = "staged_v2";

const JOB_ID: &str = "job_id";

/// The chunk table's columns and the job's id, except that
/// [`schema::INPUT_HASH`] comes after the job's id: a staging table written
/// before that column existed gets it appended (see `Store::open`), and a
/// new one is made in the same order.
pub(super) fn staged_schema() -> SchemaRef {
    let chunks = schema::chunk_schema();
    let mut fields: Vec<Field> = chunks
        .fields()
        .iter()
        .filter(|f| f.name() != schema::INPUT_HASH)
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new(JOB_ID, DataType::Utf8, false));
    fields.extend(
        chunks
            .fields()
            .iter()
            .filter(|f| f.name() == schema::INPUT_HASH)
            .map(|f| f.as_ref().clone()),
    );
    Arc::new(Schema::new(fields))
}

/// What publishing a job's documents did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Published {
    /// Per document path: its chunks, and how many of them were new (an
    /// unchanged chunk is left as it was).
    pub documents: BTreeMap<String, (usize, u64)>,
    pub inserted: u64,
    pub deleted: u64,
}

impl Store {
    /// Sets `doc` aside for `job`: one append to the staging table, which
    /// nothing that reads the store sees. Appends never conflict, so jobs
    /// stage without waiting for the write lock.
    #[tracing::instrument(skip_all, fields(job, file = %doc.file_path, chunks = doc.chunks.len()))]
    pub async fn stage_document(&self, job: &str, doc: &DocumentChunks) -> Result<(), StoreError> {
        if doc.chunks.is_empty() {
            return Err(StoreError::EmptyDocument);
        }
        let batch = schema::to_batch(doc).map_err(|e| StoreError::Shape(e.to_string()))?;
        self.stage_rows(job, &batch).await
    }

    /// Sets rows of the chunk table's columns aside for `job` (see
    /// [`Self::stage_document`]).
    pub async fn stage_rows(&self, job: &str, batch: &RecordBatch) -> Result<(), StoreError> {
        // Column by column, by name: the two tables order them differently.
        let job_ids: arrow_array::ArrayRef =
            Arc::new(StringArray::from(vec![job; batch.num_rows()]));
        let columns = staged_schema()
            .fields()
            .iter()
            .map(|field| match field.name().as_str() {
                JOB_ID => Ok(job_ids.clone()),
                name => batch.column_by_name(name).cloned().ok_or_else(|| {
                    StoreError::Shape(format!("a chunk batch without the column {name}"))
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let staged = RecordBatch::try_new(staged_schema(), columns)
            .map_err(|e| StoreError::Shape(e.to_string()))?;
        let reader: Box<dyn arrow_array::RecordBatchReader + Send> =
            Box::new(RecordBatchIterator::new(vec![Ok(staged)], staged_schema()));
        self.staged.add(reader).execute().await?;
        Ok(())
    }

    /// Makes `library` `version` exactly `rows` (the chunk table's columns,
    /// an import's) in one commit, staged for `job` first as an upload's
    /// documents are: readers see the version as it was or as it is now.
    pub async fn replace_version(
        &self,
        job: &str,
        library: &str,
        version: &str,
        rows: &[RecordBatch],
    ) -> Result<Published, StoreError> {
        let mut staged = 0;
        for batch in rows.iter().filter(|b| b.num_rows() > 0) {
            if let Err(err) = self.stage_rows(job, batch).await {
                let _ = self.discard_staged(job).await;
                return Err(err);
            }
            staged += batch.num_rows();
        }
        let keep = std::collections::BTreeSet::new();
        let published = self
            .publish(
                job,
                library,
                version,
                staged,
                &Replace::Version { keep: &keep },
            )
            .await;
        self.drop_staged_after_publish(job).await;
        published
    }

    /// Publishes everything `job` staged into `library` `version`, in one
    /// commit of the chunk table: each staged document replaces the stored
    /// document of the same path (chunks that did not change are left
    /// alone), and the rest of the version stays as it was. Then drops the
    /// job's staged rows.
    ///
    /// `staged_rows` is how many rows the job staged: if fewer are found,
    /// the version was deleted meanwhile and nothing is published
    /// ([`StoreError::Withdrawn`]).
    ///
    /// With [`Replace::Version`], documents of the version that were
    /// neither staged nor kept are removed in the same commit (a source's
    /// refresh: pages gone from the site go, and searches never see the
    /// version half refreshed).
    #[tracing::instrument(skip(self, replace))]
    pub async fn publish(
        &self,
        job: &str,
        library: &str,
        version: &str,
        staged_rows: usize,
        replace: &Replace<'_>,
    ) -> Result<Published, StoreError> {
        let _writer = self.begin_write().await?;
        // Another process may have withdrawn the rows (a delete).
        self.staged.checkout_latest().await?;
        let batches = self.staged_rows(job).await?;
        let found: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if found != staged_rows {
            return Err(StoreError::Withdrawn {
                staged: staged_rows,
                found,
            });
        }
        if found == 0 {
            return match replace {
                Replace::Documents => Ok(Published::default()),
                Replace::Version { .. } => {
                    let deleted = self
                        .chunks
                        .delete(&replace.sql(library, version, std::iter::empty()))
                        .await?
                        .num_deleted_rows;
                    Ok(Published {
                        deleted,
                        ..Published::default()
                    })
                }
            };
        }
        let mut documents: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        let mut ids: Vec<(String, String)> = Vec::with_capacity(found);
        for batch in &batches {
            let (paths, chunk_ids) = (
                string_column(batch, "file_path")?,
                string_column(batch, "chunk_id")?,
            );
            for row in 0..batch.num_rows() {
                let path = paths.value(row).to_owned();
                documents.entry(path.clone()).or_default().0 += 1;
                ids.push((path, chunk_ids.value(row).to_owned()));
            }
        }
        let existing = self
            .chunk_ids_where(&documents_sql(library, version, documents.keys()))
            .await?;
        let replaced = replace.sql(library, version, documents.keys());
        for (path, id) in &ids {
            if !existing.contains(id) {
                if let Some(doc) = documents.get_mut(path) {
                    doc.1 += 1;
                }
            }
        }
        let rows: Vec<RecordBatch> = batches
            .iter()
            .map(|b| RecordBatch::try_new(schema::chunk_schema(), b.columns().to_vec()))
            .collect::<Result<_, _>>()
            .map_err(|e| StoreError::Shape(e.to_string()))?;
        let reader = RecordBatchIterator::new(rows.into_iter().map(Ok), schema::chunk_schema());
        let mut merge = self.chunks.merge_insert(&["chunk_id"]);
        // Same id means same library, version, path, position and text.
        merge
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(Some(replaced));
        let result = merge.execute(Box::new(reader)).await?;
        Ok(Published {
            documents,
            inserted: result.num_inserted_rows,
            deleted: result.num_deleted_rows,
        })
    }

    /// Drops a published job's staged rows and compacts the staging table
    /// (each staged document was a small commit of its own). Best effort:
    /// rows left behind cost only space, and the next start drops them.
    pub async fn drop_staged_after_publish(&self, job: &str) {
        if let Err(err) = self.discard_staged(job).await {
            tracing::warn!(%err, job, "cannot drop a published job's staged rows");
        }
        let _writer = self.write.acquire().await;
        if let Err(err) = self.staged.optimize(OptimizeAction::All).await {
            tracing::warn!(%err, "cannot compact the staging table");
        }
    }

    /// Whether what `job` staged for `library` `version` is in the chunk
    /// table: asked of a job whose process died while it was publishing.
    /// Its staged rows are dropped only after the publish, so if none are
    /// left it published; if some are, it published exactly when their
    /// chunks are all in the version.
    pub async fn staged_rows_published(
        &self,
        job: &str,
        library: &str,
        version: &str,
    ) -> Result<bool, StoreError> {
        self.staged.checkout_latest().await?;
        let batches = self.staged_rows(job).await?;
        if batches.is_empty() {
            return Ok(true);
        }
        let mut paths = std::collections::BTreeSet::new();
        let mut ids = HashSet::new();
        for batch in &batches {
            let (p, c) = (
                string_column(batch, "file_path")?,
                string_column(batch, "chunk_id")?,
            );
            for row in 0..batch.num_rows() {
                paths.insert(p.value(row).to_owned());
                ids.insert(c.value(row).to_owned());
            }
        }
        let stored = self
            .chunk_ids_where(&documents_sql(library, version, paths.iter()))
            .await?;
        Ok(ids.is_subset(&stored))
    }

    /// Drops what `job` staged for `path` (a later file of the same job
    /// replaces it).
    pub async fn unstage(&self, job: &str, path: &str) -> Result<(), StoreError> {
        let _writer = self.write.acquire().await?;
        let sql = format!("{} AND file_path = {}", job_sql(job), sql_string(path));
        self.staged.delete(&sql).await?;
        Ok(())
    }

    /// Drops what `job` staged (it failed, was cancelled, or its process
    /// died before it published).
    pub async fn discard_staged(&self, job: &str) -> Result<(), StoreError> {
        let _writer = self.write.acquire().await?;
        self.staged.delete(&job_sql(job)).await?;
        Ok(())
    }

    /// Frees what the staging table's older versions hold on disk (each
    /// staged document was a commit of its own), so that a drop can be
    /// written on a disk that filled up. Versions of the last minute are
    /// kept: a job staging or publishing now may still read them.
    pub async fn prune_staging(&self) -> Result<(), StoreError> {
        let _writer = self.write.acquire().await?;
        self.staged
            .optimize(OptimizeAction::Prune {
                older_than: Some(lancedb::table::optimize::Duration::minutes(1)),
                delete_unverified: None,
                error_if_tagged_old_versions: None,
            })
            .await?;
        Ok(())
    }

    /// The jobs that have rows staged, whatever process runs them.
    pub async fn staging_jobs(&self) -> Result<HashSet<String>, StoreError> {
        strings_where(&self.staged, None, JOB_ID).await
    }

    /// Drops what is staged for a deleted version or library (called by
    /// [`Store::delete`] under the write lock).
    pub(super) async fn withdraw_staged(&self, target: &Target<'_>) -> Result<(), StoreError> {
        // A document deleted while a job re-uploads it: the job's upload
        // is newer, and stands.
        if let Some(sql) = super::catalog::versions_sql(target) {
            self.staged.delete(&sql).await?;
        }
        Ok(())
    }

    /// Rows `job` staged, with the chunk table's columns.
    async fn staged_rows(&self, job: &str) -> Result<Vec<RecordBatch>, StoreError> {
        let columns: Vec<String> = schema::chunk_schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let batches: Vec<RecordBatch> = self
            .staged
            .query()
            .only_if(job_sql(job))
            .select(Select::columns(&columns))
            .execute()
            .await?
            .try_collect()
            .await?;
        Ok(batches.into_iter().filter(|b| b.num_rows() > 0).collect())
    }

    /// The chunk ids of the chunk table's rows matching `sql`.
    async fn chunk_ids_where(&self, sql: &str) -> Result<HashSet<String>, StoreError> {
        strings_where(&self.chunks, Some(sql), "chunk_id").await
    }
}

/// The distinct values of the string `column` over `table`'s rows matching
/// `sql` (every row when `None`).
async fn strings_where(
    table: &lancedb::Table,
    sql: Option<&str>,
    column: &str,
) -> Result<HashSet<String>, StoreError> {
    let mut query = table.query().select(Select::columns(&[column]));
    if let Some(sql) = sql {
        query = query.only_if(sql);
    }
    let batches: Vec<RecordBatch> = query.execute().await?.try_collect().await?;
    let mut values = HashSet::new();
    for batch in &batches {
        let strings = string_column(batch, column)?;
        values.extend((0..batch.num_rows()).map(|row| strings.value(row).to_owned()));
    }
    Ok(values)
}

fn job_sql(job: &str) -> String {
    format!("{JOB_ID} = {}", sql_string(job))
}

/// What a publish replaces in its version besides the staged documents'
/// old rows.
#[derive(Debug, Clone, Copy)]
pub enum Replace<'a> {
    /// Nothing else: every other document stays (an upload adds to its
    /// version).
    Documents,
    /// Every document of the version that is not in `keep` (a source's
    /// refresh: the version becomes what the source holds now, the pages
    /// kept unchanged plus those staged).
    Version {
        keep: &'a std::collections::BTreeSet<String>,
    },
}

impl Replace<'_> {
    /// The rows of the version that go unless a staged row has their id.
    fn sql<'p>(
        &self,
        library: &str,
        version: &str,
        staged: impl Iterator<Item = &'p String>,
    ) -> String {
        match self {
            Self::Documents => documents_sql(library, version, staged),
            Self::Version { keep } if keep.is_empty() => format!(
                "library = {} AND version = {}",
                sql_string(library),
                sql_string(version)
            ),
            Self::Version { keep } => {
                let kept: Vec<String> = keep.iter().map(|p| sql_string(p)).collect();
                format!(
                    "library = {} AND version = {} AND file_path NOT IN ({})",
                    sql_string(library),
                    sql_string(version),
                    kept.join(", ")
                )
            }
        }
    }
}

/// The rows of these documents of `library` `version`.
fn documents_sql<'a>(
    library: &str,
    version: &str,
    paths: impl Iterator<Item = &'a String>,
) -> String {
    let paths: Vec<String> = paths.map(|p| sql_string(p)).collect();
    format!(
        "library = {} AND version = {} AND file_path IN ({})",
        sql_string(library),
        sql_string(version),
        paths.join(", ")
    )
}
