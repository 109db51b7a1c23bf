//! Self-attention over a padded batch, one text per task.
//!
//! burn's CPU attention op is general (any mask, bias, causal flag), and
//! pays for it: it copies each of Q, K and V into head-major order, checks
//! the mask for every score, and takes the exponential one element at a
//! time. BERT's only mask is padding at the end of each row, so this kernel
//! takes each text's real length instead, and
//!
//! - reads every head's queries, keys and values in place from one fused
//!   `[tokens, 3·width]` projection (strided views into `gemm`), and
//!   writes each head's output in place, in the layout the next projection
//!   reads;
//! - computes scores only among real tokens (`len × len`, not
//!   `tokens × tokens`): padded keys get no weight, which is what the mask
//!   asked for, and padded query rows are left at zero, since nothing
//!   downstream reads them (every later step is per token, and pooling
//!   averages real tokens only);
//! - runs the softmax's exponential vectorised ([`super::approx::exp`]).

use rayon::prelude::*;

use super::matmul::{self, View};
use super::{approx, simd};

/// The shape of a batch: `texts` padded to `tokens`, each token `width`
/// wide in `heads` heads.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub texts: usize,
    pub tokens: usize,
    pub width: usize,
    pub heads: usize,
}

/// Scaled dot-product attention, `softmax(Q·Kᵀ / √d)·V` per text and head,
/// over the first `lengths[text]` tokens of each text.
///
/// `qkv` is `[texts, tokens, 3·width]`, row-major: each token's query, key
/// and value side by side, as one product with the three weight matrices
/// side by side yields them. The result is `[texts, tokens, width]`.
///
/// # Panics
/// If `qkv` does not hold `shape`, or `width` is not a multiple of
/// `heads`: programming errors, not input errors.
pub fn attention(qkv: &[f32], lengths: &[usize], shape: Shape) -> Vec<f32> {
    let Shape {
        texts,
        tokens,
        width,
        heads,
    } = shape;
    let text_len = tokens * width;
    let row = 3 * width;
    assert_eq!(qkv.len(), texts * tokens * row, "qkv holds the shape");
    assert_eq!(lengths.len(), texts, "one length per text");
    assert!(
        heads > 0 && width.is_multiple_of(heads),
        "width splits into heads"
    );
    let head_width = width / heads;
    let scale = 1.0 / (head_width as f32).sqrt();

    let mut out = vec![0.0f32; texts * text_len];
    if text_len == 0 {
        return out;
    }
    out.par_chunks_mut(text_len)
        .zip(lengths.par_iter())
        .enumerate()
        .for_each_init(Vec::new, |scores, (text, (out, &len))| {
            let len = len.min(tokens);
            if len == 0 {
                return;
            }
            let text_qkv = &qkv[text * tokens * row..(text + 1) * tokens * row];
            scores.resize(len * len, 0.0);
            for head in 0..heads {
                // One head's columns of the queries (part 0), keys (1) or values (2).
                let view = |part: usize| {
                    let first = part * width + head * head_width;
                    View::rows(&text_qkv[first..], len, head_width, row)
                };
                let queries = view(0);
                let keys = view(1).transposed();
                matmul::product(scores, len, queries, keys, scale);
                simd::widest(Softmax {
                    scores: scores.as_mut_slice(),
                    row: len,
                });
                let weights = View::rows(scores, len, len, len);
                let values = view(2);
                matmul::product(&mut out[head * head_width..], width, weights, values, 1.0);
            }
        });
    out
}

/// Softmax over each `row`-long row of `scores`, in place.
struct Softmax<'a> {
    scores: &'a mut [f32],
    row: usize,
}

impl simd::Kernel for Softmax<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        for row in self.scores.chunks_exact_mut(self.row) {
            softmax(row);
        }
    }
}

/// Lanes of the partial max and sum: eight independent accumulators let
/// the compiler keep them in one SIMD register instead of a serial chain.
const LANES: usize = 8;

/// In-place softmax of one row of scores.
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let mut peaks = [f32::NEG_INFINITY; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (peak, &x) in peaks.iter_mut().zip(chunk) {
            *peak = if x > *peak { x } else { *peak };
        }
    }
    let peak = chunks
        .remainder()
        .iter()
        .chain(&peaks)
        .fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });

    for x in row.iter_mut() {
        *x = approx::exp(*x - peak);
    }

    let mut sums = [0.0f32; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (sum, &x) in sums.iter_mut().zip(chunk) {
            *sum += x;
        }
    }
    // The peak's own term is 1, so the sum is at least 1: no division by 0.
    let sum: f32 = chunks.remainder().iter().sum::<f32>() + sums.iter().sum::<f32>();
    let inverse = 1.0 / sum;
    for x in row.iter_mut() {
        *x *= inverse;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attention written out the long way, in f64, with padding as a mask.
    fn reference(q: &[f32], k: &[f32], v: &[f32], lengths: &[usize], s: Shape) -> Vec<f64> {
        let d = s.width / s.heads;
        let mut out = vec![0.0; q.len()];
        for (t, &len) in lengths.iter().enumerate() {
            for h in 0..s.heads {
                let at = |m: &[f32], i: usize, c: usize| {
                    f64::from(m[(t * s.tokens + i) * s.width + h * d + c])
                };
                for i in 0..len {
                    let scores: Vec<f64> = (0..len)
                        .map(|j| {
                            (0..d).map(|c| at(q, i, c) * at(k, j, c)).sum::<f64>()
                                / (d as f64).sqrt()
                        })
                        .collect();
                    let peak = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let weights: Vec<f64> = scores.iter().map(|x| (x - peak).exp()).collect();
                    let total: f64 = weights.iter().sum();
                    for c in 0..d {
                        out[(t * s.tokens + i) * s.width + h * d + c] =
                            (0..len).map(|j| weights[j] / total * at(v, j, c)).sum();
                    }
                }
            }
        }
        out
    }

    #[test]
    fn matches_masked_attention_and_zeroes_padding_rows() {
        let shape = Shape {
            texts: 4,
            tokens: 11,
            width: 12,
            heads: 3,
        };
        let n = shape.texts * shape.tokens * shape.width;
        let fill = |seed: f32| {
            (0..n)
                .map(|i| ((i as f32 + seed) * 0.731).sin() * 3.0)
                .collect::<Vec<f32>>()
        };
        let (q, k, v) = (fill(0.0), fill(17.0), fill(42.0));
        let qkv: Vec<f32> = q
            .chunks(shape.width)
            .zip(k.chunks(shape.width))
            .zip(v.chunks(shape.width))
            .flat_map(|((q, k), v)| [q, k, v].concat())
            .collect();
        // A full row, a short one, one with a single real token, and none.
        let lengths = [11, 5, 1, 0];

        let got = attention(&qkv, &lengths, shape);
        let want = reference(&q, &k, &v, &lengths, shape);
        for (t, &len) in lengths.iter().enumerate() {
            for i in 0..shape.tokens {
                for c in 0..shape.width {
                    let at = (t * shape.tokens + i) * shape.width + c;
                    if i < len {
                        assert!(
                            (f64::from(got[at]) - want[at]).abs() < 1e-5,
                            "text {t} token {i} col {c}"
                        );
                    } else {
                        assert_eq!(got[at], 0.0, "padding row {i} of text {t}");
                    }
                }
            }
        }
    }

    #[test]
    fn softmax_sums_to_one_and_survives_huge_scores() {
        let mut row: Vec<f32> = (0..37).map(|i| i as f32 * 40.0 - 700.0).collect();
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row.iter().all(|x| x.is_finite() && *x >= 0.0));
        assert!(
            (row[36] - 1.0).abs() < 1e-6,
            "the largest score takes all the weight"
        );
    }
}
