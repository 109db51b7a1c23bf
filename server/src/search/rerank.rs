//! The second stage: rescoring the best fused candidates with evidence the
//! first stage cannot see.
//!
//! Both legs score a chunk on its own, as if it were a document. But a
//! result is a page, and where in its page a chunk sits says how much a
//! match there says about the page. A documentation page opens with what
//! it is about (its title, summary and first paragraph), so a match in the
//! opening is evidence that the page is *about* the query; a match deep in
//! an options list is evidence that the page *mentions* it. The chunk
//! windows are cut without regard to that, and neither BM25 nor the
//! embedding can know where in its page a chunk is.
//!
//! [`LeadPrior`] adds a bonus that decays with the chunk's position,
//! `strength · e^(−index/2) · best`, where `best` is the best candidate's
//! relevance (so the prior keeps the query's own scale in every mode). Then
//! the caller maps relevance back to [0, 1].
//!
//! Its shape and strength were chosen on the tuning sets against other
//! shapes and signals, and it is checked on the held-out ones; what was
//! tried, and what each gave, is in docs/benchmarks.md ("Retrieval quality
//! history") and docs/search.md ("Quality"). Signals the keyword leg's BM25
//! already counts (query terms in the title, headings and text, their
//! proximity) are left to it.
//!
//! It is a [`SecondStage`] so that a cross-encoder can take its place:
//! [`cross_encoder`] runs one a user supplies (`--reranker-dir`). No
//! registry package ships cross-encoder weights, and a MiniLM-L6 one over
//! 50 candidates adds seconds to a search on a 2-core CPU (`make
//! bench-search`; docs/benchmarks.md, "The second stage") against a budget
//! of 5 ms, which is why this cheap stage is the default.

pub mod cross_encoder;

use futures::future::BoxFuture;

use super::Candidate;

/// How many of the best fused candidates the second stage rescores.
pub const RERANK_DEPTH: usize = 50;

/// A scorer that reorders the best candidates of the first stage.
pub trait SecondStage: Send + Sync {
    /// Sets `parts.rerank` of each of `candidates` (the best first-stage
    /// candidates, best first) to what this stage adds to its relevance,
    /// between 0 and [`Self::max_bonus`]. The caller applies it and sorts.
    /// A stage that cannot score leaves `parts.rerank` unset, and the first
    /// stage's order stands: a search never fails for its second stage.
    fn rescore<'a>(&'a self, query: &'a str, candidates: &'a mut [Candidate]) -> BoxFuture<'a, ()>;

    /// The most [`Self::rescore`] can add to a relevance.
    fn max_bonus(&self) -> f32;

    /// What this stage is, for the server's status.
    fn describe(&self) -> String;
}

/// A bonus for chunks at the opening of their page (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeadPrior {
    /// The bonus of a page's first chunk, as a share of the best relevance.
    pub strength: f32,
    /// Chunks over which the bonus falls by a factor of e.
    pub decay_chunks: f32,
}

impl Default for LeadPrior {
    /// Chosen on the tuning sets (see the module docs).
    fn default() -> Self {
        Self {
            strength: 0.25,
            decay_chunks: 2.0,
        }
    }
}

impl LeadPrior {
    /// [`SecondStage::rescore`], which needs no waiting.
    pub fn apply(&self, candidates: &mut [Candidate]) {
        let best = candidates.iter().map(|c| c.score).fold(0.0f32, f32::max);
        for c in candidates.iter_mut() {
            let position = c.chunk.chunk_index as f32 / self.decay_chunks.max(f32::EPSILON);
            c.parts.rerank = Some(self.strength * best * (-position).exp());
        }
    }
}

impl SecondStage for LeadPrior {
    fn rescore<'a>(
        &'a self,
        _query: &'a str,
        candidates: &'a mut [Candidate],
    ) -> BoxFuture<'a, ()> {
        self.apply(candidates);
        Box::pin(std::future::ready(()))
    }

    fn max_bonus(&self) -> f32 {
        // `best` is a relevance, at most 1.
        self.strength
    }

    fn describe(&self) -> String {
        format!(
            "lead prior (strength {}, decay {} chunks)",
            self.strength, self.decay_chunks
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, index: u32, score: f32) -> Candidate {
        Candidate::for_test(id, index, score)
    }

    fn total(c: &Candidate) -> f32 {
        c.score + c.parts.rerank.unwrap_or(0.0)
    }

    #[test]
    fn an_opening_chunk_overtakes_a_slightly_better_deep_one() {
        let mut list = vec![candidate("deep", 12, 0.80), candidate("intro", 0, 0.75)];
        LeadPrior::default().apply(&mut list);
        assert!(total(&list[1]) > total(&list[0]), "{list:?}");
        // A much better deep match stays ahead.
        let mut list = vec![candidate("deep", 12, 0.80), candidate("intro", 0, 0.50)];
        LeadPrior::default().apply(&mut list);
        assert!(total(&list[0]) > total(&list[1]), "{list:?}");
    }

    #[test]
    fn the_bonus_falls_with_position_and_stays_within_its_bound() {
        let mut list: Vec<Candidate> = (0..6)
            .map(|i| candidate(&format!("c{i}"), i, 1.0))
            .collect();
        let stage = LeadPrior::default();
        stage.apply(&mut list);
        let bonuses: Vec<f32> = list
            .iter()
            .map(|c| c.parts.rerank.unwrap_or(-1.0))
            .collect();
        assert!(bonuses.windows(2).all(|w| w[0] > w[1]), "{bonuses:?}");
        assert!(bonuses
            .iter()
            .all(|&b| (0.0..=stage.max_bonus()).contains(&b)));
    }

    #[test]
    fn rescoring_is_deterministic() {
        let make = || vec![candidate("a", 3, 0.5), candidate("b", 0, 0.4)];
        let (mut one, mut two) = (make(), make());
        LeadPrior::default().apply(&mut one);
        LeadPrior::default().apply(&mut two);
        let bits = |l: &[Candidate]| {
            l.iter()
                .map(|c| c.parts.rerank.map(f32::to_bits))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&one), bits(&two));
    }
}
