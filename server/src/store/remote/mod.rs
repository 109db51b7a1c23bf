//! Stores on object storage: `s3://bucket/prefix` on any S3-compatible
//! service (AWS S3, MinIO, R2, Ceph RGW).
//!
//! LanceDB reads and writes tables through Lance's registry of object-store
//! providers; a build without LanceDB's "aws" feature has none for `s3`.
//! That feature would bring aws-config, opendal and aws-lc-sys (71 crates,
//! a C library among them) into a build that has minutes to spare. So the
//! store gives Lance a provider of its own ([`s3::S3Provider`]): the S3
//! client of the object_store crate Lance already uses, built without an
//! HTTP stack of its own, on the reqwest the tree already compiles
//! ([`http`]). It adds three small crates (crc-fast, quick-xml, spin).
//!
//! What Lance needs from the store is what S3 now offers everywhere:
//! conditional writes. Each table version is committed by creating its
//! manifest only if absent, so two replicas can never both commit the same
//! version; the writers' lease ([`super::lease`]) uses the same writes.
//!
//! A warm replica reads the files Lance never rewrites from memory
//! ([`cache`]), so a search there costs close to what it costs locally.

pub mod cache;
pub mod config;
pub mod http;
pub mod s3;

use std::sync::Arc;
use std::time::Duration;

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use url::Url;

use super::lease::Lease;
pub use config::{S3Config, S3_CACHE_MIB};

/// The name of the writers' lease object, beside the tables.
const LEASE: &str = ".docshelf-write.lease";

/// What opening a store on an object store takes.
pub struct Remote {
    /// A LanceDB session whose object-store registry can open `s3://`.
    pub session: Arc<lancedb::Session>,
    /// The writers' lease on that store.
    pub lease: Lease,
    /// Asks the object store whether it answers at all.
    pub probe: Probe,
}

/// One small request to the object store, to tell a store that is down or
/// stalled from any other failure.
pub struct Probe {
    client: Arc<dyn ObjectStore>,
    path: Path,
}

/// How long the probe waits: a store that answers at all answers a HEAD of
/// a tiny object far sooner.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl Probe {
    /// Lists the store's prefix once, before LanceDB does, so that a wrong
    /// endpoint, wrong credentials or a missing bucket stop the start with
    /// one sentence instead of LanceDB's nested error after its retries.
    pub async fn check(&self, location: &str) -> Result<(), RemoteError> {
        // The lease object's directory: the store's own prefix.
        let parent: Path = {
            let parts: Vec<_> = self.path.parts().collect();
            parts[..parts.len().saturating_sub(1)]
                .iter()
                .cloned()
                .collect()
        };
        let listed = tokio::time::timeout(
            Duration::from_secs(30),
            self.client.list_with_delimiter(Some(&parent)),
        )
        .await;
        let location = location.to_owned();
        let err = match listed {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(err)) => err,
            Err(_) => {
                return Err(RemoteError::Unreachable {
                    location,
                    cause: "no answer in 30 s".into(),
                })
            }
        };
        let cause = deepest_cause(&err);
        Err(match err {
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => {
                RemoteError::Denied { location, cause }
            }
            _ if connection_failed(&err) => RemoteError::Unreachable { location, cause },
            // S3 lists answer a refusal as a status in the message only.
            _ if [
                "403",
                "AccessDenied",
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
            ]
            .iter()
            .any(|code| cause.contains(code)) =>
            {
                RemoteError::Denied { location, cause }
            }
            _ => RemoteError::Unlistable { location, cause },
        })
    }

    /// Whether the store answered a HEAD of the lease object (found or
    /// not) within [`PROBE_TIMEOUT`]: a refused connection, a timeout or
    /// a server error says it is down; anything the store itself answered
    /// says it is up.
    pub async fn answers(&self) -> bool {
        match tokio::time::timeout(PROBE_TIMEOUT, self.client.head(&self.path)).await {
            Ok(Ok(_)) | Ok(Err(object_store::Error::NotFound { .. })) => true,
            Ok(Err(err)) => {
                tracing::warn!(%err, "the object store did not answer the probe");
                false
            }
            Err(_) => {
                tracing::warn!(
                    timeout_ms = PROBE_TIMEOUT.as_millis() as u64,
                    "the object store did not answer the probe in time"
                );
                false
            }
        }
    }
}

/// Why a store location cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("{location}: this docshelf reaches object stores through S3 only (s3://bucket/prefix, with --s3-endpoint for MinIO, R2 or Ceph); {scheme}:// is not built in")]
    Unsupported { location: String, scheme: String },
    #[error("{location}: not a valid store URI: {reason}")]
    Invalid { location: String, reason: String },
    #[error("{location}: cannot set up the S3 client: {source}")]
    Client {
        location: String,
        source: object_store::Error,
    },
    #[error("{location}: cannot reach the object store ({cause}); check --s3-endpoint (or AWS_ENDPOINT_URL) and that the store is up")]
    Unreachable { location: String, cause: String },
    #[error("{location}: the object store refused the credentials ({cause}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or --s3-access-key-id)")]
    Denied { location: String, cause: String },
    #[error("{location}: the object store cannot list it ({cause}); check that the bucket exists")]
    Unlistable { location: String, cause: String },
}

/// Sets up `location` if it names an object store; `None` for a local
/// directory (or LanceDB's in-memory store, which needs nothing).
pub fn open(location: &str, config: &S3Config) -> Result<Option<Remote>, RemoteError> {
    let Some((scheme, _)) = location.split_once("://") else {
        return Ok(None);
    };
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "file" | "memory" => return Ok(None),
        "s3" => {}
        _ => {
            return Err(RemoteError::Unsupported {
                location: location.to_owned(),
                scheme,
            })
        }
    }
    let invalid = |reason: &str| RemoteError::Invalid {
        location: location.to_owned(),
        reason: reason.to_owned(),
    };
    let url = Url::parse(location).map_err(|e| invalid(&e.to_string()))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it names no bucket (s3://bucket/prefix)"));
    }
    let client =
        s3::client(&url, config, &Default::default()).map_err(|source| RemoteError::Client {
            location: location.to_owned(),
            source,
        })?;
    let prefix = url.path().trim_matches('/');
    let lease_path = match prefix {
        "" => Path::from(LEASE),
        prefix => Path::from(prefix).join(LEASE),
    };
    let session = Arc::new(lancedb::Session::default());
    session.store_registry().insert(
        "s3",
        Arc::new(s3::S3Provider {
            config: config.clone(),
        }),
    );
    let client: Arc<dyn ObjectStore> = Arc::new(client);
    Ok(Some(Remote {
        session,
        lease: Lease::new(client.clone(), lease_path.clone()),
        probe: Probe {
            client,
            path: lease_path,
        },
    }))
}

/// Whether the HTTP client never got an answer (refused, timed out).
fn connection_failed(err: &object_store::Error) -> bool {
    crate::error_chain::causes(err)
        .find_map(|e| e.downcast_ref::<object_store::client::HttpError>())
        .is_some_and(|http| {
            matches!(
                http.kind(),
                object_store::client::HttpErrorKind::Connect
                    | object_store::client::HttpErrorKind::Timeout
            )
        })
}

/// The innermost cause's message, on one line and cut short: what a person
/// needs from a chain of wrappers.
fn deepest_cause(err: &object_store::Error) -> String {
    let innermost = crate::error_chain::causes(err)
        .last()
        .map(ToString::to_string);
    index_core::validate::cut(&innermost.unwrap_or_default(), 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_s3_is_an_object_store_here_and_others_say_so() {
        let config = S3Config::default();
        assert!(open("./data", &config).expect("local").is_none());
        assert!(open("file:///tmp/x", &config).expect("file").is_none());
        assert!(open("memory://x", &config).expect("memory").is_none());
        let err = open("gs://bucket/docs", &config).err().expect("gs refused");
        assert!(err.to_string().contains("gs:// is not built in"), "{err}");
        let err = open("s3:///docs", &config).err().expect("no bucket");
        assert!(err.to_string().contains("names no bucket"), "{err}");
        let remote = open("s3://bucket/team/docs/", &config)
            .expect("s3")
            .expect("remote");
        assert_eq!(
            remote.lease.path().as_ref(),
            "team/docs/.docshelf-write.lease"
        );
    }
}
