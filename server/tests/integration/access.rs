//! Tokens with roles per library, over a real socket with the real model
//! and store: what a read token for one library can see and do on every
//! HTTP face (REST, the dashboard's server functions, the search stream,
//! jobs), token errors, sign-in cookies, the audit log, failed-attempt
//! limits, and tokens shared by two replicas on one object store.

use std::time::Duration;

use crate::common;
use crate::s3_server::S3Server;

use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use docshelf_server::http::{Access, RouterConfig};
use docshelf_server::store::tokens::StoredToken;
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

const ADMIN: &str = "admin-s3cret";

/// A client call with `token` as its bearer token, if any.
fn with(token: Option<&str>, request: RequestBuilder) -> RequestBuilder {
    match token {
        Some(t) => request.bearer_auth(t),
        None => request,
    }
}

async fn call(request: RequestBuilder) -> (StatusCode, Value) {
    let res = request.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Makes a token through the REST API as the admin; returns its secret.
async fn make_token(base: &str, name: &str, grants: Value) -> String {
    let (status, made) = call(
        Client::new()
            .post(format!("{base}/api/tokens"))
            .bearer_auth(ADMIN)
            .json(&json!({ "name": name, "grants": grants })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["token"].as_str().expect("the secret").to_owned()
}

/// Library names of a listing.
fn names(listing: &Value) -> Vec<&str> {
    listing
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect()
}

/// A 404 body with the given name replaced, so the bodies for a hidden
/// name and a name never stored can be compared.
fn masked(body: &Value, name: &str) -> String {
    body.to_string().replace(name, "NAME")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_token_for_one_library_sees_only_it_and_writes_nothing_on_every_face() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = EngineConfig {
        read_consistency_secs: 0.2,
        ..common::engine_config(dir.path())
    };
    let base = common::serve(
        &config,
        RouterConfig {
            access: Access {
                token: Some(ADMIN.into()),
                auth_reads: true,
                ..Access::default()
            },
            ..common::router_config(dir.path(), 1024 * 1024)
        },
    )
    .await;
    let client = Client::new();
    for (library, text) in [
        (
            "alpha",
            "# Hinges\n\nOil the quibbleflux hinges every spring.\n",
        ),
        (
            "beta",
            "# Secret\n\nThe quibbleflux launch codes are kept here.\n",
        ),
    ] {
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
    }
    let beta_job = {
        let form = common::upload_form("beta", "2.0", &[("more.md", b"# More\n\nquibbleflux.\n")]);
        common::post_upload(&client, &base, form, Some(ADMIN)).await
    };

    let reader = make_token(
        &base,
        "reader-alpha",
        json!([{ "role": "read", "libraries": "alpha" }]),
    )
    .await;
    let writer = make_token(
        &base,
        "ci-alpha",
        json!([{ "role": "write", "libraries": "alph*" }]),
    )
    .await;
    let r = Some(reader.as_str());

    // Listings, resolution and status name alpha only.
    let (status, listing) = call(with(r, client.get(format!("{base}/api/libraries")))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&listing), ["alpha"]);
    let (_, resolved) = call(with(
        r,
        client.get(format!("{base}/api/libraries/resolve?name=bet")),
    ))
    .await;
    // An answer (a resolution, or unknown_library with its candidates),
    // not an empty body, and without the hidden name.
    assert!(resolved.is_object(), "{resolved}");
    assert!(!resolved.to_string().contains("beta"), "{resolved}");
    let (_, status_body) = call(with(r, client.get(format!("{base}/api/status")))).await;
    assert_eq!(
        status_body["store"]["counts"]["libraries"], 1,
        "{status_body}"
    );

    // A search of everything finds alpha's page and never beta's.
    let (status, found) = call(
        with(r, client.post(format!("{base}/api/search")))
            .json(&json!({ "query": "quibbleflux", "mode": "keyword" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let libraries: Vec<&str> = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|h| h["library"].as_str())
        .collect();
    assert_eq!(libraries, ["alpha"], "{found}");
    // The stream too.
    let stream = with(r, client.post(format!("{base}/api/search/stream")))
        .json(&json!({ "query": "quibbleflux launch codes", "mode": "keyword" }))
        .send()
        .await
        .expect("stream")
        .text()
        .await
        .expect("events");
    assert!(stream.contains("event: done"), "{stream}");
    assert!(!stream.contains(r#""library":"beta""#), "{stream}");

    // A session whose sticky library the admin set to beta: the reader in
    // the same session searches its own libraries and is not told of beta.
    let session = "a-session-shared-for-the-test";
    let (status, _) = call(
        client
            .post(format!("{base}/api/search"))
            .bearer_auth(ADMIN)
            .json(&json!({ "query": "codes", "library": "beta", "session_id": session })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, found) = call(
        with(r, client.post(format!("{base}/api/search")))
            .json(&json!({ "query": "quibbleflux", "mode": "keyword", "session_id": session })),
    )
    .await;
    assert_eq!(found["sticky_library"], Value::Null, "{found}");
    assert_eq!(found["sticky_applied"], false, "{found}");
    assert!(!found.to_string().contains("beta"), "{found}");

    // A hidden name answers exactly as a name never stored.
    for (hidden, never) in [
        (
            format!("{base}/api/libraries/beta/documents"),
            format!("{base}/api/libraries/zzzz/documents"),
        ),
        (
            format!("{base}/api/documents?library=beta&version=1.0&file_path=page.md"),
            format!("{base}/api/documents?library=zzzz&version=1.0&file_path=page.md"),
        ),
        (
            format!("{base}/api/libraries/beta/changes?from=1.0&to=latest"),
            format!("{base}/api/libraries/zzzz/changes?from=1.0&to=latest"),
        ),
    ] {
        let (s1, b1) = call(with(r, client.get(&hidden))).await;
        let (s2, b2) = call(with(r, client.get(&never))).await;
        assert_eq!((s1, s2), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
        assert_eq!(masked(&b1, "beta"), masked(&b2, "zzzz"));
    }
    let (s1, b1) = call(
        with(r, client.post(format!("{base}/api/search")))
            .json(&json!({ "query": "codes", "library": "beta" })),
    )
    .await;
    let (s2, b2) = call(
        with(r, client.post(format!("{base}/api/search")))
            .json(&json!({ "query": "codes", "library": "zzzz" })),
    )
    .await;
    assert_eq!((s1, s2), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    assert_eq!(masked(&b1, "beta"), masked(&b2, "zzzz"));
    // Beta's job is unknown to it, as a job that never ran.
    let (status, job) = call(with(r, client.get(format!("{base}/api/jobs/{beta_job}")))).await;
    assert_eq!(
        (status, job["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_job"))
    );
    let (status, _) = call(with(
        r,
        client.get(format!("{base}/api/jobs/{beta_job}/events")),
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The dashboard's server functions answer the same.
    let rpc = |name: &str, body: &str, token: Option<&str>| {
        with(token, client.post(format!("{base}/rpc/{name}")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_owned())
    };
    let (status, listing) = call(rpc("libraries", "", r)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&listing), ["alpha"]);
    let (status, sticky) = call(rpc("sticky", &format!("session_id={session}"), r)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        sticky,
        Value::Null,
        "the session's sticky library is not the reader's"
    );
    let (status, doc) = call(rpc(
        "document",
        "library=beta&version=1.0&file_path=page.md",
        r,
    ))
    .await;
    assert_eq!(
        (status, doc["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_library"))
    );
    let compared = |library: &str| {
        rpc(
            "changes",
            &format!("library={library}&request[from]=1.0&request[to]=latest"),
            r,
        )
    };
    let (s1, b1) = call(compared("beta")).await;
    let (s2, b2) = call(compared("zzzz")).await;
    assert_eq!(
        (s1, s2),
        (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND),
        "{b1}"
    );
    assert_eq!(b1["code"], "unknown_library", "{b1}");
    assert_eq!(masked(&b1, "beta"), masked(&b2, "zzzz"));
    let (status, own) = call(compared("alpha")).await;
    assert_eq!(status, StatusCode::OK, "{own}");
    assert_eq!(own["library"], "alpha", "{own}");

    // Writes are refused with 403, hidden library or not, on every face.
    for (library, hidden) in [("alpha", false), ("beta", true)] {
        let form = common::upload_form(library, "9", &[("x.md", b"# X\n\nx\n")]);
        let (status, refused) =
            call(with(r, client.post(format!("{base}/api/upload"))).multipart(form)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
        assert_eq!(refused["code"], "not_permitted");
        let (status, _) = call(with(
            r,
            client.delete(format!("{base}/api/libraries/{library}")),
        ))
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{library} hidden={hidden}");
        let (status, _) = call(rpc("delete", &format!("library={library}"), r)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = call(
            with(r, client.post(format!("{base}/api/sources")))
                .json(&json!({ "url": "pypi:requests", "library": library, "version": "1" })),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    let (status, _) = call(with(r, client.get(format!("{base}/api/tokens")))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Both libraries are still whole.
    let (_, listing) = call(
        client
            .get(format!("{base}/api/libraries"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(names(&listing), ["alpha", "beta"]);

    // The write token writes to what its pattern covers, and only there.
    let w = Some(writer.as_str());
    let form = common::upload_form("alpha", "2.0", &[("new.md", b"# New\n\nnew\n")]);
    let (status, _) =
        call(with(w, client.post(format!("{base}/api/upload"))).multipart(form)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let form = common::upload_form("beta", "3.0", &[("new.md", b"# New\n\nnew\n")]);
    let (status, _) =
        call(with(w, client.post(format!("{base}/api/upload"))).multipart(form)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Bad credentials: wrong, in the query string, revoked, expired.
    let (status, wrong) = call(with(
        Some("dsk_nope"),
        client.get(format!("{base}/api/libraries")),
    ))
    .await;
    assert_eq!(
        (status, wrong["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_token"))
    );
    let (status, leaked) = call(client.get(format!("{base}/api/libraries?token={reader}"))).await;
    assert_eq!(
        (status, leaked["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("token_in_query"))
    );
    assert!(
        !leaked.to_string().contains(&reader),
        "the refusal does not echo the token"
    );

    let (_, tokens) = call(client.get(format!("{base}/api/tokens")).bearer_auth(ADMIN)).await;
    assert!(
        !tokens.to_string().contains(&reader),
        "listings hold no secret"
    );
    let reader_id = tokens
        .as_array()
        .expect("tokens")
        .iter()
        .find(|t| t["name"] == "reader-alpha")
        .and_then(|t| t["id"].as_str())
        .expect("the reader's id")
        .to_owned();
    let (status, _) = call(
        client
            .delete(format!("{base}/api/tokens/{reader_id}"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, revoked) = call(with(r, client.get(format!("{base}/api/libraries")))).await;
    assert_eq!(
        (status, revoked["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("token_revoked"))
    );

    // A token whose expiry passed, written to the store as another process would.
    let other = Engine::open(&config)
        .await
        .expect("a second process on the store");
    let expired = "dsk_expired-token-for-the-test";
    let digest = docshelf_server::access::secret::digest(expired);
    other
        .store()
        .save_token(&StoredToken {
            id: "expired1".into(),
            hash: docshelf_server::access::secret::to_hex(&digest),
            record: json!({
                "id": "expired1", "name": "old", "grants": [{ "role": "read", "libraries": "*" }],
                "prefix": "dsk_expi", "created_at": 1, "expires_at": 2, "revoked_at": null, "created_by": "admin"
            })
            .to_string(),
        })
        .await
        .expect("save");
    common::wait_for(
        Duration::from_secs(15),
        Duration::from_millis(100),
        "the expired token was not read from the store",
        || async {
            let (_, body) = call(with(
                Some(expired),
                client.get(format!("{base}/api/libraries")),
            ))
            .await;
            body["code"] == "token_expired"
        },
    )
    .await;

    // Sign-in: the cookie carries the token, HttpOnly and SameSite=Strict;
    // Secure when a TLS proxy says so.
    let res = client
        .post(format!("{base}/api/session"))
        .header("x-forwarded-proto", "https")
        .json(&json!({ "token": writer }))
        .send()
        .await
        .expect("sign in");
    assert_eq!(res.status(), StatusCode::OK);
    let cookie = res.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .to_owned();
    for part in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(
        !cookie.contains(&writer),
        "the cookie does not hold the token as it was typed"
    );
    let session = cookie.split(';').next().expect("name=value").to_owned();
    let (status, me) = call(
        client
            .get(format!("{base}/api/session"))
            .header("cookie", &session),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (me["name"].as_str(), me["signed_in"].as_bool()),
        (Some("ci-alpha"), Some(true))
    );
    let (_, listing) = call(
        client
            .get(format!("{base}/api/libraries"))
            .header("cookie", &session),
    )
    .await;
    assert_eq!(names(&listing), ["alpha"]);
    let res = client
        .delete(format!("{base}/api/session"))
        .send()
        .await
        .expect("sign out");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .contains("Max-Age=0"));
    let (status, _) = call(
        client
            .post(format!("{base}/api/session"))
            .json(&json!({ "token": "dsk_wrong" })),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // A cookie whose token was revoked since: the page still loads, as
    // anonymous, and the answer clears the cookie.
    let stale = format!(
        "docshelf_session={}",
        docshelf_server::http::auth::encode_cookie(&reader)
    );
    let res = client
        .get(format!("{base}/api/session"))
        .header("cookie", &stale)
        .send()
        .await
        .expect("session");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .contains("Max-Age=0"));
    let me: Value = res.json().await.expect("json");
    assert_eq!(me["signed_in"], false, "{me}");
    // Signing in again from that page: the new cookie is the only one set,
    // not followed by the stale one's clearing.
    let res = client
        .post(format!("{base}/api/session"))
        .header("cookie", &stale)
        .json(&json!({ "token": writer }))
        .send()
        .await
        .expect("sign in again");
    assert_eq!(res.status(), StatusCode::OK);
    let set: Vec<&str> = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(set.len(), 1, "{set:?}");
    assert!(!set[0].contains("Max-Age=0"), "{set:?}");

    // The audit log: each write and token change, with names and no secret.
    let (status, audit) = call(
        client
            .get(format!("{base}/api/audit?limit=500"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let text = audit.to_string();
    for secret in [&reader, &writer, &ADMIN.to_owned()] {
        assert!(
            !text.contains(secret.as_str()),
            "the audit log holds no secret"
        );
    }
    let entries = audit.as_array().expect("entries");
    let has = |token: &str, action: &str, outcome: &str| {
        entries
            .iter()
            .any(|e| e["token"] == token && e["action"] == action && e["outcome"] == outcome)
    };
    assert!(has("admin", "create_token", "ok"), "{audit}");
    assert!(has("admin", "revoke_token", "ok"), "{audit}");
    assert!(has("ci-alpha", "upload", "ok"), "{audit}");
    assert!(has("ci-alpha", "upload", "not_permitted"), "{audit}");
    assert!(has("reader-alpha", "delete", "not_permitted"), "{audit}");

    // Guessing is limited per client: past the limit even a right token
    // waits (429 with Retry-After).
    let mut limited = None;
    for _ in 0..40 {
        let res = with(
            Some("dsk_guess"),
            client.get(format!("{base}/api/libraries")),
        )
        .send()
        .await
        .expect("guess");
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(res);
            break;
        }
    }
    let limited = limited.expect("refused after too many wrong tokens");
    assert!(limited.headers().contains_key("retry-after"));
    assert_eq!(
        limited.json::<Value>().await.expect("json")["code"],
        "too_many_attempts"
    );
    let (status, _) = call(
        client
            .get(format!("{base}/api/libraries"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_made_on_one_replica_is_honoured_and_revoked_on_the_other() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.5,
        ..server.engine_config("tokens")
    };
    let router = RouterConfig {
        access: Access {
            token: Some(ADMIN.into()),
            auth_reads: true,
            ..Access::default()
        },
        ..common::router_config(&std::env::temp_dir(), 1024 * 1024)
    };
    let a = common::serve_engine(Engine::open(&config).await.expect("replica a"), &router).await;
    let b = common::serve_engine(Engine::open(&config).await.expect("replica b"), &router).await;
    let client = Client::new();

    let token = make_token(
        &a,
        "shared-reader",
        json!([{ "role": "read", "libraries": "*" }]),
    )
    .await;
    common::wait_for(
        Duration::from_secs(20),
        Duration::from_millis(100),
        "replica b did not honour the token made on a",
        || async {
            let (status, _) =
                call(client.get(format!("{b}/api/libraries")).bearer_auth(&token)).await;
            status == StatusCode::OK
        },
    )
    .await;

    let (_, tokens) = call(client.get(format!("{b}/api/tokens")).bearer_auth(ADMIN)).await;
    let id = tokens[0]["id"].as_str().expect("id").to_owned();
    let (status, _) = call(
        client
            .delete(format!("{b}/api/tokens/{id}"))
            .bearer_auth(ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    common::wait_for(
        Duration::from_secs(20),
        Duration::from_millis(100),
        "replica a still honours the token revoked on b",
        || async {
            let (_, body) =
                call(client.get(format!("{a}/api/libraries")).bearer_auth(&token)).await;
            body["code"] == "token_revoked"
        },
    )
    .await;
}

/// The audit log keeps every entry, newest first, through the compactions
/// that fold its one-row commits together (every 64 appends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_keeps_every_entry_through_its_compactions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = common::engine(dir.path()).await;
    let store = engine.store();
    for i in 0..130_i64 {
        store
            .append_audit(&index_core::access::AuditEntry {
                at_micros: 1_000 + i,
                token: "ci".into(),
                action: "upload".into(),
                target: format!("lib/{i}"),
                outcome: "ok".into(),
            })
            .await
            .expect("appended");
    }
    let entries = store.audit(1_000).await.expect("read");
    assert_eq!(entries.len(), 130);
    assert_eq!(entries[0].target, "lib/129");
    assert_eq!(entries[129].target, "lib/0");
    assert_eq!(store.audit(10).await.expect("read").len(), 10);
}
