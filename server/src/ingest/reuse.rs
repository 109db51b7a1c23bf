//! Never embedding the same chunk twice: the vectors a document's chunks
//! can take from the store, and the model run only on the rest.

use std::collections::HashMap;

use crate::embed::EmbedQueue;
use crate::metrics::Metrics;
use crate::store::{schema, Store};

/// What reuse reads and counts: the store's vectors, the model for the
/// rest, and the counters of both.
pub(super) struct Sources<'a> {
    pub store: &'a Store,
    pub embedder: &'a EmbedQueue,
    pub metrics: &'a Metrics,
}

/// The vectors of `inputs`, in order. Nothing is embedded twice: a vector
/// the store already holds for the same input is reused, first from this
/// page's earlier copies (in any version of the library: most of a page is
/// unchanged from one version or upload to the next, and rows stored before
/// inputs were hashed are found only this way), then by the input's hash
/// anywhere in the store (a page moved or copied, a paragraph shared
/// between libraries); inputs repeated within the page are embedded once.
/// Reuse is exact: a vector is taken only for the very text it was
/// embedded from. A failed lookup only costs reuse.
pub(super) async fn vectors_for(
    sources: &Sources<'_>,
    library: &str,
    file_path: &str,
    inputs: Vec<String>,
) -> Result<Vec<Vec<f32>>, String> {
    let known = match sources.store.page_vectors(library, file_path).await {
        Ok(known) => known,
        Err(err) => {
            tracing::warn!(%err, file_path, "cannot look up stored vectors: embedding the page whole");
            Default::default()
        }
    };
    let mut vectors: Vec<Option<Vec<f32>>> = inputs.iter().map(|i| known.get(i).cloned()).collect();
    let unknown: Vec<(usize, String)> = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| vectors[*i].is_none())
        .map(|(i, input)| (i, schema::input_hash(input)))
        .collect();
    if !unknown.is_empty() {
        let mut hashes: Vec<String> = unknown.iter().map(|(_, h)| h.clone()).collect();
        hashes.sort_unstable();
        hashes.dedup();
        match sources.store.vectors_by_input(&hashes).await {
            Ok(by_hash) => {
                for (i, hash) in &unknown {
                    vectors[*i] = by_hash.get(hash).cloned();
                }
            }
            Err(err) => {
                tracing::warn!(%err, file_path, "cannot look up vectors by input: embedding the rest");
            }
        }
    }
    // Each distinct input still missing, once.
    let mut missing: Vec<String> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    let slots: Vec<Option<usize>> = inputs
        .iter()
        .zip(&vectors)
        .map(|(input, v)| {
            v.is_none().then(|| {
                *position.entry(input.as_str()).or_insert_with(|| {
                    missing.push(input.clone());
                    missing.len() - 1
                })
            })
        })
        .collect();
    // Repeats within the page count as reused: the model ran once for them.
    let reused = inputs.len() - missing.len();
    let embedded = if missing.is_empty() {
        Vec::new()
    } else {
        sources
            .embedder
            .embed_many(missing)
            .await
            .map_err(|e| format!("embedding failed: {e}"))?
    };
    sources
        .metrics
        .chunks_embedded(embedded.len() as u64, reused as u64);
    vectors
        .into_iter()
        .zip(slots)
        .map(|(known, slot)| match (known, slot) {
            (Some(vector), _) => Ok(vector),
            (None, Some(slot)) => embedded
                .get(slot)
                .cloned()
                .ok_or_else(|| "the embedder returned fewer vectors than asked".to_owned()),
            (None, None) => Err("a chunk has neither a stored nor a new vector".to_owned()),
        })
        .collect()
}
