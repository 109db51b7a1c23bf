//! Which URLs a crawl takes: its scope around the start URL, and the
//! include and exclude patterns a source carries.

use glob::{MatchOptions, Pattern};
use index_core::source::{CrawlScope, MAX_PATTERNS};
use url::Url;

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
    start: Url,
    /// For [`CrawlScope::Prefix`]: the start URL's folder, `/docs/v2/`.
    prefix: String,
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
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
        let path = start.path();
        let prefix = match path.rfind('/') {
            Some(i) => path[..=i].to_owned(),
            None => "/".to_owned(),
        };
        Ok(Self {
            kind,
            start: start.clone(),
            prefix,
            include: patterns("include", include)?,
            exclude: patterns("exclude", exclude)?,
        })
    }

    /// The folder a prefix-scoped crawl stays in (`/docs/v2/`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether `url` is within the crawl's scope and patterns.
    pub fn admits(&self, url: &Url) -> bool {
        self.within(url) && self.wanted(url)
    }

    /// Whether `url` is within the scope, patterns aside: what a page's
    /// canonical address must be to be used.
    pub fn within(&self, url: &Url) -> bool {
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
        assert_eq!(scope.prefix(), "/docs/v2/");
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
