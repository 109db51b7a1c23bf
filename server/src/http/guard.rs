//! Where a request comes from: writes from other sites and requests naming
//! a foreign host are refused, on every route.
//!
//! Why: docshelf listens on loopback without a token, and a web page the
//! user visits can still talk to loopback: a cross-site `<form>` can POST
//! to `/rpc/delete` or send a multipart upload, and a DNS-rebinding page
//! reads whatever a server answers to any `Host`. A token does not help a
//! browser-borne request that the user's own browser sends.
//!
//! - **Writes** (every method but GET, HEAD and OPTIONS: uploads, deletes,
//!   feedback, the dashboard's server functions, MCP, searches by POST)
//!   from a browser must come from this server's own origin or one named in
//!   `--cors-origins`. Browsers say where a request comes from in
//!   `Sec-Fetch-Site` and `Origin`, and a page cannot forge either; clients
//!   that are not browsers send neither and are governed by the token alone.
//! - **Host**: the `Host` header must name loopback (`localhost`), an IP
//!   address, or a name given in `--allowed-hosts`. A rebinding attack needs
//!   a DNS name of the attacker's, so IP literals are safe to accept.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use index_core::ErrorCode;

use super::error::ApiError;

/// What the guard lets through.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// Host names accepted besides loopback names and IP literals, lower case.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to write (the CORS list), without a trailing `/`.
    pub cors_origins: Vec<String>,
}

impl Guard {
    pub fn new(allowed_hosts: &[String], cors_origins: &[String]) -> Self {
        Self {
            allowed_hosts: allowed_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
            cors_origins: cors_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a `Host` header value (`name[:port]`) names this server.
    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        name == "localhost"
            || name.ends_with(".localhost")
            || name.parse::<IpAddr>().is_ok()
            || self.allowed_hosts.iter().any(|h| *h == name || *h == host)
    }

    /// Why a state-changing request must be refused, if it must.
    fn cross_site(&self, request: &Request, host: Option<&str>) -> Option<String> {
        let headers = request.headers();
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase());
        let allowed_origin = origin.as_deref().is_some_and(|o| {
            self.cors_origins.iter().any(|c| c == o)
                || host.is_some_and(|h| {
                    let h = h.to_ascii_lowercase();
                    o == format!("http://{h}") || o == format!("https://{h}")
                })
        });
        let site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if matches!(site, "cross-site" | "same-site") && !allowed_origin {
            return Some(format!(
                "a page from another site ({}) cannot change or query this server",
                origin.as_deref().unwrap_or("unknown origin")
            ));
        }
        match origin.as_deref() {
            Some(o) if !allowed_origin => Some(format!(
                "requests from the origin {o} are not accepted (allow it with --cors-origins)"
            )),
            _ => None,
        }
    }
}

/// The part of a `Host` value before its port (`[::1]:8080` → `::1`).
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(name, _)| name)
}

/// The host a request names: the request target's authority when the
/// target is in absolute form (`GET http://host/path`), else the `Host`
/// header. RFC 9112 §3.2.2: a server must ignore `Host` when the target is
/// absolute, and so must this check; reading the header first let
/// `GET http://evil.example/api/libraries` with `Host: localhost` through.
fn request_host(request: &Request) -> Option<String> {
    let authority = request.uri().authority().map(|a| {
        // `user:pass@host:port`: the host is after the last `@`.
        let a = a.as_str();
        a.rsplit_once('@').map_or(a, |(_, host)| host).to_owned()
    });
    authority.or_else(|| {
        request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    })
}

/// The middleware.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // RFC 9112 §3.2: more than one `Host` is a bad request. Which one a
    // check reads and which one a proxy behind it reads could differ.
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return ApiError::new(
            ErrorCode::UnparsableRequest,
            "the request has more than one Host header",
        )
        .into_response();
    }
    let host = request_host(&request);
    if let Some(h) = host.as_deref() {
        if !guard.host_allowed(h) {
            return ApiError::new(
                ErrorCode::UnknownHost,
                format!(
                    "this server does not answer to the host {h:?} (add it with --allowed-hosts)"
                ),
            )
            .into_response();
        }
    }
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if !safe {
        if let Some(why) = guard.cross_site(&request, host.as_deref()) {
            tracing::warn!(method = %request.method(), path = request.uri().path(), %why, "refused a cross-site request");
            return ApiError::new(ErrorCode::CrossSiteRequest, why).into_response();
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, headers: &[(&str, &str)]) -> Request {
        let mut b = axum::http::Request::builder()
            .method(method)
            .uri("/api/upload");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).expect("request")
    }

    #[test]
    fn hosts_are_loopback_ip_literals_or_configured_names() {
        let g = Guard::new(&["docs.example.com".into()], &[]);
        for ok in [
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "192.168.1.5",
            "docs.example.com",
            "Docs.Example.com:443",
            "app.localhost",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn two_host_headers_are_a_bad_request_whatever_their_order() {
        use tower::ServiceExt;
        let app = axum::Router::new()
            .route("/", axum::routing::get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(Guard::new(&[], &[])),
                check,
            ));
        for hosts in [["localhost", "evil.example"], ["evil.example", "localhost"]] {
            let request = axum::http::Request::builder()
                .uri("/")
                .header("host", hosts[0])
                .header("host", hosts[1])
                .body(axum::body::Body::empty())
                .expect("request");
            let answer = app.clone().oneshot(request).await.expect("answer");
            assert_eq!(
                answer.status(),
                axum::http::StatusCode::BAD_REQUEST,
                "{hosts:?}"
            );
        }
    }

    #[test]
    fn an_absolute_target_names_the_host_not_the_host_header() {
        let absolute = axum::http::Request::builder()
            .uri("http://evil.example/api/libraries")
            .header("host", "localhost")
            .body(axum::body::Body::empty())
            .expect("request");
        assert_eq!(request_host(&absolute).as_deref(), Some("evil.example"));
        let with_user = axum::http::Request::builder()
            .uri("http://localhost@evil.example:80/api/libraries")
            .body(axum::body::Body::empty())
            .expect("request");
        assert_eq!(request_host(&with_user).as_deref(), Some("evil.example:80"));
        let origin_form = request(Method::GET, &[("host", "localhost:8080")]);
        assert_eq!(
            request_host(&origin_form).as_deref(),
            Some("localhost:8080")
        );
    }

    #[test]
    fn browser_writes_must_be_same_origin_or_allowed() {
        let g = Guard::new(&[], &["https://ui.example.com".into()]);
        let host = Some("127.0.0.1:8080");
        let refused = |h: &[(&str, &str)]| g.cross_site(&request(Method::POST, h), host).is_some();
        assert!(refused(&[
            ("origin", "http://evil.example"),
            ("sec-fetch-site", "cross-site")
        ]));
        // Another port on localhost is same-site, but not this origin.
        assert!(refused(&[
            ("origin", "http://127.0.0.1:9999"),
            ("sec-fetch-site", "same-site")
        ]));
        assert!(refused(&[("sec-fetch-site", "cross-site")]));
        assert!(refused(&[("origin", "null")]));
        assert!(!refused(&[
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(!refused(&[
            ("origin", "https://ui.example.com"),
            ("sec-fetch-site", "cross-site")
        ]));
        // Not a browser: neither header.
        assert!(!refused(&[]));
    }
}
