//! Names a hostile client chooses, against a real server and store:
//! token grants that can never match a library (a NUL, a bidi character,
//! a pattern padded with spaces) or a second token of a name the audit
//! log already uses, which token creation used to accept.

use std::process::Command;

use docshelf_server::http::{Access, RouterConfig};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::common;

const ADMIN: &str = "admin-s3cret";

/// docshelf with an admin token on a fresh store in `dir` (its model is
/// not needed: nothing here is embedded). Returns the base URL.
async fn served(dir: &std::path::Path) -> String {
    let router = RouterConfig {
        access: Access {
            token: Some(ADMIN.into()),
            ..Access::default()
        },
        ..common::router_config(dir, 1024 * 1024)
    };
    common::serve_engine(common::engine(dir).await, &router).await
}

async fn call(request: RequestBuilder) -> (StatusCode, Value) {
    let res = request.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// `POST /api/tokens` as the admin.
async fn create_token(base: &str, name: &str, grants: Value) -> (StatusCode, Value) {
    call(
        Client::new()
            .post(format!("{base}/api/tokens"))
            .bearer_auth(ADMIN)
            .json(&json!({ "name": name, "grants": grants })),
    )
    .await
}

/// Whether `text` holds a character that breaks or reorders a line.
fn breaks_a_line(text: &str) -> bool {
    text.chars().any(index_core::validate::is_control_or_bidi)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_that_match_no_library_and_names_in_use_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = served(dir.path()).await;

    // A NUL, a bidi override or isolate, a line break, and spaces around
    // the name: no stored library is named so, and the first two make a
    // listing of the grant read as another library's.
    for (pattern, said) in [
        ("al\0pha", "U+0000"),
        ("al\u{202E}ahp", "U+202E"),
        ("\u{2066}alpha\u{2069}", "U+2066"),
        ("alpha\nread:*", "U+000A"),
        (" alpha ", "starts or ends with a space"),
        ("alpha ", "starts or ends with a space"),
    ] {
        let (status, body) = create_token(
            &base,
            "probe",
            json!([{ "role": "read", "libraries": pattern }]),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{pattern:?}: {body}");
        assert_eq!(body["code"], "invalid_grant", "{pattern:?}: {body}");
        let message = body["error"].as_str().expect("a message");
        assert!(message.contains(said), "{pattern:?}: {message}");
        assert!(!breaks_a_line(message), "{pattern:?}: {message:?}");
    }

    // The command line goes through the same check.
    let out = Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args(["token", "create", "probe", "--grant", "read:al\u{202E}ahp"])
        .args(["--server", &base, "--token", ADMIN])
        .output()
        .expect("docshelf token create runs");
    assert!(!out.status.success(), "the CLI made the token");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("U+202E"), "{stderr}");

    // No token was made by any of these.
    let (_, tokens) = call(
        Client::new()
            .get(format!("{base}/api/tokens"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(tokens, json!([]), "{tokens}");

    // One name, one token: a second one is a conflict, in any case, and
    // after the first is revoked (the audit log still names it).
    let grants = json!([{ "role": "read", "libraries": "alpha" }]);
    let (status, first) = create_token(&base, "ci", grants.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    for name in ["ci", "CI"] {
        let (status, body) = create_token(&base, name, grants.clone()).await;
        assert_eq!(status, StatusCode::CONFLICT, "{name}: {body}");
        assert_eq!(body["code"], "token_name_taken", "{name}: {body}");
    }
    let id = first["info"]["id"].as_str().expect("an id");
    let (status, _) = call(
        Client::new()
            .delete(format!("{base}/api/tokens/{id}"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = create_token(&base, "ci", grants).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (_, tokens) = call(
        Client::new()
            .get(format!("{base}/api/tokens"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(tokens.as_array().map(Vec::len), Some(1), "{tokens}");
}
