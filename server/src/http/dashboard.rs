//! The dashboard: server-side rendering of the Leptos app, its `#[server]`
//! functions, and the files of the browser bundle.

use std::path::Path;
use std::sync::Arc;

use app::backend::{Backend, DeleteTarget, SharedBackend};
use app::{shell, App, OUTPUT_NAME};
use axum::Router;
use leptos::config::LeptosOptions;
use leptos::prelude::provide_context;
use leptos_axum::{file_and_error_handler, generate_route_list, LeptosRoutes};

use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::ServerStatus;

use super::auth::{self, Access};
use super::AppState;
use crate::engine::Engine;
use crate::store::Target;

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

    fn authorize(&self, token: Option<&str>, write: bool) -> Result<(), String> {
        auth::allows(&self.access, token, write)
    }

    async fn search(&self, params: SearchParams) -> Result<SearchResponse, String> {
        self.engine.search(params).await.map_err(|e| e.to_string())
    }

    fn sticky(&self, session_id: &str) -> Option<Sticky> {
        self.engine.sticky(session_id)
    }

    fn clear_sticky(&self, session_id: &str) {
        self.engine.clear_sticky(session_id);
    }

    async fn libraries(&self) -> Result<Vec<LibraryInfo>, String> {
        self.engine.libraries().await.map_err(|e| e.to_string())
    }

    async fn documents(&self, library: &str, version: &str) -> Result<Vec<DocumentInfo>, String> {
        self.engine
            .documents(library, Some(version))
            .await
            .map_err(|e| e.to_string())
    }

    async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, String> {
        self.engine
            .document(library, version, file_path)
            .await
            .map_err(|e| e.to_string())
    }

    async fn delete(&self, target: DeleteTarget) -> Result<Deleted, String> {
        let target = match &target {
            DeleteTarget::Library(l) => Target::Library(l),
            DeleteTarget::Version(l, v) => Target::Version(l, v),
            DeleteTarget::Document(l, v, p) => Target::Document(l, v, p),
        };
        self.engine.delete(target).await.map_err(|e| e.to_string())
    }

    async fn feedback(&self, request: FeedbackRequest) -> Result<Votes, String> {
        self.engine
            .feedback(&request)
            .await
            .map_err(|e| e.to_string())
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
}
