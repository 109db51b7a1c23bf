//! Names a hostile client chooses, against a real server and store: a
//! library or version holding a line break or a bidirectional override,
//! which a refused write used to write into the audit log as it was, so
//! `docshelf audit` printed a made-up admin delete under it; and token
//! grants that can never match a library (a NUL, a bidi character, a
//! pattern padded with spaces) or a second token of a name the audit log
//! already uses, which token creation used to accept.

use std::process::Command;

use docshelf_server::http::{Access, RouterConfig};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use crate::common;

const ADMIN: &str = "admin-s3cret";

/// A line `docshelf audit` would print for an admin's delete, hidden in a
/// name after a line break.
const FORGED: &str = "2030-01-01T00:00:00Z  admin                delete          ok         prod";

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
async fn a_name_holding_a_line_break_adds_no_line_to_the_audit_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = served(dir.path()).await;
    let client = Client::new();
    let (status, made) = create_token(
        &base,
        "reader",
        json!([{ "role": "read", "libraries": "alpha" }]),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let reader = made["token"].as_str().expect("a secret").to_owned();

    // Writes a read token may not make, each naming its target with a
    // line break or a right-to-left override: in the library, which is
    // refused for the name itself, and in the version of a library the
    // token names correctly, which is refused for the role.
    let forged_library = format!("alpha\n{FORGED}");
    let form = common::upload_form(&forged_library, "1.0", &[("a.md", b"# A\n".as_slice())]);
    let (status, body) = call(
        client
            .post(format!("{base}/api/upload"))
            .bearer_auth(&reader)
            .multipart(form),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "invalid_name", "{body}");
    let form = common::upload_form("alpha\u{202E}dorp", "1.0", &[("a.md", b"# A\n".as_slice())]);
    let (status, body) = call(
        client
            .post(format!("{base}/api/upload"))
            .bearer_auth(&reader)
            .multipart(form),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = call(
        client
            .post(format!("{base}/api/sources"))
            .bearer_auth(&reader)
            .json(&json!({
                "url": "https://docs.example.com/",
                "library": "alpha",
                "version": format!("1.0\r\n{FORGED}"),
            })),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // The log keeps each refusal, as one line each: the name escaped.
    let (status, audit) = call(
        client
            .get(format!("{base}/api/audit?limit=100"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{audit}");
    let entries = audit.as_array().expect("entries");
    let refused: Vec<&Value> = entries.iter().filter(|e| e["token"] == "reader").collect();
    assert_eq!(refused.len(), 3, "{audit}");
    for entry in &refused {
        let target = entry["target"].as_str().expect("a target");
        assert!(!breaks_a_line(target), "{entry}");
    }
    let outcomes: Vec<&str> = refused
        .iter()
        .filter_map(|e| e["outcome"].as_str())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "invalid_name").count(),
        2,
        "{audit}"
    );
    assert!(outcomes.contains(&"not_permitted"), "{audit}");
    assert!(
        refused
            .iter()
            .any(|e| e["target"].as_str().is_some_and(|t| t.contains("\\n2030"))),
        "the name is kept, escaped: {audit}"
    );

    // `docshelf audit` prints one line per entry, none of them forged.
    let out = Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args([
            "audit", "--limit", "100", "--server", &base, "--token", ADMIN,
        ])
        .output()
        .expect("docshelf audit runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).expect("UTF-8");
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), entries.len(), "{printed}");
    for line in &lines {
        assert!(!line.starts_with("2030-"), "a forged line: {printed}");
        assert!(!breaks_a_line(line), "{line:?}");
    }
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
