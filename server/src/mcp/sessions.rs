//! MCP sessions over HTTP belong to the caller that opened them.
//!
//! rmcp's streamable HTTP transport knows a session by its
//! `Mcp-Session-Id` alone: any request that names it is let in. It would
//! run another token's tool calls in the session, close it (`DELETE`), and
//! replay to a `GET` with `Last-Event-ID` the answers it sent the session's
//! own caller: the results of searches in libraries the other token may
//! not read. The id travels in a header that proxies and logs may keep, so
//! knowing it must not be enough.
//!
//! [`bind`] sits between the server's check of who the request is
//! (`http::auth`) and rmcp: a session rmcp opens is recorded as its
//! caller's, and a request that names a session not recorded as its
//! caller's is handed to rmcp naming [`NO_SUCH_SESSION`] instead, an id
//! rmcp never issues. rmcp then answers it as it answers every id it does
//! not know, so another caller's session and one that never existed get the
//! same answer, made by the same code.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use index_core::access::Caller;
use moka::sync::Cache;

/// The header rmcp names a session in, requests and answers alike.
const SESSION_HEADER: &str = "mcp-session-id";

/// What a request naming another caller's session names instead: rmcp's
/// ids are UUIDs, so it never hands this one out.
const NO_SUCH_SESSION: &str = "docshelf-no-such-session";

/// Sessions whose caller is remembered, at most; past it the least recently
/// used is forgotten, and its client, refused, opens a new session as MCP
/// clients do after a 404.
const MAX_SESSIONS: u64 = 100_000;

/// How long an unused session's caller is remembered: longer than rmcp
/// keeps an idle session (5 minutes by default), so the binding never goes
/// first while the session lives.
const IDLE_LIMIT: Duration = Duration::from_secs(3600);

/// The caller that opened each live MCP session, by session id.
pub struct Owners {
    /// Session id → the opener's [`Caller::id`].
    by_session: Cache<String, String>,
}

impl Default for Owners {
    fn default() -> Self {
        Self {
            by_session: Cache::builder()
                .max_capacity(MAX_SESSIONS)
                .time_to_idle(IDLE_LIMIT)
                .build(),
        }
    }
}

impl Owners {
    /// Whether `caller` opened the session `id`.
    fn owns(&self, caller: &Caller, id: &str) -> bool {
        self.by_session
            .get(id)
            .is_some_and(|owner| owner == caller.id)
    }
}

/// The layer in front of rmcp's HTTP service: a session is its opener's
/// (see the module's documentation).
pub async fn bind(State(owners): State<Arc<Owners>>, mut request: Request, next: Next) -> Response {
    let caller = request
        .extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(Caller::nobody);
    // A session named in a header that is not text is no session of this
    // caller's either.
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|value| value.to_str().ok().map(str::to_owned));
    let owned = match &named {
        Some(Some(id)) if owners.owns(&caller, id) => Some(id.clone()),
        Some(_) => {
            request
                .headers_mut()
                .insert(SESSION_HEADER, HeaderValue::from_static(NO_SUCH_SESSION));
            None
        }
        None => None,
    };
    let closing = request.method() == Method::DELETE;
    let response = next.run(request).await;
    if named.is_none() {
        // No session named: the answer to an `initialize` names the new
        // one. A request that named one never rebinds it.
        let opened = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let Some(id) = opened {
            owners.by_session.insert(id.to_owned(), caller.id);
        }
    } else if let Some(id) = owned.filter(|_| closing && response.status().is_success()) {
        owners.by_session.invalidate(&id);
    }
    response
}

#[cfg(test)]
mod tests {
    use index_core::access::Permissions;

    use super::*;

    fn caller(id: &str) -> Caller {
        Caller {
            name: "someone".into(),
            id: id.into(),
            permissions: Permissions::read_all(),
            signed_in: true,
            tokens_required: true,
        }
    }

    #[test]
    fn a_session_is_its_openers_alone() {
        let owners = Owners::default();
        owners
            .by_session
            .insert("s-1".into(), caller("admin").id.clone());
        assert!(owners.owns(&caller("admin"), "s-1"));
        assert!(!owners.owns(&caller("0123abcd"), "s-1"));
        // A session no one opened here is no one's.
        assert!(!owners.owns(&caller("admin"), "s-2"));
    }

    #[test]
    fn the_stand_in_id_is_not_one_rmcp_issues() {
        assert!(uuid::Uuid::parse_str(NO_SUCH_SESSION).is_err());
        assert!(HeaderValue::from_str(NO_SUCH_SESSION).is_ok());
    }
}
