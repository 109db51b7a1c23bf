//! The best `k` of scored rows: what both of the in-memory copy's search
//! legs return.

/// The `k` highest-scoring of `scored` (row, score) pairs, best first.
/// Equal scores go to the lower row, so the answer is deterministic.
pub(crate) fn best_first(mut scored: Vec<(usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    let better = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > k {
        scored.select_nth_unstable_by(k, better);
        scored.truncate(k);
    }
    scored.sort_unstable_by(better);
    scored
}
