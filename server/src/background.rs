//! Work that must yield the CPU to searches: uploads.
//!
//! On a 2-core machine an upload keeps both cores busy for minutes, and a
//! search that arrives meanwhile shares them with it, at equal priority an
//! order of magnitude slower than idle (docs/benchmarks.md, "Search while
//! uploading").
//!
//! So an upload's threads run at a lower scheduling priority (a higher
//! `nice`): its jobs on a runtime of their own, its embedding passes on a
//! thread pool of their own. When nothing else wants the CPU they still get
//! all of it; when a search does, the kernel gives the search the larger
//! share. Only lowering is asked for, which needs no privilege. Where it
//! cannot be done (not Linux) the threads run at normal priority.
//!
//! With the query worker of its own (`embed::queue`) and jobs that publish
//! whole, this keeps a search's p99 during an upload close to idle (the
//! figures are in docs/benchmarks.md, "Search while uploading").
//! LanceDB's compute pool is shared by uploads and searches, and stays at
//! normal priority.

use std::future::Future;

/// How far below the process's own priority an upload's threads run: at
/// nice 10 a thread weighs 110 against a nice-0 thread's 1024 in Linux's
/// fair scheduler.
pub const NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority by [`NICE`] (relative,
/// so an operator's own `nice` on docshelf carries over). Called by every
/// thread of an upload's pools as it starts.
pub fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        let target = (thread_nice() + NICE).min(19);
        // SAFETY: `gettid` and `setpriority` only read their arguments; on
        // Linux, PRIO_PROCESS with a thread id applies to that one thread.
        let result =
            unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, target) };
        if result != 0 {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "could not lower an upload thread's priority"
            );
        }
    }
}

/// The calling thread's nice value (a -1 error reads as nice -1: harmless
/// here, it only moves the target by one).
#[cfg(target_os = "linux")]
fn thread_nice() -> i32 {
    // SAFETY: as in `lower_this_thread`.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// An async runtime whose threads run below normal priority, for upload
/// jobs. Everything a job awaits runs there too: extraction (its blocking
/// threads), LanceDB's writes and index refreshes.
pub struct Background {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Background {
    /// Two workers: a job is a few sequential steps per file, and more
    /// would only compete with each other.
    pub fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("upload")
            .on_thread_start(lower_this_thread)
            .enable_all()
            .build()?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `job` on the background runtime.
    pub fn spawn<F>(&self, job: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some(runtime) = &self.runtime {
            runtime.spawn(job);
        }
    }
}

impl Drop for Background {
    /// A runtime cannot be dropped from async code (the engine often is):
    /// its jobs are let go instead of waited for. A job cut short leaves
    /// each document whole, old or new, as after a crash.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_job_runs_below_the_priority_of_the_thread_that_started_it() {
        let background = Background::start().expect("runtime");
        let (tx, rx) = std::sync::mpsc::channel();
        background.spawn(async move {
            let _ = tx.send(thread_nice());
        });
        let job_nice = rx.recv().expect("the job ran");
        assert_eq!(job_nice, (thread_nice() + NICE).min(19));
    }

    #[test]
    fn the_last_owner_may_let_go_from_a_job_of_its_own() {
        // An engine's last reference can be the one its upload job holds.
        let background = std::sync::Arc::new(Background::start().expect("runtime"));
        let (tx, rx) = std::sync::mpsc::channel();
        let owner = background.clone();
        background.spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            drop(owner);
            let _ = tx.send(());
        });
        drop(background);
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the job ran to its end without a panic");
    }
}
