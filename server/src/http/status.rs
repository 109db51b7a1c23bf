//! Liveness and status endpoints.

use axum::extract::State;
use axum::Json;
use index_core::ServerStatus;

use super::AppState;

/// `GET /healthz`: answers as long as the process serves requests.
pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /api/status`: version, store location, embedding backend, counts.
pub async fn status(State(state): State<AppState>) -> Json<ServerStatus> {
    Json(state.engine.status().await)
}
