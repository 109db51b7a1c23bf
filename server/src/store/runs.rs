//! Which processes on a store are alive: how a job left `running` by a
//! process that died is told from one that is still at work.
//!
//! Every process that opens a store is a *run*, with a random id that its
//! jobs' ids carry (`job-<run>-<n>`). A job's status row says `running`
//! until its process writes the end; a process killed with `kill -9`
//! never does, and the job stayed `running` forever, its event stream
//! open. So each run can be asked after:
//!
//! - On a local store, a run holds an OS lock (`flock`) on a file of its
//!   own under [`RUNS_DIR`] for as long as it lives. The kernel drops the
//!   lock when the process dies however it dies, so whoever can take the
//!   lock knows its owner is gone: exact, and at once.
//! - On an object store there are no locks that die with a process. A
//!   running job's process writes its status at least every
//!   [`super::job_log::HEARTBEAT`]; a job not written for [`STALE_AFTER`]
//!   is taken for dead.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where runs keep their lock files, beside the store's tables.
pub const RUNS_DIR: &str = ".docshelf-runs";

/// How long a running job on an object store may go unwritten before its
/// process is taken for dead: several heartbeats, so one slow write (a
/// stalled object store, a busy machine) does not end a live job.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// This process's run on a store, and how other runs are asked after.
pub struct Runs {
    id: String,
    locks: Option<Locks>,
}

/// The lock files of a local store's runs.
struct Locks {
    dir: PathBuf,
    /// This run's own lock, held until the process ends.
    _own: File,
}

impl Runs {
    /// A new run on the local store in `store_dir`. If the lock file cannot
    /// be made (a read-only store), runs are judged by their heartbeats.
    pub fn local(store_dir: &Path) -> Self {
        let id = new_id();
        let dir = store_dir.join(RUNS_DIR);
        let own = std::fs::create_dir_all(&dir)
            .and_then(|()| File::create(dir.join(lock_name(&id))))
            .and_then(|file| file.try_lock().map(|()| file).map_err(std::io::Error::from));
        match own {
            Ok(file) => {
                let locks = Locks { dir, _own: file };
                locks.sweep(&id);
                Self {
                    id,
                    locks: Some(locks),
                }
            }
            Err(err) => {
                tracing::warn!(%err, dir = %dir.display(), "cannot hold a run lock: interrupted jobs are found by their heartbeats only");
                Self { id, locks: None }
            }
        }
    }

    /// A new run on an object store (or in memory): judged by heartbeats.
    pub fn heartbeat_only() -> Self {
        Self {
            id: new_id(),
            locks: None,
        }
    }

    /// This run's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `run` is still alive; `last_seen_micros` is when it last
    /// wrote the job in question (its heartbeat).
    pub fn alive(&self, run: &str, last_seen_micros: i64) -> bool {
        if run == self.id {
            return true;
        }
        match &self.locks {
            Some(locks) => locks.alive(run),
            None => {
                let age = super::now_micros().saturating_sub(last_seen_micros);
                u128::try_from(age).unwrap_or(0) < STALE_AFTER.as_micros()
            }
        }
    }
}

impl Locks {
    /// Removes the lock files of runs that are gone (one is left by every
    /// process that ended), keeping `own`'s.
    fn sweep(&self, own: &str) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(run) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
                continue;
            };
            if run != own {
                // Removes the file when its run is gone.
                self.alive(run);
            }
        }
    }

    /// Whether `run` still holds its lock. A run with no lock file is gone
    /// (or never had one: a store written before runs existed).
    fn alive(&self, run: &str) -> bool {
        if run.is_empty() || run.contains(['/', '\\', '.']) {
            return false;
        }
        let path = self.dir.join(lock_name(run));
        let Ok(file) = File::options().write(true).open(&path) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                // Its owner is gone: the file is litter now.
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(err)) => {
                tracing::warn!(%err, run, "cannot ask after a run's lock: taking it for alive");
                true
            }
        }
    }
}

fn lock_name(run: &str) -> String {
    format!("{run}.lock")
}

fn new_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    uuid[..12].to_owned()
}

/// The run a job id names (`job-<run>-<n>`), if it names one.
pub fn run_of(job_id: &str) -> Option<&str> {
    let rest = job_id.split_once('-')?.1;
    let (run, n) = rest.rsplit_once('-')?;
    (!run.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_alive_while_its_lock_is_held_and_dead_after() {
        let dir = tempfile::tempdir().expect("dir");
        let me = Runs::local(dir.path());
        let other = Runs::local(dir.path());
        let other_id = other.id().to_owned();
        assert!(me.alive(&other_id, 0), "a live run's lock is held");
        drop(other);
        assert!(!me.alive(&other_id, 0), "the lock went with its run");
        let gone = Runs::local(dir.path());
        let gone_id = gone.id().to_owned();
        drop(gone);
        let _next = Runs::local(dir.path());
        assert!(
            !dir.path().join(RUNS_DIR).join(lock_name(&gone_id)).exists(),
            "a new run sweeps the lock files of runs that are gone"
        );
        assert!(!me.alive("never-was", 0));
        assert!(me.alive(me.id(), 0));
    }

    #[test]
    fn without_locks_a_run_is_judged_by_its_heartbeat() {
        let runs = Runs::heartbeat_only();
        assert!(runs.alive("other", super::super::now_micros()));
        assert!(!runs.alive("other", 0));
    }

    #[test]
    fn job_ids_name_their_run() {
        assert_eq!(run_of("job-0123abcd4567-12"), Some("0123abcd4567"));
        assert_eq!(run_of("cli-0123abcd4567-1"), Some("0123abcd4567"));
        assert_eq!(run_of("job-x"), None);
        assert_eq!(run_of("nonsense"), None);
    }
}
