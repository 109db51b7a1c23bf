//! What kind of failure an error is, and the body every face answers it with.
//!
//! One table, in the manner of meilisearch's error codes: the engine decides
//! an error's [`ErrorKind`] once, and the REST API (status code), the
//! dashboard's server functions (status code and a typed error), MCP (tool
//! error) and the CLI (exit message) all read it from there, so no face
//! keeps a `match` of its own over the engine's errors to fall out of step.

use serde::{Deserialize, Serialize};

/// What went wrong, as far as a client can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is wrong; sending it again unchanged fails again (400).
    BadInput,
    /// No token, or the wrong one (401).
    Unauthorized,
    /// Refused whoever asks: another site's page, another host (403).
    Forbidden,
    /// A library, version, document, chunk or job that does not exist (404).
    NotFound,
    /// The path exists, but not for this method (405).
    MethodNotAllowed,
    /// The client does not accept what the endpoint answers (406): MCP over
    /// HTTP needs `Accept: application/json, text/event-stream`.
    NotAcceptable,
    /// The request collides with work in progress: another job is writing
    /// the same library and version (409).
    Conflict,
    /// The body is larger than the server accepts (413).
    TooLarge,
    /// The request target (path and query) is longer than the server reads (414).
    UriTooLong,
    /// The body is not in a format the endpoint reads (415).
    UnsupportedMedia,
    /// Too busy, or out of time: the same request may succeed in a moment
    /// (503 with `Retry-After`).
    Busy,
    /// A part the request needs is missing (the model, the store) (503).
    Unavailable,
    /// A fault of the server's: the body carries only a correlation id,
    /// and the details are in the log under it (500).
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order of the table above.
    pub const ALL: [Self; 13] = [
        Self::BadInput,
        Self::Unauthorized,
        Self::Forbidden,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::NotAcceptable,
        Self::Conflict,
        Self::TooLarge,
        Self::UriTooLong,
        Self::UnsupportedMedia,
        Self::Busy,
        Self::Unavailable,
        Self::Internal,
    ];

    /// The HTTP status that answers it.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::BadInput => 400,
            Self::Unauthorized => 401,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::NotAcceptable => 406,
            Self::Conflict => 409,
            Self::TooLarge => 413,
            Self::UriTooLong => 414,
            Self::UnsupportedMedia => 415,
            Self::Busy | Self::Unavailable => 503,
            Self::Internal => 500,
        }
    }

    /// The kind an HTTP status stands for, where only the status is known
    /// (a body that is not ours): the kind that answers with it (503 reads
    /// as `busy`, the one a retry helps), else any other 4xx as bad input
    /// and anything else as internal. Every face that reads a status back
    /// reads it here.
    pub fn of_status(status: u16) -> Self {
        Self::ALL
            .into_iter()
            .find(|kind| kind.http_status() == status)
            .unwrap_or(if (400..500).contains(&status) {
                Self::BadInput
            } else {
                Self::Internal
            })
    }

    /// Seconds after which a client may try again, for kinds that pass.
    pub const fn retry_after_secs(self) -> Option<u32> {
        match self {
            Self::Busy => Some(1),
            _ => None,
        }
    }

    /// The code in error bodies (`"bad_input"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            Self::BadInput => "bad_input",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotAcceptable => "not_acceptable",
            Self::Conflict => "conflict",
            Self::TooLarge => "too_large",
            Self::UriTooLong => "uri_too_long",
            Self::UnsupportedMedia => "unsupported_media",
            Self::Busy => "busy",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// An error as every face answers it: `{"code": "not_found", "error": "…"}`,
/// plus a `correlation_id` for internal faults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[error("{error}")]
pub struct ErrorBody {
    pub code: ErrorKind,
    /// What went wrong, in words meant for the person or agent who asked.
    pub error: String,
    /// For internal faults: the id under which the details were logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
}

impl ErrorBody {
    pub fn new(code: ErrorKind, error: impl Into<String>) -> Self {
        Self {
            code,
            error: error.into(),
            correlation_id: None,
        }
    }

    /// An internal fault, logged elsewhere under `correlation_id`: the body
    /// says nothing of the details, which may name paths or internals.
    pub fn internal(correlation_id: impl Into<String>) -> Self {
        let id = correlation_id.into();
        Self {
            code: ErrorKind::Internal,
            error: format!("internal error; quote correlation id {id} when reporting it"),
            correlation_id: Some(id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_reads_back_as_its_kind() {
        for kind in ErrorKind::ALL {
            let back = ErrorKind::of_status(kind.http_status());
            assert_eq!(back.http_status(), kind.http_status(), "{kind}");
        }
        assert_eq!(ErrorKind::of_status(418), ErrorKind::BadInput);
        assert_eq!(ErrorKind::of_status(502), ErrorKind::Internal);
        assert_eq!(ErrorKind::of_status(503), ErrorKind::Busy);
    }

    #[test]
    fn codes_serialise_as_the_table_says() {
        for kind in ErrorKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.code().into()));
            let back: ErrorKind = serde_json::from_value(json).unwrap();
            assert_eq!(back, kind);
        }
    }

    #[test]
    fn an_internal_body_carries_only_its_id() {
        let body = ErrorBody::internal("abc");
        assert_eq!(body.code, ErrorKind::Internal);
        assert!(body.error.contains("abc"));
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["correlation_id"], "abc");
        let plain = serde_json::to_value(ErrorBody::new(ErrorKind::NotFound, "no")).unwrap();
        assert!(plain.get("correlation_id").is_none());
    }
}
