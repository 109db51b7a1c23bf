//! Jobs and their progress, observable while they run.
//!
//! Each job's status lives in a `watch` channel: the API reads the latest
//! state, a server-sent-event stream or the CLI's progress printer follow
//! every change, and nobody polls.
//!
//! One job's handle and the registry of jobs are kept in one file on
//! purpose, though it runs past this crate's usual length: the registry reads and closes
//! the handles' private state (their status channel, when they finished),
//! which would otherwise have to be opened to the whole module.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use index_core::job::{FileProgress, FileState, JobState, JobStatus, UploadAccepted};
use subtle::ConstantTimeEq;
use tokio::sync::watch;

/// A file's line in a job's status. It stays valid while archives listed
/// before it expand into their entries, so the pipeline keeps no offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileSlot(u64);

/// Which position of `JobStatus::files` each slot is at.
#[derive(Default)]
struct Lines {
    order: Vec<FileSlot>,
    at: HashMap<FileSlot, usize>,
    next: u64,
}

impl Lines {
    fn fresh(&mut self) -> FileSlot {
        self.next += 1;
        FileSlot(self.next)
    }
}

/// One job's live status.
pub struct JobHandle {
    status: watch::Sender<JobStatus>,
    library: String,
    version: String,
    lines: Mutex<Lines>,
    /// Grants following this job's events (see [`UploadAccepted`]).
    watch_token: String,
    /// When the job ended, once it has.
    finished: OnceLock<Instant>,
    /// When it started: the pace its time-left estimate is taken from.
    started: Instant,
    /// Files through their work, counted as they get there, so that the
    /// estimate costs nothing per change (a crawl has thousands of files).
    through: std::sync::atomic::AtomicUsize,
    /// Set to ask the job to stop (its version is being deleted).
    cancel: watch::Sender<bool>,
}

impl JobHandle {
    fn new(id: String, library: String, version: String) -> Self {
        let (status, _) = watch::channel(JobStatus {
            id,
            library: library.clone(),
            version: version.clone(),
            state: JobState::Running,
            files: Vec::new(),
            error: None,
            notes: Vec::new(),
            expected: None,
            eta_secs: None,
        });
        Self {
            status,
            library,
            version,
            lines: Mutex::default(),
            watch_token: uuid::Uuid::new_v4().simple().to_string(),
            finished: OnceLock::new(),
            started: Instant::now(),
            through: std::sync::atomic::AtomicUsize::new(0),
            cancel: watch::channel(false).0,
        }
    }

    /// Asks the job to stop: it publishes nothing and ends `cancelled`.
    pub fn cancel(&self) {
        self.cancel.send_replace(true);
    }

    /// Resolves once the job is asked to stop while it is still running.
    /// A job that has begun to publish is not stopped: it runs to its end,
    /// so that what it says it did is what happened (a delete waiting on it
    /// then deletes what it published).
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.subscribe();
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|stop| *stop).await;
        if self.status.borrow().state != JobState::Running {
            std::future::pending::<()>().await;
        }
    }

    /// Resolves once the job has ended (done, interrupted or cancelled).
    pub async fn finished(&self) {
        let mut rx = self.status.subscribe();
        let _ = rx.wait_for(|s| s.state.is_finished()).await;
    }

    /// Whether the job is still writing into `library` (and `version`,
    /// when given).
    pub fn writes_into(&self, library: &str, version: Option<&str>) -> bool {
        self.library == library
            && version.is_none_or(|v| v == self.version)
            && !self.status.borrow().state.is_finished()
    }

    /// What the upload answers: the job's id and its watch token.
    pub fn accepted(&self) -> UploadAccepted {
        UploadAccepted {
            job_id: self.status.borrow().id.clone(),
            watch_token: self.watch_token.clone(),
        }
    }

    /// The job's watch token (kept with its status in the store).
    pub(crate) fn watch_token(&self) -> &str {
        &self.watch_token
    }

    /// Whether `token` is this job's watch token.
    pub fn admits(&self, token: &str) -> bool {
        bool::from(token.as_bytes().ct_eq(self.watch_token.as_bytes()))
    }

    /// A standalone job (`Engine::ingest`'s), not listed in any registry;
    /// `run` is the store's run (see [`crate::store::runs`]): its id is
    /// `cli-<run>-<n>`, unique like a registered job's.
    pub(crate) fn detached(run: &str, library: &str, version: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed) + 1;
        Self::new(
            format!("cli-{run}-{n}"),
            library.to_owned(),
            version.to_owned(),
        )
    }

    /// The job's id.
    pub fn id(&self) -> String {
        self.status.borrow().id.clone()
    }

    /// The library the job stores into.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// The version the job stores into.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The latest status.
    pub fn status(&self) -> JobStatus {
        self.status.borrow().clone()
    }

    /// Follows every change of the status.
    pub fn subscribe(&self) -> watch::Receiver<JobStatus> {
        self.status.subscribe()
    }

    fn lines(&self) -> std::sync::MutexGuard<'_, Lines> {
        self.lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a file to the job.
    pub fn add_file(&self, file_path: &str, state: FileState) -> FileSlot {
        let mut lines = self.lines();
        let slot = lines.fresh();
        let at = lines.order.len();
        lines.order.push(slot);
        lines.at.insert(slot, at);
        if state.is_through() {
            self.through
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.status.send_modify(|s| {
            s.files.push(FileProgress {
                file_path: file_path.to_owned(),
                state,
                warnings: Vec::new(),
            });
        });
        slot
    }

    /// Changes the file at `slot`.
    fn modify_file(&self, slot: FileSlot, change: impl FnOnce(&mut FileProgress)) {
        let lines = self.lines();
        let Some(&at) = lines.at.get(&slot) else {
            return;
        };
        let elapsed = self.started.elapsed();
        self.status.send_modify(|s| {
            if let Some(file) = s.files.get_mut(at) {
                let was = file.state.is_through();
                change(file);
                if !was && file.state.is_through() {
                    self.through
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            let through = self.through.load(std::sync::atomic::Ordering::Relaxed);
            s.eta_secs = time_left(s, through, elapsed);
        });
    }

    /// Moves the file at `slot` to `state`.
    pub fn set_file(&self, slot: FileSlot, state: FileState) {
        self.modify_file(slot, |f| f.state = state);
    }

    /// Says how many files the job will take (a sitemap's pages, a
    /// repository's docs), so its progress can show a total and a time left.
    pub fn expect(&self, files: usize) {
        self.status.send_modify(|s| s.expected = Some(files));
    }

    /// Raises the job's total to the files it lists: an archive's
    /// documents are known once it is opened (a package's docs entries, a
    /// ZIP's pages), which gives its progress a total and a time left.
    pub fn expect_listed(&self) {
        self.status.send_modify(|s| {
            s.expected = Some(s.expected.unwrap_or(0).max(s.files.len()));
        });
    }

    /// Records a note about the job as a whole.
    pub fn note(&self, note: &str) {
        self.status.send_modify(|s| s.notes.push(note.to_owned()));
    }

    /// Records warnings for the file at `slot`.
    pub fn warn_file(&self, slot: FileSlot, warnings: Vec<String>) {
        if !warnings.is_empty() {
            self.modify_file(slot, |f| f.warnings.extend(warnings));
        }
    }

    /// Replaces the file at `slot` (an uploaded archive) by the documents
    /// it held, in its place, and returns their slots.
    pub fn expand_file(&self, slot: FileSlot, files: Vec<FileProgress>) -> Vec<FileSlot> {
        let mut lines = self.lines();
        let Some(&at) = lines.at.get(&slot) else {
            return Vec::new();
        };
        let added: Vec<FileSlot> = files.iter().map(|_| lines.fresh()).collect();
        lines.order.splice(at..=at, added.iter().copied());
        lines.at.remove(&slot);
        // Positions after the archive moved: once per archive, O(files).
        let Lines {
            order, at: index, ..
        } = &mut *lines;
        for (position, s) in order.iter().enumerate().skip(at) {
            index.insert(*s, position);
        }
        self.status.send_modify(|s| {
            s.files.splice(at..=at, files);
        });
        added
    }

    /// Ends the job before it published (see [`JobStatus::stop`]).
    pub fn stop(&self, state: JobState, error: &str, file_reason: &str) {
        let _ = self.finished.set(Instant::now());
        self.status
            .send_modify(|s| s.stop(state, error, file_reason));
    }

    pub fn set_state(&self, state: JobState, error: Option<String>) {
        if state.is_finished() {
            let _ = self.finished.set(Instant::now());
        }
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

/// How long a finished job's status stays readable: long enough for a
/// client to read the outcome after its stream ends, short enough that an
/// idle server does not hold every job of the day.
pub const KEEP_FINISHED: Duration = Duration::from_secs(3600);

/// The server's jobs: every running one, and the latest finished ones.
pub struct Jobs {
    /// The store's run this process is (see [`crate::store::runs`]).
    run: String,
    next: AtomicU64,
    jobs: RwLock<JobTable>,
    keep_finished: Duration,
}

/// Why a job could not start: another is writing the same version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job {running} is still writing this version")]
pub struct VersionBusy {
    pub running: String,
}

#[derive(Default)]
struct JobTable {
    by_id: HashMap<String, Arc<JobHandle>>,
    /// Ids in creation order, for eviction.
    order: std::collections::VecDeque<String>,
}

impl Jobs {
    /// The registry of run `run` (the store's: see [`crate::store::runs`]).
    pub fn new(run: &str) -> Self {
        Self {
            run: run.to_owned(),
            next: AtomicU64::new(0),
            jobs: RwLock::default(),
            keep_finished: KEEP_FINISHED,
        }
    }

    /// Registers a new job, unless another of this process's jobs is still
    /// writing the same library and version: two writers into one version
    /// would publish one after the other, and the later would silently win
    /// for every file both hold, so the second is refused instead.
    ///
    /// Its id is `job-<run>-<n>`: unique across restarts (each process is
    /// a new run), and it names the process that runs it.
    pub fn create(&self, library: &str, version: &str) -> Result<Arc<JobHandle>, VersionBusy> {
        let mut table = self
            .jobs
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(running) = table
            .by_id
            .values()
            .find(|j| j.writes_into(library, Some(version)))
        {
            return Err(VersionBusy {
                running: running.id(),
            });
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("job-{}-{n}", self.run);
        let handle = Arc::new(JobHandle::new(
            id.clone(),
            library.to_owned(),
            version.to_owned(),
        ));
        table.sweep(self.keep_finished);
        table.order.push_back(id.clone());
        table.by_id.insert(id, handle.clone());
        Ok(handle)
    }

    /// This process's jobs still writing into `library` (and `version`).
    pub fn writing_into(&self, library: &str, version: Option<&str>) -> Vec<Arc<JobHandle>> {
        self.jobs
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .by_id
            .values()
            .filter(|j| j.writes_into(library, version))
            .cloned()
            .collect()
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

    /// The same registry, keeping finished jobs for `keep` instead.
    pub fn keeping_finished(run: &str, keep: Duration) -> Self {
        Self {
            keep_finished: keep,
            ..Self::new(run)
        }
    }
}

impl JobTable {
    /// Forgets the oldest jobs while there are too many or they ended long
    /// ago. Jobs are swept oldest first and a running one stops the sweep
    /// (it resumes at the next upload), so each upload does O(1) amortised
    /// work, where a scan of the whole table would be O(n).
    fn sweep(&mut self, keep_finished: Duration) {
        while let Some(oldest) = self.order.front() {
            let finished = self.by_id.get(oldest).map_or(Some(Duration::MAX), |j| {
                j.finished.get().map(Instant::elapsed)
            });
            let Some(since) = finished else {
                break;
            };
            if self.order.len() < KEPT_JOBS && since < keep_finished {
                break;
            }
            if let Some(id) = self.order.pop_front() {
                self.by_id.remove(&id);
            }
        }
    }
}

/// Seconds left at the pace so far: the time per file through, times the
/// files still expected. `None` until one is through or without a total.
fn time_left(status: &JobStatus, through: usize, elapsed: std::time::Duration) -> Option<u64> {
    let expected = status.expected?;
    if through == 0 || through >= expected || status.state.is_finished() {
        return None;
    }
    let per_file = elapsed.as_secs_f64() / through as f64;
    Some((per_file * (expected - through) as f64).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_follows_the_pace_so_far() {
        let mut status = JobStatus {
            id: "j".into(),
            library: "l".into(),
            version: "1".into(),
            state: JobState::Running,
            files: Vec::new(),
            error: None,
            notes: Vec::new(),
            expected: Some(10),
            eta_secs: None,
        };
        let ten = std::time::Duration::from_secs(10);
        assert_eq!(time_left(&status, 0, ten), None, "nothing through yet");
        // One of ten through in 10 s: nine more at 10 s each.
        assert_eq!(time_left(&status, 1, ten), Some(90));
        assert_eq!(time_left(&status, 10, ten), None, "all through");
        status.expected = None;
        assert_eq!(time_left(&status, 1, ten), None);
    }

    #[test]
    fn a_second_job_into_a_version_being_written_is_refused_until_the_first_ends() {
        let jobs = Jobs::new("run");
        let first = jobs.create("lib", "1.0").expect("first");
        let Err(refused) = jobs.create("lib", "1.0") else {
            panic!("a second job into a busy version was accepted");
        };
        assert_eq!(refused.running, first.id());
        jobs.create("lib", "1.1").expect("another version is free");
        jobs.create("other", "1.0")
            .expect("another library is free");
        assert_eq!(jobs.writing_into("lib", None).len(), 2);
        first.set_state(JobState::Cancelled, None);
        jobs.create("lib", "1.0")
            .expect("free once the first ended");
        assert!(first.id().starts_with("job-run-"));
    }

    #[test]
    fn finished_jobs_are_forgotten_after_a_while_and_running_ones_never() {
        let jobs = Jobs::keeping_finished("run", Duration::ZERO);
        let running = jobs.create("lib", "1.0").expect("first");
        let done = jobs.create("lib", "2.0").expect("another version");
        done.set_state(JobState::Done, None);
        let running_id = running.status().id;
        let done_id = done.status().id;
        // The running job is oldest: it holds the sweep back.
        jobs.create("lib", "3.0").expect("a third");
        assert!(jobs.get(&running_id).is_some());
        assert!(jobs.get(&done_id).is_some());
        running.set_state(JobState::Done, None);
        jobs.create("lib", "4.0").expect("a fourth");
        assert!(jobs.get(&running_id).is_none());
        assert!(jobs.get(&done_id).is_none());
    }

    #[test]
    fn slots_follow_their_files_while_archives_expand() {
        let job = JobHandle::detached("run", "lib", "1.0");
        let first = job.add_file("a.zip", FileState::Queued);
        let second = job.add_file("b.zip", FileState::Queued);
        let last = job.add_file("c.md", FileState::Queued);
        let entry = |p: &str| FileProgress {
            file_path: p.into(),
            state: FileState::Queued,
            warnings: Vec::new(),
        };
        let inner = job.expand_file(first, vec![entry("a/1.md"), entry("a/2.md")]);
        let more = job.expand_file(
            second,
            vec![entry("b/1.md"), entry("b/2.md"), entry("b/3.md")],
        );
        job.set_file(inner[1], FileState::Extracting);
        job.set_file(more[2], FileState::Extracting);
        job.set_file(last, FileState::Extracting);
        // The archive's own slot is gone with its line.
        job.set_file(first, FileState::Extracting);
        let files = job.status().files;
        let paths: Vec<&str> = files.iter().map(|f| f.file_path.as_str()).collect();
        assert_eq!(
            paths,
            ["a/1.md", "a/2.md", "b/1.md", "b/2.md", "b/3.md", "c.md"]
        );
        let extracting: Vec<&str> = files
            .iter()
            .filter(|f| f.state == FileState::Extracting)
            .map(|f| f.file_path.as_str())
            .collect();
        assert_eq!(extracting, ["a/2.md", "b/3.md", "c.md"]);
    }

    #[test]
    fn a_job_is_cancelled_while_it_runs_and_never_once_it_publishes() {
        use futures::FutureExt;
        let job = JobHandle::detached("run", "lib", "1.0");
        assert!(job.cancelled().now_or_never().is_none(), "not asked yet");
        job.cancel();
        assert!(job.cancelled().now_or_never().is_some());
        job.set_state(JobState::Publishing, None);
        assert!(
            job.cancelled().now_or_never().is_none(),
            "a publishing job runs to its end"
        );
        job.set_state(JobState::Indexing, None);
        assert!(job.cancelled().now_or_never().is_none());
    }

    #[test]
    fn a_watch_token_admits_its_own_job_only() {
        let jobs = Jobs::new("run");
        let (a, b) = (
            jobs.create("lib", "1.0").expect("a"),
            jobs.create("lib", "2.0").expect("b"),
        );
        let token = a.accepted().watch_token;
        assert!(a.admits(&token));
        assert!(!b.admits(&token));
        assert!(!a.admits(""));
    }
}
