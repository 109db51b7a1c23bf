//! Upload jobs: started in the background for the server's faces, or run
//! where they are called for the CLI and evaluation.

use std::sync::Arc;

use index_core::access::{Caller, Role};
use index_core::job::{JobState, JobStatus, Upload, UploadAccepted};
use index_core::validate;

use super::{Engine, EngineError};
use crate::ingest::pipeline::Pipeline;
use crate::ingest::{run_job, JobHandle};
use crate::store::job_log;

impl Engine {
    /// Starts an upload job in the background and returns it at once: its
    /// id and watch token, to follow it with [`Self::watch_job`].
    ///
    /// The caller needs the write role on the library; the upload is
    /// written to the audit log whatever its outcome.
    pub async fn start_upload(
        self: &Arc<Self>,
        caller: &Caller,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<UploadAccepted, EngineError> {
        let target = format!("{library}/{version}");
        let result = match self.require(caller, Role::Write, library) {
            Ok(()) => self.upload_permitted(library, version, uploads).await,
            Err(err) => Err(err),
        };
        self.audited(caller, "upload", &target, result).await
    }

    /// [`Self::start_upload`], its permission checked.
    async fn upload_permitted(
        self: &Arc<Self>,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<UploadAccepted, EngineError> {
        let (library, version) = (validate::library(library)?, validate::version(version)?);
        let uploads = validate::upload_names(uploads)?;
        if uploads.is_empty() {
            return Err(EngineError::NoFiles);
        }
        self.embedder().await?;
        // The uploads are in memory until each is extracted: admitted only
        // if the extraction budget holds them now, else 503 busy at once.
        let bytes = uploads.iter().map(|u| u.bytes.len() as u64).sum();
        // A file whose extraction would need more than the budget can give
        // beside the upload itself is refused now (413), not after a wait
        // that could never end in anything but a refusal.
        for upload in &uploads {
            let needed = ingest_core::extract::declared_need(
                &upload.name,
                &upload.bytes,
                &self.archive_limits,
            );
            self.memory
                .fits_beside(needed, bytes)
                .map_err(|reason| EngineError::FileTooLarge {
                    file: upload.name.clone(),
                    reason,
                })?;
        }
        let admitted = self.memory.try_reserve(bytes)?;
        let job = self.create_job(&library, &version)?;
        let (engine, handle) = (self.clone(), job.clone());
        self.background.spawn(async move {
            tokio::join!(engine.run_upload(&handle, uploads), engine.record(&handle));
            // The upload's memory goes back as the job ends, not after the
            // staging check (which retries for minutes on a full disk).
            drop(admitted);
            engine.leave_nothing_staged(&handle).await;
        });
        Ok(job.accepted())
    }

    /// Registers a job writing `library` `version`; refused while another
    /// job of this server writes it.
    pub(super) fn create_job(
        &self,
        library: &str,
        version: &str,
    ) -> Result<std::sync::Arc<JobHandle>, EngineError> {
        self.jobs
            .create(library, version)
            .map_err(|busy| EngineError::VersionBusy {
                library: library.to_owned(),
                version: version.to_owned(),
                job: busy.running,
            })
    }

    /// Writes `job`'s status to the store as it changes (at most every
    /// [`job_log::RECORD_EVERY`]), and at least every
    /// [`job_log::HEARTBEAT`], until it ends, so that other processes on
    /// the store can report it and tell it is alive (see [`job_log`]). A
    /// failed write costs only staleness elsewhere: it is logged and the
    /// job goes on.
    pub(super) async fn record(&self, job: &JobHandle) {
        let mut changes = job.subscribe();
        loop {
            let status = changes.borrow_and_update().clone();
            let state = status.state;
            let done = state.is_finished();
            if let Err(err) = self.store.save_job(&status, job.watch_token()).await {
                tracing::warn!(job = %status.id, %err, "cannot write the job's status to the store");
            }
            if done {
                if let Err(err) = self.store.compact_jobs().await {
                    tracing::warn!(%err, "cannot compact the job table");
                }
                return;
            }
            // Progress is written at most every RECORD_EVERY, a new state
            // at once (a process that dies right after publishing must
            // leave that on record), and the status at least every
            // HEARTBEAT.
            let now = tokio::time::Instant::now();
            let (next_write, heartbeat) = (now + job_log::RECORD_EVERY, now + job_log::HEARTBEAT);
            match tokio::time::timeout_at(heartbeat, changes.changed()).await {
                Err(_) => {}
                Ok(Err(_)) => return,
                Ok(Ok(())) if changes.borrow().state != state => {}
                Ok(Ok(())) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(next_write) => {}
                        moved = changes.wait_for(|s| s.state != state) => {
                            if moved.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Runs an upload job here, to its end, and says how it ended: the CLI
    /// and evaluation wait on this (the server uses [`Self::start_upload`]).
    /// The job is not listed among the server's jobs.
    pub async fn ingest(
        &self,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
    ) -> Result<JobStatus, EngineError> {
        self.ingest_watched(library, version, uploads, |_| {}).await
    }

    /// As [`Self::ingest`]; `watch` is handed the job's status, which
    /// changes as each file moves on, before any work starts. Its sender
    /// is dropped when the job ends.
    pub async fn ingest_watched(
        &self,
        library: &str,
        version: &str,
        uploads: Vec<Upload>,
        watch: impl FnOnce(tokio::sync::watch::Receiver<JobStatus>),
    ) -> Result<JobStatus, EngineError> {
        let (library, version) = (validate::library(library)?, validate::version(version)?);
        let uploads = validate::upload_names(uploads)?;
        let job = JobHandle::detached(self.store.runs().id(), &library, &version);
        watch(job.subscribe());
        self.run_upload(&job, uploads).await;
        Ok(job.status())
    }

    /// Runs `job` to the end, or until it is cancelled (its version is
    /// being deleted): then whatever it staged is dropped and it ends
    /// `cancelled`, having published nothing.
    async fn run_upload(&self, job: &JobHandle, uploads: Vec<Upload>) {
        tokio::select! {
            () = self.run_to_end(job, uploads) => {}
            () = job.cancelled() => self.end_cancelled(job).await,
        }
    }

    /// Ends a job cancelled because its version is being deleted: what it
    /// staged is dropped, and it ends `cancelled`, having published nothing.
    pub(super) async fn end_cancelled(&self, job: &JobHandle) {
        if let Err(err) = self.store.discard_staged(&job.id()).await {
            tracing::warn!(%err, job = job.id(), "cannot drop a cancelled job's staged rows (the next start does)");
        }
        job.stop(
            JobState::Cancelled,
            "the version was deleted while the job ran; nothing was published",
            "not stored: the job was cancelled",
        );
    }

    async fn run_to_end(&self, job: &JobHandle, uploads: Vec<Upload>) {
        let pipeline = match self.pipeline().await {
            Ok(p) => p,
            Err(err) => {
                job.set_state(JobState::Done, Some(err.to_string()));
                return;
            }
        };
        run_job(&pipeline, job, uploads).await;
    }

    /// What a job needs of the engine, the model loaded.
    pub(super) async fn pipeline(&self) -> Result<Pipeline<'_>, EngineError> {
        Ok(Pipeline {
            store: &self.store,
            embedder: self.embedder().await?,
            metrics: &self.metrics,
            chunking: self.chunking,
            archive_limits: self.archive_limits,
            job_limits: self.job_limits,
            extractions: &self.extractions,
            memory: &self.memory,
            ocr: &self.ocr,
        })
    }
}
