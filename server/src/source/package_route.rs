//! Where a package's documentation is taken from: a package's archive
//! usually holds only its README, while its docs live in its Git
//! repository (`docs/`, a book, `website/docs`). The route, in order:
//!
//! 1. the Git repository the package's metadata names
//!    ([`ingest_core::package_meta`]), at the release's tag, when the tag
//!    is found;
//! 2. else the package archive, as uploaded packages are read.
//!
//! Each route not taken is said in the job's notes with its reason, and
//! `from` (`repo`, `package`) overrides the choice. Following a package to
//! the documentation site its metadata names is not built yet: the job
//! names the site, to be added as a site source.

use index_core::source::DocsFrom;
use ingest_core::docs_tree::DocsSelection;
use ingest_core::extract::ArchiveLimits;
use ingest_core::package_meta::{https_repository, package_links, PackageLinks};
use url::Url;

use super::git::{self, GitPlan, Remote};
use super::registry::Release;
use super::{AddressPolicy, Rewrites};

/// What a package source needs to follow its metadata.
#[derive(Debug, Clone)]
pub struct PackageRoute {
    /// The package's name (`attrs`, `@scope/name`).
    pub name: String,
    pub from: Option<DocsFrom>,
    pub rewrites: Rewrites,
    pub policy: AddressPolicy,
    pub limits: ArchiveLimits,
    /// Include globs and a page bound, when the request gives them.
    pub selection: DocsSelection,
    /// When the fetch must have ended.
    pub deadline: tokio::time::Instant,
}

/// The route taken.
pub enum Chosen {
    Repository(Box<GitPlan>),
    Archive,
    /// The route asked for (`from: repo`) cannot be taken, for this reason.
    Refused(String),
}

impl PackageRoute {
    /// Chooses where `release`'s documentation comes from, given its
    /// downloaded archive `bytes`; says why in `notes`.
    pub async fn choose(&self, release: &Release, bytes: &[u8], notes: &mut Vec<String>) -> Chosen {
        if self.from == Some(DocsFrom::Package) {
            notes.push(
                "documentation taken from the package archive, as asked (from: package)".into(),
            );
            return Chosen::Archive;
        }
        let links = package_links(&release.file_name, bytes);
        match self.repository(release, &links).await {
            Ok(plan) => return Chosen::Repository(Box::new(plan)),
            Err(why) if self.from == Some(DocsFrom::Repo) => {
                return Chosen::Refused(format!(
                    "the Git repository cannot be used (from: repo): {why}"
                ))
            }
            Err(why) => notes.push(format!("the Git repository was not used: {why}")),
        }
        if let Some(site) = links.documentation.as_deref() {
            notes.push(format!(
                "the documentation site {site} was not crawled: a package is not followed to its site yet; add the site as a source of its own"
            ));
        }
        notes.push("documentation taken from the package archive".into());
        Chosen::Archive
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
