//! The reranker a user supplies (`--reranker-dir`), on a real checkpoint of
//! the cross-encoder layout.
//!
//! No registry package ships cross-encoder weights, so the checkpoint is
//! built from the embedding model (`support/cross_encoder_dir.rs`): real
//! BERT weights with an untrained one-label head. Its scores are checked
//! against `fixtures/cross-encoder-reference.json`, which
//! `scripts/reference-cross-encoder.py` wrote with Hugging Face
//! transformers on PyTorch from the same checkpoint.

use std::path::Path;

use crate::common::{self, ingest, upload};
use crate::cross_encoder_dir;

use docshelf_server::access::local;
use docshelf_server::config::EngineConfig;
use docshelf_server::embed::cross_encoder::CrossEncoder;
use docshelf_server::embed::{DeviceChoice, EmbedError};
use docshelf_server::engine::Engine;
use index_core::search::{SearchParams, SearchResponse};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    pairs: Vec<(String, String)>,
    logits: Vec<f32>,
}

/// The test cross-encoder, written into `dir`.
fn checkpoint(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("cross-encoder");
    cross_encoder_dir::write(&common::model_dir(), &out)
        .unwrap_or_else(|e| panic!("cannot build the test cross-encoder ({e}); run `make setup`"));
    out
}

fn load(dir: &Path) -> CrossEncoder {
    CrossEncoder::load(dir, DeviceChoice::Cpu).expect("the cross-encoder loads")
}

#[test]
fn logits_match_transformers_on_the_same_checkpoint() {
    let temp = tempfile::tempdir().expect("temp dir");
    let model = load(&checkpoint(temp.path()));
    let reference: Reference = common::fixture("cross-encoder-reference.json");
    assert!(reference.pairs.len() >= 10, "the fixture must stay varied");

    // Each query with its passage alone (the path of one pair), then all
    // pairs of one query at once (batched, padded, split across cores).
    let mut worst = 0.0f32;
    for ((query, passage), want) in reference.pairs.iter().zip(&reference.logits) {
        let got = model.score(query, &[passage]).expect("scores")[0];
        worst = worst.max((got - want).abs());
        assert!(
            (got - want).abs() < 1e-4,
            "{query:?} / {passage:?}: {got} vs transformers' {want}"
        );
    }
    let query = &reference.pairs[0].0;
    let same_query: Vec<(&String, f32)> = reference
        .pairs
        .iter()
        .zip(&reference.logits)
        .filter(|((q, _), _)| q == query)
        .map(|((_, p), l)| (p, *l))
        .collect();
    assert!(
        same_query.len() >= 2,
        "the fixture pairs one query with several passages"
    );
    let passages: Vec<&String> = same_query.iter().map(|(p, _)| *p).collect();
    let batched = model.score(query, &passages).expect("scores");
    for ((passage, want), got) in same_query.iter().zip(batched) {
        assert!(
            (got - want).abs() < 1e-4,
            "batched {passage:?}: {got} vs transformers' {want}"
        );
    }
    eprintln!("worst |docshelf − transformers| over the fixture: {worst:e}");
}

#[test]
fn a_directory_that_is_not_a_one_label_cross_encoder_is_refused_with_its_reason() {
    let temp = tempfile::tempdir().expect("temp dir");
    match CrossEncoder::load(temp.path(), DeviceChoice::Cpu) {
        Err(EmbedError::MissingRerankerFiles { missing, .. }) => {
            assert!(missing.contains("model.safetensors"), "{missing}");
        }
        other => panic!("an empty directory must be refused, got {:?}", other.err()),
    }

    // The embedding model itself: no classifier, and no `bert.` prefix.
    let err = CrossEncoder::load(&common::model_dir(), DeviceChoice::Cpu)
        .err()
        .expect("an embedding checkpoint is not a cross-encoder");
    assert!(matches!(err, EmbedError::Weights { .. }), "{err}");

    // Two labels: a classifier, not a reranker.
    let dir = checkpoint(temp.path());
    let config_path = dir.join("config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).expect("config"))
            .expect("json");
    config["id2label"] = serde_json::json!({"0": "NO", "1": "YES"});
    std::fs::write(&config_path, config.to_string()).expect("write config");
    let err = CrossEncoder::load(&dir, DeviceChoice::Cpu)
        .err()
        .expect("two labels are refused");
    assert!(err.to_string().contains("2 labels"), "{err}");
}

fn order(r: &SearchResponse) -> Vec<(String, u32)> {
    r.results
        .iter()
        .map(|h| (h.chunk_id.clone(), h.score.to_bits()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_reranks_with_the_given_cross_encoder_deterministically() {
    let temp = tempfile::tempdir().expect("temp dir");
    let reranker = checkpoint(temp.path());
    let mut config: EngineConfig = common::engine_config(&temp.path().join("store"));
    config.model.reranker_dir = Some(reranker.clone());
    let engine = Engine::open(&config)
        .await
        .expect("engine opens with the reranker");
    assert!(
        engine
            .status(&local())
            .await
            .reranker
            .starts_with("cross-encoder from"),
        "{}",
        engine.status(&local()).await.reranker
    );

    let pages = vec![
        upload(
            "undo.md",
            "# Undoing changes\n\nReset the branch to the previous commit to undo it.",
        ),
        upload(
            "log.md",
            "# Commit history\n\nThe log lists every commit, newest first.",
        ),
        upload(
            "push.md",
            "# Publishing\n\nPush sends your commits to the remote repository.",
        ),
    ];
    ingest(&engine, "site", "1", pages).await;

    let params = || SearchParams {
        query: "undo the last commit".into(),
        library: Some("site".into()),
        duplicates: Some(true),
        ..SearchParams::default()
    };
    let first = engine.search(&local(), params()).await.expect("search");
    assert!(!first.results.is_empty());
    for _ in 0..2 {
        let again = engine.search(&local(), params()).await.expect("search");
        assert_eq!(order(&first), order(&again));
    }

    // Each bonus is the model's own probability for that chunk.
    let model = load(&reranker);
    for hit in &first.results {
        let bonus = hit.parts.rerank.expect("every candidate was rescored");
        let chunk = engine
            .store()
            .chunk_range(
                &hit.library,
                &hit.version,
                &hit.file_path,
                hit.chunk_index,
                hit.chunk_index,
            )
            .await
            .expect("the chunk reads back")
            .remove(0);
        let input = ingest_core::context::embedding_input(&chunk.context, &chunk.text);
        let logit = model
            .score("undo the last commit", &[input])
            .expect("scores")[0];
        let want = 1.0 / (1.0 + (-logit).exp());
        assert!(
            (bonus - want).abs() < 1e-3,
            "{}: {bonus} vs {want}",
            hit.chunk_id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_reranker_directory_stops_the_engine_with_its_reason() {
    let temp = tempfile::tempdir().expect("temp dir");
    let mut config = common::engine_config(&temp.path().join("store"));
    config.model.reranker_dir = Some(temp.path().join("nowhere"));
    let err = Engine::open(&config)
        .await
        .err()
        .expect("a missing reranker stops the start");
    let text = format!("{err:#}");
    assert!(
        text.contains("--reranker-dir") && text.contains("model.safetensors"),
        "{text}"
    );
}
