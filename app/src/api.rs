//! The dashboard's `#[server]` functions: the only way the page talks to the
//! engine (uploads and Ask aside, which stream to the REST API). Each one is
//! a thin call into [`crate::backend::Backend`] so the REST API, the CLI and
//! the dashboard share one implementation.
//!
//! None of them checks the access token: the browser sends it as a bearer
//! header ([`crate::client::BearerClient`]), and the server registers each
//! function's route behind its read or its write guard (the server's
//! `http::dashboard`), as it does the REST routes. The backend is provided
//! to those routes only, so a server function called any other way (while
//! a page renders on the server) finds no engine rather than an open door.

use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::feedback::{Vote, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::ServerStatus;
use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::backend::use_backend;

/// The running server's status: version, store, embedding backend, counts.
/// A read like any other: with `--auth-reads` it needs the token.
#[server(prefix = "/rpc", endpoint = "status", client = crate::client::BearerClient)]
pub async fn get_status() -> Result<ServerStatus, AppError> {
    Ok(use_backend()?.status().await)
}

/// Searches, as `POST /api/search` does.
#[server(prefix = "/rpc", endpoint = "search", client = crate::client::BearerClient)]
pub async fn search(params: SearchParams) -> Result<SearchResponse, AppError> {
    use_backend()?.search(params).await.map_err(AppError)
}

/// The session's sticky library, if any.
#[server(prefix = "/rpc", endpoint = "sticky", client = crate::client::BearerClient)]
pub async fn get_sticky(session_id: String) -> Result<Option<Sticky>, AppError> {
    use_backend()?.sticky(&session_id).await.map_err(AppError)
}

/// Forgets the session's sticky library.
#[server(prefix = "/rpc", endpoint = "clear_sticky", client = crate::client::BearerClient)]
pub async fn clear_sticky(session_id: String) -> Result<(), AppError> {
    use_backend()?
        .clear_sticky(&session_id)
        .await
        .map_err(AppError)
}

/// Every library with versions and counts.
#[server(prefix = "/rpc", endpoint = "libraries", client = crate::client::BearerClient)]
pub async fn list_libraries() -> Result<Vec<LibraryInfo>, AppError> {
    use_backend()?.libraries().await.map_err(AppError)
}

/// The documents of one library version.
#[server(prefix = "/rpc", endpoint = "documents", client = crate::client::BearerClient)]
pub async fn list_documents(
    library: String,
    version: String,
) -> Result<Vec<DocumentInfo>, AppError> {
    use_backend()?
        .documents(&library, &version)
        .await
        .map_err(AppError)
}

/// A whole document.
#[server(prefix = "/rpc", endpoint = "document", client = crate::client::BearerClient)]
pub async fn get_document(
    library: String,
    version: String,
    file_path: String,
) -> Result<Document, AppError> {
    use_backend()?
        .document(&library, &version, &file_path)
        .await
        .map_err(AppError)
}

/// Deletes a library (no version), a version (no path) or a document.
#[server(prefix = "/rpc", endpoint = "delete", client = crate::client::BearerClient)]
pub async fn delete(
    library: String,
    version: Option<String>,
    file_path: Option<String>,
) -> Result<Deleted, AppError> {
    let target =
        index_core::catalog::Target::from_parts(&library, version.as_deref(), file_path.as_deref());
    use_backend()?.delete(target).await.map_err(AppError)
}

/// Likes or dislikes a result.
#[server(prefix = "/rpc", endpoint = "feedback", client = crate::client::BearerClient)]
pub async fn send_feedback(chunk_id: String, vote: Vote) -> Result<Votes, AppError> {
    use_backend()?
        .feedback(index_core::feedback::FeedbackRequest { chunk_id, vote })
        .await
        .map_err(AppError)
}
