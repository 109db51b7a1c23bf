//! The dashboard: server-side rendering of the Leptos app, its `#[server]`
//! functions, and the files of the browser bundle.
//!
//! Each server function is registered here as a read or a write ([`Rpc`]),
//! behind the guard of its kind, as the REST routes are in
//! [`super::api_routes`]: where it is registered is its access rule. Pages
//! render without the engine, so a server function reaches it only through
//! its guarded route.
//!
//! A server function's error is the engine's [`ErrorBody`]; server_fn
//! answers every error with 500, so [`rpc_status`] sets the status its kind
//! gives, as the REST API would: bad input is 400, an unknown document 404.

use std::path::Path;
use std::sync::Arc;

use app::api;
use app::backend::{Backend, SharedBackend};
use app::{shell, App, OUTPUT_NAME};
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::{on, MethodFilter};
use axum::Router;
use leptos::config::LeptosOptions;
use leptos::prelude::provide_context;
use leptos::server_fn::error::SERVER_FN_ERROR_HEADER;
use leptos::server_fn::{Protocol, ServerFn};
use leptos_axum::{
    file_and_error_handler, generate_route_list_with_exclusions, handle_server_fns_with_context,
    LeptosRoutes,
};

use index_core::access::Caller;
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo, Target};
use index_core::changes::{ChangesRequest, VersionChanges};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::search::{SearchParams, SearchResponse, Sticky};
use index_core::validate::{self, NameError};
use index_core::{ErrorBody, ErrorCode, ServerStatus};

use super::auth;
use super::AppState;
use crate::engine::Engine;

/// The engine as one request's server function sees it: as the request's
/// caller (see [`super::auth`]), so the dashboard shows and does what the
/// signed-in token may, as every other face does.
struct DashboardBackend {
    engine: Arc<Engine>,
    caller: Caller,
}

#[async_trait::async_trait]
impl Backend for DashboardBackend {
    async fn status(&self) -> ServerStatus {
        self.engine.status(&self.caller).await
    }

    async fn caller(&self) -> Caller {
        self.caller.clone()
    }

    async fn search(&self, params: SearchParams) -> Result<SearchResponse, ErrorBody> {
        self.engine
            .search(&self.caller, params)
            .await
            .map_err(|e| e.body())
    }

    /// A session id over its limits is refused before the store is asked.
    async fn sticky(&self, session_id: &str) -> Result<Option<Sticky>, ErrorBody> {
        let id = validate::session_id(session_id).map_err(bad_input)?;
        Ok(self.engine.sticky(&self.caller, id).await)
    }

    async fn clear_sticky(&self, session_id: &str) -> Result<(), ErrorBody> {
        let id = validate::session_id(session_id).map_err(bad_input)?;
        self.engine.clear_sticky(&self.caller, id).await;
        Ok(())
    }

    async fn libraries(&self) -> Result<Vec<LibraryInfo>, ErrorBody> {
        self.engine
            .libraries(&self.caller)
            .await
            .map_err(|e| e.body())
    }

    async fn documents(
        &self,
        library: &str,
        version: &str,
    ) -> Result<Vec<DocumentInfo>, ErrorBody> {
        validate::address(library, Some(version), None).map_err(bad_input)?;
        self.engine
            .documents(&self.caller, library, Some(version))
            .await
            .map_err(|e| e.body())
    }

    async fn document(
        &self,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, ErrorBody> {
        validate::address(library, Some(version), Some(file_path)).map_err(bad_input)?;
        self.engine
            .document(&self.caller, library, version, file_path)
            .await
            .map_err(|e| e.body())
    }

    /// The request is checked, every part within its limits, by the
    /// engine before any lookup, as for the REST route.
    async fn changes(
        &self,
        library: &str,
        request: &ChangesRequest,
    ) -> Result<VersionChanges, ErrorBody> {
        self.engine
            .compare_versions(&self.caller, library, request)
            .await
            .map_err(|e| e.body())
    }

    async fn delete(&self, target: Target<'_>) -> Result<Deleted, ErrorBody> {
        let (library, version, path) = match target {
            Target::Library(l) => (l, None, None),
            Target::Version(l, v) => (l, Some(v), None),
            Target::Document(l, v, p) => (l, Some(v), Some(p)),
        };
        validate::address(library, version, path).map_err(bad_input)?;
        self.engine
            .delete(&self.caller, target)
            .await
            .map_err(|e| e.body())
    }

    async fn feedback(&self, request: FeedbackRequest) -> Result<Votes, ErrorBody> {
        self.engine
            .feedback(&self.caller, &request)
            .await
            .map_err(|e| e.body())
    }
}

/// A name over its limits, as the REST API answers it (400).
fn bad_input(err: NameError) -> ErrorBody {
    ErrorBody::new(ErrorCode::InvalidName, err.to_string())
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
pub fn routes(state: &AppState) -> Router<AppState> {
    let rpc = Rpc::new(state.engine.clone())
        // Who the page's user is: answered to anyone, so a page can offer
        // sign-in where reads need a token.
        .open::<api::GetCaller>()
        .read::<api::GetStatus>()
        .read::<api::Search>()
        .read::<api::GetSticky>()
        // A session's own state, as `clear_sticky` in a search body is.
        .read::<api::ClearSticky>()
        .read::<api::ListLibraries>()
        .read::<api::ListDocuments>()
        .read::<api::GetDocument>()
        .read::<api::CompareVersions>()
        .write::<api::Delete>()
        .write::<api::SendFeedback>()
        .guarded();
    // Leptos would register every server function itself, unguarded:
    // leave them all to `Rpc`, so that one not added there is not served.
    let server_fns = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, _)| path.to_owned())
        .collect();
    let pages = generate_route_list_with_exclusions(App, Some(server_fns));
    let options = state.leptos.clone();
    Router::new()
        .leptos_routes(state, pages, move || shell(options.clone()))
        .merge(rpc)
        .fallback(file_and_error_handler::<AppState, _>(shell))
        .layer(axum::middleware::map_response(rpc_status))
}

/// The server functions' routes, each added as open, a read or a write:
/// the choice is its access rule, as the choice of router is for a REST
/// route. Each runs with a backend for its request's caller in its context.
struct Rpc {
    engine: Arc<Engine>,
    open: Router<AppState>,
    reads: Router<AppState>,
    writes: Router<AppState>,
}

impl Rpc {
    fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            open: Router::new(),
            reads: Router::new(),
            writes: Router::new(),
        }
    }

    /// Adds `F`, answered to anyone.
    fn open<F: ServerFn>(mut self) -> Self {
        self.open = route::<F>(&self.engine, self.open);
        self
    }

    /// Adds `F`, open unless reads need a token.
    fn read<F: ServerFn>(mut self) -> Self {
        self.reads = route::<F>(&self.engine, self.reads);
        self
    }

    /// Adds `F`, which needs a token whenever the server has one.
    fn write<F: ServerFn>(mut self) -> Self {
        self.writes = route::<F>(&self.engine, self.writes);
        self
    }

    /// The reads and the writes, each behind its guard.
    fn guarded(self) -> Router<AppState> {
        let reads = self
            .reads
            .route_layer(axum::middleware::from_fn(auth::require_dashboard_read));
        let writes = self
            .writes
            .route_layer(axum::middleware::from_fn(auth::require_dashboard_write));
        self.open.merge(reads).merge(writes)
    }
}

/// `router` with server function `F` at its path and method, run with a
/// backend for the request's caller in its context.
fn route<F: ServerFn>(engine: &Arc<Engine>, router: Router<AppState>) -> Router<AppState> {
    let method = F::Protocol::METHOD;
    let Ok(filter) = MethodFilter::try_from(method.clone()) else {
        // Not served at all, rather than served unguarded.
        tracing::error!(path = F::PATH, %method, "a server function's method cannot be routed");
        return router;
    };
    let engine = engine.clone();
    let handler = move |request: Request| {
        let backend: SharedBackend = Arc::new(DashboardBackend {
            engine: engine.clone(),
            caller: auth::caller(request.extensions()),
        });
        handle_server_fns_with_context(move || provide_context(backend.clone()), request)
    };
    router.route(F::PATH, on(filter, handler))
}

/// The largest server-function error body read back to find its kind; ours
/// are a message and a code, cut to length ([`app::error::AppError`]).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Gives a failed server function the status of its error's kind: Leptos'
/// server-function machinery answers every error 500 and offers no hook to
/// set the status from the error, so this is the one place that reads our
/// typed body back (never its words). It also makes sure the body is the
/// JSON error body whatever went wrong: a body that cannot be read back
/// (a decoding error quoting a huge argument), or is not ours, becomes an
/// internal error with a correlation id, never an empty 500.
async fn rpc_status(response: Response) -> Response {
    if !response.headers().contains_key(SERVER_FN_ERROR_HEADER) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let error = match axum::body::to_bytes(body, MAX_ERROR_BODY).await {
        Ok(bytes) => match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(error) => error,
            Err(err) => internal(&format!(
                "a server function's error is not an error body: {err}"
            )),
        },
        Err(err) => internal(&format!(
            "a server function's error body could not be read: {err}"
        )),
    };
    parts.status = super::error::status_of(error.kind);
    parts.headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let body = serde_json::to_vec(&error).unwrap_or_default();
    Response::from_parts(parts, Body::from(body))
}

/// An internal fault, logged under the correlation id its body carries.
fn internal(why: &str) -> ErrorBody {
    let id = uuid::Uuid::new_v4().to_string();
    tracing::error!(correlation_id = %id, why, "a server function failed");
    ErrorBody::internal(id)
}
