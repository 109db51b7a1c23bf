//! A cross-encoder checkpoint built from the embedding model's own weights,
//! to test and time the reranker path (`--reranker-dir`) where no
//! cross-encoder weights can be had: no registry package ships any.
//!
//! It has the layout of a Hugging Face `BertForSequenceClassification` with
//! one label: every tensor of all-MiniLM-L6-v2 under `bert.` (its pooler
//! included, which the embedder never uses), and a classifier whose
//! weights follow a fixed formula ([`classifier_weight`]) that
//! `scripts/reference-cross-encoder.py` repeats, so PyTorch scores the very
//! same network. Its scores say nothing about relevance (the head is not
//! trained); what they prove is that docshelf reads a checkpoint of this
//! layout as `transformers` does, and what a pass costs.

#![allow(dead_code)]

use std::path::Path;

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// The classifier's bias.
pub const CLASSIFIER_BIAS: f32 = 0.05;

/// Weight `j` of the classifier's one row (`sin(0.37·j + 0.5)`, in double
/// precision, rounded to f32): large enough that logits spread over about
/// ±1, so a wrong segment id or pooler shows far past the test's tolerance.
pub fn classifier_weight(j: usize) -> f32 {
    (0.37 * j as f64 + 0.5).sin() as f32
}

/// Files of the model directory the cross-encoder takes as they are.
const COPIED: [&str; 4] = [
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
];

/// Writes the cross-encoder built from the embedding model in `model_dir`
/// into `out` (created if missing).
pub fn write(model_dir: &Path, out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for name in COPIED {
        let from = model_dir.join(name);
        if from.is_file() {
            std::fs::copy(&from, out.join(name)).map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }

    let config_path = model_dir.join("config.json");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| format!("{}: {e}", config_path.display()))?;
    let mut config: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", config_path.display()))?;
    config["architectures"] = serde_json::json!(["BertForSequenceClassification"]);
    config["id2label"] = serde_json::json!({"0": "LABEL_0"});
    config["label2id"] = serde_json::json!({"LABEL_0": 0});
    let hidden = config["hidden_size"]
        .as_u64()
        .ok_or("config.json has no hidden_size")? as usize;
    std::fs::write(
        out.join("config.json"),
        serde_json::to_string_pretty(&config).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;

    let weights_path = model_dir.join("model.safetensors");
    let bytes =
        std::fs::read(&weights_path).map_err(|e| format!("{}: {e}", weights_path.display()))?;
    let encoder = SafeTensors::deserialize(&bytes).map_err(|e| e.to_string())?;
    let weight: Vec<u8> = (0..hidden)
        .flat_map(|j| classifier_weight(j).to_le_bytes())
        .collect();
    let bias = CLASSIFIER_BIAS.to_le_bytes();
    let mut tensors: Vec<(String, TensorView<'_>)> = encoder
        .tensors()
        .into_iter()
        .map(|(name, view)| (format!("bert.{name}"), view))
        .collect();
    tensors.push((
        "classifier.weight".into(),
        TensorView::new(Dtype::F32, vec![1, hidden], &weight).map_err(|e| e.to_string())?,
    ));
    tensors.push((
        "classifier.bias".into(),
        TensorView::new(Dtype::F32, vec![1], &bias).map_err(|e| e.to_string())?,
    ));
    // `transformers` refuses a checkpoint without its framework named.
    let metadata = std::collections::HashMap::from([("format".to_owned(), "pt".to_owned())]);
    let serialized = safetensors::serialize(tensors, Some(metadata)).map_err(|e| e.to_string())?;
    std::fs::write(out.join("model.safetensors"), serialized).map_err(|e| e.to_string())
}
