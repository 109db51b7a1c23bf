//! The engine as the dashboard sees it (server side only).
//!
//! `app` cannot depend on `server` (the server renders the app), so the app
//! declares what it needs here and the server provides an implementation
//! through Leptos context when it mounts the routes.

use std::sync::Arc;

use index_core::ServerStatus;
use leptos::prelude::{use_context, ServerFnError};

/// Operations the dashboard's server functions call.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// A snapshot of the server's state.
    async fn status(&self) -> ServerStatus;
}

/// How the backend travels through Leptos context.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend provided by the server for the current request.
pub fn use_backend() -> Result<SharedBackend, ServerFnError> {
    use_context::<SharedBackend>()
        .ok_or_else(|| ServerFnError::new("the docshelf engine is not available to this request"))
}
