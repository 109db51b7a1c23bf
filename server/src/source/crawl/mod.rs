//! A crawl of one documentation site: from the start URL (and the site's
//! sitemap), following links within scope, politely, within bounds.
//!
//! The crawl hands each page to the job as soon as it is fetched
//! ([`Found`]), so fetching and embedding overlap. It never decides what a
//! page says: extraction is the job's. It decides which pages are the
//! same page (redirects, `<link rel=canonical>`, fragments), which were
//! not changed since the last crawl (`304`, or the same bytes), and which
//! are gone.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use index_core::format::Format;
use index_core::source::CrawlLimits;
use ingest_core::extract::links::page_links;
use ingest_core::ids::content_hash;
use tokio::sync::mpsc;
use tokio::time::Instant;
use url::Url;

use super::fetch::{Body, FetchError, Fetched, Fetcher};
use super::robots::Robots;
use super::scope::{normalized, Scope};

mod found;
mod llms;
mod sitemaps;

pub use found::{Found, Outcome, PageRecord, Previous};

/// Everything a crawl needs besides the fetcher.
#[derive(Debug)]
pub struct Plan {
    /// The first page, as fetched ([`Scope::fetched`]).
    pub start: Url,
    pub scope: Scope,
    pub limits: CrawlLimits,
    /// Read `llms-full.txt`/`llms.txt` instead of crawling, where offered.
    pub llms_txt: bool,
    /// The least time between two requests to one host.
    pub interval: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// When the crawl stops, whatever is left.
    pub deadline: Instant,
    /// A private site's credential, sent to the start URL's origin only.
    pub credential: Option<super::credential::SiteCredential>,
    /// The start page, where choosing this crawl already fetched it (a
    /// package's docs site is tried before it is crawled): taken instead
    /// of asking the site again, once robots.txt allows it.
    pub start_page: Option<Box<Body>>,
}

/// The most sitemap documents read (an index and the sitemaps it lists).
const MAX_SITEMAPS: usize = 10;

/// Crawls `plan`, sending what it finds to `out`. Stops early if `out` is
/// closed (the job was cancelled).
#[tracing::instrument(skip_all, fields(start = %plan.start))]
pub async fn crawl(
    fetcher: &Fetcher,
    plan: Plan,
    previous: &Previous,
    out: mpsc::Sender<Found>,
) -> Outcome {
    let mut crawl = Crawl {
        fetcher,
        previous,
        out,
        robots: HashMap::new(),
        next_slot: HashMap::new(),
        seen: HashSet::new(),
        addresses: HashSet::new(),
        queue: VecDeque::new(),
        taken: 0,
        notes: Vec::new(),
        plan,
    };
    let start = normalized(crawl.plan.start.clone());
    if crawl.plan.llms_txt {
        match crawl.llms_txt(&start).await {
            Some(Llms::Full) => {
                return Outcome {
                    complete: true,
                    notes: crawl.notes,
                }
            }
            Some(Llms::Index) => {}
            None => crawl.enqueue(start.clone(), 0),
        }
    } else {
        crawl.enqueue(start.clone(), 0);
    }
    crawl.sitemaps(&start).await;
    // The sitemaps' pages are a total as soon as they are known.
    if crawl.queue.len() > 1 {
        let expected = crawl.queue.len().min(crawl.plan.limits.max_pages);
        let _ = crawl.out.send(Found::Expected(expected)).await;
    }
    let complete = crawl.run().await;
    Outcome {
        complete,
        notes: crawl.notes,
    }
}

struct Crawl<'a> {
    fetcher: &'a Fetcher,
    plan: Plan,
    previous: &'a Previous,
    out: mpsc::Sender<Found>,
    robots: HashMap<String, Robots>,
    /// Per host: when the next request may start.
    next_slot: HashMap<String, Instant>,
    /// URLs queued or fetched.
    seen: HashSet<String>,
    /// Addresses a page was stored (or kept) under.
    addresses: HashSet<String>,
    queue: VecDeque<(Url, usize)>,
    /// Pages stored or kept so far.
    taken: usize,
    notes: Vec<String>,
}

enum Llms {
    /// `llms-full.txt` was read: the whole documentation in one file.
    Full,
    /// `llms.txt` was read: the pages it lists are queued.
    Index,
}

impl Crawl<'_> {
    /// Queues `url` (as fetched: [`Scope::fetched`]) at `depth` unless it
    /// was seen, is out of scope or deeper than the crawl goes.
    fn enqueue(&mut self, url: Url, depth: usize) {
        if depth > self.plan.limits.max_depth
            || !matches!(url.scheme(), "http" | "https")
            || !self.plan.scope.admits(&url)
        {
            return;
        }
        if self.seen.insert(url.as_str().to_owned()) {
            self.queue.push_back((url, depth));
        }
    }

    /// Sends `found` to the job; false once the job stopped listening.
    async fn send(&mut self, found: Found) -> bool {
        if matches!(found, Found::Page { .. } | Found::Unchanged { .. }) {
            self.taken += 1;
        }
        self.out.send(found).await.is_ok()
    }

    /// Runs the queue to its end or a bound. Returns whether everything
    /// in scope was visited.
    async fn run(&mut self) -> bool {
        // Each request is a task of its own, so it goes on while the crawl
        // waits for the job to take a page (embedding holds it up): polled
        // only when the crawl came back to them, requests ran out their
        // time limit unanswered. A `JoinSet` aborts them if the crawl ends.
        let mut flights = tokio::task::JoinSet::new();
        loop {
            // Start requests while there is room, pages left to take and time.
            while flights.len() < self.plan.concurrency
                && self.taken + flights.len() < self.plan.limits.max_pages
                && Instant::now() < self.plan.deadline
            {
                let Some((url, depth)) = self.queue.pop_front() else {
                    break;
                };
                if let Err(reason) = self.robots_allow(&url).await {
                    if !self
                        .send(Found::Skipped {
                            address: url.to_string(),
                            reason,
                        })
                        .await
                    {
                        return false;
                    }
                    continue;
                }
                if let Some(body) = self.prefetched(&url) {
                    if !self.landed(url, depth, Ok(Fetched::Body(body))).await {
                        return false;
                    }
                    continue;
                }
                let at = self.slot(&url);
                let fetcher = self.fetcher.clone();
                let validators = self
                    .previous
                    .get(url.as_str())
                    .map(|r| r.validators.clone());
                flights.spawn(async move {
                    tokio::time::sleep_until(at).await;
                    let fetched = fetcher.get(&url, validators.as_ref()).await;
                    (url, depth, fetched)
                });
            }
            if flights.is_empty() {
                break;
            }
            let Ok(Some(flight)) =
                tokio::time::timeout_at(self.plan.deadline, flights.join_next()).await
            else {
                break;
            };
            let Ok((url, depth, fetched)) = flight else {
                // A request task that panicked: its page is not known, so
                // nothing can be said of it; the crawl goes on.
                tracing::error!("a page request failed unexpectedly");
                continue;
            };
            if !self.landed(url, depth, fetched).await {
                return false;
            }
        }
        let left = self.queue.len() + flights.len();
        if left == 0 {
            return true;
        }
        if Instant::now() >= self.plan.deadline {
            self.notes.push(format!(
                "the crawl ran out of time with {left} page(s) not fetched; pages of the last crawl that were not reached are kept"
            ));
        } else {
            self.notes.push(format!(
                "the crawl stopped at its limit of {} pages with {left} more found; pages of the last crawl that were not reached are kept",
                self.plan.limits.max_pages
            ));
        }
        false
    }

    /// The start page as the plan holds it, once, if `url` is the start.
    fn prefetched(&mut self, url: &Url) -> Option<Body> {
        self.plan.start_page.as_ref()?;
        if *url != normalized(self.plan.start.clone()) {
            return None;
        }
        self.plan.start_page.take().map(|body| *body)
    }

    /// When the next request to `url`'s host may start, and books it.
    fn slot(&mut self, url: &Url) -> Instant {
        let host = url.host_str().unwrap_or_default().to_owned();
        let delay = self
            .robots
            .get(&url.origin().ascii_serialization())
            .and_then(|r| r.delay)
            .unwrap_or_default();
        let interval = self.plan.interval.max(delay);
        let now = Instant::now();
        let next = self.next_slot.entry(host).or_insert(now);
        let at = (*next).max(now);
        *next = at + interval;
        at
    }

    async fn robots_allow(&mut self, url: &Url) -> Result<(), String> {
        let origin = url.origin().ascii_serialization();
        if !self.robots.contains_key(&origin) {
            let robots = Robots::fetch(self.fetcher, url).await;
            self.robots.insert(origin.clone(), robots);
        }
        self.robots.get(&origin).map_or(Ok(()), |r| r.allows(url))
    }

    /// Handles one finished request. Returns false once the job stopped
    /// listening.
    async fn landed(
        &mut self,
        url: Url,
        depth: usize,
        fetched: Result<Fetched, FetchError>,
    ) -> bool {
        let address = url.as_str().to_owned();
        match fetched {
            Err(err) => {
                // Whether a credential went with this request: it goes to
                // the start URL's origin only.
                let sent = self
                    .plan
                    .credential
                    .as_ref()
                    .is_some_and(|c| c.header_for(&url).is_some());
                let found = Found::failed(address, &err, sent);
                self.send(found).await
            }
            Ok(Fetched::NotModified { .. }) => {
                let record = self.previous.get(&address).cloned().unwrap_or_default();
                // A record names its links as the source does.
                let alias = self.plan.scope.alias();
                let mapped: Option<Vec<String>> =
                    alias.map(|alias| record.links.iter().map(|l| alias.fetched(l)).collect());
                self.follow(mapped.as_deref().unwrap_or(&record.links), depth);
                self.addresses.insert(address.clone());
                self.send(Found::Unchanged { address, record }).await
            }
            Ok(Fetched::Body(body)) => self.page(url, depth, body).await,
        }
    }

    async fn page(&mut self, asked: Url, depth: usize, body: Body) -> bool {
        let fetched_at = normalized(body.url.clone());
        if fetched_at != asked {
            // Redirected: the page is where it landed.
            if !self.plan.scope.within(&fetched_at) {
                let reason = format!("redirected out of the crawl's scope, to {fetched_at}");
                return self
                    .send(Found::Skipped {
                        address: asked.to_string(),
                        reason,
                    })
                    .await;
            }
            self.seen.insert(fetched_at.as_str().to_owned());
        }
        let Some(format) = format_of(body.content_type.as_deref(), &fetched_at) else {
            let reason = format!(
                "not a document ({})",
                body.content_type.as_deref().unwrap_or("no content type")
            );
            return self
                .send(Found::Skipped {
                    address: fetched_at.to_string(),
                    reason,
                })
                .await;
        };
        let mut address = fetched_at.clone();
        let mut links = Vec::new();
        let mut noindex = false;
        if format == Format::Html {
            let found = page_links(&body.bytes);
            let base = found
                .base
                .as_deref()
                .and_then(|b| fetched_at.join(b).ok())
                .unwrap_or_else(|| fetched_at.clone());
            if let Some(canonical) = found.canonical.as_deref().and_then(|c| base.join(c).ok()) {
                let canonical = self.plan.scope.fetched(normalized(canonical));
                // A canonical address elsewhere is not trusted: a page
                // cannot claim to be another site's.
                if self.plan.scope.within(&canonical) {
                    self.seen.insert(canonical.as_str().to_owned());
                    address = canonical;
                }
            }
            if !found.nofollow {
                links = found
                    .hrefs
                    .iter()
                    .filter_map(|h| base.join(h).ok())
                    .map(|u| self.plan.scope.fetched(normalized(u)))
                    .filter(|u| self.plan.scope.admits(u))
                    .map(String::from)
                    .collect();
                links.dedup();
            }
            noindex = found.noindex;
        }
        self.follow(&links, depth);
        let address = address.to_string();
        if noindex {
            let reason = "the page asks not to be indexed (robots noindex)".to_owned();
            return self.send(Found::Skipped { address, reason }).await;
        }
        if !self.addresses.insert(address.clone()) {
            // Taken already, under this address. Reported under the URL
            // that led here, unless that is the address itself (the page
            // was first reached by another URL naming it canonical).
            if asked.as_str() == address {
                return true;
            }
            let reason = format!("the same page as {address} (canonical address or redirect)");
            return self
                .send(Found::Skipped {
                    address: asked.to_string(),
                    reason,
                })
                .await;
        }
        let found = self.found(address, format, body, links);
        self.send(found).await
    }

    /// A fetched page, new or changed, or as the last crawl stored it
    /// (the same bytes: nothing to read again).
    fn found(&self, address: String, format: Format, body: Body, links: Vec<String>) -> Found {
        let record = PageRecord {
            validators: body.validators,
            hash: content_hash(&body.bytes),
            links,
        };
        let unchanged = self
            .previous
            .get(&address)
            .is_some_and(|last| last.hash == record.hash);
        if unchanged {
            Found::Unchanged { address, record }
        } else {
            Found::Page {
                address,
                format,
                bytes: body.bytes,
                record,
            }
        }
    }

    /// Queues a page's links, as fetched, one level deeper.
    fn follow(&mut self, links: &[String], depth: usize) {
        for url in links.iter().filter_map(|link| Url::parse(link).ok()) {
            self.enqueue(url, depth + 1);
        }
    }
}

/// How a fetched body is read: by its media type, else by its URL's
/// extension. Archives are never taken from a crawl.
fn format_of(content_type: Option<&str>, url: &Url) -> Option<Format> {
    Format::from_media_type(content_type, url.path()).filter(|f| !f.is_archive())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The media-type table is `Format`'s (tested there); a crawl adds
    /// only that archives are never taken.
    #[test]
    fn archives_are_never_taken_from_a_crawl() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(format_of(None, &url("https://x.io/a.zip")), None);
        assert_eq!(format_of(None, &url("https://x.io/a.tar.gz")), None);
        assert_eq!(
            format_of(Some("application/zip"), &url("https://x.io/get?id=1")),
            None
        );
        assert_eq!(
            format_of(Some("text/html"), &url("https://x.io/a")),
            Some(Format::Html)
        );
    }
}
