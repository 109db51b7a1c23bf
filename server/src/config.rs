//! Settings, from flags with environment fallbacks.
//!
//! Every setting has a flag and a `DOCSHELF_*` variable so the same binary
//! runs from a shell, from `make run` and from a service manager unchanged.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use index_core::extract::ArchiveLimits;

use crate::embed::DeviceChoice;

/// The embedding model: where it lives and what runs it. Shared by every
/// command that embeds.
#[derive(Debug, Clone, Args)]
pub struct ModelConfig {
    /// Directory holding the embedding model (`model.safetensors`, `tokenizer.json`, `config.json`).
    #[arg(
        long = "model-dir",
        env = "DOCSHELF_MODEL_DIR",
        default_value = "./models/all-MiniLM-L6-v2"
    )]
    pub model_dir: PathBuf,

    /// Where the embedding model runs: a GPU through wgpu when one exists (auto), a GPU or nothing (gpu), or the CPU.
    #[arg(long = "device", env = "DOCSHELF_DEVICE", value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

/// Where the store and the model live, and the limits on uploads. Shared by
/// every command that opens the engine.
#[derive(Debug, Clone, Args)]
pub struct EngineConfig {
    /// Store location: a directory (or a LanceDB URI; object stores such as `s3://` need a build with LanceDB's cloud features).
    #[arg(long = "data", env = "DOCSHELF_DATA", default_value = "./data")]
    pub data: String,

    #[command(flatten)]
    pub model: ModelConfig,

    /// Most files one upload may expand to (archive entries included).
    #[arg(
        long = "max-files",
        env = "DOCSHELF_MAX_FILES",
        default_value_t = 10_000
    )]
    pub max_files: usize,

    /// Most bytes one archive may expand to, in MiB.
    #[arg(
        long = "max-expanded-mib",
        env = "DOCSHELF_MAX_EXPANDED_MIB",
        default_value_t = 1024
    )]
    pub max_expanded_mib: u64,

    /// Most extracted text one upload job may hold over all its files, in
    /// MiB (about 700 chunks a MiB).
    #[arg(
        long = "max-job-text-mib",
        env = "DOCSHELF_MAX_JOB_TEXT_MIB",
        default_value_t = 256
    )]
    pub max_job_text_mib: u64,

    /// Most chunks one upload job may hold over all its files.
    #[arg(
        long = "max-job-chunks",
        env = "DOCSHELF_MAX_JOB_CHUNKS",
        default_value_t = 200_000
    )]
    pub max_job_chunks: usize,
}

impl EngineConfig {
    /// What one upload job may cost in all.
    pub fn job_limits(&self) -> crate::ingest::JobLimits {
        crate::ingest::JobLimits {
            max_text_bytes: self.max_job_text_mib.saturating_mul(1024 * 1024),
            max_chunks: self.max_job_chunks,
        }
    }

    /// Archive limits from the settings (ratio and depth keep safe defaults).
    pub fn archive_limits(&self) -> ArchiveLimits {
        ArchiveLimits {
            max_entries: self.max_files,
            max_total_bytes: self.max_expanded_mib.saturating_mul(1024 * 1024),
            ..ArchiveLimits::default()
        }
    }
}

/// Settings of `docshelf serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address to listen on. Port 0 picks a free port (the chosen address is logged).
    #[arg(long = "addr", env = "DOCSHELF_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Directory with the built dashboard (`pkg/docshelf.js`, `pkg/docshelf_bg.wasm`, …).
    #[arg(long = "site-dir", env = "DOCSHELF_SITE_DIR", default_value = "dist")]
    pub site_dir: PathBuf,

    /// Largest request body accepted, in MiB (uploads included).
    #[arg(
        long = "max-body-mib",
        env = "DOCSHELF_MAX_BODY_MIB",
        default_value_t = 512
    )]
    pub max_body_mib: usize,

    /// Token that writes (and with --auth-reads, reads) must carry as
    /// `Authorization: Bearer <token>`. Without one, docshelf listens on
    /// loopback only.
    #[arg(long = "token", env = "DOCSHELF_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Require the token for reads too (search, documents, MCP, metrics).
    #[arg(long = "auth-reads", env = "DOCSHELF_AUTH_READS")]
    pub auth_reads: bool,

    /// Seconds a connection may take to send a request's headers, or sit
    /// idle between requests, before it is closed.
    #[arg(
        long = "header-timeout-secs",
        env = "DOCSHELF_HEADER_TIMEOUT_SECS",
        default_value_t = crate::http::serve::HEADER_TIMEOUT.as_secs()
    )]
    pub header_timeout_secs: u64,

    /// Browser origins allowed to call the API (CORS), comma-separated,
    /// e.g. `https://docs.example.com`. Default: none.
    #[arg(
        long = "cors-origins",
        env = "DOCSHELF_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<String>,

    /// Host names this server answers to besides loopback names and IP
    /// addresses (comma-separated, e.g. `docs.example.com`): the name a
    /// reverse proxy or DNS points at it. Requests naming any other host
    /// are refused, which stops DNS-rebinding pages from reading the API.
    #[arg(
        long = "allowed-hosts",
        env = "DOCSHELF_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    #[command(flatten)]
    pub llm: crate::llm::LlmConfig,

    #[command(flatten)]
    pub engine: EngineConfig,
}

impl ServeConfig {
    /// The body limit in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_mib.saturating_mul(1024 * 1024)
    }
}

/// Whether a store location names a local directory (as opposed to an
/// object-store URI such as `s3://…`), so docshelf may create it.
pub fn is_local_location(location: &str) -> bool {
    match location.split_once("://") {
        Some((scheme, _)) => scheme.eq_ignore_ascii_case("file"),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_locations_are_told_apart_from_object_store_uris() {
        assert!(is_local_location("./data"));
        assert!(is_local_location("/var/lib/docshelf"));
        assert!(is_local_location("file:///var/lib/docshelf"));
        assert!(!is_local_location("s3://bucket/docshelf"));
        assert!(!is_local_location("gs://bucket"));
    }
}
