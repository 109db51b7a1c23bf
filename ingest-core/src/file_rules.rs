//! The rules that leave a file out of a repository's or a package's
//! documentation although docshelf reads its format, and the notes that
//! say what each rule left out, by count and with a few names: a page
//! dropped by a rule is one a user cannot find, so each drop is said.
//!
//! One set of rules for both places ([`crate::docs_tree`] over a Git
//! tree's paths, [`crate::package`] over an archive's), each narrow enough
//! not to drop prose: a `constraints.txt` written in reST is documentation
//! (Django's `docs/ref/models/constraints.txt`), a pip requirements file
//! is not, and only the file's lines tell them apart
//! ([`is_pip_requirements`]).

use std::collections::BTreeMap;

use index_core::format::Format;

/// Folders never documentation, wherever they are: dependencies, tests,
/// build output, and static assets.
pub(crate) const NOT_DOC_DIRS: [&str; 7] = [
    "node_modules",
    "test",
    "tests",
    "__tests__",
    "_build",
    "site-packages",
    "_static",
];

/// Folders whose HTML files are a site generator's templates (Sphinx's
/// `_templates` and `_theme`, MkDocs' `overrides` and theme folders, Jekyll's
/// `_layouts` and `_includes`): navigation and Jinja, Liquid or
/// Handlebars markup, not pages. Other files in them are read: Django's
/// `docs/ref/templates/` is prose about templates.
const TEMPLATE_DIRS: [&str; 10] = [
    "theme",
    "themes",
    "_theme",
    "_themes",
    "template",
    "templates",
    "_templates",
    "overrides",
    "_layouts",
    "_includes",
];

/// Extensions that mark a template whatever it renders to
/// (`page.html.j2`, `base.jinja.html`).
const TEMPLATE_EXTENSIONS: [&str; 7] = [
    "j2",
    "jinja",
    "jinja2",
    "hbs",
    "handlebars",
    "liquid",
    "njk",
];

/// Why a file docshelf could read is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// In a hidden or `_`-prefixed folder, or a dependency, test or build
    /// folder.
    Folder,
    /// A site generator's template (see [`TEMPLATE_DIRS`]).
    Template,
    /// CHANGELOG, CHANGES, HISTORY, NEWS, release notes, or a page in a
    /// `release-notes/` or `whatsnew/` folder: they name every API of
    /// every version and outrank the documentation in search.
    ReleaseNotes,
    /// A contributing guide at the top of a repository or an archive:
    /// about the project, not the package. Inside a docs folder it is
    /// documentation (Django's `docs/internals/contributing/`).
    Contributing,
    /// A pip requirements or constraints file ([`is_pip_requirements`]).
    PipRequirements,
    /// A crawler's `robots.txt`.
    Robots,
}

impl Rule {
    /// What the rule leaves out, for `n` files.
    fn what(self, n: usize) -> &'static str {
        let one = n == 1;
        match self {
            Self::Folder if one => {
                "file in a hidden, `_`-prefixed, dependency, test or build folder"
            }
            Self::Folder => "files in hidden, `_`-prefixed, dependency, test or build folders",
            Self::Template if one => "site template (HTML in a theme or template folder)",
            Self::Template => "site templates (HTML in theme or template folders)",
            Self::ReleaseNotes if one => "release-notes file (include it by name to take it)",
            Self::ReleaseNotes => "release-notes files (include them by name to take them)",
            Self::Contributing if one => {
                "contributing guide at the top of the tree (about the project, not its use)"
            }
            Self::Contributing => {
                "contributing guides at the top of the tree (about the project, not its use)"
            }
            Self::PipRequirements if one => "pip requirements file",
            Self::PipRequirements => "pip requirements files",
            Self::Robots if one => "robots.txt file",
            Self::Robots => "robots.txt files",
        }
    }
}

/// How many names a note lists per rule.
const NAMED: usize = 3;

/// What the rules left out: per rule, a count and the first names in path
/// order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleTally {
    by_rule: BTreeMap<Rule, (usize, Vec<String>)>,
}

impl RuleTally {
    pub fn add(&mut self, rule: Rule, path: &str) {
        let (count, names) = self.by_rule.entry(rule).or_default();
        *count += 1;
        names.push(path.to_owned());
        names.sort();
        names.truncate(NAMED);
    }

    /// How many files `rule` left out.
    pub fn count(&self, rule: Rule) -> usize {
        self.by_rule.get(&rule).map_or(0, |(n, _)| *n)
    }

    /// How many files the rules left out in all.
    pub fn total(&self) -> usize {
        self.by_rule.values().map(|(n, _)| n).sum()
    }

    /// One note per rule that left something out: `left out 3 pip
    /// requirements files (docs/a.txt, docs/b.txt, docs/c.txt, …)`.
    pub fn notes(&self) -> Vec<String> {
        self.by_rule
            .iter()
            .map(|(rule, (count, names))| {
                let more = if *count > names.len() { ", …" } else { "" };
                format!(
                    "left out {count} {} ({}{more})",
                    rule.what(*count),
                    names.join(", ")
                )
            })
            .collect()
    }
}

/// How the file at `path` (relative to the docs root: the docs folder, or
/// the top of the tree when `at_top`) is read, or why it is not: `Err(None)`
/// for a file docshelf does not read at all, `Err(Some(rule))` for one a
/// rule leaves out. A pip requirements file is judged by its lines, after
/// it is read ([`may_be_requirements`]); release notes are left out
/// unless `with_release_notes`.
pub(crate) fn judge(
    path: &str,
    at_top: bool,
    with_release_notes: bool,
) -> Result<Format, Option<Rule>> {
    let parts: Vec<&str> = path.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else {
        return Err(None);
    };
    let format = Format::from_path(file)
        .filter(|f| !f.is_archive())
        .ok_or(None)?;
    if is_template(file, dirs, format) {
        return Err(Some(Rule::Template));
    }
    let hidden = |p: &&str| p.starts_with('.') || p.starts_with('_') && *p != "_index.md";
    if parts.iter().any(hidden)
        || dirs
            .iter()
            .any(|d| NOT_DOC_DIRS.iter().any(|n| d.eq_ignore_ascii_case(n)))
    {
        return Err(Some(Rule::Folder));
    }
    if !with_release_notes && is_release_notes_path(path) {
        return Err(Some(Rule::ReleaseNotes));
    }
    let stem = stem_of(file).to_ascii_lowercase();
    if at_top && dirs.is_empty() && squashed(&stem) == "contributing" {
        return Err(Some(Rule::Contributing));
    }
    if stem == "robots" {
        return Err(Some(Rule::Robots));
    }
    Ok(format)
}

/// A file's name before its first extension (`requirements` of
/// `requirements.in.txt`, `README` of `README`).
fn stem_of(file: &str) -> &str {
    file.split_once('.').map_or(file, |(stem, _)| stem)
}

/// `stem` lowercase without `-` and `_`, as the names' rules compare them.
fn squashed(stem: &str) -> String {
    stem.to_ascii_lowercase().replace(['-', '_'], "")
}

fn is_template(file: &str, dirs: &[&str], format: Format) -> bool {
    let marked = file.split('.').skip(1).any(|ext| {
        TEMPLATE_EXTENSIONS
            .iter()
            .any(|t| ext.eq_ignore_ascii_case(t))
    });
    let in_template_dir = dirs
        .iter()
        .any(|d| TEMPLATE_DIRS.iter().any(|t| d.eq_ignore_ascii_case(t)));
    marked || format == Format::Html && in_template_dir
}

/// CHANGELOG and its kin, by a file's or folder's stem (lowercase).
pub(crate) fn is_release_notes(stem: &str) -> bool {
    matches!(
        squashed(stem).as_str(),
        "changelog" | "changes" | "history" | "news" | "releasenotes"
    )
}

/// A release-notes file, or anything in a release-notes folder.
pub(crate) fn is_release_notes_path(path: &str) -> bool {
    path.split('/').any(|part| {
        let stem = part.rsplit_once('.').map_or(part, |(stem, _)| stem);
        is_release_notes(&stem.to_ascii_lowercase())
            || matches!(squashed(stem).as_str(), "releases" | "whatsnew")
    })
}

/// Whether the file at `path` may be a pip requirements file: a `.txt`
/// whose name starts with `requirements` or `constraints`. Whether it is
/// one, its lines say ([`is_pip_requirements`]).
pub fn may_be_requirements(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    file.ends_with(".txt") && (file.starts_with("requirements") || file.starts_with("constraints"))
}

/// Whether `text` reads as a pip requirements file: each line that is not
/// blank or a comment is a requirement (`name[extra]>=1.0, <2; marker`,
/// `name @ https://…`, a URL or a local path) or one of pip's options
/// (`-r other.txt`, `-e .`, `--hash=…`, `--index-url …`). One line of prose
/// (a reST title, a sentence) and it is documentation.
pub fn is_pip_requirements(text: &str) -> bool {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    joined.lines().all(|line| {
        let line = match line
            .find(" #")
            .or_else(|| line.starts_with('#').then_some(0))
        {
            Some(at) => &line[..at],
            None => line,
        };
        let line = line.trim();
        line.is_empty() || is_pip_option(line) || is_requirement(line)
    })
}

/// pip's options as a requirements file takes them.
const PIP_OPTIONS: [&str; 18] = [
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "--no-index",
    "-f",
    "--find-links",
    "--pre",
    "--prefer-binary",
    "--only-binary",
    "--no-binary",
    "--trusted-host",
    "--require-hashes",
];

fn is_pip_option(line: &str) -> bool {
    let option = line
        .split(|c: char| c == '=' || c.is_whitespace())
        .next()
        .unwrap_or(line);
    PIP_OPTIONS.contains(&option) || option == "--hash" || option == "--use-feature"
}

/// A PEP 508 requirement, as pip reads one a line, with its options after.
fn is_requirement(line: &str) -> bool {
    // A URL or a local path on its own.
    if line.contains("://") && !line.contains(' ')
        || line.starts_with("./")
        || line.starts_with("../")
    {
        return true;
    }
    // What follows the requirement: its marker, and per-requirement options.
    let line = line.split_once(';').map_or(line, |(req, _)| req);
    let line = match line.find(" --") {
        Some(at) => &line[..at],
        None => line,
    };
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(name_end);
    let ends_well = |s: &str| {
        s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
            && s.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
    };
    if !ends_well(name) {
        return false;
    }
    let mut rest = rest.trim_start();
    if let Some(extras) = rest.strip_prefix('[') {
        let Some((inside, after)) = extras.split_once(']') else {
            return false;
        };
        if !inside.split(',').all(|e| {
            ends_well(e.trim())
                && e.trim()
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        }) {
            return false;
        }
        rest = after.trim_start();
    }
    if let Some(url) = rest.strip_prefix('@') {
        let url = url.trim();
        return url.contains("://") && !url.contains(' ');
    }
    let rest = rest
        .strip_prefix('(')
        .and_then(|r| r.trim_end().strip_suffix(')'))
        .unwrap_or(rest);
    rest.trim().is_empty()
        || rest
            .split(',')
            .all(|clause| is_version_clause(clause.trim()))
}

/// `>=1.0`, `==2.*`, `~= 3.1`, `!=1.5.0rc1`.
fn is_version_clause(clause: &str) -> bool {
    let version = ["===", "==", "!=", "~=", ">=", "<=", ">", "<"]
        .iter()
        .find_map(|op| clause.strip_prefix(op))
        .map(str::trim);
    version.is_some_and(|v| {
        !v.is_empty()
            && v.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'.' | b'*' | b'+' | b'!' | b'_' | b'-')
            })
    })
}

/// Whether the top-level file `path` is a README or one of a project's
/// own files (its licence, code of conduct, charter, governance, security
/// policy, contributing or triage guide): what a tree without a docs
/// folder holds at its top, and no documentation of the package's use.
pub fn is_project_file(path: &str) -> bool {
    if path.contains('/') {
        return false;
    }
    let stem = squashed(stem_of(path));
    let project = [
        "readme",
        "license",
        "licence",
        "copying",
        "notice",
        "authors",
        "contributors",
        "maintainers",
        "codeowners",
        "codeofconduct",
        "conduct",
        "charter",
        "governance",
        "security",
        "support",
        "funding",
        "contributing",
        "triagerguide",
        "triage",
        "releasing",
    ];
    project.contains(&stem.as_str()) || is_release_notes(&stem)
}

/// The warning for documents (by path) that are only a README and a
/// project's own files ([`is_project_file`]), if they are: a source that
/// ends `done` with them answers no question about the package's use.
pub fn only_project_files<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let paths: Vec<&str> = paths.into_iter().collect();
    if paths.is_empty() || !paths.iter().all(|p| is_project_file(p)) {
        return None;
    }
    let readme = |p: &&str| p.to_ascii_lowercase().starts_with("readme");
    let what = match paths.iter().all(readme) {
        true => "only the README came in".to_owned(),
        false => {
            let more = if paths.len() > NAMED { ", …" } else { "" };
            let shown = paths[..paths.len().min(NAMED)].join(", ");
            format!("only a README and the project's own files came in ({shown}{more}), no documentation of its use")
        }
    };
    Some(format!(
        "warning: {what}: there is no docs folder; the documentation may be on a site to add as a source of its own"
    ))
}

/// Of the files read, the pip requirements files ([`is_pip_requirements`]):
/// left out, each counted in `left_out`. `parts` gives a file's path and
/// bytes as read.
pub fn drop_requirements<T>(
    files: &mut Vec<T>,
    parts: impl Fn(&T) -> (&str, &[u8]),
    left_out: &mut RuleTally,
) {
    files.retain(|file| {
        let (path, bytes) = parts(file);
        let requirements =
            may_be_requirements(path) && std::str::from_utf8(bytes).is_ok_and(is_pip_requirements);
        if requirements {
            left_out.add(Rule::PipRequirements, path);
        }
        !requirements
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_files_are_told_from_prose_by_their_lines() {
        let pip = "# Docs build\nsphinx>=5.0,<8\nfuro==2023.9.10 ; python_version >= \"3.8\"\n\
                   sphinx-design[extra] >= 0.5\n-r ../requirements.txt\n-e .\n--index-url https://pypi.org/simple\n\
                   myst-parser @ https://example.org/myst.whl\nattrs \\\n    --hash=sha256:abc123\nDjango (>=3.2)\n\n";
        assert!(is_pip_requirements(pip));
        assert!(is_pip_requirements("sphinx\n"));
        // Django's docs/ref/models/constraints.txt: reST prose.
        let rest = "=====================\nConstraints reference\n=====================\n\n\
                    .. module:: django.db.models.constraints\n\nThe classes defined in this module create database constraints.\n";
        assert!(!is_pip_requirements(rest));
        let markdown = "# Requirements\n\nPython 3.8 or later.\n";
        assert!(!is_pip_requirements(markdown));
        // One prose line among requirements makes it prose.
        assert!(!is_pip_requirements("sphinx\nInstall these first.\n"));
        assert!(may_be_requirements("docs/requirements.txt"));
        assert!(may_be_requirements("docs/constraints-dev.txt"));
        assert!(!may_be_requirements("docs/ref/models/constraints.rst"));
        assert!(!may_be_requirements("docs/my-requirements.txt"));
    }

    #[test]
    fn contributing_is_documentation_in_a_docs_folder_only() {
        assert_eq!(
            judge("internals/contributing/index.txt", false, false),
            Ok(Format::Text)
        );
        assert_eq!(judge("contributing.md", false, false), Ok(Format::Markdown));
        assert_eq!(
            judge("CONTRIBUTING.md", true, false),
            Err(Some(Rule::Contributing))
        );
        assert_eq!(judge("README.md", true, false), Ok(Format::Markdown));
    }

    #[test]
    fn templates_are_html_in_template_folders_or_marked_by_extension() {
        assert_eq!(
            judge("theme/main.html", false, false),
            Err(Some(Rule::Template))
        );
        assert_eq!(
            judge("_templates/layout.html", false, false),
            Err(Some(Rule::Template))
        );
        assert_eq!(
            judge("overrides/partials/nav.html", false, false),
            Err(Some(Rule::Template))
        );
        assert_eq!(
            judge("guide/page.jinja.html", false, false),
            Err(Some(Rule::Template))
        );
        // Prose about templates stays.
        assert_eq!(
            judge("ref/templates/api.txt", false, false),
            Ok(Format::Text)
        );
        assert_eq!(
            judge("topics/templates.html", false, false),
            Ok(Format::Html)
        );
        assert_eq!(judge("_static/x.md", false, false), Err(Some(Rule::Folder)));
        assert_eq!(judge("logo.png", false, false), Err(None));
    }

    #[test]
    fn notes_count_each_rule_and_name_a_few() {
        let mut tally = RuleTally::default();
        for path in ["docs/d.txt", "docs/c.txt", "docs/b.txt", "docs/a.txt"] {
            tally.add(Rule::PipRequirements, path);
        }
        tally.add(Rule::Template, "docs/theme/main.html");
        assert_eq!(tally.total(), 5);
        assert_eq!(tally.count(Rule::PipRequirements), 4);
        assert_eq!(
            tally.notes(),
            [
                "left out 1 site template (HTML in a theme or template folder) (docs/theme/main.html)",
                "left out 4 pip requirements files (docs/a.txt, docs/b.txt, docs/c.txt, …)",
            ]
        );
    }

    #[test]
    fn a_readme_and_governance_files_are_the_projects_own() {
        for path in [
            "README.md",
            "Charter.md",
            "Code-Of-Conduct.md",
            "Triager-Guide.md",
            "SECURITY.md",
            "LICENSE",
            "History.md",
        ] {
            assert!(is_project_file(path), "{path}");
        }
        assert!(!is_project_file("GUIDE.md"));
        assert!(!is_project_file("docs/README.md"));
        assert_eq!(
            only_project_files(["Readme.md"]).as_deref(),
            Some("warning: only the README came in: there is no docs folder; the documentation may be on a site to add as a source of its own")
        );
        let governance =
            only_project_files(["Charter.md", "Readme.md", "Security.md", "Triager-Guide.md"]);
        assert!(governance.is_some_and(|w| w.contains("(Charter.md, Readme.md, Security.md, …)")));
        assert_eq!(only_project_files(["Readme.md", "docs/guide.md"]), None);
        assert_eq!(only_project_files([]), None);
    }
}
