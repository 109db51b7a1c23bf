//! The MCP server: docshelf's search for coding agents, over stdio
//! (`docshelf mcp`) and streamable HTTP (`/mcp` on a running server).
//!
//! Seven tools, thin over the [`Engine`] so that agents, the REST API and the
//! dashboard get the same answers and the same error messages:
//! `search_docs`, `get_document`, `list_libraries`, `resolve_library`,
//! `compare_versions` (what changed between two versions), `add_docs` (a
//! site or a package fetched into a library, a write), and
//! `list_credentials` (the operator's credentials, for admins). Over
//! HTTP each call acts as its request's token, as the REST API does: it
//! sees only the libraries the token may read, and writes only where it
//! may write.
//! `search_docs` takes the REST API's [`SearchParams`] as they are, its
//! schema derived from that type, so a parameter added to search reaches
//! agents without a copy kept here.
//!
//! Sticky library: each MCP connection (a stdio process, or an HTTP session
//! under protocols that have sessions) carries one docshelf search session.
//! Stateless HTTP clients keep the stickiness by passing back the
//! `session_id` that every search returns. Both kinds of session are their
//! caller's: another token that names one is answered as for an id never
//! used ([`sessions`], `engine::sessions`).
//!
//! - [`tools`]: the tools and the server of one connection; [`arguments`]:
//!   their arguments, decoded by the tool so a failure carries our body;
//!   [`results`]: how their answers and errors are written.
//! - [`resources`]: stored documents as resources, whole or by section, and
//!   comparisons of two versions.
//! - [`rpc`]: JSON-RPC's own errors, decided by what a message is.
//! - [`stdio`]: the stdio transport's line filter in front of rmcp.
//! - [`http`]: the same screening in front of rmcp's HTTP transport.
//! - [`sessions`]: an HTTP session answers only the caller that opened it.

mod arguments;
pub mod http;
pub mod resources;
mod results;
pub mod rpc;
pub mod sessions;
pub mod stdio;
mod tools;

pub use tools::{DocshelfMcp, GetDocument, ResolveLibrary};
