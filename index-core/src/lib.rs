//! docshelf's contract: what every face shares, the browser included.
//!
//! Everything here is plain data and pure functions, so the same code runs in
//! the native server and in the browser (wasm32). How files become chunks
//! (readers, archives, chunking, packages) is processing, not contract: it
//! lives in `ingest-core`, which fills in the types declared here, as
//! qdrant keeps `lib/api` apart from `lib/collection`. There is deliberately
//! no async runtime, no storage engine and no model runtime in this crate:
//! those live in `server`, which depends on this crate, never the other way
//! round.
//!
//! - [`format`]: the kinds of file docshelf reads, and their extensions.
//! - [`document`]: whole documents put back together from their chunks.
//! - [`catalog`]: libraries, versions and documents as people browse them.
//! - [`library`]: resolving loosely named libraries.
//! - [`version`]: ordering versions (what `latest` means).
//! - [`highlight`]: query terms marked in snippets.
//! - [`markdown`]: snippets of Markdown as safe HTML.
//! - [`feedback`]: likes and dislikes on results.
//! - [`eval`]: retrieval quality measures (nDCG, recall).
//! - [`fusion`]: merging dense and keyword rankings (RRF, DBSF).
//! - [`scoring`]: relevance blended with recency and feedback.
//! - [`search`]: search requests, checked the same way for every face.
//! - [`budget`]: token budgets, and a text cut to one.
//! - [`reading`]: stored documents read by agents, whole or by section.
//! - [`ask`]: questions answered from the documents, their sources and citations.
//! - [`stream`]: the names of the events the search and Ask streams send.
//! - [`job`]: upload jobs and per-file progress.
//! - [`status`]: what the server reports about itself.
//! - [`validate`]: library and version names.
//! - [`phrase`]: names listed in a sentence ("a, b or c").
//! - [`access`]: roles per library pattern, tokens and the audit log.
//! - [`error`]: the kinds of failure and the error body every face answers with.

pub mod access;
pub mod ask;
pub mod budget;
pub mod catalog;
pub mod changes;
pub mod document;
pub mod error;
pub mod eval;
pub mod feedback;
pub mod format;
pub mod fusion;
pub mod highlight;
pub mod job;
pub mod library;
pub mod markdown;
pub mod phrase;
pub mod reading;
pub mod scoring;
pub mod search;
pub mod source;
pub mod status;
pub mod stream;
pub mod transfer;
pub mod validate;
pub mod version;

pub use error::{ErrorBody, ErrorCode, ErrorKind};
pub use status::{AskStatus, EmbeddingStatus, OcrInfo, ServerStatus, StoreCounts, StoreStatus};
