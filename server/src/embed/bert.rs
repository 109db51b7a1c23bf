//! BERT as all-MiniLM-L6-v2 uses it, in burn, with weights loaded from the
//! sentence-transformers `model.safetensors`.
//!
//! Field names mirror the Hugging Face checkpoint so weights load by path:
//! `encoder.layer.3.attention.self.query.weight` → `encoder.layer.3.attention.self_attn.query.weight`.
//! Only `LayerNorm` (not a Rust field name) and `self` (a keyword) are remapped.

use std::path::Path;

use burn::backend::DispatchDevice;
use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::store::{ApplyResult, ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use burn::tensor::{Device, Int, Tensor};
use serde::Deserialize;

use super::kernels::{self, Padding};
use super::precision::Precision;
use super::projection::{Plan, Weights};
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
    /// The layer's projections ready to run: built from the fields above,
    /// again by [`Bert::load`] once the weights are in; not part of the
    /// checkpoint.
    #[module(skip)]
    projections: Projections,
}

/// One layer's four projections, prepared for the backend.
#[derive(Debug, Clone)]
struct Projections {
    /// Query, key and value side by side, `[hidden, 3·hidden]`: one product
    /// instead of three, which reads the input once and cuts a search
    /// query's fixed costs per product (a second copy of these weights,
    /// 10.6 MB in all).
    qkv: Weights,
    attention_output: Weights,
    intermediate: Weights,
    output: Weights,
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
    pub fn load(
        config: &BertConfig,
        path: &Path,
        device: &Device,
        precision: Precision,
    ) -> Result<Self, EmbedError> {
        let mut model = Self::init(config, device);
        let mut store = checkpoint(path);
        let applied = model
            .load_from(&mut store)
            .map_err(|e| weights_error(path, e.to_string()))?;
        // The checkpoint also holds the pooler, which mean pooling never uses.
        check_applied(path, &applied, |p| p.starts_with("pooler."))?;
        model.prepare(device, precision)?;
        Ok(model)
    }

    /// Readies the loaded weights for the backend: on the CPU, each
    /// layer's projections in the form `precision` computes them with (see
    /// `Weights::for_cpu`). Call once the weights are in.
    pub(super) fn prepare(
        &mut self,
        device: &Device,
        precision: Precision,
    ) -> Result<(), EmbedError> {
        // The copies (another 42 MB at f32) pay only where burn's products
        // are slow for few tokens, and the reduced kernels exist only there:
        // on the CPU.
        let pack = matches!(device.as_dispatch(), DispatchDevice::Flex(_));
        for layer in &mut self.encoder.layer {
            let projections = Projections::of(&layer.attention, &layer.intermediate, &layer.output);
            layer.projections = if pack {
                projections.for_cpu(precision)?
            } else {
                projections
            };
        }
        Ok(())
    }

    /// The network for `config`, with weights still to load.
    pub(super) fn init(c: &BertConfig, device: &Device) -> Self {
        let norm = || {
            LayerNormConfig::new(c.hidden_size)
                .with_epsilon(c.layer_norm_eps)
                .init(device)
        };
        let linear = |i, o| LinearConfig::new(i, o).init(device);
        let layers = (0..c.num_hidden_layers)
            .map(|_| {
                Layer::new(
                    Attention {
                        self_attn: SelfAttention {
                            query: linear(c.hidden_size, c.hidden_size),
                            key: linear(c.hidden_size, c.hidden_size),
                            value: linear(c.hidden_size, c.hidden_size),
                        },
                        output: Output {
                            dense: linear(c.hidden_size, c.hidden_size),
                            layer_norm: norm(),
                        },
                    },
                    Intermediate {
                        dense: linear(c.hidden_size, c.intermediate_size),
                    },
                    Output {
                        dense: linear(c.intermediate_size, c.hidden_size),
                        layer_norm: norm(),
                    },
                )
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

    /// Sentence embeddings of a padded batch: `ids` is `[batch, tokens]`,
    /// and `lengths` holds each row's count of real tokens (padding follows
    /// them); the result is `[batch, hidden]`, mean-pooled over the real
    /// tokens and L2-normalised. `plan` says how to run the projections
    /// (see [`Plan`]).
    pub fn embed(&self, ids: Tensor<2, Int>, lengths: Vec<usize>, plan: Plan) -> Tensor<2> {
        let [batch, tokens] = ids.dims();
        let device = ids.device();
        let padding = Padding::new(lengths, tokens, self.heads, &device);
        let hidden = self.encode(ids, None, &padding, plan);
        let [_, _, width] = hidden.dims();

        let weights = padding.real_tokens(&device).reshape([batch, tokens, 1]);
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

    /// Attention heads per layer.
    pub(super) fn heads(&self) -> usize {
        self.heads
    }

    /// The last hidden state, `[batch, tokens, hidden]`. `types` gives each
    /// token's segment (0 or 1, `[batch, tokens]`) where the input is a
    /// pair; a single text is all segment 0.
    pub(super) fn encode(
        &self,
        ids: Tensor<2, Int>,
        types: Option<Tensor<2, Int>>,
        padding: &Padding,
        plan: Plan,
    ) -> Tensor<3> {
        let [batch, tokens] = ids.dims();
        let device = ids.device();
        let positions = Tensor::<1, Int>::arange(0..tokens as i64, &device)
            .reshape([1, tokens])
            .expand([batch, tokens]);
        let types = types.unwrap_or_else(|| Tensor::<2, Int>::zeros([batch, tokens], &device));

        let e = &self.embeddings;
        let mut x = e.layer_norm.forward(
            e.word_embeddings.forward(ids)
                + e.position_embeddings.forward(positions)
                + e.token_type_embeddings.forward(types),
        );

        for layer in &self.encoder.layer {
            x = layer.forward(x, padding, plan);
        }
        x
    }
}

impl Layer {
    fn new(attention: Attention, intermediate: Intermediate, output: Output) -> Self {
        let projections = Projections::of(&attention, &intermediate, &output);
        Self {
            attention,
            intermediate,
            output,
            projections,
        }
    }

    /// One encoder layer: multi-head self-attention over the real tokens
    /// (see [`kernels::attention`]), then the feed-forward block, each
    /// followed by a residual connection and layer norm.
    fn forward(&self, x: Tensor<3>, padding: &Padding, plan: Plan) -> Tensor<3> {
        let p = &self.projections;
        let attended = kernels::attention(plan.project(&p.qkv, x.clone()), padding);
        let x = (self.attention.output.layer_norm)
            .forward(plan.project(&p.attention_output, attended) + x);
        let inner = kernels::gelu(plan.project(&p.intermediate, x.clone()));
        (self.output.layer_norm).forward(plan.project(&p.output, inner) + x)
    }
}

impl Projections {
    fn of(attention: &Attention, intermediate: &Intermediate, output: &Output) -> Self {
        let a = &attention.self_attn;
        Self {
            qkv: Weights::side_by_side(&[&a.query, &a.key, &a.value]),
            attention_output: Weights::of(&attention.output.dense),
            intermediate: Weights::of(&intermediate.dense),
            output: Weights::of(&output.dense),
        }
    }

    fn for_cpu(self, precision: Precision) -> Result<Self, EmbedError> {
        Ok(Self {
            qkv: self.qkv.for_cpu(precision)?,
            attention_output: self.attention_output.for_cpu(precision)?,
            intermediate: self.intermediate.for_cpu(precision)?,
            output: self.output.for_cpu(precision)?,
        })
    }
}

/// The checkpoint at `path`, read with Hugging Face's names mapped onto the
/// fields here (`LayerNorm` → `layer_norm`, `self` → `self_attn`). Partial:
/// what a network leaves unused is judged by [`check_applied`].
pub(super) fn checkpoint(path: &Path) -> SafetensorsStore {
    SafetensorsStore::from_file(path)
        .with_from_adapter(PyTorchToBurnAdapter)
        .with_key_remapping(r"\.LayerNorm\.", ".layer_norm.")
        .with_key_remapping(r"attention\.self\.", "attention.self_attn.")
        .allow_partial(true)
}

/// Refuses a load that left a field without weights, failed on a tensor,
/// or left checkpoint tensors unused other than those `ignorable` names
/// (and the `position_ids` buffers every BERT checkpoint may carry): a
/// checkpoint of another architecture must not load quietly.
pub(super) fn check_applied(
    path: &Path,
    applied: &ApplyResult,
    ignorable: impl Fn(&str) -> bool,
) -> Result<(), EmbedError> {
    if !applied.errors.is_empty() {
        return Err(weights_error(path, format!("{:?}", applied.errors)));
    }
    if !applied.missing.is_empty() {
        let missing: Vec<&str> = applied.missing.iter().map(|(p, _)| p.as_str()).collect();
        return Err(weights_error(
            path,
            format!("tensors missing: {}", missing.join(", ")),
        ));
    }
    let unexpected: Vec<&String> = applied
        .unused
        .iter()
        .filter(|p| !ignorable(p) && !p.ends_with("position_ids"))
        .collect();
    if !unexpected.is_empty() {
        return Err(weights_error(
            path,
            format!("tensors the network does not use (a different architecture?): {unexpected:?}"),
        ));
    }
    Ok(())
}

pub(super) fn weights_error(path: &Path, reason: String) -> EmbedError {
    EmbedError::Weights {
        path: path.to_owned(),
        reason,
    }
}
