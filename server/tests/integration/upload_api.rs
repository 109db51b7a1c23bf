//! Uploads over HTTP: a real server on a loopback port, the real model and
//! store, a real multipart client, progress followed over server-sent events.

use crate::common::{self, file_part};

use reqwest::multipart::Form;
use serde_json::Value;

/// docshelf over HTTP on the store in `store`, taking bodies up to 8 MiB.
async fn start(store: &std::path::Path) -> String {
    common::serve(
        &common::engine_config(store),
        common::router_config(store, 8 * 1024 * 1024),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_accepted_followed_to_done_and_a_bad_file_fails_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(dir.path()).await;
    let corrupt = std::fs::read(common::shared_data().join("pdf/03-invalid.pdf")).expect("pdf");
    let form = common::upload_form(
        "demo",
        "1.0",
        &[
            ("guide.md", b"# Guide\n\nUploading over HTTP works.\n"),
            ("broken.pdf", &corrupt),
        ],
    );
    let client = reqwest::Client::new();

    // Followed over SSE to its `done` event.
    let (events, status) = common::upload_and_follow(&client, &base, form, None).await;
    assert!(events.contains("event: progress"), "{events}");
    assert_eq!(status["state"], "done");
    let files = status["files"].as_array().expect("files");
    let state = |name: &str| {
        files
            .iter()
            .find(|f| f["file_path"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {status}"))
            .clone()
    };
    assert_eq!(state("guide.md")["state"], "stored");
    assert_eq!(state("broken.pdf")["state"], "failed");
    assert!(state("broken.pdf")["reason"]
        .as_str()
        .expect("reason")
        .contains("damaged"));

    let (_, counts) = common::get_json(&base, "/api/status").await;
    assert_eq!(counts["store"]["counts"]["documents"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_uploads_get_clear_json_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(dir.path()).await;
    let client = reqwest::Client::new();
    let send = |form: Form| {
        let client = client.clone();
        let url = format!("{base}/api/upload");
        async move {
            let res = client.post(url).multipart(form).send().await.expect("post");
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.expect("json error body"))
        }
    };

    let (status, body) = send(
        Form::new()
            .text("version", "1")
            .part("file", file_part("a.md", "x")),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("the form needs a library field"))
    );

    let (status, body) = send(
        Form::new()
            .text("library", "a/b")
            .text("version", "1")
            .part("file", file_part("a.md", "x")),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().expect("message").contains("library"),
        "{body}"
    );

    let (status, body) = send(Form::new().text("library", "ok").text("version", "1")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("an upload needs at least one file"))
    );

    let res = client
        .get(format!("{base}/api/jobs/job-999"))
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.json::<Value>().await.expect("json")["error"],
        "no job \"job-999\""
    );
}
