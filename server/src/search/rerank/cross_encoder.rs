//! The second stage as a cross-encoder the user supplies (`--reranker-dir`).
//!
//! The model reads the query and each candidate together, as
//! [`embedding_input`] gives the candidate to the embedder (its title and
//! headings, then its text), and its logit becomes a probability. The
//! bonus is that probability at [`CrossEncoderStage::weight`] (default 1:
//! equal to the first stage's relevance). Where the model is sure (a
//! probability near 0 or 1, as MS MARCO cross-encoders mostly are) it
//! decides the order; where it is not, the first stage does. The weight is
//! not tuned: no cross-encoder weights can be installed on the machines
//! this project is built on, so there was nothing to tune it with.
//!
//! Cost: a forward pass over [`super::RERANK_DEPTH`] pairs of a few hundred
//! tokens, seconds added to a search on a 2-core CPU for a MiniLM-L6 model
//! (`make bench-search`, its `cross-encoder (N=50)` line;
//! docs/benchmarks.md, "The second stage"). Passes run
//! one at a time, off the async runtime: each already spreads over every
//! core, and two at once would only slow both.

use std::sync::Arc;

use futures::future::BoxFuture;
use ingest_core::context::embedding_input;
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::SecondStage;
use crate::embed::cross_encoder::CrossEncoder;
use crate::search::Candidate;

/// A cross-encoder rescoring the best candidates.
pub struct CrossEncoderStage {
    model: Arc<CrossEncoder>,
    /// Where the weights came from, for the status.
    source: String,
    /// One forward pass at a time (see the module docs).
    turn: Arc<Semaphore>,
    /// The bonus of a candidate the model is sure of.
    weight: f32,
}

impl CrossEncoderStage {
    /// Default [`Self::weight`].
    pub const DEFAULT_WEIGHT: f32 = 1.0;

    /// A stage running `model`, loaded from `source`.
    pub fn new(model: CrossEncoder, source: impl Into<String>) -> Self {
        Self {
            model: Arc::new(model),
            source: source.into(),
            turn: Arc::new(Semaphore::new(1)),
            weight: Self::DEFAULT_WEIGHT,
        }
    }

    /// Scores `passages` against `query` on a blocking thread, after the
    /// passes queued before it. The permit travels with the pass, so a
    /// search that gives up waiting (its budget spent) never lets a second
    /// pass start beside one still running.
    async fn logits(&self, query: &str, passages: Vec<String>) -> Result<Vec<f32>, String> {
        let turn = Arc::clone(&self.turn)
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let model = Arc::clone(&self.model);
        let query = query.to_owned();
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            model.score(&query, &passages)
        })
        .await
        .map_err(|e| format!("the reranker's task failed: {e}"))?
        .map_err(|e| e.to_string())
    }
}

impl SecondStage for CrossEncoderStage {
    fn rescore<'a>(&'a self, query: &'a str, candidates: &'a mut [Candidate]) -> BoxFuture<'a, ()> {
        let span = tracing::debug_span!("cross_encoder", pairs = candidates.len());
        let pass = async move {
            let passages: Vec<String> = candidates
                .iter()
                .map(|c| embedding_input(&c.chunk.context, &c.chunk.text))
                .collect();
            match self.logits(query, passages).await {
                Ok(logits) => {
                    for (c, logit) in candidates.iter_mut().zip(logits) {
                        c.parts.rerank = Some(self.weight * sigmoid(logit));
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "the reranker failed; the first stage's order stands");
                }
            }
        };
        Box::pin(pass.instrument(span))
    }

    fn max_bonus(&self) -> f32 {
        self.weight
    }

    fn describe(&self) -> String {
        format!(
            "cross-encoder from {} on {}",
            self.source,
            self.model.backend()
        )
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
