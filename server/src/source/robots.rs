//! A site's `robots.txt`: which pages docshelf may fetch, how slowly, and
//! where its sitemaps are.
//!
//! Read as RFC 9309 says: a robots.txt that does not exist (any 4xx)
//! allows everything; one that cannot be read (5xx, no connection) allows
//! nothing, since the site may be saying "not now" to everyone.

use std::time::Duration;

use url::Url;

use super::fetch::{FetchError, Fetcher};

/// The rules docshelf follows are those for this user agent (or `*`).
const AGENT: &str = "docshelf";

/// Of a robots.txt larger than this only this much is read (RFC 9309 asks
/// crawlers to read at least 500 KiB).
const MAX_BYTES: u64 = 512 * 1024;

/// The longest `Crawl-delay` honoured: a site asking for more is crawled
/// this slowly, and a crawl's time limit ends it.
pub const MAX_DELAY: Duration = Duration::from_secs(30);

/// What one origin's robots.txt says.
#[derive(Debug)]
pub struct Robots {
    rules: Rules,
    /// `Crawl-delay`, at most [`MAX_DELAY`].
    pub delay: Option<Duration>,
    /// `Sitemap:` lines, as written.
    pub sitemaps: Vec<String>,
}

#[derive(Debug)]
enum Rules {
    All,
    Nothing(String),
    Parsed(Box<texting_robots::Robot>),
}

impl Robots {
    /// Fetches and reads the robots.txt of `page`'s origin.
    pub async fn fetch(fetcher: &Fetcher, page: &Url) -> Self {
        let Ok(url) = page.join("/robots.txt") else {
            return Self::allowing_all();
        };
        match fetcher.with_max_bytes(MAX_BYTES).get_body(&url).await {
            Ok(body) => Self::parse(&body.bytes),
            Err(FetchError::TooLarge(_)) => Self::allowing_all(),
            Err(FetchError::Status(code)) if (400..500).contains(&code) => Self::allowing_all(),
            // The site itself does not answer: said as such, not as a
            // robots.txt problem.
            Err(err @ (FetchError::Network(_) | FetchError::Timeout(_) | FetchError::Refused(_))) => {
                Self {
                    rules: Rules::Nothing(format!("the site cannot be reached: {err}")),
                    delay: None,
                    sitemaps: Vec::new(),
                }
            }
            Err(err) => Self {
                rules: Rules::Nothing(format!(
                    "the site's robots.txt could not be read ({err}), which means no page may be fetched for now"
                )),
                delay: None,
                sitemaps: Vec::new(),
            },
        }
    }

    pub fn parse(txt: &[u8]) -> Self {
        match texting_robots::Robot::new(AGENT, txt) {
            Ok(robot) => Self {
                delay: robot
                    .delay
                    .filter(|d| d.is_finite() && *d > 0.0)
                    .map(|d| Duration::from_secs_f32(d).min(MAX_DELAY)),
                sitemaps: robot.sitemaps.clone(),
                rules: Rules::Parsed(Box::new(robot)),
            },
            // Unparseable: as if absent.
            Err(_) => Self::allowing_all(),
        }
    }

    fn allowing_all() -> Self {
        Self {
            rules: Rules::All,
            delay: None,
            sitemaps: Vec::new(),
        }
    }

    /// `Ok` if docshelf may fetch `url`, else why not.
    pub fn allows(&self, url: &Url) -> Result<(), String> {
        match &self.rules {
            Rules::All => Ok(()),
            Rules::Nothing(why) => Err(why.clone()),
            Rules::Parsed(robot) if robot.allowed(url.as_str()) => Ok(()),
            Rules::Parsed(_) => Err("the site's robots.txt disallows it".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_for_docshelf_or_everyone_are_followed() {
        let robots = Robots::parse(
            b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: https://x.io/sitemap.xml\n",
        );
        assert!(robots
            .allows(&Url::parse("https://x.io/docs/a.html").unwrap())
            .is_ok());
        assert!(robots
            .allows(&Url::parse("https://x.io/private/a.html").unwrap())
            .is_err());
        assert_eq!(robots.delay, Some(Duration::from_secs(2)));
        assert_eq!(robots.sitemaps, ["https://x.io/sitemap.xml"]);
        let specific =
            Robots::parse(b"User-agent: docshelf\nDisallow: /\n\nUser-agent: *\nAllow: /\n");
        assert!(specific
            .allows(&Url::parse("https://x.io/a").unwrap())
            .is_err());
    }

    #[test]
    fn a_huge_crawl_delay_is_capped() {
        let robots = Robots::parse(b"User-agent: *\nCrawl-delay: 86400\n");
        assert_eq!(robots.delay, Some(MAX_DELAY));
    }
}
