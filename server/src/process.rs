//! Child processes run within bounds: CPU time (`RLIMIT_CPU`), wall time,
//! address space (`RLIMIT_AS`), at nice 19, killed when the work they do
//! for is stopped, and killed with the server. docshelf runs other tools
//! only through here (OCR's `pdftoppm` and `tesseract`), so that a tool fed
//! a hostile file cannot take the machine or outlive its request.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most of a tool's error output kept for a message.
const STDERR_KEPT: usize = 4096;

/// Why a bounded run failed. The messages name the tool and the bound; the
/// caller says which setting sets it.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("{tool} used more than {secs} s of CPU time and was stopped")]
    CpuTime { tool: &'static str, secs: u64 },
    #[error("{tool} took longer than {secs} s and was stopped")]
    WallTime { tool: &'static str, secs: u64 },
    #[error("{tool} failed ({status}) within its {mib} MiB of memory{}", detail(.stderr))]
    Failed {
        tool: &'static str,
        status: ExitStatus,
        mib: u64,
        stderr: String,
    },
    #[error("cannot run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        source: std::io::Error,
    },
    #[error("cannot wait for a tool: {0}")]
    Io(#[from] std::io::Error),
    #[error("the work was stopped")]
    Stopped,
}

fn detail(stderr: &str) -> String {
    first_line(stderr).map_or_else(String::new, |line| format!(": {line}"))
}

/// The first line a tool wrote that says something.
pub fn first_line(stderr: &str) -> Option<&str> {
    stderr.lines().map(str::trim).find(|l| !l.is_empty())
}

/// What one run of a tool may take.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// CPU time (`RLIMIT_CPU`, whole seconds, at least one).
    pub cpu: Duration,
    /// Wall time, after which it is killed.
    pub wall: Duration,
    /// Address space (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// The largest file it may write (`RLIMIT_FSIZE`), where that bounds
    /// what it downloads (git's packs); `None` for no bound.
    pub file_bytes: Option<u64>,
}

/// Runs `command` at nice 19 within `bounds`, its output discarded and its
/// error output returned (the first few KiB). Kills it when its wall time
/// is up or `stop` is set; the kernel kills it past its CPU time, and its
/// allocations fail past its memory. Blocks until it has ended.
pub fn run_bounded(
    tool: &'static str,
    command: &mut Command,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<String, ProcessError> {
    run_within(tool, command, Stdio::null(), bounds, stop)
}

/// [`run_bounded`], with the child's output going to `stdout`.
pub fn run_within(
    tool: &'static str,
    command: &mut Command,
    stdout: Stdio,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<String, ProcessError> {
    let (mut child, drain) = spawn_bounded(tool, command, stdout, bounds)?;
    wait_bounded(tool, &mut child, drain, bounds, stop)
}

/// What a tool's output, read as it came, gave, and how the tool ended.
#[derive(Debug)]
pub struct Streamed<T> {
    /// What the reader returned.
    pub read: T,
    /// How the tool ended: its error output, or why it failed (a tool
    /// whose reader stopped early ends on a broken pipe).
    pub ended: Result<String, ProcessError>,
}

/// [`run_bounded`], with the child's output read by `read` as it is
/// written, on a thread of its own, rather than kept whole: a reader that
/// has seen enough returns, and the tool ends on the broken pipe (or at
/// its bounds) instead of writing the rest anywhere. Fails only when the
/// tool cannot be started.
pub fn run_reading<T: Send>(
    tool: &'static str,
    command: &mut Command,
    bounds: &Bounds,
    stop: &AtomicBool,
    read: impl FnOnce(ChildStdout) -> T + Send,
) -> Result<Streamed<T>, ProcessError> {
    let (mut child, drain) = spawn_bounded(tool, command, Stdio::piped(), bounds)?;
    let stdout = child.stdout.take();
    std::thread::scope(|scope| {
        // Dropping the pipe when the reader returns is what ends a tool
        // that still has more to say.
        let reader = scope.spawn(move || stdout.map(read));
        let ended = wait_bounded(tool, &mut child, drain, bounds, stop);
        match reader.join() {
            Ok(Some(read)) => Ok(Streamed { read, ended }),
            Ok(None) => Err(ProcessError::Io(std::io::Error::other(
                "the tool's output was not piped",
            ))),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Starts `command` within `bounds`, its error output drained (the first
/// few KiB kept) on a thread of its own, so that a tool that writes a lot
/// of errors never blocks on a full pipe.
fn spawn_bounded(
    tool: &'static str,
    command: &mut Command,
    stdout: Stdio,
    bounds: &Bounds,
) -> Result<(Child, Option<JoinHandle<String>>), ProcessError> {
    command
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    limit_child(command, bounds);
    let mut child = command
        .spawn()
        .map_err(|source| ProcessError::Spawn { tool, source })?;
    let drain = child.stderr.take().map(|stderr| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr)
                .take(STDERR_KEPT as u64)
                .read_to_end(&mut kept);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            String::from_utf8_lossy(&kept).into_owned()
        })
    });
    Ok((child, drain))
}

/// Waits for `child` to end: killed when its wall time is up or `stop` is
/// set. Its error output when it succeeded, else why it failed.
fn wait_bounded(
    tool: &'static str,
    child: &mut Child,
    drain: Option<JoinHandle<String>>,
    bounds: &Bounds,
    stop: &AtomicBool,
) -> Result<String, ProcessError> {
    let deadline = Instant::now() + bounds.wall;
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(err) => {
                // Never leave it running (nor the drain below waiting on it).
                let _ = child.kill();
                let _ = child.wait();
                break Err(ProcessError::Io(err));
            }
        }
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break Err(if stop.load(Ordering::Relaxed) {
                ProcessError::Stopped
            } else {
                ProcessError::WallTime {
                    tool,
                    secs: bounds.wall.as_secs(),
                }
            });
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
    };
    let stderr = drain.and_then(|d| d.join().ok()).unwrap_or_default();
    let status = ended?;
    if status.success() {
        return Ok(stderr);
    }
    if killed_for_cpu(&status) {
        return Err(ProcessError::CpuTime {
            tool,
            secs: cpu_seconds(bounds.cpu),
        });
    }
    Err(ProcessError::Failed {
        tool,
        status,
        mib: bounds.memory_bytes / (1024 * 1024),
        stderr,
    })
}

fn cpu_seconds(cpu: Duration) -> u64 {
    cpu.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(unix)]
fn killed_for_cpu(status: &ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    // Past the soft limit the kernel sends SIGXCPU, past the hard one (a
    // second later) SIGKILL; nothing else here sends SIGKILL once the
    // child has ended by itself.
    matches!(status.signal(), Some(libc::SIGXCPU | libc::SIGKILL))
}

#[cfg(not(unix))]
fn killed_for_cpu(_: &ExitStatus) -> bool {
    false
}

/// Sets the child's limits between fork and exec.
#[cfg(unix)]
fn limit_child(command: &mut Command, bounds: &Bounds) {
    use std::os::unix::process::CommandExt;
    let memory = libc::rlim_t::try_from(bounds.memory_bytes).unwrap_or(libc::RLIM_INFINITY);
    let cpu = libc::rlim_t::try_from(cpu_seconds(bounds.cpu)).unwrap_or(libc::RLIM_INFINITY);
    let file = bounds.file_bytes.map_or(libc::RLIM_INFINITY, |bytes| {
        libc::rlim_t::try_from(bytes).unwrap_or(libc::RLIM_INFINITY)
    });
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed: it calls setrlimit,
    // setpriority and prctl (system calls) on values computed before the
    // fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let address_space = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &address_space) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let cpu_time = libc::rlimit {
                rlim_cur: cpu,
                rlim_max: cpu.saturating_add(1),
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &cpu_time) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let file_size = libc::rlimit {
                rlim_cur: file,
                rlim_max: file,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &file_size) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Lowest priority: OCR takes only what searches leave. Raising
            // the nice value needs no privilege; a failure leaves it as is.
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            // The tool dies with the thread waiting on it (a server
            // killed mid-page leaves no OCR behind).
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn limit_child(_: &mut Command, _: &Bounds) {}

/// An executable named `name` in a directory of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Sets a flag when dropped: the job's future, dropped when the job is
/// cancelled, stops the OCR running for it on a blocking thread.
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_tool_past_its_time_is_killed_and_one_past_its_memory_fails() {
        let stop = AtomicBool::new(false);
        let bounds = Bounds {
            cpu: Duration::from_secs(600),
            wall: Duration::from_millis(200),
            memory_bytes: 1 << 30,
            file_bytes: None,
        };
        // `sleep` uses no CPU: only the wall time stops it.
        let err = run_bounded("sleep", Command::new("sleep").arg("600"), &bounds, &stop)
            .expect_err("stopped");
        assert!(matches!(err, ProcessError::WallTime { .. }), "{err}");

        // A busy loop is stopped by its CPU time, whatever the wall time.
        let bounds = Bounds {
            cpu: Duration::from_secs(1),
            wall: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
            file_bytes: None,
        };
        let mut busy = Command::new("sh");
        busy.args(["-c", "while :; do :; done"]);
        let err = run_bounded("sh", &mut busy, &bounds, &stop).expect_err("stopped");
        assert!(
            matches!(err, ProcessError::CpuTime { secs: 1, .. }),
            "{err}"
        );

        // 64 MiB of address space is too little for a 512 MiB buffer.
        let bounds = Bounds {
            cpu: Duration::from_secs(60),
            wall: Duration::from_secs(3600),
            memory_bytes: 64 << 20,
            file_bytes: None,
        };
        let err = run_bounded(
            "python3",
            Command::new("python3").args(["-c", "b = bytearray(512 << 20)"]),
            &bounds,
            &stop,
        )
        .expect_err("out of memory");
        // The limit, not something else, stopped it: Python says so.
        assert!(
            matches!(&err, ProcessError::Failed { mib: 64, stderr, .. } if stderr.contains("MemoryError")),
            "{err}"
        );

        // And it runs at nice 19.
        let mut nice = Command::new("sh");
        nice.args([
            "-c",
            "test \"$(nice)\" = 19 || { echo \"nice $(nice)\" >&2; exit 1; }",
        ]);
        run_bounded("sh", &mut nice, &bounds, &stop).expect("nice 19");
    }

    #[cfg(unix)]
    #[test]
    fn a_reader_that_has_seen_enough_ends_the_tool() {
        use std::io::{BufRead, BufReader};
        let stop = AtomicBool::new(false);
        let bounds = Bounds {
            cpu: Duration::from_secs(600),
            wall: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
            file_bytes: None,
        };
        // `yes` writes forever: only the reader's leaving ends it.
        let streamed = run_reading("yes", &mut Command::new("yes"), &bounds, &stop, |out| {
            BufReader::new(out).lines().take(1000).count()
        })
        .expect("runs");
        assert_eq!(streamed.read, 1000);
        assert!(streamed.ended.is_err(), "{:?}", streamed.ended);

        // A tool that ends by itself is read to its end.
        let mut printf = Command::new("printf");
        printf.arg("a\\nb\\n");
        let streamed = run_reading("printf", &mut printf, &bounds, &stop, |out| {
            BufReader::new(out).lines().count()
        })
        .expect("runs");
        assert_eq!(streamed.read, 2);
        assert!(streamed.ended.is_ok(), "{:?}", streamed.ended);
    }

    #[cfg(unix)]
    #[test]
    fn a_stopped_job_kills_its_tool() {
        let stop = Arc::new(AtomicBool::new(false));
        let bounds = Bounds {
            cpu: Duration::from_secs(600),
            wall: Duration::from_secs(3600),
            memory_bytes: 1 << 30,
            file_bytes: None,
        };
        let flag = stop.clone();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(StopOnDrop(flag));
        });
        let err = run_bounded("sleep", Command::new("sleep").arg("3600"), &bounds, &stop)
            .expect_err("stopped");
        setter.join().expect("setter");
        assert!(matches!(err, ProcessError::Stopped), "{err}");
    }
}
