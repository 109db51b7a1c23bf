//! The engine as the dashboard sees it (server side only).
//!
//! `app` cannot depend on `server` (the server renders the app), so the app
//! declares what it needs here and the server provides an implementation
//! through Leptos context when it mounts the routes. Errors are the
//! messages the REST API would send, so every face says the same thing.

use std::sync::Arc;

use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::ServerStatus;
use leptos::prelude::{use_context, ServerFnError};

/// What to delete.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeleteTarget {
    Library(String),
    Version(String, String),
    Document(String, String, String),
}

/// Operations the dashboard's server functions call.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// A snapshot of the server's state.
    async fn status(&self) -> ServerStatus;
    /// Checks the access token for a read (`write: false`) or a write.
    fn authorize(&self, token: Option<&str>, write: bool) -> Result<(), String>;
    async fn search(&self, params: SearchParams) -> Result<SearchResponse, String>;
    /// The session's sticky library.
    fn sticky(&self, session_id: &str) -> Option<Sticky>;
    fn clear_sticky(&self, session_id: &str);
    async fn libraries(&self) -> Result<Vec<LibraryInfo>, String>;
    async fn documents(&self, library: &str, version: &str) -> Result<Vec<DocumentInfo>, String>;
    async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, String>;
    async fn delete(&self, target: DeleteTarget) -> Result<Deleted, String>;
    async fn feedback(&self, request: FeedbackRequest) -> Result<Votes, String>;
}

/// How the backend travels through Leptos context.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend provided by the server for the current request.
pub fn use_backend() -> Result<SharedBackend, ServerFnError> {
    use_context::<SharedBackend>()
        .ok_or_else(|| ServerFnError::new("the docshelf engine is not available to this request"))
}
