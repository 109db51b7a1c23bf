//! Jobs and their progress, observable while they run.
//!
//! Each job's status lives in a `watch` channel: the API reads the latest
//! state, a server-sent-event stream or the CLI's progress printer follow
//! every change, and nobody polls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use index_core::job::{FileProgress, FileState, JobState, JobStatus};
use tokio::sync::watch;

/// One job's live status.
pub struct JobHandle {
    status: watch::Sender<JobStatus>,
}

impl JobHandle {
    fn new(id: String, library: String, version: String) -> Self {
        let (status, _) = watch::channel(JobStatus {
            id,
            library,
            version,
            state: JobState::Running,
            files: Vec::new(),
            error: None,
        });
        Self { status }
    }

    /// A standalone job (the CLI's), not listed in any registry.
    pub fn detached(library: &str, version: &str) -> Self {
        Self::new("cli".into(), library.to_owned(), version.to_owned())
    }

    /// The latest status.
    pub fn status(&self) -> JobStatus {
        self.status.borrow().clone()
    }

    /// Follows every change of the status.
    pub fn subscribe(&self) -> watch::Receiver<JobStatus> {
        self.status.subscribe()
    }

    /// Adds a file to the job; returns its position.
    pub fn add_file(&self, file_path: &str, state: FileState) -> usize {
        let mut index = 0;
        self.status.send_modify(|s| {
            index = s.files.len();
            s.files.push(FileProgress {
                file_path: file_path.to_owned(),
                state,
                warnings: Vec::new(),
            });
        });
        index
    }

    /// Moves file `index` to `state`.
    pub fn set_file(&self, index: usize, state: FileState) {
        self.status.send_modify(|s| {
            if let Some(f) = s.files.get_mut(index) {
                f.state = state;
            }
        });
    }

    /// Records warnings for file `index`.
    pub fn warn_file(&self, index: usize, warnings: Vec<String>) {
        if warnings.is_empty() {
            return;
        }
        self.status.send_modify(|s| {
            if let Some(f) = s.files.get_mut(index) {
                f.warnings.extend(warnings);
            }
        });
    }

    /// Replaces file `index` (an uploaded archive) by the documents it held.
    pub fn expand_file(&self, index: usize, files: Vec<FileProgress>) -> std::ops::Range<usize> {
        let mut range = 0..0;
        self.status.send_modify(|s| {
            if index < s.files.len() {
                let count = files.len();
                s.files.splice(index..=index, files);
                range = index..index + count;
            }
        });
        range
    }

    pub fn set_state(&self, state: JobState, error: Option<String>) {
        self.status.send_modify(|s| {
            s.state = state;
            if error.is_some() {
                s.error = error;
            }
        });
    }
}

/// Finished jobs kept for their status, at most: past it the oldest
/// finished ones are forgotten, so memory does not grow with every upload.
pub const KEPT_JOBS: usize = 1024;

/// The server's jobs: every running one, and the latest finished ones.
#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    jobs: RwLock<JobTable>,
}

#[derive(Default)]
struct JobTable {
    by_id: HashMap<String, Arc<JobHandle>>,
    /// Ids in creation order, for eviction.
    order: std::collections::VecDeque<String>,
}

impl Jobs {
    /// Registers a new job. Its id is unique across restarts (a random
    /// part, then a counter), so an id from before a restart never names a
    /// new job.
    pub fn create(&self, library: &str, version: &str) -> Arc<JobHandle> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let run = uuid::Uuid::new_v4().simple().to_string();
        let id = format!("job-{}-{n}", &run[..12]);
        let handle = Arc::new(JobHandle::new(
            id.clone(),
            library.to_owned(),
            version.to_owned(),
        ));
        let mut table = self
            .jobs
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Forget the oldest jobs once they are done; a running one stops
        // the sweep, which resumes at the next upload.
        while table.order.len() >= KEPT_JOBS {
            let Some(oldest) = table.order.front() else {
                break;
            };
            let done = table
                .by_id
                .get(oldest)
                .is_none_or(|j| j.status().state == index_core::job::JobState::Done);
            if !done {
                break;
            }
            if let Some(id) = table.order.pop_front() {
                table.by_id.remove(&id);
            }
        }
        table.order.push_back(id.clone());
        table.by_id.insert(id, handle.clone());
        handle
    }

    /// A job by id.
    pub fn get(&self, id: &str) -> Option<Arc<JobHandle>> {
        self.jobs
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .by_id
            .get(id)
            .cloned()
    }
}
