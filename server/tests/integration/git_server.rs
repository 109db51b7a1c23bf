//! A real Git server on loopback: Git's own `git http-backend` behind a
//! real HTTP server (`scripts/git-http-server.py`), serving bare
//! repositories built here with the real git CLI.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The server, stopped when dropped.
pub struct GitServer {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    root: tempfile::TempDir,
}

impl GitServer {
    /// Serves the repositories `build` writes into the root it is given
    /// (as `NAME.git`), with `flags` (`--private NAME=USER:PASSWORD`,
    /// `--redirect NAME=URL`).
    pub fn start(build: impl FnOnce(&Path), flags: &[String]) -> Self {
        let root = tempfile::tempdir().expect("git root");
        build(root.path());
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/git-http-server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(root.path())
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the Git server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the Git server names its port");
        let port: u16 = line.trim().parse().expect("a port");
        Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            root,
        }
    }

    /// Where the bare repositories are.
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A working tree whose commits and tags become a bare repository.
pub struct Repo {
    work: PathBuf,
    _dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("work dir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work");
        let repo = Self { work, _dir: dir };
        repo.git(&["init", "--quiet", "--initial-branch=main", "."]);
        repo
    }

    /// Runs git in the working tree, as a fixed author.
    pub fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .current_dir(&self.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=docs", "-c", "user.email=docs@example.org"])
            .args(args)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    /// Writes `files` (path, content) and commits them, tagged `tag`.
    pub fn commit(&self, files: &[(&str, &str)], tag: Option<&str>) {
        for (path, text) in files {
            let path = self.work.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
            std::fs::write(path, text).expect("write");
        }
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "-m", "docs"]);
        if let Some(tag) = tag {
            self.git(&["tag", "-a", tag, "-m", tag]);
        }
    }

    /// Adds a symbolic link at `path` to `target` and commits it.
    pub fn link(&self, path: &str, target: &str) {
        let path = self.work.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::os::unix::fs::symlink(target, path).expect("symlink");
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "-m", "link"]);
    }

    /// Pushes the branch and every tag to the bare `root/NAME.git`.
    pub fn push(&self, root: &Path, name: &str) {
        let bare = root.join(format!("{name}.git"));
        let bare_arg = bare.to_string_lossy().into_owned();
        self.git(&["push", "--quiet", "--tags", &bare_arg, "main"]);
    }

    /// The repository, bare, as `root/NAME.git`, serving partial fetches.
    pub fn publish(&self, root: &Path, name: &str) {
        self.publish_at(root, &format!("{name}.git"));
    }

    /// The repository, bare, at `root/PATH` (`owner/name`, as a forge
    /// names it), serving partial fetches.
    pub fn publish_at(&self, root: &Path, path: &str) {
        let bare = root.join(path);
        let bare_arg = bare.to_string_lossy().into_owned();
        self.git(&["clone", "--quiet", "--bare", ".", &bare_arg]);
        for (key, value) in [
            ("uploadpack.allowFilter", "true"),
            ("uploadpack.allowAnySHA1InWant", "true"),
        ] {
            let status = Command::new("git")
                .args(["-C", &bare_arg, "config", key, value])
                .status()
                .expect("git config");
            assert!(status.success());
        }
    }
}
