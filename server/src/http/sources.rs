//! `/api/sources`: documentation taken from where it lives (a site to
//! crawl, a package on a registry), listed, and refreshed.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use index_core::catalog::Deleted;
use index_core::source::{CredentialList, SourceAccepted, SourceInfo, SourceList, SourceRequest};

use super::auth::Who;
use super::error::{ApiError, ApiJson};
use super::openapi::ErrorBody;
use super::AppState;

/// Adds a source and starts fetching it into `library` `version` as a
/// job (follow it like an upload's). Adding the same library and version
/// again fetches it again with the new settings.
#[utoipa::path(
    post,
    path = "/sources",
    tag = "sources",
    request_body = SourceRequest,
    responses(
        (status = 202, description = "Fetching", body = SourceAccepted),
        (status = 400, description = "Not a URL or package, a refused address, bad patterns or names", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "The registry has no such package or release", body = ErrorBody),
        (status = 409, description = "Another job is writing this version", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 503, description = "The model, or the registry, is not available", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn add(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiJson(request): ApiJson<SourceRequest>,
) -> Result<(StatusCode, Json<SourceAccepted>), ApiError> {
    let accepted = state.engine.add_source(&caller, request).await?;
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}

/// Every source, with how its last fetch went.
#[utoipa::path(
    get,
    path = "/sources",
    tag = "sources",
    responses(
        (status = 200, body = SourceList),
        (status = 401, description = "A token is required", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn list(
    State(state): State<AppState>,
    Who(caller): Who,
) -> Result<Json<SourceList>, ApiError> {
    Ok(Json(state.engine.sources(&caller).await?))
}

/// One source.
#[utoipa::path(
    get,
    path = "/sources/{id}",
    tag = "sources",
    params(("id" = String, Path, description = "The source's id (`source_id`)")),
    responses(
        (status = 200, body = SourceInfo),
        (status = 400, description = "An id over its limits", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "No such source", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn one(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
) -> Result<Json<SourceInfo>, ApiError> {
    Ok(Json(state.engine.source(&caller, &id).await?))
}

/// Fetches a source again: pages that changed are embedded, pages that
/// answer `304 Not Modified` or hash as before are kept, pages gone are
/// removed, all published at once.
#[utoipa::path(
    post,
    path = "/sources/{id}/refresh",
    tag = "sources",
    params(("id" = String, Path, description = "The source's id (`source_id`)")),
    responses(
        (status = 202, description = "Refreshing", body = SourceAccepted),
        (status = 400, description = "An id over its limits, or the source's URL is now refused", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "No such source", body = ErrorBody),
        (status = 409, description = "Another job is writing this version", body = ErrorBody),
        (status = 503, description = "The model, or the registry, is not available", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn refresh(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<SourceAccepted>), ApiError> {
    let accepted = state.engine.refresh_source(&caller, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}

/// Deletes a source and the library version it fills, whether or not it
/// holds documents (a source whose fetch failed holds none). A job running
/// into it is cancelled first.
#[utoipa::path(
    delete,
    path = "/sources/{id}",
    tag = "sources",
    params(("id" = String, Path, description = "The source's id (`source_id`)")),
    responses(
        (status = 200, description = "Deleted, with what went with it", body = Deleted),
        (status = 400, description = "An id over its limits", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "Another site's request", body = ErrorBody),
        (status = 404, description = "No such source", body = ErrorBody),
        (status = 503, description = "The store is not answering", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn delete(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    Ok(Json(state.engine.delete_source(&caller, &id).await?))
}

/// The credentials the server's operator declared (`--credential`): the
/// names a private source may give as its `credential`, where each is
/// sent and for which libraries. Never a secret, nor where the server
/// keeps it. Admins only.
#[utoipa::path(
    get,
    path = "/credentials",
    tag = "sources",
    responses(
        (status = 200, body = CredentialList),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "Not an admin", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn credentials(
    State(state): State<AppState>,
    Who(caller): Who,
) -> Result<Json<CredentialList>, ApiError> {
    Ok(Json(state.engine.credentials(&caller)?))
}
