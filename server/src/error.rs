//! The engine's errors, and the one place that decides what kind each is.
//!
//! Every face reads [`EngineError::code`] (a row of the table in
//! [`index_core::error`]) and answers with [`EngineError::body`]: the REST
//! API sets the status from the code's kind, the dashboard's server
//! functions return it typed, MCP reports it as a tool error, the CLI
//! prints it and exits by its kind. Adding a variant here without a code
//! does not compile, so no face can fall out of step.

use index_core::ask::AskError;
use index_core::reading::ReadError;
use index_core::search::SearchError;
use index_core::validate::NameError;
use index_core::{ErrorBody, ErrorCode, ErrorKind};

use crate::access::AccessError;
use crate::ingest::MemoryError;
use crate::llm::LlmError;
use crate::search::RunError;
use crate::source::git::GitError;
use crate::source::registry::RegistryError;
use crate::source::SourceError;
use crate::store::{StorageFailure, StoreError};

/// Why the engine refused a request.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error("the embedding model is not available: {0}")]
    NoModel(String),
    #[error("an upload needs at least one file")]
    NoFiles,
    #[error(transparent)]
    BadSearch(#[from] SearchError),
    /// A document read refused for what it asks, not for a name: a name
    /// is [`Self::InvalidName`] as every other, which the `From` below
    /// decides (build this through it).
    #[error(transparent)]
    BadRead(ReadError),
    #[error(transparent)]
    BadQuestion(#[from] AskError),
    /// Ask's model is off, unreachable, slow or talking nonsense.
    #[error(transparent)]
    Llm(LlmError),
    #[error("{}", unknown_library(given, candidates, *stored))]
    UnknownLibrary {
        given: String,
        /// The closest of the stored libraries the caller may see.
        candidates: Vec<String>,
        /// How many stored libraries the caller may see.
        stored: usize,
    },
    #[error("library {library:?} has no version {version:?} (it has {})", versions.join(", "))]
    UnknownVersion {
        library: String,
        version: String,
        versions: Vec<String>,
    },
    #[error("no document {file_path:?} in {library} {version}")]
    UnknownDocument {
        library: String,
        version: String,
        file_path: String,
    },
    #[error("{file_path} has no section {section:?}; its sections: {}", sections.join(" | "))]
    UnknownSection {
        file_path: String,
        section: String,
        sections: Vec<String>,
    },
    #[error("no chunk with id {0:?}")]
    UnknownChunk(String),
    #[error("no job {0:?}")]
    UnknownJob(String),
    #[error("no source {0:?} (GET /api/sources lists them)")]
    UnknownSource(String),
    /// A token refused, or an action its grants do not cover.
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    #[error("{library} {version} is being written by job {job}; wait for it to end (GET /api/jobs/{job}), then upload again")]
    VersionBusy {
        library: String,
        version: String,
        job: String,
    },
    #[error("docshelf is busy: {0} searches are running; try again in a moment")]
    Busy(usize),
    /// The upload does not fit the memory budget for extraction now
    /// (busy), or ever (too large).
    #[error("the upload cannot be accepted: {0}")]
    Memory(#[from] MemoryError),
    /// One file of an upload could never be extracted within the budget.
    #[error("the upload cannot be accepted: {file}: {reason}")]
    FileTooLarge { file: String, reason: MemoryError },
    #[error("the search took longer than {0} s and was stopped; try again, or a shorter query")]
    TimedOut(u64),
    /// The object store holding the tables is down or stalled: nothing
    /// this replica can do until it answers again.
    #[error("the object store holding the documents is not answering; try again shortly (searches resume by themselves when it does)")]
    StoreUnavailable,
    /// An import refused for what its file holds.
    #[error(transparent)]
    Transfer(#[from] crate::transfer::TransferError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Search(#[from] RunError),
}

/// A document read refused before any lookup: a name as every other bad
/// name, the rest as a read's own.
impl From<ReadError> for EngineError {
    fn from(err: ReadError) -> Self {
        match err {
            ReadError::Name(name) => Self::InvalidName(name),
            other => Self::BadRead(other),
        }
    }
}

/// Whether a store error is the object store not answering (see
/// [`StorageFailure`]).
fn store_down(err: &StoreError) -> bool {
    StorageFailure::of(err) == StorageFailure::Unreachable
}

/// The message for a library name that matches nothing: every stored
/// library when the closest are all of them, else the closest, said to be
/// some of how many (a list of five read as the whole store misleads).
fn unknown_library(given: &str, candidates: &[String], stored: usize) -> String {
    match candidates {
        [] if stored == 0 => format!("no library matches {given:?}: the store holds no libraries yet"),
        [] => format!(
            "no library matches {given:?}, nor is one of the {stored} stored libraries close to it (GET /api/libraries lists them)"
        ),
        _ if candidates.len() >= stored => format!(
            "no library matches {given:?}; stored libraries: {}",
            candidates.join(", ")
        ),
        _ => format!(
            "no library matches {given:?}; the closest of the {stored} stored libraries: {} (GET /api/libraries lists them all)",
            candidates.join(", ")
        ),
    }
}

impl EngineError {
    /// Which row of the error-code table this is: the one decision every
    /// face maps from (status, JSON-RPC code, exit code, retry hint).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidName(_) => ErrorCode::InvalidName,
            Self::NoFiles => ErrorCode::NoFiles,
            Self::BadSearch(_) => ErrorCode::InvalidSearch,
            Self::BadRead(_) => ErrorCode::InvalidRead,
            Self::BadQuestion(_) => ErrorCode::InvalidQuestion,
            Self::UnknownLibrary { .. } => ErrorCode::UnknownLibrary,
            Self::UnknownVersion { .. } => ErrorCode::UnknownVersion,
            Self::UnknownDocument { .. } => ErrorCode::UnknownDocument,
            Self::UnknownSection { .. } => ErrorCode::UnknownSection,
            Self::UnknownChunk(_) => ErrorCode::UnknownChunk,
            Self::UnknownJob(_) => ErrorCode::UnknownJob,
            Self::UnknownSource(_) => ErrorCode::UnknownSource,
            Self::Access(err) => match err {
                AccessError::Missing => ErrorCode::MissingToken,
                AccessError::Invalid => ErrorCode::InvalidToken,
                AccessError::Expired { .. } => ErrorCode::TokenExpired,
                AccessError::Revoked { .. } => ErrorCode::TokenRevoked,
                AccessError::InQuery(_) => ErrorCode::TokenInQuery,
                AccessError::TooManyAttempts(_) => ErrorCode::TooManyAttempts,
                AccessError::NotPermitted { .. } => ErrorCode::NotPermitted,
                AccessError::UnknownToken(_) => ErrorCode::UnknownToken,
                AccessError::NameTaken(_) => ErrorCode::TokenNameTaken,
                AccessError::Grant(_) => ErrorCode::InvalidGrant,
                AccessError::Random(_) | AccessError::Corrupt(_) => ErrorCode::Internal,
                AccessError::Store(_) => ErrorCode::Internal,
            },
            Self::Source(SourceError::Registry(RegistryError::NoPackage { .. })) => {
                ErrorCode::UnknownPackage
            }
            Self::Source(SourceError::Registry(
                RegistryError::NoRelease { .. } | RegistryError::NoMatch { .. },
            )) => ErrorCode::UnknownRelease,
            Self::Source(SourceError::Registry(_)) => ErrorCode::RegistryUnavailable,
            Self::Source(SourceError::Unreachable { .. }) => ErrorCode::SourceUnreachable,
            Self::Source(SourceError::Credential(_)) => ErrorCode::SourceCredential,
            Self::Source(SourceError::Git(err)) => match err {
                GitError::Unauthorized { .. } => ErrorCode::SourceCredential,
                GitError::NoRepository(_) => ErrorCode::UnknownRepository,
                GitError::NoRef(_) | GitError::UnknownRef { .. } | GitError::NoReleases { .. } => {
                    ErrorCode::UnknownRef
                }
                GitError::Redirected { .. }
                | GitError::NoDocsPath(_)
                | GitError::NoDocs(_)
                | GitError::NoDocsFolder
                | GitError::NoUsableDocs { .. } => ErrorCode::InvalidSource,
                GitError::TooManyFiles { .. }
                | GitError::TooLarge { .. }
                | GitError::TreeTooLarge { .. } => ErrorCode::InvalidSource,
                GitError::Memory(_) => ErrorCode::MemoryBusy,
                GitError::NoGit | GitError::Local(_) | GitError::Stopped => ErrorCode::Internal,
                GitError::Unreachable { .. } | GitError::Failed { .. } | GitError::Tool(_) => {
                    ErrorCode::SourceUnreachable
                }
            },
            Self::Source(
                SourceError::NotASource(_)
                | SourceError::UserInUrl(_)
                | SourceError::Package(_)
                | SourceError::Scope(_)
                | SourceError::NoVersion
                | SourceError::NotGit(_)
                | SourceError::CredentialForPackage
                | SourceError::Track(_)
                | SourceError::From(_)
                | SourceError::Include(_),
            ) => ErrorCode::InvalidSource,
            // The model server is another service docshelf depends on:
            // whatever went wrong there, this request cannot be answered
            // now, and the message says why.
            Self::NoModel(_) | Self::Search(RunError::NoModel(_)) => ErrorCode::ModelUnavailable,
            Self::Llm(_) => ErrorCode::LlmUnavailable,
            Self::StoreUnavailable => ErrorCode::StoreUnavailable,
            Self::Transfer(crate::transfer::TransferError::OtherModel { .. }) => {
                ErrorCode::ModelMismatch
            }
            Self::Transfer(_) => ErrorCode::InvalidExport,
            Self::Busy(_) => ErrorCode::TooManySearches,
            Self::TimedOut(_) => ErrorCode::SearchTimedOut,
            Self::Memory(MemoryError::Busy { .. }) => ErrorCode::MemoryBusy,
            Self::Memory(MemoryError::TooLarge { .. }) | Self::FileTooLarge { .. } => {
                ErrorCode::UploadTooLarge
            }
            Self::VersionBusy { .. } => ErrorCode::VersionBusy,
            // An object store that does not answer is unavailable on every
            // route (an upload, a listing), not only for searches.
            Self::Store(err) | Self::Search(RunError::Store(err)) if store_down(err) => {
                ErrorCode::StoreUnavailable
            }
            Self::Store(_) | Self::Search(RunError::Store(_) | RunError::Embed(_)) => {
                ErrorCode::Internal
            }
        }
    }

    /// What kind of failure this is (the code's kind).
    pub fn kind(&self) -> ErrorKind {
        self.code().kind()
    }

    /// The answer a client gets. An internal fault is logged here in full,
    /// under a fresh correlation id, and the body carries only that id:
    /// store errors can name paths and internals a client has no use for.
    pub fn body(&self) -> ErrorBody {
        match self.code() {
            ErrorCode::Internal => {
                let id = uuid::Uuid::new_v4().to_string();
                tracing::error!(correlation_id = %id, error = %self, "request failed");
                ErrorBody::internal(id)
            }
            // The store's own words name its bucket and internals: the
            // client gets the one message, the log the details.
            ErrorCode::StoreUnavailable
                if matches!(self, Self::Store(_) | Self::Search(RunError::Store(_))) =>
            {
                tracing::warn!(error = %self, "the object store is not answering");
                ErrorBody::new(
                    ErrorCode::StoreUnavailable,
                    Self::StoreUnavailable.to_string(),
                )
            }
            code => ErrorBody::new(code, self.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_details_stay_in_the_log() {
        let err = EngineError::Search(RunError::Embed("tensor shape /secret/path".into()));
        let body = err.body();
        assert_eq!(body.code, ErrorCode::Internal);
        assert!(!body.error.contains("/secret/path"));
        assert!(body.correlation_id.is_some());
    }

    #[test]
    fn a_store_that_does_not_answer_is_unavailable_on_every_route() {
        let down = || {
            StoreError::Query(
                "error sending request for url (http://10.9.9.9:9000/bucket/x): Connection refused"
                    .into(),
            )
        };
        for err in [
            EngineError::Store(down()),
            EngineError::Search(RunError::Store(down())),
        ] {
            assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
            let body = err.body();
            assert_eq!(body.code, ErrorCode::StoreUnavailable);
            assert!(!body.error.contains("10.9.9.9"), "{}", body.error);
        }
        let other = EngineError::Store(StoreError::Shape("a column".into()));
        assert_eq!(other.kind(), ErrorKind::Internal);
    }

    #[test]
    fn client_errors_keep_their_words() {
        let err = EngineError::UnknownChunk("c1".into());
        let body = err.body();
        assert_eq!(body.code, ErrorCode::UnknownChunk);
        assert_eq!(body.kind, ErrorKind::NotFound);
        assert_eq!(body.error, "no chunk with id \"c1\"");
        assert_eq!(EngineError::Busy(64).kind().retry_after_secs(), Some(1));
    }

    /// Five candidates of thirteen stored libraries are said to be the
    /// closest of thirteen, not the store's whole list.
    #[test]
    fn an_unknown_library_says_how_many_are_stored() {
        let some = EngineError::UnknownLibrary {
            given: "reqests".into(),
            candidates: ["requests", "httpx", "flask", "click", "django"]
                .map(String::from)
                .to_vec(),
            stored: 13,
        };
        assert!(
            some.to_string()
                .contains("the closest of the 13 stored libraries: requests, httpx"),
            "{some}"
        );
        let all = EngineError::UnknownLibrary {
            given: "x".into(),
            candidates: vec!["gardening".into()],
            stored: 1,
        };
        assert!(
            all.to_string().ends_with("stored libraries: gardening"),
            "{all}"
        );
        let far = EngineError::UnknownLibrary {
            given: "x".into(),
            candidates: Vec::new(),
            stored: 3,
        };
        assert!(!far.to_string().contains("no libraries yet"), "{far}");
    }
}
