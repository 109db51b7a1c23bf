//! Git repositories as sources: a repository URL, a ref (tag, branch or
//! commit) and a docs folder, read into a library version.
//!
//! - [`remote`]: the git CLI, run so that it reaches only what a source may.
//! - `moved`: where a redirecting Git server says the repository went.
//! - [`listing`]: a commit's tree listed, bounded while it is read.
//! - [`names`]: which files cannot be stored as they are named, and the
//!   notes saying so.
//! - [`refs`]: the repository's tags and branches, and which one a source reads.
//! - [`tree`]: the docs folder of one commit, fetched alone (trees first,
//!   then only the chosen files).

pub mod listing;
mod moved;
pub mod names;
pub mod refs;
pub mod remote;
pub mod tree;

use url::Url;

use super::fetch::FetchError;

pub use refs::{RefKind, Target};
pub use remote::Remote;

/// A Git source's fetch: the repository, checked and pinned, the commit
/// and the docs folder.
#[derive(Clone)]
pub struct GitPlan {
    pub remote: Remote,
    pub target: Target,
    /// The docs folder asked for; found when `None`.
    pub docs_path: Option<String>,
    pub limits: ingest_core::extract::ArchiveLimits,
    /// Include globs and a page bound, when the request gives them.
    pub selection: ingest_core::docs_tree::DocsSelection,
    /// When the fetch must have ended (set when the job starts).
    pub deadline: tokio::time::Instant,
    /// Where the repository came from, when a package's metadata named it
    /// (said in the job's notes).
    pub origin: Option<String>,
    /// The repository as its source names it, before `--rewrite-url`:
    /// what failures name, as a crawl's pages keep their source's
    /// addresses.
    pub source_url: String,
    /// Whether a tree without a docs folder fails with
    /// [`GitError::NoDocsFolder`] rather than giving the files at its top:
    /// a package's repository, whose next route is likelier documentation.
    pub needs_folder: bool,
}

/// Hosts whose project URLs (`https://github.com/owner/name`) are Git
/// repositories, as peers read them.
const FORGES: [&str; 4] = ["github.com", "gitlab.com", "codeberg.org", "bitbucket.org"];

/// A repository URL, if `raw` names one: `git+https://…` (the prefix
/// dropped), an http(s) URL whose path ends in `.git`, or a forge's project
/// URL (`https://github.com/owner/name`, two path segments).
pub fn repository_url(raw: &str) -> Option<Url> {
    let raw = raw.trim();
    let (explicit, raw) = match raw.strip_prefix("git+") {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let mut url = Url::parse(raw).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    url.set_fragment(None);
    url.set_query(None);
    let path = url.path().trim_end_matches('/').to_owned();
    let segments = path.split('/').filter(|s| !s.is_empty()).count();
    let forge = url
        .host_str()
        .is_some_and(|h| FORGES.contains(&h.trim_start_matches("www.")));
    let repository = explicit || path.ends_with(".git") || forge && segments == 2;
    if !repository {
        return None;
    }
    url.set_path(&path);
    Some(url)
}

/// Why a Git source cannot be read. Messages name the repository and say
/// what to do; none holds a credential.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{url} cannot be fetched: {err}")]
    Unreachable { url: String, err: FetchError },
    #[error("{url} asks for credentials{}", if *.with_credential {
        ": it refused the credential given"
    } else {
        ": name a credential the server's operator declared for it (credential: NAME)"
    })]
    Unauthorized { url: String, with_credential: bool },
    #[error("{0} is not a Git repository this server can read (not found)")]
    NoRepository(String),
    #[error(
        "{url} redirects {}: the repository has moved; give the URL it moved to \
         (docshelf does not follow a Git server's redirects, so that none can lead a fetch \
         into the server's own network)",
        match .to { Some(to) => format!("to {to}"), None => "elsewhere (it did not say where)".to_owned() }
    )]
    Redirected {
        url: String,
        /// Where to: the repository URL its `Location` names, without any
        /// user part, cut to length; `None` when it named none usable.
        to: Option<String>,
    },
    #[error("{0} has no such ref")]
    NoRef(String),
    #[error("{url} has no tag or branch {given:?}{}", known(.tags))]
    UnknownRef {
        url: String,
        given: String,
        tags: Vec<String>,
    },
    #[error("{url} has no release tag matching {pattern:?}{}", known(.tags))]
    NoReleases {
        url: String,
        pattern: String,
        tags: Vec<String>,
    },
    #[error("{url}: {why}")]
    Failed { url: String, why: String },
    #[error("the docs folder {0:?} is not in the repository at this ref")]
    NoDocsPath(String),
    /// Where: `under docs/`, `at the top of the tree`.
    #[error("no file docshelf reads {0}")]
    NoDocs(String),
    #[error("no documentation file {root} can be stored: {why}")]
    NoUsableDocs { root: String, why: String },
    /// A package's repository without a docs folder: its next route is
    /// taken instead of the files at its top (a README, governance).
    #[error("it has no docs folder (docs/, doc/, documentation/, website/docs/ or a book's src/)")]
    NoDocsFolder,
    #[error("the docs folder holds {found} files docshelf reads, more than the {max} an archive may hold; give a narrower docs path")]
    TooManyFiles { found: usize, max: usize },
    #[error("the fetch wrote more than {} MiB; give a narrower docs path", .max / (1024 * 1024))]
    TooLarge { max: u64 },
    #[error("{} lists more than {limit} {what} (--git-max-tree-entries, --git-max-tree-mib); {}",
        match .folder { Some(f) => format!("the docs folder {f:?}"), None => "the repository's tree".to_owned() },
        if .folder.is_some() { "give a narrower docs path" } else { "give the docs folder as docs_path, so that only it is listed" })]
    TreeTooLarge {
        /// The docs folder listed, when one was given.
        folder: Option<String>,
        /// `paths`, or `MiB of listing`.
        what: &'static str,
        limit: u64,
    },
    #[error("the repository's tree: {0}")]
    Memory(String),
    #[error("the git command is not installed on the server (Debian: apt install git)")]
    NoGit,
    #[error("git: {0}")]
    Tool(String),
    #[error("a temporary folder for the fetch: {0}")]
    Local(String),
    #[error("the fetch was stopped")]
    Stopped,
}

fn known(tags: &[String]) -> String {
    match tags {
        [] => "; it has no tags".to_owned(),
        tags => format!("; its newest tags: {}", tags.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_told_from_sites() {
        let repo = |raw: &str| repository_url(raw).map(|u| u.to_string());
        assert_eq!(
            repo("git+https://example.org/team/docs"),
            Some("https://example.org/team/docs".into())
        );
        assert_eq!(
            repo("https://example.org/x/project.git/"),
            Some("https://example.org/x/project.git".into())
        );
        assert_eq!(
            repo("https://github.com/serde-rs/serde"),
            Some("https://github.com/serde-rs/serde".into())
        );
        assert_eq!(
            repo("https://github.com/serde-rs/serde/tree/master/docs"),
            None
        );
        assert_eq!(repo("https://docs.rs/serde"), None);
        assert_eq!(repo("git+ssh://host/repo.git"), None);
        assert_eq!(repo("git+file:///etc"), None);
    }
}
