//! Upload jobs' statuses, kept in a table of their own so that any process
//! on the store can report a job.
//!
//! A job runs in the process that took its upload. Behind a load balancer
//! the next request about it (`GET /api/jobs/{id}`) often reaches another
//! replica, which has never seen the job; and a restarted process has
//! forgotten its jobs. So the running process writes the job's status here
//! as it goes (at most every [`RECORD_EVERY`], and once more at the end),
//! and a process asked about a job it does not hold reads it from here.
//! One row per job, replaced in place: only the job's own process writes
//! it, so its writes never meet another's.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use index_core::job::{JobState, JobStatus};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::OptimizeAction;

use super::{filter::sql_string, first_row, now_micros, timestamp_field, upsert_row};
use super::{Store, StoreError};

/// The table job statuses live in.
pub(super) const JOBS: &str = "jobs";

/// How often a running job's status is written: often enough that another
/// replica's answer is at most this stale, seldom enough that a long upload
/// adds one small commit per interval, not one per file.
pub const RECORD_EVERY: Duration = Duration::from_secs(2);

/// How often a running job's status is written even when nothing changed:
/// on an object store this heartbeat is how other processes tell a live
/// job from one whose process died (see [`super::runs::STALE_AFTER`]).
pub const HEARTBEAT: Duration = Duration::from_secs(10);

pub(super) fn jobs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("job_id", DataType::Utf8, false),
        // Grants following the job's events without the access token.
        Field::new("watch_token", DataType::Utf8, false),
        // The status as the REST API returns it (JSON).
        Field::new("status", DataType::Utf8, false),
        timestamp_field("updated_at"),
    ]))
}

/// A job's status as its process last wrote it.
#[derive(Debug, Clone)]
pub struct StoredJob {
    pub status: JobStatus,
    pub watch_token: String,
    /// When its process last wrote it, in microseconds since the epoch.
    pub updated_at_micros: i64,
}

impl Store {
    /// Writes (or replaces) a job's status: one commit.
    #[tracing::instrument(skip_all, fields(job = %status.id))]
    pub async fn save_job(&self, status: &JobStatus, watch_token: &str) -> Result<(), StoreError> {
        let json = serde_json::to_string(status).map_err(|e| StoreError::Shape(e.to_string()))?;
        let batch = RecordBatch::try_new(
            jobs_schema(),
            vec![
                Arc::new(StringArray::from(vec![status.id.as_str()])),
                Arc::new(StringArray::from(vec![watch_token])),
                Arc::new(StringArray::from(vec![json])),
                Arc::new(TimestampMicrosecondArray::from(vec![now_micros()]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        upsert_row(&self.jobs, "job_id", batch).await
    }

    /// A job's last written status, if any process on this store wrote one.
    pub async fn stored_job(&self, id: &str) -> Result<Option<StoredJob>, StoreError> {
        let filter = format!("job_id = {}", sql_string(id));
        let Some(row) = first_row(&self.jobs, filter, &COLUMNS).await? else {
            return Ok(None);
        };
        Ok(stored_jobs(&row)?.pop())
    }

    /// Every job whose last written state is not an end (running or
    /// indexing), whichever process wrote it.
    pub async fn unfinished_jobs(&self) -> Result<Vec<StoredJob>, StoreError> {
        // The JSON's own spelling of the job's state: file states never
        // take these names, so only the job's matches.
        let filter = [JobState::Running, JobState::Publishing, JobState::Indexing]
            .iter()
            .map(|state| {
                let tag = serde_json::to_string(state).unwrap_or_default();
                format!("status LIKE {}", sql_string(&format!("%\"state\":{tag}%")))
            })
            .collect::<Vec<_>>()
            .join(" OR ");
        let batches: Vec<RecordBatch> = self
            .jobs
            .query()
            .only_if(filter)
            .select(Select::columns(&COLUMNS))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut jobs = Vec::new();
        for batch in &batches {
            jobs.extend(
                stored_jobs(batch)?
                    .into_iter()
                    .filter(|j| !j.status.state.is_finished()),
            );
        }
        Ok(jobs)
    }

    /// Folds the job table's small commits together (a job ends with this).
    pub async fn compact_jobs(&self) -> Result<(), StoreError> {
        self.jobs.optimize(OptimizeAction::All).await?;
        Ok(())
    }
}

const COLUMNS: [&str; 3] = ["watch_token", "status", "updated_at"];

/// The jobs in `batch` (with [`COLUMNS`]).
fn stored_jobs(batch: &RecordBatch) -> Result<Vec<StoredJob>, StoreError> {
    let tokens = super::string_column(batch, "watch_token")?;
    let statuses = super::string_column(batch, "status")?;
    let updated = batch
        .column_by_name("updated_at")
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
        .ok_or_else(|| StoreError::Shape("updated_at is not a timestamp".into()))?;
    (0..batch.num_rows())
        .map(|row| {
            let status: JobStatus = serde_json::from_str(statuses.value(row))
                .map_err(|e| StoreError::Shape(e.to_string()))?;
            Ok(StoredJob {
                status,
                watch_token: tokens.value(row).to_owned(),
                updated_at_micros: updated.value(row),
            })
        })
        .collect()
}
