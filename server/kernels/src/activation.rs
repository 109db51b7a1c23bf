//! GELU over a whole tensor, on every core.
//!
//! burn's CPU backend computes GELU with libm's scalar `erff`, one element
//! at a time on one thread: the largest element-wise step of the network
//! (`[tokens, 1536]` per layer), and a large share of a batch in a profile
//! (docs/benchmarks.md, "Embedding speed and the CPU kernels").
//! Here the same function runs as a vectorisable polynomial
//! ([`super::approx::gelu`]) over blocks of the buffer in parallel.

use rayon::prelude::*;

use super::{approx, simd};

/// Elements per parallel task: large enough that scheduling is noise. A
/// batch's activations (millions of values) spread over every core; a
/// single query's (about 15,000) stay in one task, where waking another
/// core would cost more than it saves.
const BLOCK: usize = 16 * 1024;

/// Applies GELU to every element, in place.
pub fn gelu_in_place(values: &mut [f32]) {
    values
        .par_chunks_mut(BLOCK)
        .for_each(|block| simd::widest(Gelu(block)));
}

/// GELU over one block, in place.
struct Gelu<'a>(&'a mut [f32]);

impl simd::Kernel for Gelu<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        for x in self.0 {
            *x = approx::gelu(*x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every build this CPU runs gives the same GELU, so the dispatch can
    /// pick any of them (and a machine without AVX-512 loses nothing).
    #[test]
    fn every_build_computes_the_same_gelu() {
        let input: Vec<f32> = (0..4099).map(|i| (i as f32 - 2048.0) / 300.0).collect();
        let exact: Vec<f64> = input
            .iter()
            .map(|&x| {
                let x = f64::from(x);
                0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
            })
            .collect();
        for &isa in simd::Isa::supported() {
            let mut values = input.clone();
            simd::run_on(isa, Gelu(&mut values));
            for (got, want) in values.iter().zip(&exact) {
                assert!(
                    (f64::from(*got) - want).abs() < 1e-5,
                    "{isa:?}: {got} vs {want}"
                );
            }
        }
    }
}
