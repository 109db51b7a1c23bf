//! API errors: JSON [`ErrorBody`] `{"code", "kind", "error", "link"}` with
//! the status its code's [`ErrorKind`] gives (the table in
//! [`index_core::error`]).
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
use index_core::{ErrorBody, ErrorCode, ErrorKind};
use serde::de::DeserializeOwned;

use crate::engine::EngineError;
use crate::mcp::rpc;

/// An error answered to an API client.
#[derive(Debug)]
pub struct ApiError(ErrorBody);

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self(ErrorBody::new(code, message))
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
        Self::new(ErrorCode::InvalidName, err.to_string())
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
        let kind = self.0.kind;
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
            Err(rejection) => Err(ApiError::new(
                ErrorCode::InvalidQueryString,
                index_core::validate::cut(&rejection.body_text(), 300),
            )),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let text = rejection.body_text();
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            ErrorCode::BodyTooLarge,
            format!("the request body is larger than the server accepts: {text}"),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the body as JSON with Content-Type: application/json",
        ),
        _ => ApiError::new(ErrorCode::InvalidBody, body_problem(&text)),
    }
}

/// What is wrong with a JSON body, in docshelf's words: a missing field is
/// named as such (serde says "missing field `library` at line 1 column
/// 24"); anything else keeps the decoder's words, cut, after what failed.
fn body_problem(text: &str) -> String {
    let said = text
        .split_once(": ")
        .filter(|(head, _)| head.starts_with("Failed to"))
        .map_or(text, |(_, rest)| rest);
    if let Some(field) = said
        .split_once("missing field `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(field, _)| field)
    {
        return format!("the request body lacks the field `{field}`, which is required");
    }
    format!(
        "the request body is not valid: {}",
        index_core::validate::cut(said, 300)
    )
}

/// The longest request target (path and query) read, in bytes. Longer
/// targets are answered 414 here, as JSON, well before hyper's own limit
/// (64 KiB), whose 414 has no body, so that a name of megabytes in a query
/// string never reaches the handlers; no identifier needs more than a few
/// hundred bytes.
pub const MAX_TARGET_BYTES: usize = 16 * 1024;

/// Refuses, before anything reads them, what no route would read: a
/// request target over [`MAX_TARGET_BYTES`] (414) and a body whose declared
/// length is over the server's limit (413). Both are decided here, up front,
/// as our own errors; a body that turns out longer than it declared, or
/// comes without a length, is cut by the limit layer inside, and its reader
/// (the JSON extractor, the upload form, MCP's screen) answers it.
pub async fn refuse_oversized(
    axum::extract::State(max_body_bytes): axum::extract::State<usize>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |pq| pq.as_str().len());
    if target > MAX_TARGET_BYTES {
        return ApiError::new(
            ErrorCode::UriTooLong,
            format!(
                "the request target is {target} bytes long; at most {MAX_TARGET_BYTES} are read"
            ),
        )
        .into_response();
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&n| n > max_body_bytes as u64) {
        return ApiError::new(
            ErrorCode::BodyTooLarge,
            format!(
                "the request body ({length} bytes) is larger than the server accepts ({max_body_bytes} bytes, --max-body-mib)"
            ),
        )
        .into_response();
    }
    next.run(request).await
}

/// A path that exists, asked with a method it does not take: the router's
/// fallback for every route, so the answer is ours from the start (axum
/// adds the `Allow` header).
pub async fn wrong_method() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "this path does not take this method; see the Allow header",
    )
}

/// rmcp's HTTP transport answers what it refuses itself (a wrong `Accept`,
/// an unknown session) as plain text: the one adapter left for answers
/// docshelf does not write, scoped to `/mcp`. Bodies rmcp cannot read never
/// reach it ([`crate::mcp::http::screen`]).
pub async fn mcp_errors(request: Request, next: axum::middleware::Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if (status.is_client_error() || status.is_server_error()) && !is_json(&response) {
        return mcp_error(response).await;
    }
    response
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
    let code = ErrorCode::of_status(status.as_u16());
    let message = match text.as_str() {
        "" => status
            .canonical_reason()
            .unwrap_or("MCP transport error")
            .to_owned(),
        text => index_core::validate::cut(text, 300),
    };
    let json = rpc::error(serde_json::Value::Null, &ErrorBody::new(code, message));
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(json.to_string()))
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// Any path under `/api` or `/rpc` that no route serves: the machine
/// faces' own 404, not the dashboard's page.
pub async fn no_such_route(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        ErrorCode::UnknownRoute,
        format!(
            "no route {}; the REST routes are listed in /api/openapi.json",
            index_core::validate::cut(uri.path(), 200)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_named_in_our_words() {
        let serde = "Failed to deserialize the JSON body into the target type: missing field `library` at line 1 column 24";
        assert_eq!(
            body_problem(serde),
            "the request body lacks the field `library`, which is required"
        );
        let other = "Failed to parse the request body as JSON: expected value at line 1 column 2";
        assert_eq!(
            body_problem(other),
            "the request body is not valid: expected value at line 1 column 2"
        );
    }
}
