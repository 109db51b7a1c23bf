//! Documentation sources: a site to crawl, a Git repository to read, or a
//! package to take from its registry, kept in a library version and
//! refreshed from where it lives.
//!
//! This is the contract every face shares (REST, MCP, CLI, dashboard): what
//! a client asks for ([`SourceRequest`]), the bounds a crawl keeps
//! ([`CrawlLimits`]) and what a stored source reports ([`SourceInfo`]). The
//! fetching itself is the server's.

use serde::{Deserialize, Serialize};

/// Which links a crawl follows, relative to its start URL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CrawlScope {
    /// Same origin, and below the start URL's folder: a crawl of
    /// `https://site/docs/v2/` stays in `/docs/v2/`. What docs sites that
    /// share a host with a blog or an older version need.
    #[default]
    Prefix,
    /// Anything on the start URL's origin (scheme, host and port).
    Origin,
    /// The start URL's host and its subdomains (`docs.x.io` from `x.io`).
    Domain,
}

impl CrawlScope {
    pub const fn name(self) -> &'static str {
        match self {
            Self::Prefix => "prefix",
            Self::Origin => "origin",
            Self::Domain => "domain",
        }
    }
}

/// The most pages a crawl takes unless asked otherwise.
pub const DEFAULT_MAX_PAGES: usize = 1_000;
/// The most pages any crawl may take.
pub const MAX_PAGES: usize = 20_000;
/// The link depth a crawl follows unless asked otherwise.
pub const DEFAULT_MAX_DEPTH: usize = 10;
/// The deepest any crawl may go.
pub const MAX_DEPTH: usize = 50;
/// The most include or exclude patterns a source may carry.
pub const MAX_PATTERNS: usize = 50;

/// What a client asks to add: `POST /api/sources`, MCP `add_docs`,
/// `docshelf ingest URL`, the dashboard's "Add from URL".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceRequest {
    /// Where the documentation lives: an `http(s)://` URL to crawl; a Git
    /// repository (`git+https://…`, a URL ending in `.git`, or a
    /// `github.com`, `gitlab.com`, `codeberg.org` or `bitbucket.org`
    /// project URL); or a package, `pypi:NAME[==VER]`, `npm:NAME[@VER]` or
    /// `crates:NAME[@VER]`.
    pub url: String,
    pub library: String,
    /// The version to store it as. A package's own version, or a Git
    /// repository's tag or branch, by default; a site needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// At most this many pages (default 1,000, at most 20,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pages: Option<usize>,
    /// At most this many links away from the start (default 10, at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<usize>,
    /// Only URLs whose path matches one of these globs (`/docs/**`,
    /// `**/api/*`); all within scope when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// URLs whose path matches one of these globs are left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Which links are followed (default `prefix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<CrawlScope>,
    /// Read the site's `llms-full.txt` (else `llms.txt` and the pages it
    /// lists) instead of crawling its HTML, where the site offers one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub llms_txt: bool,
    /// A Git repository's tag, branch or commit to read (default: the
    /// branch the repository names as its default).
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// A Git repository's folder of documentation (default: found, the
    /// first of `docs/`, `doc/`, `documentation/`, `website/docs/`, a
    /// book's source folder, else the Markdown at the top).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs_path: Option<String>,
    /// The name of a credential the server's operator declared
    /// (`gitlab-ci`), never a secret nor where the server keeps one. The
    /// operator binds each name to the hosts or URL prefixes it may be
    /// sent to, and may limit it to some libraries. For HTTPS Git, its
    /// secret is a token or `user:password`; for a private site, a header
    /// (`Cookie: session=…`, `X-Api-Key: …`) or a token sent as
    /// `Authorization: Bearer …`, to the site's own origin only. Only the
    /// name is stored; the secret is read when the source is fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Follow releases: a Git repository's tags, or a package's registry
    /// releases, matching this pattern (`v*`, `release-*`, `2.*`; `*` any
    /// run of characters, `?` one) become versions, newest first by
    /// version order, pre-releases left out unless the pattern names them.
    /// Each refresh adds new ones and drops the oldest past `keep`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track: Option<String>,
    /// With `track`: how many of the newest releases are kept (default 3,
    /// at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<usize>,
    /// For a package: where its documentation is taken from. By default
    /// the Git repository its metadata names, at the release's tag, else
    /// the documentation site it names (docs.rs for a crate, at the
    /// release), crawled within `max_pages` and `max_depth`, else the
    /// package archive; the job says which and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<DocsFrom>,
}

/// Where a package's documentation is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DocsFrom {
    /// The Git repository the package's metadata names, at the tag of
    /// the release.
    Repo,
    /// The documentation site the metadata names (docs.rs, at the
    /// release, for a crate), crawled.
    Site,
    /// The package archive's README and docs folder.
    Package,
}

impl DocsFrom {
    pub const ALL: [Self; 3] = [Self::Repo, Self::Site, Self::Package];

    pub const fn name(self) -> &'static str {
        match self {
            Self::Repo => "repo",
            Self::Site => "site",
            Self::Package => "package",
        }
    }
}

/// Releases kept by a tracking source unless asked otherwise.
pub const DEFAULT_KEEP: usize = 3;
/// The most releases a tracking source keeps.
pub const MAX_KEEP: usize = 50;

impl SourceRequest {
    /// The crawl bounds asked for, within what any crawl may take.
    pub fn limits(&self) -> CrawlLimits {
        CrawlLimits {
            max_pages: self
                .max_pages
                .unwrap_or(DEFAULT_MAX_PAGES)
                .clamp(1, MAX_PAGES),
            max_depth: self.max_depth.unwrap_or(DEFAULT_MAX_DEPTH).min(MAX_DEPTH),
        }
    }
}

/// How far a crawl goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrawlLimits {
    pub max_pages: usize,
    pub max_depth: usize,
}

/// What adding or refreshing a source answers (202): the job that does it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SourceAccepted {
    pub source_id: String,
    pub job_id: String,
    /// Follows this one job's events without the access token (see
    /// [`crate::job::UploadAccepted::watch_token`]).
    pub watch_token: String,
    pub library: String,
    pub version: String,
    /// For a tracking source: the other releases fetched by this request,
    /// each into its own version (the newest is the one above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<TrackedRelease>,
    /// For a tracking source: versions dropped, past `keep`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
}

/// One more release a tracking source fetches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TrackedRelease {
    pub source_id: String,
    pub job_id: String,
    pub watch_token: String,
    pub version: String,
}

/// A page that could not be taken, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageFailure {
    pub url: String,
    pub reason: String,
}

/// How a source's last fetch went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RefreshSummary {
    pub job_id: String,
    /// When it ended, RFC 3339.
    pub finished_at: String,
    /// How the job ended (`done`, `failed`, `cancelled`, `interrupted`).
    pub state: crate::job::JobState,
    /// Pages (or package files) the version holds after it.
    pub pages: usize,
    /// Pages that were new or had changed, and were embedded.
    pub changed: usize,
    /// Pages whose content was as before (or answered 304): kept as they were.
    pub unchanged: usize,
    /// Pages that disappeared from the source and were removed.
    pub removed: usize,
    /// Pages that failed, with their reasons (the first 100).
    pub failures: Vec<PageFailure>,
    /// How many pages failed in all.
    pub failed: usize,
    /// What to know about the fetch as a whole (it stopped at a bound,
    /// the site offers no llms.txt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A stored source, as `GET /api/sources` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SourceInfo {
    pub source_id: String,
    /// What was asked for (the package's version filled in).
    pub request: SourceRequest,
    /// `site`, `git`, `pypi`, `npm` or `crates`.
    pub kind: String,
    pub library: String,
    pub version: String,
    /// The last refresh that ended, if any has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_refresh: Option<RefreshSummary>,
    /// The job refreshing it now, if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_job: Option<String>,
}

/// Every stored source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SourceList {
    pub sources: Vec<SourceInfo>,
}

/// A credential the server's operator declared, as an admin sees it: its
/// name, where it may be sent and for which libraries; never its secret,
/// nor where the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CredentialInfo {
    /// What a source request names as its `credential`.
    pub name: String,
    /// The hosts (`host`, `host:port`) and URL prefixes it is sent to;
    /// no other.
    pub sent_to: Vec<String>,
    /// Library patterns whose sources may name it; every library when
    /// empty.
    pub libraries: Vec<String>,
}

/// Every credential the operator declared, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CredentialList {
    pub credentials: Vec<CredentialInfo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_stay_within_what_any_crawl_may_take() {
        let asked = SourceRequest {
            max_pages: Some(10_000_000),
            max_depth: Some(900),
            ..Default::default()
        };
        assert_eq!(
            asked.limits(),
            CrawlLimits {
                max_pages: MAX_PAGES,
                max_depth: MAX_DEPTH
            }
        );
        let zero = SourceRequest {
            max_pages: Some(0),
            ..Default::default()
        };
        assert_eq!(zero.limits().max_pages, 1);
        assert_eq!(
            SourceRequest::default().limits().max_pages,
            DEFAULT_MAX_PAGES
        );
    }

    #[test]
    fn a_request_reads_with_only_its_required_fields() {
        let r: SourceRequest =
            serde_json::from_str(r#"{"url":"https://x.io/docs/","library":"x"}"#).unwrap();
        assert_eq!(r.scope, None);
        assert!(r.include.is_empty() && !r.llms_txt);
    }
}
