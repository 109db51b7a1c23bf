//! Sources: a site, a Git repository or a package fetched into a library
//! version as a job,
//! listed with how their last fetch went, and refreshed on request or on
//! a schedule.

use std::sync::Arc;
use std::time::Duration;

use index_core::access::{Caller, Role};
use index_core::catalog::{Deleted, Target};
use index_core::job::{JobState, JobStatus};
use index_core::source::{
    CredentialList, RefreshSummary, SourceAccepted, SourceInfo, SourceList, SourceRequest,
};
use index_core::validate;

use super::source_request::Prepared;
use super::{Engine, EngineError};
use crate::ingest::pipeline::finish_indexing;
use crate::ingest::JobHandle;
use crate::source::job::{self, Work};
use crate::source::{Origin, Source};

impl Engine {
    /// Adds a source (or fetches an existing one again, with this
    /// request's settings) and starts its job in the background.
    ///
    /// The caller needs the write role on the library; the request is
    /// written to the audit log whatever its outcome.
    pub async fn add_source(
        self: &Arc<Self>,
        caller: &Caller,
        request: SourceRequest,
    ) -> Result<SourceAccepted, EngineError> {
        let target = format!(
            "{}/{}",
            request.library,
            request.version.as_deref().unwrap_or("")
        );
        let result = match self.require(caller, Role::Write, &request.library) {
            Ok(()) if request.track.is_some() => self.track_releases(request).await,
            Ok(()) => match self.prepare(request).await {
                Ok(prepared) => self.start_source_job(prepared).await,
                Err(err) => Err(err),
            },
            Err(err) => Err(err),
        };
        self.audited(caller, "add_source", &target, result).await
    }

    /// Fetches a stored source again: what changed is embedded, what is
    /// gone is removed, in one publish.
    pub async fn refresh_source(
        self: &Arc<Self>,
        caller: &Caller,
        id: &str,
    ) -> Result<SourceAccepted, EngineError> {
        let source = self.visible_source(caller, id).await?;
        let target = format!("{}/{}", source.library, source.version);
        let result = match self.require(caller, Role::Write, &source.library) {
            Ok(()) => self.refresh_permitted(source).await,
            Err(err) => Err(err),
        };
        self.audited(caller, "refresh_source", &target, result)
            .await
    }

    /// [`Self::refresh_source`], its permission checked.
    async fn refresh_permitted(
        self: &Arc<Self>,
        source: Source,
    ) -> Result<SourceAccepted, EngineError> {
        if source.request.track.is_some() {
            // Each tracked version's request names its own tag or
            // release; the tracking request they came from names none.
            let tracking = SourceRequest {
                git_ref: None,
                version: None,
                url: super::tracking::tracking_url(&source.request.url),
                ..source.request
            };
            return self.track_releases(tracking).await;
        }
        let prepared = self.prepare(source.request).await?;
        self.start_source_job(prepared).await
    }

    /// Deletes a source and the version it fills, whether or not it holds
    /// documents (a source whose fetch failed holds none); a job running
    /// into it is cancelled first.
    pub async fn delete_source(&self, caller: &Caller, id: &str) -> Result<Deleted, EngineError> {
        let source = self.visible_source(caller, id).await?;
        let target = Target::Version(&source.library, &source.version);
        let result = match self.require(caller, Role::Write, &source.library) {
            Ok(()) => self.delete_permitted(caller, target).await,
            Err(err) => Err(err),
        };
        self.audited(caller, "delete_source", &target.to_string(), result)
            .await
    }

    /// The credentials the operator declared: names, where each is sent
    /// and for which libraries, never a secret or where it is kept. For
    /// admins, who tell writers which name a private source takes.
    pub fn credentials(&self, caller: &Caller) -> Result<CredentialList, EngineError> {
        self.require_admin(caller, "list the server's credentials")?;
        Ok(CredentialList {
            credentials: self.credentials.list(),
        })
    }

    /// Every stored source the caller may read, with its last fetch and
    /// any job running now.
    pub async fn sources(&self, caller: &Caller) -> Result<SourceList, EngineError> {
        let stored = self.store.sources().await?;
        let sources = stored
            .iter()
            .filter_map(Source::from_stored)
            .filter(|s| Self::may_read(caller, &s.library))
            .map(|s| self.source_info(s))
            .collect();
        Ok(SourceList { sources })
    }

    /// One stored source.
    pub async fn source(&self, caller: &Caller, id: &str) -> Result<SourceInfo, EngineError> {
        Ok(self.source_info(self.visible_source(caller, id).await?))
    }

    /// A stored source of a library the caller may read; any other is
    /// unknown, as one never stored is.
    async fn visible_source(&self, caller: &Caller, id: &str) -> Result<Source, EngineError> {
        let source = self.stored_source(id).await?;
        if !Self::may_read(caller, &source.library) {
            return Err(EngineError::UnknownSource(
                validate::lookup("source id", id)?.to_owned(),
            ));
        }
        Ok(source)
    }

    /// Fetches a source here, to its end (the CLI): like
    /// [`Self::ingest_watched`], `watch` sees the job as it goes.
    pub async fn ingest_source(
        &self,
        request: SourceRequest,
        mut watch: impl FnMut(tokio::sync::watch::Receiver<JobStatus>),
    ) -> Result<JobStatus, EngineError> {
        self.embedder().await?;
        if request.track.is_some() {
            return self.track_here(request, watch).await;
        }
        self.ingest_prepared(request, &mut watch).await
    }

    /// [`Self::ingest_source`] for one version.
    pub(super) async fn ingest_prepared(
        &self,
        request: SourceRequest,
        watch: &mut impl FnMut(tokio::sync::watch::Receiver<JobStatus>),
    ) -> Result<JobStatus, EngineError> {
        let prepared = self.prepare(request).await?;
        let job = JobHandle::detached(
            self.store.runs().id(),
            &prepared.source.library,
            &prepared.source.version,
        );
        watch(job.subscribe());
        self.store.save_source(&prepared.source.to_stored()).await?;
        self.run_source(&job, prepared).await;
        Ok(job.status())
    }

    /// Refreshes every source whose last fetch is older than `every`, now
    /// and then for as long as the engine lives (`--refresh-every`). A
    /// source whose version is being written is left for the next round.
    pub fn schedule_refreshes(self: &Arc<Self>, every: Duration) {
        let engine = Arc::downgrade(self);
        tokio::spawn(async move {
            let tick = every.min(Duration::from_secs(60));
            loop {
                tokio::time::sleep(tick).await;
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                engine.refresh_due(every).await;
            }
        });
    }

    async fn refresh_due(self: &Arc<Self>, every: Duration) {
        let stored = match self.store.sources().await {
            Ok(s) => s,
            Err(err) => return tracing::warn!(%err, "cannot list sources to refresh"),
        };
        let now = crate::source::tally::now_secs();
        // The versions of one tracking request are refreshed as one: the
        // first due re-evaluates the releases for all of them.
        let mut tracking_done = std::collections::HashSet::new();
        for source in stored.iter().filter_map(Source::from_stored) {
            let id = source.id.clone();
            let due = now.saturating_sub(source.state.refreshed_at) >= every.as_secs();
            if !due
                || !self
                    .jobs
                    .writing_into(&source.library, Some(&source.version))
                    .is_empty()
            {
                continue;
            }
            if let Some(track) = &source.request.track {
                let group = (
                    source.library.clone(),
                    super::tracking::tracking_url(&source.request.url),
                    track.clone(),
                );
                if !tracking_done.insert(group) {
                    continue;
                }
            }
            match self.refresh_permitted(source).await {
                Ok(job) => {
                    tracing::info!(source = id, job = job.job_id, "scheduled refresh started")
                }
                Err(err) => {
                    tracing::warn!(source = id, %err, "a scheduled refresh could not start")
                }
            }
        }
    }

    pub(super) async fn stored_source(&self, id: &str) -> Result<Source, EngineError> {
        let id = validate::lookup("source id", id)?.to_owned();
        self.store
            .source(&id)
            .await?
            .as_ref()
            .and_then(Source::from_stored)
            .ok_or(EngineError::UnknownSource(id))
    }

    fn source_info(&self, source: Source) -> SourceInfo {
        let running_job = self
            .jobs
            .writing_into(&source.library, Some(&source.version))
            .first()
            .map(|j| j.id());
        let kind = Origin::parse(&source.request.url)
            .map(|o| o.kind())
            .unwrap_or("site");
        SourceInfo {
            source_id: source.id,
            kind: kind.to_owned(),
            library: source.library,
            version: source.version,
            last_refresh: source.state.last_refresh,
            running_job,
            request: source.request,
        }
    }

    pub(super) async fn start_source_job(
        self: &Arc<Self>,
        prepared: Prepared,
    ) -> Result<SourceAccepted, EngineError> {
        self.embedder().await?;
        let Source {
            id,
            library,
            version,
            ..
        } = prepared.source.clone();
        let job =
            self.jobs
                .create(&library, &version)
                .map_err(|busy| EngineError::VersionBusy {
                    library: library.clone(),
                    version: version.clone(),
                    job: busy.running,
                })?;
        // Listed at once, with the request it was given.
        if let Err(err) = self.store.save_source(&prepared.source.to_stored()).await {
            job.set_state(
                JobState::Failed,
                Some("the source could not be stored".into()),
            );
            return Err(err.into());
        }
        let (engine, handle) = (self.clone(), job.clone());
        self.background.spawn(async move {
            tokio::join!(engine.run_source(&handle, prepared), engine.record(&handle));
            engine.leave_nothing_staged(&handle).await;
        });
        let accepted = job.accepted();
        Ok(SourceAccepted {
            source_id: id,
            job_id: accepted.job_id,
            watch_token: accepted.watch_token,
            library,
            version,
            also: Vec::new(),
            dropped: Vec::new(),
        })
    }

    /// Runs a source's job to its end, or until it is cancelled (its
    /// version deleted), and keeps how it went with the source.
    async fn run_source(&self, job: &JobHandle, prepared: Prepared) {
        let Prepared { mut source, work } = prepared;
        let work = match work {
            Work::Site(mut plan) => {
                plan.deadline = tokio::time::Instant::now() + self.source_settings.max_time;
                Work::Site(plan)
            }
            Work::Git(mut plan) => {
                plan.deadline = tokio::time::Instant::now() + self.source_settings.max_time;
                Work::Git(plan)
            }
            Work::Package(release, mut route) => {
                route.deadline = tokio::time::Instant::now() + self.source_settings.max_time;
                Work::Package(release, route)
            }
        };
        let pipeline = match self.pipeline().await {
            Ok(p) => p,
            Err(err) => {
                job.stop(JobState::Failed, &err.to_string(), "not stored");
                return;
            }
        };
        let ran = tokio::select! {
            ran = job::run(&pipeline, job, &self.fetcher, work, &source.state) => ran,
            () = job.cancelled() => return self.end_cancelled(job).await,
        };
        match ran {
            Ok(state) => {
                source.state = state;
                self.keep_source(&source).await;
                finish_indexing(&pipeline, job).await;
            }
            // Deleted meanwhile by another process: nothing to keep.
            Err(_) if job.status().state == JobState::Cancelled => {}
            Err(summary) => {
                source.state.last_refresh = Some(RefreshSummary {
                    state: job.status().state,
                    ..summary
                });
                self.keep_source(&source).await;
            }
        }
    }

    async fn keep_source(&self, source: &Source) {
        if let Err(err) = self.store.save_source(&source.to_stored()).await {
            tracing::warn!(%err, source = source.id, "cannot store the source's state; its next refresh reads every page again");
        }
    }
}
