//! Weights and inputs as bfloat16, sums in f32.
//!
//! bfloat16 is an f32 with its mantissa cut from 23 bits to 7: the same
//! range, so nothing is scaled or clipped, at about three significant
//! digits. Weights are rounded once at load, inputs as they arrive (both
//! to nearest, ties to even); `vdpbf16ps` multiplies pairs of them and sums
//! into f32 lanes, so only the products' inputs lose precision, never the
//! running sums.

use super::{Format, COLUMNS, ROWS};
use crate::simd;

/// Inputs per 32-bit lane of `vdpbf16ps`.
const STEP: usize = 2;

/// Which build of the tile runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// AVX-512 BF16 (`vdpbf16ps` on 16 lanes).
    Avx512Bf16,
    /// f32 arithmetic on the widened values (AVX2 and FMA where the CPU has them).
    Portable,
}

/// A `[inputs, outputs]` weight matrix in bfloat16 and its f32 biases,
/// packed for [`Self::product`].
#[derive(Debug, Clone)]
pub struct Bf16Weights {
    inputs: usize,
    outputs: usize,
    /// bfloat16 bit patterns; see `reduced::pack`.
    packed: Vec<u16>,
    bias: Vec<f32>,
    isa: Isa,
}

/// `value` rounded to the nearest bfloat16 (ties to even), as bits. A NaN
/// stays a NaN.
#[inline(always)]
fn to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// The f32 a bfloat16 stands for, exactly.
#[inline(always)]
fn from_bf16(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

impl Bf16Weights {
    /// Whether this CPU runs the fast build (AVX-512 BF16); without it the
    /// product is correct but slower than f32.
    pub fn accelerated() -> bool {
        super::has_avx512(super::Extension::Bf16)
    }

    /// Rounds and packs `weight`, `[inputs, outputs]` row-major, and
    /// `bias` (`outputs` values, or none).
    ///
    /// # Panics
    /// If the slices do not hold those shapes or `inputs` is 0 (programming
    /// errors).
    pub fn new(weight: &[f32], bias: Option<&[f32]>, inputs: usize, outputs: usize) -> Self {
        super::check_shape(weight, inputs, outputs);
        let rounded: Vec<u16> = weight.iter().map(|&w| to_bf16(w)).collect();
        Self {
            inputs,
            outputs,
            packed: super::pack(&rounded, inputs, outputs, STEP, STEP, 0),
            bias: super::bias_or_zero(bias, outputs),
            isa: if Self::accelerated() {
                Isa::Avx512Bf16
            } else {
                Isa::Portable
            },
        }
    }

    #[cfg(test)]
    fn portable(mut self) -> Self {
        self.isa = Isa::Portable;
        self
    }
}

impl Format for Bf16Weights {
    type Input = u16;
    type Scale = ();

    fn inputs(&self) -> usize {
        self.inputs
    }

    fn depth(&self) -> usize {
        self.inputs.next_multiple_of(STEP)
    }

    /// bfloat16 needs no scale: it has f32's range.
    fn scales_per_row(&self) -> usize {
        0
    }

    fn outputs(&self) -> usize {
        self.outputs
    }

    #[inline(always)]
    fn encode_row(&self, x: &[f32], out: &mut [u16], _: &mut [()]) {
        for (b, &v) in out.iter_mut().zip(x) {
            *b = to_bf16(v);
        }
        out[x.len()..].fill(0);
    }

    #[inline]
    fn tile(&self, rows: &[u16], _: &[()], group: usize, sums: &mut [[f32; COLUMNS]; ROWS]) {
        let depth = self.depth();
        let rows = &rows[..ROWS * depth];
        let weights = &self.packed[group * depth * COLUMNS..][..depth * COLUMNS];
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Avx512Bf16` is chosen only where the CPU has the
            // features (`new`), and the slices were cut to the lengths
            // `tile_bf16` reads just above.
            Isa::Avx512Bf16 => unsafe { tile_bf16(rows, depth, weights, sums) },
            _ => simd::widest(PortableTile {
                rows,
                depth,
                weights,
                sums,
            }),
        }
    }

    #[inline(always)]
    fn decode(&self, first: usize, sums: &[f32], out: &mut [f32]) {
        let bias = &self.bias[first..first + sums.len()];
        for ((out, &sum), &bias) in out.iter_mut().zip(sums).zip(bias) {
            *out = sum + bias;
        }
    }
}

/// The tile in f32 arithmetic on the widened values.
struct PortableTile<'a> {
    rows: &'a [u16],
    depth: usize,
    weights: &'a [u16],
    sums: &'a mut [[f32; COLUMNS]; ROWS],
}

impl simd::Kernel for PortableTile<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        *self.sums = [[0.0; COLUMNS]; ROWS];
        for (r, sums) in self.sums.iter_mut().enumerate() {
            let row = &self.rows[r * self.depth..][..self.depth];
            for (x, w) in row
                .chunks_exact(STEP)
                .zip(self.weights.chunks_exact(STEP * COLUMNS))
            {
                let (x0, x1) = (from_bf16(x[0]), from_bf16(x[1]));
                for (sum, w) in sums.iter_mut().zip(w.chunks_exact(STEP)) {
                    let pair = simd::multiply_add::<FMA>(x1, from_bf16(w[1]), x0 * from_bf16(w[0]));
                    *sum += pair;
                }
            }
        }
    }
}

/// The tile with AVX-512 BF16: per step of two inputs, four 64-byte loads
/// of weights, and for each row one broadcast of its two inputs and four
/// `vdpbf16ps`.
///
/// # Safety
/// Only on a CPU with AVX-512 F, BW and BF16; `rows` holds at least
/// `ROWS × depth` values and `weights` at least `depth × COLUMNS`, with
/// `depth` a multiple of [`STEP`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
unsafe fn tile_bf16(
    rows: &[u16],
    depth: usize,
    weights: &[u16],
    sums: &mut [[f32; COLUMNS]; ROWS],
) {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    let mut acc = [[_mm512_setzero_ps(); COLUMNS / LANES]; ROWS];
    let (x, w) = (rows.as_ptr(), weights.as_ptr());
    for step in 0..depth / STEP {
        // SAFETY (here and below): every offset is below the lengths the
        // caller guarantees: step · 128 + 127 < depth · COLUMNS, and
        // r · depth + step · 2 + 1 < ROWS · depth.
        let w = unsafe { w.add(step * STEP * COLUMNS) };
        let w: [__m512bh; 4] = [0, 1, 2, 3].map(|q| {
            let bits = unsafe { _mm512_loadu_si512(w.add(q * 32).cast()) };
            // SAFETY: the same 512 bits, read as 32 bfloat16s.
            unsafe { std::mem::transmute::<__m512i, __m512bh>(bits) }
        });
        for (r, acc) in acc.iter_mut().enumerate() {
            let pair = unsafe {
                x.add(r * depth + step * STEP)
                    .cast::<i32>()
                    .read_unaligned()
            };
            // SAFETY: as above.
            let x = unsafe { std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(pair)) };
            for (acc, &w) in acc.iter_mut().zip(&w) {
                *acc = _mm512_dpbf16_ps(*acc, x, w);
            }
        }
    }
    for (sums, acc) in sums.iter_mut().zip(&acc) {
        for (sums, &acc) in sums.chunks_exact_mut(LANES).zip(acc) {
            // SAFETY: a chunk holds exactly 16 `f32`s.
            unsafe { _mm512_storeu_ps(sums.as_mut_ptr(), acc) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{case, product_is_close};
    use super::*;

    #[test]
    fn rounding_is_to_nearest_even_and_keeps_nan_and_infinity() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        // 1 + 2⁻⁸ lies halfway between two bfloat16s: ties go to even.
        assert_eq!(to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(from_bf16(to_bf16(-2.5)), -2.5);
        assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
        assert_eq!(from_bf16(to_bf16(f32::INFINITY)), f32::INFINITY);
        assert_eq!(from_bf16(to_bf16(f32::MAX)), f32::INFINITY);
    }

    #[test]
    fn the_product_is_close_to_f32_for_every_row_count_and_ragged_edges() {
        product_is_close(
            37,
            0.01,
            |w, bias, inputs, outputs| Bf16Weights::new(w, Some(bias), inputs, outputs),
            |weights| weights.clone().portable(),
        );
    }

    /// The two builds sum in different orders, so they agree to rounding;
    /// run the AVX-512 one here wherever the CPU has it.
    #[test]
    fn both_builds_of_the_tile_agree() {
        let (w, bias, x, _) = case(96, COLUMNS, ROWS);
        let weights = Bf16Weights::new(&w, Some(&bias), 96, COLUMNS);
        let depth = weights.depth();
        let mut rows = vec![0u16; ROWS * depth];
        for (x, row) in x.chunks_exact(96).zip(rows.chunks_exact_mut(depth)) {
            weights.encode_row(x, row, &mut []);
        }
        let mut portable = [[0.0; COLUMNS]; ROWS];
        weights
            .clone()
            .portable()
            .tile(&rows, &[], 0, &mut portable);
        for (r, sums) in portable.iter().enumerate() {
            for (c, &sum) in sums.iter().enumerate() {
                let want: f64 = (0..depth)
                    .map(|k| {
                        let w = weights.packed[((k / STEP) * COLUMNS + c) * STEP + k % STEP];
                        f64::from(from_bf16(rows[r * depth + k])) * f64::from(from_bf16(w))
                    })
                    .sum();
                assert!((f64::from(sum) - want).abs() < 1e-4, "({r}, {c})");
            }
        }
        if Bf16Weights::accelerated() {
            let mut fast = [[0.0; COLUMNS]; ROWS];
            weights.tile(&rows, &[], 0, &mut fast);
            for (fast, portable) in fast.iter().flatten().zip(portable.iter().flatten()) {
                assert!((fast - portable).abs() < 1e-4, "{fast} vs {portable}");
            }
        } else {
            eprintln!("no AVX-512 BF16 here: the BF16 tile was not run");
        }
    }
}
