//! The life of an upload: extract → chunk → embed → store, file by file.
//!
//! Each document's commit runs while the next document is embedded: the
//! store's work (writing, the commit, looking up the rows it replaces) then
//! no longer adds to the embedding time it used to follow. Commits still
//! happen one at a time and in upload order.
//!
//! A file that fails (bad PDF, unknown encoding) fails alone with its reason;
//! the rest of the job goes on. Each document is stored in one commit (see
//! [`crate::store`]), so a crash at any point leaves every document either
//! as it was before the job or as the job made it. The job reports done only
//! after the search indexes cover what it stored.

use std::time::{SystemTime, UNIX_EPOCH};

use index_core::chunk::{chunk_document, ChunkConfig};
use index_core::context::{chunk_contexts, embedding_inputs};
use index_core::extract::{self, ArchiveLimits, Extracted};
use index_core::ids::chunk_id;
use index_core::job::{FileProgress, FileState, JobState, Upload};

use super::budget::{Budget, JobLimits};
use super::jobs::FileSlot;
use super::JobHandle;
use crate::embed::EmbedQueue;
use crate::metrics::Metrics;
use crate::store::{ChunkRow, DocumentChunks, Store};

/// Extractions running at once, across every job. Each is a blocking
/// thread; one that runs past its deadline cannot be stopped (a thread
/// cannot be killed), so it keeps its permit until it ends by itself:
/// runaway extractions then hold up new ones, instead of piling threads up.
pub const MAX_EXTRACTIONS: usize = 4;

/// What a job needs from the engine.
pub struct Pipeline<'a> {
    pub store: &'a Store,
    /// Permits for extraction threads (see [`MAX_EXTRACTIONS`]).
    pub extractions: &'a std::sync::Arc<tokio::sync::Semaphore>,
    pub embedder: &'a EmbedQueue,
    /// Where each file's outcome is counted, as it ends.
    pub metrics: &'a Metrics,
    pub chunking: ChunkConfig,
    pub archive_limits: ArchiveLimits,
    pub job_limits: JobLimits,
    /// How often a long job folds new rows into the indexes
    /// (`--index-refresh-secs`, [`REFRESH_EVERY`] by default).
    pub refresh_every: std::time::Duration,
}

/// How often a long job folds what it has stored so far into the indexes.
///
/// Every stored document is a commit of its own, and until the indexes
/// cover it, every search scans its rows for the keyword leg and opens its
/// fragment: while the 190 git pages were ingested in one job, searches
/// took most of a second, much of it CPU (`make bench-load`).
/// Folding in every few seconds keeps that work small: it cut search
/// latency during the upload to about a third, a little more at 5 s than
/// at 15. The upload got faster too: each document's commit looks up the
/// rows it replaces, and that is cheaper over indexed, compacted data
/// (docs/benchmarks.md, "Search while uploading").
pub const REFRESH_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs a whole job. Never fails as a whole for one file's sake; the
/// returned status says what happened to each.
#[tracing::instrument(skip_all, fields(library = job.library(), version = job.version(), uploads = uploads.len()))]
pub async fn run_job(pipeline: &Pipeline<'_>, job: &JobHandle, uploads: Vec<Upload>) {
    let (library, version) = (job.library(), job.version());
    // Every file is listed, queued, before any work: the client sees the
    // whole job at once.
    let slots: Vec<FileSlot> = uploads
        .iter()
        .map(|u| job.add_file(&u.name, FileState::Queued))
        .collect();
    let mut budget = Budget::new(pipeline.job_limits);
    let mut refreshed = std::time::Instant::now();
    // The last embedded document, committed while the next one is embedded.
    let mut committing: Option<Embedded> = None;
    for (upload, slot) in uploads.into_iter().zip(slots) {
        job.set_file(slot, FileState::Extracting);
        let limits = pipeline.archive_limits;
        let Ok(permit) = pipeline.extractions.clone().acquire_owned().await else {
            // The semaphore is never closed; if it were, nothing could run.
            finish(
                pipeline,
                job,
                slot,
                FileState::Failed {
                    reason: "the server is shutting down".into(),
                },
            );
            continue;
        };
        let extracting = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            extract::extract(&upload.name, &upload.bytes, &limits)
        });
        let deadline = pipeline.job_limits.extract_deadline;
        let Ok(extracted) = tokio::time::timeout(deadline, extracting).await else {
            tracing::warn!(
                ?deadline,
                "an extraction ran past its deadline and was abandoned"
            );
            finish(
                pipeline,
                job,
                slot,
                FileState::Failed {
                    reason: format!(
                    "extracting took longer than {} s and was abandoned (a malformed file, or one \
                     too large to read in time: see --extract-timeout-secs)",
                    deadline.as_secs_f64()
                ),
                },
            );
            continue;
        };
        let extraction = match extracted {
            Ok(Ok(x)) => x,
            Ok(Err(err)) => {
                finish(
                    pipeline,
                    job,
                    slot,
                    FileState::Failed {
                        reason: err.to_string(),
                    },
                );
                continue;
            }
            Err(join) => {
                finish(
                    pipeline,
                    job,
                    slot,
                    FileState::Failed {
                        reason: format!("extraction crashed: {join}"),
                    },
                );
                continue;
            }
        };
        // The job's budget is spent before anything is chunked or embedded:
        // an upload that would exceed it fails whole, and its text is freed.
        let text_bytes: u64 = extraction
            .documents
            .iter()
            .map(|d| d.text.len() as u64)
            .sum();
        if let Err(reason) = budget.take_text(text_bytes) {
            finish(pipeline, job, slot, FileState::Failed { reason });
            continue;
        }

        // One upload may hold many documents (a ZIP): list them all first.
        let doc_slots: Vec<FileSlot> = if extraction.archive {
            let mut entries: Vec<FileProgress> = extraction
                .documents
                .iter()
                .map(|d| FileProgress {
                    file_path: d.file_path.clone(),
                    state: FileState::Queued,
                    warnings: Vec::new(),
                })
                .collect();
            entries.extend(extraction.skipped.iter().map(|s| FileProgress {
                file_path: s.file_path.clone(),
                state: FileState::Skipped {
                    reason: s.reason.clone(),
                },
                warnings: Vec::new(),
            }));
            if entries.is_empty() {
                finish(
                    pipeline,
                    job,
                    slot,
                    FileState::Failed {
                        reason: "the archive holds no files".into(),
                    },
                );
                continue;
            }
            // Entries skipped (types docshelf does not read) end here.
            for _ in &extraction.skipped {
                pipeline.metrics.file("skipped");
            }
            let mut entries = job.expand_file(slot, entries);
            entries.truncate(extraction.documents.len());
            entries
        } else {
            vec![slot]
        };

        for (doc, slot) in extraction.documents.iter().zip(doc_slots) {
            job.warn_file(slot, doc.warnings.clone());
            let (committed, embedded) = tokio::join!(
                commit(pipeline, committing.take()),
                embed_document(pipeline, job, slot, library, version, doc, &mut budget),
            );
            if let Some((slot, state)) = committed {
                finish(pipeline, job, slot, state);
            }
            match embedded {
                Ok(next) => committing = Some(next),
                Err(reason) => finish(pipeline, job, slot, FileState::Failed { reason }),
            }
        }
        if refreshed.elapsed() >= pipeline.refresh_every {
            // The final refresh below reports a failure; one on the way
            // only leaves searches slower until the next.
            if let Err(err) = pipeline.store.refresh_indexes().await {
                tracing::warn!(%err, "could not fold new rows into the indexes mid-job");
            }
            refreshed = std::time::Instant::now();
        }
    }

    if let Some((slot, state)) = commit(pipeline, committing.take()).await {
        finish(pipeline, job, slot, state);
    }
    job.set_state(JobState::Indexing, None);
    let error = pipeline.store.refresh_indexes().await.err().map(|e| {
        reported(
            &e,
            "the search index could not be updated; the documents are stored and the next upload or restart retries",
        )
    });
    job.set_state(JobState::Done, error);
}

/// Moves a file to its final state and counts the outcome.
fn finish(pipeline: &Pipeline<'_>, job: &JobHandle, slot: FileSlot, state: FileState) {
    match &state {
        FileState::Stored { new_chunks, .. } => {
            pipeline.metrics.file("stored");
            pipeline.metrics.chunks_stored(*new_chunks);
        }
        FileState::Failed { .. } | FileState::Skipped { .. } => {
            pipeline.metrics.file(state.name());
        }
        _ => {}
    }
    job.set_file(slot, state);
}

/// What a user is told about a storage failure: what happened and an id
/// to quote. The error itself, which names the store's paths and the
/// storage library's source files, goes to the log under that id.
fn reported(err: &dyn std::fmt::Display, what: &str) -> String {
    let id = uuid::Uuid::new_v4();
    tracing::error!(correlation_id = %id, error = %err, "{what}");
    format!("{what} (correlation id {id})")
}

/// A document chunked and embedded, waiting for its commit.
struct Embedded {
    slot: FileSlot,
    document: DocumentChunks,
}

/// Chunks and embeds one document.
async fn embed_document(
    pipeline: &Pipeline<'_>,
    job: &JobHandle,
    slot: FileSlot,
    library: &str,
    version: &str,
    doc: &Extracted,
    budget: &mut Budget,
) -> Result<Embedded, String> {
    let chunks = chunk_document(doc, &pipeline.chunking);
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
    // Each chunk is embedded with its context (title, headings; the
    // description on the first chunk), so a passage knows its page.
    let contexts = chunk_contexts(doc.title.as_deref(), doc.description.as_deref(), &chunks);
    let inputs = embedding_inputs(&chunks, &contexts);
    let ids: Vec<String> = chunks
        .iter()
        .zip(&inputs)
        .map(|(c, input)| chunk_id(library, version, &doc.file_path, c.index, input))
        .collect();
    let vectors = pipeline
        .embedder
        .embed_many(inputs)
        .await
        .map_err(|e| format!("embedding failed: {e}"))?;
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

/// Stores an embedded document in one commit, if there is one; says which
/// file it was and how it ended.
async fn commit(
    pipeline: &Pipeline<'_>,
    embedded: Option<Embedded>,
) -> Option<(FileSlot, FileState)> {
    let Embedded { slot, document } = embedded?;
    let state = match pipeline.store.replace_document(&document).await {
        Ok(result) => FileState::Stored {
            chunks: document.chunks.len(),
            new_chunks: result.inserted,
        },
        Err(e) => FileState::Failed {
            reason: reported(&e, "the document could not be stored"),
        },
    };
    Some((slot, state))
}
