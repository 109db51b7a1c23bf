//! `GET /metrics`, and the middleware that counts and times every request.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::auth::Who;
use super::AppState;
use crate::metrics::RouteLabels;

/// Prometheus text exposition of the metrics the caller may see
/// ([`crate::engine::Engine::metrics_text`]: the store's counts only for a
/// caller who reads every library).
pub async fn metrics(State(state): State<AppState>, Who(caller): Who) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.engine.metrics_text(&caller),
    )
}

/// Records the request's route pattern, status and latency.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    // A label value per method a client makes up would grow the metrics
    // without bound (a few thousand invented methods once grew them to
    // megabytes; docs/benchmarks.md, "Hostile inputs, as reported").
    let method = label_of(request.method()).to_owned();
    // Unmatched paths (static files, 404s) share one label value.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "other".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    state.engine.metrics().http_request(
        RouteLabels {
            method,
            route,
            status: response.status().as_u16(),
        },
        started.elapsed(),
    );
    response
}

/// The method's label: the standard ones by name, any other as `other`.
fn label_of(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invented_methods_share_one_label() {
        assert_eq!(label_of(&Method::POST), "POST");
        let invented = Method::from_bytes(b"FROBNICATE").expect("a valid token");
        assert_eq!(label_of(&invented), "other");
    }
}
