//! What a scoped token learns that it should not, against a real server,
//! store and model: the store's counts in `/metrics` (uploads into
//! libraries it cannot see showed as counters moving), whether a job id
//! it cannot see is real (a hidden job was answered from memory, in half
//! the time of an unknown id), and MCP refusals without the `code` and
//! `kind` every other error carries (a tool's arguments that do not
//! decode, a resource's `max_tokens` that is not a number).

use std::time::{Duration, Instant};

use docshelf_server::http::{Access, RouterConfig};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::common;
use crate::common::mcp::Mcp;

const ADMIN: &str = "admin-s3cret";

/// A served store holding `alpha` and `beta`, each uploaded by the
/// admin, and a token that reads `alpha` only.
struct Seeded {
    base: String,
    reader: String,
    /// The job that uploaded `beta`, which the reader cannot see.
    beta_job: String,
    _dir: tempfile::TempDir,
}

impl Seeded {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let router = RouterConfig {
            access: Access {
                token: Some(ADMIN.into()),
                auth_reads: true,
                ..Access::default()
            },
            ..common::router_config(dir.path(), 1024 * 1024)
        };
        let base = common::serve(&common::engine_config(dir.path()), router).await;
        let client = Client::new();
        let mut jobs = Vec::new();
        for library in ["alpha", "beta"] {
            let text = format!("# {library}\n\nThe {library} quibbleflux notes.\n");
            let form = common::upload_form(library, "1.0", &[("page.md", text.as_bytes())]);
            let id = common::post_upload(&client, &base, form, Some(ADMIN)).await;
            let job = common::wait_until(
                Duration::from_secs(120),
                Duration::from_millis(100),
                || async {
                    let (_, job) = call(
                        client
                            .get(format!("{base}/api/jobs/{id}"))
                            .bearer_auth(ADMIN),
                    )
                    .await;
                    if job["state"] == "done" {
                        Ok(job)
                    } else {
                        Err(job)
                    }
                },
                |job| format!("the seed upload did not finish: {job}"),
            )
            .await;
            assert_eq!(job["error"], Value::Null, "{job}");
            jobs.push(id);
        }
        let (status, made) = call(
            client
                .post(format!("{base}/api/tokens"))
                .bearer_auth(ADMIN)
                .json(&json!({
                    "name": "reader-alpha",
                    "grants": [{ "role": "read", "libraries": "alpha" }],
                })),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        Self {
            base,
            reader: made["token"].as_str().expect("a secret").to_owned(),
            beta_job: jobs.pop().expect("beta's job"),
            _dir: dir,
        }
    }
}

async fn call(request: RequestBuilder) -> (StatusCode, Value) {
    let res = request.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// The status, content type and body of a GET with `token`.
async fn raw_get(url: &str, token: &str) -> (StatusCode, String, String) {
    let res = Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .expect("request");
    let status = res.status();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, kind, res.text().await.expect("body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_a_scoped_token_no_store_wide_counts() {
    let seeded = Seeded::start().await;
    let url = format!("{}/metrics", seeded.base);
    let (status, _, everything) = raw_get(&url, ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    let store_wide = [
        "docshelf_ingested_files",
        "docshelf_stored_chunks",
        "docshelf_upload_vectors",
    ];
    for name in store_wide {
        assert!(
            everything.contains(name),
            "{name} missing for the admin:\n{everything}"
        );
    }
    assert!(
        everything.contains("docshelf_ingested_files_total{outcome=\"stored\"} 2"),
        "{everything}"
    );

    let (status, _, scoped) = raw_get(&url, &seeded.reader).await;
    assert_eq!(status, StatusCode::OK);
    for name in store_wide {
        assert!(
            !scoped.contains(name),
            "{name} shown to a scoped token:\n{scoped}"
        );
    }
    // The process's own figures stay.
    assert!(
        scoped.contains("docshelf_http_requests_total{method=\"POST\",route=\"/api/upload\""),
        "{scoped}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_job_is_answered_as_an_unknown_one() {
    let seeded = Seeded::start().await;
    let hidden = seeded.beta_job.clone();
    // An id of the same shape and length that no job has.
    let unknown = {
        let mut id = hidden.clone();
        let last = id.pop().expect("an id");
        id.push(if last == '9' { '8' } else { '9' });
        id
    };
    for suffix in ["", "/events"] {
        let at = |id: &str| format!("{}/api/jobs/{id}{suffix}", seeded.base);
        let (s1, kind1, body1) = raw_get(&at(&hidden), &seeded.reader).await;
        let (s2, kind2, body2) = raw_get(&at(&unknown), &seeded.reader).await;
        assert_eq!(s1, StatusCode::NOT_FOUND, "{body1}");
        assert_eq!((s1, &kind1), (s2, &kind2));
        // Byte for byte, once each names its own id.
        assert_eq!(
            body1.replace(&hidden, "ID"),
            body2.replace(&unknown, "ID"),
            "{suffix}"
        );
        // The admin sees the job: it is there.
        let (status, _, _) = raw_get(&at(&hidden), ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{suffix}");
    }

    // How long each takes, printed for whoever looks; never asserted (a
    // shared machine's timings say nothing a test could hold).
    let median = |url: String, token: String| async move {
        let mut took = Vec::new();
        for _ in 0..15 {
            let started = Instant::now();
            let _ = raw_get(&url, &token).await;
            took.push(started.elapsed());
        }
        took.sort();
        took[took.len() / 2]
    };
    let at = |id: &str| format!("{}/api/jobs/{id}", seeded.base);
    let hidden_took = median(at(&hidden), seeded.reader.clone()).await;
    let unknown_took = median(at(&unknown), seeded.reader.clone()).await;
    eprintln!("GET /api/jobs/{{id}} as a scoped token, median of 15: hidden {hidden_took:?}, unknown {unknown_took:?}");
}

/// Asserts `body` is docshelf's error body with `code`, of kind bad input.
fn assert_body(body: &Value, code: &str) {
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["kind"], "bad_input", "{body}");
    assert_eq!(body["link"], format!("docs/errors.md#{code}"), "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_refusals_of_what_does_not_decode_carry_our_error_body() {
    let seeded = Seeded::start().await;
    let mut mcp = Mcp::open(&seeded.base, &seeded.reader).await;

    // A number sent as a string, to two tools: a tool error whose
    // structured content is the body, as every other tool error's is.
    for (tool, arguments) in [
        (
            "search_docs",
            json!({"query": "quibbleflux", "max_tokens": "100"}),
        ),
        (
            "get_document",
            json!({"library": "alpha", "version": "1.0", "file_path": "page.md", "max_tokens": "100"}),
        ),
    ] {
        let answer = mcp
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{tool}: {answer}");
        assert_body(&result["structuredContent"], "invalid_arguments");
    }

    // A resource's budget that is not a whole number, and an address of
    // no known shape: JSON-RPC errors whose data is the body, as a budget
    // out of range already was.
    for (uri, code) in [
        (
            "docshelf://alpha/1.0/page.md?max_tokens=1e12",
            "invalid_read",
        ),
        (
            "docshelf://alpha/1.0/page.md?max_tokens=ten",
            "invalid_read",
        ),
        ("docshelf://alpha", "invalid_read"),
        ("docshelf://alpha/1.0/page.md?max_tokens=10", "invalid_read"),
    ] {
        let answer = mcp.request("resources/read", json!({"uri": uri})).await;
        assert!(
            answer["error"]["code"].as_i64().is_some(),
            "{uri}: {answer}"
        );
        assert_body(&answer["error"]["data"], code);
    }

    // What does decode is still answered.
    let answer = mcp
        .request(
            "resources/read",
            json!({"uri": "docshelf://alpha/1.0/page.md?max_tokens=100"}),
        )
        .await;
    let text = answer["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("quibbleflux"), "{answer}");
}
