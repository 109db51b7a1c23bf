//! Libraries, documents and deletes.

use axum::extract::{Path, State};
use axum::Json;
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::changes::{ChangesRequest, VersionChanges};
use index_core::library::Resolution;
use serde::Deserialize;
use utoipa::IntoParams;

use index_core::validate;

use super::auth::Who;
use super::error::{ApiError, ApiQuery};
use super::openapi::ErrorBody;
use super::AppState;
use index_core::catalog::Target;

/// Every library with its versions (newest first) and counts.
#[utoipa::path(
    get,
    path = "/libraries",
    tag = "libraries",
    responses(
        (status = 200, body = Vec<LibraryInfo>),
        (status = 503, description = "The store cannot be read", body = ErrorBody),
    )
)]
pub async fn libraries(
    State(state): State<AppState>,
    Who(caller): Who,
) -> Result<Json<Vec<LibraryInfo>>, ApiError> {
    Ok(Json(state.engine.libraries(&caller).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResolveQuery {
    /// A loosely written library name.
    name: String,
}

/// Resolves a loosely written library name to a stored one.
#[utoipa::path(
    get,
    path = "/libraries/resolve",
    tag = "libraries",
    params(ResolveQuery),
    responses(
        (status = 200, description = "The stored library, or candidates", body = Resolution),
        (status = 400, description = "No name, or one over its limits", body = ErrorBody),
    )
)]
pub async fn resolve(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiQuery(q): ApiQuery<ResolveQuery>,
) -> Result<Json<Resolution>, ApiError> {
    let name = validate::required("name", &q.name)?;
    Ok(Json(state.engine.resolve_library(&caller, name).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VersionQuery {
    /// Only this version (or `latest`).
    version: Option<String>,
}

/// The documents of a library.
#[utoipa::path(
    get,
    path = "/libraries/{library}/documents",
    tag = "libraries",
    params(("library" = String, Path, description = "Library name, exact"), VersionQuery),
    responses(
        (status = 200, body = Vec<DocumentInfo>),
        (status = 400, description = "A name over its limits", body = ErrorBody),
        (status = 404, description = "Unknown library or version", body = ErrorBody),
    )
)]
pub async fn documents(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(library): Path<String>,
    ApiQuery(q): ApiQuery<VersionQuery>,
) -> Result<Json<Vec<DocumentInfo>>, ApiError> {
    validate::address(&library, q.version.as_deref(), None)?;
    Ok(Json(
        state
            .engine
            .documents(&caller, &library, q.version.as_deref())
            .await?,
    ))
}

/// What changed in a library from one version to another: documents
/// changed, added, removed and moved, and each changed document's
/// sections (added, removed, changed as a word diff), computed from the
/// stored documents; within `max_tokens` when given.
#[utoipa::path(
    get,
    path = "/libraries/{library}/changes",
    tag = "libraries",
    params(("library" = String, Path, description = "Library name, exact"), ChangesRequest),
    responses(
        (status = 200, body = VersionChanges),
        (status = 400, description = "A name over its limits, or a budget out of range", body = ErrorBody),
        (status = 404, description = "Unknown library or version", body = ErrorBody),
    )
)]
pub async fn changes(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(library): Path<String>,
    ApiQuery(request): ApiQuery<ChangesRequest>,
) -> Result<Json<VersionChanges>, ApiError> {
    Ok(Json(
        state
            .engine
            .compare_versions(&caller, &library, &request)
            .await?,
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocumentQuery {
    library: String,
    /// A version, or `latest`.
    version: String,
    file_path: String,
}

impl DocumentQuery {
    /// Every part within its limits, before the engine looks anything up.
    fn check(&self) -> Result<(), ApiError> {
        validate::address(&self.library, Some(&self.version), Some(&self.file_path))?;
        Ok(())
    }
}

/// One whole document, reassembled from its chunks.
#[utoipa::path(
    get,
    path = "/documents",
    tag = "documents",
    params(DocumentQuery),
    responses(
        (status = 200, body = Document),
        (status = 400, description = "A name or path over its limits", body = ErrorBody),
        (status = 404, description = "Unknown library, version or document", body = ErrorBody),
    )
)]
pub async fn document(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiQuery(q): ApiQuery<DocumentQuery>,
) -> Result<Json<Document>, ApiError> {
    q.check()?;
    Ok(Json(
        state
            .engine
            .document(&caller, &q.library, &q.version, &q.file_path)
            .await?,
    ))
}

/// Deletes one document.
#[utoipa::path(
    delete,
    path = "/documents",
    tag = "documents",
    params(DocumentQuery),
    responses(
        (status = 200, body = Deleted),
        (status = 400, description = "A name or path over its limits, or the version `latest`", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "Nothing to delete", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn delete_document(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiQuery(q): ApiQuery<DocumentQuery>,
) -> Result<Json<Deleted>, ApiError> {
    q.check()?;
    let target = Target::Document(&q.library, &q.version, &q.file_path);
    Ok(Json(state.engine.delete(&caller, target).await?))
}

/// Deletes a library, every version of it.
#[utoipa::path(
    delete,
    path = "/libraries/{library}",
    tag = "libraries",
    params(("library" = String, Path, description = "Library name, exact")),
    responses(
        (status = 200, body = Deleted),
        (status = 400, description = "A name over its limits", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "Unknown library", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn delete_library(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(library): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    validate::lookup("library", &library)?;
    Ok(Json(
        state
            .engine
            .delete(&caller, Target::Library(&library))
            .await?,
    ))
}

/// Deletes one version of a library.
#[utoipa::path(
    delete,
    path = "/libraries/{library}/versions/{version}",
    tag = "libraries",
    params(
        ("library" = String, Path, description = "Library name, exact"),
        ("version" = String, Path, description = "Version, exact"),
    ),
    responses(
        (status = 200, body = Deleted),
        (status = 400, description = "A name over its limits, or the version `latest`", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "Unknown library or version", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn delete_version(
    State(state): State<AppState>,
    Who(caller): Who,
    Path((library, version)): Path<(String, String)>,
) -> Result<Json<Deleted>, ApiError> {
    validate::address(&library, Some(&version), None)?;
    Ok(Json(
        state
            .engine
            .delete(&caller, Target::Version(&library, &version))
            .await?,
    ))
}
