//! API errors: JSON [`ErrorBody`] `{"code", "error"}` with the status its
//! [`ErrorKind`] gives (the table in [`index_core::error`]).
//!
//! The engine decides its errors' kinds ([`EngineError::kind`]); what is
//! decided here is only what the HTTP layer itself refuses: a missing or
//! wrong token, another site or host, a body too large or not JSON. An
//! internal fault's body carries only a correlation id; the details go to
//! the log under that id.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use index_core::{ErrorBody, ErrorKind};
use serde::de::DeserializeOwned;

use crate::engine::EngineError;

/// An error answered to an API client.
#[derive(Debug)]
pub struct ApiError(ErrorBody);

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self(ErrorBody::new(kind, message))
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadInput, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::TooLarge, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Forbidden, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthorized, message)
    }
}

impl From<EngineError> for ApiError {
    fn from(err: EngineError) -> Self {
        Self(err.body())
    }
}

/// The status an error kind is answered with.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    StatusCode::from_u16(kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let kind = self.0.code;
        let mut response = (status_of(kind), Json(self.0)).into_response();
        if let Some(seconds) = kind.retry_after_secs() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        }
        if kind == ErrorKind::Unauthorized {
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
            ErrorKind::UnsupportedMedia,
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

/// Any path under `/api` that no route serves.
pub async fn no_such_route(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "no API route {}; the routes are listed in /api/openapi.json",
        uri.path()
    ))
}
