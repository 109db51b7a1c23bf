//! Liveness and status endpoints.

use axum::extract::State;
use axum::Json;
use index_core::ServerStatus;

use super::auth::Who;
use super::AppState;

/// `GET /healthz`: answers as long as the process serves requests.
pub async fn healthz() -> &'static str {
    "ok"
}

/// Version, store location, embedding backend and counts.
#[utoipa::path(get, path = "/status", tag = "status", responses((status = 200, body = ServerStatus)))]
pub async fn status(State(state): State<AppState>, Who(caller): Who) -> Json<ServerStatus> {
    Json(state.engine.status(&caller).await)
}
