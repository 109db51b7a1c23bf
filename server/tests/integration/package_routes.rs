//! Registry packages followed past their archives, against the real
//! registries: a crate to its docs.rs pages (a mirror on loopback, built
//! with the real rustdoc from the crate's own published source, reached
//! through `--rewrite-url` as an air-gapped server reaches its mirror), and
//! a package's registry releases tracked as versions, and a repository
//! without a docs folder (a loopback Git mirror) passed for the next route.

use std::net::IpAddr;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use serde_json::json;
use tower_http::services::ServeDir;

use docshelf_server::access::local;
use docshelf_server::config::{EngineConfig, SourceConfig};
use docshelf_server::engine::Engine;
use index_core::job::{FileState, JobState};
use index_core::source::{DocsFrom, SourceRequest};

use crate::common::{self, finished_job, first_library_versions, get_json, post_json, serve_app};
use crate::git_server::{GitServer, Repo};

/// The crate the docs.rs mirror holds, at the release the test asks for.
const CRATE: &str = "itoa";
const RELEASE: &str = "1.0.11";

/// A docs.rs mirror holding `CRATE` at `RELEASE`: the crate's published
/// source from crates.io, documented by rustdoc into
/// `/docs.rs/{CRATE}/{RELEASE}/`, as docs.rs lays a release out below a
/// folder of the mirror's (so that its addresses are not docs.rs's).
/// Returns the mirror's base URL, that folder included, and the paths it
/// was asked for, in order.
async fn docs_rs_mirror(dir: &Path) -> (String, Arc<Mutex<Vec<String>>>) {
    let archive = reqwest::get(format!(
        "https://static.crates.io/crates/{CRATE}/{CRATE}-{RELEASE}.crate"
    ))
    .await
    .and_then(reqwest::Response::error_for_status)
    .expect("the crate from crates.io")
    .bytes()
    .await
    .expect("its bytes");
    let crate_file = dir.join("itoa.crate");
    std::fs::write(&crate_file, &archive).expect("write");
    let unpacked = Command::new("tar")
        .arg("xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("tar");
    assert!(unpacked.success());
    let site = dir.join("site");
    let release = site.join(CRATE).join(RELEASE);
    let documented = Command::new("rustdoc")
        .args(["--edition", "2018", "--crate-name", CRATE, "-o"])
        .arg(&release)
        .arg(dir.join(format!("{CRATE}-{RELEASE}/src/lib.rs")))
        .status()
        .expect("rustdoc");
    assert!(documented.success());
    assert!(release.join(CRATE).join("struct.Buffer.html").is_file());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let app = axum::Router::new()
        .nest_service("/docs.rs", ServeDir::new(site))
        .layer(axum::middleware::map_request(
            move |request: axum::extract::Request| {
                let log = log.clone();
                async move {
                    log.lock()
                        .expect("log")
                        .push(request.uri().path().to_owned());
                    request
                }
            },
        ));
    let base = serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await;
    (format!("{base}/docs.rs"), asked)
}

/// Every Git host and site sent to a loopback port nothing listens on,
/// except the prefixes `mirrors` maps: the routes followed are the same
/// wherever the test runs.
fn sources(mirrors: Vec<(String, String)>) -> SourceConfig {
    let mut rewrite_urls = mirrors;
    rewrite_urls.push(("https://".into(), "http://127.0.0.1:9/".into()));
    let mut allow_addresses = vec![IpAddr::from([127, 0, 0, 1])];
    allow_addresses.extend(common::registry_addresses());
    SourceConfig {
        allow_addresses,
        rewrite_urls,
        crawl_rate: 1000.0,
        ..SourceConfig::default()
    }
}

/// The stored documents that are not the API reference read from the
/// package's code (its `api/` pages, beside whatever route was taken).
fn documentation(status: &index_core::job::JobStatus) -> Vec<&str> {
    stored(status)
        .into_iter()
        .filter(|p| !p.starts_with("api/"))
        .collect()
}

fn stored(status: &index_core::job::JobStatus) -> Vec<&str> {
    status
        .files
        .iter()
        .filter(|f| matches!(f.state, FileState::Stored { .. }))
        .map(|f| f.file_path.as_str())
        .collect()
}

/// A crate whose repository cannot be reached is read from docs.rs at its
/// release: its item pages, clean of rustdoc's boilerplate, and not its
/// source pages; `from: site` on a package that names no site fails,
/// saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crate_is_followed_to_its_release_on_docs_rs() {
    let dir = tempfile::tempdir().expect("dir");
    let (mirror, asked) = docs_rs_mirror(dir.path()).await;
    let config = EngineConfig {
        sources: sources(vec![("https://docs.rs/".into(), format!("{mirror}/"))]),
        ..common::engine_config(&dir.path().join("store"))
    };
    let engine = Engine::open(&config).await.expect("engine");
    let request = SourceRequest {
        url: format!("crates:{CRATE}@{RELEASE}"),
        library: CRATE.into(),
        ..SourceRequest::default()
    };
    let status = engine.ingest_source(request, |_| {}).await.expect("crate");
    assert_eq!(status.state, JobState::Done, "{status:#?}");
    let notes = status.notes.join("\n");
    assert!(notes.contains("the Git repository was not used"), "{notes}");
    assert!(
        notes.contains(&format!(
            "the site https://docs.rs/{CRATE}/{RELEASE}/{CRATE}/index.html (fetched from {mirror}/"
        )),
        "{notes}"
    );
    assert!(notes.contains("this release's own pages"), "{notes}");
    // The start page tried when the route was chosen is the crawl's
    // first page, not asked for again.
    let start_path = format!("/docs.rs/{CRATE}/{RELEASE}/{CRATE}/index.html");
    let start_asked = asked
        .lock()
        .expect("log")
        .iter()
        .filter(|p| **p == start_path)
        .count();
    assert_eq!(start_asked, 1, "{:#?}", asked.lock().expect("log"));
    let pages = stored(&status);
    // The crate's page once, not again as its folder.
    assert!(
        !pages.iter().any(|p| p.ends_with(&format!("/{CRATE}/"))),
        "{pages:#?}"
    );
    // Stored, and cited, under docs.rs's addresses, not the mirror's.
    let folder = format!("https://docs.rs/{CRATE}/{RELEASE}/{CRATE}/");
    let buffer = format!("{folder}struct.Buffer.html");
    assert!(pages.contains(&buffer.as_str()), "{pages:#?}");
    assert!(
        pages.iter().all(|p| p.starts_with(&folder)),
        "only the crate's own folder is crawled: {pages:#?}"
    );

    let search = |q: &str| {
        let engine = &engine;
        let q = q.to_owned();
        async move {
            engine
                .search(&local(), common::keyword(&q))
                .await
                .expect("search")
        }
    };
    let found = search("correctly sized stack allocation formatted integer").await;
    assert_eq!(
        found.results.first().map(|r| r.file_path.as_str()),
        Some(buffer.as_str()),
        "{:#?}",
        common::paths(&found)
    );
    // What rustdoc repeats on every type's page is not stored.
    for boilerplate in ["RefUnwindSafe", "BorrowMut", "CloneToUninit"] {
        let found = search(boilerplate).await;
        assert!(
            found.results.is_empty(),
            "{boilerplate}: {:#?}",
            common::paths(&found)
        );
    }

    // The same pages as a site source of their own, through the same
    // rewrite: stored under docs.rs's addresses, its exclude pattern
    // written for them and not for the mirror's; fetched again, unchanged.
    let trait_page = format!("{folder}trait.Integer.html");
    assert!(pages.contains(&trait_page.as_str()), "{pages:#?}");
    let site = SourceRequest {
        url: format!("{folder}index.html"),
        library: "itoa-site".into(),
        version: Some(RELEASE.into()),
        exclude: vec![format!("/{CRATE}/*/{CRATE}/trait.*")],
        ..SourceRequest::default()
    };
    for round in ["first", "again"] {
        let status = engine
            .ingest_source(site.clone(), |_| {})
            .await
            .expect("site");
        assert_eq!(status.state, JobState::Done, "{round}: {status:#?}");
        let paths: Vec<&str> = status.files.iter().map(|f| f.file_path.as_str()).collect();
        assert!(paths.contains(&buffer.as_str()), "{round}: {paths:#?}");
        assert!(!paths.contains(&trait_page.as_str()), "{round}: {paths:#?}");
        if round == "again" {
            assert!(
                status.files.iter().all(|f| f.state == FileState::Unchanged),
                "{status:#?}"
            );
        }
    }

    // left-pad names neither a site nor a homepage: from: site fails.
    let request = SourceRequest {
        url: "npm:left-pad@1.3.0".into(),
        library: "left-pad".into(),
        from: Some(DocsFrom::Site),
        ..SourceRequest::default()
    };
    let status = engine.ingest_source(request, |_| {}).await.expect("job");
    assert_eq!(status.state, JobState::Failed, "{status:#?}");
    let why = serde_json::to_string(&status).expect("json");
    assert!(
        why.contains("the documentation site cannot be used (from: site): the package's metadata names no documentation site"),
        "{why}"
    );
}

/// A package's registry releases as versions: npm's real release list of
/// left-pad, the newest `keep` matching `1.*` fetched (each its own
/// archive), a release not held yet fetched when `keep` grows, a refresh
/// of one answering with that release's own source id, the oldest dropped
/// when it shrinks; a tracked package naming a release, or a
/// pattern nothing matches, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_packages_registry_releases_are_tracked_as_versions() {
    let dir = tempfile::tempdir().expect("dir");
    let (_engine, base) = common::serve_with_sources(dir.path(), sources(Vec::new())).await;
    let track = |keep: usize| json!({"url": "npm:left-pad", "library": "left-pad", "track": "1.*", "keep": keep});

    let (status, accepted) = post_json(&base, "/api/sources", track(1)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    assert_eq!(accepted["version"], "1.3.0", "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(first_library_versions(&base).await, ["1.3.0"]);

    // Two kept: the release not held yet is fetched.
    let (status, grown) = post_json(&base, "/api/sources", track(2)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{grown}");
    assert_eq!(grown["version"], "1.2.0", "{grown}");
    finished_job(&base, &grown).await;
    assert_eq!(first_library_versions(&base).await, ["1.3.0", "1.2.0"]);

    // A refresh of the older release answers with its own source id, which
    // stays; its archive unchanged, the refresh counts documents, and says so.
    let older = grown["source_id"].as_str().expect("source");
    let (status, again) =
        post_json(&base, &format!("/api/sources/{older}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["source_id"], older, "{again}");
    assert_eq!(again["version"], "1.2.0", "{again}");
    let job = finished_job(&base, &again).await;
    assert_eq!(job["state"], "done", "{job}");
    let (status, source) = get_json(&base, &format!("/api/sources/{older}")).await;
    assert_eq!(status, StatusCode::OK, "{source}");
    let last = &source["last_refresh"];
    assert_eq!(last["changed"], 0, "{source}");
    assert!(last["pages"].as_u64().is_some_and(|n| n > 0), "{source}");
    assert_eq!(last["unchanged"], last["pages"], "{source}");
    assert!(
        last["notes"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n.as_str().is_some_and(|n| n
                .starts_with("nothing changed: the release's archive is the one read last time")))),
        "{source}"
    );

    // Asked again to keep one: the older is dropped.
    let (status, shrunk) = post_json(&base, "/api/sources", track(1)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{shrunk}");
    assert_eq!(shrunk["dropped"], json!(["1.2.0"]), "{shrunk}");
    finished_job(&base, &shrunk).await;
    assert_eq!(first_library_versions(&base).await, ["1.3.0"]);
    // The release dropped past keep is gone with its source.
    let (status, _) = get_json(&base, &format!("/api/sources/{older}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A refresh of a tracked version re-evaluates the releases.
    let source = shrunk["source_id"].as_str().expect("source");
    let (status, again) =
        post_json(&base, &format!("/api/sources/{source}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["version"], "1.3.0", "{again}");
    assert_eq!(again["source_id"], source, "{again}");
    let job = finished_job(&base, &again).await;
    assert_eq!(job["state"], "done", "{job}");

    let (status, refused) = post_json(
        &base,
        "/api/sources",
        json!({"url": "npm:left-pad@1.3.0", "library": "left-pad", "track": "1.*"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("a tracked package names no release"),
        "{refused}"
    );
    let (status, refused) = post_json(
        &base,
        "/api/sources",
        json!({"url": "npm:left-pad", "library": "left-pad", "track": "9.*"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    assert_eq!(refused["code"], "unknown_release", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("newest: 1.3.0, 1.2.0"),
        "{refused}"
    );
}

/// A Python package's API reference is read from its own code at the
/// release (click's sdist from PyPI: its `docs/api.rst` is autodoc
/// directives, empty without a Sphinx build), beside its docs: a question
/// about a function's parameters finds the function's section, with its
/// signature; a refresh of the same release keeps every page unread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_packages_api_reference_is_read_from_its_code() {
    let dir = tempfile::tempdir().expect("dir");
    let (engine, base) = common::serve_with_sources(dir.path(), sources(Vec::new())).await;
    let request = json!({"url": "pypi:click==8.1.7", "library": "click"});
    let (status, accepted) = post_json(&base, "/api/sources", request.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    let status: index_core::job::JobStatus =
        serde_json::from_value(job.clone()).expect("a job status");
    let stored = stored(&status);
    // The package's page, a submodule's, and a page per symbol.
    for page in [
        "api/click.md",
        "api/click/testing.md",
        "api/click/option.md",
    ] {
        assert!(stored.contains(&page), "{page} in {stored:?}");
    }
    assert!(
        !stored.iter().any(|p| p.starts_with("api/click/_")),
        "private modules have no page: {stored:?}"
    );
    let notes = status.notes.join("\n");
    assert!(
        notes.contains("API reference read from the code") && notes.contains("Python modules"),
        "{notes}"
    );

    let (status, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "what parameters does click.option take", "library": "click"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let top: Vec<(String, String)> = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .take(3)
        .map(|r| {
            (
                r["file_path"].as_str().unwrap_or_default().to_owned(),
                r["heading_path"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    // `click.option` forwards its parameters to the `click.Option` class,
    // whose docstring lists them: either section answers.
    assert!(
        top.iter()
            .any(|(path, heading)| path.starts_with("api/click/")
                && heading.to_lowercase().contains("click.option")),
        "{top:#?}"
    );
    let document = engine
        .document(&local(), "click", "8.1.7", "api/click/option.md")
        .await
        .expect("the page");
    assert!(
        document
            .text
            .contains("cls: t.Optional[t.Type[Option]] = None"),
        "the signature as written"
    );

    let (embedded, _) = engine.metrics().vectors();
    let (status, again) = post_json(&base, "/api/sources", request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    let job = finished_job(&base, &again).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(engine.metrics().vectors().0, embedded, "nothing read again");
    let docs = engine
        .documents(&local(), "click", Some("8.1.7"))
        .await
        .expect("docs");
    assert!(
        docs.iter().any(|d| d.file_path.starts_with("api/click/")),
        "the reference is kept: {docs:#?}"
    );
}

/// An npm package without TypeScript declarations (express 4) has its API
/// reference read from its JSDoc-commented JavaScript: `res.send` is a
/// section of `api/express/lib/response.md`, found by a question about it,
/// and a function its comment marks private is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_packages_api_reference_is_read_from_its_doc_comments() {
    let dir = tempfile::tempdir().expect("dir");
    let (engine, base) = common::serve_with_sources(dir.path(), sources(Vec::new())).await;
    let request = json!({"url": "npm:express@4.18.2", "library": "express"});
    let (status, accepted) = post_json(&base, "/api/sources", request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    let status: index_core::job::JobStatus = serde_json::from_value(job).expect("a job status");
    assert!(
        stored(&status).contains(&"api/express/lib/response/res.send.md"),
        "{status:#?}"
    );
    assert!(
        status
            .notes
            .join("\n")
            .contains("JavaScript files (their JSDoc comments)"),
        "{:?}",
        status.notes
    );
    let (status, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "how does res.send set the response body", "library": "express"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let top: Vec<(String, String)> = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .take(3)
        .map(|r| {
            (
                r["file_path"].as_str().unwrap_or_default().to_owned(),
                r["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert!(
        top.iter()
            .any(|(path, _)| path == "api/express/lib/response/res.send.md"),
        "{top:#?}"
    );
    let page = engine
        .document(
            &local(),
            "express",
            "4.18.2",
            "api/express/lib/application.md",
        )
        .await
        .expect("the page");
    // The module's page lists its symbols, each linked to its own page.
    assert!(
        page.text
            .contains("[`express.app.listen`](application/app.listen.md)"),
        "{}",
        page.text
    );
    // `app.init` is documented `@private` in express's source.
    assert!(!page.text.contains("express.app.init"), "{}", page.text);
}

/// express as the trial met it: its repository (a loopback mirror of
/// GitHub, tagged as express tags) has no docs folder, only a README and
/// the project's own files; its site is the `homepage` its real npm
/// release names (a loopback mirror of expressjs.com, its pages written
/// under `dir`). Returns the Git server and the site's base URL.
async fn express_mirrors(dir: &Path) -> (GitServer, String) {
    let repo = Repo::new();
    repo.commit(
        &[
            (
                "Readme.md",
                "# Express\n\nFast, unopinionated, minimalist web framework.\n",
            ),
            (
                "Charter.md",
                "# Express Charter\n\nThe project's mission.\n",
            ),
            ("Code-Of-Conduct.md", "# Code of Conduct\n\nBe kind.\n"),
            (
                "Triager-Guide.md",
                "# Triager Guide\n\nHow to label issues.\n",
            ),
            ("Security.md", "# Security Policies\n\nReport privately.\n"),
            (
                "Contributing.md",
                "# Contributing\n\nOpen a pull request.\n",
            ),
            (
                "History.md",
                "4.18.2 / 2022-10-08\n===\n\n  * Fix regression\n",
            ),
            ("lib/express.js", "module.exports = createApplication;\n"),
        ],
        Some("4.18.2"),
    );
    let git = GitServer::start(|root| repo.publish_at(root, "expressjs/express"), &[]);
    let site = dir.join("expressjs.com");
    std::fs::create_dir_all(site.join("en/guide")).expect("site dirs");
    std::fs::write(
        site.join("index.html"),
        "<html><head><title>Express</title></head><body><h1>Express</h1>\
         <p>Fast web framework for Node.js.</p><a href=\"en/guide/routing.html\">Routing</a></body></html>",
    )
    .expect("index");
    std::fs::write(
        site.join("en/guide/routing.html"),
        "<html><head><title>Routing</title></head><body><h1>Routing</h1>\
         <p>Route parameters are named URL segments captured in req.params, such as the \
         quetzal segment of /users/:quetzal.</p></body></html>",
    )
    .expect("routing");
    let app = axum::Router::new().nest_service("/expressjs.com", ServeDir::new(site));
    let base = serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await;
    (git, format!("{base}/expressjs.com"))
}

/// A package whose repository has no docs folder takes the next route, not
/// the top of the tree: express's site, else its archive, saying why, and
/// a result of a README alone warns. Asked for the repository (`from:
/// repo`), its top is read, with the contributing guide and release notes
/// said as left out and a warning that it is the project's own files. A
/// Git source behind the same rewrite that fails names the repository's
/// own URL, not the mirror's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_without_a_docs_folder_leaves_the_next_route() {
    let dir = tempfile::tempdir().expect("dir");
    let (git, site) = express_mirrors(dir.path()).await;
    let github = ("https://github.com/".to_owned(), format!("{}/", git.base));
    let config = EngineConfig {
        sources: sources(vec![
            github.clone(),
            ("http://expressjs.com/".into(), format!("{site}/")),
        ]),
        ..common::engine_config(&dir.path().join("store"))
    };
    let engine = Engine::open(&config).await.expect("engine");
    let express = |library: &str, from: Option<DocsFrom>| SourceRequest {
        url: "npm:express@4.18.2".into(),
        library: library.into(),
        from,
        ..SourceRequest::default()
    };

    let status = engine
        .ingest_source(express("express", None), |_| {})
        .await
        .expect("express");
    assert_eq!(status.state, JobState::Done, "{status:#?}");
    let notes = status.notes.join("\n");
    assert!(
        notes.contains("the Git repository was not used: the Git repository https://github.com/expressjs/express (fetched from")
            && notes.contains("it has no docs folder"),
        "{notes}"
    );
    assert!(
        notes.contains("documentation taken from the site http://expressjs.com/ (fetched from"),
        "{notes}"
    );
    let pages = documentation(&status);
    assert!(
        pages.contains(&"http://expressjs.com/en/guide/routing.html"),
        "{pages:#?}"
    );
    assert!(
        pages.iter().all(|p| p.starts_with("http://expressjs.com/")),
        "nothing from the top of the tree: {pages:#?}"
    );
    assert!(!notes.contains("warning:"), "{notes}");

    // Asked for the repository: its top, said for what it is.
    let status = engine
        .ingest_source(express("express-repo", Some(DocsFrom::Repo)), |_| {})
        .await
        .expect("from repo");
    assert_eq!(status.state, JobState::Done, "{status:#?}");
    let mut pages = documentation(&status);
    pages.sort_unstable();
    assert_eq!(
        pages,
        [
            "Charter.md",
            "Code-Of-Conduct.md",
            "Readme.md",
            "Security.md",
            "Triager-Guide.md"
        ],
        "{status:#?}"
    );
    let notes = status.notes.join("\n");
    assert!(
        notes.contains("5 files at the top of the tree, which has no docs folder"),
        "{notes}"
    );
    assert!(!notes.contains("files under the files"), "{notes}");
    assert!(
        notes.contains("left out 1 contributing guide at the top of the tree (about the project, not its use) (Contributing.md)"),
        "{notes}"
    );
    assert!(
        notes
            .contains("left out 1 release-notes file (include it by name to take it) (History.md)"),
        "{notes}"
    );
    assert!(
        notes.contains("warning: only a README and the project's own files came in"),
        "{notes}"
    );

    // A Git source behind the rewrite, failing: named by its own URL.
    let missing = SourceRequest {
        url: "https://github.com/expressjs/express".into(),
        library: "express-git".into(),
        git_ref: Some("4.18.2".into()),
        docs_path: Some("docs".into()),
        ..SourceRequest::default()
    };
    let status = engine
        .ingest_source(missing, |_| {})
        .await
        .expect("git source");
    assert_eq!(status.state, JobState::Failed, "{status:#?}");
    let failed = status
        .files
        .iter()
        .find(|f| matches!(f.state, FileState::Failed { .. }))
        .expect("the failure");
    assert_eq!(
        failed.file_path,
        "https://github.com/expressjs/express @ 4.18.2"
    );
    let shown = serde_json::to_string(&status).expect("json");
    assert!(shown.contains("is not in the repository"), "{shown}");
    assert!(!shown.contains(&git.base), "{shown}");
    drop(engine);

    // The site out of reach: the archive, whose README alone warns.
    let config = EngineConfig {
        sources: sources(vec![
            github,
            ("http://expressjs.com/".into(), "http://127.0.0.1:9/".into()),
        ]),
        ..common::engine_config(&dir.path().join("store-2"))
    };
    let engine = Engine::open(&config).await.expect("engine");
    let status = engine
        .ingest_source(express("express", None), |_| {})
        .await
        .expect("express archive");
    assert_eq!(status.state, JobState::Done, "{status:#?}");
    assert_eq!(documentation(&status), ["Readme.md"], "{status:#?}");
    let notes = status.notes.join("\n");
    assert!(notes.contains("it has no docs folder"), "{notes}");
    assert!(
        notes.contains("the documentation site was not crawled"),
        "{notes}"
    );
    assert!(
        notes.contains("warning: only the README came in"),
        "{notes}"
    );
}
