//! The catalog: libraries, versions and documents as people browse them;
//! deletes; and feedback on chunks.

use index_core::access::{Caller, Role};
use index_core::catalog::{Deleted, Document, DocumentInfo, LibraryInfo};
use index_core::document::{reassemble, Piece};
use index_core::feedback::{FeedbackRequest, Votes};
use index_core::job::JobState;
use index_core::library::{self, Resolution};
use index_core::validate::NameError;
use index_core::version;

use super::scope;
use super::{Engine, EngineError};
use crate::store::{StoredChunk, Target};

impl Engine {
    /// Resolves a loosely given library name against the stored ones the
    /// caller may read.
    pub async fn resolve_library(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<Resolution, EngineError> {
        let names: Vec<String> = self
            .visible_libraries(caller)
            .await?
            .iter()
            .map(|l| l.name.clone())
            .collect();
        Ok(library::resolve(name, &names))
    }

    /// Every library the caller may read, with its versions and counts.
    pub async fn libraries(&self, caller: &Caller) -> Result<Vec<LibraryInfo>, EngineError> {
        Ok(self.visible_libraries(caller).await?.as_ref().clone())
    }

    /// Every document the caller may read, library by library, from one
    /// snapshot of the catalog (MCP's resource listing pages through it).
    pub async fn readable_documents(
        &self,
        caller: &Caller,
    ) -> Result<Vec<DocumentInfo>, EngineError> {
        Ok(self
            .store
            .documents()
            .await?
            .iter()
            .filter(|d| Self::may_read(caller, &d.library))
            .cloned()
            .collect())
    }

    /// The documents of a library (optionally one version of it).
    pub async fn documents(
        &self,
        caller: &Caller,
        library: &str,
        version: Option<&str>,
    ) -> Result<Vec<DocumentInfo>, EngineError> {
        let version = match version {
            Some(v) => Some(self.version_of(caller, library, v).await?),
            None => {
                self.require_library(caller, library).await?;
                None
            }
        };
        Ok(self
            .store
            .documents()
            .await?
            .iter()
            .filter(|d| d.library == library && version.as_ref().is_none_or(|v| *v == d.version))
            .cloned()
            .collect())
    }

    /// A stored version of `library`: `version` itself, or the newest for
    /// `latest`. Unknown libraries and versions are errors that list what
    /// exists.
    /// A library the caller may not read is unknown, as one never stored is.
    pub async fn version_of(
        &self,
        caller: &Caller,
        library: &str,
        version: &str,
    ) -> Result<String, EngineError> {
        let libraries = self.visible_libraries(caller).await?;
        scope::version_in(scope::library_named(&libraries, library)?, version)
    }

    /// Fails unless a library named exactly `library` is stored and the
    /// caller may read it.
    async fn require_library(&self, caller: &Caller, library: &str) -> Result<(), EngineError> {
        let libraries = self.visible_libraries(caller).await?;
        scope::library_named(&libraries, library).map(|_| ())
    }

    /// A whole document, reassembled from its chunks (`latest` allowed).
    pub async fn document(
        &self,
        caller: &Caller,
        library: &str,
        version: &str,
        file_path: &str,
    ) -> Result<Document, EngineError> {
        let version = self.version_of(caller, library, version).await?;
        let chunks = self.store.document(library, &version, file_path).await?;
        if chunks.is_empty() {
            return Err(EngineError::UnknownDocument {
                library: library.to_owned(),
                version,
                file_path: file_path.to_owned(),
            });
        }
        let pieces: Vec<Piece> = chunks.iter().map(StoredChunk::piece).collect();
        let whole = reassemble(pieces);
        Ok(Document {
            library: library.to_owned(),
            version,
            file_path: file_path.to_owned(),
            title: chunks.iter().find_map(|c| c.title.clone()),
            text: whole.text,
            chunks: whole.spans,
            updated_at: chunks
                .iter()
                .map(|c| c.created_at_micros / 1_000_000)
                .max()
                .unwrap_or(0),
        })
    }

    /// Deletes a document, a version or a library; names must be exact
    /// (no loose matching for deletes). Deleting nothing is an error.
    ///
    /// Upload jobs still writing into a deleted version or library are
    /// cancelled first, and waited for: they publish nothing, so nothing
    /// of what was deleted comes back (a job in another process finds its
    /// staged rows gone, see [`crate::store::staging`]). A version that
    /// exists only as a running job's upload can be deleted so.
    ///
    /// The caller needs the write role on the library; the delete is
    /// written to the audit log whatever its outcome.
    #[tracing::instrument(skip(self, caller), fields(caller = %caller.name))]
    pub async fn delete(
        &self,
        caller: &Caller,
        target: Target<'_>,
    ) -> Result<Deleted, EngineError> {
        let result = match self.require(caller, Role::Write, target.library()) {
            Ok(()) => self.delete_permitted(caller, target).await,
            Err(err) => Err(err),
        };
        self.audited(caller, "delete", &target.to_string(), result)
            .await
    }

    /// [`Self::delete`], its permission checked.
    pub(super) async fn delete_permitted(
        &self,
        caller: &Caller,
        target: Target<'_>,
    ) -> Result<Deleted, EngineError> {
        let (library, version) = match target {
            Target::Library(l) => (l, None),
            Target::Version(l, v) | Target::Document(l, v, _) => (l, Some(v)),
        };
        if version.is_some_and(version::is_latest) {
            return Err(EngineError::InvalidName(NameError::ReservedVersion));
        }
        let cancelled = match target {
            Target::Document(..) => 0,
            _ => self.cancel_jobs_into(library, version).await,
        };
        if cancelled == 0 {
            let stored = match version {
                Some(v) => self.version_of(caller, library, v).await.map(|_| ()),
                None => self.require_library(caller, library).await,
            };
            // A source that stored nothing (its fetch failed) has no
            // documents, and is deleted all the same.
            if let Err(err) = stored {
                if self.store.sources_filling(&target).await? == 0 {
                    return Err(err);
                }
            }
        }
        let mut deleted = self.store.delete(target).await?;
        deleted.cancelled_jobs = cancelled as u64;
        if deleted.documents == 0 {
            if let Target::Document(l, v, p) = target {
                return Err(EngineError::UnknownDocument {
                    library: l.to_owned(),
                    version: v.to_owned(),
                    file_path: p.to_owned(),
                });
            }
        }
        Ok(deleted)
    }

    /// Cancels this process's jobs writing into `library` (`version`) and
    /// waits until each has ended; says how many there were.
    async fn cancel_jobs_into(&self, library: &str, version: Option<&str>) -> usize {
        let running = self.jobs.writing_into(library, version);
        for job in &running {
            tracing::info!(
                job = job.id(),
                "cancelling a job whose version is being deleted"
            );
            job.cancel();
        }
        futures::future::join_all(running.iter().map(|job| job.finished())).await;
        // A job that was publishing ran to its end instead; the delete
        // removes what it published.
        running
            .iter()
            .filter(|job| job.status().state == JobState::Cancelled)
            .count()
    }

    /// Records a like or dislike, and returns the chunk's votes so far.
    /// A vote changes ranking, so it is a write: the caller needs the write
    /// role on the chunk's library, and a chunk of a library it may not
    /// read is unknown.
    pub async fn feedback(
        &self,
        caller: &Caller,
        request: &FeedbackRequest,
    ) -> Result<Votes, EngineError> {
        // Ids are 32 hex digits: anything over the id limit names no
        // chunk, and is refused without being looked up or echoed.
        index_core::validate::id("chunk_id", &request.chunk_id)?;
        let library = self
            .store
            .chunk_library(&request.chunk_id)
            .await?
            .filter(|library| Self::may_read(caller, library))
            .ok_or_else(|| EngineError::UnknownChunk(request.chunk_id.clone()))?;
        let result = self.vote(caller, &library, request).await;
        self.audited(caller, "feedback", &library, result).await
    }

    async fn vote(
        &self,
        caller: &Caller,
        library: &str,
        request: &FeedbackRequest,
    ) -> Result<Votes, EngineError> {
        self.require(caller, Role::Write, library)?;
        self.store
            .record_vote(&request.chunk_id, request.vote)
            .await?;
        let votes = self.store.votes(&[request.chunk_id.as_str()]).await?;
        Ok(votes.get(&request.chunk_id).copied().unwrap_or_default())
    }
}
