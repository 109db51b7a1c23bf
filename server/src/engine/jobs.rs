//! A job's status and its events, whichever process runs it.
//!
//! A job runs in the process that took its upload, which holds its live
//! status. Behind a load balancer, or after a restart, another process is
//! asked about it: that one reads the status the running process writes to
//! the store (see [`crate::store::job_log`]), and follows it by reading it
//! again every [`job_log::RECORD_EVERY`]. The faces see one thing, a
//! [`JobWatch`], and never choose between the two.
//!
//! A job whose process died (killed, crashed) never writes its end. It is
//! found dead (see [`crate::store::runs`]) when the store is opened, and
//! whenever someone asks after it; it is then written `interrupted`, with
//! the reason, so its status and its event stream end.

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use index_core::access::Caller;
use index_core::job::{FileState, JobState, JobStatus};
use subtle::ConstantTimeEq;

use super::{Engine, EngineError};
use crate::ingest::JobHandle;
use crate::store::job_log::{self, StoredJob};
use crate::store::now_micros;
use crate::store::runs::run_of;

/// How often a finished job's staged rows are dropped again, when
/// dropping them failed.
const STAGING_RETRY: Duration = Duration::from_secs(30);
/// How many times, in all.
const STAGING_TRIES: u32 = 20;

/// A job found to follow: its live handle here, or its row in the store.
pub enum JobWatch {
    /// This process runs it: every change is seen as it happens.
    Local(Arc<JobHandle>),
    /// Another process runs (or ran) it: as that process last wrote it.
    Stored(Box<StoredJob>),
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
    ///
    /// Both places are always looked in, the store even for a job this
    /// process runs: a caller who may not read the job's library is told
    /// "no job" ([`Self::job`]), and that answer must take as long as the
    /// one for an id never used. Answered from memory alone, a hidden job
    /// here came back in half the time of an unknown id (a probe measured
    /// about 10 ms against 23 ms), which told a scoped token that the id
    /// was real. The one store read a status costs is what every lookup
    /// costs now.
    pub async fn find_job(&self, id: &str) -> Result<Option<JobWatch>, EngineError> {
        // Refused before any lookup, and never echoed whole.
        index_core::validate::id("job id", id)?;
        let local = self.jobs.get(id);
        let stored = self.store.stored_job(id).await?;
        Ok(match (local, stored) {
            (Some(job), _) => Some(JobWatch::Local(job)),
            (None, Some(stored)) => {
                Some(JobWatch::Stored(Box::new(self.unless_dead(stored).await)))
            }
            (None, None) => None,
        })
    }

    /// Ends every job left unfinished by a process that is gone, and drops
    /// what dead jobs staged. Run when the engine opens; failures are
    /// logged (the jobs are found again when asked after).
    pub(super) async fn interrupt_dead_jobs(&self) {
        match self.store.unfinished_jobs().await {
            Ok(jobs) => {
                for stored in jobs {
                    self.unless_dead(stored).await;
                }
            }
            Err(err) => tracing::warn!(%err, "cannot read the jobs left running"),
        }
        let staging = match self.store.staging_jobs().await {
            Ok(jobs) => jobs,
            Err(err) => {
                tracing::warn!(%err, "cannot read what jobs have staged");
                return;
            }
        };
        let runs = self.store.runs();
        for job in staging {
            let alive = run_of(&job).is_some_and(|run| runs.alive(run, now_micros()));
            if !alive {
                tracing::info!(job, "dropping what a job that died had staged");
                if let Err(err) = self.store.discard_staged(&job).await {
                    tracing::warn!(%err, job, "cannot drop a dead job's staged rows");
                }
            }
        }
    }

    /// Makes sure a job that ended left nothing staged: a drop that
    /// failed (a full disk) is tried again, every [`STAGING_RETRY`], up to
    /// [`STAGING_TRIES`] times, the staging table's old versions pruned
    /// first to make room. Said once in the log when it fails, once when it
    /// succeeds; past the last try, the next start drops them.
    pub(super) async fn leave_nothing_staged(&self, job: &JobHandle) {
        let id = job.id();
        for attempt in 0..=STAGING_TRIES {
            match self.store.staging_jobs().await {
                Ok(staging) if !staging.contains(&id) => {
                    if attempt > 0 {
                        tracing::info!(job = id, "a finished job's staged rows are dropped");
                    }
                    return;
                }
                Ok(_) => {}
                Err(err) => {
                    // Not knowing is no reason to retry for minutes.
                    tracing::debug!(%err, job = id, "cannot read what jobs have staged");
                    return;
                }
            }
            if attempt == STAGING_TRIES {
                break;
            }
            if attempt > 0 {
                tokio::time::sleep(STAGING_RETRY).await;
                if let Err(err) = self.store.prune_staging().await {
                    tracing::debug!(%err, "cannot prune the staging table");
                }
            }
            if let Err(err) = self.store.discard_staged(&id).await {
                if attempt == 0 {
                    tracing::warn!(
                        %err,
                        job = id,
                        "cannot drop a finished job's staged rows; trying again every {} s",
                        STAGING_RETRY.as_secs()
                    );
                }
            }
        }
        tracing::warn!(
            job = id,
            "a finished job's staged rows are left to the next start"
        );
    }

    /// `stored`, or, if it is unfinished and its process is gone, the same
    /// job ended `interrupted` (and written so).
    async fn unless_dead(&self, stored: StoredJob) -> StoredJob {
        let status = &stored.status;
        if status.state.is_finished() {
            return stored;
        }
        let alive = run_of(&status.id)
            .is_some_and(|run| self.store.runs().alive(run, stored.updated_at_micros));
        if alive {
            return stored;
        }
        let published = match status.state {
            JobState::Running => false,
            JobState::Indexing => true,
            // Died mid-publish: the store says whether the commit landed.
            _ => self
                .store
                .staged_rows_published(&status.id, &status.library, &status.version)
                .await
                .unwrap_or_else(|err| {
                    tracing::warn!(%err, job = status.id, "cannot tell whether a job published: taking it for not");
                    false
                }),
        };
        let status = interrupted(stored.status, published);
        tracing::warn!(
            job = status.id,
            "a job's process died before it ended: marking it interrupted"
        );
        if let Err(err) = self.store.save_job(&status, &stored.watch_token).await {
            tracing::warn!(%err, job = status.id, "cannot write that a job was interrupted");
        }
        if let Err(err) = self.store.discard_staged(&status.id).await {
            tracing::warn!(%err, job = status.id, "cannot drop an interrupted job's staged rows");
        }
        StoredJob { status, ..stored }
    }

    /// The job's latest status, or [`EngineError::UnknownJob`], which a
    /// job into a library the caller may not read is too.
    pub async fn job(&self, caller: &Caller, id: &str) -> Result<JobStatus, EngineError> {
        self.find_job(id)
            .await?
            .map(|watch| watch.status())
            .filter(|status| Self::may_read(caller, &status.library))
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
        let next = (!status.state.is_finished()).then_some((rx, false));
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
                    let next = engine.unless_dead(next).await;
                    if next.status != status {
                        status = next.status;
                        break;
                    }
                }
            }
            let done = status.state.is_finished();
            let next = (!done).then(|| (status.clone(), false));
            Some((status, next))
        }
    })
}

/// `status` ended because its process died, before or after it
/// `published`: it says which, truly.
fn interrupted(mut status: JobStatus, published: bool) -> JobStatus {
    if !published {
        status.stop(
            JobState::Interrupted,
            "the docshelf process running this job stopped before it ended (killed, crashed or \
             restarted); nothing it staged was published: upload again",
            "not stored: the job was interrupted",
        );
        return status;
    }
    // Published: what it staged is in the version (how many of its chunks
    // were new went unrecorded).
    for file in &mut status.files {
        if let FileState::Staged { chunks } = file.state {
            file.state = FileState::Stored {
                chunks,
                new_chunks: 0,
            };
        }
    }
    status.stop(
        JobState::Interrupted,
        "the docshelf process running this job stopped after it published the version: its \
         documents are stored and searchable (keyword search catches up when a server opens the \
         store)",
        "not stored: the job was interrupted",
    );
    status
}

#[cfg(test)]
mod tests {
    use index_core::job::FileProgress;

    use super::*;

    fn status(state: JobState, files: &[FileState]) -> JobStatus {
        JobStatus {
            id: "job-run-1".into(),
            library: "lib".into(),
            version: "1".into(),
            state,
            files: files
                .iter()
                .enumerate()
                .map(|(i, f)| FileProgress {
                    file_path: format!("{i}.md"),
                    state: f.clone(),
                    warnings: Vec::new(),
                })
                .collect(),
            error: None,
            notes: Vec::new(),
            expected: None,
            eta_secs: None,
        }
    }

    #[test]
    fn an_interrupted_job_says_whether_it_published() {
        let staged = FileState::Staged { chunks: 2 };
        let before = interrupted(
            status(JobState::Running, &[staged.clone(), FileState::Queued]),
            false,
        );
        assert_eq!(before.state, JobState::Interrupted);
        assert!(before
            .error
            .as_deref()
            .is_some_and(|e| e.contains("nothing it staged was published")));
        assert_eq!(before.tally(), (0, 2));

        let after = interrupted(
            status(
                JobState::Publishing,
                &[
                    staged,
                    FileState::Failed {
                        reason: "bad".into(),
                    },
                ],
            ),
            true,
        );
        assert_eq!(after.state, JobState::Interrupted);
        assert!(after
            .error
            .as_deref()
            .is_some_and(|e| e.contains("after it published")));
        assert_eq!(after.tally(), (1, 1), "the staged file is in the version");
    }
}
