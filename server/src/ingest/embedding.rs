//! One document chunked and embedded: each chunk with its context (title,
//! headings; the description on the first chunk), so a passage knows its
//! page, and with vectors the store already holds reused ([`super::reuse`]).

use std::time::{SystemTime, UNIX_EPOCH};

use index_core::job::FileState;
use ingest_core::chunk::{chunk_document, ChunkConfig};
use ingest_core::context::{chunk_contexts, embedding_inputs};
use ingest_core::extract::Extracted as Document;
use ingest_core::ids::chunk_id;

use super::budget::Budget;
use super::jobs::FileSlot;
use super::reuse::{self, vectors_for};
use super::staging::Embedded;
use super::JobHandle;
use crate::store::{ChunkRow, DocumentChunks};

/// Chunks and embeds one document, taking vectors from `sources` where
/// the store holds them.
pub(super) async fn embed_document(
    chunking: &ChunkConfig,
    sources: &reuse::Sources<'_>,
    job: &JobHandle,
    slot: FileSlot,
    doc: &Document,
    budget: &mut Budget,
) -> Result<Embedded, String> {
    let (library, version) = (job.library(), job.version());
    let chunks = chunk_document(doc, chunking);
    if chunks.is_empty() {
        return Err("the file holds no text".into());
    }
    budget.take_chunks(chunks.len())?;
    job.set_file(
        slot,
        FileState::Embedding {
            chunks: chunks.len(),
        },
    );
    let contexts = chunk_contexts(doc.title.as_deref(), doc.description.as_deref(), &chunks);
    let inputs = embedding_inputs(&chunks, &contexts);
    let ids: Vec<String> = chunks
        .iter()
        .zip(&inputs)
        .map(|(c, input)| chunk_id(library, version, &doc.file_path, c.index, input))
        .collect();
    let vectors = vectors_for(sources, library, &doc.file_path, inputs).await?;
    let created_at_micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let document = DocumentChunks {
        library: library.to_owned(),
        version: version.to_owned(),
        file_path: doc.file_path.clone(),
        title: doc.title.clone(),
        created_at_micros,
        chunks: chunks
            .into_iter()
            .zip(contexts)
            .zip(ids.into_iter().zip(vectors))
            .map(|((chunk, context), (id, vector))| ChunkRow {
                id,
                chunk,
                context,
                vector,
            })
            .collect(),
    };
    Ok(Embedded { slot, document })
}
