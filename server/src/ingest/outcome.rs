//! How a file's outcome is recorded (its final state, counted) and how a
//! storage failure is told to a user (what happened, an id to quote; the
//! details in the log).

use index_core::job::FileState;

use super::jobs::FileSlot;
use super::JobHandle;
use crate::metrics::Metrics;
use crate::store::{StorageFailure, StoreError};

/// Moves a file to its final state and counts the outcome.
pub fn finish(metrics: &Metrics, job: &JobHandle, slot: FileSlot, state: FileState) {
    match &state {
        FileState::Stored { new_chunks, .. } => {
            metrics.file("stored");
            metrics.chunks_stored(*new_chunks);
        }
        FileState::Failed { .. } | FileState::Skipped { .. } => {
            metrics.file(state.name());
        }
        _ => {}
    }
    job.set_file(slot, state);
}

/// What a user is told about a storage failure: what was not done, what
/// happened underneath (a full disk, permissions, an object store down:
/// see [`StorageFailure`]) and an id to quote. The error itself, which
/// names the store's paths and the storage library's source files, goes to
/// the log under that id.
pub(super) fn reported(err: &StoreError, what: &str) -> String {
    let id = uuid::Uuid::new_v4();
    tracing::error!(correlation_id = %id, error = %err, "{what}");
    match StorageFailure::of(err) {
        StorageFailure::Other => format!("{what} (correlation id {id})"),
        cause => format!("{what}: {cause} (correlation id {id})"),
    }
}
