//! The dashboard's `#[server]` functions: the only way the page talks to the
//! engine (uploads and Ask aside, which stream to the REST API). Each one is
//! a thin call into [`crate::backend::Backend`] so the REST API, the CLI and
//! the dashboard share one implementation.
//!
//! None of them checks a token: the browser sends the signed-in token's
//! session cookie, the server registers each function's route behind its
//! read or its write guard (the server's `http::dashboard`), as it does
//! the REST routes, and the engine acts as that token. The backend is provided
//! to those routes only, so a server function called any other way (while
//! a page renders on the server) finds no engine rather than an open door.

use index_core::access::Caller;
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::changes::{ChangesRequest, VersionChanges};
use index_core::feedback::{Vote, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::ServerStatus;
use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::backend::use_backend;

/// Who the page's user is (the signed-in token, or anonymous) and what
/// they may do: the page hides the actions the server would refuse.
#[server(prefix = "/rpc", endpoint = "caller")]
pub async fn get_caller() -> Result<Caller, AppError> {
    Ok(use_backend()?.caller().await)
}

/// The running server's status: version, store, embedding backend, counts.
/// A read like any other: with `--auth-reads` it needs a token.
#[server(prefix = "/rpc", endpoint = "status")]
pub async fn get_status() -> Result<ServerStatus, AppError> {
    Ok(use_backend()?.status().await)
}

/// Searches, as `POST /api/search` does.
#[server(prefix = "/rpc", endpoint = "search")]
pub async fn search(params: SearchParams) -> Result<SearchResponse, AppError> {
    use_backend()?.search(params).await.map_err(AppError)
}

/// The session's sticky library, if any.
#[server(prefix = "/rpc", endpoint = "sticky")]
pub async fn get_sticky(session_id: String) -> Result<Option<Sticky>, AppError> {
    use_backend()?.sticky(&session_id).await.map_err(AppError)
}

/// Forgets the session's sticky library.
#[server(prefix = "/rpc", endpoint = "clear_sticky")]
pub async fn clear_sticky(session_id: String) -> Result<(), AppError> {
    use_backend()?
        .clear_sticky(&session_id)
        .await
        .map_err(AppError)
}

/// Every library with versions and counts.
#[server(prefix = "/rpc", endpoint = "libraries")]
pub async fn list_libraries() -> Result<Vec<LibraryInfo>, AppError> {
    use_backend()?.libraries().await.map_err(AppError)
}

/// The documents of one library version.
#[server(prefix = "/rpc", endpoint = "documents")]
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
#[server(prefix = "/rpc", endpoint = "document")]
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

/// What changed in a library from one version to another, as
/// `GET /api/libraries/{library}/changes` answers: the same request, the
/// same answer.
#[server(prefix = "/rpc", endpoint = "changes")]
pub async fn compare_versions(
    library: String,
    request: ChangesRequest,
) -> Result<VersionChanges, AppError> {
    use_backend()?
        .changes(&library, &request)
        .await
        .map_err(AppError)
}

/// Deletes a library (no version), a version (no path) or a document.
#[server(prefix = "/rpc", endpoint = "delete")]
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
#[server(prefix = "/rpc", endpoint = "feedback")]
pub async fn send_feedback(chunk_id: String, vote: Vote) -> Result<Votes, AppError> {
    use_backend()?
        .feedback(index_core::feedback::FeedbackRequest { chunk_id, vote })
        .await
        .map_err(AppError)
}
