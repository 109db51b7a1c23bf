//! The memory budget for extraction, shared by every upload: a real
//! `docshelf serve` process with a small budget, hostile archives uploaded
//! over HTTP at once. What is checked is what a client sees: an upload is
//! refused at once with 503 busy and `Retry-After`, or accepted and its
//! archive fails with the budget's reason; the server goes on answering,
//! and once the uploads are over their memory is free again.

use std::io::{Cursor, Write};

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::{self, ServerProcess};

/// The budget the server runs with, in MiB.
const BUDGET_MIB: &str = "8";

/// Text that deflates about 130:1, under the ratio that marks a zip bomb:
/// a 16 KiB block of random words, repeated.
fn text(bytes: usize) -> Vec<u8> {
    let mut block = Vec::with_capacity(16 << 10);
    let mut seed: u64 = 11;
    while block.len() < 16 << 10 {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        block.extend_from_slice(format!("w{} ", (seed >> 33) % 5000).as_bytes());
    }
    block.iter().copied().cycle().take(bytes).collect()
}

fn zip(entries: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, data) in entries {
        w.start_file(*name, options).expect("entry");
        w.write_all(data).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

/// An archive of about 150 KB holding a nested one whose four entries
/// inflate to 4 MiB each: its headers declare little, and only inflating
/// shows that it needs more than the whole budget.
fn hostile_archive() -> Vec<u8> {
    let part = text(4 << 20);
    let inner = zip(
        &[
            ("a.txt", &part),
            ("b.txt", &part),
            ("c.txt", &part),
            ("d.txt", &part),
        ],
        zip::CompressionMethod::Deflated,
    );
    zip(&[("volume.zip", &inner)], zip::CompressionMethod::Stored)
}

async fn post(
    client: &reqwest::Client,
    base: &str,
    library: &str,
    name: &str,
    bytes: Vec<u8>,
) -> reqwest::Response {
    let form = reqwest::multipart::Form::new()
        .text("library", library.to_owned())
        .text("version", "1")
        .part("file", common::file_part(name, bytes));
    client
        .post(format!("{base}/api/upload"))
        .multipart(form)
        .send()
        .await
        .expect("upload answered")
}

fn file<'a>(job: &'a Value, path: &str) -> &'a Value {
    job["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["file_path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {job}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_hostile_archives_stay_within_the_shared_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Few chunks a job: were the budget not enforced, each archive (16 MiB
    // of text) would fail at once for its chunks, with another reason.
    let server = ServerProcess::start(
        dir.path(),
        &["--extract-memory-mib", BUDGET_MIB, "--max-job-chunks", "10"],
    )
    .await;
    let base = server.base.clone();
    let client = reqwest::Client::new();

    // Eight at once, each in a library of its own.
    let archive = hostile_archive();
    let answers = futures::future::join_all((0..8).map(|i| {
        let (client, base, archive) = (client.clone(), base.clone(), archive.clone());
        async move {
            let res = post(
                &client,
                &base,
                &format!("hostile{i}"),
                "volumes.zip",
                archive,
            )
            .await;
            let status = res.status();
            let retry_after = res
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap_or_default().to_owned());
            (
                status,
                retry_after,
                res.json::<Value>().await.expect("json body"),
            )
        }
    }))
    .await;

    let mut accepted = 0;
    for (status, retry_after, body) in &answers {
        match *status {
            StatusCode::ACCEPTED => {
                accepted += 1;
                let id = body["job_id"].as_str().expect("job id");
                let job = common::finished_job_id(&base, id).await;
                let archive = file(&job, "volumes.zip");
                assert_eq!(archive["state"], "failed", "{job}");
                let reason = archive["reason"].as_str().expect("reason");
                assert!(
                    reason.contains("--extract-memory-mib"),
                    "the budget's reason, not another limit: {reason}"
                );
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(body["code"], "memory_busy", "{body}");
                assert!(retry_after.is_some(), "503 without Retry-After: {body}");
                assert!(
                    body["error"].as_str().is_some_and(|e| e.contains("memory")),
                    "{body}"
                );
            }
            other => panic!("unexpected answer {other}: {body}"),
        }
    }
    // The first of them is admitted whatever the others do.
    assert!(accepted >= 1, "{answers:?}");

    // Still answering, and the budget is whole again: an upload that needs
    // most of it (an archive of 1.5 MiB, its largest entry counted twice
    // while converted) is accepted and stored.
    let (status, _) = common::get_json(&base, "/api/status").await;
    assert_eq!(status, StatusCode::OK);
    let picture = vec![7u8; 3 << 19];
    let guide = b"# Guide\n\nThe budget is free again once the uploads are over.\n";
    let fits = zip(
        &[("logo.png", &picture), ("guide.md", guide)],
        zip::CompressionMethod::Stored,
    );
    let res = post(&client, &base, "afterwards", "site.zip", fits).await;
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let id = res.json::<Value>().await.expect("json")["job_id"]
        .as_str()
        .expect("job id")
        .to_owned();
    let job = common::finished_job_id(&base, &id).await;
    assert_eq!(file(&job, "guide.md")["state"], "stored", "{job}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_larger_than_the_whole_budget_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = ServerProcess::start(dir.path(), &["--extract-memory-mib", "1"]).await;
    let client = reqwest::Client::new();
    let res = post(&client, &server.base, "big", "big.md", text(2 << 20)).await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = res.json::<Value>().await.expect("json");
    assert_eq!(body["code"], "upload_too_large", "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("--extract-memory-mib")),
        "{body}"
    );
}

/// A small Word document whose parts declare more than the budget could
/// ever give (honest text, under the bomb ratio) is refused when it is
/// uploaded, naming the file, and holds nothing: the next upload is
/// accepted at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_could_never_fit_is_refused_at_upload_and_blocks_nobody() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = ServerProcess::start(dir.path(), &["--extract-memory-mib", BUDGET_MIB]).await;
    let client = reqwest::Client::new();
    let body = text(5 << 20);
    let docx = zip(
        &[("word/document.xml", &body)],
        zip::CompressionMethod::Deflated,
    );
    assert!(docx.len() < 1 << 20, "{} bytes", docx.len());
    let res = post(&client, &server.base, "word", "large.docx", docx).await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let answer = res.json::<Value>().await.expect("json");
    assert_eq!(answer["code"], "upload_too_large", "{answer}");
    let error = answer["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("large.docx") && error.contains("--extract-memory-mib"),
        "{answer}"
    );
    let res = post(
        &client,
        &server.base,
        "small",
        "guide.md",
        b"# Guide\n\nA small page.\n".to_vec(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::ACCEPTED);
}
