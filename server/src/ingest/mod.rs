//! Upload jobs: extract, chunk, embed and store every file of an upload.
//!
//! - [`budget`]: what one job may cost in all.
//! - [`embedding`]: one document chunked and embedded, stored vectors reused.
//! - [`input`]: what a job reads, and how.
//! - [`jobs`]: the registry of jobs and their observable progress.
//! - [`memory`]: the memory every job's extraction draws on, together.
//! - [`ocr`]: PDF pages without a text layer, read by OCR: the tools found, run page by page.
//! - [`outcome`]: a file's final state, and a storage failure in words.
//! - [`pipeline`]: what happens to each file, step by step.
//! - [`reuse`]: vectors taken from the store instead of embedding again.
//! - [`scanned`]: a PDF's pages without text, read by OCR and put back.
//! - [`staging`]: what a job embedded, set aside until it publishes whole.

pub mod budget;
mod embedding;
mod input;
pub mod jobs;
pub mod memory;
pub mod ocr;
mod outcome;
pub mod pipeline;
mod reuse;
mod scanned;
mod staging;

pub use budget::JobLimits;
pub use jobs::{JobHandle, Jobs};
pub use memory::{MemoryBudget, MemoryError};
pub use pipeline::run_job;
