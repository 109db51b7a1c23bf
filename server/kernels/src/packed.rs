//! Products of a few rows with a weight matrix packed once, ahead of time:
//! a search query's projections.
//!
//! A query is a handful of tokens, so each projection multiplies a
//! `[rows, k]` matrix by a `[k, n]` weight matrix that is used for only
//! those few rows: little arithmetic per weight, and 42 MB of weights in
//! all, more than the last-level cache of this project's test machine. A
//! general matrix product is built for many rows: on that machine the
//! `gemm` crate re-packed the weights on every call and ran such products
//! at a fraction of a plain streaming read's speed on both cores.
//!
//! [`PackedWeights`] stores the weights once in the order this kernel
//! reads them: panels of [`PANEL`] columns, each panel's `k` rows
//! contiguous, so a product streams memory front to back. The kernel keeps
//! a tile of [`TILE`] rows × [`PANEL`] columns of the result in registers
//! while it walks down `k`, and runs every tile of rows over one panel
//! before the next: a panel comes from memory once and from cache for the
//! further tiles. The panels are spread over the cores.
//!
//! Why 6 × 16 and not 12 × 8, which held a 12-token query in one tile:
//! each step down `k` broadcasts one input per row, and with 12 rows a
//! step spent as many broadcasts as multiply-adds. Those, not the weights'
//! reads, bounded the kernel: with the weights in cache it ran no faster.
//! Two 8-lane weight vectors per broadcast halve them
//! (docs/benchmarks.md, "The few-token product: 6 × 16 tiles").
//!
//! Where the CPU has AVX-512, a tile is up to 12 rows of one 16-lane
//! register each ([`wide`]): a 7–12 token query then reads each panel for
//! one tile, not two, and the tiles are cut to equal heights no taller
//! than the query.
//!
//! `benches/packed.rs` measures it against `gemm` per shape. For a single
//! row `gemm` has a dedicated matrix–vector path, but a query is never one
//! token: it has at least `[CLS]` and `[SEP]`.

use rayon::prelude::*;

use super::simd;

/// Columns per panel: two 8-lane AVX registers.
const PANEL: usize = 16;
/// Rows per register tile: 12 accumulator registers (6 rows of two), which
/// leaves 4 of the 16 AVX registers for the weights and a broadcast.
const TILE: usize = 6;
/// Rows per register tile of the AVX-512 build ([`wide`]): one 16-lane
/// register per row, 12 of its 32.
const WIDE_TILE: usize = 12;
/// Panels per parallel task: enough work to outweigh scheduling.
const PANELS_PER_TASK: usize = 4;

/// A `[k, n]` weight matrix and its `n` biases, packed for [`Self::product`].
#[derive(Debug, Clone)]
pub struct PackedWeights {
    k: usize,
    n: usize,
    /// `[panels][k][PANEL]`; the last panel padded with zero columns.
    panels: Vec<f32>,
    bias: Vec<f32>,
    /// Whether products run the AVX-512 tile ([`wide`]): where the CPU
    /// has AVX-512 and `DOCSHELF_KERNEL_ISA` does not cap it.
    wide: bool,
}

impl PackedWeights {
    /// The most rows this product is meant for: the bench measured it
    /// faster than a general product up to here, by less as rows grow.
    pub const MAX_ROWS: usize = 32;

    /// Packs `weight`, `[k, n]` row-major, and `bias` (`n` values, or none).
    ///
    /// # Panics
    /// If the slices do not hold those shapes (a programming error).
    pub fn new(weight: &[f32], bias: Option<&[f32]>, k: usize, n: usize) -> Self {
        assert_eq!(weight.len(), k * n, "weight is [k, n]");
        let panels = n.div_ceil(PANEL);
        let mut packed = vec![0.0f32; panels * k * PANEL];
        // With no inputs there is nothing to pack (and no panel to cut).
        for (p, panel) in packed.chunks_exact_mut((k * PANEL).max(1)).enumerate() {
            let first = p * PANEL;
            let width = PANEL.min(n - first);
            for (row, out) in weight.chunks_exact(n).zip(panel.chunks_exact_mut(PANEL)) {
                out[..width].copy_from_slice(&row[first..first + width]);
            }
        }
        let bias = match bias {
            Some(bias) => {
                assert_eq!(bias.len(), n, "one bias per column");
                bias.to_vec()
            }
            None => vec![0.0; n],
        };
        Self {
            k,
            n,
            panels: packed,
            bias,
            wide: cfg!(target_arch = "x86_64") && simd::Isa::current() == simd::Isa::Avx512,
        }
    }

    /// The same weights, run by the AVX2 or portable tile.
    #[cfg(test)]
    fn narrow(mut self) -> Self {
        self.wide = false;
        self
    }

    /// Input width.
    pub fn inputs(&self) -> usize {
        self.k
    }

    /// Output width.
    pub fn outputs(&self) -> usize {
        self.n
    }

    /// `x · weight + bias` for `x` `[rows, k]` row-major; the result is
    /// `[rows, n]` row-major.
    ///
    /// # Panics
    /// If `x` is not `rows × k` long (a programming error).
    pub fn product(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let k = self.k;
        assert_eq!(x.len(), rows * k, "x is [rows, k]");
        if rows == 0 || self.n == 0 {
            return Vec::new();
        }
        // Zero rows up to a whole number of tiles: every tile reads its
        // inputs from one layout, and the last computes only its real rows
        // rounded up to an even count (see `Panels::run`).
        let height = if self.wide {
            // Tiles of equal even heights up to 12: a short query's tile
            // (and the inputs it reads for every panel) is no taller than
            // its rows, and 16 rows are two tiles of 8, not 12 and 4.
            let tiles = rows.div_ceil(WIDE_TILE);
            rows.div_ceil(tiles).next_multiple_of(2).min(WIDE_TILE)
        } else {
            TILE
        };
        let tiles = rows.div_ceil(height);
        let padded_rows = tiles * height;
        // Each tile's rows interleaved, `[tiles][k][height]`: one k-step
        // reads the tile's inputs from one contiguous, bounds-proven chunk.
        let mut input = vec![0.0f32; padded_rows * k];
        for (r, row) in x.chunks_exact(k.max(1)).enumerate() {
            let (t, lane) = (r / height, r % height);
            for (i, &value) in row.iter().enumerate() {
                input[(t * k + i) * height + lane] = value;
            }
        }
        let last_rows = rows - (tiles - 1) * height;

        // Panel-major while computing: each task owns a contiguous range.
        let panel_out = padded_rows * PANEL;
        let mut by_panel = vec![0.0f32; self.n.div_ceil(PANEL) * panel_out];
        if k > 0 {
            by_panel
                .par_chunks_mut(panel_out * PANELS_PER_TASK)
                .zip(self.panels.par_chunks(k * PANEL * PANELS_PER_TASK))
                .for_each(|(out, panels)| {
                    if self.wide {
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: `wide` is set only where the CPU has
                        // AVX-512 (`new`).
                        unsafe {
                            wide::panels(panels, &input, k, height, last_rows, out)
                        };
                        return;
                    }
                    simd::widest(Panels {
                        panels,
                        input: &input,
                        k,
                        panel_out,
                        last_rows,
                        out,
                    })
                });
        }

        // Back to row-major, a panel's columns at a time, with the biases.
        let mut result = vec![0.0f32; rows * self.n];
        for (p, panel) in by_panel.chunks_exact(panel_out).enumerate() {
            let first = p * PANEL;
            let width = PANEL.min(self.n - first);
            let bias = &self.bias[first..first + width];
            for (out, computed) in result
                .chunks_exact_mut(self.n)
                .zip(panel.chunks_exact(PANEL))
            {
                for ((o, &c), &b) in out[first..first + width].iter_mut().zip(computed).zip(bias) {
                    *o = c + b;
                }
            }
        }
        result
    }
}

/// Some panels times every tile of rows of `input`, each panel's result
/// (`panel_out` = padded rows × [`PANEL`], row-major) after the last in
/// `out`.
struct Panels<'a> {
    panels: &'a [f32],
    input: &'a [f32],
    k: usize,
    panel_out: usize,
    /// Real rows in the last tile (1 to [`TILE`]): only those are computed.
    last_rows: usize,
    out: &'a mut [f32],
}

impl simd::Kernel for Panels<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        let k = self.k;
        let tiles = self.input.len() / (k * TILE);
        for (out, panel) in self
            .out
            .chunks_exact_mut(self.panel_out)
            .zip(self.panels.chunks_exact(k * PANEL))
        {
            for (t, (tile_out, x)) in out
                .chunks_exact_mut(TILE * PANEL)
                .zip(self.input.chunks_exact(k * TILE))
                .enumerate()
            {
                // The last tile computes its real rows rounded up to an even
                // count, not all six: a 10-token query does 10 rows' work,
                // not 12. The rows left out stay zero and are never read.
                match if t + 1 == tiles { self.last_rows } else { TILE } {
                    1 | 2 => tile::<FMA, 2>(panel, x, tile_out),
                    3 | 4 => tile::<FMA, 4>(panel, x, tile_out),
                    _ => tile::<FMA, TILE>(panel, x, tile_out),
                }
            }
        }
    }
}

/// One tile: the first `R` (at most [`TILE`]) of `TILE` rows of input
/// (interleaved, `[k][TILE]`) times one panel (`[k][PANEL]`), written
/// row-major into the first `R` rows of `out` (`TILE × PANEL`).
#[inline(always)]
fn tile<const FMA: bool, const R: usize>(panel: &[f32], x: &[f32], out: &mut [f32]) {
    let mut acc = [[0.0f32; PANEL]; R];
    for (w, xs) in panel.chunks_exact(PANEL).zip(x.chunks_exact(TILE)) {
        for (acc, &xv) in acc.iter_mut().zip(&xs[..R]) {
            for (a, &wv) in acc.iter_mut().zip(w) {
                *a = simd::multiply_add::<FMA>(xv, wv, *a);
            }
        }
    }
    for (out, acc) in out.chunks_exact_mut(PANEL).zip(&acc) {
        out.copy_from_slice(acc);
    }
}

/// The product on AVX-512, in tiles of 12 rows × one 16-column panel.
///
/// With 32 vector registers a tile holds a 12-token query's whole result
/// for a panel in 12 of them, one 16-lane register per row, so a panel is
/// read once, and its arithmetic overlaps the reading of the next. AVX2's
/// 16 registers hold 6 rows of two, and a 7–12 token query's second tile
/// computes after the panel has arrived, not while it arrives
/// (docs/benchmarks.md, "The few-token product on AVX-512"). Zen 4 runs a
/// 16-lane multiply-add as two 8-lane halves: what pays is the registers,
/// not the width, and each row's input costs nothing extra: the
/// multiply-add broadcasts it straight from memory. The panels' layout is
/// AVX2's: a panel row of 16 floats is one register.
#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps,
        _mm512_storeu_ps,
    };

    use super::{PANEL, WIDE_TILE as TILE};

    /// [`super::Panels`] on AVX-512: every tile of `input` (`[tiles][k]
    /// [height]`, `height` even and at most [`TILE`]) times each panel of
    /// `panels`, each panel's `height × tiles` rows of results after the
    /// last in `out`; the last tile computes `last_rows` rounded up to an
    /// even count.
    ///
    /// # Safety
    /// Only on a CPU with AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn panels(
        panels: &[f32],
        input: &[f32],
        k: usize,
        height: usize,
        last_rows: usize,
        out: &mut [f32],
    ) {
        let tiles = input.len() / (k * height);
        for (out, panel) in out
            .chunks_exact_mut(tiles * height * PANEL)
            .zip(panels.chunks_exact(k * PANEL))
        {
            for (t, (tile_out, x)) in out
                .chunks_exact_mut(height * PANEL)
                .zip(input.chunks_exact(k * height))
                .enumerate()
            {
                match if t + 1 == tiles { last_rows } else { height } {
                    1 | 2 => tile::<2>(panel, x, height, tile_out),
                    3 | 4 => tile::<4>(panel, x, height, tile_out),
                    5 | 6 => tile::<6>(panel, x, height, tile_out),
                    7 | 8 => tile::<8>(panel, x, height, tile_out),
                    9 | 10 => tile::<10>(panel, x, height, tile_out),
                    _ => tile::<TILE>(panel, x, height, tile_out),
                }
            }
        }
    }

    /// The first `R` rows of a tile: `x` is `[k][height]`, `panel`
    /// `[k][PANEL]`, and `out` takes `R` rows of `PANEL`.
    #[target_feature(enable = "avx512f")]
    fn tile<const R: usize>(panel: &[f32], x: &[f32], height: usize, out: &mut [f32]) {
        let steps = panel.len() / PANEL;
        assert!(R <= height && x.len() >= steps * height && out.len() >= R * PANEL);
        let mut acc: [__m512; R] = [_mm512_setzero_ps(); R];
        for step in 0..steps {
            // SAFETY: `step < steps`, so the panel row `step * PANEL ..
            // step * PANEL + 16` and the inputs `step * height .. step *
            // height + R` are in bounds (asserted above).
            unsafe {
                let w = _mm512_loadu_ps(panel.as_ptr().add(step * PANEL));
                let xs = x.as_ptr().add(step * height);
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm512_fmadd_ps(_mm512_set1_ps(*xs.add(r)), w, *acc);
                }
            }
        }
        for (row, acc) in out.chunks_exact_mut(PANEL).zip(&acc) {
            // SAFETY: `row` holds `PANEL` (16) floats.
            unsafe { _mm512_storeu_ps(row.as_mut_ptr(), *acc) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_plain_product_for_every_row_count_and_a_ragged_edge() {
        let (k, n) = (37, PANEL * 5 + 7);
        let w: Vec<f32> = (0..k * n).map(|i| ((i as f32) * 0.013).sin()).collect();
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.5).collect();
        let wide = PackedWeights::new(&w, Some(&bias), k, n);
        let narrow = wide.clone().narrow();
        for (packed, rows) in [&wide, &narrow].into_iter().flat_map(|p| {
            [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 17, 24, 25, 32].map(|rows| (p, rows))
        }) {
            let x: Vec<f32> = (0..rows * k).map(|i| ((i as f32) * 0.29).cos()).collect();
            let got = packed.product(&x, rows);
            assert_eq!(got.len(), rows * n);
            for r in 0..rows {
                for j in 0..n {
                    let want = f64::from(bias[j])
                        + (0..k)
                            .map(|i| f64::from(x[r * k + i]) * f64::from(w[i * n + j]))
                            .sum::<f64>();
                    let got = f64::from(got[r * n + j]);
                    assert!(
                        (got - want).abs() < 1e-4,
                        "rows {rows}: ({r}, {j}) = {got}, want {want}"
                    );
                }
            }
        }
    }

    /// The dispatcher picks one build per CPU; run both tile builds here,
    /// so the one this machine does not pick is tested too.
    #[test]
    fn both_builds_of_the_tile_match_a_plain_product() {
        let k = 19;
        let panel: Vec<f32> = (0..k * PANEL).map(|i| ((i as f32) * 0.07).sin()).collect();
        let x: Vec<f32> = (0..k * TILE).map(|i| ((i as f32) * 0.13).cos()).collect();
        let want: Vec<f64> = (0..TILE * PANEL)
            .map(|at| {
                let (r, c) = (at / PANEL, at % PANEL);
                (0..k)
                    .map(|i| f64::from(x[i * TILE + r]) * f64::from(panel[i * PANEL + c]))
                    .sum()
            })
            .collect();
        let mut plain = vec![0.0; TILE * PANEL];
        let mut fused = vec![0.0; TILE * PANEL];
        let mut four = vec![0.0; TILE * PANEL];
        tile::<false, TILE>(&panel, &x, &mut plain);
        tile::<true, TILE>(&panel, &x, &mut fused);
        tile::<true, 4>(&panel, &x, &mut four);
        for (at, want) in want.iter().enumerate() {
            assert!((f64::from(plain[at]) - want).abs() < 1e-5, "plain {at}");
            assert!((f64::from(fused[at]) - want).abs() < 1e-5, "fused {at}");
            let got = if at < 4 * PANEL {
                f64::from(four[at]) - want
            } else {
                f64::from(four[at])
            };
            assert!(got.abs() < 1e-5, "four rows {at}");
        }
    }

    #[test]
    fn no_bias_means_zero_bias() {
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let packed = PackedWeights::new(&w, None, 2, 3);
        assert_eq!(packed.product(&[1.0, 1.0], 1), vec![5.0, 7.0, 9.0]);
        assert_eq!(packed.product(&[], 0), Vec::<f32>::new());
        // No inputs: the product is the bias alone.
        let empty = PackedWeights::new(&[], Some(&[1.5, -2.0]), 0, 2);
        assert_eq!(empty.product(&[], 3), vec![1.5, -2.0, 1.5, -2.0, 1.5, -2.0]);
    }
}
