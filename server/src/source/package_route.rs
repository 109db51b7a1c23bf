//! Where a package's documentation is taken from: a package's archive
//! usually holds only its README, while its docs live in its Git
//! repository (`docs/`, a book, `website/docs`). The route, in order:
//!
//! 1. the Git repository the package's metadata names
//!    ([`ingest_core::package_meta`]), at the release's tag, when the tag
//!    is found and the tree has a docs folder (found once its tree is
//!    listed: [`PackageRoute::after_repository`] then goes on);
//! 2. else the documentation site it names, crawled within bounds (docs.rs
//!    for a crate, at the release's own address there);
//! 3. else the package archive, as uploaded packages are read.
//!
//! Each route not taken is said in the job's notes with its reason, and
//! `from` (`repo`, `site`, `package`) overrides the choice.

use std::time::Duration;

use index_core::source::{CrawlLimits, CrawlScope, DocsFrom};
use ingest_core::docs_tree::DocsSelection;
use ingest_core::extract::ArchiveLimits;
use ingest_core::package::Registry;
use ingest_core::package_meta::{https_repository, package_links, PackageLinks};
use url::Url;

use super::crawl::Plan;
use super::fetch::{Fetched, Fetcher};
use super::git::{self, GitPlan, Remote};
use super::registry::Release;
use super::scope::Scope;
use super::{AddressPolicy, Rewrites};

/// What a package source needs to follow its metadata.
#[derive(Debug, Clone)]
pub struct PackageRoute {
    /// The package's name (`attrs`, `@scope/name`).
    pub name: String,
    pub registry: Registry,
    pub from: Option<DocsFrom>,
    pub rewrites: Rewrites,
    pub policy: AddressPolicy,
    pub limits: ArchiveLimits,
    /// Include globs and a page bound, when the request gives them.
    pub selection: DocsSelection,
    /// How a documentation site is crawled.
    pub crawl: SiteCrawl,
    /// When the fetch must have ended.
    pub deadline: tokio::time::Instant,
}

/// The bounds and pace of a package's documentation site's crawl.
#[derive(Debug, Clone, Copy)]
pub struct SiteCrawl {
    pub limits: CrawlLimits,
    pub interval: Duration,
    pub concurrency: usize,
}

/// The route taken.
pub enum Chosen {
    Repository(Box<GitPlan>),
    /// The site's crawl, and the note saying where it comes from.
    Site(Box<Plan>, String),
    Archive,
    /// The route asked for (`from: repo`) cannot be taken, for this reason.
    Refused(String),
}

impl PackageRoute {
    /// Chooses where `release`'s documentation comes from, given its
    /// downloaded archive `bytes`; says why in `notes`.
    pub async fn choose(
        &self,
        fetcher: &Fetcher,
        release: &Release,
        bytes: &[u8],
        notes: &mut Vec<String>,
    ) -> Chosen {
        if self.from == Some(DocsFrom::Package) {
            notes.push(
                "documentation taken from the package archive, as asked (from: package)".into(),
            );
            return Chosen::Archive;
        }
        let links = package_links(&release.file_name, bytes);
        if self.from != Some(DocsFrom::Site) {
            match self.repository(release, &links).await {
                Ok(plan) => return Chosen::Repository(Box::new(plan)),
                Err(why) if self.from == Some(DocsFrom::Repo) => {
                    return Chosen::Refused(format!(
                        "the Git repository cannot be used (from: repo): {why}"
                    ))
                }
                Err(why) => notes.push(format!("the Git repository was not used: {why}")),
            }
        }
        self.site_or_archive(fetcher, release, &links, notes).await
    }

    /// The routes after the repository, for a repository found without a
    /// docs folder once its tree is listed: the site the package names,
    /// else the archive.
    pub async fn after_repository(
        &self,
        fetcher: &Fetcher,
        release: &Release,
        bytes: &[u8],
        notes: &mut Vec<String>,
    ) -> Chosen {
        let links = package_links(&release.file_name, bytes);
        self.site_or_archive(fetcher, release, &links, notes).await
    }

    async fn site_or_archive(
        &self,
        fetcher: &Fetcher,
        release: &Release,
        links: &PackageLinks,
        notes: &mut Vec<String>,
    ) -> Chosen {
        match self.site(fetcher, release, links).await {
            Ok((plan, origin)) => return Chosen::Site(Box::new(plan), origin),
            Err(why) if self.from == Some(DocsFrom::Site) => {
                return Chosen::Refused(format!(
                    "the documentation site cannot be used (from: site): {why}"
                ))
            }
            Err(why) => notes.push(format!("the documentation site was not crawled: {why}")),
        }
        notes.push("documentation taken from the package archive".into());
        Chosen::Archive
    }

    /// The crawl of the first documentation site the metadata names that
    /// answers, or why none was taken. Each start page is fetched first,
    /// so that a site that cannot be reached leaves the next one (and the
    /// archive) to be read instead of a failed crawl.
    async fn site(
        &self,
        fetcher: &Fetcher,
        release: &Release,
        links: &PackageLinks,
    ) -> Result<(Plan, String), String> {
        let sites = links.documentation_sites(self.registry, &self.name, &release.version);
        if sites.is_empty() {
            return Err("the package's metadata names no documentation site".into());
        }
        let mut refused = Vec::new();
        for (site, field) in sites {
            match self.site_plan(fetcher, release, &site, &field).await {
                Ok((plan, origin)) if refused.is_empty() => return Ok((plan, origin)),
                Ok((plan, origin)) => {
                    let origin = format!("{origin} (not {})", refused.join("; "));
                    return Ok((plan, origin));
                }
                Err(why) => refused.push(why),
            }
        }
        Err(refused.join("; "))
    }

    /// The crawl of `site`, named by `field`, if its start page answers.
    async fn site_plan(
        &self,
        fetcher: &Fetcher,
        release: &Release,
        site: &str,
        field: &str,
    ) -> Result<(Plan, String), String> {
        let named = Url::parse(site)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| format!("{site} (named by {field}) is not an http(s) URL"))?;
        // The scope is the site's; through a mirror, the crawl fetches
        // the mirror's copy of it.
        let scope = Scope::new(&named, CrawlScope::Prefix, &[], &[])
            .map_err(|e| format!("{site}: {e}"))?
            .through(self.rewrites.alias(site));
        let start = scope.fetched(named.clone());
        let start_page = match fetcher.get(&start, None).await {
            Ok(Fetched::Body(body)) => Some(Box::new(body)),
            // Not asked conditionally, so never "not modified".
            Ok(Fetched::NotModified { .. }) => None,
            Err(e) => return Err(format!("{site} (named by {field}) cannot be fetched: {e}")),
        };
        let shown = if start == named {
            site.to_owned()
        } else {
            format!("{site} (fetched from {start})")
        };
        tracing::info!(site = %shown, "a package followed to its documentation site");
        let pinned = if site.contains(&release.version) {
            "this release's own pages"
        } else {
            "the site as it is now, which may document another release"
        };
        let origin = format!(
            "documentation taken from the site {shown}, named by the package's {field}: {pinned}, at most {} pages",
            self.crawl.limits.max_pages
        );
        let plan = Plan {
            start,
            scope,
            limits: self.crawl.limits,
            llms_txt: false,
            interval: self.crawl.interval,
            concurrency: self.crawl.concurrency,
            deadline: self.deadline,
            credential: None,
            start_page,
        };
        Ok((plan, origin))
    }

    /// The repository at the release's tag, or why not.
    async fn repository(&self, release: &Release, links: &PackageLinks) -> Result<GitPlan, String> {
        let named = links
            .repository
            .iter()
            .chain(links.homepage.iter())
            .find_map(|raw| {
                let https = https_repository(raw)?;
                git::repository_url(&https).map(|url| (raw.clone(), url))
            });
        let Some((raw, url)) = named else {
            return Err("the package's metadata names no Git repository".into());
        };
        let field = links.field_of(&raw).unwrap_or("its metadata");
        let fetched = self.rewrites.apply(url.as_str());
        let fetch_url = Url::parse(&fetched).map_err(|e| format!("{fetched}: {e}"))?;
        let remote = Remote::connect(&fetch_url, &self.policy, None)
            .await
            .map_err(|e| format!("{url} (named by {field}): {e}"))?;
        let refs = git::refs::list(&remote)
            .await
            .map_err(|e| format!("{url} (named by {field}): {e}"))?;
        let candidates = tag_candidates(&self.name, &release.version);
        let Some(tag) = candidates.iter().find(|c| refs.tags.contains(c)) else {
            return Err(format!(
                "{url} (named by {field}) has no tag for {} (looked for {})",
                release.version,
                candidates.join(", ")
            ));
        };
        let target = refs
            .choose(url.as_str(), Some(tag))
            .map_err(|e| e.to_string())?;
        let shown = if fetched == url.as_str() {
            url.to_string()
        } else {
            format!("{url} (fetched from {fetched})")
        };
        tracing::info!(repository = %shown, tag, "a package followed to its repository");
        Ok(GitPlan {
            remote,
            target,
            docs_path: None,
            limits: self.limits,
            selection: self.selection.clone(),
            deadline: self.deadline,
            origin: Some(format!(
                "the Git repository {shown} at tag {tag}, named by the package's {field}"
            )),
            source_url: url.to_string(),
            // Without a docs folder, the site or the archive is likelier
            // documentation than a README and governance files, unless
            // the repository is asked for.
            needs_folder: self.from != Some(DocsFrom::Repo),
        })
    }
}

/// The tags a release of `name` at `version` may carry, in the order
/// projects use them most.
fn tag_candidates(name: &str, version: &str) -> Vec<String> {
    let short = name.rsplit('/').next().unwrap_or(name);
    let mut tags = vec![
        format!("v{version}"),
        version.to_owned(),
        format!("{short}-{version}"),
        format!("{short}-v{version}"),
        format!("{short}@{version}"),
        format!("{name}@{version}"),
        format!("release-{version}"),
        format!("{short}_{version}"),
    ];
    tags.dedup();
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_tried_as_projects_write_them() {
        let tags = tag_candidates("@scope/zod", "3.23.8");
        assert_eq!(&tags[..3], ["v3.23.8", "3.23.8", "zod-3.23.8"]);
        assert!(tags.contains(&"@scope/zod@3.23.8".to_owned()));
    }
}
