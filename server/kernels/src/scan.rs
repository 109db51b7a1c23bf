//! The rows nearest a query by cosine, by scanning every candidate row of
//! a matrix held in memory as 8-bit integers.
//!
//! Why a scan and not the store's vector index: LanceDB's IVF-PQ query has
//! a fixed cost of milliseconds even when it refines almost nothing (100k
//! chunks, one library of 10k searched; docs/benchmarks.md, "Where the
//! dense leg's time goes"), while an exact scan of 10k 384-d vectors is a
//! fraction of a millisecond of arithmetic. A scan also has no recall to
//! tune: it misses only what the quantisation blurs.
//!
//! Why 8 bits: a 384-d vector is 1,536 bytes as `f32` and 384 as `i8`, so
//! a million chunks fit in 384 MB and a scan reads a quarter of the
//! memory. Each row is scaled by its own largest component (symmetric,
//! codes in −127..=127), as is the query, and the integer dot product is
//! rescaled by both: the cosine is off by a few thousandths at most, which
//! reorders only near-ties (the store's recall bench measures it against
//! an exact `f32` search).
//!
//! Products of two codes fit `i16` and a sum of 384 of them fits `i32`,
//! which is the shape AVX2's multiply-add of 16-bit lanes wants; the loop
//! is compiled for AVX2 where the CPU has it (see `simd`).

use std::ops::Range;

use super::best::Best;
use super::simd::{self, Kernel};
use super::split;
use super::Keep;

/// The largest code: −127..=127 keeps quantisation symmetric.
const LEVELS: f32 = 127.0;
/// Lanes summed side by side before the final reduction.
const LANES: usize = 16;

/// Rows of `dim` components, each stored as `i8` codes and a scale.
#[derive(Debug, Clone, Default)]
pub struct QuantizedRows {
    dim: usize,
    codes: Vec<i8>,
    /// Per row: what a code times the row's scale gives, divided by the
    /// row's norm, so a dot product of codes becomes a cosine.
    scales: Vec<f32>,
}

impl QuantizedRows {
    /// No rows yet, with room for `rows` of `dim` components.
    pub fn with_capacity(dim: usize, rows: usize) -> Self {
        Self {
            dim,
            codes: Vec::with_capacity(dim * rows),
            scales: Vec::with_capacity(rows),
        }
    }

    /// Appends `row` (a zero row never matches anything).
    ///
    /// # Panics
    /// If `row` does not have `dim` components (a programming error).
    pub fn push(&mut self, row: &[f32]) {
        assert_eq!(row.len(), self.dim, "a row has dim components");
        let scale = quantize_into(row, &mut self.codes);
        self.scales.push(scale);
    }

    /// The same rows in another order: row `i` of the result is row
    /// `order[i]` of `self`.
    ///
    /// # Panics
    /// If `order` names a row that is not held (a programming error).
    pub fn reordered(&self, order: &[usize]) -> Self {
        let mut out = Self::with_capacity(self.dim, order.len());
        for &row in order {
            out.codes
                .extend_from_slice(&self.codes[row * self.dim..(row + 1) * self.dim]);
            out.scales.push(self.scales[row]);
        }
        out
    }

    /// How many rows are held.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Bytes held, codes and scales.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.scales.len() * std::mem::size_of::<f32>()
    }

    /// The `k` rows within `ranges` (and, when given, accepted by `keep`)
    /// most similar to `query` by cosine, best first, as (row, cosine).
    /// Equal scores go to the lower row, so the answer is deterministic.
    ///
    /// # Panics
    /// If `query` does not have `dim` components or a range reaches past
    /// the last row (programming errors).
    pub fn nearest(
        &self,
        query: &[f32],
        ranges: &[Range<usize>],
        keep: Option<&Keep<'_>>,
        k: usize,
    ) -> Vec<(usize, f32)> {
        assert_eq!(query.len(), self.dim, "the query has dim components");
        let mut codes = Vec::with_capacity(self.dim);
        let query_scale = quantize_into(query, &mut codes);
        if k == 0 || self.dim == 0 {
            return Vec::new();
        }
        let scan = |ranges: &[Range<usize>]| {
            let mut best = Best::new(k);
            simd::widest(Scan {
                rows: self,
                query: &codes,
                query_scale,
                ranges,
                keep,
                out: &mut best,
            });
            best
        };
        split::across_cores(ranges, scan, Best::absorb).into_best_first()
    }
}

/// Appends `row`'s codes to `codes` and returns the scale that turns a dot
/// product of its codes into a cosine term (0 for a zero row).
fn quantize_into(row: &[f32], codes: &mut Vec<i8>) -> f32 {
    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
    let largest = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if norm == 0.0 || largest == 0.0 || !norm.is_finite() {
        codes.extend(std::iter::repeat_n(0, row.len()));
        return 0.0;
    }
    let step = largest / LEVELS;
    codes.extend(
        row.iter()
            .map(|x| (x / step).round().clamp(-LEVELS, LEVELS) as i8),
    );
    step / norm
}

/// The scan of [`QuantizedRows::nearest`], compiled per instruction set.
struct Scan<'a> {
    rows: &'a QuantizedRows,
    query: &'a [i8],
    query_scale: f32,
    ranges: &'a [Range<usize>],
    keep: Option<&'a Keep<'a>>,
    out: &'a mut Best,
}

impl Kernel for Scan<'_> {
    type Output = ();

    #[inline(always)]
    fn run<const FMA: bool>(self) {
        let dim = self.rows.dim;
        for range in self.ranges {
            let codes = &self.rows.codes[range.start * dim..range.end * dim];
            for (offset, row) in codes.chunks_exact(dim).enumerate() {
                let index = range.start + offset;
                if self.keep.is_some_and(|keep| !keep(index)) {
                    continue;
                }
                let scale = self.rows.scales[index] * self.query_scale;
                self.out.offer(index, dot(row, self.query) as f32 * scale);
            }
        }
    }
}

/// The dot product of two code rows, in [`LANES`] running sums of
/// 16-bit products.
#[inline(always)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut sums = [0i32; LANES];
    let (a_body, b_body) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_tail, b_tail) = (a_body.remainder(), b_body.remainder());
    for (x, y) in a_body.zip(b_body) {
        for lane in 0..LANES {
            sums[lane] += i32::from(i16::from(x[lane]) * i16::from(y[lane]));
        }
    }
    let tail: i32 = a_tail
        .iter()
        .zip(b_tail)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    sums.iter().sum::<i32>() + tail
}

#[cfg(test)]
// A slice of one range is how the tests search every row.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn rows(vectors: &[Vec<f32>]) -> QuantizedRows {
        let mut rows = QuantizedRows::with_capacity(vectors[0].len(), vectors.len());
        for v in vectors {
            rows.push(v);
        }
        rows
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    /// A deterministic pseudo-random vector (a linear congruential walk).
    fn vector(seed: u64, dim: usize) -> Vec<f32> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..dim)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect()
    }

    #[test]
    fn cosines_are_close_to_exact_ones() {
        let vectors: Vec<Vec<f32>> = (0..200).map(|i| vector(i, 384)).collect();
        let rows = rows(&vectors);
        let query = vector(999, 384);
        for (row, score) in rows.nearest(&query, &[0..200], None, 200) {
            let exact = cosine(&vectors[row], &query);
            assert!(
                (score - exact).abs() < 0.01,
                "row {row}: {score} vs {exact}"
            );
        }
    }

    #[test]
    fn finds_the_exact_nearest_rows_best_first() {
        let vectors: Vec<Vec<f32>> = (0..500).map(|i| vector(i, 384)).collect();
        let rows = rows(&vectors);
        // A query right next to row 123 finds it first, scaled or not.
        let query: Vec<f32> = vectors[123].iter().map(|x| x * 3.0 + 0.001).collect();
        let found = rows.nearest(&query, &[0..500], None, 5);
        assert_eq!(found.len(), 5);
        assert_eq!(found[0].0, 123);
        assert!(found[0].1 > 0.99);
        assert!(found.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn only_rows_in_range_and_kept_are_candidates() {
        let vectors: Vec<Vec<f32>> = (0..100).map(|i| vector(i, 33)).collect();
        let rows = rows(&vectors);
        let keep = |row: usize| row.is_multiple_of(2);
        let found = rows.nearest(&vectors[7], &[10..20, 50..60], Some(&keep), 100);
        let mut found: Vec<usize> = found.into_iter().map(|(row, _)| row).collect();
        found.sort_unstable();
        assert_eq!(found, vec![10, 12, 14, 16, 18, 50, 52, 54, 56, 58]);
    }

    #[test]
    fn a_scan_split_across_cores_finds_what_its_halves_find() {
        let count = split::SPLIT_ROWS + 1_001;
        let vectors: Vec<Vec<f32>> = (0..count as u64).map(|i| vector(i, 16)).collect();
        let rows = rows(&vectors);
        let query = vector(7, 16);
        let keep = |row: usize| !row.is_multiple_of(3);
        for keep in [None, Some(&keep as &Keep<'_>)] {
            let whole = rows.nearest(&query, &[0..count], keep, 40);
            // Each half is below the split, so scanned on one thread.
            let half = count / 2;
            let mut halves = rows.nearest(&query, &[0..half], keep, 40);
            halves.extend(rows.nearest(&query, &[half..count], keep, 40));
            halves.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            halves.truncate(40);
            assert_eq!(whole, halves);
        }
    }

    #[test]
    fn ties_go_to_the_lower_row_and_zero_rows_score_zero() {
        let v = vector(1, 20);
        let rows = rows(&[vec![0.0; 20], v.clone(), v.clone()]);
        let found = rows.nearest(&v, &[0..3], None, 3);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2, 0]);
        assert_eq!(found[2].1, 0.0);
        assert!(rows.nearest(&v, &[0..3], None, 0).is_empty());
    }

    #[test]
    fn reordering_moves_rows_with_their_scales() {
        let vectors: Vec<Vec<f32>> = (0..4).map(|i| vector(i, 40)).collect();
        let moved = rows(&vectors).reordered(&[3, 1]);
        assert_eq!(moved.len(), 2);
        let found = moved.nearest(&vectors[3], &[0..2], None, 1);
        assert_eq!(found[0].0, 0);
        assert!(found[0].1 > 0.99);
    }
}
