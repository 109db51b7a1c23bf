//! Registry packages followed past their archives, against the real
//! registries: a crate to its docs.rs pages (a mirror on loopback, built
//! with the real rustdoc from the crate's own published source, reached
//! through `--rewrite-url` as an air-gapped server reaches its mirror), and
//! a package's registry releases tracked as versions.

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

use crate::common::{self, finished_job, first_library_versions, post_json, serve_app};

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
/// archive), a release not held yet fetched when `keep` grows, the oldest
/// dropped when it shrinks; a tracked package naming a release, or a
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

    // Asked again to keep one: the older is dropped.
    let (status, shrunk) = post_json(&base, "/api/sources", track(1)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{shrunk}");
    assert_eq!(shrunk["dropped"], json!(["1.2.0"]), "{shrunk}");
    finished_job(&base, &shrunk).await;
    assert_eq!(first_library_versions(&base).await, ["1.3.0"]);
    // A refresh of a tracked version re-evaluates the releases.
    let source = shrunk["source_id"].as_str().expect("source");
    let (status, again) =
        post_json(&base, &format!("/api/sources/{source}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["version"], "1.3.0", "{again}");
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
