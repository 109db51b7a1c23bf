//! The docs folder of one commit, fetched alone: a shallow fetch of the
//! commit's trees without any file's content (`--depth=1
//! --filter=blob:none`), the docs folder found from the paths alone
//! ([`ingest_core::docs_tree`]), then a sparse checkout of just the files
//! docshelf reads there, whose contents git fetches in one batch. A server
//! that cannot filter sends the whole commit instead; the bounds hold
//! either way. The listing is bounded as it is read ([`listing`]), and a
//! file that cannot be stored under its name is left out and said so
//! ([`super::names`]).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use index_core::format::Format;
use ingest_core::docs_tree::{find_docs_root, select_files, DocsRoot, DocsSelection};
use ingest_core::extract::ArchiveLimits;
use ingest_core::file_rules::{drop_requirements, RuleTally};

use super::listing::{self, TreeLimits};
use super::names::{LeftOut, Skip};
use super::refs::Target;
use super::remote::Remote;
use super::GitError;
use crate::ingest::MemoryBudget;
use crate::process::Bounds;

/// One documentation file of the commit.
#[derive(Debug)]
pub struct TreeFile {
    /// Its path in the repository, which is its path in the library.
    pub path: String,
    pub format: Format,
    pub bytes: Vec<u8>,
}

/// What a fetch found.
#[derive(Debug)]
pub struct DocsFetch {
    /// Where the docs were taken from.
    pub root: DocsRoot,
    pub files: Vec<TreeFile>,
    /// The commit's files that are not documentation, counted.
    pub left_out: usize,
    /// The files docshelf reads that a rule left out, by rule.
    pub rules: RuleTally,
    /// The documentation files that cannot be stored as they are named,
    /// or are links or submodules, by reason.
    pub unusable: LeftOut,
}

/// What bounds a fetch of the docs.
#[derive(Debug, Clone, Copy)]
pub struct FetchBounds<'a> {
    pub limits: &'a ArchiveLimits,
    pub tree: TreeLimits,
    /// Where the listing's memory is reserved from.
    pub memory: &'a MemoryBudget,
    /// Each git run's wall (and CPU) time.
    pub wall: Duration,
}

/// Fetches the documentation of `target` from `remote`: under `docs_path`
/// when given, else under the folder found; a tree without one fails with
/// [`GitError::NoDocsFolder`] when `needs_folder` (and no include glob
/// chooses the files), before any file is fetched. Blocks: call it on a
/// blocking thread. `stop` ends it early.
pub fn fetch_docs(
    remote: &Remote,
    target: &Target,
    docs_path: Option<&str>,
    needs_folder: bool,
    selection: &DocsSelection,
    bounds: FetchBounds<'_>,
    stop: &AtomicBool,
) -> Result<DocsFetch, GitError> {
    let limits = bounds.limits;
    let home = tempfile::tempdir().map_err(|e| GitError::Local(e.to_string()))?;
    let run_bounds = Bounds {
        cpu: bounds.wall,
        wall: bounds.wall,
        memory_bytes: 2 << 30,
        file_bytes: Some(limits.max_total_bytes),
    };
    let git = |dir: &Path, args: &[&str]| remote.run(dir, args, &run_bounds, stop);
    let repo = home.path().join("repo");
    let repo_arg = repo.to_string_lossy().into_owned();
    git(home.path(), &["init", "--quiet", &repo_arg])?;
    git(&repo, &["remote", "add", "origin", remote.url().as_str()])?;
    git(
        &repo,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--depth=1",
            "--filter=blob:none",
            "origin",
            &target.fetch,
        ],
    )?;
    let folder = docs_path
        .map(|f| f.trim_matches('/'))
        .filter(|f| !f.is_empty());
    // A docs folder given is listed alone: a narrower path is a smaller
    // listing.
    let listing = listing::list(
        remote,
        &repo,
        folder,
        bounds.tree,
        bounds.memory,
        &run_bounds,
        stop,
    )?;
    let paths: Vec<&str> = listing.paths.iter().map(String::as_str).collect();
    let root = match folder {
        Some(folder) => {
            let prefix = format!("{folder}/");
            if !paths.iter().any(|p| p.starts_with(&prefix)) {
                return Err(GitError::NoDocsPath(folder.to_owned()));
            }
            DocsRoot::Folder(folder.to_owned())
        }
        None => find_docs_root(&paths),
    };
    if needs_folder && root == DocsRoot::TopLevel && !selection.chooses() {
        return Err(GitError::NoDocsFolder);
    }
    let chosen = select_files(&paths, &root, false, selection);
    let mut rules = chosen.left_out;
    let chosen = chosen.files;
    // The tree's other files: neither chosen nor left out by a rule.
    let left_out = paths.len().saturating_sub(chosen.len() + rules.total());
    let mut unusable = LeftOut::default();
    let docs: Vec<_> = chosen
        .iter()
        .filter(|d| listing.keeps(d.path, &mut unusable))
        .collect();
    if docs.is_empty() {
        return Err(match unusable.total() {
            0 => GitError::NoDocs(root.place()),
            _ => GitError::NoUsableDocs {
                root: root.place(),
                why: unusable.notes().join("; "),
            },
        });
    }
    if docs.len() > limits.max_entries {
        return Err(GitError::TooManyFiles {
            found: docs.len(),
            max: limits.max_entries,
        });
    }
    let patterns: String = docs
        .iter()
        .map(|d| format!("/{}\n", sparse_pattern(d.path)))
        .collect();
    std::fs::write(repo.join(".git/info/sparse-checkout"), patterns)
        .map_err(|e| GitError::Local(e.to_string()))?;
    git(&repo, &["config", "core.sparseCheckout", "true"])?;
    git(&repo, &["checkout", "--quiet", "FETCH_HEAD"])?;
    let mut total = 0u64;
    let mut files = Vec::with_capacity(docs.len());
    for doc in &docs {
        let path = repo.join(doc.path);
        // The listing said it is a file; should the checkout say otherwise,
        // a link is still not followed out of the tree.
        let is_file = std::fs::symlink_metadata(&path).map(|meta| (meta.is_file(), meta.len()));
        let Ok((true, len)) = is_file else {
            unusable.add(Skip::SymbolicLink, doc.path.as_bytes());
            continue;
        };
        total += len;
        if total > limits.max_total_bytes {
            return Err(GitError::TooLarge {
                max: limits.max_total_bytes,
            });
        }
        let bytes = std::fs::read(&path).map_err(|e| GitError::Local(e.to_string()))?;
        files.push(TreeFile {
            path: doc.path.to_owned(),
            format: doc.format,
            bytes,
        });
    }
    // A pip requirements file is told from prose by its lines, read now.
    drop_requirements(
        &mut files,
        |f| (f.path.as_str(), f.bytes.as_slice()),
        &mut rules,
    );
    if files.is_empty() && unusable.total() == 0 {
        return Err(GitError::NoDocs(root.place()));
    }
    Ok(DocsFetch {
        root,
        left_out,
        files,
        unusable,
        rules,
    })
}

/// `path` as a sparse-checkout pattern that matches it alone: the
/// characters gitignore patterns give a meaning to are escaped.
fn sparse_pattern(path: &str) -> String {
    let mut pattern = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    if pattern.ends_with(' ') {
        pattern.pop();
        pattern.push_str("\\ ");
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_their_path_alone() {
        assert_eq!(sparse_pattern("docs/a.md"), "docs/a.md");
        assert_eq!(sparse_pattern("docs/[x]*?.md"), "docs/\\[x\\]\\*\\?.md");
        assert_eq!(sparse_pattern("docs/#1 "), "docs/\\#1\\ ");
    }
}
