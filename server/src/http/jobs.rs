//! Uploads and their jobs.
//!
//! `POST /api/upload` takes a multipart form (`library`, `version`, one or
//! more `file` parts) and answers `202 {"job_id"}` at once; the job runs in
//! the background. `GET /api/jobs/{id}` is its latest state and
//! `GET /api/jobs/{id}/events` streams every change as server-sent events
//! until the job is done.

use std::convert::Infallible;

use axum::extract::multipart::MultipartError;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use futures::Stream;
use index_core::job::{JobState, JobStatus};
use serde_json::{json, Value};

use super::error::ApiError;
use super::AppState;
use crate::ingest::Upload;

/// `POST /api/upload`.
pub async fn upload(
    State(state): State<AppState>,
    mut form: Multipart,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (mut library, mut version, mut files) = (None, None, Vec::new());
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        match field.name().unwrap_or_default() {
            "library" => library = Some(field.text().await.map_err(multipart_error)?),
            "version" => version = Some(field.text().await.map_err(multipart_error)?),
            "file" => {
                let name = field
                    .file_name()
                    .map(str::to_owned)
                    .ok_or_else(|| ApiError::bad_request("every file part needs a file name"))?;
                let bytes = field.bytes().await.map_err(multipart_error)?;
                files.push(Upload {
                    name,
                    bytes: bytes.to_vec(),
                });
            }
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown form field {other:?}"
                )))
            }
        }
    }
    let library = library.ok_or_else(|| ApiError::bad_request("the form needs a library field"))?;
    let version = version.ok_or_else(|| ApiError::bad_request("the form needs a version field"))?;
    let job = state.engine.start_upload(&library, &version, files)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "job_id": job.status().id })),
    ))
}

fn multipart_error(err: MultipartError) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::too_large(format!(
            "the upload is larger than the server accepts: {}",
            err.body_text()
        ))
    } else {
        ApiError::bad_request(format!(
            "the upload is not a valid multipart form: {}",
            err.body_text()
        ))
    }
}

/// `GET /api/jobs/{id}`.
pub async fn job(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<JobStatus>, ApiError> {
    let job = state
        .engine
        .jobs()
        .get(&id)
        .ok_or_else(|| ApiError::not_found(format!("no job {id:?}")))?;
    Ok(Json(job.status()))
}

/// `GET /api/jobs/{id}/events`: the job's status after every change, as
/// `progress` events, then one `done` event.
pub async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let job = state
        .engine
        .jobs()
        .get(&id)
        .ok_or_else(|| ApiError::not_found(format!("no job {id:?}")))?;
    // First the current state, then one event per change, ending with `done`.
    let stream = futures::stream::unfold(Some((job.subscribe(), true)), |phase| async move {
        let (mut rx, first) = phase?;
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let status = rx.borrow_and_update().clone();
        if status.state == JobState::Done {
            Some((event("done", &status), None))
        } else {
            Some((event("progress", &status), Some((rx, false))))
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

fn event(kind: &str, status: &JobStatus) -> Result<Event, Infallible> {
    Ok(Event::default()
        .event(kind)
        .json_data(status)
        .unwrap_or_else(|_| Event::default().event(kind)))
}
