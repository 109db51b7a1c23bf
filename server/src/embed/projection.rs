//! The network's projections, its matrix products with its weights, and
//! the ways they run.
//!
//! A batch of a few tokens, a search query, is bound by reading the weights
//! (42 MB in f32, more than the cache holds) rather than by arithmetic, and
//! burn's CPU backend runs such small products on one core, after copying
//! the weights into its own order on every call. So on the CPU:
//!
//! - up to [`PackedWeights::MAX_ROWS`] tokens ([`Plan::Packed`]) run
//!   through `docshelf-kernels`' product on weights packed once at load,
//!   which reads each weight from memory once, on every core;
//! - up to 256 tokens ([`Plan::Columns`]) split each weight matrix into
//!   column blocks, one burn product per core side by side; the outputs are
//!   joined along the feature axis, so the result is the same;
//! - anything larger, and everything on a GPU, is one burn product
//!   ([`Plan::Whole`]).
//!
//! At a reduced [`Precision`] (CPU only), every batch runs through
//! `docshelf-kernels`' bf16 or int8 product instead, whatever its size.

use std::sync::Arc;

use burn::nn::Linear;
use burn::tensor::Tensor;
use docshelf_kernels::PackedWeights;
use rayon::prelude::*;

use super::precision::{Precision, Reduced};
use super::{kernels, EmbedError};

/// A projection's parameters: `weight` is `[inputs, outputs]`.
#[derive(Debug, Clone)]
pub struct Weights {
    weight: Tensor<2>,
    bias: Option<Tensor<1>>,
    /// The same parameters packed for few-token products on the CPU.
    packed: Option<Arc<PackedWeights>>,
    /// The same parameters at a reduced precision, for every product on
    /// the CPU.
    reduced: Option<Arc<Reduced>>,
}

impl Weights {
    pub fn of(linear: &Linear) -> Self {
        Self {
            weight: linear.weight.val(),
            bias: linear.bias.as_ref().map(|b| b.val()),
            packed: None,
            reduced: None,
        }
    }

    /// Projections of the same input as one, their outputs side by side.
    pub fn side_by_side(linears: &[&Linear]) -> Self {
        let parts: Vec<Self> = linears.iter().map(|l| Self::of(l)).collect();
        let bias = parts
            .iter()
            .map(|p| p.bias.clone())
            .collect::<Option<Vec<_>>>()
            .map(|biases| Tensor::cat(biases, 0));
        let weight = Tensor::cat(parts.into_iter().map(|p| p.weight).collect(), 1);
        Self {
            weight,
            bias,
            packed: None,
            reduced: None,
        }
    }

    /// Adds the copy the CPU computes with at `precision`: at f32, packed
    /// for few-token products (burn runs the rest); otherwise reduced, for
    /// every product.
    pub fn for_cpu(mut self, precision: Precision) -> Result<Self, EmbedError> {
        let [inputs, outputs] = self.weight.dims();
        let read = |data: burn::tensor::TensorData| {
            data.try_into_vec::<f32>()
                .map_err(|e| EmbedError::Backend(format!("cannot read the weights: {e:?}")))
        };
        let weight = read(self.weight.to_data())?;
        let bias = match &self.bias {
            Some(bias) => Some(read(bias.to_data())?),
            None => None,
        };
        self.reduced = precision.reduce(&weight, bias.as_deref(), inputs, outputs);
        if self.reduced.is_none() {
            self.packed = Some(Arc::new(PackedWeights::new(
                &weight,
                bias.as_deref(),
                inputs,
                outputs,
            )));
        }
        Ok(self)
    }
}

/// Batches of at most this many tokens (padding included) split each
/// projection across the CPU cores: below it, reading the weights
/// dominates; above it, burn's own matrix kernels use every core.
const COLUMNS_MAX_TOKENS: usize = 256;

/// How one batch runs its projections (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// One burn product per projection: what large batches and GPUs want.
    Whole,
    /// This many column blocks per projection, burn products in parallel.
    Columns(usize),
    /// `docshelf-kernels`' product on the packed weights (CPU, up to
    /// [`PackedWeights::MAX_ROWS`] tokens).
    Packed,
}

impl Plan {
    /// The plan for a batch of `tokens` tokens, padding included.
    pub fn for_batch(on_cpu: bool, tokens: usize) -> Self {
        match tokens {
            _ if !on_cpu => Plan::Whole,
            t if t <= PackedWeights::MAX_ROWS => Plan::Packed,
            t if t <= COLUMNS_MAX_TOKENS => Plan::Columns(rayon::current_num_threads()),
            _ => Plan::Whole,
        }
    }

    /// `x · weight + bias` for `x` `[batch, tokens, inputs]`.
    pub fn project(self, weights: &Weights, x: Tensor<3>) -> Tensor<3> {
        // Without packed weights (not built for this backend), the nearest
        // burn plan for the same few tokens.
        let columns = Plan::Columns(rayon::current_num_threads());
        match (self, &weights.packed, &weights.reduced) {
            (_, _, Some(reduced)) => kernels::cpu_product(
                x,
                [reduced.inputs(), reduced.outputs()],
                |x, rows| reduced.product(x, rows),
                |x| self.project_burn(weights, x),
            ),
            (Plan::Packed, Some(packed), None) => kernels::cpu_product(
                x,
                [packed.inputs(), packed.outputs()],
                |x, rows| packed.product(x, rows),
                |x| columns.project_burn(weights, x),
            ),
            (Plan::Packed, None, None) => columns.project_burn(weights, x),
            _ => self.project_burn(weights, x),
        }
    }

    fn project_burn(self, weights: &Weights, x: Tensor<3>) -> Tensor<3> {
        let Weights { weight, bias, .. } = weights;
        let [inputs, outputs] = weight.dims();
        // On a many-core machine, blocks narrower than this cost more in
        // scheduling than their share of the weights.
        const MIN_BLOCK_COLUMNS: usize = 96;
        let parts = match self {
            Plan::Columns(parts) => parts.min(outputs / MIN_BLOCK_COLUMNS),
            Plan::Whole | Plan::Packed => 1,
        };
        if parts <= 1 {
            return burn::tensor::module::linear(x, weight.clone(), bias.clone());
        }
        let [batch, tokens, _] = x.dims();
        let rows = x.reshape([batch * tokens, inputs]);
        let blocks: Vec<Tensor<2>> = (0..parts)
            .into_par_iter()
            .map(|block| {
                let (start, end) = (block * outputs / parts, (block + 1) * outputs / parts);
                let product = rows
                    .clone()
                    .matmul(weight.clone().narrow(1, start, end - start));
                match bias {
                    Some(b) => product + b.clone().narrow(0, start, end - start).unsqueeze(),
                    None => product,
                }
            })
            .collect();
        Tensor::cat(blocks, 1).reshape([batch, tokens, outputs])
    }
}
