//! The real `docshelf serve` binary in a process of its own: for what only
//! a process shows (being killed with SIGKILL, a restart on the same
//! store, a disk that fills up under it).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{free_port, model_dir, wait_until};

/// A `docshelf serve` process, killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl ServerProcess {
    /// Starts `docshelf serve` on the store in `data` with the real model on
    /// the CPU, plus `args`, and waits until it answers `/healthz`.
    pub async fn start(data: &Path, args: &[&str]) -> Self {
        Self::start_with(Command::new(env!("CARGO_BIN_EXE_docshelf")), data, args).await
    }

    /// As [`Self::start`], with the binary run by `command` (a wrapper such
    /// as `unshare … sh -c '…; exec "$0" "$@"'` that prepares the
    /// process's world first): the binary and its arguments are appended.
    pub async fn start_with(mut command: Command, data: &Path, args: &[&str]) -> Self {
        let port = free_port();
        let base = format!("http://127.0.0.1:{port}");
        if command.get_program() != env!("CARGO_BIN_EXE_docshelf") {
            command.arg(env!("CARGO_BIN_EXE_docshelf"));
        }
        command
            .arg("serve")
            .arg("--addr")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data")
            .arg(data)
            .arg("--model-dir")
            .arg(model_dir())
            .args(["--device", "cpu"])
            .args(args)
            .stdout(Stdio::null())
            // Its log only when asked for (`DOCSHELF_TEST_SERVER_LOG=1`):
            // tests that fill a disk make it long.
            .stderr(match std::env::var_os("DOCSHELF_TEST_SERVER_LOG") {
                Some(_) => Stdio::inherit(),
                None => Stdio::null(),
            });
        let mut child = command.spawn().expect("docshelf serve starts");
        let client = reqwest::Client::new();
        let health = format!("{base}/healthz");
        let started = wait_until(
            Duration::from_secs(120),
            Duration::from_millis(100),
            || {
                let (client, health) = (client.clone(), health.clone());
                let exited = child.try_wait().ok().flatten();
                async move {
                    if let Some(status) = exited {
                        return Ok(Err(status));
                    }
                    match client.get(&health).send().await {
                        Ok(r) if r.status().is_success() => Ok(Ok(())),
                        Ok(r) => Err(format!("/healthz answered {}", r.status())),
                        Err(e) => Err(e.to_string()),
                    }
                }
            },
            |seen| format!("docshelf serve did not come up: {seen}"),
        )
        .await;
        if let Err(status) = started {
            panic!("docshelf serve exited before it answered: {status}");
        }
        Self { child, base }
    }

    /// Kills the process with SIGKILL, as a crash or the OOM killer would,
    /// and reaps it.
    pub fn kill(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reaped");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
