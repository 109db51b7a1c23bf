//! The life of an upload: extract → chunk → embed → stage, file by file,
//! then publish the whole job at once.
//!
//! Each document is staged (set aside where no search sees it, see
//! [`crate::store::staging`]) while the next one is embedded, so the
//! store's work does not add to the embedding time. When every file is
//! through, everything staged is published into the version in one
//! commit: searches, listings and `latest` see the version as it was
//! before the job, or with all of it, never half of it. A crash, a
//! cancellation or a failed publish leaves the version as it was.
//!
//! A file that fails (bad PDF, unknown encoding) fails alone with its
//! reason; the rest of the job goes on. The job reports done only after the
//! search indexes cover what it published.

use std::time::{SystemTime, UNIX_EPOCH};

use index_core::chunk::{chunk_document, ChunkConfig};
use index_core::context::{chunk_contexts, embedding_inputs};
use index_core::extract::Format;
use index_core::extract::{self, ArchiveLimits, ExtractError, Extracted, Extraction};
use index_core::ids::chunk_id;
use index_core::job::{FileProgress, FileState, JobState, Upload};

use super::budget::{Budget, JobLimits};
use super::jobs::FileSlot;
use super::memory::{MemoryBudget, RESERVE_WAIT};
use super::ocr::OcrStatus;
use super::reuse::vectors_for;
use super::scanned::{pages_named, read_by_ocr};
use super::JobHandle;
use crate::embed::EmbedQueue;
use crate::metrics::Metrics;
use crate::store::{ChunkRow, DocumentChunks, Replace, StorageFailure, Store, StoreError};

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
    /// The memory every job's extraction draws on, together.
    pub memory: &'a MemoryBudget,
    /// Whether PDF pages without a text layer are read by OCR.
    pub ocr: &'a OcrStatus,
}

/// The default of `--index-refresh-secs`, which no longer changes anything:
/// jobs used to store documents one commit at a time and fold them into
/// the indexes every few seconds; now nothing reaches the searched table
/// before the job publishes, and the indexes are refreshed right after.
/// The flag is accepted so that existing command lines keep working.
pub const REFRESH_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// One thing for a job to read: a file's bytes and the address it is
/// stored under.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
    pub read: Read,
}

/// How an input is read.
#[derive(Debug, Clone, Copy)]
pub enum Read {
    /// By its name's extension: uploads.
    ByName,
    /// As this format, whatever its name: a fetched page, whose
    /// `Content-Type` said what it is (a URL often has no extension).
    As(Format),
    /// A package archive from a registry, of which only the documentation
    /// is read (README, docs folder).
    PackageDocs,
}

impl Input {
    /// Whether this input is read as a PDF of its own (not an archive).
    fn reads_as_pdf(&self) -> bool {
        match self.read {
            Read::ByName => Format::from_path(&self.name) == Some(Format::Pdf),
            Read::As(format) => format == Format::Pdf,
            Read::PackageDocs => false,
        }
    }
}

impl From<Upload> for Input {
    fn from(upload: Upload) -> Self {
        Self {
            name: upload.name,
            bytes: upload.bytes,
            read: Read::ByName,
        }
    }
}

/// Runs a whole upload job. Never fails as a whole for one file's sake;
/// the returned status says what happened to each.
#[tracing::instrument(skip_all, fields(library = job.library(), version = job.version(), uploads = uploads.len()))]
pub async fn run_job(pipeline: &Pipeline<'_>, job: &JobHandle, uploads: Vec<Upload>) {
    // Every file is listed, queued, before any work: the client sees the
    // whole job at once.
    let slots: Vec<FileSlot> = uploads
        .iter()
        .map(|u| job.add_file(&u.name, FileState::Queued))
        .collect();
    let mut run = JobRun::new(pipeline, job);
    for (upload, slot) in uploads.into_iter().zip(slots) {
        run.take(upload.into(), slot).await;
    }
    if run.finish_staging().await {
        run.publish(&Replace::Documents).await;
        finish_indexing(pipeline, job).await;
    }
}

/// A job in progress: its budget, what it staged, and the document being
/// staged while the next is embedded. Inputs are taken one at a time as
/// they come (an upload's files, or a crawl's pages as they are fetched),
/// then [`Self::publish`] puts everything into the version at once.
pub struct JobRun<'p, 'a> {
    pipeline: &'p Pipeline<'a>,
    job: &'p JobHandle,
    budget: Budget,
    staging: Staging,
    /// The last embedded document, staged while the next one is embedded.
    committing: Option<Embedded>,
}

impl<'p, 'a> JobRun<'p, 'a> {
    pub fn new(pipeline: &'p Pipeline<'a>, job: &'p JobHandle) -> Self {
        Self {
            pipeline,
            job,
            budget: Budget::new(pipeline.job_limits),
            staging: Staging::new(job.id()),
            committing: None,
        }
    }

    /// Extracts, chunks and embeds one input (listed as `slot`), staging
    /// the one before it meanwhile.
    pub async fn take(&mut self, input: Input, slot: FileSlot) {
        let (pipeline, job) = (self.pipeline, self.job);
        let (library, version) = (job.library(), job.version());
        job.set_file(slot, FileState::Extracting);
        // An archive stops at the text its job may still take, and the
        // memory its headers declare is reserved before it is opened: a
        // file waits here (bounded) rather than midway, holding some.
        let limits = ArchiveLimits {
            max_text_bytes: self
                .budget
                .text_left()
                .min(pipeline.archive_limits.max_text_bytes),
            ..pipeline.archive_limits
        };
        let needed = extract::memory_estimate(&input.name, &input.bytes, &limits);
        let mut memory = match pipeline.memory.reserve(needed, RESERVE_WAIT).await {
            Ok(memory) => memory,
            Err(err) => {
                let reason = format!("not extracted: {err}");
                return finish(pipeline, job, slot, FileState::Failed { reason });
            }
        };
        let Ok(permit) = pipeline.extractions.clone().acquire_owned().await else {
            // The semaphore is never closed; if it were, nothing could run.
            let reason = "the server is shutting down".into();
            return finish(pipeline, job, slot, FileState::Failed { reason });
        };
        // A PDF of its own is read so that pages without text are named
        // rather than refused, when OCR can read them; its bytes come back
        // for the OCR.
        let ocr = pipeline.ocr.ready();
        let for_ocr = ocr.is_some() && input.reads_as_pdf();
        // The reservation goes with the thread: one abandoned past its
        // deadline still holds what it uses until it ends.
        let extracting = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let Input { name, bytes, read } = input;
            let extracted = match read {
                _ if for_ocr => extract::extract_pdf_pages(&name, &bytes, &limits, &mut memory)
                    .map(|doc| Extraction {
                        documents: vec![doc],
                        skipped: Vec::new(),
                        archive: false,
                    }),
                Read::ByName => extract::extract_metered(&name, &bytes, &limits, &mut memory),
                Read::As(format) => {
                    extract::extract_as(&name, format, &bytes, &limits, &mut memory)
                }
                Read::PackageDocs => {
                    index_core::package::extract_package_docs(&name, &bytes, &limits, &mut memory)
                        .map(|docs| docs.extraction)
                }
            };
            (extracted, memory, for_ocr.then_some(bytes))
        });
        let deadline = pipeline.job_limits.extract_deadline;
        let Ok(extracted) = tokio::time::timeout(deadline, extracting).await else {
            tracing::warn!(
                ?deadline,
                "an extraction ran past its deadline and was abandoned"
            );
            let reason = format!(
                "extracting took longer than {} s and was abandoned (a malformed file, or one \
                 too large to read in time: see --extract-timeout-secs)",
                deadline.as_secs_f64()
            );
            return finish(pipeline, job, slot, FileState::Failed { reason });
        };
        let (mut extraction, mut memory, pdf) = match extracted {
            Ok((Ok(x), memory, pdf)) => (x, memory, pdf),
            Ok((Err(err @ ExtractError::NoTextInPdf), ..)) => {
                let reason = format!("{err}; {}", pipeline.ocr.hint());
                return finish(pipeline, job, slot, FileState::Failed { reason });
            }
            Ok((Err(err), ..)) => {
                let reason = err.to_string();
                return finish(pipeline, job, slot, FileState::Failed { reason });
            }
            Err(join) => {
                let reason = format!("extraction crashed: {join}");
                return finish(pipeline, job, slot, FileState::Failed { reason });
            }
        };
        // Pages without text: read by OCR when it can, else named.
        match (ocr, pdf, extraction.documents.first_mut()) {
            (Some(ocr), Some(pdf), Some(doc)) => {
                // OCR may take minutes: hold only what it keeps (the text so
                // far and the PDF's bytes), not what extraction needed.
                memory.shrink_to(doc.text.len() as u64 + pdf.len() as u64);
                if let Err(reason) = read_by_ocr(ocr, doc, pdf).await {
                    return finish(pipeline, job, slot, FileState::Failed { reason });
                }
            }
            _ => {
                for doc in &mut extraction.documents {
                    let pages = doc.pages_without_text();
                    if !pages.is_empty() {
                        doc.warnings.push(format!(
                            "{} without usable text left out; {}",
                            pages_named(&pages),
                            pipeline.ocr.hint()
                        ));
                    }
                }
            }
        }
        // The job's budget is spent before anything is chunked or embedded:
        // an upload that would exceed it fails whole, and its text is freed.
        let text_bytes: u64 = extraction
            .documents
            .iter()
            .map(|d| d.text.len() as u64)
            .sum();
        // The text stays reserved until this upload's documents are
        // embedded (the end of this call); the rest goes back now.
        memory.shrink_to(text_bytes);
        if let Err(reason) = self.budget.take_text(text_bytes) {
            return finish(pipeline, job, slot, FileState::Failed { reason });
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
                let reason = "the archive holds no files".into();
                return finish(pipeline, job, slot, FileState::Failed { reason });
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
            let (staged, embedded) = tokio::join!(
                self.staging.stage(pipeline, job, self.committing.take()),
                embed_document(pipeline, job, slot, library, version, doc, &mut self.budget),
            );
            if let Some((slot, state)) = staged {
                finish(pipeline, job, slot, state);
            }
            match embedded {
                Ok(next) => self.committing = Some(next),
                Err(reason) => finish(pipeline, job, slot, FileState::Failed { reason }),
            }
        }
    }

    /// Stages the last embedded document. Returns whether the job may go
    /// on to publish: `false` when it was stopped meanwhile.
    pub async fn finish_staging(&mut self) -> bool {
        if let Some((slot, state)) = self
            .staging
            .stage(self.pipeline, self.job, self.committing.take())
            .await
        {
            finish(self.pipeline, self.job, slot, state);
        }
        !self.job.status().state.is_finished()
    }

    /// Drops everything staged: the job ends without publishing.
    pub async fn discard(self) {
        if let Err(err) = self.pipeline.store.discard_staged(&self.staging.job).await {
            tracing::warn!(%err, job = self.staging.job, "cannot drop the staged rows of a job that publishes nothing (the next start does)");
        }
    }

    /// Publishes everything staged in one commit, replacing `replace` of
    /// the version besides. Returns whether it published; if so the job is
    /// `indexing`, and [`finish_indexing`] ends it.
    pub async fn publish(self, replace: &Replace<'_>) -> bool {
        self.staging.publish(self.pipeline, self.job, replace).await
    }
}

/// Brings the search indexes up to date after a publish and ends the job
/// `done`, saying so truly.
pub async fn finish_indexing(pipeline: &Pipeline<'_>, job: &JobHandle) {
    let store = pipeline.store;
    store.drop_staged_after_publish(&job.id()).await;
    let error = match store.refresh_indexes().await {
        Ok(()) => None,
        Err(err) => Some(reported(
            &err,
            "the search index could not be updated; the published documents are stored, \
             and keyword search sees them after the next upload or restart",
        )),
    };
    job.set_state(JobState::Done, error);
}

/// What a job has staged, and its publishing.
struct Staging {
    job: String,
    /// Rows staged so far: publishing checks they are all still there.
    rows: usize,
    /// The staged documents, by path: a later file of the same path in
    /// the same job replaces an earlier one, as it would have in the store.
    documents: std::collections::HashMap<String, (FileSlot, usize)>,
}

impl Staging {
    fn new(job: String) -> Self {
        Self {
            job,
            rows: 0,
            documents: Default::default(),
        }
    }

    /// Stages an embedded document, if there is one; says which file it
    /// was and how it ended.
    async fn stage(
        &mut self,
        pipeline: &Pipeline<'_>,
        job: &JobHandle,
        embedded: Option<Embedded>,
    ) -> Option<(FileSlot, FileState)> {
        let Embedded { slot, document } = embedded?;
        let path = document.file_path.clone();
        if let Some(&(earlier, chunks)) = self.documents.get(&path) {
            // Same path twice in one upload: the later file wins.
            if let Err(err) = pipeline.store.unstage(&self.job, &path).await {
                let reason = reported(&err, "the document could not be staged");
                return Some((slot, FileState::Failed { reason }));
            }
            self.rows -= chunks;
            self.documents.remove(&path);
            finish(
                pipeline,
                job,
                earlier,
                FileState::Skipped {
                    reason: format!("a later file of this upload has the same path, {path}"),
                },
            );
        }
        let chunks = document.chunks.len();
        let state = match pipeline.store.stage_document(&self.job, &document).await {
            Ok(()) => {
                self.rows += chunks;
                self.documents.insert(path, (slot, chunks));
                FileState::Staged { chunks }
            }
            Err(err) => FileState::Failed {
                reason: reported(&err, "the document could not be staged"),
            },
        };
        Some((slot, state))
    }

    /// Publishes everything staged in one commit and says truly what
    /// happened to each file. Returns whether it published (the job is
    /// then `indexing`); if not, the job has ended.
    async fn publish(
        self,
        pipeline: &Pipeline<'_>,
        job: &JobHandle,
        replace: &Replace<'_>,
    ) -> bool {
        job.set_state(JobState::Publishing, None);
        let store = pipeline.store;
        let published = store
            .publish(&self.job, job.library(), job.version(), self.rows, replace)
            .await;
        let published = match published {
            Ok(published) => published,
            Err(StoreError::Withdrawn { .. }) => {
                // Deleted by another process: its delete dropped the rows.
                let _ = store.discard_staged(&self.job).await;
                job.stop(
                    JobState::Cancelled,
                    "the version was deleted while the job ran; nothing was published",
                    "not stored: the job was cancelled",
                );
                return false;
            }
            Err(err) => {
                let what = reported(&err, "the documents could not be published");
                for (slot, _) in self.documents.into_values() {
                    finish(
                        pipeline,
                        job,
                        slot,
                        FileState::Failed {
                            reason: format!("not stored: {what}"),
                        },
                    );
                }
                if let Err(err) = store.discard_staged(&self.job).await {
                    tracing::warn!(%err, job = self.job, "cannot drop the staged rows of a job that failed to publish (the next start does)");
                }
                job.set_state(
                    JobState::Done,
                    Some(format!("nothing was published: {what}")),
                );
                return false;
            }
        };
        for (path, (slot, chunks)) in self.documents {
            let new_chunks = published.documents.get(&path).map_or(0, |d| d.1);
            finish(
                pipeline,
                job,
                slot,
                FileState::Stored { chunks, new_chunks },
            );
        }
        // Published, and said so before anything else can go wrong: a
        // process that stops from here on stopped after publishing.
        job.set_state(JobState::Indexing, None);
        true
    }
}

/// Moves a file to its final state and counts the outcome.
pub fn finish(pipeline: &Pipeline<'_>, job: &JobHandle, slot: FileSlot, state: FileState) {
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

/// What a user is told about a storage failure: what was not done, what
/// happened underneath (a full disk, permissions, an object store down:
/// see [`StorageFailure`]) and an id to quote. The error itself, which
/// names the store's paths and the storage library's source files, goes to
/// the log under that id.
fn reported(err: &StoreError, what: &str) -> String {
    let id = uuid::Uuid::new_v4();
    tracing::error!(correlation_id = %id, error = %err, "{what}");
    match StorageFailure::of(err) {
        StorageFailure::Other => format!("{what} (correlation id {id})"),
        cause => format!("{what}: {cause} (correlation id {id})"),
    }
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
    let vectors = vectors_for(pipeline, library, &doc.file_path, inputs).await?;
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
