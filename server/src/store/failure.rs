//! What a storage failure was, in words a user can act on.
//!
//! Why: on a full disk every failed document said only "could not be
//! stored (correlation id …)", and the user could not tell a full disk
//! from a bug. The store's errors arrive wrapped several layers deep
//! (LanceDB, Lance, object_store, the OS), often flattened to text on the
//! way, so the cause is read from the typed chain where it survives, and
//! from the OS's own wording where only text is left.

use std::io;

use super::StoreError;

/// What went wrong underneath a store operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFailure {
    /// No space left where the store lives.
    DiskFull,
    /// The store's files may not be written (permissions, a read-only mount).
    NotWritable,
    /// The object store holding the store does not answer.
    Unreachable,
    /// Anything else: the details are in the log under the correlation id.
    Other,
}

impl StorageFailure {
    /// Reads what happened from `err` and its causes.
    pub fn of(err: &StoreError) -> Self {
        let typed = crate::error_chain::causes(err).find_map(|e| {
            let io = e.downcast_ref::<io::Error>()?;
            match io.kind() {
                io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Some(Self::DiskFull),
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                    Some(Self::NotWritable)
                }
                io::ErrorKind::ConnectionRefused
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::TimedOut
                | io::ErrorKind::HostUnreachable
                | io::ErrorKind::NetworkUnreachable => Some(Self::Unreachable),
                _ => None,
            }
        });
        if let Some(failure) = typed {
            return failure;
        }
        if matches!(err, StoreError::Location(_)) {
            return Self::Unreachable;
        }
        let text: String = crate::error_chain::causes(err)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
        Self::of_text(&text)
    }

    /// From the OS's and the HTTP client's wording, where only text is left.
    fn of_text(text: &str) -> Self {
        let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
        if has(&[
            "No space left on device",
            "os error 28",
            "Disk quota exceeded",
        ]) {
            Self::DiskFull
        } else if has(&[
            "Permission denied",
            "os error 13",
            "Read-only file system",
            "os error 30",
        ]) {
            Self::NotWritable
        } else if has(&[
            "error sending request",
            "Connection refused",
            "connection refused",
            "dns error",
            "operation timed out",
        ]) {
            Self::Unreachable
        } else {
            Self::Other
        }
    }
}

impl std::fmt::Display for StorageFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::DiskFull => "the disk holding the store is full",
            Self::NotWritable => {
                "the store's files may not be written (permission denied or a read-only disk)"
            }
            Self::Unreachable => "the object store holding the documents is not answering",
            Self::Other => "the store failed",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_os_wording_names_the_failure_when_no_type_is_left() {
        let lance = |msg: &str| StoreError::Shape(msg.to_owned());
        assert_eq!(
            StorageFailure::of(&lance(
                "LanceError(IO): Generic LocalFileSystem error: No space left on device (os error 28)"
            )),
            StorageFailure::DiskFull
        );
        assert_eq!(
            StorageFailure::of(&lance("Permission denied (os error 13)")),
            StorageFailure::NotWritable
        );
        assert_eq!(
            StorageFailure::of(&lance("shape mismatch")),
            StorageFailure::Other
        );
    }

    #[test]
    fn a_typed_cause_is_read_through_its_wrappers() {
        let wrapped = |kind| {
            StoreError::Lock(super::super::writers::LockError::File(io::Error::from(
                kind,
            )))
        };
        assert_eq!(
            StorageFailure::of(&wrapped(io::ErrorKind::StorageFull)),
            StorageFailure::DiskFull
        );
        assert_eq!(
            StorageFailure::of(&wrapped(io::ErrorKind::ReadOnlyFilesystem)),
            StorageFailure::NotWritable
        );
        assert_eq!(
            StorageFailure::of(&wrapped(io::ErrorKind::Other)),
            StorageFailure::Other
        );
    }
}
