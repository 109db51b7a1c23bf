//! Who may do what: tokens with roles per library pattern, checked in one
//! place for every face.
//!
//! - [`secret`]: a token's secret, how it is made and the hash it is kept as.
//! - [`registry`]: the tokens of the store, cached for a read-consistency
//!   interval, and the one decision of who a secret names.
//! - [`attempts`]: failed attempts counted per client, so guessing is slow.
//!
//! The HTTP face turns a request's credentials into an
//! [`index_core::access::Caller`] once (`http::auth`); the engine takes
//! that caller on every call and filters what it reads by it before
//! ranking, and refuses writes outside it (`engine::access`).

pub mod attempts;
pub mod registry;
pub mod secret;

pub use attempts::FailedAttempts;
pub use registry::{AccessError, Registry};

use index_core::access::{Caller, Permissions};

/// The caller of a process the user started on their own store (the CLI,
/// `docshelf mcp` over stdio, a server without tokens): it may do anything,
/// as anyone who can open the store's files can.
pub fn local() -> Caller {
    Caller {
        name: "local".to_owned(),
        id: "local".to_owned(),
        permissions: Permissions::everything(),
        signed_in: false,
        tokens_required: false,
    }
}
