//! What changed between two versions of a library, over REST and the CLI,
//! on versions uploaded to a real store with the real model: documents
//! changed, added, removed and moved, sections with their word diffs, a
//! path prefix, a token budget, and the errors a client meets.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::Value;

use docshelf_server::engine::Engine;

use crate::common::{self, get_json, ingest, upload};

const GUIDE_1: &str = "# Guide\n\nHow to use widgets.\n\n## Install\n\nRun `pip install widgets`.\n\n## Configure\n\nSet WIDGETS_HOME to a folder.\n\n## Legacy loader\n\nThe old loader reads XML.\n";
const GUIDE_2: &str = "# Guide\n\nHow to use widgets.\n\n## Install\n\nRun `pip install widgets[fast]` on Python 3.10 or later.\n\n## Configure\n\nSet WIDGETS_HOME to a folder.\n\n## Plugins\n\nLoad plugins with `widgets.load()`.\n";
const FAQ: &str = "# FAQ\n\n## Is it fast?\n\nYes, with the fast extra.\n";

/// `widgets` 1.0 and 2.0 stored, and served: the engine and base URL.
async fn two_versions(dir: &std::path::Path) -> (Arc<Engine>, String) {
    let engine = common::engine(dir).await;
    ingest(
        &engine,
        "widgets",
        "1.0",
        vec![
            upload("guide.md", GUIDE_1),
            upload("faq.md", FAQ),
            upload("changelog-free/old.md", "# Old\n\nGoing away.\n"),
            upload("same.md", "# Same\n\nNothing new here.\n"),
        ],
    )
    .await;
    ingest(
        &engine,
        "widgets",
        "2.0",
        vec![
            upload("guide.md", GUIDE_2),
            upload("help/faq.md", FAQ),
            upload("new.md", "# New\n\nA new page.\n"),
            upload("same.md", "# Same\n\nNothing new here.\n"),
        ],
    )
    .await;
    let engine = Arc::new(engine);
    let router = common::router_config(dir, 1024 * 1024);
    let app = docshelf_server::http::router(engine.clone(), &router);
    let base = common::serve_app(app, docshelf_server::http::serve::HEADER_TIMEOUT).await;
    (engine, base)
}

fn kinds(changes: &Value) -> Vec<(String, String)> {
    changes["documents"]
        .as_array()
        .expect("documents")
        .iter()
        .map(|d| {
            (
                d["change"].as_str().unwrap_or_default().to_owned(),
                d["file_path"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_versions_compare_section_by_section_on_rest_and_the_cli() {
    let dir = tempfile::tempdir().expect("dir");
    let (engine, base) = two_versions(dir.path()).await;

    let (status, changes) =
        get_json(&base, "/api/libraries/widgets/changes?from=1.0&to=latest").await;
    assert_eq!(status, StatusCode::OK, "{changes}");
    assert_eq!(
        (changes["from"].as_str(), changes["to"].as_str()),
        (Some("1.0"), Some("2.0"))
    );
    let expected: Vec<(String, String)> = [
        ("changed", "guide.md"),
        ("added", "new.md"),
        ("removed", "changelog-free/old.md"),
        ("moved", "help/faq.md"),
    ]
    .iter()
    .map(|(k, p)| (k.to_string(), p.to_string()))
    .collect();
    assert_eq!(kinds(&changes), expected, "{changes}");
    assert_eq!(changes["totals"]["documents_unchanged"], 1, "{changes}");
    // No release notes in 2.0 (a folder whose name only starts like one,
    // `changelog-free/`, is not one).
    assert!(changes.get("release_notes").is_none(), "{changes}");
    let guide = &changes["documents"][0];
    let sections: Vec<(&str, &str)> = guide["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| {
            (
                s["change"].as_str().unwrap_or_default(),
                s["heading_path"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        sections,
        [
            ("changed", "Guide > Install"),
            ("added", "Guide > Plugins"),
            ("removed", "Guide > Legacy loader"),
        ]
    );
    let diff = guide["sections"][0]["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("[-widgets`.-] {+widgets[fast]` on Python 3.10 or later.+}"),
        "{diff}"
    );
    assert_eq!(changes["documents"][3]["previous_path"], "faq.md");

    // A path prefix, and a budget that cuts while the totals count all.
    let (_, only_help) = get_json(
        &base,
        "/api/libraries/widgets/changes?from=1.0&to=2.0&file_path=help/",
    )
    .await;
    assert_eq!(
        kinds(&only_help),
        [("added".to_owned(), "help/faq.md".to_owned())],
        "{only_help}"
    );
    let (_, small) = get_json(
        &base,
        "/api/libraries/widgets/changes?from=1.0&to=2.0&max_tokens=50",
    )
    .await;
    assert_eq!(small["cut"], true, "{small}");
    assert!(
        small["tokens"].as_u64().unwrap_or(u64::MAX) <= 50,
        "{small}"
    );
    assert_eq!(small["totals"], changes["totals"]);

    // What a client gets wrong.
    for (path, code) in [
        (
            "/api/libraries/widgets/changes?from=0.9&to=2.0",
            "unknown_version",
        ),
        (
            "/api/libraries/nope/changes?from=1.0&to=2.0",
            "unknown_library",
        ),
        (
            "/api/libraries/widgets/changes?from=1.0&to=2.0&max_tokens=5",
            "invalid_read",
        ),
        (
            "/api/libraries/widgets/changes?from=1.0",
            "invalid_query_string",
        ),
    ] {
        let (status, refused) = get_json(&base, path).await;
        assert!(status.is_client_error(), "{path}: {status} {refused}");
        assert_eq!(refused["code"], code, "{path}: {refused}");
    }

    // The CLI, asking the running server.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args(["changes", "widgets", "1.0", "2.0", "--server", &base])
        .output()
        .expect("docshelf changes runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("1 documents changed, 1 added, 1 removed, 1 moved, 1 unchanged"),
        "{text}"
    );
    assert!(text.contains("moved help/faq.md (was faq.md)"), "{text}");
    assert!(text.contains("~ Guide > Install"), "{text}");
    // A version with release notes: the comparison points at them.
    ingest(
        &engine,
        "widgets",
        "3.0",
        vec![
            upload("guide.md", GUIDE_2),
            upload(
                "CHANGES.md",
                "# Changes\n\n## 3.0\n\nRelease notes now ship.\n",
            ),
        ],
    )
    .await;
    let (status, notes) = get_json(&base, "/api/libraries/widgets/changes?from=2.0&to=3.0").await;
    assert_eq!(status, StatusCode::OK, "{notes}");
    assert_eq!(
        notes["release_notes"],
        serde_json::json!(["CHANGES.md"]),
        "{notes}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_changed_since_a_version_finds_only_what_changed_after_it() {
    let dir = tempfile::tempdir().expect("dir");
    let (engine, base) = two_versions(dir.path()).await;
    let search = |body: Value| {
        let base = base.clone();
        async move { common::post_json(&base, "/api/search", body).await }
    };
    let files = |found: &Value| -> Vec<String> {
        found["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|h| h["file_path"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let query = "nothing new here: the faq, the guide and its plugins";

    // Without it, pages 2.0 kept as they were answer too.
    let (_, all) =
        search(serde_json::json!({"query": query, "library": "widgets", "version": "2.0"})).await;
    assert!(files(&all).contains(&"same.md".to_owned()), "{all}");
    assert!(files(&all).contains(&"help/faq.md".to_owned()), "{all}");

    // Since 1.0: only pages with sections 2.0 added or changed, from 2.0.
    let (status, changed) =
        search(serde_json::json!({"query": query, "library": "widgets", "changed_since": "1.0"}))
            .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    let found = files(&changed);
    assert!(found.contains(&"guide.md".to_owned()), "{changed}");
    assert!(
        found.iter().all(|f| f == "guide.md" || f == "new.md"),
        "unchanged or only moved pages: {found:?}"
    );
    assert!(changed["results"]
        .as_array()
        .expect("results")
        .iter()
        .all(|h| h["version"] == "2.0"));

    // 2.0 published again with same.md changed: the comparison searches
    // reuse is not kept past the write.
    ingest(
        &engine,
        "widgets",
        "2.0",
        vec![
            upload("guide.md", GUIDE_2),
            upload("help/faq.md", FAQ),
            upload("new.md", "# New\n\nA new page.\n"),
            upload(
                "same.md",
                "# Same\n\nNothing new here, but now quite different.\n",
            ),
        ],
    )
    .await;
    let (_, again) =
        search(serde_json::json!({"query": query, "library": "widgets", "changed_since": "1.0"}))
            .await;
    assert!(files(&again).contains(&"same.md".to_owned()), "{again}");

    // It compares two versions of one library: it needs the library.
    let (status, refused) =
        search(serde_json::json!({"query": "install", "changed_since": "1.0"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], "invalid_search", "{refused}");
}
