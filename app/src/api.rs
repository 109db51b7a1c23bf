//! The dashboard's `#[server]` functions: the only way the page talks to the
//! engine. Each one is a thin call into [`crate::backend::Backend`] so the
//! REST API, the CLI and the dashboard share one implementation.

use index_core::ServerStatus;
use leptos::prelude::*;

/// The running server's status: version, store, embedding backend, counts.
#[server(prefix = "/rpc", endpoint = "status")]
pub async fn get_status() -> Result<ServerStatus, ServerFnError> {
    let backend = crate::backend::use_backend()?;
    Ok(backend.status().await)
}
