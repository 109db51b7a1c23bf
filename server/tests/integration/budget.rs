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
    // As `docshelf serve` does before it listens: the model and the
    // tokenizer's vocabulary are loaded before the first budgeted search.
    engine.warm().await;
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

/// A section of several chunks: three paragraphs and a code block under
/// one heading, then a sibling section.
fn proxy_guide() -> String {
    let para = |topic: &str| {
        format!(
            "The {topic} setting is read when the client starts. It applies to every request the \
             client makes afterwards, and a value given on the command line wins over the one in \
             the file. Leave it unset to connect directly. Administrators usually keep it in the \
             shared configuration so that every machine behaves alike, and users override it \
             only while they travel.\n\n"
        )
    };
    format!(
        "# Network\n\nHow the client reaches the network.\n\n## Configure a proxy\n\n{}{}\
         ```sh\nclient config set proxy http://proxy.example:3128\n```\n\n{}\
         ## Timeouts\n\nRequests give up after thirty seconds of silence from the far end.\n",
        para("proxy"),
        para("no-proxy exception list (zebrafish quokka)"),
        para("proxy authentication")
    )
}

/// A paragraph two pages share, the second copy edited by a word and
/// followed by a footer: near copies.
const SHARED: &str = "Release tokens are scoped to one package and expire after thirty days. \
    Create one from the account page, give it the publish permission only, and store it in the \
    continuous integration secrets rather than in the repository. Rotate it when a maintainer \
    leaves the project, and revoke any token that was printed to a build log by mistake, since \
    logs are kept for months and readable by every collaborator of the project.";

/// Whole sections where the budget allows (the best chunk where it does
/// not), and near copies of a passage given once, with real chunking and
/// the real model and store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passages_are_whole_sections_and_near_copies_are_given_once() {
    let dir = tempfile::tempdir().expect("dir");
    let engine = common::engine(dir.path()).await;
    let edited = SHARED.replace("thirty days", "thirty-one days");
    let uploads = vec![
        common::upload("network.md", proxy_guide()),
        common::upload("tokens.md", format!("# Tokens\n\n{SHARED}\n")),
        common::upload(
            "print/tokens.md",
            format!("# Tokens\n\n{edited}\n\nPrinted from the documentation site.\n"),
        ),
    ];
    common::ingest(&engine, "cli", "1.0", uploads).await;
    // As `docshelf serve` does before it listens: the model and the
    // tokenizer's vocabulary are loaded before the first budgeted search.
    engine.warm().await;
    let base = common::serve_engine(engine, &common::router_config(dir.path(), 1 << 20)).await;
    let base = base.as_str();
    let search = |query: &str, max: usize| {
        let body = json!({"query": query, "library": "cli", "max_tokens": max});
        async move {
            let (status, answer) = post_json(base, "/api/search", body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer
        }
    };

    let query = "zebrafish quokka exception list for the proxy";
    let roomy = search(query, 2_000).await;
    let context = roomy["context"].as_str().expect("context");
    let first = &roomy["results"][0];
    assert_eq!(first["file_path"], "network.md", "{roomy}");
    // The whole section: its heading, all three paragraphs and the code,
    // and nothing of the next section.
    for part in [
        "## Configure a proxy",
        "The proxy setting is read",
        "zebrafish quokka",
        "client config set proxy",
        "The proxy authentication setting",
    ] {
        assert!(context.contains(part), "{part}: {context}");
    }
    assert!(!context.contains("thirty seconds of silence"), "{context}");
    assert_eq!(roomy["budget"]["sections"][0], 0, "{roomy}");
    assert!(tiktoken(context) <= 2_000);

    // Too small for the section: its best chunk.
    let tight = search(query, 150).await;
    let context = tight["context"].as_str().expect("context");
    assert!(context.contains("zebrafish quokka"), "{tight}");
    assert!(
        !context.contains("The proxy authentication setting"),
        "{tight}"
    );
    let sections = tight["budget"]["sections"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!sections.contains(&json!(0)), "{tight}");
    assert!(tiktoken(context) <= 150);

    // The shared paragraph: once, the other page named beside it.
    let tokens = search("how long do release tokens last before they expire", 2_000).await;
    let paths: Vec<&str> = tokens["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|h| h["file_path"].as_str())
        .collect();
    let copies = paths.iter().filter(|p| p.ends_with("tokens.md")).count();
    assert_eq!(copies, 1, "{tokens}");
    let context = tokens["context"].as_str().expect("context");
    assert_eq!(
        context.matches("Rotate it when a maintainer").count(),
        1,
        "{context}"
    );
    assert!(context.contains("Also in: cli 1.0 · "), "{context}");
    let repeats = tokens["budget"]["repeats"].as_array().expect("repeats");
    assert_eq!(repeats.len(), 1, "{tokens}");
}
