//! The dashboard: server-side rendering of the Leptos app, its `#[server]`
//! functions, and the files of the browser bundle.
//!
//! A server function's error is the engine's [`ErrorBody`]; server_fn
//! answers every error with 500, so [`rpc_status`] sets the status its kind
//! gives, as the REST API would: bad input is 400, an unknown document 404.

use std::path::Path;
use std::sync::Arc;

use app::backend::{Backend, SharedBackend};
use app::{shell, App, OUTPUT_NAME};
use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Router;
use leptos::config::LeptosOptions;
use leptos::prelude::provide_context;
use leptos::server_fn::error::SERVER_FN_ERROR_HEADER;
use leptos_axum::{file_and_error_handler, generate_route_list, LeptosRoutes};

use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo, Target};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::{ErrorBody, ErrorKind, ServerStatus};

use super::auth::{self, Access};
use super::AppState;
use crate::engine::Engine;

/// The engine as the dashboard's server functions see it, with the
/// server's access rules applied.
struct DashboardBackend {
    engine: Arc<Engine>,
    access: Access,
}

#[async_trait::async_trait]
impl Backend for DashboardBackend {
    async fn status(&self) -> ServerStatus {
        self.engine.status().await
    }

    fn authorize(&self, token: Option<&str>, write: bool) -> Result<(), ErrorBody> {
        auth::allows(&self.access, token, write)
            .map_err(|why| ErrorBody::new(ErrorKind::Unauthorized, why))
    }

    async fn search(&self, params: SearchParams) -> Result<SearchResponse, ErrorBody> {
        self.engine.search(params).await.map_err(|e| e.body())
    }

    async fn sticky(&self, session_id: &str) -> Option<Sticky> {
        self.engine.sticky(session_id).await
    }

    async fn clear_sticky(&self, session_id: &str) {
        self.engine.clear_sticky(session_id).await;
    }

    async fn libraries(&self) -> Result<Vec<LibraryInfo>, ErrorBody> {
        self.engine.libraries().await.map_err(|e| e.body())
    }

    async fn documents(
        &self,
        library: &str,
        version: &str,
    ) -> Result<Vec<DocumentInfo>, ErrorBody> {
        self.engine
            .documents(library, Some(version))
            .await
            .map_err(|e| e.body())
    }

    async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, ErrorBody> {
        self.engine
            .document(library, version, file_path)
            .await
            .map_err(|e| e.body())
    }

    async fn delete(&self, target: Target<'_>) -> Result<Deleted, ErrorBody> {
        self.engine.delete(target).await.map_err(|e| e.body())
    }

    async fn feedback(&self, request: FeedbackRequest) -> Result<Votes, ErrorBody> {
        self.engine.feedback(&request).await.map_err(|e| e.body())
    }
}

/// Leptos settings for a site built into `site_dir` (see scripts/build-wasm.sh).
pub fn leptos_options(site_dir: &Path) -> LeptosOptions {
    let bundle = site_dir.join("pkg").join(format!("{OUTPUT_NAME}.js"));
    if !bundle.is_file() {
        tracing::warn!(
            path = %bundle.display(),
            "dashboard bundle not found: pages render but stay static (build it with `make build`)"
        );
    }
    LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(site_dir.to_string_lossy().into_owned())
        .site_pkg_dir("pkg")
        .build()
}

/// Page routes, server functions, and static files as the fallback.
pub fn routes(state: &AppState, access: &Access) -> Router<AppState> {
    let backend: SharedBackend = Arc::new(DashboardBackend {
        engine: state.engine.clone(),
        access: access.clone(),
    });
    let options = state.leptos.clone();
    Router::new()
        .leptos_routes_with_context(
            state,
            generate_route_list(App),
            move || provide_context(backend.clone()),
            move || shell(options.clone()),
        )
        .fallback(file_and_error_handler::<AppState, _>(shell))
        .layer(axum::middleware::map_response(rpc_status))
}

/// The largest server-function error body read back to find its kind; ours
/// are a message and a code.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Gives a failed server function the status of its error's kind.
async fn rpc_status(response: Response) -> Response {
    if !response.headers().contains_key(SERVER_FN_ERROR_HEADER) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        tracing::warn!("a server function's error body could not be read");
        parts.status = StatusCode::INTERNAL_SERVER_ERROR;
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(error) = serde_json::from_slice::<ErrorBody>(&bytes) {
        parts.status = super::error::status_of(error.code);
    }
    Response::from_parts(parts, Body::from(bytes))
}
