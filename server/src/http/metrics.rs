//! `GET /metrics`, and the middleware that counts and times every request.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::metrics::RouteLabels;

/// Prometheus text exposition of every metric.
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.engine.metrics().render(),
    )
}

/// Records the request's route pattern, status and latency.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
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
