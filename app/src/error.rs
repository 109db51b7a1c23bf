//! The error every server function returns: the engine's [`ErrorBody`],
//! typed from end to end.
//!
//! Leptos' own `ServerFnError` is a string: the dashboard would have to
//! split its prefix off to show the engine's words, and every failure, bad
//! input included, would reach the browser as a 500. This body keeps its
//! [`ErrorCode`] and kind; the server sets the status from the kind (see the
//! server's `http::dashboard`), and the page shows `error` as it is.

use index_core::{ErrorBody, ErrorCode, ErrorKind};
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// A failed server function call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AppError(pub ErrorBody);

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self(ErrorBody::new(code, message))
    }

    pub fn code(&self) -> ErrorCode {
        self.0.code
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
}

impl From<ErrorBody> for AppError {
    fn from(body: ErrorBody) -> Self {
        Self(body)
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.error)
    }
}

impl std::error::Error for AppError {}

/// The most of server_fn's own message an error carries: its decoding
/// errors quote the argument, which may be megabytes; the body must stay
/// small enough to read back and show.
const MAX_MESSAGE_CHARS: usize = 300;

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    /// Failures of the server-function machinery itself: arguments that do
    /// not decode are the caller's fault; a server that cannot be reached
    /// is unavailable; the rest is internal.
    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        let code = match &value {
            ServerFnErrorErr::Args(_) | ServerFnErrorErr::MissingArg(_) => {
                ErrorCode::InvalidArguments
            }
            ServerFnErrorErr::Request(_) => ErrorCode::Unavailable,
            _ => ErrorCode::Internal,
        };
        Self::new(
            code,
            index_core::validate::cut(&value.to_string(), MAX_MESSAGE_CHARS),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_arguments_are_bad_input() {
        let err = AppError::from_server_fn_error(ServerFnErrorErr::Args("missing field".into()));
        assert_eq!(err.kind(), ErrorKind::BadInput);
        let unreachable = AppError::from_server_fn_error(ServerFnErrorErr::Request("down".into()));
        assert_eq!(unreachable.kind(), ErrorKind::Unavailable);
    }

    #[test]
    fn a_huge_argument_is_not_echoed_whole() {
        let huge = "x".repeat(1 << 20);
        let err = AppError::from_server_fn_error(ServerFnErrorErr::Args(huge));
        assert_eq!(err.kind(), ErrorKind::BadInput);
        assert!(err.0.error.len() < 1000, "{}", err.0.error.len());
        assert!(err.0.error.ends_with('…'));
    }

    #[test]
    fn the_wire_form_is_the_error_body() {
        let err = AppError::new(ErrorCode::UnknownDocument, "no document \"a.md\"");
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "code": "unknown_document",
                "kind": "not_found",
                "error": "no document \"a.md\"",
                "link": "docs/errors.md#unknown_document",
            })
        );
        assert_eq!(err.to_string(), "no document \"a.md\"");
    }
}
