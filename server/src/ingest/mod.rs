//! Upload jobs: extract, chunk, embed and store every file of an upload.
//!
//! - [`budget`]: what one job may cost in all.
//! - [`jobs`]: the registry of jobs and their observable progress.
//! - [`pipeline`]: what happens to each file.

pub mod budget;
pub mod jobs;
pub mod pipeline;

pub use budget::JobLimits;
pub use jobs::{JobHandle, Jobs};
pub use pipeline::run_job;
