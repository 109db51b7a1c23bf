//! Upload jobs: extract, chunk, embed and store every file of an upload.
//!
//! - [`budget`]: what one job may cost in all.
//! - [`jobs`]: the registry of jobs and their observable progress.
//! - [`memory`]: the memory every job's extraction draws on, together.
//! - [`pipeline`]: what happens to each file.

pub mod budget;
pub mod jobs;
pub mod memory;
pub mod pipeline;

pub use budget::JobLimits;
pub use jobs::{JobHandle, Jobs};
pub use memory::{MemoryBudget, MemoryError};
pub use pipeline::run_job;
