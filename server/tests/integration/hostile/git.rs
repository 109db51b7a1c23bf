//! Git repositories and source URLs built to exhaust the server or hide
//! what it stores, against a real Git server on loopback
//! ([`crate::git_server`]):
//!
//! - a password in a source's URL, which was stored, listed to every
//!   reader and echoed in errors;
//! - a repository that moved (301), which read as "not found" without
//!   saying where to;
//! - file names a reader cannot type back (bidi overrides, newlines) and
//!   symbolic links, stored unreadable or dropped without a word;
//! - a tiny repository whose tree lists millions of paths, which took the
//!   server's memory by gigabytes while it was read;
//! - a job killed with its process, after which the source list showed the
//!   job before it as the source's state.

use std::net::IpAddr;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};

use docshelf_server::config::SourceConfig;
use docshelf_server::engine::Engine;

use crate::common::{self, finished_job, get_json, post_json, ServerProcess};
use crate::git_server::{GitServer, Repo};

/// docshelf on `dir`, allowed to reach the Git server on loopback.
async fn docshelf(dir: &std::path::Path) -> (Arc<Engine>, String) {
    let sources = SourceConfig {
        allow_addresses: vec![IpAddr::from([127, 0, 0, 1])],
        ..SourceConfig::default()
    };
    common::serve_with_sources(dir, sources).await
}

/// A repository with one docs page, published as `root/NAME.git`.
fn widgets(root: &std::path::Path, name: &str) {
    let repo = Repo::new();
    repo.commit(
        &[("docs/index.md", "# Widgets\n\nWidgets are frobnicated.\n")],
        Some("v1.0.0"),
    );
    repo.publish(root, name);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_a_source_url_is_refused_and_never_echoed() {
    let git = GitServer::start(
        |root| widgets(root, "private"),
        &["--private=private.git=alice:s3cret-pw".to_owned()],
    );
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path()).await;
    let host = git.base.trim_start_matches("http://");
    for url in [
        // The form git itself would send the password from.
        format!("http://alice:s3cret-pw@{host}/private.git"),
        format!("git+http://alice:s3cret-pw@{host}/private"),
        // A site, a user alone, a password alone.
        format!("http://alice:s3cret-pw@{host}/docs/"),
        format!("http://s3cret-pw@{host}/private.git"),
        format!("http://:s3cret-pw@{host}/private.git"),
    ] {
        let (status, refused) = post_json(
            &base,
            "/api/sources",
            json!({"url": url, "library": "widgets", "version": "1"}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {refused}");
        assert_eq!(refused["code"], "invalid_source", "{url}: {refused}");
        let text = refused.to_string();
        assert!(!text.contains("s3cret"), "{url}: {text}");
        assert!(text.contains("`credential`: NAME"), "{url}: {text}");
    }
    let (_, listed) = get_json(&base, "/api/sources").await;
    assert_eq!(listed["sources"], json!([]), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_that_moved_says_where_to() {
    let git = GitServer::start(
        |root| widgets(root, "widgets"),
        &[
            "--redirect=old.git=https://git.example.org/team/widgets.git".to_owned(),
            // A Location carrying a password is shown without it.
            "--redirect=leaky.git=https://bob:hunter2@git.example.org/w.git".to_owned(),
        ],
    );
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path()).await;

    let (status, refused) = post_json(
        &base,
        "/api/sources",
        json!({"url": format!("{}/old.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "invalid_source", "{refused}");
    let said = refused["error"].as_str().unwrap_or_default();
    assert!(said.contains("moved"), "{said}");
    assert!(!said.contains("not found"), "{said}");
    assert!(
        said.contains("to https://git.example.org/team/widgets.git:"),
        "{said}"
    );

    let (status, refused) = post_json(
        &base,
        "/api/sources",
        json!({"url": format!("{}/leaky.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let said = refused["error"].as_str().unwrap_or_default();
    assert!(said.contains("to https://git.example.org/w.git:"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
}

/// The job's notes, one string.
fn notes(job: &Value) -> String {
    job["notes"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The paths of a job's files.
fn job_files(job: &Value) -> Vec<String> {
    let mut files: Vec<String> = job["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["file_path"].as_str().map(str::to_owned))
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_no_reader_could_type_back_and_links_are_left_out_and_said() {
    let repo = Repo::new();
    repo.commit(
        &[
            ("README.md", "# Widgets\n"),
            ("docs/index.md", "# Widgets\n\nWidgets are frobnicated.\n"),
            // Reads as `docs/evilmd.txt` where bidi is honoured.
            ("docs/evil\u{202E}txt.md", "# Evil\n\nA reversed name.\n"),
            ("docs/new\nline.md", "# Newline\n\nA name on two lines.\n"),
        ],
        None,
    );
    repo.link("docs/link.md", "../README.md");
    let git = GitServer::start(|root| repo.publish(root, "widgets"), &[]);
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path()).await;

    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": format!("{}/widgets.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job_files(&job), ["docs/index.md"], "{job}");

    // Every file left out is said, with why, its name escaped.
    let said = notes(&job);
    assert!(
        said.contains("1 documentation file left out because they are symbolic links"),
        "{said}"
    );
    assert!(said.contains("\"docs/link.md\""), "{said}");
    assert!(
        said.contains("2 documentation files left out because their names hold control or bidirectional-formatting characters"),
        "{said}"
    );
    assert!(said.contains("\"docs/evil\\u{202e}txt.md\""), "{said}");
    assert!(said.contains("\"docs/new\\nline.md\""), "{said}");
    // Never the characters themselves.
    for note in job["notes"].as_array().expect("notes") {
        let note = note.as_str().unwrap_or_default();
        assert!(
            !note.chars().any(index_core::validate::is_control_or_bidi),
            "{note:?}"
        );
    }
    // What is stored can be read by its path; nothing else was stored.
    let (status, documents) =
        get_json(&base, "/api/libraries/widgets/documents?version=main").await;
    assert_eq!(status, StatusCode::OK, "{documents}");
    let stored: Vec<&str> = documents
        .as_array()
        .expect("documents")
        .iter()
        .filter_map(|d| d["file_path"].as_str())
        .collect();
    assert_eq!(stored, ["docs/index.md"], "{documents}");
}

/// A bare repository whose one commit lists `width`^3 files under
/// `docs/`, in a handful of objects: one empty blob named `width` times
/// in a tree, that tree named `width` times in the next, and so on.
fn huge_tree(root: &std::path::Path, name: &str, width: usize) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let bare = root.join(format!("{name}.git"));
    let git = |args: &[&str], input: Option<&str>| -> String {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&bare)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "docs")
            .env("GIT_AUTHOR_EMAIL", "docs@example.org")
            .env("GIT_COMMITTER_NAME", "docs")
            .env("GIT_COMMITTER_EMAIL", "docs@example.org")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(input.unwrap_or_default().as_bytes())
            .expect("input");
        drop(stdin);
        let out = child.wait_with_output().expect("git ends");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    };
    std::fs::create_dir_all(&bare).expect("dir");
    git(
        &["init", "--quiet", "--bare", "--initial-branch=main"],
        None,
    );
    let blob = git(&["hash-object", "-w", "--stdin"], Some(""));
    let tree = |entries: String| git(&["mktree"], Some(&entries));
    let files = tree(
        (0..width)
            .map(|i| format!("100644 blob {blob}\tpage{i}.md\n"))
            .collect(),
    );
    let mut level = files;
    for _ in 0..2 {
        level = tree(
            (0..width)
                .map(|i| format!("040000 tree {level}\tpart{i}\n"))
                .collect(),
        );
    }
    let top = tree(format!("040000 tree {level}\tdocs\n"));
    let commit = git(&["commit-tree", &top, "-m", "docs"], None);
    git(&["update-ref", "refs/heads/main", &commit], None);
    for (key, value) in [
        ("uploadpack.allowFilter", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),
    ] {
        git(&["config", key, value], None);
    }
}

/// A tree of 10^6 paths in a repository of five objects is refused while
/// its listing is read, at the server's bound (half a million paths by
/// default), rather than read whole into memory first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_listing_millions_of_paths_is_cut_while_it_is_read() {
    let git = GitServer::start(|root| huge_tree(root, "huge", 100), &[]);
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path()).await;
    let url = format!("{}/huge.git", git.base);

    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": url, "library": "huge"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "failed", "{job}");
    let said = job.to_string();
    assert!(
        said.contains("the repository's tree lists more than 500000 paths"),
        "{said}"
    );
    assert!(said.contains("docs_path"), "{said}");

    // Given the folder, only it is listed: here, still past the bound.
    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": url, "library": "huge", "version": "docs", "docs_path": "docs"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "failed", "{job}");
    let said = job.to_string();
    assert!(said.contains("the docs folder"), "{said}");
    assert!(said.contains("lists more than 500000 paths"), "{said}");
    assert!(said.contains("give a narrower docs path"), "{said}");
}

/// Source fetches take turns: with every repository's fetch held open by
/// the Git server, the third source's job waits, and says so, until one
/// ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_fetches_take_turns_and_a_waiting_job_says_so() {
    let holds = tempfile::tempdir().expect("holds");
    let hold = holds.path().join("hold");
    std::fs::write(&hold, "").expect("hold");
    let names = ["one", "two", "three"];
    let flags: Vec<String> = names
        .iter()
        .map(|name| format!("--hold={name}.git={}", hold.display()))
        .collect();
    let git = GitServer::start(
        |root| {
            for name in names {
                widgets(root, name);
            }
        },
        &flags,
    );
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path()).await;
    let mut jobs = Vec::new();
    for name in names {
        let (status, accepted) = post_json(
            &base,
            "/api/sources",
            json!({"url": format!("{}/{name}.git", git.base), "library": name}),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
        jobs.push(accepted);
    }
    // Two fetch (the default turns), held by the server; one waits.
    let waiting = common::wait_until(
        std::time::Duration::from_secs(120),
        std::time::Duration::from_millis(100),
        || {
            let (base, jobs) = (base.clone(), jobs.clone());
            async move {
                let mut seen = Vec::new();
                for accepted in &jobs {
                    let id = accepted["job_id"].as_str().unwrap_or_default();
                    let (_, job) = get_json(&base, &format!("/api/jobs/{id}")).await;
                    if notes(&job).contains("waiting for its turn") {
                        return Ok(job);
                    }
                    seen.push(job);
                }
                Err(seen)
            }
        },
        |seen| format!("no job waited for its turn: {seen:?}"),
    )
    .await;
    assert_eq!(waiting["state"], "running", "{waiting}");
    assert!(
        notes(&waiting).contains("2 source fetches run at once (--source-fetches)"),
        "{waiting}"
    );
    std::fs::remove_file(&hold).expect("let go");
    for accepted in &jobs {
        let job = finished_job(&base, accepted).await;
        assert_eq!(job["state"], "done", "{job}");
    }
    let id = waiting["id"].as_str().unwrap_or_default();
    let (_, waited) = get_json(&base, &format!("/api/jobs/{id}")).await;
    assert!(notes(&waited).contains("its turn came after"), "{waited}");
}

/// A source's refresh killed with its process (SIGKILL) mid-fetch: after a
/// restart on the same store, the source is listed with that job ended
/// `interrupted`, not with the job before it, `done`, beside the new
/// request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_with_its_process_is_what_its_source_lists() {
    let holds = tempfile::tempdir().expect("holds");
    let hold = holds.path().join("hold");
    let git = GitServer::start(
        |root| widgets(root, "widgets"),
        &[format!("--hold=widgets.git={}", hold.display())],
    );
    let data = tempfile::tempdir().expect("data");
    let server = ServerProcess::start(data.path(), &["--allow-address", "127.0.0.1"]).await;
    let (status, accepted) = post_json(
        &server.base,
        "/api/sources",
        json!({"url": format!("{}/widgets.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let first = finished_job(&server.base, &accepted).await;
    assert_eq!(first["state"], "done", "{first}");
    let source = accepted["source_id"].as_str().expect("source").to_owned();

    // The refresh's fetch is held by the Git server; the process dies.
    std::fs::write(&hold, "").expect("hold");
    let (status, again) = post_json(
        &server.base,
        &format!("/api/sources/{source}/refresh"),
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    let killed = again["job_id"].as_str().expect("job").to_owned();
    let (_, running) = get_json(&server.base, &format!("/api/jobs/{killed}")).await;
    assert_eq!(running["state"], "running", "{running}");
    server.kill();
    std::fs::remove_file(&hold).expect("let go");

    let server = ServerProcess::start(data.path(), &["--allow-address", "127.0.0.1"]).await;
    let (status, listed) = get_json(&server.base, "/api/sources").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let listed = &listed["sources"][0];
    assert_eq!(
        listed["last_refresh"]["job_id"],
        killed.as_str(),
        "{listed}"
    );
    assert_eq!(listed["last_refresh"]["state"], "interrupted", "{listed}");
    assert!(listed.get("running_job").is_none(), "{listed}");
    let (_, one) = get_json(&server.base, &format!("/api/sources/{source}")).await;
    assert_eq!(one["last_refresh"]["state"], "interrupted", "{one}");
}
