//! Releases as versions: a Git source with `track` keeps the newest
//! `keep` release tags that match its pattern, each in a version named by
//! its tag. Adding it, refreshing it, or its schedule fetches the releases
//! it does not hold yet and drops the tracked versions that fell past
//! `keep`; older versions stay searchable until then.

use std::sync::Arc;

use index_core::catalog::Target;
use index_core::job::{JobState, JobStatus};
use index_core::source::{SourceAccepted, SourceRequest, TrackedRelease, DEFAULT_KEEP, MAX_KEEP};
use index_core::{validate, version};

use super::{Engine, EngineError};
use crate::source::git::{self, GitError};
use crate::source::{Origin, Source, SourceError};

impl Engine {
    /// Fetches what a tracking request does not hold yet, drops what fell
    /// past `keep`, and answers with the newest release's job (the others
    /// in `also`). With nothing new, the newest release is fetched again,
    /// reading only what changed.
    pub(super) async fn track_releases(
        self: &Arc<Self>,
        request: SourceRequest,
    ) -> Result<SourceAccepted, EngineError> {
        let plan = self.plan_tracking(&request).await?;
        let mut started = Vec::new();
        for tag in &plan.missing {
            match self.start_release(&request, tag).await {
                Ok(accepted) => started.push(accepted),
                // Being fetched already (by a schedule, another request).
                Err(EngineError::VersionBusy { .. }) => {}
                Err(err) if started.is_empty() => return Err(err),
                Err(err) => tracing::warn!(%err, tag, "a tracked release could not start"),
            }
        }
        let dropped = self.drop_past_keep(&plan).await;
        let mut answer = match started.is_empty() {
            true => self.start_release(&request, &plan.releases[0]).await?,
            false => started.remove(0),
        };
        answer.also = started
            .into_iter()
            .map(|a| TrackedRelease {
                source_id: a.source_id,
                job_id: a.job_id,
                watch_token: a.watch_token,
                version: a.version,
            })
            .collect();
        answer.dropped = dropped;
        Ok(answer)
    }

    /// The CLI's tracking: each release not held yet fetched here, one
    /// after another, then what fell past `keep` dropped. Returns the
    /// last job's status (the newest release's when nothing was new).
    pub(super) async fn track_here(
        &self,
        request: SourceRequest,
        mut watch: impl FnMut(tokio::sync::watch::Receiver<JobStatus>),
    ) -> Result<JobStatus, EngineError> {
        let plan = self.plan_tracking(&request).await?;
        let fetch: Vec<String> = match plan.missing.is_empty() {
            true => vec![plan.releases[0].clone()],
            false => plan.missing.clone(),
        };
        let mut last = None;
        for tag in fetch {
            let asked = SourceRequest {
                git_ref: Some(tag),
                version: None,
                ..request.clone()
            };
            last = Some(self.ingest_prepared(asked, &mut watch).await?);
        }
        self.drop_past_keep(&plan).await;
        last.ok_or_else(|| EngineError::Source(SourceError::Track("nothing to fetch".into())))
    }

    /// Which releases a tracking request keeps, which of them it does not
    /// hold yet, and what it held before.
    async fn plan_tracking(&self, request: &SourceRequest) -> Result<TrackingPlan, EngineError> {
        let library = validate::library(&request.library)?;
        let pattern = request.track.as_deref().unwrap_or_default().trim();
        let pattern = glob::Pattern::new(pattern)
            .map_err(|e| SourceError::Track(format!("{pattern:?} is not a pattern: {e}")))?;
        if request.git_ref.is_some() || request.version.is_some() {
            let why =
                "it picks the refs and names the versions itself; give neither ref nor version";
            return Err(SourceError::Track(why.into()).into());
        }
        let keep = request.keep.unwrap_or(DEFAULT_KEEP).clamp(1, MAX_KEEP);
        let Origin::Git(url) = Origin::parse(&request.url)? else {
            return Err(SourceError::NotGit(validate::cut(&request.url, 200)).into());
        };
        let remote = self.git_remote(&url, request).await?;
        let refs = git::refs::list(&remote).await.map_err(SourceError::from)?;
        let releases: Vec<String> = refs
            .releases(&pattern)
            .into_iter()
            .take(keep)
            .map(str::to_owned)
            .collect();
        if releases.is_empty() {
            return Err(SourceError::from(GitError::NoReleases {
                url: url.to_string(),
                pattern: pattern.as_str().to_owned(),
                tags: refs
                    .newest_tags()
                    .into_iter()
                    .take(5)
                    .map(str::to_owned)
                    .collect(),
            })
            .into());
        }
        let tracked = self.tracked_by(&library, request).await?;
        let missing = releases
            .iter()
            .filter(|tag| {
                !tracked.iter().any(|s| {
                    &&s.version == tag
                        && s.state
                            .last_refresh
                            .as_ref()
                            .is_some_and(|r| r.state == JobState::Done)
                })
            })
            .cloned()
            .collect();
        Ok(TrackingPlan {
            releases,
            missing,
            tracked,
        })
    }

    /// The sources this tracking request filled before: same library,
    /// repository and pattern.
    async fn tracked_by(
        &self,
        library: &str,
        request: &SourceRequest,
    ) -> Result<Vec<Source>, EngineError> {
        Ok(self
            .store
            .sources()
            .await?
            .iter()
            .filter_map(Source::from_stored)
            .filter(|s| {
                s.library == library
                    && s.request.url == request.url
                    && s.request.track == request.track
            })
            .collect())
    }

    /// Starts the fetch of one release into the version its tag names.
    async fn start_release(
        self: &Arc<Self>,
        request: &SourceRequest,
        tag: &str,
    ) -> Result<SourceAccepted, EngineError> {
        let asked = SourceRequest {
            git_ref: Some(tag.to_owned()),
            version: None,
            ..request.clone()
        };
        let prepared = self.prepare(asked).await?;
        self.start_source_job(prepared).await
    }

    /// Deletes the tracked versions older than every release kept; says
    /// which went.
    async fn drop_past_keep(&self, plan: &TrackingPlan) -> Vec<String> {
        let Some(oldest) = plan.releases.last() else {
            return Vec::new();
        };
        let mut dropped = Vec::new();
        for source in &plan.tracked {
            let older = version::compare(&source.version, oldest) == std::cmp::Ordering::Less;
            if !older || plan.releases.contains(&source.version) {
                continue;
            }
            // The engine's own work, past the check of the request that
            // asked for tracking.
            let engine = crate::access::local();
            match self
                .delete_permitted(&engine, Target::Version(&source.library, &source.version))
                .await
            {
                Ok(_) => dropped.push(source.version.clone()),
                Err(err) => {
                    tracing::warn!(%err, version = source.version, "a release past keep could not be dropped")
                }
            }
        }
        dropped
    }
}

/// What a tracking request holds and lacks.
struct TrackingPlan {
    /// The releases kept, newest first.
    releases: Vec<String>,
    /// Those not held yet (never fetched, or whose last fetch failed).
    missing: Vec<String>,
    /// The versions it filled before.
    tracked: Vec<Source>,
}
