//! The dashboard's `#[server]` functions: the only way the page talks to the
//! engine (uploads aside, which stream to the REST API). Each one is a thin
//! call into [`crate::backend::Backend`] so the REST API, the CLI and the
//! dashboard share one implementation. `token` is the access token the user
//! entered, if the server requires one.

use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::feedback::{Vote, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::ServerStatus;
use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::backend::{use_backend, SharedBackend};

/// The backend, after checking the token for a read or a write.
#[cfg(feature = "ssr")]
fn backend_for(token: Option<&str>, write: bool) -> Result<SharedBackend, AppError> {
    let backend = use_backend()?;
    backend.authorize(token, write).map_err(AppError)?;
    Ok(backend)
}

/// The running server's status: version, store, embedding backend, counts.
/// A read like any other: with `--auth-reads` it needs the token.
#[server(prefix = "/rpc", endpoint = "status")]
pub async fn get_status(token: Option<String>) -> Result<ServerStatus, AppError> {
    Ok(backend_for(token.as_deref(), false)?.status().await)
}

/// Searches, as `POST /api/search` does.
#[server(prefix = "/rpc", endpoint = "search")]
pub async fn search(
    params: SearchParams,
    token: Option<String>,
) -> Result<SearchResponse, AppError> {
    backend_for(token.as_deref(), false)?
        .search(params)
        .await
        .map_err(AppError)
}

/// The session's sticky library, if any.
#[server(prefix = "/rpc", endpoint = "sticky")]
pub async fn get_sticky(
    session_id: String,
    token: Option<String>,
) -> Result<Option<Sticky>, AppError> {
    Ok(backend_for(token.as_deref(), false)?
        .sticky(&session_id)
        .await)
}

/// Forgets the session's sticky library.
#[server(prefix = "/rpc", endpoint = "clear_sticky")]
pub async fn clear_sticky(session_id: String, token: Option<String>) -> Result<(), AppError> {
    backend_for(token.as_deref(), false)?
        .clear_sticky(&session_id)
        .await;
    Ok(())
}

/// Every library with versions and counts.
#[server(prefix = "/rpc", endpoint = "libraries")]
pub async fn list_libraries(token: Option<String>) -> Result<Vec<LibraryInfo>, AppError> {
    backend_for(token.as_deref(), false)?
        .libraries()
        .await
        .map_err(AppError)
}

/// The documents of one library version.
#[server(prefix = "/rpc", endpoint = "documents")]
pub async fn list_documents(
    library: String,
    version: String,
    token: Option<String>,
) -> Result<Vec<DocumentInfo>, AppError> {
    backend_for(token.as_deref(), false)?
        .documents(&library, &version)
        .await
        .map_err(AppError)
}

/// A whole document.
#[server(prefix = "/rpc", endpoint = "document")]
pub async fn get_document(
    library: String,
    version: String,
    file_path: String,
    token: Option<String>,
) -> Result<Document, AppError> {
    backend_for(token.as_deref(), false)?
        .document(&library, &version, &file_path)
        .await
        .map_err(AppError)
}

/// Deletes a library (no version), a version (no path) or a document.
#[server(prefix = "/rpc", endpoint = "delete")]
pub async fn delete(
    library: String,
    version: Option<String>,
    file_path: Option<String>,
    token: Option<String>,
) -> Result<Deleted, AppError> {
    let target =
        index_core::catalog::Target::from_parts(&library, version.as_deref(), file_path.as_deref());
    backend_for(token.as_deref(), true)?
        .delete(target)
        .await
        .map_err(AppError)
}

/// Likes or dislikes a result.
#[server(prefix = "/rpc", endpoint = "feedback")]
pub async fn send_feedback(
    chunk_id: String,
    vote: Vote,
    token: Option<String>,
) -> Result<Votes, AppError> {
    backend_for(token.as_deref(), true)?
        .feedback(index_core::feedback::FeedbackRequest { chunk_id, vote })
        .await
        .map_err(AppError)
}
