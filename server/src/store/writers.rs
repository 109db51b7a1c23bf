//! One writer at a time on a store, across processes too.
//!
//! LanceDB's commits are optimistic: a writer reads a version, prepares its
//! change and commits it on top of whatever was committed meanwhile, unless
//! Lance sees a conflict. Two processes replacing the same document at once
//! each merged against the version they had read, neither saw the other's
//! rows, Lance found nothing in conflict (both only added rows), and the
//! document was left holding both versions' chunks
//! (`server/tests/integration/shared_store.rs` found it, about one run in
//! two).
//!
//! So a writer holds the store's lock while it commits, and first moves its
//! table handle to the latest version: the next writer, in this process or
//! another, merges against what the last one left. On a local store the
//! lock is an OS file lock (`flock`), released if the process dies. On an
//! object store it is a lease object taken with conditional writes (see
//! [`super::lease`]), which a dead holder loses after its time to live.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use tokio::sync::{Mutex, MutexGuard};

use super::lease::{self, Lease, LeaseError};

/// The lock file, beside the store's tables.
pub const LOCK_FILE: &str = ".docshelf-write.lock";

/// How often a writer waiting for another process tries the lock again:
/// commits take tens of milliseconds to seconds, so this adds little.
const RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// The store's writer lock: this process's tasks queue on the mutex, and
/// the one holding it takes the lock that other processes share.
pub struct WriteLock {
    local: Mutex<()>,
    shared: Shared,
}

/// What other processes on the store share.
enum Shared {
    /// Nothing: a local directory that cannot hold the lock file.
    None,
    File(Arc<File>),
    Lease(Arc<Lease>),
}

/// Held while writing; dropping it lets the next writer in.
pub struct WriteGuard<'a> {
    // Dropped first: the lease stops renewing before this process's next
    // writer may take it.
    _shared: SharedGuard,
    _local: MutexGuard<'a, ()>,
}

enum SharedGuard {
    None,
    File(Arc<File>),
    Lease(#[allow(dead_code)] lease::Held),
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot take the store's lock file: {0}")]
    File(#[from] std::io::Error),
    #[error(transparent)]
    Lease(#[from] LeaseError),
}

impl WriteLock {
    /// The lock for a store in `dir` (a local store). A store whose
    /// directory cannot hold the lock file (a read-only mount, served for
    /// reading) gets this process's lock alone, with a warning: writing
    /// there would fail anyway.
    pub fn open(dir: &Path) -> Self {
        let path = dir.join(LOCK_FILE);
        let shared = match File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        {
            Ok(file) => Shared::File(Arc::new(file)),
            Err(err) => {
                tracing::warn!(
                    path = %path.display(),
                    %err,
                    "cannot open the store's lock file: other processes' writes are not coordinated with this one's"
                );
                Shared::None
            }
        };
        Self {
            local: Mutex::new(()),
            shared,
        }
    }

    /// The lock for a store on an object store: the lease.
    pub fn leased(lease: Lease) -> Self {
        Self {
            local: Mutex::new(()),
            shared: Shared::Lease(Arc::new(lease)),
        }
    }

    /// The lock for this process alone (a store only it can reach, such as
    /// LanceDB's in-memory one).
    pub fn process_only() -> Self {
        Self {
            local: Mutex::new(()),
            shared: Shared::None,
        }
    }

    /// Waits for this process's turn, then for the other processes'. The
    /// file lock is tried, not waited on in a thread, so a writer that gives
    /// up waiting (its task cancelled) never leaves it taken.
    pub async fn acquire(&self) -> Result<WriteGuard<'_>, LockError> {
        let local = self.local.lock().await;
        let shared = match &self.shared {
            Shared::None => SharedGuard::None,
            Shared::File(file) => {
                loop {
                    match file.try_lock() {
                        Ok(()) => break,
                        Err(std::fs::TryLockError::WouldBlock) => {
                            tokio::time::sleep(RETRY).await;
                        }
                        Err(std::fs::TryLockError::Error(err)) => return Err(err.into()),
                    }
                }
                SharedGuard::File(file.clone())
            }
            Shared::Lease(lease) => SharedGuard::Lease(lease.acquire().await?),
        };
        Ok(WriteGuard {
            _shared: shared,
            _local: local,
        })
    }
}

impl Drop for SharedGuard {
    fn drop(&mut self) {
        if let Self::File(file) = self {
            if let Err(err) = file.unlock() {
                tracing::warn!(%err, "could not release the store's lock file");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_handle_on_the_same_store_waits_for_the_first() {
        let dir = tempfile::tempdir().expect("dir");
        let first = WriteLock::open(dir.path());
        let second = WriteLock::open(dir.path());
        let held = first.acquire().await.expect("first");
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(200), second.acquire());
        assert!(waiting.await.is_err(), "both held the lock at once");
        drop(held);
        let _second = tokio::time::timeout(std::time::Duration::from_secs(5), second.acquire())
            .await
            .expect("the second gets it once the first lets go")
            .expect("lock");
    }

    #[tokio::test]
    async fn a_directory_that_cannot_hold_the_lock_file_still_serves_this_process() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("not-there");
        let lock = WriteLock::open(&missing);
        assert!(matches!(lock.shared, Shared::None));
        let _held = lock.acquire().await.expect("this process's turn");
    }
}
