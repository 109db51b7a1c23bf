//! API errors: JSON `{"error": "…"}` with the status that fits.
//!
//! Bad input is 400, unknown things 404, oversized bodies 413, a missing or
//! wrong token 401, a request from another site or for another host 403, a
//! missing model 503, and a busy server or a search out of time 503 with
//! `Retry-After`. Anything else is a 500 whose body
//! carries only a correlation id; the details go to the log under that id.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::engine::EngineError;

/// An error answered to an API client.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    correlation_id: Option<String>,
    /// Seconds after which a client may try again (`Retry-After`).
    retry_after: Option<u32>,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            correlation_id: None,
            retry_after: None,
        }
    }

    /// Busy or out of time: 503, and when to try again.
    pub fn retry_later(message: impl Into<String>, seconds: u32) -> Self {
        Self {
            retry_after: Some(seconds),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    /// A failure the client cannot fix: logged in full, answered with an id.
    pub fn internal(err: &dyn std::fmt::Display) -> Self {
        let id = uuid::Uuid::new_v4().to_string();
        tracing::error!(correlation_id = %id, error = %err, "request failed");
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("internal error; quote correlation id {id} when reporting it"),
            correlation_id: Some(id),
            retry_after: None,
        }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<EngineError> for ApiError {
    fn from(err: EngineError) -> Self {
        match &err {
            EngineError::InvalidName(_) | EngineError::NoFiles | EngineError::BadSearch(_) => {
                Self::bad_request(err.to_string())
            }
            EngineError::UnknownLibrary { .. }
            | EngineError::UnknownVersion { .. }
            | EngineError::UnknownDocument { .. }
            | EngineError::UnknownChunk(_) => Self::not_found(err.to_string()),
            EngineError::NoModel(_) | EngineError::Search(crate::search::RunError::NoModel(_)) => {
                Self::unavailable(err.to_string())
            }
            EngineError::Busy(_) | EngineError::TimedOut(_) => {
                Self::retry_later(err.to_string(), 1)
            }
            EngineError::Store(_) | EngineError::Search(_) => Self::internal(&err),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match &self.correlation_id {
            Some(id) => json!({ "error": self.message, "correlation_id": id }),
            None => json!({ "error": self.message }),
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// A JSON body whose problems (bad JSON, wrong shape, too large, wrong
/// content type) are answered as [`ApiError`]s.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// Query parameters whose problems are answered as [`ApiError`]s.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError::bad_request(rejection.body_text())),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let text = rejection.body_text();
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(format!(
            "the request body is larger than the server accepts: {text}"
        )),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            status,
            "send the body as JSON with Content-Type: application/json",
        ),
        _ => ApiError::bad_request(format!("the request body is not valid: {text}")),
    }
}

/// Turns the bare 413 of the body-limit layer (which rejects oversized
/// requests by their `Content-Length` before any handler runs) into the
/// API's JSON error.
pub async fn json_413(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_json {
        return ApiError::too_large("the request body is larger than the server accepts")
            .into_response();
    }
    response
}
