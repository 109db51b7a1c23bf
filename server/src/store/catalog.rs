//! What the store holds, by library, version and document.
//!
//! Listing scans a few small columns of every row, so the result is cached
//! and keyed on the table version: any write (ours, or another server's once
//! it is seen) makes a new version and the next listing rescans. The same
//! scan stamps every library version's rows, which tells the in-memory
//! copy which of its segments are still current
//! ([`super::resident::published`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, TimestampMicrosecondArray};
use futures::TryStreamExt;
use index_core::catalog::{Deleted, DocumentInfo, LibraryInfo, VersionInfo};
use index_core::StoreCounts;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

use super::resident::published::{PublishedVersion, PublishedVersions, Stamp};
use super::{filter, string_column, Store, StoreError};

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
        // once, and each scan reads a few columns of every row. The others
        // wait for the first and find its result.
        let _one_scan = self.catalog_scan.lock().await;
        if let Some(listing) = self.cached(version).await {
            return Ok(listing);
        }
        let (documents, stamps) = self.scan_documents().await?;
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

    /// Every document, and each library version's [`Stamp`].
    async fn scan_documents(
        &self,
    ) -> Result<(Vec<DocumentInfo>, BTreeMap<(String, String), Stamp>), StoreError> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .query()
            .select(Select::columns(&[
                "library",
                "version",
                "file_path",
                "title",
                "chunk_id",
                "created_at",
            ]))
            .execute()
            .await?
            .try_collect()
            .await?;
        let mut docs: BTreeMap<(String, String, String), DocumentInfo> = BTreeMap::new();
        let mut stamps: BTreeMap<(String, String), Stamp> = BTreeMap::new();
        for batch in &batches {
            let (library, version, path, title) = (
                string_column(batch, "library")?,
                string_column(batch, "version")?,
                string_column(batch, "file_path")?,
                string_column(batch, "title")?,
            );
            let created = batch
                .column_by_name("created_at")
                .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
                .ok_or_else(|| StoreError::Shape("created_at is not a timestamp".into()))?;
            let id = string_column(batch, "chunk_id")?;
            // Rows come a version at a time as a rule: the stamp's entry
            // is looked up again only when the version changes.
            let mut stamp: Option<(&str, &str, Stamp)> = None;
            for row in 0..batch.num_rows() {
                let (l, v) = (library.value(row), version.value(row));
                match &mut stamp {
                    Some((sl, sv, s)) if *sl == l && *sv == v => {
                        s.add(id.value(row), created.value(row));
                    }
                    _ => {
                        if let Some((sl, sv, s)) = stamp.take() {
                            fold(&mut stamps, sl, sv, s);
                        }
                        let mut s = Stamp::default();
                        s.add(id.value(row), created.value(row));
                        stamp = Some((l, v, s));
                    }
                }
                let key = (
                    library.value(row).to_owned(),
                    version.value(row).to_owned(),
                    path.value(row).to_owned(),
                );
                let at = created.value(row) / 1_000_000;
                let doc = docs
                    .entry(key)
                    .or_insert_with_key(|(l, v, p)| DocumentInfo {
                        library: l.clone(),
                        version: v.clone(),
                        file_path: p.clone(),
                        title: (!title.is_null(row)).then(|| title.value(row).to_owned()),
                        chunks: 0,
                        updated_at: at,
                    });
                doc.chunks += 1;
                doc.updated_at = doc.updated_at.max(at);
            }
            if let Some((l, v, s)) = stamp {
                fold(&mut stamps, l, v, s);
            }
        }
        Ok((docs.into_values().collect(), stamps))
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

/// Adds a run of one version's rows to its stamp.
fn fold(stamps: &mut BTreeMap<(String, String), Stamp>, library: &str, version: &str, run: Stamp) {
    let total = stamps
        .entry((library.to_owned(), version.to_owned()))
        .or_default();
    total.merge(run);
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
