//! Bearer-token access control, as two guards that the router puts on its
//! routes with `route_layer`: [`require_write`] on the write router
//! (uploads, deletes, feedback), [`require_read`] on the read routes (the
//! REST API's reads, MCP, metrics), which needs the token only when
//! `auth_reads` is on. A route is a write because it is registered on the
//! write router, not because its path is on a list: a new write route
//! cannot be left open by forgetting one.
//!
//! Without a token the server listens on loopback only (see
//! [`crate::cli::serve`]), so nobody else can reach it at all.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;

/// Who may do what.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub token: Option<String>,
    /// Whether reads need the token too.
    pub auth_reads: bool,
}

/// The guard of routes that change stored data.
pub async fn require_write(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    match check(&access, request.headers(), true) {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

/// The guard of routes that read stored data: open unless `auth_reads`.
/// The dashboard's pages and server functions are not behind it: a page
/// cannot add headers to its server-function calls, so those carry the
/// token as an argument and check it themselves (see [`allows`]).
pub async fn require_read(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    match check(&access, request.headers(), false) {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

/// Whether the request's bearer token grants a read or a write.
pub fn check(access: &Access, headers: &HeaderMap, write: bool) -> Result<(), ApiError> {
    let Some(token) = access.token.as_deref() else {
        return Ok(());
    };
    if !write && !access.auth_reads {
        return Ok(());
    }
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(given) if same(given.trim().as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::unauthorized("the bearer token is wrong")),
        None => Err(ApiError::unauthorized(
            "this request needs a token: send Authorization: Bearer <token>",
        )),
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
    bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secret2"));
    }
}
