//! The OpenAPI document, generated from the handlers' annotations and the
//! request/response types, served at `GET /api/openapi.json`.
//!
//! Every API route is registered through `utoipa_axum`'s router (see
//! [`super::api_routes`]), which adds a route to the router and to this
//! document in one step: a route cannot exist without being documented.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, Ref, ResponseBuilder};
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
        (name = "sources", description = "Documentation from sites and package registries, kept fresh"),
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

/// Answers every operation can get from the layers in front of the
/// handlers, whatever the handler is: a missing, wrong or misplaced token
/// (reads too, under `--auth-reads`), too many wrong ones, another host or
/// site refused by the guard, a target over 16 KiB. Declared here once rather
/// than in each annotation, so that a new route documents them too and the
/// document lists every status a client can see (Schemathesis checks it).
/// Applied by [`super::api_routes`] once the routes are in the document.
pub struct CommonErrors;

const COMMON_ERRORS: [(&str, &str); 6] = [
    (
        "400",
        "A token sent in the query string (send it in the Authorization header)",
    ),
    (
        "401",
        "A token is required (writes when a token is set; reads too under --auth-reads), or the one given is wrong, expired or revoked",
    ),
    (
        "403",
        "Another site's page, a host this server does not answer to, or what the token does not grant",
    ),
    (
        "429",
        "Too many wrong tokens from this client lately (Retry-After)",
    ),
    ("405", "The path exists, but not for this method"),
    ("414", "The request target is longer than 16 KiB"),
];

impl Modify for CommonErrors {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.post,
                &mut item.delete,
                &mut item.put,
            ];
            for operation in operations.into_iter().flatten() {
                for (status, why) in COMMON_ERRORS {
                    operation
                        .responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| {
                            ResponseBuilder::new()
                                .description(why)
                                .content(
                                    "application/json",
                                    Content::new(Some(Ref::from_schema_name("ErrorBody"))),
                                )
                                .build()
                                .into()
                        });
                }
            }
        }
    }
}
