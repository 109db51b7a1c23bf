//! The git CLI, run so that it can reach only what a source may reach.
//!
//! Why the git CLI and not gitoxide: what a docs source needs is a shallow,
//! partial fetch (trees first, then only the chosen files' blobs), which
//! git has done for years (`--filter=blob:none` and a sparse checkout) and
//! gitoxide does not yet; and the CLI adds no compile time. What it costs
//! is control over its connections, which is taken back here:
//!
//! - **Addresses.** The host is resolved here, every address checked by the
//!   sources' [`AddressPolicy`], and git's HTTP client is pinned to the
//!   addresses that passed (`http.curloptResolve`): the connection goes to
//!   an address that was checked, never to a second answer of the DNS.
//! - **Redirects** are not followed (`http.followRedirects=false`): a Git
//!   server's redirect could otherwise lead a fetch into the server's own
//!   network. The message says where the repository moved ([`moved`]).
//! - **Protocols**: only http(s); no `file://`, `ext::` or ssh, even for
//!   submodules or a lazy fetch.
//! - **Nothing of the server's user**: no global or system config, no
//!   credential helper, no prompt, no proxy from the environment.
//! - **Credentials** travel in git's environment (`GIT_CONFIG_*`), as an
//!   `Authorization` header: never on a command line, where `ps` shows it.
//! - **Bounds**: wall and CPU time, memory, nice 19, and a cap on any one
//!   file git writes (its packs), through [`crate::process`].

use std::net::IpAddr;
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use url::{Host, Url};

use super::{moved, GitError};
use crate::process::{self, Bounds, ProcessError};
use crate::source::credential::Secret;
use crate::source::fetch::FetchError;
use crate::source::AddressPolicy;

/// How long a host name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// A repository git may talk to: its URL, the checked addresses its
/// connections are pinned to, and the credential to send.
#[derive(Debug, Clone)]
pub struct Remote {
    url: Url,
    /// `host:port:addr[,addr]` for `http.curloptResolve`; `None` for a
    /// URL whose host is a (checked) literal address.
    pin: Option<String>,
    authorization: Option<Secret>,
}

impl Remote {
    /// Resolves and checks `url`'s host. Refused when no address it
    /// resolves to may be reached.
    pub async fn connect(
        url: &Url,
        policy: &AddressPolicy,
        credential: Option<Secret>,
    ) -> Result<Self, GitError> {
        let unreachable = |err| GitError::Unreachable {
            url: url.to_string(),
            err,
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| unreachable(FetchError::NoHost))?;
        let pin = match url.host() {
            None => return Err(unreachable(FetchError::NoHost)),
            Some(Host::Ipv4(ip)) => {
                policy
                    .check(ip.into())
                    .map_err(|e| unreachable(FetchError::Refused(e)))?;
                None
            }
            Some(Host::Ipv6(ip)) => {
                policy
                    .check(ip.into())
                    .map_err(|e| unreachable(FetchError::Refused(e)))?;
                None
            }
            Some(Host::Domain(name)) => {
                let found =
                    tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port)))
                        .await
                        .map_err(|_| {
                            unreachable(FetchError::Network(format!(
                                "the host name did not resolve within {} s",
                                RESOLVE_TIMEOUT.as_secs()
                            )))
                        })?
                        .map_err(|e| {
                            unreachable(FetchError::Network(format!(
                                "the host name does not resolve: {e}"
                            )))
                        })?;
                let addresses: Vec<IpAddr> = found.map(|a| a.ip()).collect();
                let allowed: Vec<IpAddr> = addresses
                    .iter()
                    .copied()
                    .filter(|ip| policy.check(*ip).is_ok())
                    .collect();
                if allowed.is_empty() {
                    let refused = addresses
                        .iter()
                        .find_map(|ip| policy.check(*ip).err())
                        .map_or(FetchError::NoHost, FetchError::Refused);
                    return Err(unreachable(refused));
                }
                let list: Vec<String> = allowed
                    .iter()
                    .map(|ip| match ip {
                        IpAddr::V4(v4) => v4.to_string(),
                        IpAddr::V6(v6) => format!("[{v6}]"),
                    })
                    .collect();
                Some(format!("{name}:{port}:{}", list.join(",")))
            }
        };
        Ok(Self {
            url: url.clone(),
            pin,
            authorization: credential,
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// A `git` command in `dir` that reaches only this remote, as the
    /// module's notes say.
    pub fn git(&self, dir: &Path) -> Command {
        let mut command = Command::new("git");
        command
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            // A docs folder given to `ls-tree` is a path, never pathspec
            // magic (`:(glob)`, `:!`).
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_ASKPASS", "/bin/false");
        let scheme = self.url.scheme();
        let mut config: Vec<(&str, String)> = vec![
            ("protocol.allow", "never".into()),
            (
                if scheme == "http" {
                    "protocol.http.allow"
                } else {
                    "protocol.https.allow"
                },
                "always".into(),
            ),
            ("http.followRedirects", "false".into()),
            ("credential.helper", String::new()),
            ("core.hooksPath", "/dev/null".into()),
            ("core.fsmonitor", "false".into()),
            ("advice.detachedHead", "false".into()),
            // A server that stalls is given up on rather than waited for.
            ("http.lowSpeedLimit", "1000".into()),
            ("http.lowSpeedTime", "60".into()),
        ];
        if let Some(pin) = &self.pin {
            config.push(("http.curloptResolve", pin.clone()));
        }
        if let Some(secret) = &self.authorization {
            config.push((
                "http.extraHeader",
                format!("Authorization: {}", secret.basic_authorization()),
            ));
        }
        command.env("GIT_CONFIG_COUNT", config.len().to_string());
        for (i, (key, value)) in config.into_iter().enumerate() {
            command
                .env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        command
    }

    /// Runs `args` in `dir` within `bounds`, returning what git wrote to
    /// its output. Its failures become [`GitError`]s that say what to do.
    pub fn run(
        &self,
        dir: &Path,
        args: &[&str],
        bounds: &Bounds,
        stop: &AtomicBool,
    ) -> Result<Vec<u8>, GitError> {
        let out = tempfile::tempfile().map_err(|e| GitError::Local(e.to_string()))?;
        let reader = out
            .try_clone()
            .map_err(|e| GitError::Local(e.to_string()))?;
        let mut command = self.git(dir);
        command.args(args);
        let ended = process::run_within("git", &mut command, Stdio::from(out), bounds, stop);
        self.ended(ended, dir, bounds, stop)?;
        read_all(reader)
    }

    /// Runs `args` in `dir` within `bounds`, its output read by `read` as
    /// git writes it. What `read` refuses (it stopped reading) is the
    /// answer, whatever git did then; otherwise git's failures are, as for
    /// [`Self::run`].
    pub fn read<T: Send>(
        &self,
        dir: &Path,
        args: &[&str],
        bounds: &Bounds,
        stop: &AtomicBool,
        read: impl FnOnce(ChildStdout) -> Result<T, GitError> + Send,
    ) -> Result<T, GitError> {
        let mut command = self.git(dir);
        command.args(args);
        let streamed = match process::run_reading("git", &mut command, bounds, stop, read) {
            Ok(streamed) => streamed,
            Err(err) => return self.ended(Err(err), dir, bounds, stop),
        };
        let read = streamed.read?;
        self.ended(streamed.ended, dir, bounds, stop)?;
        Ok(read)
    }

    /// How a git run ended, as a [`GitError`] that says what to do.
    fn ended<T>(
        &self,
        ended: Result<T, ProcessError>,
        dir: &Path,
        bounds: &Bounds,
        stop: &AtomicBool,
    ) -> Result<T, GitError> {
        match ended {
            Ok(done) => Ok(done),
            Err(ProcessError::Failed { status, .. }) if wrote_too_much(status) => {
                Err(GitError::TooLarge {
                    max: bounds.file_bytes.unwrap_or_default(),
                })
            }
            Err(ProcessError::Failed { stderr, .. }) => {
                match self.failure(&stderr, bounds.file_bytes.unwrap_or_default()) {
                    GitError::Redirected { url, .. } => Err(GitError::Redirected {
                        url,
                        to: self.moved_to(dir, bounds, stop),
                    }),
                    other => Err(other),
                }
            }
            Err(ProcessError::Spawn { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Err(GitError::NoGit)
            }
            Err(ProcessError::Stopped) => Err(GitError::Stopped),
            Err(err) => Err(GitError::Tool(err.to_string())),
        }
    }

    /// Where a redirecting server says the repository went: `ls-remote`
    /// run again with git's HTTP trace written to a file (headers only;
    /// git redacts credentials in it), and the `Location` read from it.
    /// `None` when the second run says nothing usable.
    fn moved_to(&self, dir: &Path, bounds: &Bounds, stop: &AtomicBool) -> Option<String> {
        let trace = tempfile::NamedTempFile::new().ok()?;
        let mut command = self.git(dir);
        command
            .env("GIT_TRACE_CURL", trace.path())
            .env("GIT_TRACE_CURL_NO_DATA", "1")
            .env("GIT_TRACE_REDACT", "1")
            .args(["ls-remote", self.url.as_str()]);
        // It fails again, as the first run did: the trace is what counts.
        let _ = process::run_within("git", &mut command, Stdio::null(), bounds, stop);
        let text = std::fs::read(trace.path()).ok()?;
        let location = moved::location_in_trace(&String::from_utf8_lossy(&text))?.to_owned();
        moved::moved_to(&self.url, &location)
    }

    /// What a failed git run means, from its error output (git's own
    /// words are kept, cut, for whatever is not recognised).
    fn failure(&self, stderr: &str, max_file: u64) -> GitError {
        let url = self.url.to_string();
        let lower = stderr.to_ascii_lowercase();
        // A helper (index-pack) past its file-size bound dies of SIGXFSZ.
        if lower.contains(&format!("died of signal {}", libc::SIGXFSZ)) {
            return GitError::TooLarge { max: max_file };
        }
        let said = |code: u16| lower.contains(&format!("returned error: {code}"));
        if said(401) || said(403) || lower.contains("could not read username") {
            return GitError::Unauthorized {
                url,
                with_credential: self.authorization.is_some(),
            };
        }
        // Before "not found": a redirect's body may say that too.
        if (300..400).any(said) {
            return GitError::Redirected { url, to: None };
        }
        if said(404) || lower.contains("not found") && lower.contains("repository") {
            return GitError::NoRepository(url);
        }
        if lower.contains("couldn't find remote ref") || lower.contains("not our ref") {
            return GitError::NoRef(url);
        }
        let first = process::first_line(stderr).unwrap_or("git failed without saying why");
        GitError::Failed {
            url,
            why: index_core::validate::cut(first.trim_start_matches("fatal: "), 300),
        }
    }
}

/// Whether git was stopped for writing a file past its bound (SIGXFSZ).
fn wrote_too_much(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGXFSZ)
}

fn read_all(mut file: std::fs::File) -> Result<Vec<u8>, GitError> {
    use std::io::{Read, Seek};
    let mut bytes = Vec::new();
    file.rewind()
        .and_then(|()| file.read_to_end(&mut bytes))
        .map_err(|e| GitError::Local(e.to_string()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_redirect_is_told_from_a_missing_repository() {
        let url = Url::parse("http://127.0.0.1:9/repo.git").unwrap();
        let policy = AddressPolicy {
            allow_private: true,
            allowed: Vec::new(),
        };
        let remote = Remote::connect(&url, &policy, None).await.unwrap();
        // A forge's 301 whose body says the old name is not found.
        let stderr = "remote: Repository not found at this address\n\
            fatal: unable to access 'http://127.0.0.1:9/repo.git/': The requested URL returned error: 301\n";
        assert!(matches!(
            remote.failure(stderr, 0),
            GitError::Redirected { .. }
        ));
        let missing = "fatal: repository 'http://127.0.0.1:9/repo.git/' not found\n";
        assert!(matches!(
            remote.failure(missing, 0),
            GitError::NoRepository(_)
        ));
    }

    #[tokio::test]
    async fn loopback_is_refused_unless_allowed() {
        let url = Url::parse("http://127.0.0.1:9/repo.git").unwrap();
        let refused = Remote::connect(&url, &AddressPolicy::default(), None).await;
        assert!(
            matches!(&refused, Err(GitError::Unreachable { .. })),
            "{refused:?}"
        );
        let policy = AddressPolicy {
            allow_private: false,
            allowed: vec!["127.0.0.1".parse().unwrap()],
        };
        assert!(Remote::connect(&url, &policy, None).await.is_ok());
        let localhost = Url::parse("http://localhost:9/repo.git").unwrap();
        let pinned = Remote::connect(&localhost, &AddressPolicy::default(), None).await;
        assert!(pinned.is_err(), "localhost resolves to loopback: refused");
    }

    #[tokio::test]
    async fn the_credential_travels_in_the_environment_only() {
        let url = Url::parse("https://93.184.215.14/repo.git").unwrap();
        let secret = crate::source::credential::SecretRef::Env("HOME".into())
            .resolve()
            .unwrap();
        let remote = Remote::connect(&url, &AddressPolicy::default(), Some(secret))
            .await
            .unwrap();
        let command = remote.git(Path::new("/tmp"));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args.is_empty(), "{args:?}");
        let header = command
            .get_envs()
            .find(|(_, v)| {
                v.is_some_and(|v| v.to_string_lossy().starts_with("Authorization: Basic "))
            })
            .is_some();
        assert!(header);
    }
}
