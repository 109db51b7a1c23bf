//! Releases as versions: a Git source with `track` keeps the newest
//! `keep` release tags that match its pattern, each in a version named by
//! its tag; a package source with `track` keeps the newest `keep` of its
//! registry's releases that match, each in a version named by the
//! release. Adding it, refreshing it, or its schedule fetches the releases
//! it does not hold yet and drops the tracked versions that fell past
//! `keep`; older versions stay searchable until then.

use std::sync::Arc;

use index_core::catalog::Target;
use index_core::job::{JobState, JobStatus};
use index_core::source::{SourceAccepted, SourceRequest, TrackedRelease, DEFAULT_KEEP, MAX_KEEP};
use index_core::{validate, version};

use super::{Engine, EngineError};
use crate::source::git::{self, GitError};
use crate::source::registry::{self, RegistryError};
use crate::source::releases::{self, Track};
use crate::source::{Origin, Source, SourceError};

impl Engine {
    /// Fetches what a tracking request does not hold yet, drops what fell
    /// past `keep`, and answers with the newest release's job (the others
    /// in `also`). With nothing new, the newest release is fetched again,
    /// reading only what changed. A refresh of one tracked version
    /// (`refreshed`, its version) fetches that version again and answers
    /// with its job, so that the source id refreshed is the one answered
    /// while the release is kept.
    pub(super) async fn track_releases(
        self: &Arc<Self>,
        request: SourceRequest,
        refreshed: Option<&str>,
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
        let kept = refreshed.filter(|v| plan.releases.iter().any(|r| r == v));
        let mut answer = match kept {
            Some(version) => match started.iter().position(|a| a.version == version) {
                Some(at) => started.remove(at),
                None => self.start_release(&request, version).await?,
            },
            None if started.is_empty() => self.start_release(&request, &plan.releases[0]).await?,
            None => started.remove(0),
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
        for release in fetch {
            let asked = release_request(&request, &release)?;
            last = Some(self.ingest_prepared(asked, &mut watch).await?);
        }
        self.drop_past_keep(&plan).await;
        last.ok_or_else(|| EngineError::Source(SourceError::Track("nothing to fetch".into())))
    }

    /// Which releases a tracking request keeps, which of them it does not
    /// hold yet, and what it held before.
    async fn plan_tracking(&self, request: &SourceRequest) -> Result<TrackingPlan, EngineError> {
        let library = validate::library(&request.library)?;
        let track = Track::parse(request.track.as_deref().unwrap_or_default())
            .map_err(SourceError::Track)?;
        if request.git_ref.is_some() || request.version.is_some() {
            let why =
                "it picks the releases and names the versions itself; give neither ref nor version";
            return Err(SourceError::Track(why.into()).into());
        }
        let keep = request.keep.unwrap_or(DEFAULT_KEEP).clamp(1, MAX_KEEP);
        let releases: Vec<String> = match Origin::parse(&request.url)? {
            Origin::Git(url) => {
                let remote = self
                    .git_remote(&url, &mut request.clone(), &library)
                    .await?;
                let refs = git::refs::list(&remote).await.map_err(SourceError::from)?;
                let releases = refs.releases(&track);
                if releases.is_empty() {
                    return Err(SourceError::from(GitError::NoReleases {
                        url: url.to_string(),
                        pattern: track.as_str().to_owned(),
                        tags: refs.newest_tags(),
                    })
                    .into());
                }
                releases.into_iter().take(keep).map(str::to_owned).collect()
            }
            Origin::Package(spec) => {
                if spec.version.is_some() {
                    let why = format!(
                        "a tracked package names no release, the pattern chooses them: give {}, not {spec}",
                        tracking_url(&request.url)
                    );
                    return Err(SourceError::Track(why).into());
                }
                let versions = registry::versions(&self.fetcher, &spec)
                    .await
                    .map_err(SourceError::from)?;
                let releases = track.newest_first(versions.iter().map(String::as_str));
                if releases.is_empty() {
                    return Err(SourceError::from(RegistryError::NoMatch {
                        package: spec.to_string(),
                        pattern: track.as_str().to_owned(),
                        newest: releases::newest(
                            versions.iter().map(String::as_str),
                            releases::LISTED,
                        ),
                    })
                    .into());
                }
                releases.into_iter().take(keep).map(str::to_owned).collect()
            }
            Origin::Site(_) => {
                let why = format!(
                    "{} is a site; track follows a Git repository's tags or a package's releases",
                    validate::cut(&request.url, 200)
                );
                return Err(SourceError::Track(why).into());
            }
        };
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
    /// repository or package, and pattern.
    async fn tracked_by(
        &self,
        library: &str,
        request: &SourceRequest,
    ) -> Result<Vec<Source>, EngineError> {
        let url = tracking_url(&request.url);
        Ok(self
            .store
            .sources()
            .await?
            .iter()
            .filter_map(Source::from_stored)
            .filter(|s| {
                s.library == library
                    && s.request.track == request.track
                    && tracking_url(&s.request.url) == url
            })
            .collect())
    }

    /// Starts the fetch of one release into the version it names.
    async fn start_release(
        self: &Arc<Self>,
        request: &SourceRequest,
        release: &str,
    ) -> Result<SourceAccepted, EngineError> {
        let asked = release_request(request, release)?;
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

/// The request for one release of a tracking request: a repository at its
/// tag, a package at its version.
fn release_request(request: &SourceRequest, release: &str) -> Result<SourceRequest, EngineError> {
    let mut asked = SourceRequest {
        version: None,
        ..request.clone()
    };
    match Origin::parse(&request.url)? {
        Origin::Package(mut spec) => {
            spec.version = Some(release.to_owned());
            asked.url = spec.to_string();
        }
        _ => asked.git_ref = Some(release.to_owned()),
    }
    Ok(asked)
}

/// The URL of the tracking request a tracked version came from: a
/// package's release named by the version is unnamed again.
pub(super) fn tracking_url(url: &str) -> String {
    match Origin::parse(url) {
        Ok(Origin::Package(mut spec)) => {
            spec.version = None;
            spec.to_string()
        }
        _ => url.to_owned(),
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
