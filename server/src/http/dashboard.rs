//! The dashboard: server-side rendering of the Leptos app, its `#[server]`
//! functions, and the files of the browser bundle.

use std::path::Path;

use app::backend::SharedBackend;
use app::{shell, App, OUTPUT_NAME};
use axum::Router;
use leptos::config::LeptosOptions;
use leptos::prelude::provide_context;
use leptos_axum::{file_and_error_handler, generate_route_list, LeptosRoutes};

use super::AppState;

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
pub fn routes(state: &AppState) -> Router<AppState> {
    let backend: SharedBackend = state.engine.clone();
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
