//! `GET /api/libraries/{library}/versions/{version}/export` and
//! `POST /api/import`: a library version moved between servers with its
//! vectors (admins only; see `engine::transfer`).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use index_core::transfer::ImportedVersion;
use index_core::validate;

use super::auth::Who;
use super::error::ApiError;
use super::openapi::ErrorBody;
use super::AppState;

/// One library version as an export file: its chunks with their vectors
/// and the model's identity, for `POST /api/import` on another server.
#[utoipa::path(
    get,
    path = "/libraries/{library}/versions/{version}/export",
    tag = "libraries",
    params(
        ("library" = String, Path, description = "Library name, exact"),
        ("version" = String, Path, description = "Version, or `latest`"),
    ),
    responses(
        (status = 200, description = "The export file", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 404, description = "Unknown library or version", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn export(
    State(state): State<AppState>,
    Who(caller): Who,
    Path((library, version)): Path<(String, String)>,
) -> Result<impl IntoResponse, ApiError> {
    validate::address(&library, Some(&version), None)?;
    let (header, bytes) = state
        .engine
        .export_version(&caller, &library, &version)
        .await?;
    // Names follow docshelf's rules (no quotes, no control characters),
    // but a header value is escaped all the same.
    let name: String = format!("{}-{}.docshelf", header.library, header.version)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        bytes,
    ))
}

/// Takes in an export file: its library version becomes exactly what the
/// file holds, in one commit, without embedding anything. Refused before
/// anything is written when the file is damaged or its vectors come from
/// another model.
#[utoipa::path(
    post,
    path = "/import",
    tag = "libraries",
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses(
        (status = 200, body = ImportedVersion),
        (status = 400, description = "Not a whole docshelf export", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
        (status = 409, description = "Another embedding model, or the version is being written", body = ErrorBody),
        (status = 413, description = "Larger than the server's body limit", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn import(
    State(state): State<AppState>,
    Who(caller): Who,
    body: Bytes,
) -> Result<Json<ImportedVersion>, ApiError> {
    Ok(Json(state.engine.import_version(&caller, &body).await?))
}
