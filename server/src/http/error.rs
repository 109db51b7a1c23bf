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
use index_core::validate::NameError;
use index_core::{ErrorBody, ErrorKind};
use serde::de::DeserializeOwned;

use crate::engine::EngineError;
use crate::mcp::rpc;

/// An error answered to an API client.
#[derive(Debug)]
pub struct ApiError(ErrorBody);

impl ApiError {
    /// The body this error answers with.
    pub fn body(&self) -> ErrorBody {
        self.0.clone()
    }

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

impl From<ErrorBody> for ApiError {
    fn from(body: ErrorBody) -> Self {
        Self(body)
    }
}

/// A name or identifier over its limits ([`index_core::validate`]): 400.
impl From<NameError> for ApiError {
    fn from(err: NameError) -> Self {
        Self::bad_request(err.to_string())
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
            // serde's words can quote the value: cut them.
            Err(rejection) => Err(ApiError::bad_request(index_core::validate::cut(
                &rejection.body_text(),
                300,
            ))),
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
        _ => ApiError::bad_request(format!(
            "the request body is not valid: {}",
            index_core::validate::cut(&text, 300)
        )),
    }
}

/// The longest request target (path and query) read, in bytes. Longer
/// targets are answered 414 here, as JSON, well before hyper's own limit
/// (64 KiB), whose 414 has no body, so that a name of megabytes in a query
/// string never reaches the handlers; no identifier needs more than a few
/// hundred bytes.
pub const MAX_TARGET_BYTES: usize = 16 * 1024;

/// Makes every error the layers under it answer without a body of ours
/// JSON [`ErrorBody`]: axum's bare 405 (wrong method), the body-limit
/// layer's 413 (by `Content-Length`, before any handler), a 415, and a 404
/// under the machine faces (`/api`, `/rpc`, `/mcp`), which would otherwise
/// be the dashboard's HTML page. Targets over [`MAX_TARGET_BYTES`] are
/// refused with 414 before anything else reads them. Under `/mcp`, rmcp's
/// plain-text transport errors become JSON-RPC error objects ([`mcp_error`]).
///
/// Why one place: the contract says every error is `{code, error}`, and
/// probes found 405 and 414 with empty bodies and an unknown `/rpc/…` as
/// HTML. A response that already is JSON (our own errors, MCP's JSON-RPC
/// errors) passes unchanged, as does any success.
pub async fn json_errors(request: Request, next: axum::middleware::Next) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |pq| pq.as_str().len());
    if target > MAX_TARGET_BYTES {
        return ApiError::new(
            ErrorKind::UriTooLong,
            format!(
                "the request target is {target} bytes long; at most {MAX_TARGET_BYTES} are read"
            ),
        )
        .into_response();
    }
    let mcp = is_mcp_path(request.uri().path());
    // Kept only where a 404 is answered as JSON, for its message.
    let machine_path = is_machine_path(request.uri().path())
        .then(|| index_core::validate::cut(request.uri().path(), 200));
    let response = next.run(request).await;
    let status = response.status();
    if mcp && (status.is_client_error() || status.is_server_error()) && !is_json(&response) {
        return mcp_error(response).await;
    }
    if !status.is_client_error() || is_json(&response) {
        return response;
    }
    let error = match status {
        StatusCode::NOT_FOUND => match machine_path {
            Some(path) => ApiError::not_found(format!(
                "no route {path}; the REST routes are listed in /api/openapi.json"
            )),
            None => return response,
        },
        StatusCode::METHOD_NOT_ALLOWED => ApiError::new(
            ErrorKind::MethodNotAllowed,
            "this path does not take this method; see the Allow header",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::too_large("the request body is larger than the server accepts")
        }
        StatusCode::URI_TOO_LONG => ApiError::new(
            ErrorKind::UriTooLong,
            "the request target is longer than the server reads",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            ErrorKind::UnsupportedMedia,
            "the body is not in a format this path reads",
        ),
        _ => return response,
    };
    let mut answer = error.into_response();
    // Keep what tells the client how to go on (`Allow` on a 405).
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = response.headers().get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    answer
}

/// The most of an MCP transport error's text that is read and passed on.
const MAX_MCP_ERROR_BODY: usize = 4 * 1024;

/// An error of rmcp's HTTP transport (wrong `Accept`, an unknown session:
/// bodies it cannot read never reach it, [`crate::mcp::http::screen`]),
/// which it answers as plain text, as a JSON-RPC error object: an MCP
/// client reads `error.code` and `error.message`, and `error.data` is our
/// error body. Its kind and JSON-RPC code follow from the status rmcp set,
/// which stays; its text is kept as the message, never read for meaning.
async fn mcp_error(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_MCP_ERROR_BODY)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let status = parts.status;
    let kind = ErrorKind::of_status(status.as_u16());
    let message = match text.as_str() {
        "" => status
            .canonical_reason()
            .unwrap_or("MCP transport error")
            .to_owned(),
        text => index_core::validate::cut(text, 300),
    };
    let rpc_code = if status.is_server_error() {
        rpc::INTERNAL_ERROR
    } else {
        rpc::INVALID_REQUEST
    };
    let json = rpc::error(
        serde_json::Value::Null,
        rpc_code,
        &ErrorBody::new(kind, message),
    );
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(json.to_string()))
}

fn is_mcp_path(path: &str) -> bool {
    path.strip_prefix("/mcp")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Paths answered to programs rather than people: their errors are JSON.
fn is_machine_path(path: &str) -> bool {
    ["/api", "/rpc", "/mcp"].iter().any(|face| {
        path.strip_prefix(face)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// Any path under `/api` that no route serves.
pub async fn no_such_route(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "no API route {}; the routes are listed in /api/openapi.json",
        index_core::validate::cut(uri.path(), 200)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_faces_are_api_rpc_and_mcp() {
        for path in ["/api", "/api/x", "/rpc/nope", "/mcp", "/mcp/x"] {
            assert!(is_machine_path(path), "{path}");
        }
        for path in ["/", "/apis", "/rpcx", "/libraries", "/pkg/app.js"] {
            assert!(!is_machine_path(path), "{path}");
        }
    }
}
