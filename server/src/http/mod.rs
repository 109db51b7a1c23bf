//! The HTTP face: one axum router for the REST API, the dashboard (server
//! rendering + `#[server]` functions) and the static files of the browser
//! bundle.

mod dashboard;
mod error;
mod jobs;
mod status;

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::{get, post};
use axum::Router;
use leptos::config::LeptosOptions;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

use crate::engine::Engine;

/// State shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    pub leptos: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

/// What the router needs beyond the engine.
#[derive(Debug, Clone)]
pub struct RouterConfig {
    /// The built dashboard (`pkg/` and public assets).
    pub site_dir: PathBuf,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
}

/// Builds the whole application router.
pub fn router(engine: Arc<Engine>, config: &RouterConfig) -> Router {
    let state = AppState {
        engine,
        leptos: dashboard::leptos_options(&config.site_dir),
    };
    let api = Router::new()
        .route("/status", get(status::status))
        .route("/upload", post(jobs::upload))
        .route("/jobs/{id}", get(jobs::job))
        .route("/jobs/{id}/events", get(jobs::events));

    Router::new()
        .route("/healthz", get(status::healthz))
        .nest("/api", api)
        .merge(dashboard::routes(&state))
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(config.max_body_bytes))
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
