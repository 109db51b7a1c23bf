//! Retrieval quality measures, at document level: a ranked list of document
//! ids scored against graded relevance judgements (qrels).

use std::collections::HashMap;

/// Normalised discounted cumulative gain of the first `k` ranked ids:
/// `DCG@k / IDCG@k`, with gain `2^rel − 1` and discount `log2(rank + 1)`.
/// 0 when nothing is relevant.
pub fn ndcg_at(ranked: &[&str], qrels: &HashMap<String, u32>, k: usize) -> f64 {
    let gain = |rel: u32| 2f64.powi(rel as i32) - 1.0;
    let discount = |rank: usize| (rank as f64 + 2.0).log2();
    let dcg: f64 = dedup(ranked)
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(i, id)| gain(qrels.get(id).copied().unwrap_or(0)) / discount(i))
        .sum();
    let mut ideal: Vec<u32> = qrels.values().copied().filter(|&r| r > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(i, rel)| gain(rel) / discount(i))
        .sum();
    if idcg == 0.0 {
        0.0
    } else {
        dcg / idcg
    }
}

/// Share of the relevant ids found in the first `k` ranked ids.
pub fn recall_at(ranked: &[&str], qrels: &HashMap<String, u32>, k: usize) -> f64 {
    let relevant = qrels.values().filter(|&&r| r > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = dedup(ranked)
        .into_iter()
        .take(k)
        .filter(|id| qrels.get(*id).is_some_and(|&r| r > 0))
        .count();
    found as f64 / relevant as f64
}

/// The ids in first-seen order: a document ranked twice counts once.
fn dedup<'a>(ranked: &[&'a str]) -> Vec<&'a str> {
    let mut seen = std::collections::HashSet::new();
    ranked
        .iter()
        .copied()
        .filter(|id| seen.insert(*id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qrels(pairs: &[(&str, u32)]) -> HashMap<String, u32> {
        pairs.iter().map(|&(d, r)| (d.to_owned(), r)).collect()
    }

    #[test]
    fn perfect_and_missing_rankings() {
        let q = qrels(&[("a", 1)]);
        assert_eq!(ndcg_at(&["a", "b"], &q, 10), 1.0);
        assert_eq!(ndcg_at(&["b", "c"], &q, 10), 0.0);
        assert_eq!(recall_at(&["b", "a"], &q, 10), 1.0);
        assert_eq!(recall_at(&["b", "a"], &q, 1), 0.0);
    }

    #[test]
    fn rank_two_is_discounted_by_log2_of_three() {
        let q = qrels(&[("a", 1)]);
        let got = ndcg_at(&["b", "a"], &q, 10);
        assert!((got - 1.0 / 3f64.log2()).abs() < 1e-12);
        // Repeats of a document do not push the relevant one down.
        assert_eq!(ndcg_at(&["a", "a", "b"], &q, 10), 1.0);
        assert!((ndcg_at(&["b", "b", "a"], &q, 10) - got).abs() < 1e-12);
    }

    #[test]
    fn graded_relevance_prefers_the_better_document_first() {
        let q = qrels(&[("a", 2), ("b", 1)]);
        assert!(ndcg_at(&["a", "b"], &q, 10) > ndcg_at(&["b", "a"], &q, 10));
        assert_eq!(recall_at(&["a", "x"], &q, 10), 0.5);
    }
}
