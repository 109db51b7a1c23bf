//! Token budgets over the REST API, with the real model and store: the
//! answer's context fits the budget as OpenAI's own tokenizer (tiktoken,
//! from PyPI, through `scripts/tiktoken-count.sh`) counts it, passages are
//! best first with their source, and a page stored in two versions is
//! given once, from the newer.

use std::io::Write;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::{json, Value};

use docshelf_server::engine::Engine;

use crate::common::{self, post_json};

/// Manual pages of the shared Git set: stored as 2.39, and again as 2.40.
const PAGES: [&str; 8] = [
    "git-add.html",
    "git-commit.html",
    "git-stash.html",
    "git-rebase.html",
    "git-merge.html",
    "git-tag.html",
    "git-log.html",
    "git-reset.html",
];

/// `text`'s o200k_base tokens as tiktoken counts them.
fn tiktoken(text: &str) -> usize {
    let script = common::package_dir().join("../scripts/tiktoken-count.sh");
    let mut child = Command::new(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("scripts/tiktoken-count.sh");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("tiktoken");
    assert!(out.status.success(), "tiktoken-count failed");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_fit_their_token_budget_as_tiktoken_counts_it() {
    let dir = tempfile::tempdir().expect("dir");
    let engine = common::engine(dir.path()).await;
    let corpus = common::shared_data().join("eval/git-docs/corpus");
    let uploads = || {
        PAGES
            .iter()
            .map(|p| common::upload(p, std::fs::read(corpus.join(p)).expect("page")))
            .collect::<Vec<_>>()
    };
    for version in ["2.39", "2.40"] {
        common::ingest(&engine, "git", version, uploads()).await;
    }
    let base = common::serve_engine(engine, &common::router_config(dir.path(), 1 << 20)).await;
    let base = base.as_str();
    let search = |body: Value| async move {
        let (status, answer) = post_json(base, "/api/search", body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        answer
    };

    for max in [150, 600, 2_000, 8_000] {
        let answer = search(
            json!({"query": "save changes temporarily and restore them later", "max_tokens": max}),
        )
        .await;
        let context = answer["context"].as_str().expect("context");
        let budget = &answer["budget"];
        assert_eq!(budget["tokenizer"], "o200k_base", "{budget}");
        let tokens = budget["tokens"].as_u64().expect("tokens") as usize;
        assert!(tokens <= max, "{max}: {budget}");
        assert_eq!(
            tiktoken(context),
            tokens,
            "{max}: counted as tiktoken counts"
        );
        let results = answer["results"].as_array().expect("results");
        assert_eq!(budget["passages"], results.len(), "{budget}");
        // Each result is a passage, in rank order, saying where it is from.
        let mut at = 0;
        for hit in results {
            let source = format!(
                "Source: {} {} · {}",
                hit["library"].as_str().unwrap_or_default(),
                hit["version"].as_str().unwrap_or_default(),
                hit["file_path"].as_str().unwrap_or_default()
            );
            let found = context[at..].find(&source).expect(&source);
            at += found + source.len();
        }
        // Code blocks come whole: every fence is closed.
        assert_eq!(context.matches("```").count() % 2, 0, "{context}");
        if max >= 2_000 {
            assert!(
                results.iter().any(|h| h["file_path"] == "git-stash.html"),
                "{answer}"
            );
            // The results say where each passage is from, without its
            // text a second time.
            assert!(results.iter().all(|h| h["text"] == ""), "{answer}");
            // The same page in two versions: given once, from the newer,
            // the older named.
            assert!(results.iter().all(|h| h["version"] == "2.40"), "{answer}");
            let repeats = budget["repeats"].as_array().expect("repeats");
            assert!(!repeats.is_empty(), "{budget}");
            for repeat in repeats {
                assert_eq!(repeat["version"], "2.39", "{repeat}");
                let kept = &results[repeat["same_as"].as_u64().expect("same_as") as usize];
                assert_eq!(kept["file_path"], repeat["file_path"], "{repeat}");
            }
        }
    }
    let small =
        search(json!({"query": "record changes to the repository", "max_tokens": 60})).await;
    assert!(
        small["budget"]["tokens"].as_u64().expect("tokens") <= 60,
        "{small}"
    );

    let (status, refused) = post_json(
        base,
        "/api/search",
        json!({"query": "stash", "max_tokens": 10}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("max_tokens must be 50..100000"),
        "{refused}"
    );
    // Without a budget the answer is as before: no context.
    let plain = search(json!({"query": "stash"})).await;
    assert!(
        plain.get("context").is_none() && plain.get("budget").is_none(),
        "{plain}"
    );
}

/// The CLI's `--max-tokens` prints the passages, the same context the
/// engine fills, within the budget as tiktoken counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_the_budgeted_context() {
    let dir = tempfile::tempdir().expect("dir");
    let corpus = common::shared_data().join("eval/git-docs/corpus");
    let uploads: Vec<_> = PAGES[..3]
        .iter()
        .map(|p| common::upload(p, std::fs::read(corpus.join(p)).expect("page")))
        .collect();
    let expected = {
        let engine: Engine = common::engine(dir.path()).await;
        common::ingest(&engine, "git", "2.40", uploads).await;
        let params = index_core::search::SearchParams {
            query: "stage file contents".into(),
            library: Some("git".into()),
            max_tokens: Some(300),
            ..Default::default()
        };
        let direct = engine
            .search(&docshelf_server::access::local(), params)
            .await
            .expect("search");
        direct.context.expect("context")
    };
    let out = Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args([
            "search",
            "--max-tokens",
            "300",
            "-l",
            "git",
            "--device",
            "cpu",
        ])
        .arg("--data")
        .arg(dir.path())
        .arg("--model-dir")
        .arg(common::model_dir())
        .arg("stage file contents")
        .env_remove("DOCSHELF_SERVER")
        .env_remove("DOCSHELF_TOKEN")
        .output()
        .expect("docshelf search");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let printed = String::from_utf8(out.stdout).expect("utf-8");
    assert!(!printed.is_empty(), "{stderr}");
    assert_eq!(printed, expected);
    assert!(tiktoken(&printed) <= 300);
    assert!(stderr.contains("tokens (o200k_base)"), "{stderr}");
}
