//! Bearer-token access control, as guards that the router puts on its
//! routes with `route_layer`: [`require_write`] on the write router
//! (uploads, deletes, feedback), [`require_read`] on the read routes (the
//! REST API's reads, MCP, metrics), which needs the token only when
//! `auth_reads` is on. A route is a write because it is registered on the
//! write router, not because its path is on a list: a new write route
//! cannot be left open by forgetting one.
//!
//! The dashboard's server functions are registered the same way, behind
//! [`require_dashboard_write`] and [`require_dashboard_read`]: the same
//! rules, told in the page's words (its user enters the token at the top of
//! the page, which sends it as the same bearer header).
//!
//! Without a token the server listens on loopback only (see
//! [`crate::cli::serve`]), so nobody else can reach it at all.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use index_core::ErrorCode;

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
    let verdict = check(&access, request.headers(), true);
    admit(verdict, request, next).await
}

/// The guard of routes that read stored data: open unless `auth_reads`.
pub async fn require_read(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let verdict = check(&access, request.headers(), false);
    admit(verdict, request, next).await
}

/// The guard of the dashboard's server functions that change stored data.
pub async fn require_dashboard_write(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let verdict = check_dashboard(&access, request.headers(), true);
    admit(verdict, request, next).await
}

/// The guard of the dashboard's server functions that read: open unless
/// `auth_reads`.
pub async fn require_dashboard_read(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let verdict = check_dashboard(&access, request.headers(), false);
    admit(verdict, request, next).await
}

/// Runs the request if the guard admitted it; answers the refusal if not.
async fn admit(verdict: Result<(), ApiError>, request: Request, next: Next) -> Response {
    match verdict {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

/// The token a read (`write: false`) or a write needs, if it needs one:
/// the access rule itself, which both faces' checks apply.
fn required(access: &Access, write: bool) -> Option<&str> {
    access
        .token
        .as_deref()
        .filter(|_| write || access.auth_reads)
}

/// Whether the request's bearer token grants a read or a write.
pub fn check(access: &Access, headers: &HeaderMap, write: bool) -> Result<(), ApiError> {
    let Some(token) = required(access, write) else {
        return Ok(());
    };
    match bearer(headers) {
        Some(given) if same(given.as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidToken,
            "the bearer token is wrong",
        )),
        None => Err(ApiError::new(
            ErrorCode::MissingToken,
            "this request needs a token: send Authorization: Bearer <token>",
        )),
    }
}

/// [`check`] for the dashboard: a blank token counts as none, and the
/// refusal says where the user enters it.
fn check_dashboard(access: &Access, headers: &HeaderMap, write: bool) -> Result<(), ApiError> {
    let Some(token) = required(access, write) else {
        return Ok(());
    };
    match bearer(headers).filter(|g| !g.is_empty()) {
        Some(given) if same(given.as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidToken,
            "the access token is wrong",
        )),
        None => Err(ApiError::new(
            ErrorCode::MissingToken,
            "this needs the access token: enter it at the top of the page",
        )),
    }
}

/// The token of an `Authorization: Bearer <token>` header, read as
/// RFC 9110 (§11.4) writes credentials: the scheme in any case, then one
/// or more spaces, then the token. So `Bearer  t` and `bearer t` carry
/// `t`; a header of another scheme carries no bearer token. The token
/// itself is compared whole: whitespace inside or after it (which HTTP
/// does not strip from inside a value) makes it a different token.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = authorization {
            headers.insert(
                header::AUTHORIZATION,
                value.parse().expect("a header value"),
            );
        }
        headers
    }

    #[test]
    fn the_bearer_token_is_read_as_rfc_9110_writes_it() {
        for (header, token) in [
            ("Bearer t0k", Some("t0k")),
            ("Bearer  t0k", Some("t0k")),
            ("bearer t0k", Some("t0k")),
            ("BEARER t0k", Some("t0k")),
            ("Bearer ", Some("")),
            ("Basic dXNlcjpwYXNz", None),
            ("Bearer", None),
            ("Bearert0k", None),
        ] {
            assert_eq!(bearer(&headers(Some(header))), token, "{header:?}");
        }
        let access = Access {
            token: Some("t0k".into()),
            auth_reads: false,
        };
        assert!(check(&access, &headers(Some("Bearer  t0k")), true).is_ok());
        assert!(check(&access, &headers(Some("Bearer t0k x")), true).is_err());
        assert!(check(&access, &headers(Some("Bearer t0")), true).is_err());
    }

    #[test]
    fn the_dashboard_needs_the_token_for_writes_and_for_reads_only_with_auth_reads() {
        let writes_only = Access {
            token: Some("secret".into()),
            auth_reads: false,
        };
        let everything = Access {
            auth_reads: true,
            ..writes_only.clone()
        };
        let (none, blank, wrong, right) = (
            headers(None),
            headers(Some("Bearer  ")),
            headers(Some("Bearer nope")),
            headers(Some("Bearer secret")),
        );
        let refusal = |access: &Access, headers: &HeaderMap, write: bool| {
            check_dashboard(access, headers, write).map_err(|e| e.body().code)
        };
        assert_eq!(refusal(&writes_only, &none, false), Ok(()));
        assert_eq!(
            refusal(&writes_only, &none, true),
            Err(ErrorCode::MissingToken)
        );
        assert_eq!(refusal(&writes_only, &right, true), Ok(()));
        assert_eq!(
            refusal(&everything, &blank, false),
            Err(ErrorCode::MissingToken)
        );
        assert_eq!(
            refusal(&everything, &wrong, false),
            Err(ErrorCode::InvalidToken)
        );
        assert_eq!(refusal(&everything, &right, false), Ok(()));
        // Without a token configured, everything is open.
        assert_eq!(refusal(&Access::default(), &wrong, true), Ok(()));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secret2"));
    }
}
