//! A private documentation site: a real HTTP server on loopback that
//! answers 401 without its token. Its credential is the operator's,
//! declared by name (its secret in a file on the server) and bound to the
//! site's host; it is sent there only (not to the host one of its pages
//! redirects to), and never shown in an answer.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{header, StatusCode as AxumStatus};
use axum::response::{IntoResponse, Redirect, Response};
use reqwest::StatusCode;
use serde_json::json;

use docshelf_server::config::SourceConfig;
use docshelf_server::source::credential::Declared;

use crate::common::{self, finished_job, get_json, post_json, serve_app};

const TOKEN: &str = "s3cret-site-token-7f2a";

/// The private site: two pages behind the token, and a third that
/// redirects to `elsewhere`.
async fn private_site(elsewhere: String) -> String {
    let app = axum::Router::new().fallback(move |request: Request| {
        let elsewhere = elsewhere.clone();
        async move {
            let authorized = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                == Some(&format!("Bearer {TOKEN}"));
            if !authorized {
                return (AxumStatus::UNAUTHORIZED, "sign in").into_response();
            }
            let html = |body: &str| {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    format!("<html><body><main>{body}</main></body></html>"),
                )
                    .into_response()
            };
            match request.uri().path() {
                "/docs/" => html(
                    "<h1>Handbook</h1><p>The handbook of the quokka team.</p>\
                     <a href=\"/docs/deploy.html\">Deploy</a> <a href=\"/docs/moved.html\">Moved</a>",
                ),
                "/docs/deploy.html" => {
                    html("<h1>Deploy</h1><p>Deploys go out on Tuesdays after the quokka review.</p>")
                }
                "/docs/moved.html" => {
                    Redirect::temporary(&format!("{elsewhere}/docs/moved.html")).into_response()
                }
                _ => (AxumStatus::NOT_FOUND, "no").into_response(),
            }
        }
    });
    serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await
}

/// Another host, recording the `Authorization` headers it is sent.
async fn other_host(seen: Arc<Mutex<Vec<Option<String>>>>) -> String {
    async fn record(
        State(seen): State<Arc<Mutex<Vec<Option<String>>>>>,
        request: Request,
    ) -> Response {
        let auth = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        seen.lock().expect("lock").push(auth);
        (AxumStatus::NOT_FOUND, "no").into_response()
    }
    let app = axum::Router::new().fallback(record).with_state(seen);
    serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_site_is_read_with_its_credential_sent_to_it_alone() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let elsewhere = other_host(seen.clone()).await;
    let site = private_site(elsewhere).await;
    let dir = tempfile::tempdir().expect("dir");
    let token_file = dir.path().join("site-token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token");
    // The operator's credential, bound to the site's host and port.
    let declared = format!(
        "handbook-sso=file:{}@{}",
        token_file.display(),
        site.trim_start_matches("http://")
    );
    let sources = SourceConfig {
        allow_addresses: vec![IpAddr::from([127, 0, 0, 1])],
        crawl_rate: 1000.0,
        credentials: vec![Declared::parse(&declared).expect("declared")],
        ..SourceConfig::default()
    };
    let (_engine, base) = common::serve_with_sources(&dir.path().join("store"), sources).await;
    let start = format!("{site}/docs/");

    // Without the credential: the job fails, saying what the site needs.
    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": start, "library": "handbook", "version": "1"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(
        job.to_string()
            .contains("401 (a private site: name a credential the server's operator declared"),
        "{job}"
    );

    // With it, by name: both pages, and the secret nowhere.
    let reference = "handbook-sso";
    let (status, accepted) = post_json(
        &base,
        "/api/sources",
        json!({"url": start, "library": "handbook", "version": "1", "credential": reference}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");
    let job = finished_job(&base, &accepted).await;
    assert_eq!(job["state"], "done", "{job}");
    let stored: Vec<&str> = job["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter(|f| f["state"] == "stored")
        .filter_map(|f| f["file_path"].as_str())
        .collect();
    assert_eq!(stored.len(), 2, "{job}");
    let (_, source) = get_json(
        &base,
        &format!(
            "/api/sources/{}",
            accepted["source_id"].as_str().expect("id")
        ),
    )
    .await;
    let (_, found) = post_json(
        &base,
        "/api/search",
        json!({"query": "when do deploys go out", "library": "handbook"}),
    )
    .await;
    assert_eq!(
        found["results"][0]["file_path"],
        format!("{site}/docs/deploy.html"),
        "{found}"
    );
    for answer in [&accepted, &job, &source, &found] {
        assert!(!answer.to_string().contains(TOKEN), "{answer}");
    }
    assert_eq!(source["request"]["credential"], reference, "{source}");

    // The page that redirects to another host: that host was asked, and
    // never with the credential.
    let asked = seen.lock().expect("lock").clone();
    assert!(!asked.is_empty(), "the redirect was followed");
    assert!(asked.iter().all(Option::is_none), "{asked:?}");

    // A package's registry is public: no credential.
    let (status, refused) = post_json(
        &base,
        "/api/sources",
        json!({"url": "pypi:six", "library": "six", "credential": reference}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("a package's registry is public"),
        "{refused}"
    );
}
