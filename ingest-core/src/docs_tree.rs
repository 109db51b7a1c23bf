//! Which files of a source tree (a Git repository at a ref) are its
//! documentation: the docs folder, found rather than guessed blindly, and
//! the files in it docshelf reads.
//!
//! Pure, over the tree's file paths alone, so the server can choose what
//! to fetch before it fetches a single file's content.

use index_core::format::Format;

use crate::file_rules::{self, RuleTally};
use crate::package::DOC_DIRS;
pub use crate::selection::DocsSelection;

/// Where a tree keeps its documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocsRoot {
    /// A folder (`docs`, `website/docs`, `book/src`): every file docshelf
    /// reads below it.
    Folder(String),
    /// No docs folder: the files docshelf reads at the top (the README,
    /// a guide beside it).
    TopLevel,
}

impl DocsRoot {
    /// The folder, as a path prefix (`docs/`), or `None` for the top level.
    pub fn folder(&self) -> Option<&str> {
        match self {
            Self::Folder(folder) => Some(folder),
            Self::TopLevel => None,
        }
    }

    /// Where files are, in a sentence: `under docs/`, `at the top of the
    /// tree`.
    pub fn place(&self) -> String {
        match self {
            Self::Folder(folder) => format!("under {folder}/"),
            Self::TopLevel => "at the top of the tree".to_owned(),
        }
    }
}

impl std::fmt::Display for DocsRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Folder(folder) => write!(f, "{folder}/"),
            Self::TopLevel => f.write_str("the top of the tree"),
        }
    }
}

/// Folders where sites built with Docusaurus and its kin keep their pages.
const SITE_DOC_DIRS: [&str; 2] = ["website/docs", "site/docs"];

/// The docs folder of a tree whose files are `paths`: the first of
/// `docs/`, `doc/`, `documentation/` (any case), `website/docs/` and a
/// book's source folder (`src/` beside a `book.toml`) that holds a file
/// docshelf reads; else the top level. Within it, a folder of translations
/// (`en/` beside other language codes) narrows to the English one.
pub fn find_docs_root(paths: &[&str]) -> DocsRoot {
    let top_dirs = DOC_DIRS.iter().filter_map(|name| {
        paths.iter().find_map(|p| {
            let (top, _) = p.split_once('/')?;
            top.eq_ignore_ascii_case(name).then(|| top.to_owned())
        })
    });
    let site_dirs = SITE_DOC_DIRS.iter().map(|d| (*d).to_owned());
    let books = paths.iter().filter_map(|p| {
        let dir = p.strip_suffix("book.toml")?;
        (dir.is_empty() || dir.ends_with('/')).then(|| format!("{dir}src"))
    });
    let found = top_dirs
        .chain(site_dirs)
        .chain(books)
        .find(|folder| paths.iter().any(|p| reads_under(p, folder)));
    match found {
        Some(folder) => DocsRoot::Folder(narrow_to_english(paths, folder)),
        None => DocsRoot::TopLevel,
    }
}

/// Whether `path` lies below `folder` and is a file docshelf would read.
fn reads_under(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| doc_file(rest).is_some() && !file_rules::may_be_requirements(rest))
}

/// `docs/en` when `docs` holds `en/` and at least two other language
/// folders (`de/`, `pt-br/`): one language of the same pages, not all.
fn narrow_to_english(paths: &[&str], folder: String) -> String {
    let mut children: Vec<&str> = paths
        .iter()
        .filter_map(|p| p.strip_prefix(folder.as_str())?.strip_prefix('/'))
        .filter_map(|rest| rest.split_once('/').map(|(child, _)| child))
        .collect();
    children.sort_unstable();
    children.dedup();
    let languages = children.iter().filter(|c| is_language_code(c)).count();
    if children.contains(&"en") && languages >= 3 {
        format!("{folder}/en")
    } else {
        folder
    }
}

fn is_language_code(name: &str) -> bool {
    let (language, region) = name.split_once('-').unwrap_or((name, ""));
    language.len() == 2
        && language.bytes().all(|b| b.is_ascii_lowercase())
        && region.len() <= 4
        && region.bytes().all(|b| b.is_ascii_alphabetic())
}

/// One documentation file of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeDoc<'a> {
    /// Its path in the tree, which is also its path in the library.
    pub path: &'a str,
    pub format: Format,
}

/// The files a tree's selection chose, and what its rules left out.
#[derive(Debug, Clone, Default)]
pub struct Chosen<'a> {
    pub files: Vec<TreeDoc<'a>>,
    /// The files docshelf reads under the root that a rule left out
    /// ([`file_rules`]), by rule. A pip requirements file is among
    /// `files` until its lines are read.
    pub left_out: RuleTally,
}

/// The documentation files among `paths` under `root`: files docshelf
/// reads that no rule of [`file_rules`] leaves out (hidden, dependency,
/// test or build folders, site templates, release notes unless
/// `with_release_notes`, a contributing guide at the top).
pub fn documentation_files<'a>(
    paths: &[&'a str],
    root: &DocsRoot,
    with_release_notes: bool,
) -> Vec<TreeDoc<'a>> {
    select_files(paths, root, with_release_notes, &DocsSelection::default()).files
}

/// [`documentation_files`] as `selection` asks: with include globs, the
/// files they match that docshelf reads, wherever they are (no rule
/// applies); then at most its bound, in path order.
pub fn select_files<'a>(
    paths: &[&'a str],
    root: &DocsRoot,
    with_release_notes: bool,
    selection: &DocsSelection,
) -> Chosen<'a> {
    if selection.chooses() {
        let mut chosen: Vec<TreeDoc<'a>> = paths
            .iter()
            .filter(|p| selection.includes(p))
            .filter_map(|&path| {
                let format = Format::from_path(path).filter(|f| !f.is_archive())?;
                Some(TreeDoc { path, format })
            })
            .collect();
        selection.cut(&mut chosen, |d| d.path);
        return Chosen {
            files: chosen,
            left_out: RuleTally::default(),
        };
    }
    let at_top = *root == DocsRoot::TopLevel;
    let mut left_out = RuleTally::default();
    let mut chosen: Vec<TreeDoc<'a>> = paths
        .iter()
        .filter_map(|&path| {
            let rest = match root {
                DocsRoot::Folder(folder) => {
                    path.strip_prefix(folder.as_str())?.strip_prefix('/')?
                }
                DocsRoot::TopLevel if !path.contains('/') => path,
                DocsRoot::TopLevel => return None,
            };
            match file_rules::judge(rest, at_top, with_release_notes) {
                Ok(format) => Some(TreeDoc { path, format }),
                Err(Some(rule)) => {
                    left_out.add(rule, path);
                    None
                }
                Err(None) => None,
            }
        })
        .collect();
    selection.cut(&mut chosen, |d| d.path);
    Chosen {
        files: chosen,
        left_out,
    }
}

/// How a file at `path` (relative to the docs root) is read, if it is one
/// docshelf reads as documentation.
fn doc_file(path: &str) -> Option<Format> {
    file_rules::judge(path, false, true).ok()
}

/// A release-notes file, or anything in a release-notes folder.
pub(crate) fn is_release_notes_path(path: &str) -> bool {
    file_rules::is_release_notes_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_rules::{drop_requirements, Rule};

    fn root_of(paths: &[&str]) -> DocsRoot {
        find_docs_root(paths)
    }

    #[test]
    fn the_docs_folder_is_found_in_order() {
        let tree = [
            "README.md",
            "src/lib.rs",
            "Docs/index.md",
            "website/docs/a.md",
        ];
        assert_eq!(root_of(&tree), DocsRoot::Folder("Docs".into()));
        let site = [
            "README.md",
            "website/docs/intro.mdx",
            "website/package.json",
        ];
        assert_eq!(root_of(&site), DocsRoot::Folder("website/docs".into()));
        let book = [
            "README.md",
            "guide/book.toml",
            "guide/src/SUMMARY.md",
            "src/main.rs",
        ];
        assert_eq!(root_of(&book), DocsRoot::Folder("guide/src".into()));
        let bare = ["README.md", "src/main.rs", "Cargo.toml"];
        assert_eq!(root_of(&bare), DocsRoot::TopLevel);
    }

    #[test]
    fn a_docs_folder_without_readable_files_does_not_count() {
        let tree = [
            "docs/logo.png",
            "docs/conf.json",
            "doc/guide.rst",
            "README.md",
        ];
        assert_eq!(root_of(&tree), DocsRoot::Folder("doc".into()));
    }

    #[test]
    fn translations_narrow_to_english() {
        let tree = [
            "docs/en/docs/index.md",
            "docs/de/docs/index.md",
            "docs/es/docs/index.md",
            "docs/pt-br/docs/index.md",
            "docs/en/mkdocs.yml",
        ];
        assert_eq!(root_of(&tree), DocsRoot::Folder("docs/en".into()));
        let sections = ["docs/en/index.md", "docs/api/index.md", "docs/guide/a.md"];
        assert_eq!(root_of(&sections), DocsRoot::Folder("docs".into()));
    }

    #[test]
    fn release_notes_tests_and_hidden_files_are_left_out() {
        let tree = [
            "docs/index.md",
            "docs/CHANGELOG.md",
            "docs/release-notes/1.0.md",
            "docs/tests/fixture.md",
            "docs/.vitepress/config.md",
            "docs/_templates/layout.html",
            "docs/requirements.txt",
            "docs/img/logo.png",
            "docs/guide/install.rst",
            "README.md",
        ];
        let root = root_of(&tree);
        let found: Vec<&str> = documentation_files(&tree, &root, false)
            .iter()
            .map(|d| d.path)
            .collect();
        // A requirements file is judged by its lines once read.
        assert_eq!(
            found,
            [
                "docs/guide/install.rst",
                "docs/index.md",
                "docs/requirements.txt"
            ]
        );
        let with_notes = documentation_files(&tree, &root, true);
        assert_eq!(with_notes.len(), 5);
    }

    #[test]
    fn the_rules_keep_contributing_pages_in_docs_and_say_what_they_left_out() {
        let tree = [
            "CONTRIBUTING.md",
            "README.md",
            "docs/index.txt",
            "docs/internals/contributing/index.txt",
            "docs/ref/models/constraints.txt",
            "docs/ref/templates/api.txt",
            "docs/_templates/layout.html",
            "docs/theme/main.html",
            "docs/CHANGELOG.md",
            "docs/requirements.txt",
            "docs/conf.py",
        ];
        let root = root_of(&tree);
        let chosen = select_files(&tree, &root, false, &DocsSelection::default());
        let found: Vec<&str> = chosen.files.iter().map(|d| d.path).collect();
        assert_eq!(
            found,
            [
                "docs/index.txt",
                "docs/internals/contributing/index.txt",
                "docs/ref/models/constraints.txt",
                "docs/ref/templates/api.txt",
                "docs/requirements.txt",
            ]
        );
        assert_eq!(chosen.left_out.count(Rule::Template), 2);
        assert_eq!(chosen.left_out.count(Rule::ReleaseNotes), 1);
        assert_eq!(chosen.left_out.count(Rule::Contributing), 0);
        assert_eq!(
            chosen.left_out.notes()[0],
            "left out 2 site templates (HTML in theme or template folders) (docs/_templates/layout.html, docs/theme/main.html)"
        );

        // Read, the requirements file goes and the reST named constraints stays.
        let mut read = vec![
            ("docs/ref/models/constraints.txt", &b"=====================\nConstraints reference\n=====================\n\nThe classes defined here create database constraints.\n"[..]),
            ("docs/requirements.txt", b"sphinx>=4.5.0\npyenchant\nsphinxcontrib-spelling\n"),
        ];
        let mut left_out = chosen.left_out.clone();
        drop_requirements(&mut read, |(p, b)| (*p, *b), &mut left_out);
        let kept: Vec<&str> = read.iter().map(|(p, _)| *p).collect();
        assert_eq!(kept, ["docs/ref/models/constraints.txt"]);
        assert!(
            left_out
                .notes()
                .contains(&"left out 1 pip requirements file (docs/requirements.txt)".to_owned()),
            "{:?}",
            left_out.notes()
        );

        // At the top of a tree without a docs folder, a contributing guide
        // is the project's, and said so.
        let bare = ["CONTRIBUTING.md", "README.md", "Charter.md", "lib/x.js"];
        let top = select_files(&bare, &root_of(&bare), false, &DocsSelection::default());
        let found: Vec<&str> = top.files.iter().map(|d| d.path).collect();
        assert_eq!(found, ["Charter.md", "README.md"]);
        assert_eq!(
            top.left_out.notes(),
            ["left out 1 contributing guide at the top of the tree (about the project, not its use) (CONTRIBUTING.md)"]
        );
    }

    #[test]
    fn include_globs_choose_and_max_files_bounds() {
        let tree = [
            "docs/b.md",
            "docs/a.md",
            "docs/CHANGELOG.md",
            "CHANGES.rst",
            "src/x.md",
        ];
        let root = root_of(&tree);
        let bounded = DocsSelection::new(&[], Some(1)).unwrap();
        let found: Vec<&str> = select_files(&tree, &root, false, &bounded)
            .files
            .iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(found, ["docs/a.md"]);
        let notes = DocsSelection::new(&["docs/**".into(), "/CHANGES.rst".into()], None).unwrap();
        let found: Vec<&str> = select_files(&tree, &root, false, &notes)
            .files
            .iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(
            found,
            ["CHANGES.rst", "docs/CHANGELOG.md", "docs/a.md", "docs/b.md"]
        );
        assert!(DocsSelection::new(&["[".into()], None).is_err());
    }

    #[test]
    fn the_top_level_takes_only_top_level_files() {
        let tree = ["README.md", "GUIDE.adoc", "src/notes.md", "CHANGES.rst"];
        let found: Vec<&str> = documentation_files(&tree, &DocsRoot::TopLevel, false)
            .iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(found, ["GUIDE.adoc", "README.md"]);
    }
}
