//! docshelf's native engine and its faces.
//!
//! - [`access`]: tokens with roles per library, and who a request is.
//! - [`config`]: settings from flags and environment.
//! - [`embed`]: all-MiniLM-L6-v2 on burn (GPU via wgpu, or CPU).
//! - [`engine`]: the one object every face (HTTP, dashboard, CLI) calls.
//! - [`error`]: the engine's errors and the kind each one is.
//! - [`error_chain`]: an error's causes and an upstream's message, for people.
//! - [`ingest`]: upload jobs: extract, chunk, embed, store.
//! - [`machine`]: the machine's memory, which default budgets scale with.
//! - [`process`]: other tools run as child processes within bounds (OCR's).
//! - [`source`]: documentation from where it lives: sites crawled, registry packages.
//! - [`store`]: the LanceDB chunk store.
//! - [`upgrade`]: re-embedding a store written by an older docshelf, on open.
//! - [`transfer`]: the export file a library version moves between servers in.
//! - [`search`]: hybrid search over the store: legs, fusion, second stage, pages.
//! - [`ask`]: answers written by a language model from what search finds.
//! - [`llm`]: the OpenAI-compatible model client Ask writes with.
//! - [`eval`]: retrieval quality on a judged corpus (`docshelf eval`).
//! - [`http`]: the axum router: REST API, dashboard rendering, static files.
//! - [`cli`]: the `docshelf` command line.

// The dashboard's view types are deeply nested generics.
#![recursion_limit = "256"]

pub mod access;
pub mod ask;
pub mod background;
pub mod cli;
pub mod config;
pub mod embed;
pub mod engine;
pub mod error;
pub mod error_chain;
pub mod eval;
pub mod http;
pub mod ingest;
pub mod llm;
pub mod machine;
pub mod mcp;
pub mod metrics;
pub mod process;
pub mod search;
pub mod source;
pub mod store;
pub mod telemetry;
pub mod transfer;
pub mod upgrade;

#[cfg(test)]
mod layering;
