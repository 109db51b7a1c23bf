//! Versions are published whole (#35), against the real `docshelf serve`
//! binary over HTTP:
//!
//! - while an upload runs, its version is not listed, searched or pointed
//!   at by `latest`; when it ends, all of it is there at once;
//! - a second upload into a version being written is refused with 409, so
//!   racing uploads never leave a version mixed;
//! - deleting a version cancels its running upload first, and nothing of
//!   it comes back;
//! - a job whose server was killed (SIGKILL) is `interrupted` once a
//!   server opens the store again, and its event stream ends;
//! - on a full disk, the job and each file say the disk is full, and the
//!   job claims nothing it did not do.

use std::process::Command;
use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::Value;

use crate::common::{self, get_json, job_events, post_upload, sse, wait_until, ServerProcess};

/// Pages of one edition of a small manual: each names its edition, so a
/// mixed version shows.
fn pages(edition: &str, count: usize) -> Vec<(String, Vec<u8>)> {
    (0..count)
        .map(|i| {
            let para =
                format!("The {edition} edition explains topic {i} of the manual, with examples. ")
                    .repeat(10);
            let text = format!("# Topic {i}\n\n{para}\n\n## More\n\n{para}\n");
            (format!("topic{i:03}.md"), text.into_bytes())
        })
        .collect()
}

fn form(library: &str, version: &str, pages: &[(String, Vec<u8>)]) -> reqwest::multipart::Form {
    let files: Vec<(&str, &[u8])> = pages
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    common::upload_form(library, version, &files)
}

/// The versions of `library` the catalog lists (none if it is not listed).
async fn versions(base: &str, library: &str) -> Vec<String> {
    let (status, libraries) = get_json(base, "/api/libraries").await;
    assert_eq!(status, StatusCode::OK, "{libraries}");
    libraries
        .as_array()
        .expect("a list")
        .iter()
        .filter(|l| l["name"] == library)
        .flat_map(|l| l["versions"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["version"].as_str().map(str::to_owned))
        .collect()
}

async fn job(base: &str, id: &str) -> Value {
    let (status, job) = get_json(base, &format!("/api/jobs/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{job}");
    job
}

fn finished(job: &Value) -> bool {
    matches!(
        job["state"].as_str(),
        Some("done" | "interrupted" | "cancelled")
    )
}

fn staged(job: &Value) -> usize {
    job["files"]
        .as_array()
        .map_or(0, |f| f.iter().filter(|f| f["state"] == "staged").count())
}

/// Waits until job `id` has staged a document and is still running.
async fn until_staging(base: &str, id: &str) -> Value {
    wait_until(
        Duration::from_secs(300),
        Duration::from_millis(20),
        || async move {
            let job = job(base, id).await;
            match (staged(&job) > 0, finished(&job)) {
                (true, false) => Ok(job),
                (_, true) => panic!("the job ended before it could be watched: {job}"),
                _ => Err(job),
            }
        },
        |job| format!("the job never staged a document: {job}"),
    )
    .await
}

/// Follows job `id`'s events to their end and returns its last status.
async fn last_status(client: &Client, base: &str, id: &str) -> Value {
    let events = sse(&job_events(client, base, id).await);
    let (event, status) = events.last().expect("events").clone();
    assert_eq!(event, "done", "the stream ends with its last status");
    status
}

/// Uploads the manual's version 1 (five pages) and waits for it.
async fn first_version(client: &Client, base: &str) {
    let first = post_upload(client, base, form("manual", "1", &pages("first", 5)), None).await;
    assert_eq!(last_status(client, base, &first).await["state"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_seen_whole_when_it_ends_and_not_before() {
    let dir = tempfile::tempdir().expect("dir");
    let server = ServerProcess::start(dir.path(), &[]).await;
    let (client, base) = (Client::new(), server.base.as_str());
    first_version(&client, base).await;

    let id = post_upload(
        &client,
        base,
        form("manual", "2", &pages("second", 60)),
        None,
    )
    .await;
    let mut seen_while_writing = 0;
    loop {
        let before = job(base, &id).await;
        if finished(&before) {
            break;
        }
        let listed = versions(base, "manual").await;
        let (status, latest) =
            get_json(base, "/api/libraries/manual/documents?version=latest").await;
        assert_eq!(status, StatusCode::OK, "{latest}");
        let latest_versions: Vec<&str> = latest
            .as_array()
            .expect("documents")
            .iter()
            .filter_map(|d| d["version"].as_str())
            .collect();
        // Publishing happens once the job leaves `running`: if it is still
        // running after the listing, nothing was published before it.
        let after = job(base, &id).await;
        if staged(&before) > 0 && after["state"] == "running" {
            assert_eq!(listed, ["1"], "a version being written is listed");
            assert!(
                latest_versions.iter().all(|v| *v == "1"),
                "latest points at a version being written: {latest_versions:?}"
            );
            seen_while_writing += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        seen_while_writing > 0,
        "the version was never looked at while the job wrote it"
    );
    let job = job(base, &id).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(versions(base, "manual").await, ["2", "1"]);
    let (_, documents) = get_json(base, "/api/libraries/manual/documents?version=2").await;
    assert_eq!(documents.as_array().map(Vec::len), Some(60));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_upload_into_a_version_being_written_is_refused_and_none_ends_mixed() {
    let dir = tempfile::tempdir().expect("dir");
    let server = ServerProcess::start(dir.path(), &[]).await;
    let (client, base) = (Client::new(), server.base.as_str());
    for round in 0..3 {
        let (a, b) = (
            pages(&format!("a{round}"), 20),
            pages(&format!("b{round}"), 20),
        );
        let send = |pages| {
            client
                .post(format!("{base}/api/upload"))
                .multipart(form("race", "1", pages))
                .send()
        };
        let (first, second) = tokio::join!(send(&a), send(&b));
        let answers = [first.expect("upload a"), second.expect("upload b")];
        let mut accepted = Vec::new();
        for (answer, edition) in answers.into_iter().zip(["a", "b"]) {
            let status = answer.status();
            let body: Value = answer.json().await.expect("json");
            match status {
                StatusCode::ACCEPTED => accepted.push((body["job_id"].clone(), edition)),
                StatusCode::CONFLICT => {
                    assert_eq!(body["code"], "version_busy", "{body}");
                    assert!(
                        body["error"].as_str().is_some_and(|e| e.contains("job-")),
                        "the refusal names the job in the way: {body}"
                    );
                }
                other => panic!("upload answered {other}: {body}"),
            }
        }
        assert_eq!(
            accepted.len(),
            1,
            "round {round}: one upload runs, one waits its turn"
        );
        let (id, edition) = &accepted[0];
        let id = id.as_str().expect("job id");
        assert_eq!(last_status(&client, base, id).await["state"], "done");
        // Every page is the winner's.
        for i in 0..20 {
            let (status, doc) = get_json(
                base,
                &format!("/api/documents?library=race&version=1&file_path=topic{i:03}.md"),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{doc}");
            let text = doc["text"].as_str().expect("text");
            assert!(
                text.contains(&format!("{edition}{round} edition")),
                "round {round}: topic {i} is not from the accepted upload"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_version_cancels_its_upload_and_nothing_of_it_comes_back() {
    let dir = tempfile::tempdir().expect("dir");
    let server = ServerProcess::start(dir.path(), &[]).await;
    let (client, base) = (Client::new(), server.base.as_str());
    first_version(&client, base).await;

    let id = post_upload(
        &client,
        base,
        form("manual", "2", &pages("second", 80)),
        None,
    )
    .await;
    until_staging(base, &id).await;
    let deleted = client
        .delete(format!("{base}/api/libraries/manual/versions/2"))
        .send()
        .await
        .expect("delete");
    assert_eq!(deleted.status(), StatusCode::OK);
    let deleted: Value = deleted.json().await.expect("json");
    assert_eq!(deleted["cancelled_jobs"], 1, "{deleted}");

    // The job ended before the delete answered.
    let job = job(base, &id).await;
    assert_eq!(job["state"], "cancelled", "{job}");
    assert_eq!(last_status(&client, base, &id).await["state"], "cancelled");
    assert!(job["files"]
        .as_array()
        .expect("files")
        .iter()
        .all(|f| f["state"] != "stored"));
    assert_eq!(versions(base, "manual").await, ["1"]);
    let (status, latest) = get_json(base, "/api/libraries/manual/documents?version=latest").await;
    assert_eq!(status, StatusCode::OK);
    assert!(latest
        .as_array()
        .expect("documents")
        .iter()
        .all(|d| d["version"] == "1"));
    // The version can be uploaded again at once.
    let again = post_upload(&client, base, form("manual", "2", &pages("third", 3)), None).await;
    assert_eq!(last_status(&client, base, &again).await["state"], "done");
    let (_, documents) = get_json(base, "/api/libraries/manual/documents?version=2").await;
    assert_eq!(documents.as_array().map(Vec::len), Some(3), "{documents}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_server_was_killed_is_interrupted_when_the_store_is_opened_again() {
    let dir = tempfile::tempdir().expect("dir");
    let first = ServerProcess::start(dir.path(), &[]).await;
    let client = Client::new();
    let id = post_upload(
        &client,
        &first.base,
        form("manual", "1", &pages("doomed", 80)),
        None,
    )
    .await;
    until_staging(&first.base, &id).await;
    first.kill();

    let second = ServerProcess::start(dir.path(), &[]).await;
    let base = second.base.as_str();
    let job = job(base, &id).await;
    assert_eq!(job["state"], "interrupted", "{job}");
    assert!(
        job["error"]
            .as_str()
            .is_some_and(|e| e.contains("stopped before it ended")),
        "{job}"
    );
    assert!(job["files"]
        .as_array()
        .expect("files")
        .iter()
        .all(|f| f["state"] == "failed"));
    // Its event stream ends at once, with that status.
    assert_eq!(
        last_status(&client, base, &id).await["state"],
        "interrupted"
    );
    assert!(versions(base, "manual").await.is_empty());
}

/// The same process, its store on a tmpfs of `mib` MiB mounted in a mount
/// namespace of its own (`unshare`: no root needed where user namespaces
/// are allowed), so the test can fill the disk without touching the
/// machine's.
fn on_small_tmpfs(store: &std::path::Path, kib: u64) -> Command {
    let mut command = Command::new("unshare");
    command.args(["--user", "--map-root-user", "--mount", "sh", "-c"]);
    command.arg(format!(
        "mount -t tmpfs -o size={kib}k tmpfs '{}' && exec \"$0\" \"$@\"",
        store.display()
    ));
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_full_disk_the_job_says_so_and_claims_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let server = ServerProcess::start_with(on_small_tmpfs(dir.path(), 1024), dir.path(), &[]).await;
    let (client, base) = (Client::new(), server.base.as_str());
    let id = post_upload(&client, base, form("manual", "1", &pages("big", 120)), None).await;
    let job = last_status(&client, base, &id).await;
    let files = job["files"].as_array().expect("files");
    let full: Vec<&Value> = files
        .iter()
        .filter(|f| {
            f["reason"]
                .as_str()
                .is_some_and(|r| r.contains("disk holding the store is full"))
        })
        .collect();
    assert!(!full.is_empty(), "no file says the disk is full: {job:#}");
    let stored = files.iter().filter(|f| f["state"] == "stored").count();
    let error = job["error"].as_str().unwrap_or_default();
    if stored == 0 {
        assert!(
            !error.contains("are stored"),
            "the summary claims documents were stored: {error}"
        );
    }
    // Said at job level, whether or not some files were stored.
    assert!(
        error.contains("disk holding the store is full"),
        "the job does not say the disk is full: {job:#}"
    );
    if stored == 0 {
        assert_eq!(job["state"], "failed", "{job:#}");
    }
    // The server still answers, and lists nothing it did not publish.
    let listed = versions(base, "manual").await;
    assert!(
        stored > 0 || listed.is_empty(),
        "a version nothing was published to is listed"
    );
}

/// A job in another process publishes nothing once its version was
/// deleted: the delete drops what is staged for the version, and the job
/// finds fewer rows than it staged. Also: staged rows are invisible until
/// published, and publishing replaces the documents it names only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staged_rows_are_invisible_until_published_and_a_delete_withdraws_them() {
    use crate::synthetic::{document, Rng};
    use docshelf_server::store::{Replace, Store, StoreError, Target};

    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().display().to_string())
        .await
        .expect("store");
    let mut rng = Rng::default();
    let doc = |path: &str, prefix: &str, rng: &mut Rng| {
        document("lib", path.to_owned(), prefix, rng.centres(3))
    };
    store
        .stage_document("job-a-1", &doc("a.md", "a", &mut rng))
        .await
        .expect("stage");
    store
        .stage_document("job-a-1", &doc("b.md", "b", &mut rng))
        .await
        .expect("stage");
    assert!(
        store.libraries().await.expect("list").is_empty(),
        "staged rows are listed"
    );
    let published = store
        .publish("job-a-1", "lib", "1", 6, &Replace::Documents)
        .await
        .expect("publish");
    assert_eq!(published.inserted, 6);
    assert_eq!(published.documents.len(), 2);
    assert_eq!(store.counts().await.expect("counts").chunks, 6);
    // A process that died here, before dropping what it staged, is known
    // to have published.
    assert!(store
        .staged_rows_published("job-a-1", "lib", "1")
        .await
        .expect("asked"));
    store.drop_staged_after_publish("job-a-1").await;
    assert!(store.staging_jobs().await.expect("staged").is_empty());

    // A second job replaces b.md only; a.md stays.
    store
        .stage_document("job-b-1", &doc("b.md", "b2-", &mut rng))
        .await
        .expect("stage");
    assert!(!store
        .staged_rows_published("job-b-1", "lib", "1")
        .await
        .expect("asked"));
    let published = store
        .publish("job-b-1", "lib", "1", 3, &Replace::Documents)
        .await
        .expect("publish");
    assert_eq!((published.inserted, published.deleted), (3, 3));
    assert_eq!(store.counts().await.expect("counts").documents, 2);

    // A third job's version is deleted (by anyone) before it publishes.
    store
        .stage_document("job-c-1", &doc("c.md", "c", &mut rng))
        .await
        .expect("stage");
    store
        .delete(Target::Version("lib", "1"))
        .await
        .expect("delete");
    let err = store
        .publish("job-c-1", "lib", "1", 3, &Replace::Documents)
        .await
        .expect_err("nothing left to publish");
    assert!(
        matches!(
            err,
            StoreError::Withdrawn {
                staged: 3,
                found: 0
            }
        ),
        "{err}"
    );
    assert!(store.libraries().await.expect("list").is_empty());
}
