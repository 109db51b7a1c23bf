//! A package's API reference, read from its own code at the release: the
//! pages Sphinx's autodoc, mkdocstrings or TypeDoc would generate at build
//! time, which is why no docs folder holds them. Python packages are read
//! from their sdist's modules (signatures, type hints, docstrings), npm
//! packages from the TypeScript declarations they ship (`.d.ts`, JSDoc).
//! Crates have docs.rs, whose pages are rustdoc's reference already.
//!
//! Code is parsed, never imported or run, and the archive is walked by the
//! same limits and memory rules as an upload.

mod docstring;
mod javascript;
mod python;
mod python_package;
mod render;
mod symbol;
mod typescript;

/// Where a reference's documents live in their library version.
pub const PREFIX: &str = "api/";

use std::collections::HashMap;

use crate::extract::{archive_files, extract_chosen, Pick};
use crate::extract::{ArchiveLimits, ExtractError, MemoryGauge};
use crate::package::Registry;

use self::python_package::SourceFile;
use self::render::{Language, Page};

/// How many times the documentation entry limit the walk over a package's
/// whole tree may go (a package's archive holds tests, data, builds).
const WALKED_ENTRIES_PER_FILE: usize = 10;

/// A package's API reference: Markdown documents under `api/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiReference {
    pub documents: Vec<ApiDocument>,
    /// Source files read.
    pub files: usize,
    /// Symbols documented, members included.
    pub symbols: usize,
    /// What it was read from, for a job's notes (`Python modules`).
    pub read_from: &'static str,
    /// Source files past the entry limit, not read.
    pub past_limit: usize,
}

/// One page of the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiDocument {
    /// `api/click.md`, `api/zod/lib/types.md`.
    pub path: String,
    pub markdown: String,
}

/// The API reference of `package` `version` from its archive `file_name`
/// (`bytes`), or `None` when the registry has none to read (crates) or
/// the archive holds no code that declares one.
pub fn read(
    registry: Registry,
    package: &str,
    version: &str,
    file_name: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Option<ApiReference>, ExtractError> {
    let walk = ArchiveLimits {
        max_entries: limits.max_entries.saturating_mul(WALKED_ENTRIES_PER_FILE),
        ..*limits
    };
    let paths = archive_files(file_name, bytes, &walk)?;
    let path_refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (language, mut wanted, read_from): (_, HashMap<String, (String, bool)>, _) = match registry
    {
        Registry::PyPi => (
            Language::Python,
            python_package::module_names(&path_refs, package),
            "Python modules",
        ),
        Registry::Npm => {
            let declarations = typescript::declaration_files(&path_refs, |path| {
                read_files(file_name, bytes, &walk, memory, &[path.to_owned()])
                    .ok()
                    .and_then(|mut files| files.pop())
                    .map(|f| f.text)
            });
            let (language, files, read_from) = if declarations.is_empty() {
                (
                    Language::JavaScript,
                    javascript::source_files(&path_refs),
                    "JavaScript files (their JSDoc comments)",
                )
            } else {
                (
                    Language::TypeScript,
                    declarations,
                    "TypeScript declaration files",
                )
            };
            let files = files
                .into_iter()
                .map(|(path, module)| (path, (module, false)))
                .collect();
            (language, files, read_from)
        }
        Registry::Crates => return Ok(None),
    };
    if wanted.is_empty() {
        return Ok(None);
    }
    // The shallowest files first when there are too many: a package's
    // API is at its top.
    let mut chosen: Vec<String> = wanted.keys().cloned().collect();
    chosen.sort_by_key(|p| (p.matches('/').count(), p.clone()));
    let past_limit = chosen.len().saturating_sub(limits.max_entries);
    chosen.truncate(limits.max_entries);
    let files = read_files(file_name, bytes, &walk, memory, &chosen)?;
    let count = files.len();
    let parsed: Vec<(String, bool, SourceFile)> = files
        .into_iter()
        .filter_map(|file| {
            let (module, package) = wanted.remove(&file.path)?;
            Some((module, package, file))
        })
        .collect();
    let pages: Vec<Page> = match language {
        Language::Python => python_package::pages(parsed),
        Language::TypeScript => typescript::pages(package, parsed),
        Language::JavaScript => javascript::pages(package, parsed),
    };
    if pages.is_empty() {
        return Ok(None);
    }
    let about = format!(
        "The API of {package} {version} as its code declares it: read by docshelf from the {read_from} of the release's {registry} package, without running any of it."
    );
    let symbols = pages
        .iter()
        .flat_map(|p| &p.entries)
        .map(|e| 1 + e.symbol.members.len())
        .sum();
    let documents = render::documents(&pages, language, &about)
        .into_iter()
        .map(|(path, markdown)| ApiDocument { path, markdown })
        .collect();
    Ok(Some(ApiReference {
        documents,
        files: count,
        symbols,
        read_from,
        past_limit,
    }))
}

/// The text of the archive's files at `paths`, decoded, read by the
/// archive rules of an upload. Files that are not text are left out.
fn read_files(
    file_name: &str,
    bytes: &[u8],
    walk: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
    paths: &[String],
) -> Result<Vec<SourceFile>, ExtractError> {
    let wanted: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
    let (extraction, _) =
        extract_chosen(file_name, bytes, walk, memory, &mut |name, unreadable| {
            if unreadable.is_none() && wanted.contains(name) {
                Pick::Verbatim {
                    path: name.to_owned(),
                }
            } else {
                Pick::Pass
            }
        })?;
    Ok(extraction
        .documents
        .into_iter()
        .map(|doc| SourceFile {
            path: doc.file_path,
            text: doc.text,
        })
        .collect())
}
