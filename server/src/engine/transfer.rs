//! A library version moved between servers without embedding it again:
//! exported with its vectors, imported as one publish (see
//! [`crate::transfer`] for the file). Admins only: an export holds every
//! chunk of a version, and an import replaces one whole.

use index_core::access::Caller;
use index_core::transfer::ImportedVersion;
use index_core::validate;

use super::{Engine, EngineError, MODEL_NAME};
use crate::embed::DIM;
use crate::transfer::{self, Header, TransferError};
use index_core::job::JobState;

impl Engine {
    /// `library` at `version` (or `latest`) as an export file.
    #[tracing::instrument(skip(self, caller))]
    pub async fn export_version(
        &self,
        caller: &Caller,
        library: &str,
        version: &str,
    ) -> Result<(Header, Vec<u8>), EngineError> {
        self.require_admin(caller, format!("export the library {library:?}").as_str())?;
        let version = self.version_of(caller, library, version).await?;
        let batches = self.store.version_rows(library, &version).await?;
        // Counted from the rows written, not from a second read that a
        // publish could move.
        let mut paths = std::collections::BTreeSet::new();
        for batch in &batches {
            let column = crate::store::string_column(batch, "file_path")?;
            paths.extend(column.iter().flatten().map(str::to_owned));
        }
        let documents = paths.len() as u64;
        if batches.iter().all(|b| b.num_rows() == 0) {
            // Deleted since `version_of` found it.
            return Err(EngineError::UnknownVersion {
                library: library.to_owned(),
                version,
                versions: Vec::new(),
            });
        }
        let header = Header {
            format: String::new(),
            model: MODEL_NAME.to_owned(),
            dimensions: DIM,
            library: library.to_owned(),
            version,
            documents,
            chunks: batches.iter().map(|b| b.num_rows() as u64).sum(),
            sha256: String::new(),
        };
        // Encoding and hashing every row holds a CPU.
        let written = tokio::task::spawn_blocking(move || {
            let bytes = transfer::write(header.clone(), &batches)?;
            let (header, _) = transfer::header(&bytes)?;
            Ok::<_, TransferError>((header, bytes))
        })
        .await
        .map_err(|e| crate::store::StoreError::TaskStopped(format!("writing an export: {e}")))??;
        Ok(written)
    }

    /// Takes in an export: its library version becomes exactly what the
    /// export holds, in one commit, as a source's refresh replaces a
    /// version. Refused before anything is written if the file is not a
    /// whole export of this server's model.
    #[tracing::instrument(skip_all, fields(bytes = bytes.len()))]
    pub async fn import_version(
        &self,
        caller: &Caller,
        bytes: &[u8],
    ) -> Result<ImportedVersion, EngineError> {
        self.require_admin(caller, "import a library version")?;
        let (header, stream) = transfer::header(bytes)?;
        let target = format!("{}@{}", header.library, header.version);
        let result = self.import_checked(header, stream).await;
        self.audited(caller, "import", &target, result).await
    }

    async fn import_checked(
        &self,
        header: Header,
        stream: &[u8],
    ) -> Result<ImportedVersion, EngineError> {
        if header.model != MODEL_NAME || header.dimensions != DIM {
            return Err(TransferError::OtherModel {
                found: header.model,
                found_dimensions: header.dimensions,
                ours: MODEL_NAME.to_owned(),
                ours_dimensions: DIM,
            }
            .into());
        }
        validate::library(&header.library)?;
        validate::version(&header.version)?;
        let stream = stream.to_vec();
        let checked = header.clone();
        let batches = tokio::task::spawn_blocking(move || transfer::rows(&checked, &stream))
            .await
            .map_err(|e| {
                crate::store::StoreError::TaskStopped(format!("reading an import: {e}"))
            })??;
        let job = self.create_job(&header.library, &header.version)?;
        let published = self
            .store
            .replace_version(&job.id(), &header.library, &header.version, &batches)
            .await;
        let published = match published {
            Ok(published) => published,
            Err(err) => {
                job.set_state(JobState::Failed, Some(err.to_string()));
                return Err(err.into());
            }
        };
        let indexed = self.store.refresh_indexes().await;
        if let Err(err) = self
            .store
            .hold_published(&header.library, &header.version)
            .await
        {
            tracing::warn!(%err, "cannot read the imported version into memory");
        }
        job.set_state(
            JobState::Done,
            indexed
                .as_ref()
                .err()
                .map(|e| format!("the search index could not be updated: {e}")),
        );
        Ok(ImportedVersion {
            library: header.library,
            version: header.version,
            documents: header.documents,
            chunks: header.chunks,
            inserted: published.inserted,
            deleted: published.deleted,
        })
    }
}
