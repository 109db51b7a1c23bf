//! What a source request asks to fetch, checked and resolved before its
//! job starts, so that a refused address, a missing credential, an
//! unknown ref or release is answered to the request itself: a site's
//! start URL (its address checked now), a Git repository's ref (listed
//! now, through the pinned remote), a package's release.

use std::time::Duration;

use index_core::source::{SourceRequest, MAX_PAGES};
use index_core::validate;
use ingest_core::docs_tree::DocsSelection;
use ingest_core::ids;
use url::Url;

use super::{Engine, EngineError};
use crate::source::crawl::Plan;
use crate::source::credential::SiteCredential;
use crate::source::fetch::FetchError;
use crate::source::git::{self, GitPlan, Remote};
use crate::source::job::Work;
use crate::source::package_route::{PackageRoute, SiteCrawl};
use crate::source::scope::Scope;
use crate::source::{registry, Origin, Source, SourceError, SourceState};

/// How long a start URL's host name may take to resolve when a source is
/// added: the answer to the client waits on it.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// A source ready to fetch.
pub(super) struct Prepared {
    pub(super) source: Source,
    pub(super) work: Work,
}

impl Engine {
    /// Checks a request and finds what to fetch: a site's start URL (its
    /// address checked now, so a refused one is refused at once), or a
    /// package's release (so the version is known).
    pub(super) async fn prepare(
        &self,
        mut request: SourceRequest,
    ) -> Result<Prepared, EngineError> {
        let library = validate::library(&request.library)?;
        let origin = Origin::parse(&request.url)?;
        let for_git = request.git_ref.is_some() || request.docs_path.is_some();
        if for_git && !matches!(origin, Origin::Git(_)) {
            return Err(SourceError::NotGit(validate::cut(&request.url, 200)).into());
        }
        if request.credential.is_some() && matches!(origin, Origin::Package(_)) {
            return Err(SourceError::CredentialForPackage.into());
        }
        match (request.from, &origin) {
            (None, _) => {}
            (Some(_), Origin::Package(_)) => {}
            (Some(_), _) => {
                return Err(
                    SourceError::From("it is for packages (pypi:, npm:, crates:)".into()).into(),
                )
            }
        }
        let settings = &self.source_settings;
        // For a repository or a package: include globs over file paths,
        // and `max_pages` as a bound on files.
        let selection = || {
            DocsSelection::new(
                &request.include,
                request.max_pages.map(|n| n.clamp(1, MAX_PAGES)),
            )
            .map_err(SourceError::Include)
        };
        let (version, work) = match origin {
            Origin::Git(url) => {
                let asked = request
                    .version
                    .as_deref()
                    .map(validate::version)
                    .transpose()?;
                let docs_path = request
                    .docs_path
                    .as_deref()
                    .map(|p| validate::file_path(p.trim_matches('/')))
                    .transpose()?;
                let selection = selection()?;
                let remote = self.git_remote(&url, &mut request, &library).await?;
                let refs = git::refs::list(&remote).await.map_err(SourceError::from)?;
                let target = refs
                    .choose(url.as_str(), request.git_ref.as_deref())
                    .map_err(SourceError::from)?;
                let version = match asked {
                    Some(version) => version,
                    None => validate::version(&target.version())?,
                };
                let plan = GitPlan {
                    remote,
                    target,
                    docs_path,
                    limits: self.archive_limits,
                    selection,
                    deadline: tokio::time::Instant::now() + settings.max_time,
                    origin: None,
                    source_url: url.to_string(),
                    needs_folder: false,
                };
                (version, Work::Git(plan))
            }
            Origin::Site(url) => {
                let version = request.version.as_deref().ok_or(SourceError::NoVersion)?;
                let version = validate::version(version)?;
                // A mirror given with --rewrite-url is crawled instead; the
                // pages keep the source's addresses.
                let alias = settings.rewrites.alias(url.as_str());
                // The scope and patterns are the source's; the crawl
                // judges the mirror's addresses by them.
                let scope = Scope::new(
                    &url,
                    request.scope.unwrap_or_default(),
                    &request.include,
                    &request.exclude,
                )
                .map_err(SourceError::from)?
                .through(alias);
                let url = scope.fetched(url);
                self.reachable(&url).await?;
                // Lent for the address fetched: a mirror gets the secret
                // only where the operator bound the credential to it too.
                let credential = match self.lend(&request, &library, &url)? {
                    None => None,
                    Some(lent) => {
                        request.credential = Some(lent.name.clone());
                        Some(SiteCredential::new(&url, lent).map_err(SourceError::from)?)
                    }
                };
                let plan = Plan {
                    start: url,
                    scope,
                    limits: request.limits(),
                    llms_txt: request.llms_txt,
                    interval: settings.interval,
                    concurrency: settings.concurrency,
                    // Set again when the job starts.
                    deadline: tokio::time::Instant::now() + settings.max_time,
                    credential,
                    start_page: None,
                };
                (version, Work::Site(plan))
            }
            Origin::Package(spec) => {
                // A version given is checked before any registry is asked:
                // a bad one must not cost (or reach) a registry request.
                let asked = request
                    .version
                    .as_deref()
                    .map(validate::version)
                    .transpose()?;
                let release = registry::resolve(&self.fetcher, &spec)
                    .await
                    .map_err(SourceError::from)?;
                let version = match asked {
                    Some(version) => version,
                    None => validate::version(&release.version)?,
                };
                let route = PackageRoute {
                    name: spec.name.clone(),
                    registry: spec.registry,
                    crawl: SiteCrawl {
                        limits: request.limits(),
                        interval: settings.interval,
                        concurrency: settings.concurrency,
                    },
                    from: request.from,
                    rewrites: settings.rewrites.clone(),
                    policy: self.fetcher.policy().clone(),
                    limits: self.archive_limits,
                    selection: selection()?,
                    deadline: tokio::time::Instant::now() + settings.max_time,
                };
                (version, Work::Package(release, route))
            }
        };
        request.library = library.clone();
        request.version = Some(version.clone());
        let id = ids::source_id(&library, &version);
        let state = match self.store.source(&id).await? {
            Some(stored) => Source::from_stored(&stored)
                .map(|s| s.state)
                .unwrap_or_default(),
            None => SourceState::default(),
        };
        Ok(Prepared {
            source: Source {
                id,
                request,
                library,
                version,
                state,
            },
            work,
        })
    }

    /// A repository's remote: its address checked and pinned, the
    /// credential the request names (if any) lent for the address fetched
    /// and read now. The request is left naming the credential by its
    /// name (a stored source that named it by reference goes on so).
    pub(super) async fn git_remote(
        &self,
        url: &Url,
        request: &mut SourceRequest,
        library: &str,
    ) -> Result<Remote, EngineError> {
        // A mirror given with --rewrite-url is fetched instead; the
        // address rules, and the credential's places, hold for it.
        let fetched = self.source_settings.rewrites.apply(url.as_str());
        let fetch_url = Url::parse(&fetched).unwrap_or_else(|_| url.clone());
        let secret = match self.lend(request, library, &fetch_url)? {
            None => None,
            Some(lent) => {
                request.credential = Some(lent.name.clone());
                Some(lent.secret)
            }
        };
        Ok(Remote::connect(&fetch_url, self.fetcher.policy(), secret)
            .await
            .map_err(SourceError::from)?)
    }

    /// Refuses at once a start URL whose host is refused or does not
    /// resolve (the crawl checks every address again as it connects).
    async fn reachable(&self, url: &Url) -> Result<(), EngineError> {
        let unreachable = |err| SourceError::Unreachable {
            url: url.to_string(),
            err,
        };
        self.fetcher.check(url).map_err(unreachable)?;
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Err(unreachable(FetchError::NoHost).into());
        };
        if url.domain().is_none() {
            return Ok(());
        }
        let lookup = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port)));
        let addresses: Vec<_> = match lookup.await {
            Ok(Ok(found)) => found.collect(),
            Ok(Err(e)) => {
                let why = format!("the host name does not resolve: {e}");
                return Err(unreachable(FetchError::Network(why)).into());
            }
            Err(_) => {
                let why = format!(
                    "the host name did not resolve within {} s",
                    RESOLVE_TIMEOUT.as_secs()
                );
                return Err(unreachable(FetchError::Network(why)).into());
            }
        };
        let policy = self.fetcher.policy();
        if let Some(refused) = addresses.iter().find_map(|a| policy.check(a.ip()).err()) {
            if addresses.iter().all(|a| policy.check(a.ip()).is_err()) {
                return Err(unreachable(FetchError::Refused(refused)).into());
            }
        }
        Ok(())
    }
}
