//! A site's `llms-full.txt` (its whole documentation in one Markdown
//! file) or `llms.txt` (a list of pages), read instead of crawling where
//! asked for and offered. Whatever of them cannot be used is listed in the
//! job with its reason, and the site is then crawled, as documented.

use index_core::format::Format;
use url::Url;

use super::{Crawl, Found, Llms};
use crate::source::scope::normalized;

impl Crawl<'_> {
    /// Reads the site's `llms-full.txt`, else queues what its `llms.txt`
    /// lists; `None` when it offers neither, or nothing of them can be
    /// taken: the caller then crawls the site, as documented. Whatever is
    /// refused on the way (a file past its bound, links outside the
    /// crawl's scope) is listed in the job with its reason, so a crawl
    /// that ends with nothing says why.
    pub(super) async fn llms_txt(&mut self, start: &Url) -> Option<Llms> {
        let prefix = self.plan.scope.start_folder().to_owned();
        let root = self.plan.scope.fetched_root();
        // Beside the start page, then at the site's root.
        let places = |name: &str| -> Vec<Url> {
            let mut urls: Vec<Url> = [
                start.join(&format!("{prefix}{name}")).ok(),
                root.as_ref().and_then(|root| root.join(name).ok()),
            ]
            .into_iter()
            .flatten()
            .collect();
            urls.dedup();
            urls
        };
        for url in places("llms-full.txt") {
            if self.robots_allow(&url).await.is_err() {
                continue;
            }
            match self.fetcher.get_body(&url).await {
                Ok(body) => {
                    let address = url.to_string();
                    self.addresses.insert(address.clone());
                    let found = self.found(address, Format::Markdown, body, Vec::new());
                    self.send(found).await;
                    return Some(Llms::Full);
                }
                // Not offered there: nothing to say.
                Err(err) if err.is_gone() => {}
                Err(err) => {
                    let reason = format!("llms-full.txt could not be read: {err}");
                    self.notes.push(format!("{url}: {reason}"));
                    let address = url.to_string();
                    self.send(Found::Failed {
                        address,
                        reason,
                        gone: false,
                    })
                    .await;
                }
            }
        }
        for url in places("llms.txt") {
            if self.robots_allow(&url).await.is_err() {
                continue;
            }
            let body = match self.fetcher.get_body(&url).await {
                Ok(body) => body,
                Err(err) if err.is_gone() => continue,
                Err(err) => {
                    let reason = format!("llms.txt could not be read: {err}");
                    self.notes.push(format!("{url}: {reason}"));
                    self.send(Found::Failed {
                        address: url.to_string(),
                        reason,
                        gone: false,
                    })
                    .await;
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&body.bytes).into_owned();
            // The pages llms.txt lists are taken, not what they link.
            let depth = self.plan.limits.max_depth;
            let (mut queued, mut refused) = (0, 0);
            for link in markdown_links(&text) {
                let Ok(page) = url.join(link) else { continue };
                let page = self.plan.scope.fetched(normalized(page));
                if matches!(page.scheme(), "http" | "https") && self.plan.scope.admits(&page) {
                    self.enqueue(page, depth);
                    queued += 1;
                } else {
                    refused += 1;
                    let reason = format!(
                        "listed by {url}, but outside the crawl's scope ({}{})",
                        start.origin().ascii_serialization(),
                        self.plan.scope.start_folder()
                    );
                    self.send(Found::Skipped {
                        address: page.to_string(),
                        reason,
                    })
                    .await;
                }
            }
            if queued > 0 {
                return Some(Llms::Index);
            }
            self.notes.push(format!(
                "{url} lists no page within the crawl's scope ({refused} outside it); \
                 the site's pages were crawled instead"
            ));
            return None;
        }
        self.notes.push(
            "the site offers no usable llms.txt or llms-full.txt; its pages were crawled instead"
                .into(),
        );
        None
    }
}

/// The targets of Markdown links, `[text](target)`, in `text`.
fn markdown_links(text: &str) -> impl Iterator<Item = &str> {
    text.split("](").skip(1).filter_map(|rest| {
        let end = rest.find([')', ' '])?;
        let target = rest[..end].trim();
        (!target.is_empty()).then_some(target)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llms_txt_links_are_read() {
        let text = "# X\n\n- [Intro](https://x.io/intro.md): start here\n- [API](/api.md)\n";
        assert_eq!(
            markdown_links(text).collect::<Vec<_>>(),
            ["https://x.io/intro.md", "/api.md"]
        );
    }
}
