//! Every error docshelf answers, in one table, and the body every face
//! answers it with.
//!
//! In the manner of meilisearch's error codes: each [`ErrorCode`] is one
//! row, declared once in [`error_codes!`] below, with its stable machine
//! name (`unknown_library`), its [`ErrorKind`] (which gives the HTTP status
//! and the JSON-RPC code) and what it means, which is also its entry in
//! `docs/errors.md` (`link`). The engine decides an error's code once; the
//! REST API, the dashboard's server functions and browser client, MCP and
//! the CLI all read the status, the retry hint and the exit code from the
//! row, so no face keeps a `match` of its own to fall out of step, and a
//! client tells an unknown library from an unknown job by the code alone.

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
    /// Too many failed attempts from this client: wait, then try again
    /// (429 with `Retry-After`).
    TooManyRequests,
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
    pub const ALL: [Self; 14] = [
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
        Self::TooManyRequests,
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
            Self::TooManyRequests => 429,
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
            Self::TooManyRequests => Some(60),
            _ => None,
        }
    }

    /// The kind's name, as error bodies carry it in `kind` (`"bad_input"`, …).
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
            Self::TooManyRequests => "too_many_requests",
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

/// Where the codes are documented, one anchor per code (`docs/errors.md#unknown_library`).
pub const ERRORS_DOC: &str = "docs/errors.md";

/// JSON-RPC's code for a message that is not JSON.
pub const RPC_PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
pub const RPC_INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a server-side failure.
pub const RPC_INTERNAL_ERROR: i64 = -32603;

/// Declares [`ErrorCode`]: one row per code, `Variant = "name": Kind, "meaning"`.
/// The name is what clients match on and never changes once released; the
/// meaning is the code's documentation, in the API schema and in
/// `docs/errors.md` (a test keeps that page listing every row).
macro_rules! error_codes {
    ($($variant:ident = $name:literal: $kind:ident, $meaning:literal;)*) => {
        /// What exactly went wrong: one stable, machine-readable code per
        /// error a client can meet, each of one [`ErrorKind`].
        ///
        /// Serialised as its variant's name in snake case, which is its
        /// name in the table (a test holds the two equal): schema derives
        /// do not read a `rename` a macro writes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $(
                #[doc = $meaning]
                $variant,
            )*
        }

        impl ErrorCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The code's stable name, as error bodies carry it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The kind of failure, which decides the HTTP status.
            pub const fn kind(self) -> ErrorKind {
                match self {
                    $(Self::$variant => ErrorKind::$kind,)*
                }
            }

            /// What the code means and what to do about it.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(Self::$variant => $meaning,)*
                }
            }
        }
    };
}

error_codes! {
    // 400: the request is wrong; sent again unchanged, it fails again.
    BadRequest = "bad_request": BadInput,
        "A request refused with 400 by something that gave no code of its own (a proxy in front of docshelf).";
    InvalidName = "invalid_name": BadInput,
        "A library, version or file name breaks docshelf's naming rules (length, characters, `..`).";
    InvalidSearch = "invalid_search": BadInput,
        "A search's parameters are out of range or contradict each other; the message names the parameter.";
    InvalidRead = "invalid_read": BadInput,
        "A read's parameters are out of range, or its resource address is not of its shape (`max_tokens` of `get_document`, of a document resource or of a comparison's, `docshelf-changes://LIBRARY/FROM/TO`); the message names the parameter or the shape.";
    InvalidQuestion = "invalid_question": BadInput,
        "An Ask question or one of its options is out of range.";
    InvalidSource = "invalid_source": BadInput,
        "A source is not one docshelf can read: not an http(s) URL or package name, a bad pattern, a missing version, or an address docshelf will not fetch (loopback, private networks).";
    SourceUnreachable = "source_unreachable": BadInput,
        "The site or repository a source names could not be fetched; the message says what failed.";
    SourceCredential = "source_credential": BadInput,
        "A private source asks for a credential and none was named, the one named was refused by the source, or it is not a credential this source may use: credentials are declared by name by the server's operator (`--credential`), each bound to its hosts and libraries, and a request names one; a reference to the server's environment or files (`env:…`, `file:…`) is never taken from a request.";
    InvalidBody = "invalid_body": BadInput,
        "The request body is not JSON, or not of the shape the route takes; the message names the field.";
    InvalidQueryString = "invalid_query_string": BadInput,
        "The query string does not read as the route's parameters.";
    InvalidUpload = "invalid_upload": BadInput,
        "An upload's multipart form lacks its `library` or `version` field or a file name, or has a part docshelf does not read.";
    NoFiles = "no_files": BadInput,
        "An upload carried no file.";
    InvalidArguments = "invalid_arguments": BadInput,
        "A dashboard server function's or an MCP tool's arguments do not decode (`max_tokens: \"100\"` where a number is expected), or an MCP listing's cursor is not one the server gave.";
    UnparsableRequest = "unparsable_request": BadInput,
        "The request's HTTP head could not be parsed, or it has more than one `Host` header.";
    McpParseError = "mcp_parse_error": BadInput,
        "An MCP message is not JSON (JSON-RPC -32700).";
    InvalidGrant = "invalid_grant": BadInput,
        "A token request's name, grants (ROLE:PATTERN) or expiry is not valid; the message says which.";
    TokenInQuery = "token_in_query": BadInput,
        "A token was sent in the query string, where logs and browser history keep it: send it in the `Authorization` header.";
    InvalidMcpMessage = "invalid_mcp_message": BadInput,
        "An MCP message is JSON but not a JSON-RPC message MCP knows (JSON-RPC -32600).";
    InvalidExport = "invalid_export": BadInput,
        "An import's file is not a docshelf export of a version, is of another format, is cut short or altered (its checksum fails), or its rows do not match its header; the message says which. Nothing was written.";
    // 401
    MissingToken = "missing_token": Unauthorized,
        "The request needs a token: send `Authorization: Bearer <token>`.";
    InvalidToken = "invalid_token": Unauthorized,
        "The token is not one this server knows.";
    TokenExpired = "token_expired": Unauthorized,
        "The token's expiry has passed; an admin makes a new one (`docshelf token create`).";
    TokenRevoked = "token_revoked": Unauthorized,
        "The token was revoked; an admin makes a new one (`docshelf token create`).";
    // 403
    Forbidden = "forbidden": Forbidden,
        "A request refused with 403 by something that gave no code of its own.";
    UnknownHost = "unknown_host": Forbidden,
        "The server does not answer to the request's `Host` (see `--allowed-hosts`).";
    NotPermitted = "not_permitted": Forbidden,
        "The token does not grant this: a write outside its libraries, or token management without the admin role.";
    CrossSiteRequest = "cross_site_request": Forbidden,
        "A write sent by another site's page (by `Origin`, `Referer` or `Sec-Fetch-Site`) is refused.";
    // 404
    NotFound = "not_found": NotFound,
        "Something answered 404 without a code of its own.";
    UnknownRoute = "unknown_route": NotFound,
        "No route at this path; `/api/openapi.json` lists the REST routes.";
    UnknownLibrary = "unknown_library": NotFound,
        "No stored library matches the name; the message lists the stored ones.";
    UnknownVersion = "unknown_version": NotFound,
        "The library has no such version; the message lists its versions.";
    UnknownDocument = "unknown_document": NotFound,
        "The library version holds no document at that path.";
    UnknownSection = "unknown_section": NotFound,
        "The document has no section with that heading path; the message lists its headings.";
    UnknownChunk = "unknown_chunk": NotFound,
        "No chunk has that id.";
    UnknownJob = "unknown_job": NotFound,
        "No job has that id (jobs are kept for a while after they end).";
    UnknownSource = "unknown_source": NotFound,
        "No source has that id; `GET /api/sources` lists them.";
    UnknownPackage = "unknown_package": NotFound,
        "The package registry has no package of that name.";
    UnknownRelease = "unknown_release": NotFound,
        "The package has no such release; the message names the newest.";
    UnknownRepository = "unknown_repository": NotFound,
        "The URL is not a Git repository the server can read.";
    UnknownToken = "unknown_token": NotFound,
        "No token has that id; `GET /api/tokens` lists them.";
    UnknownRef = "unknown_ref": NotFound,
        "The Git repository has no such tag or branch; the message lists its newest tags.";
    // 405, 406
    MethodNotAllowed = "method_not_allowed": MethodNotAllowed,
        "The path exists, but not for this method; the `Allow` header lists those it takes.";
    NotAcceptable = "not_acceptable": NotAcceptable,
        "The client does not accept what the route answers (MCP over HTTP needs `Accept: application/json, text/event-stream`).";
    // 409
    Conflict = "conflict": Conflict,
        "Something answered 409 without a code of its own.";
    ModelMismatch = "model_mismatch": Conflict,
        "An import's vectors come from another embedding model than this server's, so they cannot be searched here; the message names both. Nothing was written.";
    VersionBusy = "version_busy": Conflict,
        "Another job is writing the same library version; wait for it to end, then send again.";
    TokenNameTaken = "token_name_taken": Conflict,
        "A token of that name exists (revoked ones keep theirs, so that the audit log names one token); choose another name.";
    // 413, 414, 415
    BodyTooLarge = "body_too_large": TooLarge,
        "The request body is larger than the server accepts (`--max-body-mib`).";
    UploadTooLarge = "upload_too_large": TooLarge,
        "A file of the upload could never be extracted within the server's memory budget; the message names it.";
    HeadersTooLarge = "headers_too_large": TooLarge,
        "The request's header fields are larger than the server reads.";
    UriTooLong = "uri_too_long": UriTooLong,
        "The request target (path and query) is longer than the server reads.";
    UnsupportedMediaType = "unsupported_media_type": UnsupportedMedia,
        "The body is not in a format the route reads (`application/json`, or `multipart/form-data` for uploads).";
    // 429
    TooManyAttempts = "too_many_attempts": TooManyRequests,
        "Too many requests with a wrong token came from this client; wait for `Retry-After` seconds.";
    // 503, retried: the same request may succeed in a moment.
    Busy = "busy": Busy,
        "Something answered 503 without a code of its own.";
    TooManySearches = "too_many_searches": Busy,
        "As many searches as the server runs at once are running; try again in a moment.";
    SearchTimedOut = "search_timed_out": Busy,
        "The search ran past the server's time limit and was stopped.";
    MemoryBusy = "memory_busy": Busy,
        "Other uploads hold the memory budget for extraction; try again when they end.";
    // 503: a part the request needs is missing.
    Unavailable = "unavailable": Unavailable,
        "A part docshelf needs is not available, or docshelf could not be reached.";
    ModelUnavailable = "model_unavailable": Unavailable,
        "The embedding model is not loaded, so nothing can be searched by meaning or embedded.";
    LlmUnavailable = "llm_unavailable": Unavailable,
        "Ask's language model is off, unreachable, too slow, or answered something unreadable.";
    StoreUnavailable = "store_unavailable": Unavailable,
        "The object store holding the documents is not answering; searches resume by themselves when it does.";
    RegistryUnavailable = "registry_unavailable": Unavailable,
        "A package registry could not be read, or its archive did not match its published digest.";
    // 500
    Internal = "internal": Internal,
        "A fault of the server's: the body carries a correlation id under which the details are logged.";
}

impl ErrorCode {
    /// The code that stands for a bare status, where only the status is
    /// known (a body that is not docshelf's, a transport's plain text).
    pub fn of_status(status: u16) -> Self {
        match status {
            405 => Self::MethodNotAllowed,
            406 => Self::NotAcceptable,
            413 => Self::BodyTooLarge,
            414 => Self::UriTooLong,
            415 => Self::UnsupportedMediaType,
            431 => Self::HeadersTooLarge,
            _ => match ErrorKind::of_status(status) {
                ErrorKind::Unauthorized => Self::InvalidToken,
                ErrorKind::Forbidden => Self::Forbidden,
                ErrorKind::NotFound => Self::NotFound,
                ErrorKind::Conflict => Self::Conflict,
                ErrorKind::Busy => Self::Busy,
                ErrorKind::TooManyRequests => Self::TooManyAttempts,
                ErrorKind::Unavailable => Self::Unavailable,
                ErrorKind::Internal => Self::Internal,
                _ => Self::BadRequest,
            },
        }
    }

    /// The JSON-RPC error code an MCP message refused as a whole gets.
    /// (A tool's own failures are tool results, which carry the body.)
    pub const fn rpc_code(self) -> i64 {
        match self {
            Self::McpParseError => RPC_PARSE_ERROR,
            _ if self.kind().http_status() >= 500 => RPC_INTERNAL_ERROR,
            _ => RPC_INVALID_REQUEST,
        }
    }

    /// The code's entry in the documentation: `docs/errors.md#unknown_library`.
    pub fn link(self) -> String {
        format!("{ERRORS_DOC}#{}", self.name())
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An error as every face answers it:
/// `{"code": "unknown_library", "kind": "not_found", "error": "…", "link": "docs/errors.md#unknown_library"}`,
/// plus a `correlation_id` for internal faults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[error("{error}")]
pub struct ErrorBody {
    /// What exactly went wrong: a row of the code table, stable across releases.
    pub code: ErrorCode,
    /// The code's kind, which decided the HTTP status.
    pub kind: ErrorKind,
    /// What went wrong, in words meant for the person or agent who asked.
    pub error: String,
    /// The code's entry in docshelf's documentation.
    pub link: String,
    /// For internal faults: the id under which the details were logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, error: impl Into<String>) -> Self {
        Self {
            code,
            kind: code.kind(),
            error: error.into(),
            link: code.link(),
            correlation_id: None,
        }
    }

    /// An internal fault, logged elsewhere under `correlation_id`: the body
    /// says nothing of the details, which may name paths or internals.
    pub fn internal(correlation_id: impl Into<String>) -> Self {
        let id = correlation_id.into();
        Self {
            correlation_id: Some(id.clone()),
            ..Self::new(
                ErrorCode::Internal,
                format!("internal error; quote correlation id {id} when reporting it"),
            )
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
    fn a_bare_status_has_a_code_of_the_same_status() {
        for status in [
            400, 401, 403, 404, 405, 406, 409, 413, 414, 415, 418, 500, 502, 503,
        ] {
            let code = ErrorCode::of_status(status);
            let expected = ErrorKind::of_status(status).http_status();
            assert_eq!(code.kind().http_status(), expected, "{status} -> {code}");
        }
        // hyper's own 431 keeps its status; its kind is "too large".
        assert_eq!(ErrorCode::of_status(431).kind(), ErrorKind::TooLarge);
    }

    #[test]
    fn codes_serialise_as_their_names_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &code in ErrorCode::ALL {
            assert!(seen.insert(code.name()), "{code} twice");
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.name().into()));
            let back: ErrorCode = serde_json::from_value(json).unwrap();
            assert_eq!(back, code);
            assert!(
                code.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{code}"
            );
        }
        for kind in ErrorKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.code().into()));
        }
    }

    #[test]
    fn every_kind_has_a_code() {
        for kind in ErrorKind::ALL {
            assert!(
                ErrorCode::ALL.iter().any(|c| c.kind() == kind),
                "no code of kind {kind}"
            );
        }
    }

    #[test]
    fn a_body_carries_its_code_kind_and_link() {
        let body = ErrorBody::new(ErrorCode::UnknownJob, "no job \"j\"");
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["code"], "unknown_job");
        assert_eq!(json["kind"], "not_found");
        assert_eq!(json["link"], "docs/errors.md#unknown_job");
        assert!(json.get("correlation_id").is_none());
        let back: ErrorBody = serde_json::from_value(json).unwrap();
        assert_eq!(back, body);
    }

    #[test]
    fn an_internal_body_carries_only_its_id() {
        let body = ErrorBody::internal("abc");
        assert_eq!(body.code, ErrorCode::Internal);
        assert_eq!(body.kind, ErrorKind::Internal);
        assert!(body.error.contains("abc"));
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["correlation_id"], "abc");
    }

    #[test]
    fn rpc_codes_follow_the_kind() {
        assert_eq!(ErrorCode::McpParseError.rpc_code(), RPC_PARSE_ERROR);
        assert_eq!(ErrorCode::InvalidMcpMessage.rpc_code(), RPC_INVALID_REQUEST);
        assert_eq!(ErrorCode::Internal.rpc_code(), RPC_INTERNAL_ERROR);
    }
}
