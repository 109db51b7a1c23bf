//! `/api/tokens`, `/api/audit` and `/api/session`: tokens made, listed
//! and revoked by admins; the audit log; and the dashboard's sign-in, which
//! turns a token into an `HttpOnly` session cookie.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use index_core::access::{AuditEntry, Caller, CreatedToken, NewToken, TokenInfo};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::{session_cookie_header, Client, Who};
use super::error::{ApiError, ApiJson, ApiQuery};
use super::openapi::ErrorBody;
use super::AppState;

/// Makes a token (admins only). Its secret is in this answer only:
/// docshelf keeps its hash.
#[utoipa::path(
    post,
    path = "/tokens",
    tag = "tokens",
    request_body = NewToken,
    responses(
        (status = 201, body = CreatedToken),
        (status = 400, description = "A bad name, grant (a pattern with a character no library name has, or padded with spaces) or expiry", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "The token is not an admin's", body = ErrorBody),
        (status = 409, description = "A token of that name exists (revoked ones keep their names)", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn create(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiJson(request): ApiJson<NewToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let created = state.engine.create_token(&caller, request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Every token, revoked and expired ones included, without secrets
/// (admins only).
#[utoipa::path(
    get,
    path = "/tokens",
    tag = "tokens",
    responses(
        (status = 200, body = Vec<TokenInfo>),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "The token is not an admin's", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn list(
    State(state): State<AppState>,
    Who(caller): Who,
) -> Result<Json<Vec<TokenInfo>>, ApiError> {
    Ok(Json(state.engine.list_tokens(&caller).await?))
}

/// Revokes a token (admins only): refused at once here, and by every
/// replica within its read-consistency interval.
#[utoipa::path(
    delete,
    path = "/tokens/{id}",
    tag = "tokens",
    params(("id" = String, Path, description = "The token's id, from the listing")),
    responses(
        (status = 200, body = TokenInfo),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "The token is not an admin's", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn revoke(
    State(state): State<AppState>,
    Who(caller): Who,
    Path(id): Path<String>,
) -> Result<Json<TokenInfo>, ApiError> {
    Ok(Json(state.engine.revoke_token(&caller, &id).await?))
}

/// `?limit=` of the audit log.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Newest entries returned, at most (default 200, at most 10,000).
    limit: Option<usize>,
}

/// The audit log, newest first (admins only): every write and token
/// change, with the token's name, never its secret.
#[utoipa::path(
    get,
    path = "/audit",
    tag = "tokens",
    params(AuditQuery),
    responses(
        (status = 200, body = Vec<AuditEntry>),
        (status = 400, description = "A query string that does not parse", body = ErrorBody),
        (status = 401, description = "A token is required", body = ErrorBody),
        (status = 403, description = "The token is not an admin's", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn audit(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> Result<Json<Vec<AuditEntry>>, ApiError> {
    let limit = query.limit.unwrap_or(200);
    Ok(Json(state.engine.audit_log(&caller, limit).await?))
}

/// Who the request is: the token's name and grants (anonymous without one).
#[utoipa::path(
    get,
    path = "/session",
    tag = "tokens",
    responses((status = 200, body = Caller))
)]
pub async fn session(Who(caller): Who) -> Json<Caller> {
    Json(caller)
}

/// A sign-in.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The token to sign in with.
    pub token: String,
}

/// Signs the browser in: the token is checked, then kept in an
/// `HttpOnly`, `SameSite=Strict` session cookie (`Secure` when the request
/// came over TLS) that the dashboard's requests carry from then on.
#[utoipa::path(
    post,
    path = "/session",
    tag = "tokens",
    request_body = SignIn,
    responses(
        (status = 200, description = "Signed in", body = Caller),
        (status = 400, description = "The body is not a sign-in", body = ErrorBody),
        (status = 401, description = "A wrong, expired or revoked token", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 429, description = "Too many wrong tokens from this client", body = ErrorBody),
    )
)]
pub async fn sign_in(
    State(state): State<AppState>,
    Client(client): Client,
    headers: HeaderMap,
    ApiJson(sign_in): ApiJson<SignIn>,
) -> Result<Response, ApiError> {
    let token = sign_in.token.trim();
    if token.is_empty() {
        return Err(ApiError::new(
            index_core::ErrorCode::MissingToken,
            "enter a token to sign in",
        ));
    }
    let caller = state.auth.checked(&state, client, token).await?;
    let cookie = session_cookie_header(Some(token), SESSION_SECS, over_tls(&headers));
    Ok(with_cookie(Json(caller).into_response(), &cookie))
}

/// Signs the browser out: the session cookie is cleared. Answers who
/// the browser is from then on (anonymous).
#[utoipa::path(
    delete,
    path = "/session",
    tag = "tokens",
    responses((status = 200, description = "Signed out", body = Caller))
)]
pub async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let cookie = session_cookie_header(None, 0, over_tls(&headers));
    with_cookie(Json(state.auth.anonymous()).into_response(), &cookie)
}

/// How long a sign-in lasts: 30 days, or less when the token ends sooner
/// (the token's own expiry and revocation are checked on every request).
const SESSION_SECS: u64 = 30 * 24 * 3600;

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Whether the client reached this server over TLS: docshelf itself
/// speaks plain HTTP, so TLS is a proxy's, which says so in
/// `X-Forwarded-Proto` or `Forwarded`.
fn over_tls(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("proto=https"));
    forwarded_proto || forwarded
}
