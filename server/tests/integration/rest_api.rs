//! The REST API over a real socket, with the real model and store: search
//! (plain and streamed), libraries, documents, deletes, feedback, tokens,
//! CORS, metrics, and the OpenAPI document against the live routes.

use crate::common::{self, get_json, post_json};

use docshelf_server::http::{Access, RouterConfig};
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

const TOKEN: &str = "s3cret-token";

/// docshelf over HTTP on the store in `store`, with `access` and the CORS
/// origins `cors`.
async fn start(store: &std::path::Path, access: Access, cors: &[&str]) -> String {
    common::serve(
        &common::engine_config(store),
        RouterConfig {
            access,
            cors_origins: cors.iter().map(|s| (*s).to_owned()).collect(),
            ..common::router_config(store, 1024 * 1024)
        },
    )
    .await
}

fn token_access(auth_reads: bool) -> Access {
    Access {
        token: Some(TOKEN.into()),
        auth_reads,
        ..Access::default()
    }
}

/// docshelf with two gardening pages in library `gardening` 1.0, uploaded
/// with the token over HTTP (reads must be open).
async fn seeded(dir: &std::path::Path, access: Access) -> String {
    // A token goes with the upload only where the server has one: an
    // unknown token is refused, on an open server too.
    let token = access.token.clone();
    let base = start(dir, access, &[]).await;
    let form = common::upload_form(
        "gardening",
        "1.0",
        &[
            (
                "roses.md",
                b"# Roses\n\nPrune roses in late winter, just above an outward-facing bud.\n",
            ),
            (
                "compost.md",
                b"# Compost\n\nA compost heap turns kitchen scraps into humus within a year.\n",
            ),
        ],
    );
    let (_, job) = common::upload_and_follow(&Client::new(), &base, form, token.as_deref()).await;
    assert_eq!(job["error"], Value::Null, "{job}");
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_answers_json_and_refuses_bad_input_with_clear_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = seeded(dir.path(), token_access(false)).await;

    let (status, body) = post_json(
        &base,
        "/api/search",
        json!({"query": "when to prune roses", "k": 3}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for field in [
        "query",
        "k",
        "mode",
        "fusion",
        "weights",
        "total_results",
        "results",
        "session_id",
        "sticky_library",
    ] {
        assert!(body.get(field).is_some(), "missing {field}: {body}");
    }
    assert_eq!(
        body["weights"],
        json!({"w_cos": 1.0, "w_rec": 0.0, "w_sig": 0.0})
    );
    let top = &body["results"][0];
    assert_eq!(top["file_path"], "roses.md");
    for field in [
        "chunk_id",
        "library",
        "version",
        "chunk_index",
        "heading_path",
        "page",
        "text",
        "snippet",
        "score",
        "parts",
        "days_old",
    ] {
        assert!(top.get(field).is_some(), "missing {field}: {top}");
    }
    assert!(top["parts"]["dense"].is_number() && top["parts"]["fused"].is_number());

    for (request, status, message) in [
        (json!({"query": "  "}), 400, "query cannot be empty"),
        (json!({"query": "x", "k": 0}), 400, "k must be 1..50"),
        (json!({"query": "x", "k": 51}), 400, "k must be 1..50"),
        (
            json!({"query": "x", "mode": "fuzzy"}),
            400,
            "unknown mode \"fuzzy\" (use hybrid, dense or keyword)",
        ),
        (
            json!({"query": "x", "fusion": "max"}),
            400,
            "unknown fusion \"max\" (use rrf or dbsf)",
        ),
        (
            json!({"query": "x", "library": "kubernetes"}),
            404,
            "no library matches \"kubernetes\"; stored libraries: gardening",
        ),
    ] {
        let (got, body) = post_json(&base, "/api/search", request.clone()).await;
        assert_eq!(got.as_u16(), status, "{request}: {body}");
        assert_eq!(body["error"], message, "{request}");
    }
    // Not JSON at all, or the wrong shape.
    let res = Client::new()
        .post(format!("{base}/api/search"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.expect("json error");
    assert!(body["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("the request body is not valid")));
    let (status, _) = post_json(&base, "/api/search", json!({"k": 3})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // A required field left out is named in docshelf's words.
    let (status, body) = post_json(&base, "/api/ask", json!({"library": "gardening"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"], "the request body lacks the field `question`, which is required",
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_sends_keyword_fused_and_expanded_stages_then_done() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = seeded(dir.path(), Access::default()).await;
    let text = Client::new()
        .post(format!("{base}/api/search/stream"))
        .json(&json!({"query": "prune roses", "expand": 1}))
        .send()
        .await
        .expect("stream")
        .text()
        .await
        .expect("body");
    let events = common::sse(&text);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        names,
        vec!["keyword", "fused", "expanded", "done"],
        "{text}"
    );
    assert_eq!(events[0].1["results"][0]["file_path"], "roses.md");
    assert!(events[2].1["results"][0]["expanded"]["text"].is_string());
    assert_eq!(events[3].1["results"][0]["file_path"], "roses.md");

    // Bad input and unknown libraries are refused before streaming, with
    // their status, not a 200 whose first event is an error.
    let (status, body) = post_json(&base, "/api/search/stream", json!({"query": ""})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("query cannot be empty"))
    );
    let (status, body) = post_json(
        &base,
        "/api/search/stream",
        json!({"query": "x", "library": "nope"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_library"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn libraries_documents_feedback_and_deletes_with_a_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = seeded(dir.path(), token_access(false)).await;
    let client = Client::new();

    let (status, libs) = get_json(&base, "/api/libraries").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(libs[0]["name"], "gardening");
    assert_eq!(libs[0]["versions"][0]["documents"], 2);
    let (_, docs) = get_json(&base, "/api/libraries/gardening/documents?version=latest").await;
    assert_eq!(docs.as_array().map(Vec::len), Some(2));
    let (status, doc) = get_json(
        &base,
        "/api/documents?library=gardening&version=1.0&file_path=roses.md",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["text"]
        .as_str()
        .is_some_and(|t| t.contains("Prune roses")));
    let (status, body) = get_json(
        &base,
        "/api/documents?library=gardening&version=1.0&file_path=none.md",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "no document \"none.md\" in gardening 1.0");
    let (status, _) = get_json(&base, "/api/libraries/nope/documents").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = get_json(&base, "/api/libraries/resolve?name=Gardenning").await;
    assert_eq!(
        (status, body["library"].as_str()),
        (StatusCode::OK, Some("gardening"))
    );

    // Feedback needs the token.
    let (_, found) = post_json(&base, "/api/search", json!({"query": "compost"})).await;
    let chunk_id = found["results"][0]["chunk_id"]
        .as_str()
        .expect("chunk id")
        .to_owned();
    let vote = json!({"chunk_id": chunk_id, "vote": "like"});
    let res = client
        .post(format!("{base}/api/feedback"))
        .json(&vote)
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().contains_key("www-authenticate"));
    assert!(res.json::<Value>().await.expect("json")["error"]
        .as_str()
        .is_some_and(|e| e.contains("Bearer")));
    let res = client
        .post(format!("{base}/api/feedback"))
        .bearer_auth("wrong")
        .json(&vote)
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let res = client
        .post(format!("{base}/api/feedback"))
        .bearer_auth(TOKEN)
        .json(&vote)
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.json::<Value>().await.expect("json"),
        json!({"likes": 1, "dislikes": 0})
    );
    let res = client
        .post(format!("{base}/api/feedback"))
        .bearer_auth(TOKEN)
        .json(&json!({"chunk_id": "nope", "vote": "dislike"}))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);

    // Deletes need the token; a deleted document is gone from search.
    let url = format!("{base}/api/documents?library=gardening&version=1.0&file_path=compost.md");
    assert_eq!(
        client.delete(&url).send().await.expect("delete").status(),
        StatusCode::UNAUTHORIZED
    );
    let res = client
        .delete(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.expect("json")["documents"], 1);
    assert_eq!(
        client
            .delete(&url)
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("delete")
            .status(),
        StatusCode::NOT_FOUND
    );
    let (_, found) = post_json(&base, "/api/search", json!({"query": "compost heap"})).await;
    assert!(found["results"]
        .as_array()
        .expect("results")
        .iter()
        .all(|r| r["file_path"] != "compost.md"));
    let res = client
        .delete(format!("{base}/api/libraries/gardening/versions/1.0"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("delete");
    assert_eq!(res.status(), StatusCode::OK);
    let res = client
        .delete(format!("{base}/api/libraries/gardening"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("delete");
    assert_eq!(
        res.status(),
        StatusCode::NOT_FOUND,
        "the library went with its last version"
    );

    // Metrics saw all of it.
    let metrics = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for needle in [
        "docshelf_http_requests_total{method=\"POST\",route=\"/api/search\",status=\"200\"}",
        "docshelf_http_request_duration_seconds_bucket",
        "docshelf_searches_total{mode=\"hybrid\"}",
        "docshelf_ingested_files_total{outcome=\"stored\"} 2",
        "docshelf_stored_chunks_total 2",
    ] {
        assert!(
            metrics.contains(needle),
            "{needle} missing from:\n{metrics}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_can_require_the_token_and_cors_is_an_allow_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(
        dir.path(),
        token_access(true),
        &["https://docs.example.com"],
    )
    .await;
    let client = Client::new();
    let (status, _) = post_json(&base, "/api/search", json!({"query": "x"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = get_json(&base, "/api/libraries").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Every read face, not only the REST routes, sits behind the read guard.
    for path in ["/metrics", "/api/openapi.json", "/api/jobs/job-x"] {
        let (status, body) = get_json(&base, path).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(body["code"], "missing_token", "{path}");
    }
    let mcp = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .expect("mcp");
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    let res = client
        .get(format!("{base}/api/libraries"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        reqwest::get(format!("{base}/healthz"))
            .await
            .expect("get")
            .status(),
        StatusCode::OK
    );

    let preflight = |origin: &'static str| {
        client
            .request(Method::OPTIONS, format!("{base}/api/search"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
    };
    let allowed = preflight("https://docs.example.com")
        .await
        .expect("preflight");
    assert_eq!(
        allowed
            .headers()
            .get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok()),
        Some("https://docs.example.com")
    );
    let refused = preflight("https://evil.example").await.expect("preflight");
    assert!(refused
        .headers()
        .get("access-control-allow-origin")
        .is_none());

    // Without an allow-list, no CORS headers at all.
    let other = tempfile::tempdir().expect("temp dir");
    let plain = start(other.path(), Access::default(), &[]).await;
    let res = client
        .get(format!("{plain}/api/libraries"))
        .header("origin", "https://docs.example.com")
        .send()
        .await
        .expect("get");
    assert!(res.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_route_is_served_and_oversized_bodies_get_json_413() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(dir.path(), Access::default(), &[]).await;
    let (status, doc) = get_json(&base, "/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented: Vec<String> = Vec::new();
    for (path, item) in paths {
        for method in ["get", "post", "delete"] {
            if item.get(method).is_some() {
                documented.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    documented.sort();
    let expected = [
        "DELETE /api/documents",
        "DELETE /api/libraries/{library}",
        "DELETE /api/libraries/{library}/versions/{version}",
        "DELETE /api/session",
        "DELETE /api/sources/{id}",
        "DELETE /api/tokens/{id}",
        "GET /api/audit",
        "GET /api/credentials",
        "GET /api/documents",
        "GET /api/jobs/{id}",
        "GET /api/jobs/{id}/events",
        "GET /api/libraries",
        "GET /api/libraries/resolve",
        "GET /api/libraries/{library}/changes",
        "GET /api/libraries/{library}/documents",
        "GET /api/libraries/{library}/versions/{version}/export",
        "GET /api/session",
        "GET /api/sources",
        "GET /api/sources/{id}",
        "GET /api/status",
        "GET /api/tokens",
        "POST /api/ask",
        "POST /api/feedback",
        "POST /api/import",
        "POST /api/search",
        "POST /api/search/stream",
        "POST /api/session",
        "POST /api/sources",
        "POST /api/sources/{id}/refresh",
        "POST /api/tokens",
        "POST /api/upload",
    ];
    assert_eq!(documented, expected);
    for schema in [
        "SearchParams",
        "SearchResponse",
        "AskParams",
        "SearchHit",
        "LibraryInfo",
        "Document",
        "ErrorBody",
        "JobStatus",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema} not in the document"
        );
    }

    // Each documented route is live: the router answers it (a JSON error at
    // worst), where an unknown route would get the dashboard's HTML 404.
    let client = Client::new();
    for entry in &documented {
        let (method, path) = entry.split_once(' ').expect("method and path");
        let url = format!(
            "{base}{}",
            path.replace("{library}", "x")
                .replace("{version}", "1")
                .replace("{id}", "job-0")
        );
        let request = match method {
            "GET" => client.get(&url),
            "DELETE" => client.delete(&url),
            _ => client.post(&url).json(&json!({})),
        };
        let res = request.send().await.expect("request");
        let status = res.status();
        let is_json = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.starts_with("application/json") || v.starts_with("text/event-stream")
            });
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{entry}");
        assert!(is_json, "{entry}: {status} is not an API answer");
    }
    let (status, _) = get_json(&base, "/api/no-such-route").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Over the 1 MiB limit: refused by Content-Length, as JSON, before any
    // of the body is read.
    let host = base.trim_start_matches("http://");
    let (status, body) = common::request_head_only(
        &base,
        &format!(
            "POST /api/upload HTTP/1.1\r\nHost: {host}\r\n\
             Content-Type: multipart/form-data; boundary=b\r\n\
             Content-Length: {}\r\n\r\n",
            2 * 1024 * 1024
        ),
    )
    .await;
    assert_eq!(status, 413, "{body}");
    let body: Value = serde_json::from_str(&body).expect("json 413");
    assert!(body["error"]
        .as_str()
        .is_some_and(|e| e.contains("larger than the server accepts")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_is_followed_by_its_watch_token_when_reads_need_the_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(dir.path(), token_access(true), &[]).await;
    let client = Client::new();
    // Each into a version of its own: both jobs may run at once.
    let form = |name: &str| {
        common::upload_form(
            "locked",
            name.trim_end_matches(".md"),
            &[(name, b"# Gates\n\nOil the hinges each spring.\n")],
        )
    };
    let mut accepted = Vec::new();
    for name in ["gates.md", "fences.md"] {
        let res = client
            .post(format!("{base}/api/upload"))
            .bearer_auth(TOKEN)
            .multipart(form(name))
            .send()
            .await
            .expect("upload");
        assert_eq!(res.status(), StatusCode::ACCEPTED);
        accepted.push(res.json::<Value>().await.expect("json"));
    }
    let (first, second) = (&accepted[0], &accepted[1]);
    let (id, watch) = (
        first["job_id"].as_str().expect("job id"),
        first["watch_token"].as_str().expect("watch token"),
    );
    assert_ne!(watch, TOKEN);
    let events = |query: String| {
        client
            .get(format!("{base}/api/jobs/{id}/events{query}"))
            .send()
    };

    // No token, the wrong one, or another job's: refused alike.
    for query in [
        String::new(),
        "?watch=guess".to_owned(),
        format!("?watch={}", second["watch_token"].as_str().expect("token")),
    ] {
        let res = events(query.clone()).await.expect("events");
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{query}");
        assert_eq!(
            res.json::<Value>().await.expect("json")["kind"],
            "unauthorized"
        );
    }
    // An unknown job is not told apart from a refusal without a token.
    let probe = client
        .get(format!("{base}/api/jobs/job-nope/events"))
        .send()
        .await
        .expect("probe");
    assert_eq!(probe.status(), StatusCode::UNAUTHORIZED);

    // The job's own watch token follows it to the end.
    let stream = events(format!("?watch={watch}"))
        .await
        .expect("events")
        .text()
        .await
        .expect("stream");
    assert!(stream.contains("event: done"), "{stream}");
    // The token opens nothing else: the job's status is still a guarded read.
    let status = client
        .get(format!("{base}/api/jobs/{id}?watch={watch}"))
        .send()
        .await
        .expect("job");
    assert_eq!(status.status(), StatusCode::UNAUTHORIZED);
}
