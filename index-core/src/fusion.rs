//! Fusing ranked lists from several retrievers (dense and keyword) into one.
//!
//! Two methods, as the search API offers them:
//! - [`rrf`]: reciprocal rank fusion. Only ranks matter, so retrievers whose
//!   scores live on different scales (cosine vs BM25) combine safely.
//! - [`dbsf`]: distribution-based score fusion. Each list's scores are
//!   normalised by their own distribution (mean ± 3 standard deviations,
//!   clamped to [0, 1]) and summed, so a retriever that is very sure of one
//!   hit can lift it further than its rank alone would.

use std::collections::HashMap;
use std::hash::Hash;

/// Reciprocal rank fusion's usual constant: damps the head of each list.
pub const DEFAULT_RRF_K: f32 = 60.0;

/// One retriever's hit: an id and its score (higher is better).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<Id> {
    pub id: Id,
    pub score: f32,
}

/// A fused hit: the fused score, and the id's position in each input list.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<Id> {
    pub id: Id,
    pub score: f32,
    /// For each input list, the id's 0-based rank there, if it was there.
    pub ranks: Vec<Option<usize>>,
}

/// Reciprocal rank fusion: `score = Σ 1 / (k + rank)`, rank counted from 1.
///
/// Each list must be sorted best first. Ties in the fused score keep the
/// order of first appearance, so the result is deterministic.
pub fn rrf<Id: Clone + Eq + Hash>(lists: &[Vec<Scored<Id>>], k: f32) -> Vec<Fused<Id>> {
    fuse(lists, |list| {
        list.iter()
            .enumerate()
            .map(|(rank, _)| 1.0 / (k + rank as f32 + 1.0))
            .collect()
    })
}

/// Distribution-based score fusion: each list's scores mapped through
/// `(s - (μ - 3σ)) / 6σ`, clamped to [0, 1], then summed per id.
///
/// A list with a single hit, or with all scores equal, has no spread: its
/// hits count 1.0 each, as the list's best.
pub fn dbsf<Id: Clone + Eq + Hash>(lists: &[Vec<Scored<Id>>]) -> Vec<Fused<Id>> {
    fuse(lists, |list| {
        let n = list.len() as f32;
        if list.is_empty() {
            return Vec::new();
        }
        let mean = list.iter().map(|h| h.score).sum::<f32>() / n;
        let var = list.iter().map(|h| (h.score - mean).powi(2)).sum::<f32>() / n;
        let sd = var.sqrt();
        if sd <= f32::EPSILON {
            return vec![1.0; list.len()];
        }
        let low = mean - 3.0 * sd;
        list.iter()
            .map(|h| ((h.score - low) / (6.0 * sd)).clamp(0.0, 1.0))
            .collect()
    })
}

/// The highest score [`rrf`] can give an id over `lists` lists with
/// constant `k`: first in every one.
pub fn rrf_ceiling(lists: usize, k: f32) -> f32 {
    lists as f32 / (k + 1.0)
}

/// The highest score [`dbsf`] can give an id over `lists` lists: 1.0 in each.
pub fn dbsf_ceiling(lists: usize) -> f32 {
    lists as f32
}

/// Sums per-id contributions (computed per list by `contribution`) and
/// sorts best first.
fn fuse<Id: Clone + Eq + Hash>(
    lists: &[Vec<Scored<Id>>],
    contribution: impl Fn(&[Scored<Id>]) -> Vec<f32>,
) -> Vec<Fused<Id>> {
    let mut order: Vec<Fused<Id>> = Vec::new();
    let mut index: HashMap<Id, usize> = HashMap::new();
    for (which, list) in lists.iter().enumerate() {
        for (rank, (hit, add)) in list.iter().zip(contribution(list)).enumerate() {
            let at = *index.entry(hit.id.clone()).or_insert_with(|| {
                order.push(Fused {
                    id: hit.id.clone(),
                    score: 0.0,
                    ranks: vec![None; lists.len()],
                });
                order.len() - 1
            });
            let fused = &mut order[at];
            // A list naming the same id twice counts its best rank only.
            if fused.ranks[which].is_none() {
                fused.ranks[which] = Some(rank);
                fused.score += add;
            }
        }
    }
    // Stable sort: equal scores keep first-appearance order.
    order.sort_by(|a, b| b.score.total_cmp(&a.score));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[(&'static str, f32)]) -> Vec<Scored<&'static str>> {
        ids.iter()
            .map(|&(id, score)| Scored { id, score })
            .collect()
    }

    #[test]
    fn rrf_rewards_agreement_between_lists() {
        let dense = list(&[("a", 0.9), ("b", 0.8), ("c", 0.7)]);
        let keyword = list(&[("c", 12.0), ("b", 9.0), ("d", 1.0)]);
        let fused = rrf(&[dense, keyword], DEFAULT_RRF_K);
        let ids: Vec<&str> = fused.iter().map(|f| f.id).collect();
        // b and c are in both lists, so both beat a and d, seen once. c
        // (ranks 3 and 1) edges out b (2 and 2): 1/x is convex.
        assert_eq!(&ids[..2], &["c", "b"]);
        let b = &fused[1];
        assert!((b.score - 2.0 / 62.0).abs() < 1e-6);
        assert_eq!(b.ranks, vec![Some(1), Some(1)]);
        assert_eq!(
            fused.iter().find(|f| f.id == "d").map(|f| f.ranks.clone()),
            Some(vec![None, Some(2)])
        );
    }

    #[test]
    fn rrf_ignores_score_scales_and_duplicates() {
        let a = list(&[("x", 1000.0), ("y", 999.0), ("x", 5.0)]);
        let fused = rrf(&[a], 60.0);
        assert_eq!(fused.len(), 2);
        assert!((fused[0].score - 1.0 / 61.0).abs() < 1e-6);
    }

    #[test]
    fn dbsf_normalises_each_list_by_its_own_spread() {
        // The keyword list is very sure of "k"; dense scores are close together.
        let dense = list(&[("d1", 0.62), ("k", 0.60), ("d2", 0.59), ("d3", 0.58)]);
        let keyword = list(&[("k", 30.0), ("d1", 3.0), ("d2", 2.5), ("d3", 2.0)]);
        let fused = dbsf(&[dense, keyword]);
        assert_eq!(fused[0].id, "k");
        for f in &fused {
            assert!((0.0..=2.0).contains(&f.score));
        }
    }

    #[test]
    fn ceilings_bound_every_fused_score() {
        let a = list(&[("x", 0.9), ("y", 0.1)]);
        let b = list(&[("x", 7.0), ("z", 1.0)]);
        let lists = [a, b];
        // First in every list is exactly RRF's ceiling.
        assert!((rrf(&lists, 60.0)[0].score - rrf_ceiling(2, 60.0)).abs() < 1e-6);
        // DBSF reaches its ceiling only for a hit far above its list's spread.
        assert!(dbsf(&lists)
            .iter()
            .all(|f| f.score <= dbsf_ceiling(2) + 1e-6));
        let flat = [list(&[("x", 1.0)]), list(&[("x", 3.0)])];
        assert!((dbsf(&flat)[0].score - dbsf_ceiling(2)).abs() < 1e-6);
    }

    #[test]
    fn dbsf_handles_flat_and_empty_lists() {
        let flat = list(&[("a", 1.0), ("b", 1.0)]);
        let fused = dbsf(&[flat, Vec::new()]);
        assert_eq!(fused.len(), 2);
        assert!(fused.iter().all(|f| (f.score - 1.0).abs() < 1e-6));
        assert!(dbsf::<&str>(&[]).is_empty());
    }
}
