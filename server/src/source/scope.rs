//! Which URLs a crawl takes: its scope around the start URL, and the
//! include and exclude patterns a source carries.
//!
//! Through a `--rewrite-url` mirror the crawl fetches the mirror's
//! addresses, but a user wrote the scope and patterns for the source's
//! site: each address is judged as the source names it, and links to the
//! source's own addresses (a mirror that copies pages keeps their absolute
//! links) are followed through the mirror.

use std::borrow::Cow;

use glob::{MatchOptions, Pattern};
use index_core::source::{CrawlScope, MAX_PATTERNS};
use url::Url;

use super::Alias;

/// Why a source's URL rules cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error("{what} pattern {pattern:?} is not a glob docshelf reads: {why}")]
    BadPattern {
        what: &'static str,
        pattern: String,
        why: String,
    },
    #[error("at most {MAX_PATTERNS} {0} patterns")]
    TooMany(&'static str),
}

/// The URLs a crawl may take.
#[derive(Debug, Clone)]
pub struct Scope {
    kind: CrawlScope,
    /// The start URL as its source names it.
    start: Url,
    /// For [`CrawlScope::Prefix`]: the start URL's folder, `/docs/v2/`.
    prefix: String,
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
    /// The mirror the crawl fetches through, if any ([`Scope::through`]).
    alias: Option<Alias>,
    /// The start URL's folder as fetched: where its `llms.txt` and
    /// sitemap are looked for.
    fetched_prefix: String,
}

/// `*` stays within one path segment, `**` crosses them: `/docs/*`
/// matches the pages of `/docs/` and `/docs/**` everything below it.
const MATCH: MatchOptions = MatchOptions {
    case_sensitive: true,
    require_literal_separator: true,
    require_literal_leading_dot: false,
};

impl Scope {
    pub fn new(
        start: &Url,
        kind: CrawlScope,
        include: &[String],
        exclude: &[String],
    ) -> Result<Self, ScopeError> {
        let prefix = folder(start);
        Ok(Self {
            kind,
            start: start.clone(),
            fetched_prefix: prefix.clone(),
            prefix,
            include: patterns("include", include)?,
            exclude: patterns("exclude", exclude)?,
            alias: None,
        })
    }

    /// The scope of a crawl that fetches through `alias` (a
    /// `--rewrite-url` mirror), the start URL and patterns given to
    /// [`Scope::new`] being the source's own.
    pub fn through(mut self, alias: Option<Alias>) -> Self {
        if let Some(alias) = &alias {
            if let Ok(start) = Url::parse(&alias.fetched(self.start.as_str())) {
                self.fetched_prefix = folder(&start);
            }
        }
        self.alias = alias;
        self
    }

    /// The start URL's folder as fetched (`/docs/v2/`): where a
    /// prefix-scoped crawl stays, and its `llms.txt` and sitemap are
    /// looked for.
    pub fn start_folder(&self) -> &str {
        &self.fetched_prefix
    }

    /// `url`, found on a page or in a list, as the crawl fetches it: an
    /// address of the source's own goes through the mirror. One already
    /// the mirror's is kept as it is (mapped twice, a mirror prefix that
    /// begins with its source's would nest).
    pub fn fetched(&self, url: Url) -> Url {
        let Some(alias) = &self.alias else {
            return url;
        };
        if alias.on_source(url.as_str()).is_some() {
            return url;
        }
        alias
            .on_mirror(url.as_str())
            .and_then(|fetched| Url::parse(&fetched).ok())
            .map_or(url, normalized)
    }

    /// The `--rewrite-url` mirror the crawl fetches through, if any: the
    /// crawl's findings are renamed back by it.
    pub fn alias(&self) -> Option<&Alias> {
        self.alias.as_ref()
    }

    /// The site's root as fetched, where its `llms.txt` and sitemap may
    /// also lie: through a mirror, the source's root as the mirror holds
    /// it, if it holds it (the mirror host's own root is not the site's).
    pub fn fetched_root(&self) -> Option<Url> {
        let root = self.fetched(self.start.join("/").ok()?);
        self.as_source(&root).is_some().then_some(root)
    }

    /// `url`, as fetched, as its source names it, if the crawl may fetch
    /// it at all: through a mirror, only an address under the mirror's
    /// prefix is (any other would leave the mirror for the source's own
    /// host, or another).
    fn as_source<'a>(&self, url: &'a Url) -> Option<Cow<'a, Url>> {
        let Some(alias) = &self.alias else {
            return Some(Cow::Borrowed(url));
        };
        let shown = alias.on_source(url.as_str())?;
        Url::parse(&shown).ok().map(Cow::Owned)
    }

    /// Whether `url` (as fetched) is within the crawl's scope and patterns.
    pub fn admits(&self, url: &Url) -> bool {
        self.as_source(url)
            .is_some_and(|url| self.within_source(&url) && self.wanted(&url))
    }

    /// Whether `url` (as fetched) is within the scope, patterns aside: what
    /// a page's canonical address, or where a redirect lands, must be.
    pub fn within(&self, url: &Url) -> bool {
        self.as_source(url)
            .is_some_and(|url| self.within_source(&url))
    }

    fn within_source(&self, url: &Url) -> bool {
        let same_origin = url.origin() == self.start.origin();
        match self.kind {
            CrawlScope::Origin => same_origin,
            CrawlScope::Prefix => same_origin && url.path().starts_with(&self.prefix),
            CrawlScope::Domain => {
                let (Some(host), Some(start)) = (url.host_str(), self.start.host_str()) else {
                    return false;
                };
                let start = start.strip_prefix("www.").unwrap_or(start);
                url.scheme() == self.start.scheme()
                    && (host == start || host.strip_suffix(start).is_some_and(|h| h.ends_with('.')))
            }
        }
    }

    fn wanted(&self, url: &Url) -> bool {
        let path = url.path();
        (self.include.is_empty() || self.include.iter().any(|p| p.matches_with(path, MATCH)))
            && !self.exclude.iter().any(|p| p.matches_with(path, MATCH))
    }
}

/// The folder of `url`'s path: `/docs/v2/` for `/docs/v2/intro.html`.
fn folder(url: &Url) -> String {
    let path = url.path();
    match path.rfind('/') {
        Some(i) => path[..=i].to_owned(),
        None => "/".to_owned(),
    }
}

fn patterns(what: &'static str, raw: &[String]) -> Result<Vec<Pattern>, ScopeError> {
    if raw.len() > MAX_PATTERNS {
        return Err(ScopeError::TooMany(what));
    }
    raw.iter()
        .map(|p| {
            // A pattern written without the leading slash means the same.
            let anchored = if p.starts_with('/') || p.starts_with('*') {
                p.clone()
            } else {
                format!("/{p}")
            };
            Pattern::new(&anchored).map_err(|e| ScopeError::BadPattern {
                what,
                pattern: index_core::validate::cut(p, 80),
                why: e.msg.to_owned(),
            })
        })
        .collect()
}

/// `url` as a crawl keys it: no fragment (`#section` is the same page).
pub fn normalized(mut url: Url) -> Url {
    url.set_fragment(None);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn prefix_scope_stays_in_the_start_folder_and_origin() {
        let scope = Scope::new(
            &url("https://x.io/docs/v2/intro.html"),
            CrawlScope::Prefix,
            &[],
            &[],
        )
        .unwrap();
        assert_eq!(scope.start_folder(), "/docs/v2/");
        assert!(scope.admits(&url("https://x.io/docs/v2/api/a.html")));
        assert!(!scope.admits(&url("https://x.io/docs/v1/a.html")));
        assert!(!scope.admits(&url("https://x.io/blog/")));
        assert!(!scope.admits(&url("http://x.io/docs/v2/a.html")));
        assert!(!scope.admits(&url("https://evil.io/docs/v2/a.html")));
    }

    #[test]
    fn domain_scope_takes_subdomains_but_not_lookalikes() {
        let scope = Scope::new(&url("https://www.x.io/"), CrawlScope::Domain, &[], &[]).unwrap();
        assert!(scope.admits(&url("https://docs.x.io/a")));
        assert!(scope.admits(&url("https://x.io/a")));
        assert!(!scope.admits(&url("https://notx.io/a")));
    }

    #[test]
    fn include_and_exclude_globs_match_the_path() {
        let scope = Scope::new(
            &url("https://x.io/"),
            CrawlScope::Origin,
            &["/docs/**".into()],
            &["**/changelog*".into(), "docs/old/*".into()],
        )
        .unwrap();
        assert!(scope.admits(&url("https://x.io/docs/guide/a.html")));
        assert!(!scope.admits(&url("https://x.io/blog/a.html")));
        assert!(!scope.admits(&url("https://x.io/docs/changelog.html")));
        assert!(!scope.admits(&url("https://x.io/docs/old/a.html")));
        assert!(scope.admits(&url("https://x.io/docs/old/deeper/a.html")));
    }

    /// A crawl of `https://docs.x.io/guide/intro.html` through the mirror
    /// `http://mirror.lan/x/` of the source's prefix `shown`.
    fn mirrored(shown: &str, kind: CrawlScope, exclude: &[String]) -> Scope {
        let alias = Alias {
            shown: shown.into(),
            fetched: "http://mirror.lan/x/".into(),
        };
        Scope::new(
            &url("https://docs.x.io/guide/intro.html"),
            kind,
            &[],
            exclude,
        )
        .unwrap()
        .through(Some(alias))
    }

    #[test]
    fn through_a_mirror_addresses_are_judged_as_their_source_names_them() {
        let scope = mirrored(
            "https://docs.x.io/",
            CrawlScope::Prefix,
            &["**/old/*".into()],
        );
        // The patterns and the folder are the source's.
        assert!(scope.admits(&url("http://mirror.lan/x/guide/setup.html")));
        assert!(!scope.admits(&url("http://mirror.lan/x/guide/old/a.html")));
        assert!(!scope.admits(&url("http://mirror.lan/x/blog/a.html")));
        // The mirror's other content is not the source's site.
        assert!(!scope.admits(&url("http://mirror.lan/y/guide/a.html")));
        // Files next to the start page are looked for on the mirror.
        assert_eq!(scope.start_folder(), "/x/guide/");
        // A link to the source's own address goes through the mirror.
        assert_eq!(
            scope
                .fetched(url("https://docs.x.io/guide/a.html#top"))
                .as_str(),
            "http://mirror.lan/x/guide/a.html"
        );
        assert_eq!(
            scope.fetched(url("https://elsewhere.io/a")).as_str(),
            "https://elsewhere.io/a"
        );
        // A mirror address is not mapped again.
        assert_eq!(
            scope
                .fetched(url("http://mirror.lan/x/guide/a.html"))
                .as_str(),
            "http://mirror.lan/x/guide/a.html"
        );
        // The source's own host is never fetched directly, even where its
        // address is within the source's scope: the crawl stays on the
        // mirror.
        assert!(!scope.admits(&url("https://docs.x.io/guide/a.html")));
        assert!(!scope.within(&url("https://docs.x.io/guide/a.html")));
        // The site's root is the source's, as the mirror holds it.
        assert_eq!(
            scope.fetched_root().map(String::from).as_deref(),
            Some("http://mirror.lan/x/")
        );
    }

    #[test]
    fn a_mirror_of_one_folder_leaves_the_rest_of_the_site_alone() {
        let scope = mirrored("https://docs.x.io/guide/", CrawlScope::Domain, &[]);
        assert!(scope.admits(&url("http://mirror.lan/x/a.html")));
        // Within the source's domain, but not on the mirror: not fetched.
        let api = scope.fetched(url("https://docs.x.io/api/a.html"));
        assert_eq!(api.as_str(), "https://docs.x.io/api/a.html");
        assert!(!scope.admits(&api));
        assert!(!scope.admits(&url("https://sub.docs.x.io/guide/a.html")));
        // The source's root is not on the mirror: no root to probe.
        assert_eq!(scope.fetched_root(), None);
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Scope::new(
            &url("https://x.io/"),
            CrawlScope::Origin,
            &["/a/[".into()],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("include pattern \"/a/[\""), "{err}");
    }
}
