//! What a job has embedded, set aside where no search sees it (the
//! store's staging table, [`crate::store::staging`]) until the job ends,
//! then published into the version in one commit, each file's outcome
//! said truly: stored, replaced by a later file of the same path, or not
//! stored and why, at job level too when the store itself was why.

use index_core::job::FileState;
use index_core::job::JobState;

use super::jobs::FileSlot;
use super::outcome::{finish, reported};
use super::JobHandle;
use crate::metrics::Metrics;
use crate::store::{DocumentChunks, Replace, StorageFailure, Store, StoreError};

/// A document chunked and embedded, waiting for its commit.
pub(super) struct Embedded {
    pub(super) slot: FileSlot,
    pub(super) document: DocumentChunks,
}

/// What a job has staged, and its publishing.
pub(super) struct Staging {
    pub(super) job: String,
    /// Rows staged so far: publishing checks they are all still there.
    rows: usize,
    /// The staged documents, by path: a later file of the same path in
    /// the same job replaces an earlier one, as it would have in the store.
    documents: std::collections::HashMap<String, (FileSlot, usize)>,
    /// Files the store could not take (a full disk, a store down), and
    /// the first one's reason: said at job level, not only per file.
    unstored: Unstored,
}

/// Files a job could not stage because of the store itself.
#[derive(Debug, Default)]
struct Unstored {
    files: usize,
    first: Option<String>,
}

impl Unstored {
    fn add(&mut self, err: &StoreError, reason: &str) {
        self.files += 1;
        if self.first.is_none() && StorageFailure::of(err) != StorageFailure::Other {
            self.first = Some(reason.to_owned());
        }
    }

    /// The job-level error, when files were lost to the store.
    fn error(&self, stored: usize) -> Option<String> {
        let first = self.first.as_deref()?;
        Some(format!(
            "{} file(s) could not be stored ({stored} stored): {first}",
            self.files
        ))
    }
}

impl Staging {
    pub(super) fn new(job: String) -> Self {
        Self {
            job,
            rows: 0,
            documents: Default::default(),
            unstored: Unstored::default(),
        }
    }

    /// Stages an embedded document, if there is one; says which file it
    /// was and how it ended.
    pub(super) async fn stage(
        &mut self,
        store: &Store,
        metrics: &Metrics,
        job: &JobHandle,
        embedded: Option<Embedded>,
    ) -> Option<(FileSlot, FileState)> {
        let Embedded { slot, document } = embedded?;
        let path = document.file_path.clone();
        if let Some(&(earlier, chunks)) = self.documents.get(&path) {
            // Same path twice in one upload: the later file wins.
            if let Err(err) = store.unstage(&self.job, &path).await {
                let reason = reported(&err, "the document could not be staged");
                self.unstored.add(&err, &reason);
                return Some((slot, FileState::Failed { reason }));
            }
            self.rows -= chunks;
            self.documents.remove(&path);
            finish(
                metrics,
                job,
                earlier,
                FileState::Skipped {
                    reason: format!("a later file of this upload has the same path, {path}"),
                },
            );
        }
        let chunks = document.chunks.len();
        let state = match store.stage_document(&self.job, &document).await {
            Ok(()) => {
                self.rows += chunks;
                self.documents.insert(path, (slot, chunks));
                FileState::Staged { chunks }
            }
            Err(err) => {
                let reason = reported(&err, "the document could not be staged");
                self.unstored.add(&err, &reason);
                FileState::Failed { reason }
            }
        };
        Some((slot, state))
    }

    /// Publishes everything staged in one commit and says truly what
    /// happened to each file. Returns whether it published (the job is
    /// then `indexing`); if not, the job has ended.
    pub(super) async fn publish(
        self,
        store: &Store,
        metrics: &Metrics,
        job: &JobHandle,
        replace: &Replace<'_>,
    ) -> bool {
        if self.documents.is_empty() {
            if let Some(error) = self.unstored.error(0) {
                // Nothing to publish, and the store is why: a failure.
                if let Err(err) = store.discard_staged(&self.job).await {
                    tracing::warn!(%err, job = self.job, "cannot drop the staged rows of a job that stored nothing (retried after the job)");
                }
                job.set_state(JobState::Failed, Some(error));
                return false;
            }
        }
        job.set_state(JobState::Publishing, None);
        let published = store
            .publish(&self.job, job.library(), job.version(), self.rows, replace)
            .await;
        let published = match published {
            Ok(published) => published,
            Err(StoreError::Withdrawn { .. }) => {
                // Deleted by another process: its delete dropped the rows.
                let _ = store.discard_staged(&self.job).await;
                job.stop(
                    JobState::Cancelled,
                    "the version was deleted while the job ran; nothing was published",
                    "not stored: the job was cancelled",
                );
                return false;
            }
            Err(err) => {
                let what = reported(&err, "the documents could not be published");
                for (slot, _) in self.documents.into_values() {
                    finish(
                        metrics,
                        job,
                        slot,
                        FileState::Failed {
                            reason: format!("not stored: {what}"),
                        },
                    );
                }
                if let Err(err) = store.discard_staged(&self.job).await {
                    tracing::warn!(%err, job = self.job, "cannot drop the staged rows of a job that failed to publish (the next start does)");
                }
                job.set_state(
                    JobState::Failed,
                    Some(format!("nothing was published: {what}")),
                );
                return false;
            }
        };
        let stored = self.documents.len();
        for (path, (slot, chunks)) in self.documents {
            let new_chunks = published.documents.get(&path).map_or(0, |d| d.1);
            finish(metrics, job, slot, FileState::Stored { chunks, new_chunks });
        }
        // Published, and said so before anything else can go wrong: a
        // process that stops from here on stopped after publishing.
        job.set_state(JobState::Indexing, self.unstored.error(stored));
        true
    }
}
