//! docshelf's integration tests, in one binary.
//!
//! Every test here links the whole engine (LanceDB, burn, axum), so each
//! test binary is close to a gigabyte: one binary instead of eight keeps the
//! build's disk use and link time down. Modules are named after the face
//! they exercise; `cargo test --test integration search::` runs one of them.

mod common;
#[path = "../support/cross_encoder_dir.rs"]
mod cross_encoder_dir;
mod git_server;
mod llm_server;
#[path = "../../../ingest-core/tests/support/pdf_file.rs"]
mod pdf_file;
mod s3_server;
#[path = "../support/scans.rs"]
mod scans;
#[path = "../support/synthetic.rs"]
mod synthetic;

mod access;
mod ask;
mod backup;
mod budget;
mod catalog;
mod changes;
mod cli;
mod crash;
mod cross_encoder;
mod embed;
mod error_shape;
mod git_sources;
mod hardening;
mod hostile;
mod http;
mod ingest;
mod memory_budget;
mod ocr;
mod package_routes;
mod private_sites;
mod ranking;
mod resident;
mod rest_api;
mod routing;
mod s3_replicas;
mod search;
mod shared_store;
mod sources;
mod transfer;
mod upload_api;
mod vector_index;
mod versions;
