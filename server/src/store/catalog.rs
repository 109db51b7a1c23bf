//! What the store holds, by library, version and document.
//!
//! Listing reads a few small columns of the rows, so the result is cached
//! and keyed on the table version: any write (ours, or another server's once
//! it is seen) makes a new version and the next listing reads what changed,
//! fragment by fragment ([`fragments`]). The same read stamps every library
//! version's rows, which tells the in-memory copy which of its segments are
//! still current ([`super::resident::published`]).

mod fragments;

use std::sync::Arc;

use index_core::catalog::{Deleted, DocumentInfo, LibraryInfo, VersionInfo};
use index_core::StoreCounts;

use super::resident::published::{PublishedVersion, PublishedVersions};
use super::{filter, Store, StoreError};
pub(super) use fragments::Fragments;
pub use fragments::ScanCounts;

/// Every document, and the libraries they make up, as of one table
/// version. Every search resolves its library against the list, so it is
/// summed up once per version, not once per query (at 1M chunks that is
/// ~80k documents to walk).
#[derive(Debug)]
pub(super) struct Catalog {
    version: u64,
    documents: Arc<Vec<DocumentInfo>>,
    libraries: Arc<Vec<LibraryInfo>>,
    published: Arc<PublishedVersions>,
}

/// The documents, libraries and published versions of one table version.
type Listing = (
    Arc<Vec<DocumentInfo>>,
    Arc<Vec<LibraryInfo>>,
    Arc<PublishedVersions>,
);

impl Catalog {
    /// Its listing, if it is of table version `version`.
    fn at(&self, version: u64) -> Option<Listing> {
        (self.version == version).then(|| {
            (
                self.documents.clone(),
                self.libraries.clone(),
                self.published.clone(),
            )
        })
    }
}

pub use index_core::catalog::Target;

/// The rows a target covers, as a filter.
fn target_sql(target: &Target<'_>) -> String {
    match *target {
        Target::Library(l) => format!("library = {}", filter::sql_string(l)),
        Target::Version(l, v) => filter::version(l, v),
        Target::Document(l, v, p) => filter::document(l, v, p),
    }
}

/// The rows of a library or a version, as a filter; `None` for a
/// document, which deleting a version's side tables (what jobs staged,
/// sources) leaves alone.
pub(super) fn versions_sql(target: &Target<'_>) -> Option<String> {
    match target {
        Target::Document(..) => None,
        whole => Some(target_sql(whole)),
    }
}

impl Store {
    /// Every stored document, sorted by library, version and path.
    pub async fn documents(&self) -> Result<Arc<Vec<DocumentInfo>>, StoreError> {
        Ok(self.catalog().await?.0)
    }

    /// Every library with its versions (newest first) and counts.
    pub async fn libraries(&self) -> Result<Arc<Vec<LibraryInfo>>, StoreError> {
        Ok(self.catalog().await?.1)
    }

    /// Every published library version and its rows' stamp, as of the
    /// table's current version.
    pub async fn published(&self) -> Result<Arc<PublishedVersions>, StoreError> {
        Ok(self.catalog().await?.2)
    }

    /// The listing cached for table version `version`, if it is that one.
    async fn cached(&self, version: u64) -> Option<Listing> {
        self.catalog
            .read()
            .await
            .as_ref()
            .and_then(|c| c.at(version))
    }

    /// The documents, libraries and published versions as of the table's
    /// current version.
    async fn catalog(&self) -> Result<Listing, StoreError> {
        let version = self.chunks.version().await?;
        if let Some(listing) = self.cached(version).await {
            return Ok(listing);
        }
        // One scan at a time: after a commit every search in flight asks at
        // once. The others wait for the first and find its result.
        let mut fragments = self.catalog_scan.lock().await;
        if let Some(listing) = self.cached(version).await {
            return Ok(listing);
        }
        let dataset = self
            .chunks
            .dataset()
            .ok_or_else(|| StoreError::Shape("the chunk table is not a Lance dataset".into()))?
            .get()
            .await?;
        let ((documents, stamps), counts) = fragments.scan(&dataset).await?;
        tracing::debug!(?counts, "catalog read");
        *self
            .catalog_counts
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = counts;
        // The listing is of the dataset read, which may be newer than the
        // version asked about.
        let version = dataset.version().version;
        let documents = Arc::new(documents);
        let libraries = Arc::new(summarise(&documents));
        let mut versions: Vec<PublishedVersion> = libraries
            .iter()
            .flat_map(|l| {
                l.versions.iter().map(|v| PublishedVersion {
                    library: l.name.clone(),
                    version: v.version.clone(),
                    chunks: v.chunks as usize,
                    stamp: stamps
                        .get(&(l.name.clone(), v.version.clone()))
                        .copied()
                        .unwrap_or_default(),
                    updated_at: v.updated_at,
                })
            })
            .collect();
        // By name, as `PublishedVersions::get` searches (a library's versions are
        // listed newest first).
        versions.sort_unstable_by(|a, b| (&a.library, &a.version).cmp(&(&b.library, &b.version)));
        let published = Arc::new(PublishedVersions {
            table_version: version,
            versions,
        });
        *self.catalog.write().await = Some(Catalog {
            version,
            documents: documents.clone(),
            libraries: libraries.clone(),
            published: published.clone(),
        });
        Ok((documents, libraries, published))
    }

    /// How the last listing was read: fragments reused, counted again and
    /// read, and rows read (what a commit cost the catalog).
    pub fn catalog_counts(&self) -> ScanCounts {
        *self
            .catalog_counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets what the catalog read, so that the next listing reads every
    /// row, as one after start-up does: what the benches compare a commit's
    /// listing with.
    pub async fn forget_catalog(&self) {
        *self.catalog_scan.lock().await = Fragments::default();
        *self.catalog.write().await = None;
    }

    /// How many libraries, documents and chunks are stored.
    pub async fn counts(&self) -> Result<StoreCounts, StoreError> {
        let libraries = self.libraries().await?;
        Ok(StoreCounts {
            libraries: libraries.len() as u64,
            documents: libraries.iter().map(|l| l.documents).sum(),
            chunks: libraries.iter().map(|l| l.chunks).sum(),
        })
    }

    /// Deletes a document, a version or a library in one commit, and for
    /// a version or library whatever jobs have staged for it (see
    /// [`super::staging`]), so nothing of it is published after. Nothing
    /// matched is not an error here: the caller decides what that means.
    #[tracing::instrument(skip(self))]
    pub async fn delete(&self, target: Target<'_>) -> Result<Deleted, StoreError> {
        let _writer = self.begin_write().await?;
        self.withdraw_staged(&target).await?;
        let sources = self.forget_sources(&target).await?;
        let documents = self.documents().await?;
        let doomed: Vec<&DocumentInfo> = documents.iter().filter(|d| target.matches(d)).collect();
        let counted = Deleted {
            documents: doomed.len() as u64,
            chunks: doomed.iter().map(|d| d.chunks).sum(),
            cancelled_jobs: 0,
            sources,
        };
        if counted.documents == 0 {
            return Ok(counted);
        }
        let result = self.chunks.delete(&target_sql(&target)).await?;
        // Servers too old to report the count answer 0.
        let chunks = match result.num_deleted_rows {
            0 => counted.chunks,
            n => n,
        };
        Ok(Deleted { chunks, ..counted })
    }
}

/// Every library with its versions (newest first) and counts, from the
/// documents sorted by library, version and path.
fn summarise(documents: &[DocumentInfo]) -> Vec<LibraryInfo> {
    let mut libraries: Vec<LibraryInfo> = Vec::new();
    for doc in documents {
        if libraries.last().is_none_or(|l| l.name != doc.library) {
            libraries.push(LibraryInfo {
                name: doc.library.clone(),
                versions: Vec::new(),
                documents: 0,
                chunks: 0,
                updated_at: 0,
            });
        }
        let Some(lib) = libraries.last_mut() else {
            continue;
        };
        if lib.versions.last().is_none_or(|v| v.version != doc.version) {
            lib.versions.push(VersionInfo {
                version: doc.version.clone(),
                documents: 0,
                chunks: 0,
                updated_at: 0,
            });
        }
        if let Some(v) = lib.versions.last_mut() {
            v.documents += 1;
            v.chunks += doc.chunks;
            v.updated_at = v.updated_at.max(doc.updated_at);
        }
        lib.documents += 1;
        lib.chunks += doc.chunks;
        lib.updated_at = lib.updated_at.max(doc.updated_at);
    }
    for lib in &mut libraries {
        lib.versions
            .sort_by(|a, b| index_core::version::compare(&b.version, &a.version));
    }
    libraries
}
