//! One error shape on every face, limits on every identifier, and the Host
//! check on absolute-form targets, against the real `docshelf serve` and
//! `docshelf mcp` processes over real HTTP and stdio.
//!
//! Every error a client can provoke is JSON `{code, error}` (a JSON-RPC
//! error object carrying it, on MCP), never an empty body or an HTML page;
//! an identifier over its limit is refused with a 400 that does not echo
//! it; a stream that cannot start answers its status before it starts.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use index_core::ErrorKind;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

/// `docshelf serve` in its own process ([`common::ServerProcess`]) with a
/// fresh store and no dashboard bundle; killed when dropped.
struct Served {
    _server: common::ServerProcess,
    base: String,
    _dir: tempfile::TempDir,
}

impl Served {
    /// Starts it with request bodies up to `max_body_mib`.
    async fn start(max_body_mib: usize) -> Self {
        Self::start_with(max_body_mib, &[]).await
    }

    /// As [`Self::start`], with more flags.
    async fn start_with(max_body_mib: usize, flags: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (max_body, site) = (
            max_body_mib.to_string(),
            dir.path().join("site").display().to_string(),
        );
        let mut args = vec!["--max-body-mib", &max_body, "--site-dir", &site];
        args.extend_from_slice(flags);
        let server = common::ServerProcess::start(&dir.path().join("data"), &args).await;
        let base = server.base.clone();
        Self {
            _server: server,
            base,
            _dir: dir,
        }
    }
}

/// The response's status, and its body as JSON (asserting it is JSON).
async fn json_of(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = res.text().await.expect("body");
    assert!(
        kind.starts_with("application/json"),
        "{status}: not JSON ({kind}): {}",
        &text[..text.len().min(300)]
    );
    let body = serde_json::from_str(&text).expect("a JSON body");
    (status, body)
}

/// Sends `request`, asserts the answer is an error body with `want` and
/// `code` that does not echo what was sent ([`assert_error`]), and returns
/// the body.
async fn refused(request: reqwest::RequestBuilder, want: StatusCode, code: &str) -> Value {
    let (status, body) = json_of(request.send().await.expect("an answer")).await;
    assert_error(status, &body, want, code);
    body
}

/// Asserts an error body `{code, kind, error, link}` whose code (or, where
/// the test names a class, kind) is `code`, whose kind is the status's, and
/// whose message is short (the value sent was not echoed whole).
fn assert_error(status: StatusCode, body: &Value, want: StatusCode, code: &str) {
    assert_eq!(status, want, "{body}");
    assert!(
        body["code"] == code || body["kind"] == code,
        "{code}: {body}"
    );
    let kind = ErrorKind::of_status(status.as_u16());
    if status.as_u16() != 431 {
        assert_eq!(body["kind"], kind.code(), "{body}");
    }
    let named = body["code"].as_str().expect("a code");
    assert_eq!(body["link"], format!("docs/errors.md#{named}"), "{body}");
    let message = body["error"].as_str().expect("an error message");
    assert!(message.len() < 1000, "{} bytes echoed", message.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_http_error_is_json_with_a_code() {
    let served = Served::start(8).await;
    let base = &served.base;
    let client = Client::new();

    // 404 under /api and /rpc: JSON, not the dashboard's page.
    for path in ["/api/no/such/route", "/rpc/no_such_function"] {
        let (status, body) =
            json_of(client.get(format!("{base}{path}")).send().await.unwrap()).await;
        assert_error(status, &body, StatusCode::NOT_FOUND, "unknown_route");
    }
    // 405: a route that exists, another method.
    let res = client
        .delete(format!("{base}/api/search"))
        .send()
        .await
        .unwrap();
    assert!(res.headers().contains_key("allow"));
    let (status, body) = json_of(res).await;
    assert_error(
        status,
        &body,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
    // 413: over the body limit, refused by its declared length before the
    // body is read (sent as a head alone: a client still sending the body
    // when the server closes may lose the answer to a reset).
    let (status, text) = common::request_head_only(
        base,
        "POST /api/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: 9437184\r\nConnection: close\r\n\r\n",
    )
    .await;
    let body: Value = serde_json::from_str(&text).expect("a JSON body");
    assert_error(
        StatusCode::from_u16(status).expect("status"),
        &body,
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
    );
    // 414: a target longer than the server reads.
    let long = "a".repeat(20 * 1024);
    refused(
        client.get(format!("{base}/api/libraries/resolve?name={long}")),
        StatusCode::URI_TOO_LONG,
        "uri_too_long",
    )
    .await;
    // Past hyper's own limits (a 64 KiB target, a head it cannot parse),
    // hyper answers before the router: JSON all the same. (A head over
    // hyper's 400 KiB buffer gets 431 the same way; it is not sent here,
    // as the server closes with part of it unread and the answer may be
    // lost to the reset.)
    for (head, want, code) in [
        (
            format!(
                "GET /api/libraries?x={} HTTP/1.1\r\nHost: localhost\r\n\r\n",
                "a".repeat(70_000)
            ),
            414,
            "uri_too_long",
        ),
        (
            "GET /api/libraries HTTP/1.1\r\nBad Header\r\n\r\n".to_owned(),
            400,
            "unparsable_request",
        ),
    ] {
        let (status, text) = common::request_head_only(base, &head).await;
        assert_eq!(status, want, "{text}");
        let body: Value = serde_json::from_str(&text).expect("a JSON body");
        assert_eq!(body["code"], code, "{body}");
    }
    // 415: not JSON, and an upload that is not a multipart form.
    for path in ["/api/search", "/api/upload"] {
        let res = client
            .post(format!("{base}{path}"))
            .header("content-type", "text/plain")
            .body("query")
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(res).await;
        assert_error(
            status,
            &body,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        );
    }

    // A server function's argument of 100 KB: a JSON 400, not an empty 500.
    refused(
        client
            .post(format!("{base}/rpc/documents"))
            .form(&[("library", "l".repeat(100_000)), ("version", "1".into())]),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;
    // …and one that does not decode at all.
    refused(
        client
            .post(format!("{base}/rpc/documents"))
            .form(&[("nonsense", "n".repeat(100_000))]),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;

    // A stream that cannot start answers its status, not 200 then an error.
    refused(
        client
            .post(format!("{base}/api/search/stream"))
            .json(&json!({"query": "anything", "library": "no-such-library"})),
        StatusCode::NOT_FOUND,
        "unknown_library",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_cannot_start_is_refused_before_the_stream() {
    // Ask is on, with a model that is never reached: the question's search
    // fails first, so the answer is the search's status, not a 200 stream.
    let llm = format!("http://127.0.0.1:{}", common::free_port());
    let served = Served::start_with(16, &["--llm-url", &llm]).await;
    refused(
        Client::new()
            .post(format!("{}/api/ask", served.base))
            .json(&json!({"question": "how?", "library": "no-such-library"})),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identifiers_over_their_limits_are_refused_not_echoed_or_fixed() {
    let served = Served::start(16).await;
    let base = &served.base;
    let client = Client::new();
    let search = |body: Value| {
        let client = client.clone();
        let url = format!("{base}/api/search");
        async move { json_of(client.post(url).json(&body).send().await.unwrap()).await }
    };

    // A 5 MiB library name: refused at once, and not echoed.
    let huge = "x".repeat(5 << 20);
    let (status, body) = search(json!({"query": "q", "library": huge})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
    // A NUL inside a library name is refused, not normalised away.
    let (status, body) = search(json!({"query": "q", "library": "rea\u{0}ct"})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
    // A 1 MiB session id is refused, not silently replaced.
    let (status, body) = search(json!({"query": "q", "session_id": "s".repeat(1 << 20)})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
    // A query over its limit in bytes.
    let (status, body) = search(json!({"query": "é".repeat(3000)})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");

    // resolve?name= empty or invalid.
    for query in ["name=", "name=%20", "name=a%00b", "name=%E2%80%AEx"] {
        let res = client
            .get(format!("{base}/api/libraries/resolve?{query}"))
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(res).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
    }
    // A document path over its limit.
    let long_path = "p".repeat(2000);
    refused(
        client.get(format!("{base}/api/documents")).query(&[
            ("library", "a"),
            ("version", "1"),
            ("file_path", &long_path),
        ]),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;

    // Ids the server made, sent back over their limits: a job id, a chunk
    // id (REST and the dashboard's server function alike).
    refused(
        client.get(format!("{base}/api/jobs/{}", "j".repeat(10_000))),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;
    refused(
        client
            .post(format!("{base}/api/feedback"))
            .json(&json!({"chunk_id": "c".repeat(5 << 20), "vote": "like"})),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;
    refused(
        client
            .post(format!("{base}/rpc/feedback"))
            .form(&[("chunk_id", "c".repeat(66_000)), ("vote", "like".into())]),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;
    for endpoint in ["sticky", "clear_sticky"] {
        let res = client
            .post(format!("{base}/rpc/{endpoint}"))
            .form(&[("session_id", "s".repeat(1 << 20))])
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(res).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
    }

    // A multipart field given twice: which one was meant is the client's
    // to say.
    for twice in ["library", "version"] {
        let form =
            common::upload_form("lib", "1", &[("a.md", b"# A\n\nText.\n")]).text(twice, "other");
        let res = client
            .post(format!("{base}/api/upload"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(res).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "bad_input");
        assert!(body["error"].as_str().unwrap().contains(twice), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploaded_file_names_are_stored_as_safe_relative_paths() {
    let served = Served::start(16).await;
    let base = &served.base;
    let client = Client::new();
    let page = b"# Page\n\nSome words to store.\n".as_slice();
    let mut archive = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut archive);
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("dir\\sub\\in\u{202E}side.md", options)
            .expect("zip entry");
        zip.write_all(page).expect("zip data");
        zip.finish().expect("zip");
    }
    let archive = archive.into_inner();
    let form = common::upload_form(
        "names",
        "1",
        &[
            ("../../up.md", page),
            ("/abs/olute.md", page),
            ("C:\\win\\dows.md", page),
            ("bi\u{202E}di\u{2066}.md", page),
            ("bundle.zip", &archive),
        ],
    );
    let job = common::post_upload(&client, base, form, None).await;
    let events = common::job_events(&client, base, &job).await;
    assert!(events.contains("done"), "{events}");

    let res = client
        .get(format!("{base}/api/libraries/names/documents"))
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(res).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut paths: Vec<&str> = body
        .as_array()
        .expect("documents")
        .iter()
        .filter_map(|d| d["file_path"].as_str())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "abs/olute.md",
            "bidi.md",
            "dir/sub/inside.md",
            "up.md",
            "win/dows.md"
        ]
    );

    // A name with nothing safe left is refused.
    let form = common::upload_form("names", "2", &[("../..", page)]);
    refused(
        client.post(format!("{base}/api/upload")).multipart(form),
        StatusCode::BAD_REQUEST,
        "bad_input",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_target_is_checked_as_the_host() {
    let served = Served::start(16).await;
    let base = &served.base;
    // RFC 9112 §3.2.2: the target's authority, not the Host header.
    let (status, body) = common::request_head_only(
        base,
        "GET http://evil.example/api/libraries HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["code"], "unknown_host");
    assert!(body["error"].as_str().unwrap().contains("evil.example"));
    // The same target naming this server is answered, whatever Host says.
    let (status, body) = common::request_head_only(
        base,
        "GET http://localhost/api/libraries HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Origin form: the Host header decides, as before.
    let (status, _) = common::request_head_only(
        base,
        "GET /api/libraries HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_errors_are_json_rpc_errors_with_our_code() {
    let served = Served::start(16).await;
    let client = Client::new();
    // Over HTTP: a client that does not accept event streams, and a body
    // that is not JSON-RPC; rmcp answers both as plain text underneath.
    for (accept, body, code) in [
        (
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "not_acceptable",
        ),
        (
            "application/json, text/event-stream",
            "this is not json",
            "mcp_parse_error",
        ),
    ] {
        let res = client
            .post(format!("{}/mcp", served.base))
            .header("accept", accept)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_client_error(), "{}", res.status());
        let (_, body) = json_of(res).await;
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert!(body["error"]["code"].as_i64().is_some(), "{body}");
        assert_eq!(body["error"]["data"]["code"], code, "{body}");
    }

    // Over stdio: a malformed line gets a parse error, then the session
    // goes on.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args(["mcp", "--device", "cpu", "--data"])
        .arg(dir.path())
        .arg("--model-dir")
        .arg(common::model_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("docshelf mcp runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut answer = || {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read a line");
        serde_json::from_str::<Value>(&line).expect("a JSON line")
    };
    writeln!(stdin, "{{ not json").unwrap();
    let parse = answer();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(parse["error"]["data"]["code"], "mcp_parse_error");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":7,"nonsense":true}}"#).unwrap();
    let invalid = answer();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    assert_eq!(invalid["id"], 7);
    assert_eq!(invalid["error"]["data"]["code"], "invalid_mcp_message");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    let ready = answer();
    assert_eq!(ready["id"], 1, "{ready}");
    assert!(ready["result"]["serverInfo"].is_object(), "{ready}");
    drop(stdin);
    let _ = child.wait();
}
