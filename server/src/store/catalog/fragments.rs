//! The catalog's scan of the chunk table, kept fragment by fragment, so that
//! a commit costs a read of the rows it wrote rather than of every row.
//!
//! Why: the catalog (every document, every published version's stamp) is
//! rebuilt for each new table version, and a search waits for it. Read
//! whole, it costs a few columns of every row, after every publish, delete
//! or refresh, whichever library it touched: the one cost left that grew
//! with the whole store on each write (docs/benchmarks.md, "The catalog
//! after a commit").
//!
//! A Lance table is a list of fragments whose data files are written once:
//! an append adds fragments, a delete gives some fragments a new deletion
//! file, a compaction replaces some by new ones. So the rows each fragment
//! held when it was read are kept, and after a commit a fragment
//! - seen before, unchanged, is reused;
//! - with the same data files under a new deletion file has its deletion
//!   vector read (a small file) and its kept rows counted again, none read;
//! - new, or changed in any other way, is read.
//!
//! A fragment's deletions only grow while its data files stay; a restore
//! of an older table version can bring rows back, which the count of rows
//! left shows, and that fragment is read again.
//!
//! What is kept per row is its offset, its document and its share of the
//! version's stamp: 16 bytes a row, beside the documents' names.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, TimestampMicrosecondArray, UInt64Array};
use futures::TryStreamExt;
use index_core::catalog::DocumentInfo;
use lance::dataset::fragment::FileFragment;
use lance::table::format::Fragment;
use lance::Dataset;

use super::super::resident::published::Stamp;
use super::super::{string_column, StoreError};

/// The columns the catalog reads.
const COLUMNS: [&str; 6] = [
    "library",
    "version",
    "file_path",
    "title",
    "chunk_id",
    "created_at",
];

/// A document's library, version and path.
type DocumentKey = (Arc<str>, Arc<str>, Arc<str>);

/// Fragments being read, each with its documents' places by key.
type Reading = HashMap<u64, (Read, HashMap<DocumentKey, u32>)>;

/// Every document, and each library version's stamp, of one table version.
pub(in crate::store) type Scan = (Vec<DocumentInfo>, BTreeMap<(String, String), Stamp>);

/// What the fragments of the chunk table held when each was last read.
#[derive(Default)]
pub(in crate::store) struct Fragments {
    by_id: HashMap<u64, Read>,
}

/// How the last listing was made, for tracing and the benches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCounts {
    /// Fragments reused as they were.
    pub reused: usize,
    /// Fragments whose new deletions were counted without reading rows.
    pub recounted: usize,
    /// Fragments read.
    pub read: usize,
    /// Rows read.
    pub rows_read: usize,
}

/// One fragment as it was read.
struct Read {
    /// The fragment's metadata, its deletion file aside: what must not
    /// change for the rows below to stay its rows.
    data: Fragment,
    /// The deletion file its rows were last counted under.
    deletion: Option<lance::table::format::DeletionFile>,
    documents: Vec<Document>,
    rows: Vec<Row>,
    /// Each document's rows left, and their stamp, under `deletion`.
    live: Vec<(u64, Stamp)>,
}

struct Document {
    library: Arc<str>,
    version: Arc<str>,
    path: Arc<str>,
    title: Option<Arc<str>>,
    /// Its newest row's time, in seconds.
    updated_at: i64,
}

/// A row read: where it is in its fragment, its document (an index into
/// [`Read::documents`]) and its share of its version's stamp.
#[derive(Clone, Copy)]
struct Row {
    offset: u32,
    document: u32,
    stamp: Stamp,
}

impl Fragments {
    /// Every document and stamp of `dataset`, reading only the fragments
    /// not known already.
    pub(in crate::store) async fn scan(
        &mut self,
        dataset: &Arc<Dataset>,
    ) -> Result<(Scan, ScanCounts), StoreError> {
        let mut counts = ScanCounts::default();
        let mut kept = HashMap::with_capacity(dataset.fragments().len());
        let mut unread = Vec::new();
        for fragment in dataset.fragments().iter() {
            let Some(mut known) = self.by_id.remove(&fragment.id) else {
                unread.push(fragment.clone());
                continue;
            };
            if known.data != without_deletions(fragment) {
                unread.push(fragment.clone());
                continue;
            }
            if known.deletion == fragment.deletion_file {
                counts.reused += 1;
            } else if known.recount(dataset, fragment).await? {
                counts.recounted += 1;
            } else {
                unread.push(fragment.clone());
                continue;
            }
            kept.insert(fragment.id, known);
        }
        if !unread.is_empty() {
            counts.read = unread.len();
            for (id, read) in read_fragments(dataset, unread).await? {
                counts.rows_read += read.rows.len();
                kept.insert(id, read);
            }
        }
        self.by_id = kept;
        Ok((self.fold(dataset), counts))
    }

    /// The documents and stamps of the fragments kept, in `dataset`'s
    /// order.
    fn fold(&self, dataset: &Dataset) -> Scan {
        let mut docs: BTreeMap<DocumentKey, DocumentInfo> = BTreeMap::new();
        let mut stamps: BTreeMap<(String, String), Stamp> = BTreeMap::new();
        for fragment in dataset.fragments().iter() {
            let Some(read) = self.by_id.get(&fragment.id) else {
                continue;
            };
            let mut run: Option<(Arc<str>, Arc<str>, Stamp)> = None;
            for (doc, &(chunks, stamp)) in read.documents.iter().zip(&read.live) {
                if chunks == 0 {
                    continue;
                }
                let info = docs
                    .entry((doc.library.clone(), doc.version.clone(), doc.path.clone()))
                    .or_insert_with(|| DocumentInfo {
                        library: doc.library.to_string(),
                        version: doc.version.to_string(),
                        file_path: doc.path.to_string(),
                        title: doc.title.as_deref().map(str::to_owned),
                        chunks: 0,
                        updated_at: doc.updated_at,
                    });
                info.chunks += chunks;
                info.updated_at = info.updated_at.max(doc.updated_at);
                // A fragment's documents come a version at a time as a rule:
                // its stamp is looked up again only when the version changes.
                match &mut run {
                    Some((l, v, total)) if *l == doc.library && *v == doc.version => {
                        total.merge(stamp);
                    }
                    _ => {
                        if let Some((l, v, total)) = run.take() {
                            add_stamp(&mut stamps, &l, &v, total);
                        }
                        run = Some((doc.library.clone(), doc.version.clone(), stamp));
                    }
                }
            }
            if let Some((l, v, total)) = run {
                add_stamp(&mut stamps, &l, &v, total);
            }
        }
        (docs.into_values().collect(), stamps)
    }
}

/// Adds a run of one version's rows to its stamp.
fn add_stamp(
    stamps: &mut BTreeMap<(String, String), Stamp>,
    library: &str,
    version: &str,
    run: Stamp,
) {
    stamps
        .entry((library.to_owned(), version.to_owned()))
        .or_default()
        .merge(run);
}

impl Read {
    /// Counts the rows left under `fragment`'s new deletion file; false
    /// when rows came back that were not read (a restore), so the fragment
    /// must be read again.
    async fn recount(
        &mut self,
        dataset: &Arc<Dataset>,
        fragment: &Fragment,
    ) -> Result<bool, StoreError> {
        let Some(physical) = fragment.physical_rows else {
            return Ok(false);
        };
        let deleted = FileFragment::new(Arc::clone(dataset), fragment.clone())
            .get_deletion_vector()
            .await
            .map_err(lancedb::Error::from)?;
        let mut live = vec![(0u64, Stamp::default()); self.documents.len()];
        let mut left = 0usize;
        for row in &self.rows {
            if deleted.as_ref().is_some_and(|d| d.contains(row.offset)) {
                continue;
            }
            left += 1;
            let (chunks, stamp) = &mut live[row.document as usize];
            *chunks += 1;
            stamp.merge(row.stamp);
        }
        let expected = physical.saturating_sub(deleted.as_ref().map_or(0, |d| d.len()));
        if left != expected {
            return Ok(false);
        }
        self.live = live;
        self.deletion = fragment.deletion_file.clone();
        Ok(true)
    }
}

/// `fragment` with no deletion file: what identifies its rows.
fn without_deletions(fragment: &Fragment) -> Fragment {
    Fragment {
        deletion_file: None,
        ..fragment.clone()
    }
}

/// Reads the catalog's columns of `fragments` (deletions applied), one
/// [`Read`] per fragment.
async fn read_fragments(
    dataset: &Dataset,
    fragments: Vec<Fragment>,
) -> Result<HashMap<u64, Read>, StoreError> {
    let mut reads: Reading = fragments
        .iter()
        .map(|f| {
            let read = Read {
                data: without_deletions(f),
                deletion: f.deletion_file.clone(),
                documents: Vec::new(),
                rows: Vec::new(),
                live: Vec::new(),
            };
            (f.id, (read, HashMap::new()))
        })
        .collect();
    let mut scanner = dataset.scan();
    scanner
        .with_fragments(fragments)
        .project(&COLUMNS[..])
        .map_err(lancedb::Error::from)?
        .with_row_address();
    let batches: Vec<RecordBatch> = scanner
        .try_into_stream()
        .await
        .map_err(lancedb::Error::from)?
        .try_collect()
        .await
        .map_err(lancedb::Error::from)?;
    for batch in &batches {
        add_batch(&mut reads, batch)?;
    }
    Ok(reads
        .into_iter()
        .map(|(id, (mut read, _))| {
            read.live = vec![(0, Stamp::default()); read.documents.len()];
            for row in &read.rows {
                let (chunks, stamp) = &mut read.live[row.document as usize];
                *chunks += 1;
                stamp.merge(row.stamp);
            }
            (id, read)
        })
        .collect())
}

/// Adds a batch's rows to the fragments they belong to.
fn add_batch(reads: &mut Reading, batch: &RecordBatch) -> Result<(), StoreError> {
    let (library, version, path, title, id) = (
        string_column(batch, "library")?,
        string_column(batch, "version")?,
        string_column(batch, "file_path")?,
        string_column(batch, "title")?,
        string_column(batch, "chunk_id")?,
    );
    let created = batch
        .column_by_name("created_at")
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
        .ok_or_else(|| StoreError::Shape("created_at is not a timestamp".into()))?;
    let address = batch
        .column_by_name(lance_core::ROW_ADDR)
        .and_then(|c| c.as_any().downcast_ref::<UInt64Array>())
        .ok_or_else(|| StoreError::Shape("the scan has no row addresses".into()))?;
    // Rows come a document at a time as a rule: the last one is looked up
    // again only when the document changes.
    let mut last: Option<(u64, u32)> = None;
    for row in 0..batch.num_rows() {
        // A row address is the fragment's id above its offset in it.
        let at = address.value(row);
        let (fragment, offset) = (at >> 32, (at & u64::from(u32::MAX)) as u32);
        let Some((read, index)) = reads.get_mut(&fragment) else {
            return Err(StoreError::Shape(format!(
                "a row of fragment {fragment}, which was not asked for"
            )));
        };
        let (l, v, p) = (library.value(row), version.value(row), path.value(row));
        let seconds = created.value(row) / 1_000_000;
        let document = match last {
            Some((f, d))
                if f == fragment && {
                    let doc = &read.documents[d as usize];
                    &*doc.path == p && &*doc.version == v && &*doc.library == l
                } =>
            {
                d
            }
            _ => {
                let key: DocumentKey = (l.into(), v.into(), p.into());
                let next = u32::try_from(read.documents.len())
                    .map_err(|_| StoreError::Shape("too many documents in a fragment".into()))?;
                *index.entry(key.clone()).or_insert_with(|| {
                    read.documents.push(Document {
                        library: key.0,
                        version: key.1,
                        path: key.2,
                        title: (!title.is_null(row)).then(|| title.value(row).into()),
                        updated_at: seconds,
                    });
                    next
                })
            }
        };
        last = Some((fragment, document));
        let doc = &mut read.documents[document as usize];
        doc.updated_at = doc.updated_at.max(seconds);
        read.rows.push(Row {
            offset,
            document,
            stamp: Stamp::of(id.value(row), created.value(row)),
        });
    }
    Ok(())
}
