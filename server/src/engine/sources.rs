//! Sources: a site, a Git repository or a package fetched into a library
//! version as a job,
//! listed with how their last fetch went, and refreshed on request or on
//! a schedule.

use std::sync::Arc;
use std::time::Duration;

use index_core::access::{Caller, Role};
use index_core::catalog::{Deleted, Target};
use index_core::job::{JobState, JobStatus};
use index_core::source::{RefreshSummary, SourceAccepted, SourceInfo, SourceList, SourceRequest};
use index_core::validate;

use super::source_request::Prepared;
use super::{Engine, EngineError};
use crate::ingest::pipeline::finish_indexing;
use crate::ingest::JobHandle;
use crate::source::job::{self, Work};
use crate::source::{Origin, Source};
use crate::store::runs::run_of;

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
            Ok(()) if request.track.is_some() => self.track_releases(request, None).await,
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
            return self.track_releases(tracking, Some(&source.version)).await;
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

    /// Every stored source the caller may read, with its last fetch and
    /// any job running now.
    pub async fn sources(&self, caller: &Caller) -> Result<SourceList, EngineError> {
        let stored = self.store.sources().await?;
        let mut sources = Vec::new();
        for source in stored
            .iter()
            .filter_map(Source::from_stored)
            .filter(|s| Self::may_read(caller, &s.library))
        {
            sources.push(self.source_info(source).await);
        }
        Ok(SourceList { sources })
    }

    /// One stored source.
    pub async fn source(&self, caller: &Caller, id: &str) -> Result<SourceInfo, EngineError> {
        Ok(self
            .source_info(self.visible_source(caller, id).await?)
            .await)
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
        let mut prepared = prepared;
        prepared.source.state.job = Some(job.id());
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

    /// A source as listed: its last fetch, and the job fetching it now.
    async fn source_info(&self, mut source: Source) -> SourceInfo {
        // A source stored before user parts were refused is shown without
        // its password.
        if let Some(shown) = crate::source::userinfo::stripped(&source.request.url) {
            source.request.url = shown;
        }
        let kind = Origin::parse(&source.request.url)
            .map(|o| o.kind())
            .unwrap_or("site");
        let (last_refresh, running_job) = self.latest_fetch(&source).await;
        SourceInfo {
            source_id: source.id,
            kind: kind.to_owned(),
            library: source.library,
            version: source.version,
            last_refresh,
            running_job,
            request: source.request,
        }
    }

    /// How the source's latest job stands: the one running here, else the
    /// one its state names if that is not the last refresh (a job whose
    /// process was killed never wrote its end into the source: it is
    /// found in the store, running in another process or ended
    /// `interrupted`), else the last refresh.
    async fn latest_fetch(&self, source: &Source) -> (Option<RefreshSummary>, Option<String>) {
        let last = source.state.last_refresh.clone();
        if let Some(here) = self
            .jobs
            .writing_into(&source.library, Some(&source.version))
            .first()
        {
            return (last, Some(here.id()));
        }
        let Some(started) = &source.state.job else {
            return (last, None);
        };
        if last.as_ref().is_some_and(|l| &l.job_id == started) {
            return (last, None);
        }
        match self.find_job(started).await {
            Ok(Some(found)) => {
                let status = found.status();
                if !status.state.is_finished() {
                    return (last, Some(status.id));
                }
                let at = match &found {
                    super::jobs::JobWatch::Stored(stored) => {
                        u64::try_from(stored.updated_at_micros / 1_000_000).unwrap_or_default()
                    }
                    super::jobs::JobWatch::Local(_) => crate::source::tally::now_secs(),
                };
                let summary =
                    crate::source::tally::summary_of_stored(&status, at, source.state.pages.len());
                (Some(summary), None)
            }
            // Never written: its process died at once, or is starting it
            // (a lock says which on a local store; on an object store a
            // job seen nowhere has no heartbeat, and is taken for dead
            // until its first status is written, moments after it starts).
            Ok(None) => {
                let alive = run_of(started).is_some_and(|run| self.store.runs().alive(run, 0));
                if alive {
                    return (last, Some(started.clone()));
                }
                let summary =
                    crate::source::tally::summary_of_vanished(started, source.state.pages.len());
                (Some(summary), None)
            }
            Err(err) => {
                tracing::warn!(%err, job = started, "cannot read a source's latest job");
                (last, None)
            }
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
        // Listed at once, with the request it was given and the job that
        // fetches it (shown, should this process die before it ends).
        let mut prepared = prepared;
        prepared.source.state.job = Some(job.id());
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
        let tree = self.source_settings.tree;
        let ran = tokio::select! {
            ran = async {
                let _turn = self.fetch_turn(job).await;
                job::run(&pipeline, job, &self.fetcher, tree, work, &source.state).await
            } => ran,
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

    /// Waits for a turn to fetch (`--source-fetches` run at once), held
    /// until the permit is dropped. A job that must wait says so in its
    /// notes, with how many run, so that a job that has not started yet
    /// does not look stuck.
    async fn fetch_turn(&self, job: &JobHandle) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let turns = self.source_fetches.clone();
        if let Ok(turn) = turns.clone().try_acquire_owned() {
            return Some(turn);
        }
        job.note(&format!(
            "waiting for its turn: {} source fetches run at once (--source-fetches), and this one starts when one of them ends",
            self.source_settings.fetches
        ));
        let waited = std::time::Instant::now();
        // Closed never: the engine owns the semaphore. Should it be, the
        // fetch runs rather than waits forever.
        let turn = turns.acquire_owned().await.ok();
        job.note(&format!(
            "its turn came after {} s of waiting",
            waited.elapsed().as_secs()
        ));
        turn
    }

    async fn keep_source(&self, source: &Source) {
        if let Err(err) = self.store.save_source(&source.to_stored()).await {
            tracing::warn!(%err, source = source.id, "cannot store the source's state; its next refresh reads every page again");
        }
    }
}
