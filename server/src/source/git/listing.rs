//! A commit's tree listed (`git ls-tree -r`), bounded while it is read.
//!
//! A tree is tiny to send and huge to list: trees share subtrees, so a
//! 200 KB repository of a few trees naming each other a hundred times
//! over lists 10^7 paths, and reading that listing whole took the server
//! up by more than a gigabyte for a minute (issue #61). So the listing is
//! read from git's output as it is written, entry by entry, and reading
//! stops (git is left to die on the broken pipe) past
//! [`TreeLimits::max_entries`] entries or [`TreeLimits::max_bytes`] bytes;
//! the paths kept are reserved from the extraction memory budget as they
//! are kept, so several listings at once stay within it too.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use ingest_core::extract::MemoryGauge as _;

use super::names::{LeftOut, Skip};
use super::remote::Remote;
use super::GitError;
use crate::ingest::memory::Reservation;
use crate::ingest::MemoryBudget;
use crate::process::Bounds;

/// The longest entry git writes (`<mode> <type> <object>\t<path>`): a
/// path longer than any file system allows is not a path.
const MAX_ENTRY_BYTES: u64 = 16 * 1024;
/// What each kept path costs beside its bytes: its `String`, and the
/// `&str` each later pass over the paths takes of it.
const ENTRY_OVERHEAD: u64 = 64;

/// How much of a tree a listing reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    /// Entries (files, links, submodules) listed, at most.
    pub max_entries: usize,
    /// Bytes of listing read, at most.
    pub max_bytes: u64,
}

impl Default for TreeLimits {
    /// Half a million paths (a large monorepo lists a few hundred thousand;
    /// a docs folder, given as `docs_path`, far fewer) in 128 MiB of
    /// listing: `--git-max-tree-entries` and `--git-max-tree-mib`.
    fn default() -> Self {
        Self {
            max_entries: 500_000,
            max_bytes: 128 << 20,
        }
    }
}

/// A tree's files, as far as docshelf can name them.
#[derive(Debug, Default)]
pub struct Listing {
    /// The path of every entry, as listed (lossily, where it is not
    /// UTF-8): what the docs folder is chosen from.
    pub paths: Vec<String>,
    /// The entries that cannot be stored as they are, by path: their
    /// reason and their name's bytes.
    pub unusable: std::collections::HashMap<String, (Skip, Vec<u8>)>,
    /// The budget the paths hold, given back with them.
    _reserved: Option<Reservation>,
}

impl Listing {
    /// Whether the file at `path` can be stored under it; if not, it is
    /// counted into `left`.
    pub fn keeps(&self, path: &str, left: &mut LeftOut) -> bool {
        match self.unusable.get(path) {
            Some((why, raw)) => {
                left.add(*why, raw);
                false
            }
            None => true,
        }
    }
}

/// Lists the commit fetched into `repo` (`FETCH_HEAD`), under `folder`
/// alone when given, within `limits`, its paths reserved from `budget`.
pub fn list(
    remote: &Remote,
    repo: &Path,
    folder: Option<&str>,
    limits: TreeLimits,
    budget: &MemoryBudget,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<Listing, GitError> {
    let pathspec = folder.map(|f| format!("{f}/"));
    let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", "FETCH_HEAD"];
    if let Some(pathspec) = &pathspec {
        args.extend(["--", pathspec]);
    }
    remote.read(repo, &args, bounds, stop, |out| {
        read_listing(out, limits, budget, folder)
    })
}

/// Reads `ls-tree -r -z` output from `out`, stopping at the first bound.
fn read_listing(
    out: impl Read,
    limits: TreeLimits,
    budget: &MemoryBudget,
    folder: Option<&str>,
) -> Result<Listing, GitError> {
    let too_large = |what: &'static str, limit: u64| GitError::TreeTooLarge {
        folder: folder.map(str::to_owned),
        what,
        limit,
    };
    let mut reserved = budget
        .try_reserve(0)
        .map_err(|e| GitError::Memory(e.to_string()))?;
    let mut reader = BufReader::new(out);
    let mut listing = Listing::default();
    let (mut entries, mut bytes) = (0usize, 0u64);
    let mut entry = Vec::new();
    loop {
        entry.clear();
        let read = (&mut reader)
            .take(MAX_ENTRY_BYTES)
            .read_until(0, &mut entry)
            .map_err(|e| GitError::Local(format!("reading the tree's listing: {e}")))?;
        if read == 0 {
            break;
        }
        if entry.last() == Some(&0) {
            entry.pop();
        } else if read as u64 == MAX_ENTRY_BYTES {
            return Err(GitError::Tool(format!(
                "the tree lists an entry longer than {MAX_ENTRY_BYTES} bytes"
            )));
        }
        entries += 1;
        bytes += read as u64;
        if entries > limits.max_entries {
            return Err(too_large("paths", limits.max_entries as u64));
        }
        if bytes > limits.max_bytes {
            return Err(too_large(
                "MiB of listing",
                limits.max_bytes.div_ceil(1 << 20),
            ));
        }
        let Some((kind, raw)) = parse_entry(&entry) else {
            continue;
        };
        reserved
            .grow(raw.len() as u64 + ENTRY_OVERHEAD)
            .map_err(GitError::Memory)?;
        let path = String::from_utf8_lossy(raw).into_owned();
        let why = match kind {
            Kind::File => Skip::of_name(raw),
            Kind::SymbolicLink => Some(Skip::SymbolicLink),
            Kind::Submodule => Some(Skip::Submodule),
        };
        if let Some(why) = why {
            listing.unusable.insert(path.clone(), (why, raw.to_vec()));
        }
        listing.paths.push(path);
    }
    // The paths stay reserved for as long as the fetch holds them.
    listing._reserved = Some(reserved);
    Ok(listing)
}

/// What an entry of the tree is, by its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    SymbolicLink,
    Submodule,
}

/// An entry's kind and path's bytes: `<mode> SP <type> SP <object> TAB
/// <path>`. `None` for what `-r` should never list (a tree).
fn parse_entry(entry: &[u8]) -> Option<(Kind, &[u8])> {
    let tab = entry.iter().position(|&b| b == b'\t')?;
    let (head, path) = (&entry[..tab], &entry[tab + 1..]);
    let mode = head.split(|&b| b == b' ').next()?;
    let kind = match mode {
        b"120000" => Kind::SymbolicLink,
        b"160000" => Kind::Submodule,
        b"040000" => return None,
        _ => Kind::File,
    };
    Some((kind, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` entries of `ls-tree -r -z` output, each a file `docs/N.md`.
    fn listing(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                format!("100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tdocs/{i}.md\0")
                    .into_bytes()
            })
            .collect()
    }

    #[test]
    fn a_listing_is_read_within_its_bounds() {
        let budget = MemoryBudget::new(64 << 20);
        let limits = TreeLimits {
            max_entries: 100,
            max_bytes: 1 << 20,
        };
        let read = read_listing(&listing(100)[..], limits, &budget, None).expect("within");
        assert_eq!(read.paths.len(), 100);
        assert!(
            budget.free_bytes() < budget.total_bytes(),
            "the paths hold memory"
        );
        drop(read);
        assert_eq!(
            budget.free_bytes(),
            budget.total_bytes(),
            "and give it back"
        );

        let err = read_listing(&listing(101)[..], limits, &budget, Some("docs")).unwrap_err();
        assert!(
            matches!(
                err,
                GitError::TreeTooLarge {
                    what: "paths",
                    limit: 100,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("docs"), "{err}");
        let small = TreeLimits {
            max_entries: 1000,
            max_bytes: 1000,
        };
        let err = read_listing(&listing(100)[..], small, &budget, None).unwrap_err();
        assert!(matches!(err, GitError::TreeTooLarge { .. }), "{err}");
        assert_eq!(budget.free_bytes(), budget.total_bytes());
    }

    #[test]
    fn a_listing_past_the_memory_budget_stops() {
        // 1 MiB of budget, most of it taken by another job.
        let budget = MemoryBudget::new(1 << 20);
        let _other = budget.try_reserve((1 << 20) - 4096).expect("taken");
        let limits = TreeLimits::default();
        let err = read_listing(&listing(1000)[..], limits, &budget, None).unwrap_err();
        assert!(matches!(err, GitError::Memory(_)), "{err}");
    }

    #[test]
    fn unusable_entries_are_told_apart() {
        let out = b"100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tdocs/ok.md\0\
120000 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tdocs/link.md\0\
100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tdocs/new\nline.md\0";
        let budget = MemoryBudget::new(64 << 20);
        let read = read_listing(&out[..], TreeLimits::default(), &budget, None).expect("read");
        let mut left = LeftOut::default();
        let usable: Vec<&String> = read
            .paths
            .iter()
            .filter(|p| read.keeps(p, &mut left))
            .collect();
        assert_eq!(usable, ["docs/ok.md"]);
        assert_eq!(left.total(), 2);
    }

    #[test]
    fn entries_read_as_their_kind_and_path() {
        let oid = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
        let line = |mode: &str, kind: &str, path: &str| format!("{mode} {kind} {oid}\t{path}");
        let file = line("100644", "blob", "docs/a b.md");
        assert_eq!(
            parse_entry(file.as_bytes()),
            Some((Kind::File, &b"docs/a b.md"[..]))
        );
        let exe = line("100755", "blob", "docs/run\tme.md");
        assert_eq!(
            parse_entry(exe.as_bytes()),
            Some((Kind::File, &b"docs/run\tme.md"[..]))
        );
        let link = line("120000", "blob", "docs/link.md");
        assert_eq!(
            parse_entry(link.as_bytes()).map(|e| e.0),
            Some(Kind::SymbolicLink)
        );
        let module = line("160000", "commit", "docs/vendor");
        assert_eq!(
            parse_entry(module.as_bytes()).map(|e| e.0),
            Some(Kind::Submodule)
        );
        assert_eq!(parse_entry(b"garbage"), None);
    }
}
