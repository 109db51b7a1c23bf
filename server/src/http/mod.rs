//! The HTTP face: one axum router for the REST API, MCP, the dashboard
//! (server rendering + `#[server]` functions) and the static files of the
//! browser bundle.
//!
//! - [`search`], [`ask`], [`catalog`], [`feedback`], [`jobs`], [`sources`], [`status`],
//!   [`transfer`]: the REST API.
//! - [`openapi`]: the API's OpenAPI document.
//! - [`auth`]: who a request is (its token or session cookie, read by [`credentials`]), and the
//!   guards on the read and write routes; [`tokens`]: tokens, sign-in and the audit log.
//! - [`guard`]: cross-site writes and foreign hosts refused; [`metrics`]: Prometheus metrics.
//! - [`error`]: JSON errors with the right status.
//! - [`serve`]: the accept loop, with header and idle timeouts;
//!   [`parse_errors`]: JSON bodies for the errors hyper answers itself.

mod ask;
pub mod auth;
mod catalog;
mod credentials;
mod dashboard;
mod error;
mod events;
mod feedback;
pub mod guard;
mod jobs;
mod metrics;
pub mod openapi;
mod parse_errors;
mod search;
pub mod serve;
mod sources;
mod status;
mod tokens;
mod transfer;

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRef};
use axum::http::{header, HeaderValue, Method};
use axum::routing::{any, get};
use axum::{Json, Router};
use leptos::config::LeptosOptions;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use auth::Access;

use crate::engine::Engine;
use crate::mcp::DocshelfMcp;

/// State shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    /// Who requests are (see [`auth`]).
    pub auth: Arc<auth::Auth>,
    pub leptos: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

/// What the router needs beyond the engine.
#[derive(Debug, Clone, Default)]
pub struct RouterConfig {
    /// The built dashboard (`pkg/` and public assets).
    pub site_dir: PathBuf,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Tokens and what they guard.
    pub access: Access,
    /// Browser origins allowed to call the API from other sites (CORS);
    /// empty: none.
    pub cors_origins: Vec<String>,
    /// Host names answered besides loopback names and IP addresses.
    pub allowed_hosts: Vec<String>,
}

/// The REST API under `/api`, and its OpenAPI document. Registering routes
/// here is what puts them in the document.
///
/// Reads and writes are two routers, each behind its guard
/// ([`auth::require_read`], [`auth::require_write`]): a new route is a
/// write because it is added to `writes`. Token management is a write
/// too; the engine admits only admins to it. Sign-in and sign-out are
/// open: they are how a token is given.
pub fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let reads = OpenApiRouter::new()
        .routes(routes!(status::status))
        .routes(routes!(search::search))
        .routes(routes!(search::search_stream))
        .routes(routes!(ask::ask))
        .routes(routes!(catalog::libraries))
        .routes(routes!(catalog::resolve))
        .routes(routes!(catalog::documents))
        .routes(routes!(catalog::changes))
        .routes(routes!(transfer::export))
        .routes(routes!(catalog::document))
        .routes(routes!(jobs::job))
        .routes(routes!(sources::list))
        .routes(routes!(sources::one))
        .routes(routes!(sources::credentials))
        .routes(routes!(tokens::list))
        .routes(routes!(tokens::audit))
        .route_layer(axum::middleware::from_fn(auth::require_read));
    let session =
        OpenApiRouter::new().routes(routes!(tokens::session, tokens::sign_in, tokens::sign_out));
    // A read that also admits the job's own watch token (see `jobs`).
    let watch = OpenApiRouter::new().routes(routes!(jobs::events));
    let writes = OpenApiRouter::new()
        .routes(routes!(feedback::feedback))
        .routes(routes!(catalog::delete_document))
        .routes(routes!(catalog::delete_library))
        .routes(routes!(catalog::delete_version))
        .routes(routes!(jobs::upload))
        .routes(routes!(sources::add))
        .routes(routes!(sources::refresh))
        .routes(routes!(sources::delete))
        .routes(routes!(tokens::create))
        .routes(routes!(tokens::revoke))
        .routes(routes!(transfer::import))
        .route_layer(axum::middleware::from_fn(auth::require_write));
    let (router, mut doc) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .nest("/api", reads.merge(watch).merge(writes).merge(session))
        .split_for_parts();
    utoipa::Modify::modify(&openapi::CommonErrors, &mut doc);
    (router, doc)
}

/// Builds the whole application router.
pub fn router(engine: Arc<Engine>, config: &RouterConfig) -> Router {
    let state = AppState {
        engine: engine.clone(),
        auth: Arc::new(auth::Auth::new(&config.access)),
        leptos: dashboard::leptos_options(&config.site_dir),
    };
    let (api, doc) = api_routes();
    let doc = Arc::new(doc);

    // The Host header is checked for every route by `guard`, with the
    // configured names; rmcp's own loopback-only check would refuse them.
    let mcp_config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    // Each tool call runs as the caller `auth::authenticate` found for
    // its HTTP request (rmcp hands the request's parts to the tool).
    let mcp = StreamableHttpService::new(
        move || Ok(DocshelfMcp::over_http(engine.clone())),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );

    let mut app = Router::new()
        .route("/metrics", get(metrics::metrics))
        .route(
            "/api/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        // Messages rmcp cannot read are answered before it sees them; what
        // rmcp refuses itself it answers as text, made JSON-RPC's shape.
        // A session answers only the caller that opened it.
        .nest_service(
            "/mcp",
            tower::ServiceBuilder::new()
                .layer(axum::middleware::from_fn(error::mcp_errors))
                .layer(axum::middleware::from_fn(crate::mcp::http::screen))
                .layer(axum::middleware::from_fn_with_state(
                    Arc::new(crate::mcp::sessions::Owners::default()),
                    crate::mcp::sessions::bind,
                ))
                .service(mcp),
        )
        // Reads, like the API's: open unless `auth_reads`.
        .route_layer(axum::middleware::from_fn(auth::require_read))
        .route("/healthz", get(status::healthz))
        .merge(api)
        // Unknown API and server-function paths get the machine faces' JSON
        // 404, not the dashboard's page.
        .route("/api/{*rest}", any(error::no_such_route))
        .route("/rpc/{*rest}", any(error::no_such_route))
        .merge(dashboard::routes(&state))
        // Every route answers a method it does not take with our 405.
        .method_not_allowed_fallback(error::wrong_method)
        // Who the request is, for every route: inside the host and
        // cross-site checks, so a foreign page's request is refused before
        // any token it carries is looked at.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard::Guard::new(
                &config.allowed_hosts,
                &config.cors_origins,
            )),
            guard::check,
        ))
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(config.max_body_bytes))
        // Outside the limit layer: a body declared too long is refused here,
        // as our error, so the limit layer's own bare 413 is never sent.
        .layer(axum::middleware::from_fn_with_state(
            config.max_body_bytes,
            error::refuse_oversized,
        ));
    if !config.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = config
            .cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::POST, Method::DELETE])
                .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]),
        );
    }
    app.layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
