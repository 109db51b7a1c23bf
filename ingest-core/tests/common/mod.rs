//! What the integration tests share.

use std::path::PathBuf;

/// The shared test data (`../shared/data` beside the repository). The
/// package directory is read when the test runs (cargo sets it then too),
/// not baked in at build time: a test binary reused from a shared target
/// directory, built from a checkout elsewhere, still finds this checkout's
/// data.
pub fn shared_data() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../../shared/data")
}
