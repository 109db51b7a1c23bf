//! Products of many rows with a weight matrix held at reduced precision:
//! 8-bit integers ([`Int8Weights`]) or bfloat16 ([`Bf16Weights`]).
//!
//! The CPUs this project runs on have instructions that multiply narrow
//! numbers several at a time and sum them into 32-bit lanes: AVX-512 VNNI's
//! `vpdpbusd` (four 8-bit products per lane) and AVX-512 BF16's
//! `vdpbf16ps` (two bfloat16 products per lane). An f32 multiply-add does
//! one product per lane, so the same registers do two or four times the
//! work, and the weights take a half or a quarter of the memory.
//!
//! Both formats share this driver; each supplies how it encodes a row of
//! input, how one register tile is computed, and how a 32-bit sum becomes
//! an output. The weights are packed once, at load, in the order the tile
//! reads them: groups of [`COLUMNS`] output columns, and within a group,
//! for each step of `STEP` inputs, every column's `STEP` weights side by
//! side (one 64-byte register). A tile keeps [`ROWS`] × [`COLUMNS`] sums in
//! 24 of the 32 AVX-512 registers while it walks down the inputs.
//!
//! Each kernel also has a portable build (compiled for AVX2 where the CPU
//! has it, see `simd`), chosen at run time where the CPU lacks the
//! instructions: it gives the same results, far more slowly. The tests run
//! both builds on every machine that has the instructions, and the portable
//! one everywhere.

mod bf16;
mod int8;

pub use bf16::Bf16Weights;
pub use int8::Int8Weights;

use rayon::prelude::*;

use crate::simd;

/// Output columns per tile: four 16-lane registers.
pub(crate) const COLUMNS: usize = 64;
/// Rows per tile: 6 rows × 4 registers of sums, leaving 8 registers for
/// the weights and the broadcast input.
pub(crate) const ROWS: usize = 6;
/// The most rows one parallel task takes: its encoded input (up to 72 KiB
/// at 1,536 inputs) and one column group of weights (96 KiB) stay in a
/// core's L2 cache while every tile of the block reads them.
const MAX_TASK_ROWS: usize = 8 * ROWS;

/// A projection's weights at a reduced precision, whatever the format:
/// what the embedder holds and calls.
pub trait ReducedProduct: std::fmt::Debug + Send + Sync {
    fn inputs(&self) -> usize;
    fn outputs(&self) -> usize;
    /// `x · weight + bias` for `x` `[rows, inputs]` row-major, each row
    /// encoded in the format on the way in; the result is `[rows, outputs]`
    /// row-major.
    ///
    /// # Panics
    /// If `x` is not `rows × inputs` long (a programming error).
    fn product(&self, x: &[f32], rows: usize) -> Vec<f32>;
}

/// Every format is driven by the one shared [`product`], implemented here
/// format by format rather than by a blanket `impl<F: Format>`: a generic
/// impl is compiled in the crate that turns the weights into a `dyn
/// ReducedProduct`, the server, which the dev profile builds unoptimised,
/// and there int8 and bf16 embedded several times slower than fp32
/// (docs/benchmarks.md, "The reduced products compiled in the server").
macro_rules! driven_by_the_shared_product {
    ($($format:ty),+) => {$(
        impl ReducedProduct for $format {
            fn inputs(&self) -> usize {
                Format::inputs(self)
            }

            fn outputs(&self) -> usize {
                Format::outputs(self)
            }

            fn product(&self, x: &[f32], rows: usize) -> Vec<f32> {
                product(self, x, rows)
            }
        }
    )+};
}

driven_by_the_shared_product!(bf16::Bf16Weights, int8::Int8Weights);

/// One reduced-precision format, as the shared product drives it.
pub(crate) trait Format: Sync {
    /// An encoded input element.
    type Input: Copy + Default + Send + Sync;
    /// What a tile needs to know about a stretch of an encoded row (int8:
    /// its scale and zero point).
    type Scale: Copy + Default + Send + Sync;

    fn inputs(&self) -> usize;
    /// Inputs padded to a whole number of the kernel's steps.
    fn depth(&self) -> usize;
    /// [`Self::Scale`]s per encoded row.
    fn scales_per_row(&self) -> usize;
    fn outputs(&self) -> usize;
    /// Encodes one row of `inputs()` values into `depth()` elements and
    /// `scales_per_row()` scales. Implementations are `#[inline(always)]`,
    /// so that they are compiled for AVX2 inside the driver's
    /// `simd::widest` build.
    fn encode_row(&self, x: &[f32], out: &mut [Self::Input], scales: &mut [Self::Scale]);
    /// [`ROWS`] encoded rows (`depth()` apart, their scales
    /// `scales_per_row()` apart) times column group `group`.
    fn tile(
        &self,
        rows: &[Self::Input],
        scales: &[Self::Scale],
        group: usize,
        sums: &mut [[f32; COLUMNS]; ROWS],
    );
    /// A row's outputs from column `first` on, one per sum (`#[inline(always)]`
    /// as for `encode_row`).
    fn decode(&self, first: usize, sums: &[f32], out: &mut [f32]);
}

/// `x · weight + bias` for `x` `[rows, inputs]` row-major; the result is
/// `[rows, outputs]` row-major.
///
/// Many rows (an upload's batch) are split into blocks of rows, a task
/// each. At most a tile of rows per core (a search query's few tokens)
/// are split into ranges of column groups instead: every core then reads
/// only its share of the weights, which is what such a product waits on.
pub(crate) fn product<F: Format>(format: &F, x: &[f32], rows: usize) -> Vec<f32> {
    let (inputs, outputs) = (format.inputs(), format.outputs());
    assert_eq!(x.len(), rows * inputs, "x is [rows, inputs]");
    let mut out = vec![0.0f32; rows * outputs];
    if rows == 0 || outputs == 0 {
        return out;
    }
    let threads = rayon::current_num_threads().max(1);
    let groups = outputs.div_ceil(COLUMNS);
    if rows.div_ceil(ROWS) <= threads && groups > 1 {
        let per_task = groups.div_ceil(threads);
        let parts: Vec<(usize, Vec<f32>)> = (0..groups)
            .step_by(per_task)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|first| {
                let groups = first..(first + per_task).min(groups);
                let columns = groups.start * COLUMNS..(groups.end * COLUMNS).min(outputs);
                let mut part = vec![0.0f32; rows * columns.len()];
                simd::widest(Block {
                    format,
                    x,
                    groups,
                    out: &mut part,
                });
                (columns.start, part)
            })
            .collect();
        for (first, part) in parts {
            let width = part.len() / rows;
            for (out, part) in out.chunks_exact_mut(outputs).zip(part.chunks_exact(width)) {
                out[first..first + width].copy_from_slice(part);
            }
        }
        return out;
    }
    let task_rows = rows
        .div_ceil(threads)
        .next_multiple_of(ROWS)
        .min(MAX_TASK_ROWS);
    out.par_chunks_mut(task_rows * outputs)
        .zip(x.par_chunks(task_rows * inputs))
        .for_each(|(out, x)| {
            simd::widest(Block {
                format,
                x,
                groups: 0..groups,
                out,
            })
        });
    out
}

/// Some rows times some column groups: the rows encoded once, then every
/// group times every tile, into `out` (`[rows, the groups' columns]`,
/// row-major). A `simd::Kernel`, so that encoding and decoding run as
/// vector code (the baseline target rounds and converts one value at a
/// time).
struct Block<'a, F> {
    format: &'a F,
    x: &'a [f32],
    groups: std::ops::Range<usize>,
    out: &'a mut [f32],
}

impl<F: Format> simd::Kernel for Block<'_, F> {
    type Output = ();
    /// Encoding and decoding run on 16 lanes beside tiles that do.
    const AVX512: bool = true;

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        let Block {
            format,
            x,
            groups,
            out,
        } = self;
        let (inputs, depth, outputs) = (format.inputs(), format.depth(), format.outputs());
        let rows = x.len() / inputs;
        let columns = groups.start * COLUMNS..(groups.end * COLUMNS).min(outputs);
        let stride = columns.len();
        let tiles = rows.div_ceil(ROWS);
        let per_row = format.scales_per_row();
        // Rows past the last are left encoded as zeros; their sums are dropped.
        let mut encoded = vec![F::Input::default(); tiles * ROWS * depth];
        let mut scales = vec![F::Scale::default(); tiles * ROWS * per_row];
        for (r, (x, row)) in x
            .chunks_exact(inputs)
            .zip(encoded.chunks_exact_mut(depth))
            .enumerate()
        {
            format.encode_row(x, row, &mut scales[r * per_row..(r + 1) * per_row]);
        }
        let mut sums = [[0.0f32; COLUMNS]; ROWS];
        for group in groups {
            let first = group * COLUMNS;
            let width = COLUMNS.min(outputs - first);
            for (tile, rows_in) in encoded.chunks_exact(ROWS * depth).enumerate() {
                let tile_scales = &scales[tile * ROWS * per_row..(tile + 1) * ROWS * per_row];
                format.tile(rows_in, tile_scales, group, &mut sums);
                for (i, sums) in sums.iter().enumerate() {
                    let at = (tile * ROWS + i) * stride + first - columns.start;
                    let Some(out) = out.get_mut(at..at + width) else {
                        break;
                    };
                    format.decode(first, &sums[..width], out);
                }
            }
        }
    }
}

/// The column groups of a `[inputs, outputs]` row-major weight matrix
/// packed for the tiles: `[groups][depth / step][COLUMNS][step]`, with
/// `depth` the inputs rounded up to a multiple of `align` (itself a
/// multiple of `step`), padded with `zero` past the last input and the last
/// output.
pub(crate) fn pack<T: Copy>(
    weight: &[T],
    inputs: usize,
    outputs: usize,
    align: usize,
    step: usize,
    zero: T,
) -> Vec<T> {
    let depth = inputs.next_multiple_of(align);
    let groups = outputs.div_ceil(COLUMNS);
    let mut packed = vec![zero; groups * depth * COLUMNS];
    for (i, row) in weight.chunks_exact(outputs).enumerate() {
        let (s, lane) = (i / step, i % step);
        for (j, &w) in row.iter().enumerate() {
            let (g, c) = (j / COLUMNS, j % COLUMNS);
            packed[((g * depth / step + s) * COLUMNS + c) * step + lane] = w;
        }
    }
    packed
}

/// The instruction-set extension a format's fast tile needs beside
/// AVX-512 F and BW.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Extension {
    /// `vpdpbusd`.
    Vnni,
    /// `vdpbf16ps`.
    Bf16,
}

/// Whether this CPU has AVX-512 F, BW and `extension`.
pub(crate) fn has_avx512(extension: Extension) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        has!("avx512f")
            && has!("avx512bw")
            && match extension {
                Extension::Vnni => has!("avx512vnni"),
                Extension::Bf16 => has!("avx512bf16"),
            }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = extension;
        false
    }
}

/// Checks a weight matrix's shape (a programming error if wrong).
pub(crate) fn check_shape(weight: &[f32], inputs: usize, outputs: usize) {
    assert!(inputs > 0, "at least one input");
    assert_eq!(
        weight.len(),
        inputs * outputs,
        "weight is [inputs, outputs]"
    );
}

/// The biases, or zeros.
pub(crate) fn bias_or_zero(bias: Option<&[f32]>, outputs: usize) -> Vec<f32> {
    match bias {
        Some(bias) => {
            assert_eq!(bias.len(), outputs, "one bias per output");
            bias.to_vec()
        }
        None => vec![0.0; outputs],
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::ReducedProduct;

    /// A format's product, built by `new` from `[inputs, outputs]` weights
    /// and biases, against f64 within `tolerance`, and its portable build
    /// (`portable`) against it. Outputs are not a multiple of a column
    /// group; row counts fall below, at and above a tile and a task.
    pub fn product_is_close<F: ReducedProduct>(
        inputs: usize,
        tolerance: f64,
        new: impl Fn(&[f32], &[f32], usize, usize) -> F,
        portable: impl Fn(&F) -> F,
    ) {
        let outputs = super::COLUMNS * 2 + 7;
        for rows in [1, 5, 6, 7, 13, 50, 101] {
            let (w, bias, x, want) = case(inputs, outputs, rows);
            let weights = new(&w, &bias, inputs, outputs);
            let got = weights.product(&x, rows);
            let err = relative_error(&got, &want);
            assert!(err < tolerance, "rows {rows}: relative error {err}");
            let other = portable(&weights).product(&x, rows);
            let apart = relative_error(
                &other,
                &got.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(),
            );
            assert!(apart < 1e-5, "rows {rows}: the builds differ by {apart}");
        }
    }

    /// A `[inputs, outputs]` weight matrix, biases and `[rows, inputs]`
    /// inputs shaped like the model's (values of either sign, a few large
    /// ones), and their product in f64.
    pub fn case(
        inputs: usize,
        outputs: usize,
        rows: usize,
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f64>) {
        let w: Vec<f32> = (0..inputs * outputs)
            .map(|i| ((i as f32) * 0.013).sin() * 0.1)
            .collect();
        let bias: Vec<f32> = (0..outputs).map(|j| (j as f32 * 0.3).cos()).collect();
        let x: Vec<f32> = (0..rows * inputs)
            .map(|i| {
                let v = ((i as f32) * 0.29).cos();
                if i % 97 == 0 {
                    v * 8.0
                } else {
                    v
                }
            })
            .collect();
        let mut want = vec![0.0f64; rows * outputs];
        for r in 0..rows {
            for j in 0..outputs {
                want[r * outputs + j] = f64::from(bias[j])
                    + (0..inputs)
                        .map(|i| f64::from(x[r * inputs + i]) * f64::from(w[i * outputs + j]))
                        .sum::<f64>();
            }
        }
        (w, bias, x, want)
    }

    /// The largest difference from `want`, relative to the largest `want`.
    pub fn relative_error(got: &[f32], want: &[f64]) -> f64 {
        assert_eq!(got.len(), want.len());
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-9);
        got.iter()
            .zip(want)
            .map(|(&g, &w)| (f64::from(g) - w).abs())
            .fold(0.0, f64::max)
            / scale
    }
}
