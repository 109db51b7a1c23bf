//! Bearer-token access control.
//!
//! With a token configured, writes (uploads, deletes, feedback) need
//! `Authorization: Bearer <token>`, and so do reads when `auth_reads` is on.
//! Without a token the server listens on loopback only (see
//! [`crate::cli::serve`]), so nobody else can reach it at all.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Who may do what.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub token: Option<String>,
    /// Whether reads need the token too.
    pub auth_reads: bool,
}

/// Whether a request changes stored data.
fn is_write(method: &Method, path: &str) -> bool {
    *method == Method::DELETE
        || (*method == Method::POST && matches!(path, "/api/upload" | "/api/feedback"))
}

/// Whether a request reads data that `auth_reads` protects. Liveness, the
/// dashboard's pages and static files stay open; the dashboard's server
/// functions (`/rpc/…`) carry the token as an argument and check it
/// themselves (see [`allows`]), since a page cannot add headers to them.
fn is_protected_read(path: &str) -> bool {
    path.starts_with("/api/") || path == "/mcp" || path.starts_with("/mcp/") || path == "/metrics"
}

/// The middleware.
pub async fn require_token(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = access.token.as_deref() else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    let needed = is_write(request.method(), path) || (access.auth_reads && is_protected_read(path));
    if !needed {
        return next.run(request).await;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(given) if same(given.trim().as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => ApiError::unauthorized("the bearer token is wrong").into_response(),
        None => {
            ApiError::unauthorized("this request needs a token: send Authorization: Bearer <token>")
                .into_response()
        }
    }
}

/// Whether `given` grants a read (`write: false`) or a write under `access`.
pub fn allows(access: &Access, given: Option<&str>, write: bool) -> Result<(), String> {
    let Some(token) = access.token.as_deref() else {
        return Ok(());
    };
    if !write && !access.auth_reads {
        return Ok(());
    }
    match given.map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) if same(g.as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err("the access token is wrong".into()),
        None => Err("this needs the access token: enter it at the top of the page".into()),
    }
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_told_from_reads() {
        assert!(is_write(&Method::POST, "/api/upload"));
        assert!(is_write(&Method::POST, "/api/feedback"));
        assert!(is_write(&Method::DELETE, "/api/libraries/x"));
        assert!(!is_write(&Method::POST, "/api/search"));
        assert!(!is_write(&Method::GET, "/api/libraries"));
        assert!(!is_write(&Method::POST, "/rpc/search"));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secret2"));
    }
}
