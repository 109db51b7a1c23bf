//! A repository's tags and branches (`git ls-remote`), and which commit a
//! source reads: the ref asked for, or the repository's default branch.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::remote::Remote;
use super::GitError;
use crate::process::Bounds;
use crate::source::releases::{self, Track};

/// What a ref names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Tag,
    Branch,
    Commit,
}

/// The commit a source reads, and the name it goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: RefKind,
    /// The tag or branch name, or the commit id as given.
    pub name: String,
    /// What `git fetch` asks for: `refs/tags/v1.2`, `refs/heads/main`, or
    /// the commit id.
    pub fetch: String,
}

impl Target {
    /// The version a source stores it as when none is given: a tag's or
    /// branch's name, a commit's first 12 characters.
    pub fn version(&self) -> String {
        match self.kind {
            RefKind::Commit => self.name.chars().take(12).collect(),
            RefKind::Tag | RefKind::Branch => self.name.clone(),
        }
    }
}

/// The refs a repository advertises.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refs {
    /// The branch `HEAD` points to.
    pub head: Option<String>,
    pub tags: Vec<String>,
    pub branches: Vec<String>,
}

impl Refs {
    /// Reads `git ls-remote --symref` output.
    pub fn parse(out: &str) -> Self {
        let mut refs = Self::default();
        for line in out.lines() {
            let Some((left, name)) = line.split_once('\t') else {
                continue;
            };
            if let Some(target) = left.strip_prefix("ref: ") {
                if name == "HEAD" {
                    refs.head = target.strip_prefix("refs/heads/").map(str::to_owned);
                }
                continue;
            }
            if let Some(tag) = name.strip_prefix("refs/tags/") {
                if !tag.ends_with("^{}") {
                    refs.tags.push(tag.to_owned());
                }
            } else if let Some(branch) = name.strip_prefix("refs/heads/") {
                refs.branches.push(branch.to_owned());
            }
        }
        refs
    }

    /// The newest tags, by version order (`v1.10` after `v1.9`): what an
    /// error lists.
    pub fn newest_tags(&self) -> Vec<String> {
        releases::newest(self.tags.iter().map(String::as_str), releases::LISTED)
    }

    /// The tags `track` follows, newest first.
    pub fn releases(&self, track: &Track) -> Vec<&str> {
        track.newest_first(self.tags.iter().map(String::as_str))
    }

    /// The commit to read: `given` as a tag, else a branch, else a commit
    /// id (7 to 40 hex digits); without one, the default branch.
    pub fn choose(&self, url: &str, given: Option<&str>) -> Result<Target, GitError> {
        let Some(given) = given.map(str::trim).filter(|g| !g.is_empty()) else {
            let branch = self
                .head
                .clone()
                .or_else(|| self.branches.first().cloned())
                .ok_or_else(|| GitError::NoRef(url.to_owned()))?;
            return Ok(Target {
                kind: RefKind::Branch,
                fetch: format!("refs/heads/{branch}"),
                name: branch,
            });
        };
        let given = given
            .strip_prefix("refs/tags/")
            .or_else(|| given.strip_prefix("refs/heads/"))
            .unwrap_or(given);
        if self.tags.iter().any(|t| t == given) {
            return Ok(Target {
                kind: RefKind::Tag,
                name: given.to_owned(),
                fetch: format!("refs/tags/{given}"),
            });
        }
        if self.branches.iter().any(|b| b == given) {
            return Ok(Target {
                kind: RefKind::Branch,
                name: given.to_owned(),
                fetch: format!("refs/heads/{given}"),
            });
        }
        if (7..=40).contains(&given.len()) && given.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Target {
                kind: RefKind::Commit,
                name: given.to_ascii_lowercase(),
                fetch: given.to_ascii_lowercase(),
            });
        }
        Err(GitError::UnknownRef {
            url: url.to_owned(),
            given: index_core::validate::cut(given, 100),
            tags: self.newest_tags(),
        })
    }
}

/// Lists `remote`'s refs (on a blocking thread: git runs to its end).
pub async fn list(remote: &Remote) -> Result<Refs, GitError> {
    let remote = remote.clone();
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().map_err(|e| GitError::Local(e.to_string()))?;
        let bounds = Bounds {
            cpu: Duration::from_secs(60),
            wall: Duration::from_secs(120),
            memory_bytes: 1 << 30,
            file_bytes: Some(64 << 20),
        };
        let url = remote.url().to_string();
        let out = remote.run(
            dir.path(),
            &["ls-remote", "--symref", &url],
            &bounds,
            &AtomicBool::new(false),
        )?;
        Ok(Refs::parse(&String::from_utf8_lossy(&out)))
    })
    .await
    .map_err(|e| GitError::Tool(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "ref: refs/heads/main\tHEAD\n\
        1111111111111111111111111111111111111111\tHEAD\n\
        1111111111111111111111111111111111111111\trefs/heads/main\n\
        2222222222222222222222222222222222222222\trefs/heads/next\n\
        3333333333333333333333333333333333333333\trefs/tags/v1.9.0\n\
        4444444444444444444444444444444444444444\trefs/tags/v1.9.0^{}\n\
        5555555555555555555555555555555555555555\trefs/tags/v1.10.0\n";

    #[test]
    fn a_listing_reads_as_head_tags_and_branches() {
        let refs = Refs::parse(LISTING);
        assert_eq!(refs.head.as_deref(), Some("main"));
        assert_eq!(refs.branches, ["main", "next"]);
        assert_eq!(refs.newest_tags(), ["v1.10.0", "v1.9.0"]);
    }

    #[test]
    fn a_ref_is_a_tag_a_branch_or_a_commit() {
        let refs = Refs::parse(LISTING);
        let url = "https://x/r.git";
        let default = refs.choose(url, None).unwrap();
        assert_eq!(
            (default.kind, default.version()),
            (RefKind::Branch, "main".into())
        );
        let tag = refs.choose(url, Some("v1.9.0")).unwrap();
        assert_eq!(tag.fetch, "refs/tags/v1.9.0");
        assert_eq!(tag.version(), "v1.9.0");
        let commit = refs.choose(url, Some("ABCDEF1234567")).unwrap();
        assert_eq!(
            (commit.kind, commit.version()),
            (RefKind::Commit, "abcdef123456".into())
        );
        let err = refs.choose(url, Some("v2")).unwrap_err().to_string();
        assert!(err.contains("v1.10.0, v1.9.0"), "{err}");
    }
}
