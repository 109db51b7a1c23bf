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

use arrow_array::{RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use index_core::job::JobStatus;
use lancedb::table::OptimizeAction;

use super::{filter::sql_string, first_row, now_micros, timestamp_field, upsert_row};
use super::{Store, StoreError};

/// The table job statuses live in.
pub(super) const JOBS: &str = "jobs";

/// How often a running job's status is written: often enough that another
/// replica's answer is at most this stale, seldom enough that a long upload
/// adds one small commit per interval, not one per file.
pub const RECORD_EVERY: Duration = Duration::from_secs(2);

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
        let Some(row) = first_row(&self.jobs, filter, &["watch_token", "status"]).await? else {
            return Ok(None);
        };
        let token = super::string_column(&row, "watch_token")?
            .value(0)
            .to_owned();
        let json = super::string_column(&row, "status")?.value(0);
        let status: JobStatus =
            serde_json::from_str(json).map_err(|e| StoreError::Shape(e.to_string()))?;
        Ok(Some(StoredJob {
            status,
            watch_token: token,
        }))
    }

    /// Folds the job table's small commits together (a job ends with this).
    pub async fn compact_jobs(&self) -> Result<(), StoreError> {
        self.jobs.optimize(OptimizeAction::All).await?;
        Ok(())
    }
}
