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
//! `benches/packed.rs` measures it against `gemm`: faster from 4 to 32
//! rows, and slower for a single row, where `gemm` has a dedicated
//! matrix–vector path (a query is never one token: it has at least
//! `[CLS]` and `[SEP]`).

use rayon::prelude::*;

use super::simd;

/// Columns per panel: two 8-lane AVX registers.
const PANEL: usize = 16;
/// Rows per register tile: 12 accumulator registers (6 rows of two), which
/// leaves 4 of the 16 AVX registers for the weights and a broadcast.
const TILE: usize = 6;
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
        }
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
        let tiles = rows.div_ceil(TILE);
        let padded_rows = tiles * TILE;
        // Each tile's rows interleaved, `[tiles][k][TILE]`: one k-step reads
        // the tile's inputs from one contiguous, bounds-proven chunk.
        let mut input = vec![0.0f32; padded_rows * k];
        for (r, row) in x.chunks_exact(k.max(1)).enumerate() {
            let (t, lane) = (r / TILE, r % TILE);
            for (i, &value) in row.iter().enumerate() {
                input[(t * k + i) * TILE + lane] = value;
            }
        }

        // Panel-major while computing: each task owns a contiguous range.
        let panel_out = padded_rows * PANEL;
        let mut by_panel = vec![0.0f32; self.n.div_ceil(PANEL) * panel_out];
        if k > 0 {
            by_panel
                .par_chunks_mut(panel_out * PANELS_PER_TASK)
                .zip(self.panels.par_chunks(k * PANEL * PANELS_PER_TASK))
                .for_each(|(out, panels)| {
                    simd::widest(Panels {
                        panels,
                        input: &input,
                        k,
                        panel_out,
                        last_rows: rows - (tiles - 1) * TILE,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_plain_product_for_every_row_count_and_a_ragged_edge() {
        let (k, n) = (37, PANEL * 5 + 7);
        let w: Vec<f32> = (0..k * n).map(|i| ((i as f32) * 0.013).sin()).collect();
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.5).collect();
        let packed = PackedWeights::new(&w, Some(&bias), k, n);
        for rows in [1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 17] {
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
