//! docshelf's ingestion: how a file becomes chunks.
//!
//! The contract (formats, names, jobs, errors) is `index-core`'s, shared
//! with the browser; this crate is the processing behind it, which only the
//! server runs. Pure functions over bytes, with no I/O and no async runtime:
//! the server fetches, stores and embeds.
//!
//! - [`extract`]: one reader per [`index_core::format::Format`] (Markdown,
//!   MDX, reStructuredText, AsciiDoc, HTML, PDF, Word, notebooks, text),
//!   archives (ZIP, tar) under one set of limits, all to clean Markdown.
//! - [`chunk`]: text to overlapping chunks that never split a code block.
//! - [`context`]: the title and headings embedded and indexed with each chunk.
//! - [`ids`]: deterministic chunk ids.
//! - [`package`]: which files of a registry package are its documentation.
//! - [`docs_tree`]: which files of a source tree (a Git repository) are.
//! - [`file_rules`]: the rules both leave files out by, and their notes.
//! - [`package_meta`]: where a package says its docs live (repository, site).
//! - [`selection`]: a source's include globs and page bound over files.

pub mod api_reference;
pub mod chunk;
pub mod compare;
pub mod context;
pub mod docs_tree;
pub mod extract;
pub mod file_rules;
pub mod ids;
pub mod package;
pub mod package_meta;
pub mod sections;
pub mod selection;
