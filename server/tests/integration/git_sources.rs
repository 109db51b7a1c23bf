//! Git repositories as sources, against a real Git server on loopback
//! (`git http-backend`, [`crate::git_server`]): tags as versions, the docs
//! folder found, only what changed read again, a private repository
//! refused without its credential and read with it (the secret never
//! shown), and the address rules held for Git URLs and their redirects.

use std::net::IpAddr;
use std::sync::Arc;

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use docshelf_server::config::{EngineConfig, SourceConfig};
use docshelf_server::engine::Engine;
use docshelf_server::source::credential::Declared;

use crate::common::{self, finished_job, first_library_versions, get_json, post_json};
use crate::git_server::{GitServer, Repo};

/// docshelf, with loopback allowed where `allow_loopback`.
async fn docshelf(dir: &std::path::Path, allow_loopback: bool) -> (Arc<Engine>, String) {
    let sources = SourceConfig {
        allow_addresses: match allow_loopback {
            true => vec![IpAddr::from([127, 0, 0, 1])],
            false => Vec::new(),
        },
        ..SourceConfig::default()
    };
    common::serve_with_sources(dir, sources).await
}

/// Adds a source over the REST API: the status and the answer.
async fn add(base: &str, request: Value) -> (StatusCode, Value) {
    post_json(base, "/api/sources", request).await
}

/// Each file of a job with its state's name.
fn files(job: &Value) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = job["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["file_path"].as_str().unwrap_or_default().to_owned(),
                f["state"]["state"]
                    .as_str()
                    .or_else(|| f["state"].as_str())
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    files.sort();
    files
}

/// The project: a docs folder beside code, release notes and a README,
/// tagged twice; the second release adds an upgrade page.
fn project() -> Repo {
    let repo = Repo::new();
    repo.commit(
        &[
            ("README.md", "# Widgets\n\nA library for widgets.\n"),
            ("src/lib.rs", "pub fn frobnicate() {}\n"),
            (
                "docs/index.md",
                "# Widgets\n\nWidgets are frobnicated in batches.\n",
            ),
            (
                "docs/guide/install.md",
                "# Installing\n\nRun the frobnicator installer with `widgets install`.\n",
            ),
            (
                "docs/CHANGELOG.md",
                "# Changes\n\nzanzibar release notes.\n",
            ),
            ("docs/release-notes/1.0.md", "# 1.0\n\nzanzibar notes.\n"),
        ],
        Some("v1.0.0"),
    );
    repo.commit(
        &[(
            "docs/guide/upgrade.md",
            "# Upgrading\n\nWhen upgrading from 1.0, rename the widget cache folder.\n",
        )],
        Some("v1.1.0"),
    );
    repo
}

async fn top_hit(base: &str, query: &str, version: &str) -> String {
    let (status, found) = post_json(
        base,
        "/api/search",
        json!({"query": query, "library": "widgets", "version": version}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    found["results"][0]["file_path"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_is_read_at_its_tags_and_refreshed_by_what_changed() {
    let repo = project();
    let git = GitServer::start(|root| repo.publish(root, "widgets"), &[]);
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path(), true).await;
    let url = format!("{}/widgets.git", git.base);

    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "ref": "v1.0.0"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(accepted["version"], "v1.0.0");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    let stored: Vec<String> = files(&job).into_iter().map(|(path, _)| path).collect();
    // The docs folder alone: no code, no README beside it, no release notes.
    assert_eq!(stored, ["docs/guide/install.md", "docs/index.md"], "{job}");
    // Its total was known before the first file was read.
    assert_eq!(job["expected"], 2, "{job}");
    assert_eq!(
        top_hit(&base, "how do I run the frobnicator installer", "v1.0.0").await,
        "docs/guide/install.md"
    );

    // The next tag, its version named by the tag.
    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "ref": "v1.1.0"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(accepted["version"], "v1.1.0");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(
        top_hit(&base, "rename the widget cache when upgrading", "v1.1.0").await,
        "docs/guide/upgrade.md"
    );
    // The older version is as it was: its own two pages, searchable.
    let (_, older) = get_json(&base, "/api/libraries/widgets/documents?version=v1.0.0").await;
    let older: Vec<&str> = older
        .as_array()
        .expect("documents")
        .iter()
        .filter_map(|d| d["file_path"].as_str())
        .collect();
    assert_eq!(older, ["docs/guide/install.md", "docs/index.md"]);
    assert_eq!(
        top_hit(&base, "run the frobnicator installer", "v1.0.0").await,
        "docs/guide/install.md"
    );

    // A refresh reads nothing again: every file is as before.
    let source = accepted["source_id"].as_str().expect("source id");
    let (status, again) =
        post_json(&base, &format!("/api/sources/{source}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    let job = finished_job(&base, &again).await;
    assert_eq!(job["state"], "done", "{job}");
    let states: Vec<String> = files(&job).into_iter().map(|(_, s)| s).collect();
    assert_eq!(states.len(), 3, "{job}");
    assert!(states.iter().all(|s| s == "unchanged"), "{job}");
    let (_, listed) = get_json(&base, &format!("/api/sources/{source}")).await;
    assert_eq!(listed["kind"], "git", "{listed}");
    let notes = listed["last_refresh"]["notes"].to_string();
    assert!(notes.contains("docs/"), "{listed}");

    // Deleting a source takes its version with it, on the REST API.
    let first = {
        let (_, all) = get_json(&base, "/api/sources").await;
        all["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .find(|s| s["version"] == "v1.0.0")
            .map(|s| s["source_id"].as_str().unwrap_or_default().to_owned())
            .expect("the v1.0.0 source")
    };
    let res = Client::new()
        .delete(format!("{base}/api/sources/{first}"))
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), StatusCode::OK);
    let deleted: Value = res.json().await.expect("json");
    assert_eq!(
        (deleted["documents"].as_u64(), deleted["sources"].as_u64()),
        (Some(2), Some(1))
    );
    let (status, _) = get_json(&base, &format!("/api/sources/{first}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, libraries) = get_json(&base, "/api/libraries").await;
    assert!(!libraries.to_string().contains("v1.0.0"), "{libraries}");

    // A ref the repository does not have: its newest tags are named.
    let (status, refused) = add(
        &base,
        json!({"url": url, "library": "widgets", "ref": "v9"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    assert_eq!(refused["code"], "unknown_ref");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("v1.1.0, v1.0.0"),
        "{refused}"
    );
    // Include globs choose the files, release notes included; max_pages
    // bounds them, in path order.
    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "version": "notes",
               "include": ["docs/**"], "max_pages": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    let stored: Vec<String> = files(&job).into_iter().map(|(path, _)| path).collect();
    assert_eq!(
        stored,
        ["docs/CHANGELOG.md", "docs/guide/install.md"],
        "{job}"
    );

    // A docs folder it does not have.
    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "version": "x", "docs_path": "manual"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].to_string().contains("manual"), "{job}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_repository_needs_its_credential_which_is_never_shown() {
    let secret = "alice:s3cret-pw";
    let repo = project();
    let git = GitServer::start(
        |root| repo.publish(root, "private"),
        &[format!("--private=private.git={secret}")],
    );
    let host = git.base.trim_start_matches("http://");
    let secrets = tempfile::tempdir().expect("secrets");
    let (wrong, right) = (secrets.path().join("wrong"), secrets.path().join("token"));
    std::fs::write(&wrong, "alice:nope\n").expect("write");
    std::fs::write(&right, format!("{secret}\n")).expect("write");
    let dir = tempfile::tempdir().expect("dir");
    let sources = SourceConfig {
        allow_addresses: vec![IpAddr::from([127, 0, 0, 1])],
        credentials: [("wrong", &wrong), ("widgets-ci", &right)]
            .iter()
            .map(|(name, file)| {
                let declared = format!("{name}=file:{}@{host}", file.display());
                Declared::parse(&declared).expect("declared")
            })
            .collect(),
        ..SourceConfig::default()
    };
    let (_engine, base) = common::serve_with_sources(dir.path(), sources).await;
    let url = format!("{}/private.git", git.base);

    let (status, refused) = add(&base, json!({"url": url, "library": "widgets"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "source_credential", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("credential"),
        "{refused}"
    );

    let (status, refused) = add(
        &base,
        json!({"url": url, "library": "widgets", "credential": "wrong"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(refused["error"]
        .to_string()
        .contains("refused the credential"));

    // A secret pasted where a credential's name belongs is refused, not echoed.
    let (status, refused) = add(
        &base,
        json!({"url": url, "library": "widgets", "credential": secret}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(!refused.to_string().contains("s3cret"), "{refused}");

    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "credential": "widgets-ci"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(accepted["version"], "main");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(
        top_hit(&base, "rename the widget cache when upgrading", "main").await,
        "docs/guide/upgrade.md"
    );
    let (_, listed) = get_json(&base, "/api/sources").await;
    let text = listed.to_string();
    assert!(text.contains("\"credential\":\"widgets-ci\""), "{text}");
    assert!(
        !text.contains("s3cret") && !text.contains("file:"),
        "{text}"
    );
    assert!(!job.to_string().contains("s3cret"), "{job}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_urls_keep_the_address_rules_redirects_included() {
    let repo = project();
    let git = GitServer::start(
        |root| repo.publish(root, "widgets"),
        &["--redirect=moved.git=http://10.0.0.1/widgets.git".to_owned()],
    );
    let dir = tempfile::tempdir().expect("dir");

    // Loopback itself, without the server allowing it.
    let (_engine, closed) = docshelf(dir.path(), false).await;
    let (status, refused) = add(
        &closed,
        json!({"url": format!("{}/widgets.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "source_unreachable", "{refused}");
    assert!(refused["error"].to_string().contains("--allow-address"));

    // Allowed, but redirected toward a private address: not followed.
    let other = tempfile::tempdir().expect("dir");
    let (_engine, open) = docshelf(other.path(), true).await;
    let (status, refused) = add(
        &open,
        json!({"url": format!("{}/moved.git", git.base), "library": "widgets"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"].to_string().contains("redirects"),
        "{refused}"
    );

    // Not a Git URL form docshelf runs: ssh, file, ext.
    for url in [
        "git+ssh://127.0.0.1/widgets.git",
        "git+file:///etc",
        "ext::sh -c id",
    ] {
        let (status, refused) = add(
            &open,
            json!({"url": url, "library": "widgets", "version": "1"}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {refused}");
    }
}

/// Releases as versions: `track` keeps the newest `keep` tags matching
/// its pattern (a pre-release left out), and a refresh after a new release
/// fetches it and drops the oldest past `keep`, answering with the source
/// refreshed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracked_releases_become_versions_and_old_ones_are_dropped() {
    let repo = project();
    repo.commit(
        &[("docs/guide/next.md", "# Next\n\nA preview.\n")],
        Some("v2.0.0-rc.1"),
    );
    let git = GitServer::start(|root| repo.publish(root, "widgets"), &[]);
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = docshelf(dir.path(), true).await;
    let url = format!("{}/widgets.git", git.base);

    let (status, accepted) = add(
        &base,
        json!({"url": url, "library": "widgets", "track": "v*", "keep": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(accepted["version"], "v1.1.0", "{accepted}");
    assert_eq!(accepted["also"][0]["version"], "v1.0.0", "{accepted}");
    finished_job(&base, &accepted).await;
    finished_job(&base, &accepted["also"][0]).await;
    assert_eq!(first_library_versions(&base).await, ["v1.1.0", "v1.0.0"]);

    // A new release: the refresh fetches it and drops the oldest.
    repo.commit(
        &[(
            "docs/guide/tuning.md",
            "# Tuning\n\nSet the quokka buffer to 64.\n",
        )],
        Some("v1.2.0"),
    );
    repo.push(git.root(), "widgets");
    let source = accepted["source_id"].as_str().expect("source");
    let (status, again) =
        post_json(&base, &format!("/api/sources/{source}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    // The source refreshed answers with its own id; the new release's job
    // comes in `also`.
    assert_eq!(again["source_id"], source, "{again}");
    assert_eq!(again["version"], "v1.1.0", "{again}");
    assert_eq!(again["also"][0]["version"], "v1.2.0", "{again}");
    assert_eq!(again["dropped"], json!(["v1.0.0"]), "{again}");
    finished_job(&base, &again).await;
    finished_job(&base, &again["also"][0]).await;
    assert_eq!(first_library_versions(&base).await, ["v1.2.0", "v1.1.0"]);
    assert_eq!(
        top_hit(&base, "quokka buffer size", "v1.2.0").await,
        "docs/guide/tuning.md"
    );

    // Tracking picks refs and versions itself.
    let (status, refused) = add(
        &base,
        json!({"url": url, "library": "widgets", "track": "v*", "ref": "v1.0.0"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let (status, refused) = add(
        &base,
        json!({"url": url, "library": "widgets", "track": "release-*"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    assert_eq!(refused["code"], "unknown_ref", "{refused}");
}

/// Registry packages followed to their documentation: the real registries'
/// archives name each project's repository (PyPI's `Home-page`, npm's
/// `repository`, a crate's `repository`); GitHub is not reachable from the
/// test machine, so `--rewrite-url` maps it to a mirror on loopback, as an
/// air-gapped set-up would, where each project's docs folder is tagged as
/// the project tags its releases. Asked for the archive, the archive is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_are_followed_to_the_docs_in_their_repositories() {
    let mirror = |text: &str, tag: &str| {
        let repo = Repo::new();
        repo.commit(
            &[
                ("README.md", "# Project\n\nSee the docs.\n"),
                ("docs/index.md", text),
                ("docs/CHANGELOG.md", "# Changes\n"),
            ],
            Some(tag),
        );
        repo
    };
    let six = mirror(
        "# Six\n\nThe moves module maps renamed standard modules.\n",
        "1.16.0",
    );
    let left_pad = mirror(
        "# left-pad\n\nPads the left side of a string with a fill.\n",
        "v1.3.0",
    );
    let itoa = mirror(
        "# itoa\n\nFormats integers into a stack buffer quickly.\n",
        "1.0.11",
    );
    let git = GitServer::start(
        |root| {
            six.publish_at(root, "benjaminp/six");
            left_pad.publish_at(root, "stevemao/left-pad");
            itoa.publish_at(root, "dtolnay/itoa");
        },
        &[],
    );
    let dir = tempfile::tempdir().expect("dir");
    let config = EngineConfig {
        sources: SourceConfig {
            allow_addresses: [
                vec![IpAddr::from([127, 0, 0, 1])],
                common::registry_addresses(),
            ]
            .concat(),
            rewrite_urls: vec![("https://github.com/".into(), format!("{}/", git.base))],
            ..SourceConfig::default()
        },
        ..common::engine_config(dir.path())
    };
    let engine = Engine::open(&config).await.expect("engine");
    for (url, library, phrase) in [
        ("pypi:six==1.16.0", "six", "moves module"),
        ("npm:left-pad@1.3.0", "left-pad", "Pads the left side"),
        ("crates:itoa@1.0.11", "itoa", "stack buffer"),
    ] {
        let request = index_core::source::SourceRequest {
            url: url.into(),
            library: library.into(),
            ..Default::default()
        };
        let status = engine.ingest_source(request, |_| {}).await.expect(url);
        assert_eq!(
            status.state,
            index_core::job::JobState::Done,
            "{url}: {status:#?}"
        );
        let stored: Vec<&str> = status
            .files
            .iter()
            .filter(|f| matches!(f.state, index_core::job::FileState::Stored { .. }))
            .map(|f| f.file_path.as_str())
            // Beside the API reference read from the package's code.
            .filter(|p| !p.starts_with("api/"))
            .collect();
        assert_eq!(stored, ["docs/index.md"], "{url}: {status:#?}");
        let notes = status.notes.join("\n");
        assert!(
            notes.contains("the Git repository https://github.com/"),
            "{url}: {notes}"
        );
        assert!(notes.contains("named by the package's"), "{url}: {notes}");
        let found = engine
            .search(&docshelf_server::access::local(), common::keyword(phrase))
            .await
            .expect("search");
        assert!(
            found.results.iter().any(|r| r.library == library),
            "{url}: {phrase}"
        );
    }
    // Asked for the archive: its README and docs folder, the repository
    // named as not used.
    let archive = index_core::source::SourceRequest {
        url: "pypi:six==1.16.0".into(),
        library: "six-archive".into(),
        from: Some(index_core::source::DocsFrom::Package),
        ..Default::default()
    };
    let status = engine
        .ingest_source(archive, |_| {})
        .await
        .expect("archive");
    let stored: Vec<&str> = status
        .files
        .iter()
        .filter(|f| matches!(f.state, index_core::job::FileState::Stored { .. }))
        .map(|f| f.file_path.as_str())
        .filter(|p| !p.starts_with("api/"))
        .collect();
    assert_eq!(
        stored,
        ["README.rst", "documentation/index.rst"],
        "{status:#?}"
    );
    assert!(status.notes.join(" ").contains("as asked"), "{status:#?}");
}
