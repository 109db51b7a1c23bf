//! The numeric precision of the network's projections on the CPU
//! (`--embed-precision`).
//!
//! The projections are nearly all of an embedding's arithmetic. At f32 they
//! run through burn's matrix products (AVX2); at bf16 or int8 through
//! `docshelf-kernels`' AVX-512 BF16 and VNNI products, which do two or four
//! products per 32-bit lane where f32 does one. Everything else (embeddings,
//! layer norms, attention, GELU, pooling) stays in f32. What each costs in
//! quality and gains in speed is measured per eval set in
//! docs/benchmarks.md ("Reduced precision"); the default stays f32 unless a
//! precision loses at most 0.003 nDCG@10 on every set.
//!
//! On a GPU the network always runs in f32: these kernels are the CPU's.

use std::fmt;
use std::sync::Arc;

use docshelf_kernels::{Bf16Weights, Int8Weights, ReducedProduct};

/// What the projections compute in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Precision {
    /// f32 throughout: the reference model's own numbers.
    #[default]
    Fp32,
    /// bfloat16 weights and inputs, f32 sums (AVX-512 BF16 where the CPU has it).
    Bf16,
    /// 8-bit integer weights (per output column, fixed at load) and inputs
    /// (per token, at each product), 32-bit sums (AVX-512 VNNI where the CPU
    /// has it).
    Int8,
}

impl Precision {
    /// A comma-separated list of precisions (`fp32,int8`), as the benches
    /// take them.
    pub fn parse_list(list: &str) -> Result<Vec<Self>, String> {
        list.split(',')
            .map(|p| clap::ValueEnum::from_str(p.trim(), true))
            .collect()
    }

    /// Whether this CPU has the instructions that make the precision pay;
    /// without them it runs correctly but more slowly than f32.
    pub fn accelerated(self) -> bool {
        match self {
            Precision::Fp32 => true,
            Precision::Bf16 => Bf16Weights::accelerated(),
            Precision::Int8 => Int8Weights::accelerated(),
        }
    }

    /// A projection's `[inputs, outputs]` weights and biases at this
    /// precision, or `None` at f32 (burn's own products run those).
    pub(super) fn reduce(
        self,
        weight: &[f32],
        bias: Option<&[f32]>,
        inputs: usize,
        outputs: usize,
    ) -> Option<Arc<Reduced>> {
        match self {
            Precision::Fp32 => None,
            Precision::Bf16 => Some(Arc::new(Bf16Weights::new(weight, bias, inputs, outputs))),
            Precision::Int8 => Some(Arc::new(Int8Weights::new(weight, bias, inputs, outputs))),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
        })
    }
}

/// A projection's parameters at a reduced precision, whichever format.
pub type Reduced = dyn ReducedProduct;
