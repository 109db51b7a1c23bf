//! Weights as 8-bit integers, inputs quantized block by block as they
//! arrive.
//!
//! - **Weights**: symmetric, per output column: column `j` is stored as
//!   `round(w / s_j)` in `-127..=127` with `s_j = max |w_·j| / 127`, once, at
//!   load (static quantization of the weights).
//! - **Inputs**: asymmetric, per [`BLOCK`] consecutive inputs of a row, at
//!   every product (dynamic quantization): block `b` of row `r` is stored as
//!   `round(x / s_rb) + z_rb` in `0..=255`, its range taken from its own
//!   smallest and largest values (zero included). Transformer activations
//!   have a few channels far larger than the rest; a scale per whole row
//!   would spend its 256 levels on them and leave the others a handful, while
//!   a scale per block confines that loss to the outlier's own block.
//!   Asymmetric, because GELU's outputs are almost all positive, and a
//!   symmetric scale would waste half the levels on them.
//!
//! `vpdpbusd` multiplies unsigned by signed bytes, which is exactly this
//! pair, into 32-bit sums; at the end of each block the tile folds them into
//! f32: `Σ_b s_rb · (Σ_{k∈b} q_rk · w_kj − z_rb · Σ_{k∈b} w_kj)`, with the
//! blocks' column sums `Σ_{k∈b} w_kj` computed at load. The output is that
//! times `s_j`, plus the bias. No 32-bit sum overflows: a block's is at most
//! 255 · 127 · 64.

use super::{Format, COLUMNS, ROWS};
use crate::simd;

/// Inputs per 32-bit lane of `vpdpbusd`.
const STEP: usize = 4;
/// Inputs per quantization block of a row.
const BLOCK: usize = 64;

/// Which build of the tile runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// AVX-512 VNNI (`vpdpbusd` on 16 lanes).
    Vnni,
    /// Plain arithmetic (AVX2 where the CPU has it).
    Portable,
}

/// A `[inputs, outputs]` weight matrix and its biases, quantized to 8 bits
/// and packed for [`Self::product`].
#[derive(Debug, Clone)]
pub struct Int8Weights {
    inputs: usize,
    outputs: usize,
    /// `[column groups][depth / STEP][COLUMNS][STEP]`; see `reduced::pack`.
    packed: Vec<i8>,
    /// `Σ_{k∈b} w_kj` per column group, block and column, in quantized
    /// units: `[column groups][blocks][COLUMNS]`.
    block_sums: Vec<f32>,
    /// `s_j` per column.
    scale: Vec<f32>,
    bias: Vec<f32>,
    isa: Isa,
}

/// A quantized block's scale, and its zero point times that scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct BlockScale {
    scale: f32,
    scaled_zero: f32,
}

impl Int8Weights {
    /// Whether this CPU runs the fast build (AVX-512 VNNI); without it the
    /// product is correct but slower than f32.
    pub fn accelerated() -> bool {
        super::has_avx512(super::Extension::Vnni)
    }

    /// Quantizes and packs `weight`, `[inputs, outputs]` row-major, and
    /// `bias` (`outputs` values, or none).
    ///
    /// # Panics
    /// If the slices do not hold those shapes or `inputs` is 0 (programming
    /// errors).
    pub fn new(weight: &[f32], bias: Option<&[f32]>, inputs: usize, outputs: usize) -> Self {
        super::check_shape(weight, inputs, outputs);
        let scale: Vec<f32> = (0..outputs)
            .map(|j| {
                let max = (0..inputs)
                    .map(|i| weight[i * outputs + j].abs())
                    .fold(0.0f32, f32::max);
                if max > 0.0 {
                    max / 127.0
                } else {
                    1.0
                }
            })
            .collect();
        let quantized: Vec<i8> = weight
            .iter()
            .enumerate()
            .map(|(at, &w)| (w / scale[at % outputs]).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let blocks = inputs.div_ceil(BLOCK);
        let groups = outputs.div_ceil(COLUMNS);
        let mut block_sums = vec![0.0f32; groups * blocks * COLUMNS];
        for (i, row) in quantized.chunks_exact(outputs).enumerate() {
            for (j, &q) in row.iter().enumerate() {
                let (g, c) = (j / COLUMNS, j % COLUMNS);
                block_sums[(g * blocks + i / BLOCK) * COLUMNS + c] += f32::from(q);
            }
        }
        Self {
            inputs,
            outputs,
            packed: super::pack(&quantized, inputs, outputs, BLOCK, STEP, 0),
            block_sums,
            scale,
            bias: super::bias_or_zero(bias, outputs),
            isa: if Self::accelerated() {
                Isa::Vnni
            } else {
                Isa::Portable
            },
        }
    }

    fn blocks(&self) -> usize {
        self.inputs.div_ceil(BLOCK)
    }

    #[cfg(test)]
    fn portable(mut self) -> Self {
        self.isa = Isa::Portable;
        self
    }
}

impl Format for Int8Weights {
    type Input = u8;
    type Scale = BlockScale;

    fn inputs(&self) -> usize {
        self.inputs
    }

    /// Whole blocks: the padding meets zero weights.
    fn depth(&self) -> usize {
        self.blocks() * BLOCK
    }

    fn scales_per_row(&self) -> usize {
        self.blocks()
    }

    fn outputs(&self) -> usize {
        self.outputs
    }

    /// Written lane by lane with plain comparisons and an unchecked
    /// conversion: `f32::min`, `f32::round` and saturating casts each
    /// compile to scalar code (or a call) per value, and this loop runs over
    /// every input of every projection.
    #[inline(always)]
    fn encode_row(&self, x: &[f32], out: &mut [u8], scales: &mut [BlockScale]) {
        const LANES: usize = 16;
        for ((x, out), scale) in x.chunks(BLOCK).zip(out.chunks_mut(BLOCK)).zip(scales) {
            // The block's range, zero included.
            let (mut lo, mut hi) = ([0.0f32; LANES], [0.0f32; LANES]);
            let mut lanes = x.chunks_exact(LANES);
            for values in &mut lanes {
                for ((lo, hi), &v) in lo.iter_mut().zip(&mut hi).zip(values) {
                    *lo = if v < *lo { v } else { *lo };
                    *hi = if v > *hi { v } else { *hi };
                }
            }
            for &v in lanes.remainder() {
                lo[0] = if v < lo[0] { v } else { lo[0] };
                hi[0] = if v > hi[0] { v } else { hi[0] };
            }
            let lo = lo.iter().fold(0.0f32, |m, &v| if v < m { v } else { m });
            let hi = hi.iter().fold(0.0f32, |m, &v| if v > m { v } else { m });

            let step = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
            let inverse = 1.0 / step;
            let zero = (-lo * inverse).round().clamp(0.0, 255.0);
            // Rounds half up by adding a half and truncating, which is
            // exact for these non-negative levels.
            let offset = zero + 0.5;
            for (q, &v) in out.iter_mut().zip(x) {
                let level = v * inverse + offset;
                // Comparisons that send NaN to 0, then a plain conversion:
                // Rust's saturating `as` is a scalar sequence per value.
                let level = if level > 0.0 { level } else { 0.0 };
                let level = if level < 255.0 { level } else { 255.0 };
                // SAFETY: `level` is finite and within 0..=255 (just clamped).
                *q = unsafe { level.to_int_unchecked::<i32>() } as u8;
            }
            // A short last block's padding meets zero weights; any value will do.
            out[x.len()..].fill(0);
            *scale = BlockScale {
                scale: step,
                scaled_zero: step * zero,
            };
        }
    }

    #[inline]
    fn tile(
        &self,
        rows: &[u8],
        scales: &[BlockScale],
        group: usize,
        sums: &mut [[f32; COLUMNS]; ROWS],
    ) {
        let (depth, blocks) = (self.depth(), self.blocks());
        let rows = &rows[..ROWS * depth];
        let scales = &scales[..ROWS * blocks];
        let weights = &self.packed[group * depth * COLUMNS..][..depth * COLUMNS];
        let block_sums = &self.block_sums[group * blocks * COLUMNS..][..blocks * COLUMNS];
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Vnni` is chosen only where the CPU has the
            // features (`new`), and the slices were cut to the lengths
            // `tile_vnni` reads just above.
            Isa::Vnni => unsafe { tile_vnni(rows, scales, weights, block_sums, blocks, sums) },
            _ => simd::widest(PortableTile {
                rows,
                scales,
                weights,
                block_sums,
                blocks,
                sums,
            }),
        }
    }

    #[inline(always)]
    fn decode(&self, first: usize, sums: &[f32], out: &mut [f32]) {
        let columns = first..first + sums.len();
        for (((out, &sum), &scale), &bias) in out
            .iter_mut()
            .zip(sums)
            .zip(&self.scale[columns.clone()])
            .zip(&self.bias[columns])
        {
            *out = sum * scale + bias;
        }
    }
}

/// The tile in plain arithmetic: exact integer sums per block, folded into
/// f32 as the VNNI build does.
struct PortableTile<'a> {
    rows: &'a [u8],
    scales: &'a [BlockScale],
    weights: &'a [i8],
    block_sums: &'a [f32],
    blocks: usize,
    sums: &'a mut [[f32; COLUMNS]; ROWS],
}

impl simd::Kernel for PortableTile<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        let depth = self.blocks * BLOCK;
        for (r, sums) in self.sums.iter_mut().enumerate() {
            *sums = [0.0; COLUMNS];
            let row = &self.rows[r * depth..][..depth];
            for (b, (x, w)) in row
                .chunks_exact(BLOCK)
                .zip(self.weights.chunks_exact(BLOCK * COLUMNS))
                .enumerate()
            {
                let mut block = [0i32; COLUMNS];
                for (x, w) in x.chunks_exact(STEP).zip(w.chunks_exact(STEP * COLUMNS)) {
                    for (sum, w) in block.iter_mut().zip(w.chunks_exact(STEP)) {
                        *sum += x
                            .iter()
                            .zip(w)
                            .map(|(&x, &w)| i32::from(x) * i32::from(w))
                            .sum::<i32>();
                    }
                }
                let scale = self.scales[r * self.blocks + b];
                let column_sums = &self.block_sums[b * COLUMNS..][..COLUMNS];
                for ((sum, &block), &column_sum) in sums.iter_mut().zip(&block).zip(column_sums) {
                    *sum += block as f32 * scale.scale - column_sum * scale.scaled_zero;
                }
            }
        }
    }
}

/// The tile with AVX-512 VNNI: per step of four inputs, four 64-byte loads
/// of weights, and for each row one broadcast of its four input bytes and
/// four `vpdpbusd`; at the end of each block, the 32-bit sums scaled into
/// the f32 sums (which live in `sums`, in L1: the registers hold the
/// 32-bit ones).
///
/// # Safety
/// Only on a CPU with AVX-512 F, BW and VNNI; `rows` holds at least
/// `ROWS × blocks × BLOCK` bytes, `scales` `ROWS × blocks` scales,
/// `weights` `blocks × BLOCK × COLUMNS` bytes and `block_sums`
/// `blocks × COLUMNS` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile_vnni(
    rows: &[u8],
    scales: &[BlockScale],
    weights: &[i8],
    block_sums: &[f32],
    blocks: usize,
    sums: &mut [[f32; COLUMNS]; ROWS],
) {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    const PARTS: usize = COLUMNS / LANES;
    let depth = blocks * BLOCK;
    let (x, w) = (rows.as_ptr(), weights.as_ptr());
    let mut total = [[_mm512_setzero_ps(); PARTS]; ROWS];
    for b in 0..blocks {
        let mut acc = [[_mm512_setzero_si512(); PARTS]; ROWS];
        for step in b * BLOCK / STEP..(b + 1) * BLOCK / STEP {
            // SAFETY (here and below): every offset is below the lengths
            // the caller guarantees: step · 256 + 255 < depth · COLUMNS, and
            // r · depth + step · 4 + 3 < ROWS · depth.
            let w = unsafe { w.add(step * STEP * COLUMNS) };
            let w = [0, 1, 2, 3].map(|q| unsafe { _mm512_loadu_si512(w.add(q * 64).cast()) });
            for (r, acc) in acc.iter_mut().enumerate() {
                let four = unsafe {
                    x.add(r * depth + step * STEP)
                        .cast::<i32>()
                        .read_unaligned()
                };
                let x = _mm512_set1_epi32(four);
                for (acc, &w) in acc.iter_mut().zip(&w) {
                    *acc = _mm512_dpbusd_epi32(*acc, x, w);
                }
            }
        }
        // SAFETY: b · COLUMNS + q · 16 + 15 < blocks · COLUMNS.
        let column_sums = [0, 1, 2, 3]
            .map(|q| unsafe { _mm512_loadu_ps(block_sums.as_ptr().add(b * COLUMNS + q * LANES)) });
        for ((total, acc), r) in total.iter_mut().zip(&acc).zip(0..) {
            let scale = scales[r * blocks + b];
            let (s, sz) = (
                _mm512_set1_ps(scale.scale),
                _mm512_set1_ps(scale.scaled_zero),
            );
            for ((total, &acc), &column_sum) in total.iter_mut().zip(acc).zip(&column_sums) {
                let scaled = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), s, *total);
                *total = _mm512_fnmadd_ps(column_sum, sz, scaled);
            }
        }
    }
    for (sums, total) in sums.iter_mut().zip(&total) {
        for (sums, &total) in sums.chunks_exact_mut(LANES).zip(total) {
            // SAFETY: a chunk holds exactly 16 `f32`s.
            unsafe { _mm512_storeu_ps(sums.as_mut_ptr(), total) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{case, product_is_close};
    use super::*;
    use crate::ReducedProduct;

    #[test]
    fn the_product_is_close_to_f32_for_every_row_count_and_ragged_edges() {
        // Inputs not a multiple of a block (nor of the step).
        product_is_close(
            97,
            0.02,
            |w, bias, inputs, outputs| Int8Weights::new(w, Some(bias), inputs, outputs),
            |weights| weights.clone().portable(),
        );
    }

    /// The portable tile against the packing's definition, and the VNNI
    /// tile against the portable one wherever the CPU has VNNI.
    #[test]
    fn both_builds_of_the_tile_agree() {
        let inputs = 2 * BLOCK + 32;
        let (w, bias, x, _) = case(inputs, COLUMNS, ROWS);
        let weights = Int8Weights::new(&w, Some(&bias), inputs, COLUMNS);
        let (depth, blocks) = (weights.depth(), weights.blocks());
        let mut rows = vec![0u8; ROWS * depth];
        let mut scales = vec![BlockScale::default(); ROWS * blocks];
        for ((x, row), scales) in x
            .chunks_exact(inputs)
            .zip(rows.chunks_exact_mut(depth))
            .zip(scales.chunks_exact_mut(blocks))
        {
            weights.encode_row(x, row, scales);
        }
        let mut portable = [[0.0; COLUMNS]; ROWS];
        weights
            .clone()
            .portable()
            .tile(&rows, &scales, 0, &mut portable);
        for (r, sums) in portable.iter().enumerate() {
            for (c, &sum) in sums.iter().enumerate() {
                let want: f64 = (0..blocks)
                    .map(|b| {
                        let scale = scales[r * blocks + b];
                        (b * BLOCK..(b + 1) * BLOCK)
                            .map(|k| {
                                let w =
                                    weights.packed[((k / STEP) * COLUMNS + c) * STEP + k % STEP];
                                let x = f64::from(rows[r * depth + k]) * f64::from(scale.scale)
                                    - f64::from(scale.scaled_zero);
                                x * f64::from(w)
                            })
                            .sum::<f64>()
                    })
                    .sum();
                assert!(
                    (f64::from(sum) - want).abs() < 1e-3 * want.abs().max(1.0),
                    "({r}, {c}): {sum} vs {want}"
                );
            }
        }
        if Int8Weights::accelerated() {
            let mut vnni = [[0.0; COLUMNS]; ROWS];
            weights.tile(&rows, &scales, 0, &mut vnni);
            for (fast, portable) in vnni.iter().flatten().zip(portable.iter().flatten()) {
                assert!(
                    (fast - portable).abs() <= 1e-4 * portable.abs().max(1.0),
                    "{fast} vs {portable}"
                );
            }
        } else {
            eprintln!("no AVX-512 VNNI here: the VNNI tile was not run");
        }
    }

    #[test]
    fn a_block_of_one_sign_or_of_zeros_keeps_its_range() {
        let weights = Int8Weights::new(&[1.0; 8], None, 8, 1);
        let mut out = [0u8; BLOCK];
        let mut scale = [BlockScale::default()];
        weights.encode_row(
            &[0.5, 1.0, 2.0, 4.0, 0.0, 1.5, 3.0, 2.5],
            &mut out,
            &mut scale,
        );
        assert_eq!(scale[0].scaled_zero, 0.0);
        assert_eq!(out[3], 255);
        weights.encode_row(&[0.0; 8], &mut out, &mut scale);
        assert_eq!(
            scale[0],
            BlockScale {
                scale: 1.0,
                scaled_zero: 0.0
            }
        );
        assert_eq!(out, [0; BLOCK]);
        assert_eq!(weights.product(&[0.0; 8], 1), vec![0.0]);
    }

    /// One large input among small ones coarsens only its own block's
    /// scale: the other blocks keep the fine steps their own range gives
    /// (a scale per row would give every block the outlier's step).
    #[test]
    fn an_outlier_input_coarsens_only_its_own_block() {
        let inputs = 4 * BLOCK;
        let mut x: Vec<f32> = (0..inputs).map(|i| ((i as f32) * 0.29).cos()).collect();
        x[5] = 60.0;
        let weights = Int8Weights::new(&vec![0.5; inputs], None, inputs, 1);
        let mut out = vec![0u8; inputs];
        let mut scales = vec![BlockScale::default(); 4];
        weights.encode_row(&x, &mut out, &mut scales);
        // Block 0 spans about -1..60; the others -1..1.
        assert!(scales[0].scale > 60.0 / 255.0, "{:?}", scales[0]);
        for scale in &scales[1..] {
            assert!(scale.scale < 2.01 / 255.0, "{scale:?}");
        }
        let want: f64 = x.iter().map(|&v| f64::from(v) * 0.5).sum();
        let got = f64::from(weights.product(&x, 1)[0]);
        assert!((got - want).abs() < 0.01 * want.abs(), "{got} vs {want}");
    }
}
