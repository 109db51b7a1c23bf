//! The engine as the dashboard sees it (server side only).
//!
//! `app` cannot depend on `server` (the server renders the app), so the app
//! declares what it needs here and the server provides an implementation
//! through Leptos context to the server functions' routes, which it guards
//! as it does the REST routes. The backend of a request acts as that
//! request's caller (its token): what it may see and do is decided by the
//! engine, so nothing here asks about tokens. Errors are the bodies the REST API would send
//! ([`ErrorBody`]), kind included, so every face says the same thing with
//! the same status.

use std::sync::Arc;

use index_core::access::Caller;
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo, Target};
use index_core::changes::{ChangesRequest, VersionChanges};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::{ErrorBody, ErrorCode, ServerStatus};
use leptos::prelude::use_context;

use crate::error::AppError;

/// Operations the dashboard's server functions call.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// A snapshot of the server's state.
    async fn status(&self) -> ServerStatus;
    /// Who the request's user is, and what they may do.
    async fn caller(&self) -> Caller;
    async fn search(&self, params: SearchParams) -> Result<SearchResponse, ErrorBody>;
    /// The session's sticky library; a session id over its limits is bad
    /// input, as on every face.
    async fn sticky(&self, session_id: &str) -> Result<Option<Sticky>, ErrorBody>;
    async fn clear_sticky(&self, session_id: &str) -> Result<(), ErrorBody>;
    async fn libraries(&self) -> Result<Vec<LibraryInfo>, ErrorBody>;
    async fn documents(&self, library: &str, version: &str)
        -> Result<Vec<DocumentInfo>, ErrorBody>;
    async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, ErrorBody>;
    /// What changed in `library` between two versions, as every face
    /// answers it.
    async fn changes(
        &self,
        library: &str,
        request: &ChangesRequest,
    ) -> Result<VersionChanges, ErrorBody>;
    async fn delete(&self, target: Target<'_>) -> Result<Deleted, ErrorBody>;
    async fn feedback(&self, request: FeedbackRequest) -> Result<Votes, ErrorBody>;
}

/// How the backend travels through Leptos context.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend provided by the server for the current request.
pub fn use_backend() -> Result<SharedBackend, AppError> {
    use_context::<SharedBackend>().ok_or_else(|| {
        AppError::new(
            ErrorCode::Unavailable,
            "the docshelf engine is not available to this request",
        )
    })
}
