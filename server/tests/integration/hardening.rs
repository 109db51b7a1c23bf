//! Hostile clients over real HTTP: cross-site writes and foreign hosts are
//! refused, long queries are refused, a busy or slow search answers 503
//! with `Retry-After` instead of queueing without bound, and connections
//! that trickle or idle are closed.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use docshelf_server::http::{router, RouterConfig};
use reqwest::StatusCode;
use serde_json::{json, Value};

/// Bodies up to 1 MiB, the dashboard's files under `dir/site`.
fn config(dir: &std::path::Path) -> RouterConfig {
    common::router_config(dir, 1024 * 1024)
}

/// An upload form with one page, `name`, for library `planted`.
/// An upload of `name` into a version of its own (two uploads into one
/// version at once would be refused with 409).
fn form(name: &str) -> reqwest::multipart::Form {
    common::upload_form(
        "planted",
        name.trim_end_matches(".md"),
        &[(name, b"# Planted\n\nA page from another site.\n")],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_from_other_sites_and_requests_for_other_hosts_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = common::serve_engine(common::engine(dir.path()).await, &config(dir.path())).await;
    let client = reqwest::Client::new();
    let port = base.rsplit(':').next().expect("port");

    // A cross-site multipart form, as a page elsewhere would post it.
    let res = client
        .post(format!("{base}/api/upload"))
        .header("origin", "http://evil.example")
        .header("sec-fetch-site", "cross-site")
        .multipart(form("a.md"))
        .send()
        .await
        .expect("upload");
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let body: Value = res.json().await.expect("json error");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("another site")),
        "{body}"
    );

    // Another port on localhost is the same site, but not this origin.
    for (method, path) in [
        (reqwest::Method::DELETE, "/api/libraries/anything"),
        (reqwest::Method::POST, "/rpc/delete"),
        (reqwest::Method::POST, "/api/feedback"),
    ] {
        let res = client
            .request(method.clone(), format!("{base}{path}"))
            .header("origin", "http://127.0.0.1:1")
            .header("sec-fetch-site", "same-site")
            .header("content-type", "application/x-www-form-urlencoded")
            .body("library=anything")
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{method} {path}");
    }

    // DNS rebinding: a name that is not this server's.
    let res = client
        .get(format!("{base}/api/libraries"))
        .header("host", format!("rebind.evil.example:{port}"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(res.text().await.expect("body").contains("--allowed-hosts"));
    let res = client
        .get(format!("{base}/api/libraries"))
        .header("host", format!("localhost:{port}"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::OK);

    let (_, libraries) = common::get_json(&base, "/api/libraries").await;
    assert_eq!(libraries, json!([]), "nothing was stored");

    // The dashboard's own origin, and clients that are not browsers, write.
    let res = client
        .post(format!("{base}/api/upload"))
        .header("origin", base.clone())
        .header("sec-fetch-site", "same-origin")
        .multipart(form("b.md"))
        .send()
        .await
        .expect("upload");
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let job = common::post_upload(&client, &base, form("c.md"), None).await;
    assert!(job.starts_with("job-"), "{job}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_host_names_are_answered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = common::serve_engine(
        common::engine(dir.path()).await,
        &RouterConfig {
            allowed_hosts: vec!["docs.example.com".into()],
            ..config(dir.path())
        },
    )
    .await;
    let res = reqwest::Client::new()
        .get(format!("{base}/api/libraries"))
        .header("host", "docs.example.com")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_queries_are_refused_and_busy_or_slow_searches_say_when_to_retry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = reqwest::Client::new();
    let search = |base: String, query: String| {
        let client = client.clone();
        async move {
            client
                .post(format!("{base}/api/search"))
                .json(&json!({ "query": query }))
                .send()
                .await
                .expect("search")
        }
    };

    // One search at a time: a burst gets immediate 503s, not a queue.
    let base = common::serve_engine(
        common::engine(dir.path())
            .await
            .with_search_limits(1, Duration::from_secs(10)),
        &config(dir.path()),
    )
    .await;
    let res = search(base.clone(), "x".repeat(1001)).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body["error"],
        "query is too long: 1001 characters (at most 1000)"
    );

    let burst = futures::future::join_all(
        (0..24).map(|i| search(base.clone(), format!("how to configure option {i}"))),
    )
    .await;
    let busy: Vec<&reqwest::Response> = burst
        .iter()
        .filter(|r| r.status() == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert!(!busy.is_empty(), "a burst over the limit is refused");
    assert!(burst.iter().any(|r| r.status() == StatusCode::OK));
    assert!(burst
        .iter()
        .all(|r| r.status() == StatusCode::OK || r.status() == StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(busy[0].headers()["retry-after"], "1");

    // A budget no search can meet: stopped, 503, told to retry.
    let dir2 = tempfile::tempdir().expect("temp dir");
    let base = common::serve_engine(
        common::engine(dir2.path())
            .await
            .with_search_limits(8, Duration::from_micros(1)),
        &config(dir2.path()),
    )
    .await;
    let res = search(base, "anything at all".into()).await;
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.headers()["retry-after"], "1");
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("took longer")),
        "{body}"
    );
}

/// Reads until the server closes the connection; `None` if it is still
/// open after `limit` (a generous bound, far above the timeout under test).
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(limit, read).await.ok().map(|()| seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_idle_or_trickle_their_headers_are_closed() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let app = router(
        Arc::new(common::engine(dir.path()).await),
        &config(dir.path()),
    );
    let base = common::serve_app(app, Duration::from_secs(1)).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let limit = Duration::from_secs(20);

    // Connects and sends nothing.
    let mut idle = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    assert!(
        closed_within(&mut idle, limit).await.is_some(),
        "an idle connection stayed open"
    );

    // Sends a header line every 300 ms, never finishing the head.
    let mut slow = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    let trickle = async {
        for i in 0.. {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if slow
                .write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
                .await
                .is_err()
            {
                return true;
            }
            if i > 60 {
                return false;
            }
        }
        false
    };
    assert!(trickle.await, "a trickling client was never cut off");

    // A request that arrives whole is answered, and the connection, kept
    // alive, is closed once it idles past the timeout.
    let mut kept = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    let answer = closed_within(&mut kept, limit)
        .await
        .expect("closed after idling");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // The server still answers.
    let health = reqwest::get(format!("{base}/healthz"))
        .await
        .expect("healthz");
    assert_eq!(health.status(), StatusCode::OK);
}
