//! CPU kernels for the steps of all-MiniLM-L6-v2 that burn's CPU backend
//! (`flex`) runs far below the machine's speed: GELU, masked
//! self-attention, and the projections of a few tokens (a search query).
//! They work on plain `f32` slices; `docshelf-server`'s `embed::kernels`
//! hands them the buffers of burn's CPU tensors.
//!
//! In burn's CPU backend, GELU is libm's scalar `erff` on one thread and
//! the attention op's softmax a scalar loop that checks the mask per score
//! and calls `expf` per element: each a large share of a batch's time
//! beside the matrix products, which already run near the cores' peak (the
//! profile is in docs/benchmarks.md). A query's few tokens do little
//! arithmetic per weight, and a general matrix product re-packs the
//! weights on every call (see [`PackedWeights`]).
//!
//! - [`approx`]: vectorisable `exp`, `erf` and GELU.
//! - [`gelu_in_place`]: GELU over a buffer on every core.
//! - [`attention()`]: masked attention per text, reading heads in place.
//! - `matmul`: a bounds-checked face on the `gemm` crate's strided product.
//! - [`PackedWeights`]: a few rows times a weight matrix packed ahead of
//!   time (a search query's projections), streaming the weights.
//! - [`Int8Weights`], [`Bf16Weights`]: many rows times a weight matrix at
//!   reduced precision, with AVX-512 VNNI and BF16 where the CPU has them.
//! - [`QuantizedRows`]: the rows nearest a query by cosine, scanning 8-bit
//!   vectors in memory (the dense search leg).
//! - [`Bm25Index`]: BM25 over postings held in memory (the keyword search
//!   leg), built from tokens by [`Bm25Builder`].
//! - [`Shingles`]: a text's 5-word shingles, and [`first_copies`]: which
//!   texts of many repeat an earlier one (the same passage in several
//!   places, on every search).
//! - `split`: a scan of many rows divided across the cores.
//! - `simd`: runs those loops compiled for AVX2 and FMA where the CPU has
//!   them.
//!
//! The crate is separate from the server so that it can be built optimised
//! in the dev profile (build profiles are set per crate).

mod activation;
pub mod approx;
mod attention;
mod best;
mod bm25;
mod matmul;
mod packed;
mod reduced;
mod scan;
mod shingles;
mod simd;
mod split;

pub use activation::gelu_in_place;
pub use attention::{attention, Shape};
pub use bm25::{Analyze, Bm25Builder, Bm25Index, Statistics};
pub use packed::PackedWeights;
pub use reduced::{Bf16Weights, Int8Weights, ReducedProduct};
pub use scan::QuantizedRows;
pub use shingles::{first_copies, Shingles, SHINGLE_WORDS};
pub use split::SPLIT_ROWS;

/// A test a search applies to each row in its ranges (a file prefix, say):
/// shared by the threads a large scan is split across.
pub type Keep<'a> = dyn Fn(usize) -> bool + Sync + 'a;
