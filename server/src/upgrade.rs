//! Upgrading a store written by an older docshelf, on open.
//!
//! Schema v2 embeds every chunk with its context (title and headings, see
//! `ingest_core::context`); a v1 vector was computed from the bare text and
//! cannot be converted, only recomputed. So when the engine opens a store
//! that still holds the v1 table, it re-embeds it here before serving:
//! document by document, each written to the v2 table in one commit, with
//! progress in the log. The v1 table is dropped only after every document
//! is in v2, so a crash or kill mid-upgrade loses nothing: the next open
//! finds the v1 table again and carries on, skipping documents already
//! written whole.
//!
//! What is kept: every chunk's text, span, page, headings, title, storage
//! time and id (so feedback votes, keyed by chunk id, still apply). What is
//! new: the context column and the vectors. v1 did not store a document's
//! description, so upgraded documents have none until they are uploaded
//! again. Cost: one embedding per chunk, at the embedder's speed
//! (`make bench-embed`; docs/benchmarks.md).

use std::time::Instant;

use ingest_core::chunk::Chunk;
use ingest_core::context::{chunk_contexts, embedding_inputs};

use crate::embed::EmbedQueue;
use crate::store::{ChunkRow, DocumentChunks, Store, StoredChunk};

/// What an upgrade did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Upgraded {
    pub documents: usize,
    /// Documents found already upgraded by an earlier, interrupted run.
    pub already_done: usize,
    pub chunks: usize,
}

/// Re-embeds every v1 document into the v2 table and drops the v1 table.
/// A no-op for a store without one.
#[tracing::instrument(skip_all, fields(store = %store.location()))]
pub async fn upgrade(store: &mut Store, embedder: &EmbedQueue) -> anyhow::Result<Upgraded> {
    let mut done = Upgraded::default();
    if !store.has_legacy() {
        return Ok(done);
    }
    let started = Instant::now();
    let documents = store.legacy_documents().await?;
    tracing::warn!(
        documents = documents.len(),
        "this store was written by an older docshelf (schema v1): re-embedding every chunk \
         with its title and headings (schema v2) before serving"
    );
    for (i, key) in documents.iter().enumerate() {
        let old = store.legacy_document(key).await?;
        let whole = |chunks: &[StoredChunk]| {
            chunks
                .first()
                .is_some_and(|c| chunks.len() == c.doc_chunks as usize)
        };
        let existing = store.document(&key.0, &key.1, &key.2).await?;
        if whole(&existing) {
            done.already_done += 1;
            continue;
        }
        if old.is_empty() {
            continue;
        }
        let rows = reembed(&old, embedder).await?;
        done.chunks += rows.len();
        let doc = DocumentChunks {
            library: key.0.clone(),
            version: key.1.clone(),
            file_path: key.2.clone(),
            title: old[0].title.clone(),
            created_at_micros: old[0].created_at_micros,
            chunks: rows,
        };
        store.replace_document(&doc).await?;
        done.documents += 1;
        if (i + 1) % 25 == 0 || i + 1 == documents.len() {
            tracing::info!(
                upgraded = i + 1,
                of = documents.len(),
                secs = started.elapsed().as_secs(),
                "upgrading the store"
            );
        }
    }
    store.refresh_indexes().await?;
    store.drop_legacy().await?;
    tracing::info!(
        documents = done.documents,
        chunks = done.chunks,
        secs = started.elapsed().as_secs(),
        "store upgraded to schema v2"
    );
    Ok(done)
}

/// A v1 document's chunks with contexts and new vectors, ids kept.
async fn reembed(old: &[StoredChunk], embedder: &EmbedQueue) -> anyhow::Result<Vec<ChunkRow>> {
    let chunks: Vec<Chunk> = old
        .iter()
        .map(|c| Chunk {
            index: c.chunk_index as usize,
            start: c.span_start as usize,
            end: c.span_end as usize,
            text: c.text.clone(),
            heading_path: split_heading_path(&c.heading_path),
            page: c.page,
        })
        .collect();
    // v1 kept no description: upgraded documents get theirs back when
    // uploaded again.
    let contexts = chunk_contexts(old[0].title.as_deref(), None, &chunks);
    let inputs = embedding_inputs(&chunks, &contexts);
    let vectors = embedder
        .embed_many(inputs)
        .await
        .map_err(|e| anyhow::anyhow!("embedding failed during the upgrade: {e}"))?;
    Ok(old
        .iter()
        .zip(chunks)
        .zip(contexts.into_iter().zip(vectors))
        .map(|((stored, chunk), (context, vector))| ChunkRow {
            id: stored.chunk_id.clone(),
            chunk,
            context,
            vector,
        })
        .collect())
}

/// A stored heading path (`A > B`) back into its headings.
fn split_heading_path(path: &str) -> Vec<String> {
    path.split(ingest_core::chunk::HEADING_SEPARATOR)
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
        .collect()
}
