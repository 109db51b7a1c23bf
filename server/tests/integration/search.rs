//! Hybrid search end to end: the real model, the real LanceDB store, the
//! real ingestion pipeline.

use crate::common::{self, ingest, paths, query, upload};

use docshelf_server::access::local;
use docshelf_server::engine::{Engine, EngineError};
use docshelf_server::store::Target;
use index_core::feedback::{FeedbackRequest, Vote};
use index_core::search::{Mode, SearchParams};

/// Two small libraries about different things, one document of which is
/// long enough for several chunks.
async fn engine_with_docs(dir: &std::path::Path) -> Engine {
    let engine = common::engine(dir).await;
    ingest(
        &engine,
        "gardening",
        "1.0",
        vec![
            upload("tomatoes.md", "# Tomatoes\n\nTomato plants need full sun, deep watering twice a week and a stake to climb.\n"),
            upload("roses.md", "# Roses\n\nPrune roses in late winter, just above an outward-facing bud.\n"),
            upload("compost.md", "# Compost\n\nA compost heap turns kitchen scraps and leaves into humus within a year.\n"),
        ],
    )
    .await;
    let long: String = (1..=30)
        .map(|i| {
            format!(
                "## Step {i}\n\nStep {i} of the deployment: the orchestrator copies artefact {i} to the cluster and waits for health checks number {i} to pass before continuing.\n\n"
            )
        })
        .collect();
    ingest(
        &engine,
        "shipit",
        "2.0",
        vec![
            upload("deploy.md", format!("# Deploying\n\n{long}")),
            upload("rollback.md", "# Rollback\n\nTo undo a release run `shipit rollback --to PREVIOUS`; the previous artefact is restored.\n"),
            upload("guides/tomato-service.md", "# The tomato service\n\nThe tomato service is shipit's demo app: it serves pictures of tomatoes.\n"),
        ],
    )
    .await;
    ingest(
        &engine,
        "shipit",
        "1.0",
        vec![upload(
            "deploy.md",
            "# Deploying (old)\n\nVersion one deploys by copying files over FTP.\n",
        )],
    )
    .await;
    engine
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_dense_and_keyword_find_the_right_document_with_their_score_parts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;

    for mode in ["hybrid", "dense", "keyword"] {
        let r = engine
            .search(
                &local(),
                SearchParams {
                    mode: Some(mode.into()),
                    ..query("when should I prune roses")
                },
            )
            .await
            .expect("search");
        assert_eq!(
            paths(&r).first(),
            Some(&"roses.md"),
            "{mode}: {:?}",
            paths(&r)
        );
        let top = &r.results[0];
        assert!(top.score > 0.0 && top.score <= 1.0, "{mode}: {}", top.score);
        assert_eq!(top.parts.dense.is_some(), mode != "keyword", "{mode}");
        assert_eq!(top.parts.keyword.is_some(), mode != "dense", "{mode}");
        assert!(
            top.snippet.contains("<mark>Prune</mark>"),
            "{}",
            top.snippet
        );
        assert!(top.days_old < 1.0);
    }

    // A paraphrase with no shared words: only the dense leg can find it.
    let r = engine
        .search(
            &local(),
            SearchParams {
                mode: Some("dense".into()),
                ..query("turning food waste into soil")
            },
        )
        .await
        .expect("search");
    assert_eq!(paths(&r).first(), Some(&"compost.md"));

    // The response echoes what was used.
    let r = engine
        .search(
            &local(),
            SearchParams {
                k: Some(2),
                fusion: Some("dbsf".into()),
                w_rec: Some(0.2),
                w_sig: Some(0.1),
                ..query("tomato")
            },
        )
        .await
        .expect("search");
    assert_eq!((r.k, r.mode, r.fusion.name()), (2, Mode::Hybrid, "dbsf"));
    assert!((r.weights.w_cos - 0.7).abs() < 1e-6);
    assert_eq!(r.results.len(), 2);
    assert_eq!(r.total_results, 2);
    let parts = r.results[0].parts;
    assert!(parts.recency.is_some_and(|x| x > 0.99), "{parts:?}");
    assert_eq!(parts.signal, Some(0.5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_apply_before_ranking_and_names_resolve_loosely() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;

    // Unfiltered, "tomato" is mostly gardening; filtered to shipit, the
    // one shipit document about tomatoes still comes back.
    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("ShipIt".into()),
                k: Some(50),
                ..query("tomato plants")
            },
        )
        .await
        .expect("search");
    assert_eq!(r.library.as_deref(), Some("shipit"));
    assert!(r.results.iter().all(|h| h.library == "shipit"));
    assert_eq!(paths(&r).first(), Some(&"guides/tomato-service.md"));
    assert!(
        r.notice.as_deref().is_some_and(|n| n.contains("is shipit")),
        "{:?}",
        r.notice
    );

    // A version filter, `latest`, and a path prefix.
    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                version: Some("latest".into()),
                ..query("deploying")
            },
        )
        .await
        .expect("search");
    assert_eq!(r.version.as_deref(), Some("2.0"));
    assert!(r.results.iter().all(|h| h.version == "2.0"));
    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                version: Some("1.0".into()),
                ..query("deploying")
            },
        )
        .await
        .expect("search");
    assert_eq!(paths(&r), vec!["deploy.md"]);
    let r = engine
        .search(
            &local(),
            SearchParams {
                file_path: Some("guides/".into()),
                ..query("tomato")
            },
        )
        .await
        .expect("search");
    assert_eq!(paths(&r), vec!["guides/tomato-service.md"]);

    // Unknown names are errors that say what exists.
    let err = engine
        .search(
            &local(),
            SearchParams {
                library: Some("kubernetes".into()),
                ..query("pods")
            },
        )
        .await
        .expect_err("unknown library");
    assert!(matches!(err, EngineError::UnknownLibrary { .. }));
    let message = err.to_string();
    assert!(
        message.contains("gardening") && message.contains("shipit"),
        "{message}"
    );
    let err = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                version: Some("9".into()),
                ..query("deploy")
            },
        )
        .await
        .expect_err("unknown version");
    assert_eq!(
        err.to_string(),
        "library \"shipit\" has no version \"9\" (it has 2.0, 1.0)"
    );
    for (params, message) in [
        (query("  "), "query cannot be empty"),
        (
            SearchParams {
                k: Some(0),
                ..query("x")
            },
            "k must be 1..50",
        ),
        (
            SearchParams {
                k: Some(51),
                ..query("x")
            },
            "k must be 1..50",
        ),
    ] {
        let err = engine
            .search(&local(), params)
            .await
            .expect_err("bad request");
        assert_eq!(err.to_string(), message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_sticks_to_the_session_until_cleared_and_mixed_answers_are_grouped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;

    // No library, no session: tomatoes are in both libraries.
    let r = engine
        .search(&local(), query("tomato"))
        .await
        .expect("search");
    let session = r.session_id.clone().expect("a session is made");
    assert_eq!(r.sticky_library, None);
    // Both libraries answer (best first: either page is about tomatoes).
    let mut found = r.libraries_found.clone();
    found.sort();
    assert_eq!(found, vec!["gardening", "shipit"]);
    let named = format!(
        "Found in {} and {}",
        r.libraries_found[0], r.libraries_found[1]
    );
    assert!(r.notice.as_deref().is_some_and(|n| n.contains(&named)));
    let libs: Vec<&str> = r
        .results
        .iter()
        .take(2)
        .map(|h| h.library.as_str())
        .collect();
    assert_eq!(
        libs, r.libraries_found,
        "answers take turns, best library first"
    );

    // Naming a library makes it sticky...
    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("gardening".into()),
                session_id: Some(session.clone()),
                ..query("tomato")
            },
        )
        .await
        .expect("search");
    assert_eq!(
        r.sticky_library.as_ref().map(|s| s.library.as_str()),
        Some("gardening")
    );
    // ...so the follow-up without one stays there.
    let r = engine
        .search(
            &local(),
            SearchParams {
                session_id: Some(session.clone()),
                ..query("how do I deploy a release")
            },
        )
        .await
        .expect("search");
    assert!(r.sticky_applied);
    assert_eq!(r.library.as_deref(), Some("gardening"));
    assert!(r.results.iter().all(|h| h.library == "gardening"));
    assert!(r.libraries_found.is_empty());

    // Another library moves it; clearing drops it.
    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                session_id: Some(session.clone()),
                ..query("rollback")
            },
        )
        .await
        .expect("search");
    assert_eq!(r.sticky_library.map(|s| s.library), Some("shipit".into()));
    let r = engine
        .search(
            &local(),
            SearchParams {
                session_id: Some(session.clone()),
                clear_sticky: Some(true),
                ..query("tomato")
            },
        )
        .await
        .expect("search");
    assert!(!r.sticky_applied);
    assert_eq!(r.sticky_library, None);
    assert_eq!(r.libraries_found.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expansion_merges_neighbours_and_keeps_one_hit_per_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;
    let doc = engine
        .document(&local(), "shipit", "2.0", "deploy.md")
        .await
        .expect("document");
    assert!(
        doc.chunks.len() >= 3,
        "the long document should have several chunks"
    );

    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                version: Some("2.0".into()),
                expand: Some(1),
                k: Some(10),
                ..query("orchestrator copies artefact health checks")
            },
        )
        .await
        .expect("search");
    let deploy: Vec<_> = r
        .results
        .iter()
        .filter(|h| h.file_path == "deploy.md")
        .collect();
    assert_eq!(deploy.len(), 1, "one hit per document when expanding");
    let hit = deploy[0];
    let exp = hit.expanded.as_ref().expect("expanded");
    assert!(exp.from_chunk <= hit.chunk_index && hit.chunk_index <= exp.to_chunk);
    assert!(exp.to_chunk - exp.from_chunk >= 1);
    assert!(exp.text.len() > hit.text.len());
    // The expansion is a stretch of the document, overlaps removed.
    assert!(
        doc.text.contains(exp.text.trim()),
        "expansion is not a stretch of the document"
    );

    let r = engine
        .search(
            &local(),
            SearchParams {
                library: Some("shipit".into()),
                version: Some("2.0".into()),
                expand: Some(1),
                duplicates: Some(true),
                ..query("orchestrator copies artefact health checks")
            },
        )
        .await
        .expect("search");
    assert!(
        r.results
            .iter()
            .filter(|h| h.file_path == "deploy.md")
            .count()
            > 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_reassemble_feedback_persists_and_deletes_remove_from_search() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;

    // Listing.
    let libs = engine.libraries(&local()).await.expect("libraries");
    let names: Vec<&str> = libs.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, vec!["gardening", "shipit"]);
    let shipit = &libs[1];
    let versions: Vec<&str> = shipit.versions.iter().map(|v| v.version.as_str()).collect();
    assert_eq!(versions, vec!["2.0", "1.0"], "newest first");
    assert_eq!(shipit.documents, 4);

    // A whole document, overlaps removed.
    let doc = engine
        .document(&local(), "shipit", "latest", "deploy.md")
        .await
        .expect("doc");
    assert_eq!(doc.version, "2.0");
    for i in 1..=30 {
        let needle = format!("health checks number {i} to pass");
        assert_eq!(doc.text.matches(&needle).count(), 1, "{needle}");
    }
    assert!(matches!(
        engine.document(&local(), "shipit", "2.0", "nope.md").await,
        Err(EngineError::UnknownDocument { .. })
    ));

    // Feedback: stored durably, and it lifts the liked chunk's signal.
    let r = engine
        .search(&local(), query("rollback release"))
        .await
        .expect("search");
    let liked = r.results[0].chunk_id.clone();
    for _ in 0..3 {
        engine
            .feedback(
                &local(),
                &FeedbackRequest {
                    chunk_id: liked.clone(),
                    vote: Vote::Like,
                },
            )
            .await
            .expect("vote");
    }
    assert!(matches!(
        engine
            .feedback(
                &local(),
                &FeedbackRequest {
                    chunk_id: "no-such-chunk".into(),
                    vote: Vote::Dislike
                }
            )
            .await,
        Err(EngineError::UnknownChunk(_))
    ));
    drop(engine);
    let engine = Engine::open(&common::engine_config(dir.path()))
        .await
        .expect("reopen");
    let r = engine
        .search(
            &local(),
            SearchParams {
                w_sig: Some(0.5),
                ..query("rollback release")
            },
        )
        .await
        .expect("search");
    let hit = r
        .results
        .iter()
        .find(|h| h.chunk_id == liked)
        .expect("liked hit");
    assert!(
        hit.parts.signal.is_some_and(|s| s > 0.75),
        "{:?}",
        hit.parts
    );

    // Deletes: a document, then a version, then a library.
    let d = engine
        .delete(&local(), Target::Document("gardening", "1.0", "roses.md"))
        .await
        .expect("delete doc");
    assert_eq!(d.documents, 1);
    let r = engine
        .search(&local(), query("prune roses"))
        .await
        .expect("search");
    assert!(!paths(&r).contains(&"roses.md"));
    assert!(matches!(
        engine
            .delete(&local(), Target::Document("gardening", "1.0", "roses.md"))
            .await,
        Err(EngineError::UnknownDocument { .. })
    ));
    engine
        .delete(&local(), Target::Version("shipit", "1.0"))
        .await
        .expect("delete version");
    let libs = engine.libraries(&local()).await.expect("libraries");
    assert_eq!(libs[1].versions.len(), 1);
    engine
        .delete(&local(), Target::Library("gardening"))
        .await
        .expect("delete library");
    let libs = engine.libraries(&local()).await.expect("libraries");
    assert_eq!(
        libs.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        vec!["shipit"]
    );
    assert!(matches!(
        engine.delete(&local(), Target::Library("gardening")).await,
        Err(EngineError::UnknownLibrary { .. })
    ));
    let r = engine
        .search(&local(), query("tomato plants full sun"))
        .await
        .expect("search");
    assert!(r.results.iter().all(|h| h.library == "shipit"));
}

/// A client that embeds its queries itself sends the vector: the dense leg
/// uses it as it is (and the same ranking comes back as for the words it
/// was made from), the model is not needed for it, and a vector of the
/// wrong length, not finite or all zeros is a 400 that names the model's
/// dimension.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_vector_from_the_client_searches_like_its_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine_with_docs(dir.path()).await;
    let words = "when should I prune roses";
    let vector = engine
        .embedder()
        .await
        .expect("model")
        .embed_one(words.to_owned())
        .await
        .expect("embeds");
    let by_words = engine
        .search(
            &local(),
            SearchParams {
                mode: Some("dense".into()),
                rerank: Some(false),
                ..query(words)
            },
        )
        .await
        .expect("search");
    let by_vector = engine
        .search(
            &local(),
            SearchParams {
                embedding: Some(vector.iter().map(|x| x * 3.0).collect()),
                ..SearchParams::default()
            },
        )
        .await
        .expect("search by vector");
    assert_eq!(by_vector.mode, Mode::Dense);
    assert_eq!(paths(&by_vector), paths(&by_words));
    assert_eq!(paths(&by_vector)[0], "roses.md");
    for (a, b) in by_vector.results.iter().zip(&by_words.results) {
        assert!(
            (a.score - b.score).abs() < 1e-4,
            "{} vs {}",
            a.score,
            b.score
        );
    }

    // Over HTTP, from a server whose model is missing: the vector search
    // still answers; the same search in words cannot.
    let mut config = common::engine_config(dir.path());
    config.model.model_dir = dir.path().join("no-model-here");
    drop(engine);
    let modelless = Engine::open(&config)
        .await
        .expect("opens without its model");
    let base = common::serve_engine(modelless, &common::router_config(dir.path(), 1 << 20)).await;
    let (status, body) = common::post_json(
        &base,
        "/api/search",
        serde_json::json!({ "embedding": vector, "library": "gardening" }),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(body["results"][0]["file_path"], "roses.md", "{body}");
    let (status, _) =
        common::post_json(&base, "/api/search", serde_json::json!({ "query": words })).await;
    assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE);

    let zeros = vec![0.0f32; 384];
    let refused = [
        (serde_json::json!({ "embedding": [0.1, 0.2, 0.3] }), "384"),
        (serde_json::json!({ "embedding": zeros.clone() }), "zeros"),
        (
            serde_json::json!({ "embedding": vector, "mode": "hybrid" }),
            "needs a query",
        ),
    ];
    for (request, says) in refused {
        let (status, body) = common::post_json(&base, "/api/search", request).await;
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["kind"], "bad_input");
        assert!(
            body["error"].as_str().is_some_and(|e| e.contains(says)),
            "{body}"
        );
    }
}
