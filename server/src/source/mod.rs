//! Documentation from where it lives: a site crawled, a Git repository's
//! docs folder read, or a package taken from its registry, into a library
//! version, and refreshed from there.
//!
//! - [`address`]: which addresses a fetch may reach (no server-side
//!   request forgery into the server's own network).
//! - [`fetch`]: the one HTTP client every fetch goes through.
//! - [`robots`], [`sitemap`], [`scope`]: what a crawl may take and finds.
//! - [`crawl`]: the crawl itself.
//! - [`git`]: Git repositories, at a tag, branch or commit.
//! - [`credential`]: credentials for private sources, declared by the operator and named by sources.
//! - [`registry`]: PyPI, npm and crates.io releases.
//! - [`releases`]: which releases a `track` pattern follows.
//! - [`job`]: a source's fetch run as a job, published whole.
//! - [`tally`]: what a fetch met, and the verdict, state and summary after it.
//! - `userinfo`: a URL's user name and password, refused (secrets go by
//!   reference).

pub mod address;
mod api_pages;
pub mod crawl;
pub mod credential;
pub mod fetch;
pub mod git;
pub mod job;
pub mod package_route;
pub mod registry;
pub mod releases;
pub mod robots;
pub mod scope;
pub mod sitemap;
pub mod tally;
pub(crate) mod userinfo;

use std::collections::BTreeMap;
use std::time::Duration;

use index_core::source::{RefreshSummary, SourceRequest};
use ingest_core::package::{PackageSpec, PackageSpecError};
use serde::{Deserialize, Serialize};
use url::Url;

pub use address::AddressPolicy;
pub use fetch::{FetchLimits, Fetcher};

use crawl::PageRecord;

/// How the server fetches, from its configuration.
#[derive(Debug, Clone)]
pub struct SourceSettings {
    pub policy: AddressPolicy,
    pub fetch: FetchLimits,
    /// The least time between two requests to one host.
    pub interval: Duration,
    /// Requests in flight at once, per crawl.
    pub concurrency: usize,
    /// The longest a crawl may take.
    pub max_time: Duration,
    /// URL prefixes fetched from elsewhere (`--rewrite-url`).
    pub rewrites: Rewrites,
    /// Source fetches run at once, at most (`--source-fetches`).
    pub fetches: usize,
    /// How much of a Git tree a fetch lists.
    pub tree: git::listing::TreeLimits,
}

/// URL prefixes fetched from elsewhere, as git's `insteadOf`: the longest
/// prefix that matches is replaced.
#[derive(Debug, Clone, Default)]
pub struct Rewrites(Vec<(String, String)>);

impl Rewrites {
    pub fn new(mut pairs: Vec<(String, String)>) -> Self {
        pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Self(pairs)
    }

    /// `url` with its rewrite applied, if one matches.
    pub fn apply(&self, url: &str) -> String {
        match self.alias(url) {
            Some(alias) => alias.fetched(url),
            None => url.to_owned(),
        }
    }

    /// The rewrite that applies to `url`, if one does.
    pub fn alias(&self, url: &str) -> Option<Alias> {
        self.0
            .iter()
            .find(|(from, _)| url.starts_with(from.as_str()))
            .map(|(from, to)| Alias {
                shown: from.clone(),
                fetched: to.clone(),
            })
    }
}

/// One rewrite a crawl goes through: pages are fetched from the mirror
/// but stored, cited and listed under the address their source has (as
/// git's `insteadOf` keeps a remote's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    /// The prefix a source names (`https://docs.rs/`).
    pub shown: String,
    /// The prefix fetched instead (`http://mirror.intranet/docs.rs/`).
    pub fetched: String,
}

impl Alias {
    /// A source's address as fetched (unchanged outside the rewrite).
    pub fn fetched(&self, url: &str) -> String {
        self.on_mirror(url).unwrap_or_else(|| url.to_owned())
    }

    /// A fetched address as its source names it (unchanged outside the
    /// mirror).
    pub fn shown(&self, url: &str) -> String {
        self.on_source(url).unwrap_or_else(|| url.to_owned())
    }

    /// A source's address as fetched, if the rewrite covers it.
    pub fn on_mirror(&self, url: &str) -> Option<String> {
        swap_prefix(url, &self.shown, &self.fetched)
    }

    /// A fetched address as its source names it, if it is the mirror's.
    pub fn on_source(&self, url: &str) -> Option<String> {
        swap_prefix(url, &self.fetched, &self.shown)
    }
}

fn swap_prefix(url: &str, from: &str, to: &str) -> Option<String> {
    url.strip_prefix(from).map(|rest| format!("{to}{rest}"))
}

impl Default for SourceSettings {
    fn default() -> Self {
        Self {
            policy: AddressPolicy::default(),
            fetch: FetchLimits::default(),
            interval: Duration::from_millis(200),
            concurrency: 4,
            max_time: Duration::from_secs(3600),
            rewrites: Rewrites::default(),
            fetches: 2,
            tree: git::listing::TreeLimits::default(),
        }
    }
}

/// Where a source's documentation lives.
#[derive(Debug, Clone)]
pub enum Origin {
    Site(Url),
    Git(Url),
    Package(PackageSpec),
}

/// Why a source cannot be added.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(
        "{0} carries a user name or password: a source's URL is stored and shown to \
         whoever reads the library, so it may hold no secret; give the secret as a named \
         credential the operator declares (`credential`: NAME)"
    )]
    UserInUrl(String),
    #[error("{0:?} is neither an http(s) URL, a Git repository (git+https://…, …/name.git) nor a package (pypi:NAME[==VER], npm:NAME[@VER], crates:NAME[@VER])")]
    NotASource(String),
    #[error(transparent)]
    Package(#[from] PackageSpecError),
    #[error(transparent)]
    Scope(#[from] scope::ScopeError),
    #[error("{url} cannot be fetched: {err}")]
    Unreachable { url: String, err: fetch::FetchError },
    #[error("a site needs a version to be stored as (for example \"latest-crawl\" or the docs' own version)")]
    NoVersion,
    #[error(transparent)]
    Registry(#[from] registry::RegistryError),
    #[error(transparent)]
    Git(#[from] git::GitError),
    #[error("ref, docs_path and track are for Git repositories (and track for packages too); {0} is not one (write it as git+https://…)")]
    NotGit(String),
    #[error("credential is for a private Git repository or site; a package's registry is public")]
    CredentialForPackage,
    #[error(transparent)]
    Credential(#[from] credential::CredentialError),
    #[error("track: {0}")]
    Track(String),
    #[error("from: {0}")]
    From(String),
    #[error("include: {0}")]
    Include(String),
}

impl Origin {
    /// Reads a request's `url`: a package spec, else an http(s) URL.
    ///
    /// A URL carrying a user name or password, in any form (a site, a
    /// repository, `git+https://`), is refused before anything else reads
    /// it, and the error shows it without them.
    pub fn parse(raw: &str) -> Result<Self, SourceError> {
        let raw = raw.trim();
        if let Some(shown) = userinfo::stripped(raw) {
            return Err(SourceError::UserInUrl(index_core::validate::cut(
                &shown, 200,
            )));
        }
        if let Some(spec) = PackageSpec::parse(raw)? {
            return Ok(Self::Package(spec));
        }
        if let Some(url) = git::repository_url(raw) {
            return Ok(Self::Git(url));
        }
        match Url::parse(raw) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                Ok(Self::Site(scope::normalized(url)))
            }
            _ => Err(SourceError::NotASource(index_core::validate::cut(raw, 200))),
        }
    }

    /// `site`, `git`, `pypi`, `npm` or `crates`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Site(_) => "site",
            Self::Git(_) => "git",
            Self::Package(spec) => match spec.registry {
                ingest_core::package::Registry::PyPi => "pypi",
                ingest_core::package::Registry::Npm => "npm",
                ingest_core::package::Registry::Crates => "crates",
            },
        }
    }
}

/// What a source keeps between fetches.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SourceState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_refresh: Option<RefreshSummary>,
    /// When the last fetch published, in seconds since the epoch (0:
    /// never): what `--refresh-every` counts from.
    #[serde(default)]
    pub refreshed_at: u64,
    /// The pages (or package files) the version holds, by address.
    #[serde(default)]
    pub pages: BTreeMap<String, PageRecord>,
    /// The job fetching it now, written when it starts and cleared when
    /// it publishes: when it is not `last_refresh`'s, that job has not
    /// ended where the source could be told (its process was killed), and
    /// the listing shows it instead (`engine/sources.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A stored source, read.
#[derive(Debug, Clone)]
pub struct Source {
    pub id: String,
    pub request: SourceRequest,
    pub library: String,
    pub version: String,
    pub state: SourceState,
}

impl Source {
    pub fn from_stored(stored: &crate::store::sources::StoredSource) -> Option<Self> {
        Some(Self {
            id: stored.id.clone(),
            request: serde_json::from_str(&stored.request).ok()?,
            library: stored.library.clone(),
            version: stored.version.clone(),
            state: serde_json::from_str(&stored.state).unwrap_or_default(),
        })
    }

    pub fn to_stored(&self) -> crate::store::sources::StoredSource {
        crate::store::sources::StoredSource {
            id: self.id.clone(),
            library: self.library.clone(),
            version: self.version.clone(),
            request: serde_json::to_string(&self.request).unwrap_or_default(),
            state: serde_json::to_string(&self.state).unwrap_or_default(),
        }
    }
}
