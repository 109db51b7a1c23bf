//! A job's status and its events, whichever process runs it.
//!
//! A job runs in the process that took its upload, which holds its live
//! status. Behind a load balancer, or after a restart, another process is
//! asked about it: that one reads the status the running process writes to
//! the store (see [`crate::store::job_log`]), and follows it by reading it
//! again every [`job_log::RECORD_EVERY`]. The faces see one thing, a
//! [`JobWatch`], and never choose between the two.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use index_core::job::{JobState, JobStatus};
use subtle::ConstantTimeEq;

use super::{Engine, EngineError};
use crate::ingest::JobHandle;
use crate::store::job_log::{self, StoredJob};

/// A job found to follow: its live handle here, or its row in the store.
pub enum JobWatch {
    /// This process runs it: every change is seen as it happens.
    Local(Arc<JobHandle>),
    /// Another process runs (or ran) it: as that process last wrote it.
    Stored(StoredJob),
}

impl JobWatch {
    /// Whether `token` is the job's watch token (compared in constant time):
    /// it grants following this one job without the access token.
    pub fn admits(&self, token: &str) -> bool {
        match self {
            Self::Local(job) => job.admits(token),
            Self::Stored(stored) => token.as_bytes().ct_eq(stored.watch_token.as_bytes()).into(),
        }
    }

    /// The job's status now.
    pub fn status(&self) -> JobStatus {
        match self {
            Self::Local(job) => job.status(),
            Self::Stored(stored) => stored.status.clone(),
        }
    }
}

impl Engine {
    /// The job `id`, here or in the store; `None` if no process on this
    /// store ever wrote it.
    pub async fn find_job(&self, id: &str) -> Result<Option<JobWatch>, EngineError> {
        if let Some(job) = self.jobs.get(id) {
            return Ok(Some(JobWatch::Local(job)));
        }
        Ok(self.store.stored_job(id).await?.map(JobWatch::Stored))
    }

    /// The job's latest status, or [`EngineError::UnknownJob`].
    pub async fn job(&self, id: &str) -> Result<JobStatus, EngineError> {
        self.find_job(id)
            .await?
            .map(|watch| watch.status())
            .ok_or_else(|| EngineError::UnknownJob(id.to_owned()))
    }

    /// The job's status now, then after every change, ending with its
    /// `Done` status. A stored job's stream also ends when the store can no
    /// longer be read: a client that reconnects starts over.
    pub fn job_statuses(
        self: &Arc<Self>,
        watch: JobWatch,
    ) -> impl Stream<Item = JobStatus> + Send + 'static {
        match watch {
            JobWatch::Local(job) => local_statuses(job.subscribe()).boxed(),
            JobWatch::Stored(stored) => stored_statuses(self.clone(), stored.status).boxed(),
        }
    }
}

/// Every change of a job this process runs, until it is done.
fn local_statuses(
    rx: tokio::sync::watch::Receiver<JobStatus>,
) -> impl Stream<Item = JobStatus> + Send {
    futures::stream::unfold(Some((rx, true)), |phase| async move {
        let (mut rx, first) = phase?;
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let status = rx.borrow_and_update().clone();
        let next = (status.state != JobState::Done).then_some((rx, false));
        Some((status, next))
    })
}

/// Another process's job: the stored state, then each new one read from the
/// store (looked at every [`job_log::RECORD_EVERY`]), until it is done.
fn stored_statuses(engine: Arc<Engine>, first: JobStatus) -> impl Stream<Item = JobStatus> + Send {
    futures::stream::unfold(Some((first, true)), move |phase| {
        let engine = engine.clone();
        async move {
            let (mut status, fresh) = phase?;
            if !fresh {
                loop {
                    tokio::time::sleep(job_log::RECORD_EVERY).await;
                    let next = engine.store.stored_job(&status.id).await.ok()??;
                    if next.status != status {
                        status = next.status;
                        break;
                    }
                }
            }
            let done = status.state == JobState::Done;
            let next = (!done).then(|| (status.clone(), false));
            Some((status, next))
        }
    })
}
