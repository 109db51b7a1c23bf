//! Replicas on one object store: a real S3-compatible server
//! (`s3_server.rs`), real LanceDB tables in its bucket, and several engines
//! standing for the replicas, each with its own connection, session and
//! caches, sharing nothing but the bucket.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, keyword, query, run, upload};

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;
use docshelf_server::store::lease::Lease;
use docshelf_server::store::remote::s3;
use index_core::search::SearchParams;

use crate::s3_server::{S3Server, BUCKET};
use crate::shared_store::{
    started_at_once_all_open, writers_at_once_lose_nothing_and_replace_whole,
};
use docshelf_server::access::local;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_stored_through_one_replica_is_searchable_on_another() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.5,
        ..server.engine_config("visible")
    };
    let a = Engine::open(&config).await.expect("replica a");
    let b = Engine::open(&config).await.expect("replica b");
    assert!(b.libraries(&local()).await.expect("libraries").is_empty());

    let status = run(
        &a,
        "shared",
        "1",
        vec![upload(
            "replica.md",
            "# Replicas\n\nA quibbleflux keeps replicas in step.\n",
        )],
    )
    .await;
    assert_eq!(status.tally(), (1, 0), "{status:#?}");
    let written = a.status(&local()).await.store.table_version;

    common::wait_for(
        Duration::from_secs(15),
        Duration::from_millis(100),
        "replica b did not find replica a's document in 15 s (interval 0.5 s)",
        || async {
            let found = b
                .search(&local(), query("quibbleflux"))
                .await
                .expect("search on b");
            found.results.iter().any(|h| h.file_path == "replica.md")
        },
    )
    .await;
    assert_eq!(b.status(&local()).await.store.table_version, written);
    let docs = b
        .documents(&local(), "shared", Some("1"))
        .await
        .expect("documents");
    assert_eq!(docs.len(), 1);
    // The tables live in the bucket, under the prefix, and nowhere else.
    let client = s3::client(
        &url::Url::parse(&config.data).expect("url"),
        &server.config(),
        &HashMap::new(),
    )
    .expect("client");
    let listed =
        object_store::ObjectStore::list_with_delimiter(&client, Some(&Path::from("visible")))
            .await
            .expect("list");
    let names: BTreeSet<String> = listed
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().map(str::to_owned))
        .collect();
    assert!(names.iter().any(|n| n.starts_with("chunks")), "{names:?}");
}

/// Three replicas started at once on a new prefix: they raced to create
/// the tables, and all but one failed to start, until creators took turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_started_at_once_on_a_new_store_all_open_it() {
    let server = S3Server::start();
    started_at_once_all_open(&server.engine_config("new")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_writing_at_once_lose_nothing_and_replace_whole() {
    let server = S3Server::start();
    writers_at_once_lose_nothing_and_replace_whole(&server.engine_config("conflict"), 4).await;
}

/// The writers' lease on the real server: one holder at a time, handed
/// back on drop, and taken over from a holder that stopped renewing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writers_lease_has_one_holder_and_outlives_a_dead_one() {
    let server = S3Server::start();
    let url = url::Url::parse(&format!("s3://{BUCKET}/lease")).expect("url");
    let client: Arc<dyn object_store::ObjectStore> =
        Arc::new(s3::client(&url, &server.config(), &HashMap::new()).expect("client"));
    let path = Path::from("lease/.docshelf-write.lease");
    let first = Arc::new(Lease::new(client.clone(), path.clone()).with_ttl(Duration::from_secs(2)));
    let second =
        Arc::new(Lease::new(client.clone(), path.clone()).with_ttl(Duration::from_secs(2)));

    let held = first.acquire().await.expect("first");
    // Renewals keep it held past its time to live.
    let waiting = tokio::time::timeout(Duration::from_secs(5), second.acquire());
    assert!(waiting.await.is_err(), "both held the lease at once");
    drop(held);
    let held = tokio::time::timeout(Duration::from_secs(5), second.acquire())
        .await
        .expect("the second gets it once the first hands it back")
        .expect("lease");
    drop(held);

    // A holder that died: its record says held and never changes again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let dead = r#"{"owner":"dead","holder":"dead","held":true,"beat":7}"#;
    client
        .put(&path, PutPayload::from(dead.as_bytes().to_vec()))
        .await
        .expect("write a dead holder's lease");
    let started = Instant::now();
    let _taken = tokio::time::timeout(Duration::from_secs(10), first.acquire())
        .await
        .expect("a dead holder's lease is taken over")
        .expect("lease");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "taken over after {:?}, before its time to live",
        started.elapsed()
    );
}

/// The object store stops answering for 10 s: a search fails with 503
/// (`unavailable`) saying so, well before the store returns, and searches
/// work again by themselves once it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_say_the_object_store_is_down_and_recover_when_it_returns() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.0,
        ..server.engine_config("outage")
    };
    let engine = Engine::open(&config)
        .await
        .expect("engine")
        .with_search_limits(
            docshelf_server::engine::MAX_CONCURRENT_SEARCHES,
            Duration::from_secs(3),
        );
    let status = run(
        &engine,
        "outage",
        "1",
        vec![upload(
            "store.md",
            "# Store\n\nA quibbleflux lives in the bucket.\n",
        )],
    )
    .await;
    assert_eq!(status.tally(), (1, 0), "{status:#?}");
    let owner = local();
    let search = || engine.search(&owner, keyword("quibbleflux"));
    assert_eq!(search().await.expect("search").results.len(), 1);

    server.pause();
    let paused = Instant::now();
    let err = search()
        .await
        .expect_err("a search while the object store is stalled");
    assert_eq!(err.kind(), index_core::ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("object store"), "{err}");
    assert!(
        paused.elapsed() < Duration::from_secs(9),
        "the search took {:?} to fail",
        paused.elapsed()
    );
    tokio::time::sleep(Duration::from_secs(10).saturating_sub(paused.elapsed())).await;
    server.resume();

    common::wait_until(
        Duration::from_secs(30),
        Duration::from_millis(200),
        || async {
            match search().await {
                Ok(found) if found.results.len() == 1 => Ok(()),
                other => Err(other),
            }
        },
        |other| format!("searches did not recover 30 s after the store returned: {other:?}"),
    )
    .await;
}

/// Behind a balancer, the replica asked about an upload is often not the
/// one running it: replica B reports replica A's job, over HTTP, to its
/// end, and streams its events to `done`; an unknown id is still 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_through_one_replica_is_followed_on_another() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.0,
        ..server.engine_config("jobs")
    };
    let no_site = std::env::temp_dir().join("docshelf-no-site");
    let router = || common::router_config(&no_site, 8 * 1024 * 1024);
    let a = common::serve(&config, router()).await;
    let b = common::serve(&config, router()).await;
    let client = reqwest::Client::new();
    let form = common::upload_form("jobs", "1", &[("job.md", b"# Job\n\nA quibbleflux job.\n")]);
    let id = common::post_upload(&client, &a, form, None).await;

    let status = common::wait_until(
        Duration::from_secs(60),
        Duration::from_millis(200),
        || async {
            let (code, status) = common::get_json(&b, &format!("/api/jobs/{id}")).await;
            if code == reqwest::StatusCode::OK && status["state"] == "done" {
                Ok(status)
            } else {
                Err((code, status))
            }
        },
        |(code, status)| {
            format!("replica b never reported replica a's job as done ({code}: {status})")
        },
    )
    .await;
    assert_eq!(status["id"], id.as_str());
    assert_eq!(status["files"][0]["file_path"], "job.md", "{status}");
    assert_eq!(status["files"][0]["state"], "stored", "{status}");

    let text = tokio::time::timeout(
        Duration::from_secs(30),
        common::job_events(&client, &b, &id),
    )
    .await
    .expect("the stream ends");
    assert!(text.contains("event: done"), "{text}");

    for base in [&a, &b] {
        let res = client
            .get(format!("{base}/api/jobs/job-000000000000-1"))
            .send()
            .await
            .expect("unknown job");
        assert_eq!(res.status(), reqwest::StatusCode::NOT_FOUND);
    }
}

/// A session's sticky library follows it across replicas: a search on A
/// names a library, the follow-up on B stays in it, B clears it, and the
/// next search on A searches everything again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_its_library_whichever_replica_answers() {
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.0,
        ..server.engine_config("sessions")
    };
    let a = Engine::open(&config).await.expect("replica a");
    let b = Engine::open(&config).await.expect("replica b");
    for library in ["alpha", "beta"] {
        let text = format!("# {library}\n\nA quibbleflux lives in {library}.\n");
        let status = run(&a, library, "1", vec![upload("page.md", &text)]).await;
        assert_eq!(status.tally(), (1, 0), "{status:#?}");
    }
    let libraries = |found: &index_core::search::SearchResponse| {
        found
            .results
            .iter()
            .map(|h| h.library.clone())
            .collect::<BTreeSet<_>>()
    };

    let first = sticky_search(&a, Some("alpha")).await.expect("search on a");
    assert_eq!(
        first.sticky_library.map(|s| s.library).as_deref(),
        Some("alpha")
    );
    let follow_up = sticky_search(&b, None).await.expect("follow-up on b");
    assert!(follow_up.sticky_applied, "{follow_up:#?}");
    assert_eq!(libraries(&follow_up), BTreeSet::from(["alpha".to_owned()]));

    b.clear_sticky(&local(), "session-1").await;
    let after = sticky_search(&a, None)
        .await
        .expect("search on a after b cleared");
    assert!(!after.sticky_applied, "{after:#?}");
    assert_eq!(
        libraries(&after),
        BTreeSet::from(["alpha".to_owned(), "beta".to_owned()])
    );
}

/// A keyword search for the sessions test's word, in its one session.
async fn sticky_search(
    engine: &Engine,
    library: Option<&str>,
) -> Result<index_core::search::SearchResponse, docshelf_server::engine::EngineError> {
    engine
        .search(
            &local(),
            SearchParams {
                library: library.map(str::to_owned),
                session_id: Some("session-1".into()),
                ..keyword("quibbleflux")
            },
        )
        .await
}

/// A wrong endpoint or a missing bucket stops the start with one sentence
/// that says which, in seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_be_reached_or_listed_says_why_at_start() {
    let server = S3Server::start();
    let closed = common::free_port();
    let mut unreachable = server.engine_config("start");
    unreachable.s3.endpoint = Some(format!("http://127.0.0.1:{closed}"));
    let started = Instant::now();
    let err = Engine::open(&unreachable)
        .await
        .err()
        .expect("no store there")
        .to_string();
    assert!(err.contains("cannot reach the object store"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    let missing = EngineConfig {
        data: "s3://no-such-bucket/start".into(),
        ..server.engine_config("start")
    };
    let err = Engine::open(&missing)
        .await
        .err()
        .expect("no such bucket")
        .to_string();
    assert!(err.contains("check that the bucket exists"), "{err}");
    assert!(err.contains("NoSuchBucket"), "{err}");
}
