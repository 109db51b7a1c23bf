//! `POST /api/feedback`: likes and dislikes on results.

use axum::extract::State;
use axum::Json;
use index_core::feedback::{FeedbackRequest, Votes};

use super::auth::Who;
use super::error::{ApiError, ApiJson};
use super::openapi::ErrorBody;
use super::AppState;

/// Records a like or dislike on a result chunk; returns its votes so far.
#[utoipa::path(
    post,
    path = "/feedback",
    tag = "search",
    request_body = FeedbackRequest,
    responses(
        (status = 200, body = Votes),
        (status = 400, description = "Bad input", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 404, description = "Unknown chunk", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn feedback(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiJson(request): ApiJson<FeedbackRequest>,
) -> Result<Json<Votes>, ApiError> {
    Ok(Json(state.engine.feedback(&caller, &request).await?))
}
