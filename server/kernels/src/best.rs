//! The best `k` of scored rows: what both of the in-memory copy's search
//! legs return.
//!
//! A scan offers every row in scope, a million at the most: keeping them
//! all and selecting at the end would write and sort 16 bytes a row. So
//! [`Best`] keeps a buffer of a few times `k`, and when it fills, cuts it
//! to the best `k` and from then on turns away at once any row that does
//! not beat the worst of those.

use std::cmp::Ordering;

/// Rows kept between cuts, as a multiple of `k` (at least
/// [`MIN_BUFFER`]): a cut costs a selection over the buffer, so a larger
/// buffer cuts less often and turns away less between cuts.
const BUFFER_PER_K: usize = 4;
/// The smallest buffer: for a small `k`, a cut every few rows would cost
/// more than it turns away.
const MIN_BUFFER: usize = 1024;

/// Orders (row, score) pairs best first: higher scores, then lower rows,
/// so that the answer is deterministic.
fn better_first(a: &(usize, f32), b: &(usize, f32)) -> Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// The best `k` of the (row, score) pairs offered to it.
#[derive(Debug)]
pub(crate) struct Best {
    k: usize,
    kept: Vec<(usize, f32)>,
    /// Once a cut was made: the worst of the `k` it kept. A pair that does
    /// not order before it cannot be among the best `k`.
    floor: Option<(usize, f32)>,
}

impl Best {
    /// Keeps the best `k`.
    pub(crate) fn new(k: usize) -> Self {
        let capacity = k.saturating_mul(BUFFER_PER_K).max(MIN_BUFFER);
        Self {
            k,
            kept: Vec::with_capacity(capacity),
            floor: None,
        }
    }

    /// Offers `row` at `score`.
    #[inline(always)]
    pub(crate) fn offer(&mut self, row: usize, score: f32) {
        if self.k == 0 {
            return;
        }
        let pair = (row, score);
        if let Some(floor) = &self.floor {
            if better_first(&pair, floor) != Ordering::Less {
                return;
            }
        }
        self.kept.push(pair);
        if self.kept.len() == self.kept.capacity() {
            self.cut();
        }
    }

    /// Cuts the buffer to its best `k` and raises the floor to the worst
    /// of them.
    #[cold]
    fn cut(&mut self) {
        if self.kept.len() <= self.k {
            return;
        }
        self.kept.select_nth_unstable_by(self.k - 1, better_first);
        self.kept.truncate(self.k);
        self.floor = self.kept.iter().copied().max_by(better_first);
    }

    /// Takes in what `other` kept: the best of both.
    pub(crate) fn absorb(&mut self, other: Best) {
        for (row, score) in other.kept {
            self.offer(row, score);
        }
    }

    /// The best `k` offered, best first.
    pub(crate) fn into_best_first(mut self) -> Vec<(usize, f32)> {
        self.cut();
        self.kept.sort_unstable_by(better_first);
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random scores with many ties (a linear congruential walk).
    fn scores(n: usize) -> Vec<f32> {
        let mut state = 42u64;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 33) % 500) as f32 / 10.0
            })
            .collect()
    }

    fn sorted_best(pairs: &[(usize, f32)], k: usize) -> Vec<(usize, f32)> {
        let mut all = pairs.to_vec();
        all.sort_by(better_first);
        all.truncate(k);
        all
    }

    #[test]
    fn keeps_what_sorting_everything_keeps_ties_to_the_lower_row() {
        let scores = scores(20_000);
        // Rows offered in order, and in a shuffled order (the keyword leg
        // offers rows in the order its terms touched them).
        let in_order: Vec<(usize, f32)> = scores.iter().copied().enumerate().collect();
        let mut shuffled = in_order.clone();
        shuffled.sort_by_key(|&(row, _)| (row * 7919) % 20_000);
        for pairs in [&in_order, &shuffled] {
            for k in [0, 1, 10, 50, 255, 256, 257, 5_000, 30_000] {
                let mut best = Best::new(k);
                for &(row, score) in pairs.iter() {
                    best.offer(row, score);
                }
                assert_eq!(best.into_best_first(), sorted_best(pairs, k), "k = {k}");
            }
        }
    }
}
