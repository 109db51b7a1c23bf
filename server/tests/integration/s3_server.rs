//! A real S3-compatible server for the object-store tests:
//! `scripts/s3-server/server.py` (moto's S3 service from PyPI, served over
//! HTTP one request at a time) in its own process, as
//! `scripts/fetch-s3-server.sh` installs it (make test's set-up does).
//! docshelf reaches it with signed HTTP requests, as it reaches AWS S3.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use docshelf_server::config::EngineConfig;
use docshelf_server::store::S3Config;

use crate::common;

/// The bucket every test store lives in.
pub const BUCKET: &str = "docshelf-test";

fn python() -> PathBuf {
    let venv = match std::env::var_os("DOCSHELF_S3_SERVER_VENV") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/docshelf/s3-server")
        }
    };
    venv.join("bin/python")
}

/// A running S3 server, stopped when dropped.
pub struct S3Server {
    child: Child,
    pub endpoint: String,
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl S3Server {
    /// Starts a server on a free loopback port with an empty [`BUCKET`].
    pub fn start() -> Self {
        let python = python();
        assert!(
            python.exists(),
            "no S3 test server at {}: run scripts/fetch-s3-server.sh (make test's set-up does)",
            python.display()
        );
        let script = common::package_dir().join("../scripts/s3-server/server.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .args(["--port", "0", "--bucket", BUCKET])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep reading so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the S3 server did not start in 30 s");
        let endpoint = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the S3 server: {line}"))
            .to_owned();
        Self { child, endpoint }
    }

    /// Stops the server answering (SIGSTOP): connections are still
    /// accepted by the kernel, and nothing comes back, as from a stalled
    /// store.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a paused server answer again (SIGCONT), with everything it held.
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) with our own child's pid and a valid signal.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
    }

    /// How docshelf reaches this server.
    pub fn config(&self) -> S3Config {
        S3Config {
            endpoint: Some(self.endpoint.clone()),
            region: Some("us-east-1".into()),
            access_key_id: Some("docshelf".into()),
            secret_access_key: Some("docshelf-secret".into()),
            ..S3Config::default()
        }
    }

    /// An engine configuration for a store under `prefix` in the bucket,
    /// with the real model on the CPU.
    pub fn engine_config(&self, prefix: &str) -> EngineConfig {
        let dir = std::env::temp_dir();
        EngineConfig {
            data: format!("s3://{BUCKET}/{prefix}"),
            s3: self.config(),
            ..common::engine_config(&dir)
        }
    }
}
