//! What a source's fetch met, page by page, and what it tells afterwards:
//! the job's verdict (publish, or fail and keep the version as it was),
//! the source's next state, and the summary its listing shows.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use index_core::job::{FileState, JobState};
use index_core::source::{PageFailure, RefreshSummary};

use super::crawl::{Found, PageRecord};
use super::SourceState;
use crate::ingest::pipeline::{Input, JobRun, Read};
use crate::ingest::JobHandle;

/// Failures listed in a refresh's summary, at most.
const LISTED_FAILURES: usize = 100;

/// What a fetch met, page by page.
#[derive(Default)]
pub(super) struct Tally {
    /// The pages the version holds after this fetch (if it publishes),
    /// with what to ask of each next time.
    pub(super) pages: BTreeMap<String, PageRecord>,
    /// Pages kept as stored: unchanged, or failed this time but stored
    /// before (a page that answers 500 today is not removed for it).
    pub(super) keep: BTreeSet<String>,
    pub(super) removed: BTreeSet<String>,
    pub(super) changed: usize,
    pub(super) unchanged: usize,
    pub(super) failures: Vec<PageFailure>,
    pub(super) failed: usize,
    pub(super) notes: Vec<String>,
    /// A package's archive, kept among `pages` by its URL (to tell next
    /// time whether it changed), but not a page of the version.
    pub(super) archive: Option<String>,
}

impl Tally {
    pub(super) async fn found(
        &mut self,
        run: &mut JobRun<'_, '_>,
        job: &JobHandle,
        previous: &SourceState,
        found: Found,
    ) {
        match found {
            Found::Page {
                address,
                format,
                bytes,
                record,
            } => {
                let slot = job.add_file(&address, FileState::Queued);
                self.changed += 1;
                self.pages.insert(address.clone(), record);
                let input = Input {
                    name: address,
                    bytes,
                    read: Read::As(format),
                };
                run.take(input, slot).await;
            }
            Found::Unchanged { address, record } => {
                job.add_file(&address, FileState::Unchanged);
                self.unchanged += 1;
                self.keep.insert(address.clone());
                self.pages.insert(address, record);
            }
            Found::Failed {
                address,
                reason,
                gone,
            } => {
                let stored = previous.pages.get(&address);
                if gone && stored.is_some() {
                    self.removed.insert(address.clone());
                    job.add_file(&address, FileState::Removed { reason });
                    return;
                }
                if let Some(record) = stored {
                    // Kept as it was: one bad answer does not delete a page.
                    self.keep.insert(address.clone());
                    self.pages.insert(address.clone(), record.clone());
                }
                self.fail(job, address, reason);
            }
            Found::Skipped { address, reason } => {
                job.add_file(&address, FileState::Skipped { reason });
            }
            Found::Expected(pages) => job.expect(pages),
        }
    }

    /// A package whose archive (at `address`) is the very one read last
    /// time: every document stays, counted as documents, as `pages`
    /// counts them (not as one unchanged archive beside them), and a note
    /// says why nothing was fetched.
    pub(super) fn archive_unchanged(
        &mut self,
        job: &JobHandle,
        address: &str,
        previous: &SourceState,
    ) {
        self.keep.extend(previous.pages.keys().cloned());
        let mut documents = 0;
        for (path, record) in previous.pages.iter().filter(|(p, _)| *p != address) {
            documents += 1;
            job.add_file(path, FileState::Unchanged);
            self.pages
                .entry(path.clone())
                .or_insert_with(|| record.clone());
        }
        // An archive that gave no document: it alone was met again.
        if documents == 0 {
            job.add_file(address, FileState::Unchanged);
        }
        self.unchanged += documents.max(1);
        self.notes.push(format!(
            "nothing changed: the release's archive is the one read last time (same SHA-256), so the {documents} documents read from it or its route are kept as stored, and its documentation was not fetched again"
        ));
    }

    /// A stored page that changed but could not be read this time (its
    /// new bytes fail extraction) keeps its stored version rather than
    /// vanishing for a bad answer; it is read again at the next refresh.
    pub(super) fn keep_what_failed_to_read(&mut self, job: &JobHandle, previous: &SourceState) {
        for file in job.status().files {
            if !matches!(file.state, FileState::Failed { .. }) {
                continue;
            }
            if let Some(record) = previous.pages.get(&file.file_path) {
                self.keep.insert(file.file_path.clone());
                self.pages.insert(file.file_path, record.clone());
            }
        }
    }

    pub(super) fn fail(&mut self, job: &JobHandle, address: String, reason: String) {
        job.add_file(
            &address,
            FileState::Failed {
                reason: reason.clone(),
            },
        );
        self.count_failure(address, reason);
    }

    /// Counts a failure the job already lists.
    pub(super) fn count_failure(&mut self, address: String, reason: String) {
        self.failed += 1;
        if self.failures.len() < LISTED_FAILURES {
            self.failures.push(PageFailure {
                url: address,
                reason,
            });
        }
    }

    /// Why the job fails instead of publishing, if it does: nothing was
    /// found, or most of what was tried failed (a site down, a wrong
    /// scope), which must not replace a good version.
    pub(super) fn verdict(&self) -> Option<String> {
        let tried = self.changed + self.unchanged + self.failed;
        if tried == 0 {
            let mut why =
                "nothing was found to index: no page within the crawl's scope could be fetched"
                    .to_owned();
            if let Some(first) = self.notes.first() {
                why.push_str(&format!(" ({first})"));
            }
            return Some(why);
        }
        if self.changed + self.unchanged == 0 {
            let why = self
                .failures
                .first()
                .map(|f| format!("{}: {}", f.url, f.reason))
                .unwrap_or_default();
            return Some(format!(
                "nothing was stored, and the version is as it was: {why}"
            ));
        }
        (self.failed * 2 > tried).then(|| {
            let first = self
                .failures
                .first()
                .map(|f| format!("; the first: {} ({})", f.url, f.reason))
                .unwrap_or_default();
            format!(
                "{} of {tried} pages failed, so nothing was published and the version is as it was{first}",
                self.failed
            )
        })
    }

    /// The source's state after a publish: pages whose document did not
    /// make it into the version (a failed extraction) are left out, so the
    /// next fetch reads them again.
    pub(super) fn state(mut self, job: &JobHandle) -> SourceState {
        let status = job.status();
        for file in &status.files {
            match file.state {
                FileState::Failed { .. } if !self.keep.contains(&file.file_path) => {
                    self.pages.remove(&file.file_path);
                }
                // A package's documents, known by their paths in it: kept
                // whole while its archive is unchanged.
                FileState::Stored { .. } => {
                    self.pages.entry(file.file_path.clone()).or_default();
                }
                _ => {}
            }
        }
        let mut summary = self.summary(job);
        summary.state = JobState::Done;
        SourceState {
            last_refresh: Some(summary),
            refreshed_at: now_secs(),
            pages: self.pages,
            job: None,
        }
    }

    /// How the fetch went, as the job stands now. A package counts its
    /// documents, not its archive: one README is one page, changed or not.
    pub(super) fn summary(&self, job: &JobHandle) -> RefreshSummary {
        let status = job.status();
        let (pages, changed) = match &self.archive {
            Some(archive) => (
                self.pages.keys().filter(|k| *k != archive).count(),
                status
                    .files
                    .iter()
                    .filter(|f| matches!(f.state, FileState::Stored { .. }))
                    .count(),
            ),
            None => (self.pages.len(), self.changed),
        };
        RefreshSummary {
            job_id: status.id,
            finished_at: rfc3339(now_secs()),
            state: status.state,
            pages,
            changed,
            unchanged: self.unchanged,
            removed: self.removed.len(),
            failures: self.failures.clone(),
            failed: self.failed,
            notes: self.notes.clone(),
        }
    }
}

/// How a job that ended without its process keeping the source's state
/// went (it was killed, and ended `interrupted` by another process), from
/// its stored status: what it did file by file, and why it ended. `at` is
/// when its status was last written, in seconds since the epoch; `pages`
/// what the version holds.
pub fn summary_of_stored(
    status: &index_core::job::JobStatus,
    at: u64,
    pages: usize,
) -> RefreshSummary {
    let count =
        |wanted: fn(&FileState) -> bool| status.files.iter().filter(|f| wanted(&f.state)).count();
    let failures: Vec<PageFailure> = status
        .files
        .iter()
        .filter_map(|f| match &f.state {
            FileState::Failed { reason } => Some(PageFailure {
                url: f.file_path.clone(),
                reason: reason.clone(),
            }),
            _ => None,
        })
        .collect();
    RefreshSummary {
        job_id: status.id.clone(),
        finished_at: rfc3339(at),
        state: status.state,
        pages,
        changed: count(|s| matches!(s, FileState::Stored { .. })),
        unchanged: count(|s| matches!(s, FileState::Unchanged)),
        removed: count(|s| matches!(s, FileState::Removed { .. })),
        failed: failures.len(),
        failures: failures.into_iter().take(LISTED_FAILURES).collect(),
        notes: status.error.iter().chain(&status.notes).cloned().collect(),
    }
}

/// How a job went that left no status at all: its process died before it
/// wrote one. `pages` is what the version holds.
pub fn summary_of_vanished(job_id: &str, pages: usize) -> RefreshSummary {
    RefreshSummary {
        job_id: job_id.to_owned(),
        finished_at: rfc3339(now_secs()),
        state: JobState::Interrupted,
        pages,
        changed: 0,
        unchanged: 0,
        removed: 0,
        failures: Vec::new(),
        failed: 0,
        notes: vec![
            "its process stopped (killed, crashed or restarted) before the job wrote its status; nothing it fetched was published".to_owned(),
        ],
    }
}

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as an RFC 3339 UTC time.
fn rfc3339(secs: u64) -> String {
    let at = UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_651_200), "2026-11-26T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
    }

    #[test]
    fn most_pages_failing_fails_the_job() {
        let mut tally = Tally {
            changed: 1,
            failed: 2,
            ..Tally::default()
        };
        assert!(tally
            .verdict()
            .is_some_and(|v| v.contains("2 of 3 pages failed")));
        tally.changed = 2;
        assert_eq!(tally.verdict(), None);
        assert!(Tally::default().verdict().is_some());
        let nothing = Tally {
            failed: 1,
            failures: vec![PageFailure {
                url: "six-1.16.0.tar.gz".into(),
                reason: "more than 3 entries".into(),
            }],
            ..Tally::default()
        };
        assert!(nothing
            .verdict()
            .is_some_and(|v| v.starts_with("nothing was stored") && v.contains("3 entries")));
    }
}
