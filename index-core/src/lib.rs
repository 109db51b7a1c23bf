//! docshelf's domain model.
//!
//! Everything here is plain data and pure functions, so the same code runs in
//! the native server and in the browser (wasm32). There is deliberately no
//! async runtime, no storage engine and no model runtime in this crate: those
//! live in `server`, which depends on this crate, never the other way round.

pub mod status;

pub use status::{EmbeddingStatus, ServerStatus, StoreCounts, StoreStatus};
