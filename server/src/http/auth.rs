//! Who a request is, decided once for every route ([`authenticate`]), and
//! the guards that the router puts on its routes with `route_layer`.
//!
//! [`authenticate`] reads the request's credential (the bearer header, or
//! the dashboard's session cookie), refuses a wrong, expired or revoked one
//! (401), a token in the query string (400) and a client that has guessed
//! too often (429), and leaves the request's [`Caller`] in its extensions.
//! Every face reads it from there: the REST handlers ([`Who`]), the
//! dashboard's server functions, MCP over HTTP. The engine takes it on
//! every call and decides what the caller sees and may change.
//!
//! The guards decide only whether a request needs a token at all:
//! [`require_write`] on the write router (a request without a token
//! cannot write where the server has tokens), [`require_read`] on the read
//! routes (which needs one only when `auth_reads` is on). A route is a
//! write because it is registered on the write router, not because its
//! path is on a list: a new write route cannot be left open by forgetting
//! one. Whether this token may write to this library is the engine's
//! decision (403 `not_permitted`).
//!
//! Without a token the server listens on loopback only (see
//! [`crate::cli::serve`]), so nobody else can reach it at all.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};

use super::credentials::{bearer, session_cookie, token_in_query};
pub use super::credentials::{encode_cookie, session_cookie_header, SESSION_COOKIE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use index_core::access::{Caller, Permissions};

use super::error::ApiError;
use super::AppState;
use crate::access::{secret, AccessError, FailedAttempts};
use crate::engine::EngineError;

/// How the server is configured to admit requests.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The admin token (`--token`): it may do anything, tokens included.
    pub token: Option<String>,
    /// Whether reads need a token too.
    pub auth_reads: bool,
    /// Wrong tokens one client may send in a minute before it waits
    /// (default [`crate::access::attempts::MAX_FAILURES`]).
    pub max_failures: Option<u32>,
}

/// [`Access`] as the running server applies it.
pub struct Auth {
    /// The admin token's digest, compared in constant time.
    admin: Option<[u8; 32]>,
    auth_reads: bool,
    attempts: FailedAttempts,
}

impl Auth {
    pub fn new(access: &Access) -> Self {
        Self {
            admin: access
                .token
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(secret::digest),
            auth_reads: access.auth_reads,
            attempts: FailedAttempts::new(
                access
                    .max_failures
                    .unwrap_or(crate::access::attempts::MAX_FAILURES),
            ),
        }
    }

    /// Whether this server asks for tokens at all (it has an admin token).
    pub fn tokens_required(&self) -> bool {
        self.admin.is_some()
    }

    /// The caller of a request that brings no token.
    pub fn anonymous(&self) -> Caller {
        let permissions = match (self.tokens_required(), self.auth_reads) {
            // No token set: the server is on loopback and open to its users.
            (false, _) => Permissions::everything(),
            (true, false) => Permissions::read_all(),
            (true, true) => Permissions::nothing(),
        };
        // Without tokens every request is the local user's, as the CLI's
        // are: one owner of sessions, as anyone can reach the server.
        let name = if self.tokens_required() {
            "anonymous"
        } else {
            "local"
        };
        Caller {
            name: name.to_owned(),
            id: name.to_owned(),
            permissions,
            signed_in: false,
            tokens_required: self.tokens_required(),
        }
    }

    /// The caller a presented secret names: the admin, or a stored token.
    pub async fn identify(&self, state: &AppState, presented: &str) -> Result<Caller, EngineError> {
        if self
            .admin
            .is_some_and(|admin| secret::same(&admin, &secret::digest(presented)))
        {
            return Ok(Caller {
                name: "admin".to_owned(),
                id: "admin".to_owned(),
                permissions: Permissions::everything(),
                signed_in: true,
                tokens_required: self.tokens_required(),
            });
        }
        let info = state.engine.identify(presented).await?;
        Ok(Caller {
            name: info.name,
            id: info.id,
            permissions: Permissions {
                grants: info.grants,
            },
            signed_in: true,
            tokens_required: self.tokens_required(),
        })
    }

    /// The caller of a request, or why it is refused; failed attempts
    /// are counted against the client.
    ///
    /// A session cookie that no longer names a current token (revoked,
    /// expired, or past the client's attempts) is not refused: the request
    /// goes on as anonymous and its answer clears the cookie
    /// ([`Verdict::clear_cookie`]), so a browser whose token was revoked
    /// still loads the page and its sign-in form instead of a JSON 401.
    /// The failure still counts against the client, and whether the cookie
    /// worked shows only as an anonymous answer.
    async fn caller_of(
        &self,
        state: &AppState,
        headers: &HeaderMap,
        query: Option<&str>,
        client: IpAddr,
    ) -> Result<Verdict, EngineError> {
        if let Some(name) = query.and_then(token_in_query) {
            return Err(AccessError::InQuery(name).into());
        }
        if let Some(token) = bearer(headers) {
            let caller = self.checked(state, client, token).await?;
            return Ok(Verdict::of(caller));
        }
        let Some(cookie) = session_cookie(headers) else {
            return Ok(Verdict::of(self.anonymous()));
        };
        match self.checked(state, client, &cookie).await {
            Ok(caller) => Ok(Verdict::of(caller)),
            Err(EngineError::Access(
                AccessError::Invalid | AccessError::Expired { .. } | AccessError::Revoked { .. },
            )) => Ok(Verdict {
                caller: self.anonymous(),
                clear_cookie: true,
            }),
            // Attempts are counted per address, which a proxy shares among
            // its users: another client's guessing must not sign this one
            // out. The request goes on as anonymous, its cookie kept.
            Err(EngineError::Access(AccessError::TooManyAttempts(_))) => {
                Ok(Verdict::of(self.anonymous()))
            }
            Err(err) => Err(err),
        }
    }

    /// The caller `presented` names, checked as every credential is: the
    /// client's failed attempts are counted, and past the limit refused.
    pub async fn checked(
        &self,
        state: &AppState,
        client: IpAddr,
        presented: &str,
    ) -> Result<Caller, EngineError> {
        if let Err(wait) = self.attempts.check(client) {
            return Err(AccessError::TooManyAttempts(wait).into());
        }
        let result = self.identify(state, presented).await;
        if let Err(EngineError::Access(
            AccessError::Invalid | AccessError::Expired { .. } | AccessError::Revoked { .. },
        )) = &result
        {
            self.attempts.failed(client);
        }
        result
    }
}

/// The middleware every request passes: its caller, or its refusal.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let client = client_of(request.extensions());
    let caller = state
        .auth
        .caller_of(&state, request.headers(), request.uri().query(), client)
        .await;
    match caller {
        Ok(verdict) => {
            request.extensions_mut().insert(verdict.caller);
            let mut response = next.run(request).await;
            // A sign-in answered with a cookie of its own replaces the
            // stale one: clearing after it would delete the new one.
            let sets_cookie = response.headers().contains_key(header::SET_COOKIE);
            if verdict.clear_cookie && !sets_cookie {
                let cleared = session_cookie_header(None, 0, false);
                if let Ok(value) = axum::http::HeaderValue::from_str(&cleared) {
                    response.headers_mut().append(header::SET_COOKIE, value);
                }
            }
            response
        }
        Err(err) => ApiError::from(err).into_response(),
    }
}

/// Who a request is, and whether its answer clears a stale session cookie.
struct Verdict {
    caller: Caller,
    clear_cookie: bool,
}

impl Verdict {
    fn of(caller: Caller) -> Self {
        Self {
            caller,
            clear_cookie: false,
        }
    }
}

/// The address a request came from (the peer of its connection). Behind
/// a proxy that is the proxy's: failed attempts are then counted for all
/// its clients together.
pub fn client_of(extensions: &axum::http::Extensions) -> IpAddr {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip())
}

/// The address a request came from, as an extractor.
pub struct Client(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Self(client_of(&parts.extensions)))
    }
}

/// The request's caller, as [`authenticate`] found it. A request that did
/// not pass through it (none should) may do nothing.
pub struct Who(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Who {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Self(caller(&parts.extensions)))
    }
}

/// The caller left in `extensions`, or one that may do nothing.
pub fn caller(extensions: &axum::http::Extensions) -> Caller {
    extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(Caller::nobody)
}

/// The guard of routes that change stored data: without a token, only a
/// server without tokens admits them.
pub async fn require_write(request: Request, next: Next) -> Response {
    admit(needs_token(&request, true, Face::Api), request, next).await
}

/// The guard of routes that read: open unless `auth_reads`.
pub async fn require_read(request: Request, next: Next) -> Response {
    admit(needs_token(&request, false, Face::Api), request, next).await
}

/// [`require_write`] for the dashboard's server functions.
pub async fn require_dashboard_write(request: Request, next: Next) -> Response {
    admit(needs_token(&request, true, Face::Dashboard), request, next).await
}

/// [`require_read`] for the dashboard's server functions.
pub async fn require_dashboard_read(request: Request, next: Next) -> Response {
    admit(needs_token(&request, false, Face::Dashboard), request, next).await
}

/// Which face a refusal speaks to.
#[derive(Clone, Copy)]
enum Face {
    Api,
    Dashboard,
}

/// Runs the request if the guard admitted it; answers the refusal if not.
async fn admit(verdict: Result<(), ApiError>, request: Request, next: Next) -> Response {
    match verdict {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

/// Refuses a request that brings no token where its kind needs one.
fn needs_token(request: &Request, write: bool, face: Face) -> Result<(), ApiError> {
    let caller = caller(request.extensions());
    let admitted = caller.signed_in
        || if write {
            !caller.tokens_required
        } else {
            !caller.permissions.grants.is_empty()
        };
    if admitted {
        return Ok(());
    }
    let message = match face {
        Face::Api => "this request needs a token: send Authorization: Bearer <token>",
        Face::Dashboard => "this needs a token: sign in at the top of the page",
    };
    Err(ApiError::new(index_core::ErrorCode::MissingToken, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_without_a_token_are_admitted_as_the_server_says() {
        let open = Auth::new(&Access::default());
        assert!(open.anonymous().permissions.is_admin());
        let writes_only = Auth::new(&Access {
            token: Some("s".into()),
            ..Access::default()
        });
        let anonymous = writes_only.anonymous();
        assert!(anonymous.permissions.reads_everything());
        assert!(!anonymous.permissions.writes_any());
        let everything = Auth::new(&Access {
            token: Some("s".into()),
            auth_reads: true,
            ..Access::default()
        });
        assert!(everything.anonymous().permissions.grants.is_empty());
    }
}
