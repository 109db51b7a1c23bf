//! Helpers shared by the integration tests, one set for every file:
//!
//! - here: where the model, the fixtures and the shared data are, engine
//!   configurations and engines on a fresh store, free ports;
//! - [`docs`]: uploads built from text, upload jobs, search parameters;
//! - [`server`]: docshelf served on a loopback port, and a client's side of
//!   its REST API (JSON calls, upload forms, job events, raw heads, SSE);
//! - [`process`]: the `docshelf serve` binary in a process of its own;
//! - [`wait`]: waiting for what another task or process does.

mod docs;
pub mod mcp;
mod process;
mod server;
mod wait;

pub use docs::*;
pub use process::*;
pub use server::*;
pub use wait::*;

use std::path::{Path, PathBuf};

use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;
use docshelf_server::engine::Engine;

/// The real model, as `make setup` installs it (or `DOCSHELF_MODEL_DIR`).
pub fn model_dir() -> PathBuf {
    let root = package_dir().join("..");
    match std::env::var_os("DOCSHELF_MODEL_DIR").map(PathBuf::from) {
        Some(p) if p.is_relative() => root.join(p),
        Some(p) => p,
        None => root.join("models/all-MiniLM-L6-v2"),
    }
}

/// The server package's directory, read when the test runs (cargo sets it
/// then too), not baked in at build time: a test binary reused from a shared
/// target directory, built from a checkout elsewhere, still finds this
/// checkout's files.
pub fn package_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The shared test data (`../shared` beside the repository).
pub fn shared_data() -> PathBuf {
    package_dir().join("../../shared/data")
}

/// A committed fixture (`tests/fixtures/{name}`), parsed from JSON.
pub fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = package_dir().join("tests/fixtures").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the fixture {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the fixture {} does not parse: {e}", path.display()))
}

/// An engine configuration on a fresh store with the real model on the CPU.
pub fn engine_config(store: &Path) -> EngineConfig {
    EngineConfig {
        max_files: 1000,
        max_expanded_mib: 64,
        ..EngineConfig::new(
            store.display().to_string(),
            ModelConfig::new(model_dir(), DeviceChoice::Cpu),
        )
    }
}

/// An engine on the store in `dir` ([`engine_config`]).
pub async fn engine(dir: &Path) -> Engine {
    Engine::open(&engine_config(dir)).await.expect("engine")
}

/// The hosts the package registries are fetched from.
const REGISTRY_HOSTS: [&str; 5] = [
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "index.crates.io",
    "static.crates.io",
];

/// The addresses the package registries' hosts resolve to here that the
/// address rules refuse: tests that fetch from the real registries allow
/// them. A test machine may send those hosts to a stand-in on a reserved
/// address (one in a documentation range, which the rules refuse); with
/// public DNS this is empty.
pub fn registry_addresses() -> Vec<std::net::IpAddr> {
    use std::net::ToSocketAddrs;
    let policy = docshelf_server::source::AddressPolicy::default();
    let mut found: Vec<std::net::IpAddr> = REGISTRY_HOSTS
        .iter()
        .filter_map(|host| (*host, 443).to_socket_addrs().ok())
        .flatten()
        .map(|addr| addr.ip())
        .filter(|ip| policy.check(*ip).is_err())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// A loopback port nothing listens on (it was free a moment ago): for a
/// server a test starts, or to stand for one that is not there.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}
