//! The pages a site's sitemaps list, queued as if linked from the start
//! page: robots.txt's `Sitemap:` lines, else `/sitemap.xml` (and one in
//! the crawl's folder), on the start page's origin only.

use std::collections::VecDeque;

use tokio::time::Instant;
use url::Url;

use super::{Crawl, MAX_SITEMAPS};
use crate::source::scope::normalized;
use crate::source::sitemap;

impl Crawl<'_> {
    /// Queues the pages the site's sitemaps list (robots.txt's `Sitemap:`
    /// lines, else `/sitemap.xml`), as if linked from the start page.
    pub(super) async fn sitemaps(&mut self, start: &Url) {
        if self.robots_allow(start).await.is_err() {
            return;
        }
        let origin = start.origin().ascii_serialization();
        let mut todo: VecDeque<String> = self
            .robots
            .get(&origin)
            .map(|r| r.sitemaps.clone())
            .unwrap_or_default()
            .into();
        if todo.is_empty() {
            todo.push_back(format!("{origin}/sitemap.xml"));
            if self.plan.scope.start_folder() != "/" {
                todo.push_back(format!(
                    "{origin}{}sitemap.xml",
                    self.plan.scope.start_folder()
                ));
            }
        }
        let mut read = 0;
        let mut listed = 0;
        while let Some(next) = todo.pop_front() {
            if read == MAX_SITEMAPS || Instant::now() >= self.plan.deadline {
                break;
            }
            let Ok(url) = Url::parse(&next).map(|u| self.plan.scope.fetched(u)) else {
                continue;
            };
            // Sitemaps elsewhere are not read: a crawl stays on its site.
            if url.origin() != start.origin() {
                continue;
            }
            read += 1;
            let Ok(body) = self.fetcher.get_body(&url).await else {
                continue;
            };
            let map = sitemap::parse(&body.bytes);
            todo.extend(map.sitemaps);
            for page in map.pages {
                if let Ok(url) = Url::parse(&page) {
                    listed += 1;
                    self.enqueue(self.plan.scope.fetched(normalized(url)), 1);
                }
            }
        }
        if listed > 0 {
            tracing::info!(listed, "pages listed by the site's sitemap");
        }
    }
}
