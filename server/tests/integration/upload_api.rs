//! Uploads over HTTP: a real server on a loopback port, the real model and
//! store, a real multipart client, progress followed over server-sent events.

use crate::common;

use docshelf_server::http::RouterConfig;
use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use serde_json::Value;

async fn start(store: &std::path::Path) -> String {
    common::serve(
        &common::engine_config(store),
        RouterConfig {
            site_dir: store.join("site"),
            max_body_bytes: 8 * 1024 * 1024,
            ..RouterConfig::default()
        },
    )
    .await
}

fn file(name: &str, bytes: impl Into<Vec<u8>>) -> Part {
    Part::bytes(bytes.into()).file_name(name.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_accepted_followed_to_done_and_a_bad_file_fails_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = start(dir.path()).await;
    let corrupt = std::fs::read(common::shared_data().join("pdf/03-invalid.pdf")).expect("pdf");
    let form = Form::new()
        .text("library", "demo")
        .text("version", "1.0")
        .part(
            "file",
            file("guide.md", "# Guide\n\nUploading over HTTP works.\n"),
        )
        .part("file", file("broken.pdf", corrupt));
    let client = reqwest::Client::new();
    let job_id = common::post_upload(&client, &base, form, None).await;

    // Follow the job over SSE until its `done` event.
    let res = client
        .get(format!("{base}/api/jobs/{job_id}/events"))
        .send()
        .await
        .expect("events");
    assert_eq!(res.status(), 200);
    let mut body = String::new();
    let mut stream = res.bytes_stream();
    while let Some(chunk) = stream.next().await {
        body.push_str(&String::from_utf8_lossy(&chunk.expect("chunk")));
        if body.contains("event: done") {
            break;
        }
    }
    assert!(body.contains("event: progress"), "{body}");
    assert!(body.contains("event: done"), "{body}");

    let status: Value = client
        .get(format!("{base}/api/jobs/{job_id}"))
        .send()
        .await
        .expect("job")
        .json()
        .await
        .expect("json");
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

    let counts: Value = client
        .get(format!("{base}/api/status"))
        .send()
        .await
        .expect("status")
        .json()
        .await
        .expect("json");
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
            .part("file", file("a.md", "x")),
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
            .part("file", file("a.md", "x")),
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
