//! Uploads and their jobs.
//!
//! `POST /api/upload` takes a multipart form (`library`, `version`, one or
//! more `file` parts) and answers `202 {"job_id", "watch_token"}` at once;
//! the job runs in the background. `GET /api/jobs/{id}` is its latest state
//! and `GET /api/jobs/{id}/events` streams every change as server-sent
//! events until the job is done. The events stream is a read, but it also
//! admits the job's own watch token as `?watch=`, because the dashboard
//! follows it with an `EventSource`, which cannot send a bearer header.

use std::convert::Infallible;

use axum::extract::multipart::{MultipartError, MultipartRejection};
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use futures::{Stream, StreamExt};
use index_core::job::{JobStatus, Upload, UploadAccepted};
use index_core::stream::JobEvent;
use index_core::ErrorCode;
use serde::Deserialize;

use super::auth::Who;
use super::error::{ApiError, ApiQuery};
use super::openapi::ErrorBody;
use super::AppState;
use crate::engine::EngineError;
use index_core::access::Role;

/// The upload form, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read from the multipart stream, field by field
pub struct UploadForm {
    /// Library to add the documents to.
    library: String,
    /// Version of the library.
    version: String,
    /// One or more files: Markdown or MDX, text (reStructuredText, AsciiDoc),
    /// HTML, PDF, Word (.docx), Jupyter notebooks, or ZIP and tar.gz
    /// archives of these.
    #[schema(format = Binary)]
    file: Vec<String>,
}

/// Uploads files into a library version; the job runs in the background.
#[utoipa::path(
    post,
    path = "/upload",
    tag = "uploads",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "The job started", body = UploadAccepted),
        (status = 400, description = "Bad form or names: a field given twice, an unknown field, a file name with nothing safe left", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 409, description = "Another job is writing that library and version", body = ErrorBody),
        (status = 413, description = "Larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not multipart/form-data", body = ErrorBody),
        (status = 503, description = "The embedding model is not available, or too many jobs are running", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn upload(
    State(state): State<AppState>,
    Who(caller): Who,
    form: Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, Json<UploadAccepted>), ApiError> {
    let mut form = form.map_err(|e| {
        // No multipart boundary: the body is not a multipart form at all.
        ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("send the upload as multipart/form-data: {}", e.body_text()),
        )
    })?;
    let (mut library, mut version, mut files) = (None, None, Vec::new());
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        match field.name().unwrap_or_default() {
            // Given twice: which one the client meant is theirs to say,
            // not ours to guess by taking the last.
            "library" | "version" => {
                let name = if field.name() == Some("library") {
                    &mut library
                } else {
                    &mut version
                };
                if name.is_some() {
                    let err = ApiError::new(
                        ErrorCode::InvalidUpload,
                        format!(
                            "the form gives the {} field twice; give it once",
                            field.name().unwrap_or_default()
                        ),
                    );
                    drop(field);
                    return Err(drained(form, err).await);
                }
                *name = Some(field.text().await.map_err(multipart_error)?);
            }
            "file" => {
                let Some(name) = field.file_name().map(str::to_owned) else {
                    drop(field);
                    let err = ApiError::new(
                        ErrorCode::InvalidUpload,
                        "every file part needs a file name",
                    );
                    return Err(drained(form, err).await);
                };
                let bytes = field.bytes().await.map_err(multipart_error)?;
                files.push(Upload {
                    name,
                    // Takes the buffer over where it can instead of copying
                    // it: an upload's bytes are held once, not twice.
                    bytes: Vec::from(bytes),
                });
            }
            other => {
                let err = ApiError::new(
                    ErrorCode::InvalidUpload,
                    format!(
                        "unknown form field {:?}",
                        index_core::validate::cut(other, 60)
                    ),
                );
                drop(field);
                return Err(drained(form, err).await);
            }
        }
    }
    let library = library
        .ok_or_else(|| ApiError::new(ErrorCode::InvalidUpload, "the form needs a library field"))?;
    let version = version
        .ok_or_else(|| ApiError::new(ErrorCode::InvalidUpload, "the form needs a version field"))?;
    let accepted = state
        .engine
        .start_upload(&caller, &library, &version, files)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}

/// Reads the rest of a refused form (bounded by the body limit) before
/// answering `err`: answering mid-body and closing made clients that were
/// still sending see a broken connection instead of the answer.
async fn drained(mut form: Multipart, err: ApiError) -> ApiError {
    while let Ok(Some(field)) = form.next_field().await {
        drop(field);
    }
    err
}

fn multipart_error(err: MultipartError) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            ErrorCode::BodyTooLarge,
            format!(
                "the upload is larger than the server accepts: {}",
                err.body_text()
            ),
        )
    } else {
        ApiError::new(
            ErrorCode::InvalidUpload,
            format!(
                "the upload is not a valid multipart form: {}",
                err.body_text()
            ),
        )
    }
}

/// An upload job's state and per-file progress.
#[utoipa::path(
    get,
    path = "/jobs/{id}",
    tag = "uploads",
    params(("id" = String, Path, description = "The job id from the upload")),
    responses(
        (status = 200, body = JobStatus),
        (status = 400, description = "Not a job id (over 128 bytes, or other than ASCII letters, digits and . _ -)", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
pub async fn job(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
) -> Result<Json<JobStatus>, ApiError> {
    Ok(Json(state.engine.job(&caller, &id).await?))
}

/// `?watch=` of the events stream.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WatchQuery {
    /// The job's watch token, from the upload's answer: it lets a client
    /// that sends no access token (a browser's `EventSource`) follow this
    /// one job. It grants nothing else.
    watch: Option<String>,
}

/// The job's status after every change, as server-sent `progress` events,
/// then one `done` event.
#[utoipa::path(
    get,
    path = "/jobs/{id}/events",
    tag = "uploads",
    params(("id" = String, Path, description = "The job id from the upload"), WatchQuery),
    responses(
        (status = 200, description = "Server-sent events: progress…, done", content_type = "text/event-stream"),
        (status = 400, description = "A query string that does not parse", body = ErrorBody),
        (status = 401, description = "Reads need a token: the bearer token, or this job's watch token", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn events(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WatchQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let found = state.engine.find_job(&id).await?;
    // The caller may read the job's library, or brings this job's own
    // watch token. Without either, the answer is the same whether the job
    // exists or not, so ids cannot be probed.
    let watched = found
        .as_ref()
        .zip(query.watch.as_deref())
        .is_some_and(|(job, token)| job.admits(token));
    let readable = found
        .as_ref()
        .is_some_and(|job| caller.permissions.allows(Role::Read, &job.status().library));
    if !watched && !readable {
        if !caller.signed_in && caller.permissions.grants.is_empty() {
            return Err(ApiError::new(
                ErrorCode::MissingToken,
                "this request needs a token: send Authorization: Bearer <token>, or the job's watch token as ?watch=",
            ));
        }
        return Err(EngineError::UnknownJob(id).into());
    }
    let job = found.ok_or(EngineError::UnknownJob(id))?;
    let events = state.engine.job_statuses(job).map(|status| {
        let name = JobEvent::of(&status).name();
        Ok(Event::default()
            .event(name)
            .json_data(&status)
            .unwrap_or_else(|_| Event::default().event(name)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
