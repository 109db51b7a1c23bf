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

use index_core::job::{FileProgress, FileState, JobState, Upload};
use ingest_core::chunk::ChunkConfig;
use ingest_core::extract::{self, ArchiveLimits, ExtractError, Extraction};

use super::budget::{Budget, JobLimits};
use super::embedding::embed_document;
pub use super::input::{Input, Read};
use super::jobs::FileSlot;
use super::memory::{MemoryBudget, Reservation, RESERVE_WAIT};
use super::ocr::OcrStatus;
use super::outcome::{finish, reported};
use super::reuse;
use super::scanned::{pages_named, read_by_ocr};
use super::staging::{Embedded, Staging};
use super::JobHandle;
use crate::embed::EmbedQueue;
use crate::metrics::Metrics;
use crate::store::{Replace, Store};

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
    if run.finish_staging().await && run.publish(&Replace::Documents).await {
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
    /// What the inputs' reading left out by rule, for the job's notes.
    notes: Vec<String>,
}

impl<'p, 'a> JobRun<'p, 'a> {
    pub fn new(pipeline: &'p Pipeline<'a>, job: &'p JobHandle) -> Self {
        Self {
            pipeline,
            job,
            budget: Budget::new(pipeline.job_limits),
            staging: Staging::new(job.id()),
            committing: None,
            notes: Vec::new(),
        }
    }

    /// What the inputs taken so far left out by rule (a package's pip
    /// requirements files, its templates), said once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Extracts, chunks and embeds one input (listed as `slot`), staging
    /// the one before it meanwhile. Each step that fails ends the file
    /// with its reason; the job goes on.
    pub async fn take(&mut self, input: Input, slot: FileSlot) {
        self.job.set_file(slot, FileState::Extracting);
        if let Err(reason) = self.take_steps(input, slot).await {
            finish(
                self.pipeline.metrics,
                self.job,
                slot,
                FileState::Failed { reason },
            );
        }
    }

    /// [`Self::take`]'s steps, in order; `Err` is why the file failed.
    async fn take_steps(&mut self, input: Input, slot: FileSlot) -> Result<(), String> {
        let limits = self.archive_limits();
        let memory = self.reserve_memory(&input, &limits).await?;
        let extracted = self.extract(input, limits, memory).await?;
        let Extracted {
            mut extraction,
            mut memory,
            pdf,
        } = extracted;
        self.notes.append(&mut extraction.notes);
        self.read_pages_without_text(&mut extraction, &mut memory, pdf)
            .await?;
        self.charge_text(&extraction, &mut memory)?;
        let slots = self.list_documents(&extraction, slot)?;
        self.embed_and_stage(&extraction, slots).await;
        Ok(())
    }

    /// The archive limits for the next input: an archive stops at the text
    /// its job may still take.
    fn archive_limits(&self) -> ArchiveLimits {
        let limits = self.pipeline.archive_limits;
        ArchiveLimits {
            max_text_bytes: self.budget.text_left().min(limits.max_text_bytes),
            ..limits
        }
    }

    /// Reserves the memory the input's headers declare before it is
    /// opened: a file waits here (bounded, holding nothing) rather than
    /// midway, holding some.
    async fn reserve_memory(
        &self,
        input: &Input,
        limits: &ArchiveLimits,
    ) -> Result<Reservation, String> {
        let needed = extract::memory_estimate(&input.name, &input.bytes, limits);
        self.pipeline
            .memory
            .reserve(needed, RESERVE_WAIT)
            .await
            .map_err(|err| format!("not extracted: {err}"))
    }

    /// Extracts the input on a blocking thread, within the extraction
    /// deadline. A PDF of its own is read so that pages without text are
    /// named rather than refused, when OCR can read them; its bytes come
    /// back for the OCR.
    async fn extract(
        &self,
        input: Input,
        limits: ArchiveLimits,
        mut memory: Reservation,
    ) -> Result<Extracted, String> {
        let pipeline = self.pipeline;
        let Ok(permit) = pipeline.extractions.clone().acquire_owned().await else {
            // The semaphore is never closed; if it were, nothing could run.
            return Err("the server is shutting down".into());
        };
        let for_ocr = pipeline.ocr.ready().is_some() && input.reads_as_pdf();
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
                        notes: Vec::new(),
                    }),
                Read::ByName => extract::extract_metered(&name, &bytes, &limits, &mut memory),
                Read::As(format) => {
                    extract::extract_as(&name, format, &bytes, &limits, &mut memory)
                }
                Read::PackageDocs(selection) => ingest_core::package::extract_package_docs(
                    &name,
                    &bytes,
                    &limits,
                    &selection,
                    &mut memory,
                )
                .map(|docs| docs.extraction),
            };
            (extracted, memory, for_ocr.then_some(bytes))
        });
        let deadline = pipeline.job_limits.extract_deadline;
        let Ok(extracted) = tokio::time::timeout(deadline, extracting).await else {
            tracing::warn!(
                ?deadline,
                "an extraction ran past its deadline and was abandoned"
            );
            return Err(format!(
                "extracting took longer than {} s and was abandoned (a malformed file, or one \
                 too large to read in time: see --extract-timeout-secs)",
                deadline.as_secs_f64()
            ));
        };
        match extracted {
            Ok((Ok(extraction), memory, pdf)) => Ok(Extracted {
                extraction,
                memory,
                pdf,
            }),
            Ok((Err(err @ ExtractError::NoTextInPdf), ..)) => {
                Err(format!("{err}; {}", pipeline.ocr.hint()))
            }
            Ok((Err(err), ..)) => Err(err.to_string()),
            Err(join) => Err(format!("extraction crashed: {join}")),
        }
    }

    /// Pages without text: read by OCR when it can, else named in the
    /// documents' warnings.
    async fn read_pages_without_text(
        &self,
        extraction: &mut Extraction,
        memory: &mut Reservation,
        pdf: Option<Vec<u8>>,
    ) -> Result<(), String> {
        let ocr = self.pipeline.ocr.ready();
        match (ocr, pdf, extraction.documents.first_mut()) {
            (Some(ocr), Some(pdf), Some(doc)) => {
                // OCR may take minutes: hold only what it keeps (the text so
                // far and the PDF's bytes), not what extraction needed.
                memory.shrink_to(doc.text.len() as u64 + pdf.len() as u64);
                read_by_ocr(ocr, doc, pdf).await
            }
            _ => {
                for doc in &mut extraction.documents {
                    let pages = doc.pages_without_text();
                    if !pages.is_empty() {
                        doc.warnings.push(format!(
                            "{} without usable text left out; {}",
                            pages_named(&pages),
                            self.pipeline.ocr.hint()
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Spends the job's budget before anything is chunked or embedded: an
    /// upload that would exceed it fails whole. The text stays reserved
    /// until this input's documents are embedded; the rest of what
    /// extraction held goes back now.
    fn charge_text(
        &mut self,
        extraction: &Extraction,
        memory: &mut Reservation,
    ) -> Result<(), String> {
        let text_bytes: u64 = extraction
            .documents
            .iter()
            .map(|d| d.text.len() as u64)
            .sum();
        memory.shrink_to(text_bytes);
        self.budget.take_text(text_bytes)
    }

    /// The job's slots for the input's documents: the input's own, or for
    /// an archive one per document (listed all at once, queued), with the
    /// entries it left out listed as skipped.
    fn list_documents(
        &self,
        extraction: &Extraction,
        slot: FileSlot,
    ) -> Result<Vec<FileSlot>, String> {
        if !extraction.archive {
            return Ok(vec![slot]);
        }
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
            return Err("the archive holds no files".into());
        }
        // Entries skipped (types docshelf does not read) end here.
        for _ in &extraction.skipped {
            self.pipeline.metrics.file("skipped");
        }
        let mut entries = self.job.expand_file(slot, entries);
        self.job.expect_listed();
        entries.truncate(extraction.documents.len());
        Ok(entries)
    }

    /// Embeds each document while the one before it is staged.
    async fn embed_and_stage(&mut self, extraction: &Extraction, slots: Vec<FileSlot>) {
        let (pipeline, job) = (self.pipeline, self.job);
        let sources = reuse::Sources {
            store: pipeline.store,
            embedder: pipeline.embedder,
            metrics: pipeline.metrics,
        };
        for (doc, slot) in extraction.documents.iter().zip(slots) {
            job.warn_file(slot, doc.warnings.clone());
            let (staged, embedded) = tokio::join!(
                self.staging.stage(
                    pipeline.store,
                    pipeline.metrics,
                    job,
                    self.committing.take()
                ),
                embed_document(
                    &pipeline.chunking,
                    &sources,
                    job,
                    slot,
                    doc,
                    &mut self.budget
                ),
            );
            if let Some((slot, state)) = staged {
                finish(pipeline.metrics, job, slot, state);
            }
            match embedded {
                Ok(next) => self.committing = Some(next),
                Err(reason) => finish(pipeline.metrics, job, slot, FileState::Failed { reason }),
            }
        }
    }

    /// Stages the last embedded document. Returns whether the job may go
    /// on to publish: `false` when it was stopped meanwhile.
    pub async fn finish_staging(&mut self) -> bool {
        if let Some((slot, state)) = self
            .staging
            .stage(
                self.pipeline.store,
                self.pipeline.metrics,
                self.job,
                self.committing.take(),
            )
            .await
        {
            finish(self.pipeline.metrics, self.job, slot, state);
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
        self.staging
            .publish(
                self.pipeline.store,
                self.pipeline.metrics,
                self.job,
                replace,
            )
            .await
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
    // The version just published is read into memory before the job ends
    // (see `store::resident`), so that its searches answer from memory
    // from the first.
    if let Err(err) = store.hold_published(job.library(), job.version()).await {
        tracing::warn!(%err, "cannot read the published version into memory; it is searched on disk until a search asks for it");
    }
    job.set_state(JobState::Done, error);
}

/// An input extracted: its documents, the memory they hold, and a PDF's
/// bytes when OCR is to read its pages without text.
struct Extracted {
    extraction: Extraction,
    memory: Reservation,
    pdf: Option<Vec<u8>>,
}
