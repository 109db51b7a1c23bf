//! The OpenAPI document, generated from the handlers' annotations and the
//! request/response types, served at `GET /api/openapi.json`.
//!
//! Every API route is registered through `utoipa_axum`'s router (see
//! [`super::api_routes`]), which adds a route to the router and to this
//! document in one step: a route cannot exist without being documented.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// Every error body: `{"code", "error", "correlation_id"?}` (see
/// [`index_core::error`]).
pub use index_core::ErrorBody;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "docshelf",
        description = "Self-hosted documentation search: upload documents into libraries and versions, search them (hybrid dense + keyword), read them whole."
    ),
    modifiers(&BearerAuth),
    tags(
        (name = "search", description = "Hybrid search and feedback"),
        (name = "libraries", description = "Libraries, versions and their documents"),
        (name = "documents", description = "Whole documents"),
        (name = "uploads", description = "Uploads and their jobs"),
        (name = "status", description = "Server status"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}
