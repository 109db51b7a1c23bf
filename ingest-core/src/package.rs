//! A package's documentation, taken from its registry archive: the names
//! (`pypi:attrs==24.2.0`, `npm:@scope/name@1.2.3`, `crates:itoa@1.0.11`),
//! which of an archive's files are documentation, and their extraction.
//!
//! Pure: the server fetches the archive and hands its bytes here.

use std::collections::HashMap;
use std::fmt;

use crate::extract::{
    archive_files, extract_chosen, ArchiveLimits, ExtractError, Extraction, MemoryGauge, Pick,
};
use index_core::format::Format;

use crate::file_rules::{self, Rule, RuleTally};
use crate::selection::DocsSelection;

/// Where a package comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Registry {
    PyPi,
    Npm,
    Crates,
}

impl Registry {
    /// The prefix that names this registry in a source: `pypi`, `npm`, `crates`.
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::PyPi => "pypi",
            Self::Npm => "npm",
            Self::Crates => "crates",
        }
    }

    /// How a version is attached to a name in this registry's source.
    const fn version_separator(self) -> &'static str {
        match self {
            Self::PyPi => "==",
            Self::Npm | Self::Crates => "@",
        }
    }

    const fn example(self) -> &'static str {
        match self {
            Self::PyPi => "pypi:attrs==24.2.0",
            Self::Npm => "npm:@types/node@20.11.0",
            Self::Crates => "crates:itoa@1.0.11",
        }
    }

    /// The longest name this registry allows (npm's and crates.io's
    /// rules; PyPI sets none, so npm's serves).
    const fn max_name_len(self) -> usize {
        match self {
            Self::PyPi | Self::Npm => 214,
            Self::Crates => 64,
        }
    }
}

impl fmt::Display for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.prefix())
    }
}

/// The longest version accepted (PEP 440 and semver set none; real ones
/// are far shorter).
pub const MAX_VERSION_LEN: usize = 64;

/// A package named as a source: registry, name, and optionally a version
/// (the newest when absent, as the registry says).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackageSpec {
    pub registry: Registry,
    /// As given; [`PackageSpec::normalized_name`] is what registries compare.
    pub name: String,
    pub version: Option<String>,
}

/// Why a `pypi:`, `npm:` or `crates:` source cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageSpecError {
    #[error("{registry}: no package name given; write it as {example}", example = registry.example())]
    NoName { registry: Registry },
    #[error("{shown:?} is not a {registry} package name: {why}")]
    Name {
        registry: Registry,
        shown: String,
        why: &'static str,
    },
    #[error("{shown:?} is not a version docshelf can ask {registry} for: {why}")]
    Version {
        registry: Registry,
        shown: String,
        why: &'static str,
    },
}

impl PackageSpec {
    /// Reads `pypi:NAME[==VER]`, `npm:NAME[@VER]` or `crates:NAME[@VER]`.
    /// `Ok(None)` when `s` names no registry, so that the caller can try it
    /// as a URL; `Err` when it names one but the rest is not a package.
    pub fn parse(s: &str) -> Result<Option<Self>, PackageSpecError> {
        let Some((prefix, rest)) = s.split_once(':') else {
            return Ok(None);
        };
        let registry = match prefix.to_ascii_lowercase().as_str() {
            "pypi" => Registry::PyPi,
            "npm" => Registry::Npm,
            "crates" => Registry::Crates,
            _ => return Ok(None),
        };
        let (name, version) = match registry {
            Registry::PyPi => match rest.split_once("==") {
                Some((name, version)) => (name, Some(version)),
                None => (rest, None),
            },
            // The last `@` after the first character: a scope's `@` leads.
            Registry::Npm | Registry::Crates => match rest.get(1..).and_then(|r| r.rfind('@')) {
                Some(at) => (&rest[..=at], Some(&rest[at + 2..])),
                None => (rest, None),
            },
        };
        if name.is_empty() {
            return Err(PackageSpecError::NoName { registry });
        }
        let bad_name = |why| PackageSpecError::Name {
            registry,
            shown: index_core::validate::cut(name, 80),
            why,
        };
        if name.len() > registry.max_name_len() {
            return Err(bad_name(match registry {
                Registry::Crates => "longer than 64 characters",
                _ => "longer than 214 characters",
            }));
        }
        if let Some(why) = name_problem(registry, name) {
            return Err(bad_name(why));
        }
        if let Some(version) = version {
            if let Some(why) = version_problem(registry, version) {
                return Err(PackageSpecError::Version {
                    registry,
                    shown: index_core::validate::cut(version, 80),
                    why,
                });
            }
        }
        Ok(Some(Self {
            registry,
            name: name.to_owned(),
            version: version.map(str::to_owned),
        }))
    }

    /// The name as the registry compares names, for telling packages apart
    /// (not for building URLs, which want the name as published): PyPI's
    /// PEP 503 form (lowercase, runs of `-_.` as one `-`); crates.io's
    /// (case and `-`/`_` ignored, shown as lowercase with `-`); npm names
    /// are lowercase already.
    pub fn normalized_name(&self) -> String {
        match self.registry {
            Registry::PyPi => pypi_normalized(&self.name),
            Registry::Crates => self.name.to_ascii_lowercase().replace('_', "-"),
            Registry::Npm => self.name.clone(),
        }
    }
}

/// A PyPI project name as PEP 503 compares them: lowercase, each run of
/// `-`, `_` and `.` one `-` (`Zope_Interface` is `zope-interface`). Also
/// what sdist file names are matched by, which spell the name as the
/// project did.
pub fn pypi_normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

impl fmt::Display for PackageSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.registry, self.name)?;
        if let Some(version) = &self.version {
            write!(f, "{}{version}", self.registry.version_separator())?;
        }
        Ok(())
    }
}

/// What is wrong with `name` for `registry`, if anything.
fn name_problem(registry: Registry, name: &str) -> Option<&'static str> {
    if name.chars().any(char::is_whitespace) {
        return Some("it contains whitespace");
    }
    match registry {
        // PEP 508: ASCII letters and digits, with `.`, `_`, `-` inside.
        Registry::PyPi => {
            if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            {
                return Some("only letters, digits, '.', '_' and '-' are allowed");
            }
            let ends = [name.as_bytes()[0], name.as_bytes()[name.len() - 1]];
            if !ends.iter().all(u8::is_ascii_alphanumeric) {
                return Some("it must start and end with a letter or digit");
            }
            None
        }
        // `name` or `@scope/name`, each part lowercase and URL-safe.
        Registry::Npm => {
            let part_problem = |part: &str| {
                if part.is_empty() {
                    Some("a scope and a name are written @scope/name")
                } else if part.starts_with(['.', '_']) {
                    Some("it may not start with '.' or '_'")
                } else if !part.bytes().all(|b| {
                    b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || matches!(b, b'-' | b'.' | b'_' | b'~')
                }) {
                    Some("only lowercase letters, digits, '-', '.', '_' and '~' are allowed")
                } else {
                    None
                }
            };
            match name.strip_prefix('@') {
                Some(scoped) => match scoped.split_once('/') {
                    Some((scope, bare)) => part_problem(scope).or_else(|| part_problem(bare)),
                    None => Some("a scope and a name are written @scope/name"),
                },
                None => part_problem(name),
            }
        }
        Registry::Crates => {
            if !name.as_bytes()[0].is_ascii_alphabetic() {
                Some("it must start with a letter")
            } else if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
            {
                Some("only letters, digits, '_' and '-' are allowed")
            } else {
                None
            }
        }
    }
}

/// What is wrong with `version` for `registry`, if anything. An exact
/// version (or an npm dist-tag such as `latest`), never a range: the
/// server asks the registry for exactly this.
fn version_problem(registry: Registry, version: &str) -> Option<&'static str> {
    if version.is_empty() {
        return Some("it is empty; leave the version out to take the newest");
    }
    if version.len() > MAX_VERSION_LEN {
        return Some("longer than 64 characters");
    }
    if version.chars().any(char::is_whitespace) {
        return Some("it contains whitespace");
    }
    let allowed = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'.' | b'-' | b'+')
            // PEP 440's epochs (`1!2.0`) and local parts use `!` and `_`.
            || (registry == Registry::PyPi && matches!(b, b'!' | b'_'))
            || (registry == Registry::Npm && b == b'_')
    };
    if !version.bytes().all(allowed) {
        return Some("an exact version is letters, digits and '.', '-', '+'");
    }
    let first = version.as_bytes()[0];
    let starts_well = match registry {
        Registry::Crates => first.is_ascii_digit(),
        Registry::PyPi | Registry::Npm => first.is_ascii_alphanumeric(),
    };
    (!starts_well).then_some("it must start with a digit (or, for npm, a tag's letter)")
}

/// One documentation file of a package archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocPath<'a> {
    /// The file's path in the archive.
    pub archive_path: &'a str,
    /// Its path in the package: `archive_path` less the archive's one
    /// top-level folder (`package/`, `attrs-24.2.0/`).
    pub path: &'a str,
    /// How it is read: a bare `README` is text.
    pub format: Format,
}

/// Folders whose name (any case) marks documentation, at the package's top.
pub(crate) const DOC_DIRS: [&str; 3] = ["docs", "doc", "documentation"];

/// Which of a package archive's file paths are its documentation: the
/// top-level README (any case, any format docshelf reads, or none) and the
/// files docshelf reads under a top-level `docs/`, `doc/` or
/// `documentation/` folder, nested ones included. `paths` are the archive's
/// files as [`index_core::validate::file_path`] cleans them; the archive's single
/// top-level folder, if it has one, is left out of each [`DocPath::path`].
///
/// The rules of [`crate::file_rules`] hold: release notes, site
/// templates, hidden, dependency, test and build folders are left out,
/// and so is a contributing guide at the top (inside the docs folder it
/// is documentation). What they left out is counted in `left_out`.
pub fn documentation_paths<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    left_out: &mut RuleTally,
) -> Vec<DocPath<'a>> {
    doc_paths(paths, |path| match doc_format(path) {
        Ok(format) => Some(format),
        Err(Some(rule)) => {
            left_out.add(rule, path);
            None
        }
        Err(None) => None,
    })
}

/// Each archive path with its package-relative path (the single folder
/// every path lies in, if there is one, taken off), kept with the format
/// `format` reads it in, if any.
fn doc_paths<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    mut format: impl FnMut(&str) -> Option<Format>,
) -> Vec<DocPath<'a>> {
    let paths: Vec<&str> = paths.into_iter().collect();
    let root = single_root(&paths);
    paths
        .into_iter()
        .filter_map(|archive_path| {
            let path = match root {
                Some(root) => &archive_path[root.len() + 1..],
                None => archive_path,
            };
            Some(DocPath {
                archive_path,
                path,
                format: format(path)?,
            })
        })
        .collect()
}

/// The folder every path lies in, when there is exactly one.
fn single_root<'a>(paths: &[&'a str]) -> Option<&'a str> {
    let (first, _) = paths.first()?.split_once('/')?;
    paths
        .iter()
        .all(|p| p.split_once('/').is_some_and(|(top, _)| top == first))
        .then_some(first)
}

/// How the package-relative `path` is read if it is documentation, or
/// which rule leaves it out (`Err(None)`: not documentation at all).
fn doc_format(path: &str) -> Result<Format, Option<Rule>> {
    let parts: Vec<&str> = path.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else {
        return Err(None);
    };
    match dirs {
        [] => {
            let stem = file.rsplit_once('.').map_or(*file, |(stem, _)| stem);
            if !stem.eq_ignore_ascii_case("readme") {
                // Only the README is taken at the top; the rules say what
                // else there looked like documentation and was not.
                return file_rules::judge(path, true, false).and(Err(None));
            }
            match Format::from_path(file) {
                None if !file.contains('.') => Ok(Format::Text),
                format => format.filter(|f| !f.is_archive()).ok_or(None),
            }
        }
        [top, ..] if DOC_DIRS.iter().any(|d| top.eq_ignore_ascii_case(d)) => {
            file_rules::judge(&path[top.len() + 1..], false, false)
        }
        _ => Err(None),
    }
}

/// How many entries a package archive may hold per documentation file an
/// upload may: the walk over the rest is bounded by this multiple.
const WALKED_ENTRIES_PER_DOC: usize = 10;

/// A package's documentation, extracted, and how many of its files were not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageDocs {
    /// The documentation files, under their package-relative paths; its
    /// `skipped` lists only documentation files that could not be read.
    pub extraction: Extraction,
    /// The package's other files (sources, tests, metadata), counted but
    /// not listed: a package has hundreds, and listing them would bury
    /// the documentation files that did fail.
    pub left_out: usize,
    /// Documentation files past the source's page bound, not read.
    pub past_bound: usize,
    /// The files docshelf reads that a rule left out, by rule.
    pub rules: RuleTally,
}

/// Extracts the documentation ([`documentation_paths`]) of the package
/// archive `file_name` (`.tar.gz`, `.tgz`, `.crate` or `.zip`) with
/// contents `bytes`, by the limits and memory rules of an upload. Other
/// files are never decompressed into memory: a tar's are inflated and
/// dropped as the stream passes them, a ZIP's not read at all.
///
/// A package without documentation yields no documents; saying so is the
/// caller's.
pub fn extract_package_docs(
    file_name: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    selection: &DocsSelection,
    memory: &mut dyn MemoryGauge,
) -> Result<PackageDocs, ExtractError> {
    // Only the documentation counts toward the entry limit: a project's
    // sdist carries its whole tree (Django's has over 10,000 files), which
    // is walked, never held. The walk itself stays bounded.
    let walk = ArchiveLimits {
        max_entries: limits.max_entries.saturating_mul(WALKED_ENTRIES_PER_DOC),
        ..*limits
    };
    // A tar is read twice: once for its names (the top-level folder is only
    // known once all are seen), once for the chosen files.
    let files = archive_files(file_name, bytes, &walk)?;
    let mut rules = RuleTally::default();
    let mut chosen = match selection.chooses() {
        true => included_paths(files.iter().map(String::as_str), selection),
        false => documentation_paths(files.iter().map(String::as_str), &mut rules),
    };
    let past_bound = selection.cut(&mut chosen, |d| d.path);
    let wanted: HashMap<&str, DocPath<'_>> = chosen
        .into_iter()
        .map(|doc| (doc.archive_path, doc))
        .collect();
    if wanted.len() > limits.max_entries {
        return Err(ExtractError::TooManyDocs {
            found: wanted.len(),
            max: limits.max_entries,
        });
    }
    let (mut extraction, mut left_out) = extract_chosen(
        file_name,
        bytes,
        &walk,
        memory,
        &mut |name, unreadable| match wanted.get(name) {
            Some(doc) if unreadable.is_none() => Pick::Take {
                path: doc.path.to_owned(),
                format: doc.format,
            },
            _ => Pick::Pass,
        },
    )?;
    if !selection.chooses() {
        // A pip requirements file is told from prose by its lines, read now.
        let before = extraction.documents.len();
        file_rules::drop_requirements(
            &mut extraction.documents,
            |doc| (doc.file_path.as_str(), doc.text.as_bytes()),
            &mut rules,
        );
        left_out += before - extraction.documents.len();
    }
    left_out -= rules.total().min(left_out);
    extraction.notes.extend(rules.notes());
    Ok(PackageDocs {
        extraction,
        left_out,
        past_bound,
        rules,
    })
}

/// The files `selection`'s include globs match, by their path in the
/// package, that docshelf reads.
fn included_paths<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    selection: &DocsSelection,
) -> Vec<DocPath<'a>> {
    doc_paths(paths, |path| {
        selection
            .includes(path)
            .then(|| Format::from_path(path))
            .flatten()
            .filter(|f| !f.is_archive())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Unmetered;

    fn spec(s: &str) -> PackageSpec {
        PackageSpec::parse(s).unwrap().unwrap()
    }

    #[test]
    fn specs_parse_and_print_back() {
        let attrs = spec("pypi:attrs==24.2.0");
        assert_eq!(attrs.registry, Registry::PyPi);
        assert_eq!(attrs.name, "attrs");
        assert_eq!(attrs.version.as_deref(), Some("24.2.0"));
        for s in [
            "pypi:attrs==24.2.0",
            "pypi:zope.interface",
            "pypi:Django==5.0rc1",
            "pypi:foo==1!2.0+local_1",
            "npm:left-pad",
            "npm:@types/node@20.11.0",
            "npm:@scope/pkg",
            "npm:react@latest",
            "crates:itoa@1.0.11",
            "crates:serde_json",
            "crates:tokio@1.0.0-alpha.1",
        ] {
            assert_eq!(spec(s).to_string(), s);
        }
        let scoped = spec("npm:@types/node@20.11.0");
        assert_eq!(
            (scoped.name.as_str(), scoped.version.as_deref()),
            ("@types/node", Some("20.11.0"))
        );
        assert_eq!(spec("npm:@types/node").version, None);
        assert_eq!(spec("PyPI:attrs").to_string(), "pypi:attrs");
    }

    #[test]
    fn other_sources_are_not_specs() {
        for s in [
            "https://docs.python.org/3/",
            "http://localhost:8000",
            "attrs",
            "",
            "file:README.md",
            "pip:attrs",
        ] {
            assert_eq!(PackageSpec::parse(s), Ok(None), "{s}");
        }
    }

    #[test]
    fn malformed_specs_are_refused_with_the_reason() {
        for s in ["pypi:", "npm:", "crates:", "pypi:==1.0"] {
            assert!(
                matches!(PackageSpec::parse(s), Err(PackageSpecError::NoName { .. })),
                "{s}"
            );
        }
        for s in [
            "pypi:at trs",
            "pypi:-attrs",
            "pypi:attrs-",
            "pypi:attrs@1.0",
            "pypi:ünicode",
            "npm:React",
            "npm:.hidden",
            "npm:_under",
            "npm:@scope",
            "npm:@scope/",
            "npm:@/name",
            "npm:a/b",
            "crates:1password",
            "crates:foo.bar",
            "crates:foo@@1.0",
        ] {
            assert!(
                matches!(PackageSpec::parse(s), Err(PackageSpecError::Name { .. })),
                "{s}: {:?}",
                PackageSpec::parse(s)
            );
        }
        let long = format!("crates:{}", "a".repeat(65));
        assert!(PackageSpec::parse(&long).is_err());
        assert!(PackageSpec::parse(&format!("crates:{}", "a".repeat(64))).is_ok());
        assert!(PackageSpec::parse(&format!("npm:{}", "a".repeat(215))).is_err());
        for s in [
            "pypi:attrs==",
            "pypi:attrs==>=1.0",
            "pypi:attrs== 1.0",
            "npm:react@^18",
            "npm:react@",
            "crates:itoa@latest",
            "crates:itoa@1.0 ",
        ] {
            assert!(
                matches!(PackageSpec::parse(s), Err(PackageSpecError::Version { .. })),
                "{s}: {:?}",
                PackageSpec::parse(s)
            );
        }
        let err = PackageSpec::parse("pypi:").unwrap_err().to_string();
        assert!(err.contains("pypi:attrs==24.2.0"), "{err}");
        let long_version = format!("crates:itoa@1.{}", "0".repeat(70));
        assert!(PackageSpec::parse(&long_version).is_err());
    }

    #[test]
    fn names_normalize_as_each_registry_compares_them() {
        assert_eq!(
            spec("pypi:Zope.Interface").normalized_name(),
            "zope-interface"
        );
        assert_eq!(spec("pypi:Foo__Bar-._baz").normalized_name(), "foo-bar-baz");
        assert_eq!(spec("crates:Serde_JSON").normalized_name(), "serde-json");
        assert_eq!(spec("npm:@types/node").normalized_name(), "@types/node");
    }

    fn chosen<'a>(paths: &[&'a str]) -> Vec<&'a str> {
        documentation_paths(paths.iter().copied(), &mut RuleTally::default())
            .into_iter()
            .map(|d| d.path)
            .collect()
    }

    #[test]
    fn a_pypi_sdist_gives_its_readme_and_docs() {
        let attrs = [
            "attrs-24.2.0/.git_archival.txt",
            "attrs-24.2.0/.github/CONTRIBUTING.md",
            "attrs-24.2.0/.github/SECURITY.md",
            "attrs-24.2.0/.readthedocs.yaml",
            "attrs-24.2.0/CHANGELOG.md",
            "attrs-24.2.0/CITATION.cff",
            "attrs-24.2.0/LICENSE",
            "attrs-24.2.0/PKG-INFO",
            "attrs-24.2.0/README.md",
            "attrs-24.2.0/changelog.d/towncrier_template.md.jinja",
            "attrs-24.2.0/conftest.py",
            "attrs-24.2.0/docs/Makefile",
            "attrs-24.2.0/docs/_static/custom.css",
            "attrs-24.2.0/docs/_static/sponsors/FusionAuth.svg",
            "attrs-24.2.0/docs/_templates/sidebar.html",
            "attrs-24.2.0/docs/api.rst",
            "attrs-24.2.0/docs/changelog.md",
            "attrs-24.2.0/docs/conf.py",
            "attrs-24.2.0/docs/examples.md",
            "attrs-24.2.0/docs/how-does-it-work.md",
            "attrs-24.2.0/docs/index.md",
            "attrs-24.2.0/docs/requirements.txt",
            "attrs-24.2.0/docs/_build/html/index.html",
            "attrs-24.2.0/pyproject.toml",
            "attrs-24.2.0/src/attr/__init__.py",
            "attrs-24.2.0/src/attr/py.typed",
            "attrs-24.2.0/tests/test_make.py",
            "attrs-24.2.0/tests/README.md",
            "attrs-24.2.0/tox.ini",
        ];
        assert_eq!(
            chosen(&attrs),
            [
                "README.md",
                "docs/api.rst",
                "docs/examples.md",
                "docs/how-does-it-work.md",
                "docs/index.md",
                // Judged by its lines once read.
                "docs/requirements.txt",
            ]
        );
        let mut rules = RuleTally::default();
        let docs = documentation_paths(attrs, &mut rules);
        assert_eq!(rules.count(Rule::ReleaseNotes), 2, "{rules:?}");
        assert_eq!(rules.count(Rule::Template), 1, "{rules:?}");
        assert_eq!(docs[0].archive_path, "attrs-24.2.0/README.md");
        assert_eq!(docs[1].format, Format::Rst);
    }

    #[test]
    fn an_npm_tarball_gives_its_readme_and_docs() {
        let npm = [
            "package/package.json",
            "package/README.md",
            "package/README.zh-CN.md",
            "package/History.md",
            "package/CONTRIBUTING.md",
            "package/LICENSE",
            "package/index.js",
            "package/lib/router.js",
            "package/lib/README.md",
            "package/Documentation/Guide.md",
            "package/docs/api.md",
            "package/docs/guides/routing.mdx",
            "package/docs/source/deep/page.html",
            "package/docs/overrides/main.html",
            "package/docs/assets/logo.png",
            "package/docs/examples.zip",
            "package/docs/.vitepress/config.md",
            "package/node_modules/dep/README.md",
            "package/__tests__/readme.md",
        ];
        assert_eq!(
            chosen(&npm),
            [
                "README.md",
                "Documentation/Guide.md",
                "docs/api.md",
                "docs/guides/routing.mdx",
                "docs/source/deep/page.html",
            ]
        );
    }

    #[test]
    fn a_crate_gives_its_readme() {
        let itoa = [
            "itoa-1.0.11/.cargo_vcs_info.json",
            "itoa-1.0.11/.github/workflows/ci.yml",
            "itoa-1.0.11/Cargo.toml",
            "itoa-1.0.11/Cargo.toml.orig",
            "itoa-1.0.11/LICENSE-APACHE",
            "itoa-1.0.11/LICENSE-MIT",
            "itoa-1.0.11/README",
            "itoa-1.0.11/benches/bench.rs",
            "itoa-1.0.11/doc/design.md",
            "itoa-1.0.11/src/lib.rs",
            "itoa-1.0.11/tests/test.rs",
        ];
        let docs = documentation_paths(itoa, &mut RuleTally::default());
        let got: Vec<(&str, Format)> = docs.iter().map(|d| (d.path, d.format)).collect();
        assert_eq!(
            got,
            [
                ("README", Format::Text),
                ("doc/design.md", Format::Markdown)
            ]
        );
    }

    #[test]
    fn without_one_top_folder_paths_stay_as_they_are() {
        assert_eq!(
            chosen(&["README.rst", "docs/index.rst", "setup.py"]),
            ["README.rst", "docs/index.rst"]
        );
        assert_eq!(chosen(&["a/README.md", "b/docs/x.md"]), Vec::<&str>::new());
        assert_eq!(chosen(&[]), Vec::<&str>::new());
        // The root's own top-level files are the package's.
        assert_eq!(chosen(&["p/readme.txt"]), ["readme.txt"]);
    }

    fn tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = ::tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = ::tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, name, *data).unwrap();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
        gz.finish().unwrap()
    }

    /// Counts what is asked for, to see what was held.
    #[derive(Default)]
    struct Peak {
        now: u64,
        peak: u64,
    }

    impl MemoryGauge for Peak {
        fn grow(&mut self, bytes: u64) -> Result<(), String> {
            self.now += bytes;
            self.peak = self.peak.max(self.now);
            Ok(())
        }
        fn shrink(&mut self, bytes: u64) {
            self.now -= bytes;
        }
    }

    #[test]
    fn a_package_archive_yields_only_its_docs() {
        // Incompressible, so that it is not taken for a bomb.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let source: Vec<u8> = (0..4 * 1024 * 1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                b'a' + (state % 26) as u8
            })
            .collect();
        let bytes = tgz(&[
            ("pkg-1.0/README.md", b"# Pkg\n\nDoes things."),
            ("pkg-1.0/CHANGELOG.md", b"# 1.0\n\nEverything."),
            ("pkg-1.0/docs/usage.rst", b"Usage\n=====\n\nCall it."),
            ("pkg-1.0/docs/broken.ipynb", b"not json"),
            ("pkg-1.0/src/big.txt", &source),
            ("pkg-1.0/src/pkg.py", b"x = 1"),
        ]);
        let mut memory = Peak::default();
        let docs = extract_package_docs(
            "pkg-1.0.tar.gz",
            &bytes,
            &ArchiveLimits::default(),
            &DocsSelection::default(),
            &mut memory,
        )
        .unwrap();
        let paths: Vec<&str> = docs
            .extraction
            .documents
            .iter()
            .map(|d| d.file_path.as_str())
            .collect();
        assert_eq!(paths, ["README.md", "docs/usage.rst"]);
        // The changelog is said by its rule, not counted among the rest.
        assert_eq!(docs.left_out, 2);
        assert_eq!(docs.rules.count(Rule::ReleaseNotes), 1);
        // The 4 MiB source file was never held.
        assert!(memory.peak < 1024 * 1024, "{}", memory.peak);
        // A doc that cannot be read is listed; nothing else is.
        let skipped: Vec<&str> = docs
            .extraction
            .skipped
            .iter()
            .map(|s| s.file_path.as_str())
            .collect();
        assert_eq!(skipped, ["docs/broken.ipynb"]);
    }

    #[test]
    fn an_archives_rules_read_requirements_by_their_lines_and_say_what_they_left_out() {
        let bytes = tgz(&[
            ("django-3.2/README.rst", b"Django\n======\n\nA web framework."),
            ("django-3.2/CONTRIBUTING.rst", b"Contributing\n============\n\nSend patches."),
            (
                "django-3.2/docs/ref/models/constraints.txt",
                b"=====================\nConstraints reference\n=====================\n\nUse ``UniqueConstraint`` with a condition.\n",
            ),
            (
                "django-3.2/docs/internals/contributing/index.txt",
                b"======================\nContributing to Django\n======================\n\nWrite a patch.\n",
            ),
            ("django-3.2/docs/requirements.txt", b"pyenchant\nSphinx>=3.1.0\nsphinxcontrib-spelling\n"),
            ("django-3.2/docs/_theme/djangodocs/layout.html", b"{% extends 'basic/layout.html' %}"),
            ("django-3.2/docs/theme/main.html", b"{% block content %}{% endblock %}"),
        ]);
        let docs = extract_package_docs(
            "django-3.2.tar.gz",
            &bytes,
            &ArchiveLimits::default(),
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .unwrap();
        let mut paths: Vec<&str> = docs
            .extraction
            .documents
            .iter()
            .map(|d| d.file_path.as_str())
            .collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            [
                "README.rst",
                "docs/internals/contributing/index.txt",
                "docs/ref/models/constraints.txt",
            ]
        );
        assert_eq!(
            docs.extraction.notes,
            [
                "left out 2 site templates (HTML in theme or template folders) (docs/_theme/djangodocs/layout.html, docs/theme/main.html)",
                "left out 1 contributing guide at the top of the tree (about the project, not its use) (CONTRIBUTING.rst)",
                "left out 1 pip requirements file (docs/requirements.txt)",
            ]
        );
        assert_eq!(docs.left_out, 0);
    }

    #[test]
    fn only_the_docs_count_toward_the_entry_limit() {
        let names: Vec<String> = (0..40).map(|i| format!("pkg-1.0/src/m{i}.py")).collect();
        let mut files: Vec<(&str, &[u8])> =
            names.iter().map(|n| (n.as_str(), &b"x = 1"[..])).collect();
        files.push(("pkg-1.0/README.md", b"# Pkg"));
        files.push(("pkg-1.0/docs/usage.md", b"# Usage"));
        let bytes = tgz(&files);
        let limits = ArchiveLimits {
            max_entries: 5,
            ..ArchiveLimits::default()
        };
        let docs = extract_package_docs(
            "pkg-1.0.tar.gz",
            &bytes,
            &limits,
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .expect("42 entries, 2 of them docs, within 5");
        assert_eq!(docs.extraction.documents.len(), 2);
        let one = ArchiveLimits {
            max_entries: 1,
            ..ArchiveLimits::default()
        };
        let err = extract_package_docs(
            "pkg-1.0.tar.gz",
            &bytes,
            &one,
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .unwrap_err();
        // The walk's own bound (10 per doc file allowed) comes first here.
        assert!(err.to_string().contains("entries"), "{err}");
    }

    #[test]
    fn include_globs_and_a_bound_choose_a_packages_files() {
        let bytes = tgz(&[
            ("pkg-1.0/README.md", b"# Pkg"),
            ("pkg-1.0/CHANGELOG.md", b"# 1.0"),
            ("pkg-1.0/docs/a.md", b"# A"),
            ("pkg-1.0/docs/b.md", b"# B"),
        ]);
        let limits = ArchiveLimits::default();
        let paths = |selection: &DocsSelection| -> Vec<String> {
            extract_package_docs("pkg-1.0.tar.gz", &bytes, &limits, selection, &mut Unmetered)
                .unwrap()
                .extraction
                .documents
                .iter()
                .map(|d| d.file_path.clone())
                .collect()
        };
        let bounded = DocsSelection::new(&[], Some(2)).unwrap();
        assert_eq!(paths(&bounded), ["README.md", "docs/a.md"]);
        let notes = DocsSelection::new(&["CHANGELOG.md".into(), "docs/b.md".into()], None).unwrap();
        assert_eq!(paths(&notes), ["CHANGELOG.md", "docs/b.md"]);
    }

    #[test]
    fn a_zip_sdist_and_a_npm_tarball_work_too() {
        use std::io::Write;
        let mut zip = ::zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = ::zip::write::SimpleFileOptions::default();
        for (name, data) in [
            ("old-0.1/README.txt", &b"Old package."[..]),
            ("old-0.1/setup.py", b"setup()"),
            ("old-0.1/doc/index.html", b"<h1>Old</h1><p>Docs.</p>"),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(data).unwrap();
        }
        let zip = zip.finish().unwrap().into_inner();
        let limits = ArchiveLimits::default();
        let docs = extract_package_docs(
            "old-0.1.zip",
            &zip,
            &limits,
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .unwrap();
        let paths: Vec<&str> = docs
            .extraction
            .documents
            .iter()
            .map(|d| d.file_path.as_str())
            .collect();
        assert_eq!(paths, ["README.txt", "doc/index.html"]);
        assert_eq!(docs.left_out, 1);

        let npm = tgz(&[
            ("package/package.json", b"{}"),
            ("package/README.md", b"# left-pad"),
        ]);
        let docs = extract_package_docs(
            "left-pad-1.3.0.tgz",
            &npm,
            &limits,
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .unwrap();
        assert_eq!(docs.extraction.documents[0].file_path, "README.md");
        assert_eq!(docs.left_out, 1);

        let err = extract_package_docs(
            "x.md",
            b"# x",
            &limits,
            &DocsSelection::default(),
            &mut Unmetered,
        )
        .unwrap_err();
        assert!(matches!(err, ExtractError::Unsupported(_)), "{err}");
    }
}
