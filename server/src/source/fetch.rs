//! One HTTP client for every fetch a source makes: pages, robots.txt,
//! sitemaps, registry metadata and package archives.
//!
//! Redirects are followed here, not by the client, so that each hop is
//! checked like the first (scheme, address, a loop, how many). Bodies are
//! read as they arrive and refused past a bound; no compression is asked
//! for, so nothing is inflated; no cookies are kept and no credentials are
//! sent; proxies from the environment are ignored (a proxy would resolve
//! names where [`super::address`] cannot check them).

use std::collections::HashSet;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::StatusCode;
use url::{Host, Url};

use super::address::{AddressPolicy, GuardedResolver};
use super::credential::SiteCredential;
use crate::error_chain::causes;

/// Bounds on one fetch.
#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    /// The largest body read (a page, a sitemap, a package archive).
    pub max_bytes: u64,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// How long one request may take, body included.
    pub timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 * 1024 * 1024,
            max_redirects: 10,
            timeout: Duration::from_secs(30),
        }
    }
}

/// What a page answered last time, so a refresh can ask "changed since?".
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// A fetched body.
#[derive(Debug)]
pub struct Body {
    /// Where it was found, after redirects.
    pub url: Url,
    /// The media type, lowercase, parameters left out.
    pub content_type: Option<String>,
    pub validators: Validators,
    pub bytes: Vec<u8>,
}

/// How a fetch went.
#[derive(Debug)]
pub enum Fetched {
    Body(Body),
    /// `304 Not Modified`: the stored copy is current.
    NotModified {
        url: Url,
    },
}

/// Why a fetch failed, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("only http and https URLs are fetched, not {0}:")]
    Scheme(String),
    #[error("the URL has no host")]
    NoHost,
    #[error(transparent)]
    Refused(#[from] super::address::Refused),
    #[error("the server answered {0}")]
    Status(u16),
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    #[error("a redirect loop (back to {0})")]
    RedirectLoop(String),
    #[error("a redirect without a usable Location")]
    BadRedirect,
    #[error("larger than {} MiB, the most docshelf reads of one page or file", .0 / (1024 * 1024))]
    TooLarge(u64),
    #[error("no answer within {0} s")]
    Timeout(u64),
    #[error("the server sent {0}-compressed data, which docshelf did not ask for")]
    Encoded(String),
    #[error("cannot connect: {0}")]
    Network(String),
}

impl FetchError {
    /// The page is gone for good (404, 410): a refresh removes it.
    pub fn is_gone(&self) -> bool {
        matches!(self, Self::Status(404 | 410))
    }

    /// The server asks to sign in (401, 403).
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Self::Status(401 | 403))
    }
}

/// The HTTP client sources fetch through.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: AddressPolicy,
    limits: FetchLimits,
    /// A private site's credential, sent to its origin only.
    credential: Option<SiteCredential>,
}

/// How docshelf's crawler names itself (robots.txt rules are matched on
/// `docshelf`).
pub const USER_AGENT: &str = concat!(
    "docshelf/",
    env!("CARGO_PKG_VERSION"),
    " (documentation indexer; +https://github.com/docshelf)"
);

impl Fetcher {
    pub fn new(policy: AddressPolicy, limits: FetchLimits) -> Result<Self, FetchError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .referer(false)
            // Another crate in the build may turn on reqwest's decoders,
            // which would inflate a compressed body (unbounded by the
            // body limit below, and unasked for) and hide its encoding.
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .no_zstd()
            .dns_resolver(GuardedResolver::shared(policy.clone()))
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10).min(limits.timeout))
            .timeout(limits.timeout)
            .build()
            .map_err(|e| FetchError::Network(innermost(&e)))?;
        Ok(Self {
            client,
            policy,
            limits,
            credential: None,
        })
    }

    pub fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    pub fn limits(&self) -> FetchLimits {
        self.limits
    }

    /// A fetcher like this one that reads bodies up to `max_bytes`
    /// (package archives are larger than pages).
    pub fn with_max_bytes(&self, max_bytes: u64) -> Self {
        Self {
            limits: FetchLimits {
                max_bytes,
                ..self.limits
            },
            ..self.clone()
        }
    }

    /// A fetcher like this one that sends `credential` to its site's
    /// origin (and nowhere else, redirects included).
    pub fn with_credential(&self, credential: SiteCredential) -> Self {
        Self {
            credential: Some(credential),
            ..self.clone()
        }
    }

    /// Checks that `url` may be fetched at all: scheme, host, and a literal
    /// IP address (names are checked when they resolve).
    pub fn check(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme(url.scheme().to_owned()));
        }
        match url.host() {
            None => Err(FetchError::NoHost),
            Some(Host::Ipv4(ip)) => Ok(self.policy.check(ip.into())?),
            Some(Host::Ipv6(ip)) => Ok(self.policy.check(ip.into())?),
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    /// GETs `url`, following redirects (each checked), asking whether it
    /// changed since `validators` when given.
    #[tracing::instrument(skip(self, validators), fields(url = %url))]
    pub async fn get(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        self.fetch(url, validators, None).await
    }

    /// GETs `url` asking for `accept` (a registry's JSON) instead of pages.
    pub async fn get_with_accept(
        &self,
        url: &Url,
        accept: Option<&'static str>,
    ) -> Result<Body, FetchError> {
        match self.fetch(url, None, accept).await? {
            Fetched::Body(body) => Ok(body),
            Fetched::NotModified { .. } => Err(FetchError::Status(304)),
        }
    }

    async fn fetch(
        &self,
        url: &Url,
        validators: Option<&Validators>,
        accept: Option<&'static str>,
    ) -> Result<Fetched, FetchError> {
        let mut at = url.clone();
        let mut visited = HashSet::new();
        for _ in 0..=self.limits.max_redirects {
            self.check(&at)?;
            visited.insert(at.clone());
            let mut request = self.client.get(at.clone()).headers(accept_headers(accept));
            if let Some((name, value)) = self.credential.as_ref().and_then(|c| c.header_for(&at)) {
                request = request.header(name, value);
            }
            if let Some(v) = validators {
                if let Some(etag) = &v.etag {
                    request = request.header(header::IF_NONE_MATCH, etag);
                }
                if let Some(date) = &v.last_modified {
                    request = request.header(header::IF_MODIFIED_SINCE, date);
                }
            }
            let response = request.send().await.map_err(|e| self.failed(&e))?;
            let status = response.status();
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let next = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| at.join(l).ok())
                    .ok_or(FetchError::BadRedirect)?;
                if visited.contains(&next) {
                    return Err(FetchError::RedirectLoop(next.to_string()));
                }
                at = next;
                continue;
            }
            if status == StatusCode::NOT_MODIFIED {
                return Ok(Fetched::NotModified { url: at });
            }
            if !status.is_success() {
                return Err(FetchError::Status(status.as_u16()));
            }
            return self.body(at, response).await.map(Fetched::Body);
        }
        Err(FetchError::TooManyRedirects(self.limits.max_redirects))
    }

    /// GETs `url` and returns its body (a `304` cannot happen: nothing
    /// conditional is asked).
    pub async fn get_body(&self, url: &Url) -> Result<Body, FetchError> {
        self.get_with_accept(url, None).await
    }

    async fn body(&self, url: Url, response: reqwest::Response) -> Result<Body, FetchError> {
        let max = self.limits.max_bytes;
        let headers = response.headers();
        if let Some(encoding) = headers
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .filter(|e| !e.eq_ignore_ascii_case("identity"))
        {
            return Err(FetchError::Encoded(encoding.to_owned()));
        }
        if response.content_length().is_some_and(|n| n > max) {
            return Err(FetchError::TooLarge(max));
        }
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
        let text = |name| {
            headers
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        let validators = Validators {
            etag: text(header::ETAG),
            last_modified: text(header::LAST_MODIFIED),
        };
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.failed(&e))?;
            if (bytes.len() + chunk.len()) as u64 > max {
                return Err(FetchError::TooLarge(max));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Body {
            url,
            content_type,
            validators,
            bytes,
        })
    }

    /// A transport error in words: a refused address keeps its own message.
    fn failed(&self, err: &reqwest::Error) -> FetchError {
        if err.is_timeout() {
            return FetchError::Timeout(self.limits.timeout.as_secs());
        }
        if let Some(refused) = causes(err).find_map(|e| e.downcast_ref::<super::address::Refused>())
        {
            return FetchError::Refused(refused.clone());
        }
        FetchError::Network(innermost(err))
    }
}

/// The innermost cause's words ("Connection refused (os error 111)"): the
/// outer ones repeat the URL.
fn innermost(err: &(dyn std::error::Error + 'static)) -> String {
    causes(err)
        .last()
        .map_or_else(String::new, ToString::to_string)
}

/// What a page fetch accepts: documents first.
const PAGES: &str = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,application/pdf;q=0.7,*/*;q=0.1";

fn accept_headers(accept: Option<&'static str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static(accept.unwrap_or(PAGES)),
    );
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    headers
}
