//! Upload jobs: extract, chunk, embed and store every file of an upload.
//!
//! - [`budget`]: what one job may cost in all.
//! - [`jobs`]: the registry of jobs and their observable progress.
//! - [`memory`]: the memory every job's extraction draws on, together.
//! - [`ocr`]: PDF pages without a text layer, read by OCR.
//! - [`pipeline`]: what happens to each file.
//! - [`reuse`]: vectors taken from the store instead of embedding again.
//! - [`scanned`]: a PDF's pages without text, read by OCR and put back.

pub mod budget;
pub mod jobs;
pub mod memory;
pub mod ocr;
pub mod pipeline;
mod reuse;
mod scanned;

pub use budget::JobLimits;
pub use jobs::{JobHandle, Jobs};
pub use memory::{MemoryBudget, MemoryError};
pub use pipeline::run_job;
