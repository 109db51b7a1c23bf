//! Sources: a real documentation site (the Git manual's HTML pages, from
//! the shared eval set) served on loopback by a real HTTP server, crawled
//! over the REST API, and refreshed; addresses the crawler must refuse;
//! packages from the real registries.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode as AxumStatus};
use axum::response::{IntoResponse, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};

use docshelf_server::config::{EngineConfig, SourceConfig};
use docshelf_server::engine::Engine;
use docshelf_server::http::serve::HEADER_TIMEOUT;
use index_core::job::{FileState, JobState};
use index_core::source::SourceRequest;

use crate::common::{self, get_json, post_json, serve_app};
use docshelf_server::access::local;

/// The Git manual pages the site serves (besides its index).
const PAGES: [&str; 12] = [
    "git-add",
    "git-am",
    "git-bisect",
    "git-blame",
    "git-branch",
    "git-checkout",
    "git-clone",
    "git-commit",
    "git-diff",
    "git-fetch",
    "git-log",
    "git-merge",
];

/// Pages that fail, each for its own reason, with what the failure says.
const FAILING: [(&str, &str); 8] = [
    ("missing.html", "answered 404"),
    ("broken.html", "answered 500"),
    ("slow.html", "no answer within"),
    ("huge.html", "larger than 1 MiB"),
    ("loop-a.html", "redirect loop"),
    (
        "to-metadata.html",
        "169.254.169.254 is a link-local address",
    ),
    ("to-private.html", "10.0.0.1 is a private address"),
    (
        "gzipped.html",
        "gzip-compressed data, which docshelf did not ask for",
    ),
];

/// A page gzip-compressed although docshelf asks for `identity`:
/// `<html><body><p>inflated against the rules</p></body></html>`.
const GZIPPED: [u8; 72] = [
    31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 179, 201, 40, 201, 205, 177, 179, 73, 202, 79, 169, 180, 179,
    41, 176, 203, 204, 75, 203, 73, 44, 73, 77, 81, 72, 76, 79, 204, 204, 43, 46, 81, 40, 201, 72,
    85, 40, 42, 205, 73, 45, 182, 209, 47, 176, 179, 209, 135, 168, 211, 7, 107, 2, 0, 144, 162,
    37, 61, 59, 0, 0, 0,
];

/// The documentation site: pages by path, changeable while it runs, and
/// what was asked of it.
#[derive(Default)]
struct Site {
    pages: Mutex<HashMap<String, String>>,
    /// Requests per path, and how many were answered 304.
    requests: Mutex<BTreeMap<String, usize>>,
    not_modified: Mutex<usize>,
}

impl Site {
    fn new() -> Arc<Self> {
        let corpus = common::shared_data().join("eval/git-docs/corpus");
        let site = Self::default();
        {
            let mut pages = site.pages.lock().unwrap();
            for name in PAGES {
                let html = std::fs::read_to_string(corpus.join(format!("{name}.html")))
                    .unwrap_or_else(|e| panic!("the shared git-docs corpus: {e}"));
                pages.insert(format!("/docs/{name}.html"), local_links_only(&html));
            }
            // The same page under another URL names its canonical address.
            let commit = pages
                .get("/docs/git-commit.html")
                .cloned()
                .unwrap_or_default();
            let commit = commit.replacen(
                "<head>",
                "<head><link rel=\"canonical\" href=\"/docs/git-commit.html\">",
                1,
            );
            pages.insert("/docs/git-commit.html".into(), commit);
            pages.insert("/docs/".into(), index(&PAGES));
            pages.insert(
                "/docs/private/secret.html".into(),
                "<html><body><p>robots.txt keeps this out</p></body></html>".into(),
            );
        }
        Arc::new(site)
    }

    fn requests(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

/// The index page: links to the pages, to the failing ones, out of
/// scope, to a disallowed page and to a duplicate, plus links that are
/// no pages at all.
fn index(pages: &[&str]) -> String {
    let mut links: Vec<String> = pages
        .iter()
        .map(|p| format!("<li><a href=\"{p}.html\">{p}</a></li>"))
        .collect();
    links.extend(
        FAILING
            .iter()
            .map(|(p, _)| format!("<li><a href=\"{p}\">{p}</a></li>")),
    );
    links.extend(
        [
            "old-add.html",
            "git-commit.html?from=nav",
            "git-log.html#options",
            "private/secret.html",
            "/blog/post.html",
            "http://example.invalid/docs/",
            "mailto:docs@example.invalid",
        ]
        .iter()
        .map(|href| format!("<li><a href=\"{href}\">{href}</a></li>")),
    );
    format!(
        "<!DOCTYPE html><html><head><title>Git manual</title></head><body>\
         <nav class=\"sidebar\"><ul>{}</ul></nav><main><h1>Git manual</h1>\
         <p>The reference pages of git, served for docshelf's crawler.</p></main></body></html>",
        links.join("")
    )
}

/// The page with links to manual pages the site does not serve made
/// into in-page anchors (the manual links every page; the site serves a
/// few).
fn local_links_only(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("href=\"") {
        out.push_str(&rest[..i + 6]);
        rest = &rest[i + 6..];
        let end = rest.find('"').unwrap_or(rest.len());
        let target = &rest[..end];
        let served = PAGES.iter().any(|p| target == format!("{p}.html"));
        out.push_str(if served || target.starts_with('#') {
            target
        } else {
            "#"
        });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

async fn serve_site(State(site): State<Arc<Site>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    *site
        .requests
        .lock()
        .unwrap()
        .entry(path.clone())
        .or_default() += 1;
    let redirect = |to: &str| {
        Response::builder()
            .status(AxumStatus::FOUND)
            .header(header::LOCATION, to)
            .body(Body::empty())
            .unwrap()
    };
    match path.as_str() {
        "/robots.txt" => return "User-agent: *\nDisallow: /docs/private/\n".into_response(),
        "/docs/old-add.html" => return redirect("/docs/git-add.html"),
        "/docs/loop-a.html" => return redirect("/docs/loop-b.html"),
        "/docs/loop-b.html" => return redirect("/docs/loop-a.html"),
        "/docs/to-metadata.html" => return redirect("http://169.254.169.254/latest/meta-data/"),
        "/docs/to-private.html" => return redirect("http://10.0.0.1/docs/"),
        "/docs/broken.html" => return AxumStatus::INTERNAL_SERVER_ERROR.into_response(),
        "/docs/gzipped.html" => {
            return (
                [
                    (header::CONTENT_TYPE, "text/html"),
                    (header::CONTENT_ENCODING, "gzip"),
                ],
                GZIPPED.to_vec(),
            )
                .into_response()
        }
        // Never answers: the crawl's own timeout must end it.
        "/docs/slow.html" => return std::future::pending::<Response>().await,
        "/docs/huge.html" => {
            let body = format!(
                "<html><body><p>{}</p></body></html>",
                "big ".repeat(600_000)
            );
            return ([(header::CONTENT_TYPE, "text/html")], body).into_response();
        }
        _ => {}
    }
    let Some(page) = site.pages.lock().unwrap().get(&path).cloned() else {
        return AxumStatus::NOT_FOUND.into_response();
    };
    let etag = format!("\"{:x}\"", fxhash(&page));
    if header_is(request.headers(), header::IF_NONE_MATCH, &etag) {
        *site.not_modified.lock().unwrap() += 1;
        return (AxumStatus::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::ETAG, etag),
        ],
        page,
    )
        .into_response()
}

fn header_is(headers: &HeaderMap, name: header::HeaderName, value: &str) -> bool {
    headers.get(name).and_then(|v| v.to_str().ok()) == Some(value)
}

/// A content fingerprint for the ETag (FNV-1a).
fn fxhash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The site on a free loopback port; returns its base URL.
async fn start_site(site: Arc<Site>) -> String {
    let app = axum::Router::new().fallback(serve_site).with_state(site);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// Loopback allowed (the site lives there) and nothing else private, a
/// fast crawl rate and small page and time bounds.
fn site_sources() -> SourceConfig {
    SourceConfig {
        allow_addresses: vec![IpAddr::from([127, 0, 0, 1])],
        crawl_rate: 1000.0,
        crawl_page_mib: 1,
        // Long enough that a busy machine does not fail good pages.
        fetch_timeout_secs: 10.0,
        ..SourceConfig::default()
    }
}

/// docshelf with [`site_sources`].
async fn docshelf(dir: &std::path::Path) -> (Arc<Engine>, String) {
    common::serve_with_sources(dir, site_sources()).await
}

/// The site at `url` added as git 2.39, and its first crawl's job, done.
async fn crawled(base: &str, url: &str) -> Value {
    let (status, accepted) = post_json(
        base,
        "/api/sources",
        json!({"url": url, "library": "git", "version": "2.39"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = common::finished_job(base, &accepted).await;
    assert_eq!(job["state"], "done", "{job:#}");
    job
}

/// Source `id` refreshed: its job, done.
async fn refreshed(base: &str, id: &str) -> Value {
    let (status, accepted) =
        post_json(base, &format!("/api/sources/{id}/refresh"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = common::finished_job(base, &accepted).await;
    assert_eq!(job["state"], "done", "{job:#}");
    job
}

/// The state of each file of a job, by path.
fn files(job: &Value) -> BTreeMap<String, Value> {
    job["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["file_path"].as_str().unwrap_or_default().to_owned(),
                f.clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_is_crawled_politely_and_refreshed_by_what_changed() {
    let dir = tempfile::tempdir().expect("dir");
    let site = Site::new();
    let site_base = start_site(site.clone()).await;
    let (engine, base) = docshelf(dir.path()).await;

    let job = crawled(&base, &format!("{site_base}/docs/")).await;
    let by_path = files(&job);
    let page = |p: &str| format!("{site_base}/docs/{p}");
    for name in PAGES {
        let f = &by_path[&page(&format!("{name}.html"))];
        assert_eq!(f["state"], "stored", "{name}: {f}");
    }
    assert_eq!(by_path[&page("")]["state"], "stored");
    for (path, why) in FAILING {
        let f = &by_path[&page(path)];
        assert_eq!(f["state"], "failed", "{path}: {f}");
        let reason = f["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(why), "{path}: {reason}");
    }
    // robots.txt is obeyed: the page is listed as skipped, never fetched.
    let secret = &by_path[&page("private/secret.html")];
    assert!(
        secret["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("robots.txt"),
        "{secret}"
    );
    assert_eq!(site.requests("/docs/private/secret.html"), 0);
    // Out of scope: never asked for. A redirect and a canonical address
    // lead to pages already taken: each is stored once, under its own
    // address, never under the URL that led to it.
    assert_eq!(site.requests("/blog/post.html"), 0);
    let stored: Vec<&String> = by_path
        .iter()
        .filter(|(_, f)| f["state"] == "stored")
        .map(|(p, _)| p)
        .collect();
    assert_eq!(stored.len(), PAGES.len() + 1, "{stored:#?}");
    assert!(
        !stored
            .iter()
            .any(|p| p.contains('#') || p.contains("?from=") || p.contains("old-add")),
        "{stored:#?}"
    );

    // Results link back to the live page; the sidebar is not in the text.
    let (status, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "Add file contents to the index", "library": "git"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(
        found["results"][0]["file_path"],
        page("git-add.html"),
        "{found:#}"
    );

    let (_, sources) = get_json(&base, "/api/sources").await;
    let source = &sources["sources"][0];
    let last = &source["last_refresh"];
    assert_eq!(last["pages"], PAGES.len() + 1, "{source:#}");
    assert_eq!(last["failed"], FAILING.len(), "{source:#}");
    let id = source["source_id"].as_str().expect("id").to_owned();

    // The site changes: one page edited, one removed (and unlinked), one
    // broken (nested too deep to read).
    let bisect = site.pages.lock().unwrap()["/docs/git-bisect.html"].clone();
    {
        let mut pages = site.pages.lock().unwrap();
        let nested = format!("<html><body>{}</body></html>", "<div>".repeat(5000));
        pages.insert("/docs/git-bisect.html".into(), nested);
        let add = pages.get("/docs/git-add.html").cloned().unwrap_or_default();
        let edited = add.replacen(
            "<h2 id=\"_description\">DESCRIPTION</h2>",
            "<h2 id=\"_description\">DESCRIPTION</h2>\
             <p>Zebra quartz harmonica: a paragraph added after the first crawl.</p>",
            1,
        );
        assert_ne!(edited, add, "the page has its DESCRIPTION heading");
        pages.insert("/docs/git-add.html".into(), edited);
        pages.remove("/docs/git-am.html");
        let others: Vec<&str> = PAGES.iter().copied().filter(|p| *p != "git-am").collect();
        pages.insert("/docs/".into(), index(&others));
    }
    let (embedded_before, _) = engine.metrics().vectors();
    let not_modified_before = *site.not_modified.lock().unwrap();
    let job = refreshed(&base, &id).await;
    let by_path = files(&job);
    assert_eq!(by_path[&page("git-add.html")]["state"], "stored");
    assert_eq!(by_path[&page("git-am.html")]["state"], "removed", "{job:#}");
    assert_eq!(
        by_path[&page("git-bisect.html")]["state"],
        "failed",
        "{job:#}"
    );
    let unchanged = by_path
        .values()
        .filter(|f| f["state"] == "unchanged")
        .count();
    assert_eq!(unchanged, PAGES.len() - 3, "{job:#}");
    // The unchanged pages were asked "changed since?" and answered 304.
    assert!(*site.not_modified.lock().unwrap() - not_modified_before >= PAGES.len() - 3);
    let (embedded_after, _) = engine.metrics().vectors();
    assert!(
        embedded_after > embedded_before,
        "the edited page's new text is embedded"
    );

    let (_, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "Zebra quartz harmonica", "library": "git", "mode": "keyword"}),
    )
    .await;
    assert_eq!(
        found["results"][0]["file_path"],
        page("git-add.html"),
        "{found:#}"
    );
    let (_, docs) = get_json(&base, "/api/libraries/git/documents?version=2.39").await;
    let listed = docs.to_string();
    assert!(!listed.contains("git-am.html"), "{listed}");
    // The page that could not be read keeps its stored version.
    assert!(listed.contains("git-bisect.html"), "{listed}");

    // Nothing changed since (the broken page mended as it was): nothing is
    // embedded.
    site.pages
        .lock()
        .unwrap()
        .insert("/docs/git-bisect.html".into(), bisect);
    let (embedded_before, _) = engine.metrics().vectors();
    let job = refreshed(&base, &id).await;
    assert_eq!(engine.metrics().vectors().0, embedded_before, "{job:#}");
    let (_, sources) = get_json(&base, "/api/sources").await;
    let last = &sources["sources"][0]["last_refresh"];
    assert_eq!(last["changed"], 0, "{last:#}");
    assert_eq!(last["unchanged"], PAGES.len(), "{last:#}");
}

/// A refresh through a `--rewrite-url` mirror: a page answered 304 gives
/// the links it had, recorded as the source names them; they are followed
/// through the mirror again, and no page is taken for gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_through_a_mirror_follows_the_links_of_unchanged_pages() {
    let dir = tempfile::tempdir().expect("dir");
    let site = Site::new();
    let links: String = PAGES
        .iter()
        .map(|p| format!("<a href=\"{p}.html\">{p}</a> "))
        .collect();
    site.pages.lock().unwrap().insert(
        "/docs/".into(),
        format!("<html><body><main><h1>Manual</h1><p>Every page.</p>{links}</main></body></html>"),
    );
    let mirror = start_site(site.clone()).await;
    let shown = "https://docs.garden.example";
    let sources = SourceConfig {
        rewrite_urls: vec![(format!("{shown}/"), format!("{mirror}/"))],
        ..site_sources()
    };
    let (_engine, base) = common::serve_with_sources(dir.path(), sources).await;
    let job = crawled(&base, &format!("{shown}/docs/")).await;
    let stored: Vec<String> = files(&job)
        .into_iter()
        .filter(|(_, f)| f["state"] == "stored")
        .map(|(p, _)| p)
        .collect();
    assert_eq!(stored.len(), PAGES.len() + 1, "{stored:#?}");
    assert!(stored.iter().all(|p| p.starts_with(shown)), "{stored:#?}");

    let (_, listed) = get_json(&base, "/api/sources").await;
    let id = listed["sources"][0]["source_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let job = refreshed(&base, &id).await;
    let by_path = files(&job);
    for name in PAGES {
        let f = &by_path[&format!("{shown}/docs/{name}.html")];
        assert_eq!(f["state"], "unchanged", "{name}: {job:#}");
        // Asked twice, through the mirror: once a crawl.
        assert_eq!(site.requests(&format!("/docs/{name}.html")), 2, "{name}");
    }
    assert!(
        !by_path.values().any(|f| f["state"] == "removed"),
        "{job:#}"
    );
}

/// A crawl where most pages fail publishes nothing and ends `failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_that_mostly_fails_ends_failed_and_publishes_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let site = Site::new();
    {
        // Only the index is left; every page it leads to fails.
        let mut pages = site.pages.lock().unwrap();
        pages.retain(|path, _| path == "/docs/");
        pages.insert("/docs/".into(), index(&[]));
    }
    let site_base = start_site(site).await;
    let (_engine, base) = docshelf(dir.path()).await;
    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": format!("{site_base}/docs/"), "library": "broken", "version": "1"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = common::finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "failed", "{job:#}");
    assert!(
        job["error"]
            .as_str()
            .unwrap_or_default()
            .contains("pages failed"),
        "{job:#}"
    );
    let (_, libraries) = get_json(&base, "/api/libraries").await;
    assert!(!libraries.to_string().contains("broken"), "{libraries}");
}

/// Without --allow-private-urls, URLs into the server's own network are
/// refused at once, with the reason and how to lift it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_own_network_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let engine = Engine::open(&common::engine_config(dir.path()))
        .await
        .expect("engine");
    let router = common::router_config(dir.path(), 1024 * 1024);
    let base = serve_app(
        docshelf_server::http::router(Arc::new(engine), &router),
        HEADER_TIMEOUT,
    )
    .await;
    for (url, why) in [
        ("http://127.0.0.1:9/docs/", "loopback"),
        ("http://localhost:9/docs/", "loopback"),
        ("http://[::1]:9/", "loopback"),
        // 127.0.0.1 inside 6to4 and Teredo.
        ("http://[2002:7f00:1::]/", "loopback"),
        ("http://[2001:0:5ef5:79fb::80ff:fffe]/", "loopback"),
        ("http://10.1.2.3/docs/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("ftp://example.org/docs/", "neither an http(s) URL"),
        ("file:///etc/passwd", "neither an http(s) URL"),
    ] {
        let (status, body) = post_json(
            &base,
            "/api/sources",
            json!({"url": url, "library": "x", "version": "1"}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert_eq!(body["kind"], "bad_input", "{url}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(why), "{url}: {error}");
    }
    let (status, body) = post_json(
        &base,
        "/api/sources",
        json!({"url": "http://10.1.2.3/", "library": "x", "version": "1"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("--allow-private-urls"),
        "{body}"
    );
    let (status, body) = post_json(
        &base,
        "/api/sources",
        json!({"url": "https://example.org/docs/", "library": "x"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("needs a version"),
        "{body}"
    );
}

/// Packages from the real registries, pinned: their README and docs
/// folder, stored under the package's own version; fetched again, the
/// same archive keeps everything without embedding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_come_from_their_registries() {
    let dir = tempfile::tempdir().expect("dir");
    // Each package's repository (on GitHub) and documentation site
    // (six.readthedocs.io, docs.rs) is sent to a loopback port this engine
    // may not reach, so the archive route is taken, and the notes say why,
    // whether or not those hosts are reachable from the machine.
    let config = EngineConfig {
        sources: SourceConfig {
            allow_addresses: common::registry_addresses(),
            rewrite_urls: vec![("https://".into(), "http://127.0.0.1:9/".into())],
            ..SourceConfig::default()
        },
        ..common::engine_config(dir.path())
    };
    let engine = Engine::open(&config).await.expect("engine");
    for (url, library, version, expected) in [
        (
            "pypi:six==1.16.0",
            "six",
            "1.16.0",
            vec!["README.rst", "documentation/index.rst"],
        ),
        ("npm:left-pad@1.3.0", "left-pad", "1.3.0", vec!["README.md"]),
        ("crates:itoa@1.0.11", "itoa", "1.0.11", vec!["README.md"]),
    ] {
        let request = SourceRequest {
            url: url.into(),
            library: library.into(),
            ..SourceRequest::default()
        };
        let status = engine.ingest_source(request, |_| {}).await.expect(url);
        assert_eq!(status.state, JobState::Done, "{url}: {status:#?}");
        assert_eq!(status.version, version, "{url}");
        let stored: Vec<&str> = status
            .files
            .iter()
            .filter(|f| matches!(f.state, FileState::Stored { .. }))
            .map(|f| f.file_path.as_str())
            .collect();
        let (api, docs): (Vec<&str>, Vec<&str>) =
            stored.iter().partition(|p| p.starts_with("api/"));
        assert_eq!(docs, expected, "{url}: {status:#?}");
        // The API reference from the code: six.py's module page and a
        // page per symbol; left-pad's from its index.d.ts; none for a
        // crate (docs.rs is its reference).
        let reference: &[&str] = match library {
            "six" => &["api/six.md", "api/six/add_metaclass.md"],
            "left-pad" => &["api/left-pad/index.md", "api/left-pad/index/leftPad.md"],
            _ => &[],
        };
        assert_eq!(api.is_empty(), reference.is_empty(), "{url}: {api:?}");
        for page in reference {
            assert!(api.contains(page), "{url}: {page} in {api:?}");
        }
        // The archive's total is known once it is opened.
        assert_eq!(
            status.expected,
            Some(status.files.len()),
            "{url}: {status:#?}"
        );
        // The repository each names is not reachable from here: the job
        // says so, and that a README alone came in where it did.
        let notes = status.notes.join("\n");
        assert!(
            notes.contains("the Git repository was not used"),
            "{url}: {notes}"
        );
        if url != "npm:left-pad@1.3.0" {
            // six names its Read the Docs site; itoa, a crate, is on docs.rs.
            assert!(
                notes.contains("the documentation site was not crawled"),
                "{url}: {notes}"
            );
        }
        if expected == ["README.md"] {
            assert!(notes.contains("only the README came in"), "{url}: {notes}");
        }
    }
    let (embedded, _) = engine.metrics().vectors();
    let again = SourceRequest {
        url: "pypi:six==1.16.0".into(),
        library: "six".into(),
        ..SourceRequest::default()
    };
    let status = engine.ingest_source(again, |_| {}).await.expect("again");
    assert_eq!(status.state, JobState::Done, "{status:#?}");
    assert!(
        status.files.iter().all(|f| f.state == FileState::Unchanged),
        "{status:#?}"
    );
    assert_eq!(engine.metrics().vectors().0, embedded);
    let docs = engine
        .documents(&local(), "six", Some("1.16.0"))
        .await
        .expect("docs");
    assert_eq!(
        docs.iter()
            .filter(|d| !d.file_path.starts_with("api/"))
            .count(),
        2,
        "{docs:#?}"
    );
    assert!(
        docs.iter().any(|d| d.file_path == "api/six.md"),
        "{docs:#?}"
    );

    let missing = SourceRequest {
        url: "pypi:docshelf-no-such-package-x9q==1.0".into(),
        library: "nothing".into(),
        ..SourceRequest::default()
    };
    let err = engine
        .ingest_source(missing, |_| {})
        .await
        .expect_err("no such package");
    assert_eq!(err.kind(), index_core::ErrorKind::NotFound, "{err}");
}

/// A package whose archive is refused whole (here, by a limit of one
/// file) stored nothing: its job and source say `failed` with the
/// reason, a second fetch tries the archive again instead of answering
/// "unchanged", and the source, holding no documents, can still be deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_package_fails_is_retried_and_can_be_deleted() {
    let dir = tempfile::tempdir().expect("dir");
    let config = EngineConfig {
        max_files: 1,
        sources: SourceConfig {
            allow_addresses: common::registry_addresses(),
            ..SourceConfig::default()
        },
        ..common::engine_config(dir.path())
    };
    let engine = Engine::open(&config).await.expect("engine");
    // The archive itself, whatever repository its metadata names.
    let request = SourceRequest {
        url: "pypi:six==1.16.0".into(),
        library: "six".into(),
        from: Some(index_core::source::DocsFrom::Package),
        ..SourceRequest::default()
    };
    for attempt in 0..2 {
        let status = engine
            .ingest_source(request.clone(), |_| {})
            .await
            .expect("the fetch runs");
        assert_eq!(status.state, JobState::Failed, "{attempt}: {status:#?}");
        let error = status.error.clone().unwrap_or_default();
        assert!(error.contains("nothing was stored"), "{error}");
        assert!(
            error.contains("max_entries") || error.contains("--max-files"),
            "{error}"
        );
        assert!(
            !status.files.iter().any(|f| f.state == FileState::Unchanged),
            "{attempt}: a retry reads the archive again: {status:#?}"
        );
        let listed = engine.sources(&local()).await.expect("sources");
        let summary = listed.sources[0].last_refresh.clone().expect("a summary");
        assert_eq!(summary.state, JobState::Failed, "{summary:#?}");
        assert_eq!(summary.failed, 1, "{summary:#?}");
        assert!(
            summary.failures[0].reason.contains("entries"),
            "{summary:#?}"
        );
    }
    // No library holds its documents, yet it is deleted by name.
    let deleted = engine
        .delete(&local(), index_core::catalog::Target::Library("six"))
        .await
        .expect("deleted");
    assert_eq!((deleted.documents, deleted.sources), (0, 1), "{deleted:?}");
    assert!(engine
        .sources(&local())
        .await
        .expect("sources")
        .sources
        .is_empty());
    let err = engine
        .delete(&local(), index_core::catalog::Target::Library("six"))
        .await
        .expect_err("nothing left");
    assert_eq!(err.kind(), index_core::ErrorKind::NotFound, "{err}");
}

/// `site` served on loopback and fetched as library `llms` with
/// `llms_txt` on, to its end: the site's and docshelf's base URLs, and the
/// job's final status.
async fn fetched_with_llms_txt(dir: &std::path::Path, site: Arc<Site>) -> (String, String, Value) {
    let site_base = start_site(site).await;
    let (_engine, base) = docshelf(dir).await;
    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": format!("{site_base}/docs/"), "library": "llms", "version": "1", "llms_txt": true}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = common::finished_job(&base, &accepted).await;
    (site_base, base, job)
}

/// With `llms_txt`, a site's `llms-full.txt` is read as the whole
/// documentation instead of crawling its pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sites_llms_full_txt_is_read_when_asked_for() {
    let dir = tempfile::tempdir().expect("dir");
    let site = Site::new();
    site.pages.lock().unwrap().insert(
        "/docs/llms-full.txt".into(),
        "# Git, for language models\n\n## Staging\n\nUse git add to stage a pomegranate-shaped change.\n"
            .into(),
    );
    let (site_base, base, job) = fetched_with_llms_txt(dir.path(), site.clone()).await;
    assert_eq!(job["state"], "done", "{job:#}");
    let by_path = files(&job);
    assert_eq!(by_path.len(), 1, "{job:#}");
    assert_eq!(
        by_path[&format!("{site_base}/docs/llms-full.txt")]["state"],
        "stored"
    );
    // No page of the site was crawled.
    assert_eq!(site.requests("/docs/git-add.html"), 0);
    let (_, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "pomegranate-shaped change", "library": "llms", "mode": "keyword"}),
    )
    .await;
    assert!(
        found["results"][0]["snippet"]
            .to_string()
            .contains("pomegranate"),
        "{found:#}"
    );
}

/// With `llms_txt`, an `llms-full.txt` past the page bound and an
/// `llms.txt` that lists only pages outside the crawl's scope are listed
/// with their reasons, and the site is crawled instead, as documented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_llms_files_are_named_and_the_site_is_crawled_instead() {
    let dir = tempfile::tempdir().expect("dir");
    let site = Site::new();
    {
        let mut pages = site.pages.lock().unwrap();
        pages.insert(
            "/docs/llms-full.txt".into(),
            "# Too big\n\n".repeat(200_000),
        );
        pages.insert(
            "/docs/llms.txt".into(),
            "# Git\n\n- [metadata](http://169.254.169.254/latest/meta-data/)\n\
             - [elsewhere](http://127.0.0.2/docs/git-add.html)\n"
                .into(),
        );
    }
    let (site_base, base, job) = fetched_with_llms_txt(dir.path(), site.clone()).await;
    assert_eq!(job["state"], "done", "{job:#}");
    let by_path = files(&job);
    let full = &by_path[&format!("{site_base}/docs/llms-full.txt")];
    assert_eq!(full["state"], "failed", "{full}");
    assert!(
        full["reason"]
            .as_str()
            .is_some_and(|r| r.contains("llms-full.txt") && r.contains("larger than")),
        "{full}"
    );
    for listed in [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2/docs/git-add.html",
    ] {
        let f = &by_path[listed];
        assert_eq!(f["state"], "skipped", "{listed}: {f}");
        assert!(
            f["reason"]
                .as_str()
                .is_some_and(|r| r.contains("outside the crawl's scope")),
            "{f}"
        );
    }
    // The fallback: the site's pages were crawled.
    assert_eq!(
        by_path[&format!("{site_base}/docs/git-add.html")]["state"],
        "stored",
        "{job:#}"
    );
    let (_, sources) = get_json(&base, "/api/sources").await;
    let notes = sources["sources"][0]["last_refresh"]["notes"].to_string();
    assert!(notes.contains("crawled instead"), "{notes}");
    assert!(
        sources["sources"][0]["last_refresh"]["failures"]
            .to_string()
            .contains("llms-full.txt"),
        "{sources:#}"
    );
}

/// A package source's version is checked before any registry is asked: a
/// bad one is bad input even for a package no registry has (asking first
/// would have answered "no such package").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_sources_version_is_checked_before_the_registry_is_asked() {
    let dir = tempfile::tempdir().expect("dir");
    let engine = common::engine(dir.path()).await;
    for version in ["../../x", "a\0b", &"9".repeat(401)] {
        let request = SourceRequest {
            url: "pypi:docshelf-no-such-package-x9q".into(),
            library: "nothing".into(),
            version: Some(version.to_owned()),
            ..SourceRequest::default()
        };
        let err = engine
            .ingest_source(request, |_| {})
            .await
            .expect_err("refused");
        assert_eq!(
            err.kind(),
            index_core::ErrorKind::BadInput,
            "{version:?}: {err}"
        );
    }
}
