//! BERT as all-MiniLM-L6-v2 uses it, in burn, with weights loaded from the
//! sentence-transformers `model.safetensors`.
//!
//! Field names mirror the Hugging Face checkpoint so weights load by path:
//! `encoder.layer.3.attention.self.query.weight` → `encoder.layer.3.attention.self_attn.query.weight`.
//! Only `LayerNorm` (not a Rust field name) and `self` (a keyword) are remapped.

use std::path::Path;

use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::store::{ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use burn::tensor::activation::gelu;
use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, Device, Int, Tensor};
use rayon::prelude::*;
use serde::Deserialize;

use super::EmbedError;

/// The fields of the checkpoint's `config.json` the network needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_act() -> String {
    "gelu".to_owned()
}

impl BertConfig {
    pub fn from_file(path: &Path) -> Result<Self, EmbedError> {
        let err = |reason: String| EmbedError::Config {
            path: path.to_owned(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let config: Self = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        if config.hidden_act != "gelu" {
            return Err(err(format!(
                "activation {:?} is not supported (only exact GELU)",
                config.hidden_act
            )));
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(err("hidden_size is not a multiple of the head count".into()));
        }
        Ok(config)
    }
}

/// The network: embeddings, then the encoder layers.
#[derive(Module, Debug)]
pub struct Bert {
    embeddings: Embeddings,
    encoder: Encoder,
    heads: usize,
}

#[derive(Module, Debug)]
struct Embeddings {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    layer_norm: LayerNorm,
}

#[derive(Module, Debug)]
struct Encoder {
    layer: Vec<Layer>,
}

#[derive(Module, Debug)]
struct Layer {
    attention: Attention,
    intermediate: Intermediate,
    output: Output,
}

#[derive(Module, Debug)]
struct Attention {
    self_attn: SelfAttention,
    output: Output,
}

#[derive(Module, Debug)]
struct SelfAttention {
    query: Linear,
    key: Linear,
    value: Linear,
    heads: usize,
}

#[derive(Module, Debug)]
struct Intermediate {
    dense: Linear,
}

/// A projection, then a residual connection and layer norm.
#[derive(Module, Debug)]
struct Output {
    dense: Linear,
    layer_norm: LayerNorm,
}

impl Bert {
    /// Builds the network for `config` and loads its weights from `path`.
    pub fn load(config: &BertConfig, path: &Path, device: &Device) -> Result<Self, EmbedError> {
        let err = |reason: String| EmbedError::Weights {
            path: path.to_owned(),
            reason,
        };
        let mut model = Self::init(config, device);
        let mut store = SafetensorsStore::from_file(path)
            .with_from_adapter(PyTorchToBurnAdapter)
            .with_key_remapping(r"\.LayerNorm\.", ".layer_norm.")
            .with_key_remapping(r"attention\.self\.", "attention.self_attn.")
            // The checkpoint also holds the pooler, which mean pooling never uses.
            .allow_partial(true);
        let applied = model
            .load_from(&mut store)
            .map_err(|e| err(e.to_string()))?;
        if !applied.errors.is_empty() {
            return Err(err(format!("{:?}", applied.errors)));
        }
        if !applied.missing.is_empty() {
            let missing: Vec<&str> = applied.missing.iter().map(|(p, _)| p.as_str()).collect();
            return Err(err(format!("tensors missing: {}", missing.join(", "))));
        }
        let unexpected: Vec<&String> = applied
            .unused
            .iter()
            .filter(|p| !p.starts_with("pooler.") && !p.ends_with("position_ids"))
            .collect();
        if !unexpected.is_empty() {
            return Err(err(format!(
                "tensors the network does not use (a different architecture?): {unexpected:?}"
            )));
        }
        Ok(model)
    }

    fn init(c: &BertConfig, device: &Device) -> Self {
        let norm = || {
            LayerNormConfig::new(c.hidden_size)
                .with_epsilon(c.layer_norm_eps)
                .init(device)
        };
        let linear = |i, o| LinearConfig::new(i, o).init(device);
        let layers = (0..c.num_hidden_layers)
            .map(|_| Layer {
                attention: Attention {
                    self_attn: SelfAttention {
                        query: linear(c.hidden_size, c.hidden_size),
                        key: linear(c.hidden_size, c.hidden_size),
                        value: linear(c.hidden_size, c.hidden_size),
                        heads: c.num_attention_heads,
                    },
                    output: Output {
                        dense: linear(c.hidden_size, c.hidden_size),
                        layer_norm: norm(),
                    },
                },
                intermediate: Intermediate {
                    dense: linear(c.hidden_size, c.intermediate_size),
                },
                output: Output {
                    dense: linear(c.intermediate_size, c.hidden_size),
                    layer_norm: norm(),
                },
            })
            .collect();
        Self {
            embeddings: Embeddings {
                word_embeddings: EmbeddingConfig::new(c.vocab_size, c.hidden_size).init(device),
                position_embeddings: EmbeddingConfig::new(c.max_position_embeddings, c.hidden_size)
                    .init(device),
                token_type_embeddings: EmbeddingConfig::new(c.type_vocab_size, c.hidden_size)
                    .init(device),
                layer_norm: norm(),
            },
            encoder: Encoder { layer: layers },
            heads: c.num_attention_heads,
        }
    }

    /// Sentence embeddings of a padded batch: `ids` and `mask` are
    /// `[batch, tokens]`; the result is `[batch, hidden]`, mean-pooled over
    /// the real tokens and L2-normalised. `split` says how to run the
    /// projections (see [`Split`]).
    pub fn embed(&self, ids: Tensor<2, Int>, mask: Tensor<2>, split: Split) -> Tensor<2> {
        let [batch, tokens] = ids.dims();
        let hidden = self.encode(ids, mask.clone(), split);
        let [_, _, width] = hidden.dims();

        let weights = mask.reshape([batch, tokens, 1]);
        let summed = (hidden * weights.clone()).sum_dim(1);
        let counts = weights.sum_dim(1).clamp_min(1e-9);
        let pooled = (summed / counts).reshape([batch, width]);

        let norms = pooled
            .clone()
            .powi_scalar(2)
            .sum_dim(1)
            .sqrt()
            .clamp_min(1e-12);
        pooled / norms
    }

    /// The last hidden state, `[batch, tokens, hidden]`.
    fn encode(&self, ids: Tensor<2, Int>, mask: Tensor<2>, split: Split) -> Tensor<3> {
        let [batch, tokens] = ids.dims();
        let device = ids.device();
        let positions = Tensor::<1, Int>::arange(0..tokens as i64, &device)
            .reshape([1, tokens])
            .expand([batch, tokens]);
        let types = Tensor::<2, Int>::zeros([batch, tokens], &device);

        let e = &self.embeddings;
        let mut x = e.layer_norm.forward(
            e.word_embeddings.forward(ids)
                + e.position_embeddings.forward(positions)
                + e.token_type_embeddings.forward(types),
        );

        // `true` where a key is padding: no query may attend to it. Every row
        // keeps at least its [CLS] key, so no softmax row is empty.
        let padding = mask
            .equal_elem(0.0)
            .reshape([batch, 1, 1, tokens])
            .expand([batch, self.heads, tokens, tokens]);
        for layer in &self.encoder.layer {
            x = layer.forward(x, padding.clone(), split);
        }
        x
    }
}

impl Layer {
    fn forward(&self, x: Tensor<3>, padding: Tensor<4, Bool>, split: Split) -> Tensor<3> {
        let attended = self.attention.self_attn.forward(x.clone(), padding, split);
        let x = self.attention.output.forward(attended, x, split);
        let inner = gelu(split.project(&self.intermediate.dense, x.clone()));
        self.output.forward(inner, x, split)
    }
}

impl SelfAttention {
    /// Scaled dot-product attention through burn's fused attention op: the
    /// CPU backend works one (text, head) pair at a time, so the whole
    /// `[batch, heads, tokens, tokens]` score tensor never exists, and the
    /// mask is applied in the same pass as the softmax. Unfused (matmul,
    /// scale, mask, softmax, matmul), the fastest batch of 32 × ~230 tokens
    /// took 2.35 – 2.40 s against 2.00 – 2.11 s fused, over three rounds on
    /// this project's 2-core test machine.
    fn forward(&self, x: Tensor<3>, padding: Tensor<4, Bool>, split: Split) -> Tensor<3> {
        let [batch, tokens, width] = x.dims();
        let head_width = width / self.heads;
        let heads = |t: Tensor<3>| {
            t.reshape([batch, tokens, self.heads, head_width])
                .swap_dims(1, 2)
        };
        let q = heads(split.project(&self.query, x.clone()));
        let k = heads(split.project(&self.key, x.clone()));
        let v = heads(split.project(&self.value, x));

        // The default scale is BERT's 1/sqrt(head width).
        attention(
            q,
            k,
            v,
            Some(padding),
            None,
            AttentionModuleOptions::default(),
        )
        .swap_dims(1, 2)
        .reshape([batch, tokens, width])
    }
}

impl Output {
    fn forward(&self, x: Tensor<3>, residual: Tensor<3>, split: Split) -> Tensor<3> {
        self.layer_norm
            .forward(split.project(&self.dense, x) + residual)
    }
}

/// How the projections (the network's matrix products with its weights)
/// run.
///
/// A batch of a few tokens, a search query, is bound by reading the weights
/// (42 MB in f32, more than the cache holds) rather than by arithmetic, and
/// burn's CPU backend runs such small products on one core. Splitting each
/// weight matrix into column blocks, one product per core side by side,
/// reads the weights with every core; the outputs are joined along the
/// feature axis, so the result is the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// One product per projection: what large batches and GPUs want.
    Whole,
    /// This many column blocks per projection, computed in parallel.
    Columns(usize),
}

impl Split {
    fn project(self, linear: &Linear, x: Tensor<3>) -> Tensor<3> {
        let weight = linear.weight.val();
        let [inputs, outputs] = weight.dims();
        // On a many-core machine, blocks narrower than this cost more in
        // scheduling than their share of the weights.
        const MIN_BLOCK_COLUMNS: usize = 96;
        let parts = match self {
            Split::Columns(parts) => parts.min(outputs / MIN_BLOCK_COLUMNS),
            Split::Whole => 1,
        };
        if parts <= 1 {
            return linear.forward(x);
        }
        let bias = linear.bias.as_ref().map(|b| b.val());
        let [batch, tokens, _] = x.dims();
        let rows = x.reshape([batch * tokens, inputs]);
        let blocks: Vec<Tensor<2>> = (0..parts)
            .into_par_iter()
            .map(|block| {
                let (start, end) = (block * outputs / parts, (block + 1) * outputs / parts);
                let product = rows
                    .clone()
                    .matmul(weight.clone().narrow(1, start, end - start));
                match &bias {
                    Some(b) => product + b.clone().narrow(0, start, end - start).unsqueeze(),
                    None => product,
                }
            })
            .collect();
        Tensor::cat(blocks, 1).reshape([batch, tokens, outputs])
    }
}
