//! MCP over streamable HTTP: what a `POST /mcp` carries is read before
//! rmcp's transport sees it. A body that is not JSON gets JSON-RPC's parse
//! error, JSON that is not an MCP message its invalid-request error, each
//! with docshelf's error body, decided by what the body is ([`rpc::refusal`],
//! as for stdio) rather than read back from rmcp's plain-text answers.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use index_core::{ErrorBody, ErrorCode};

use super::rpc;

/// The guard in front of rmcp's HTTP service: a message it can read goes
/// on, whole; anything else is answered here, 400 with a JSON-RPC error.
pub async fn screen(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The server's body limit wraps this body: past it, reading fails.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        let body = ErrorBody::new(
            ErrorCode::BodyTooLarge,
            "the MCP message is larger than the server accepts (--max-body-mib)",
        );
        let answer = rpc::error(serde_json::Value::Null, &body);
        return (StatusCode::PAYLOAD_TOO_LARGE, Json(answer)).into_response();
    };
    let refusal = match std::str::from_utf8(&bytes) {
        Ok(text) => rpc::refusal(text),
        Err(_) => Some(rpc::parse_error(
            "Parse error: the message is not UTF-8 text".into(),
        )),
    };
    match refusal {
        Some(answer) => (StatusCode::BAD_REQUEST, Json(answer)).into_response(),
        None => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}
