//! A copy's chunks read by document: what a budgeted answer reads its
//! passages' whole sections from, without a query to the store.

use std::ops::Range;

use super::Copy;
use crate::store::{DocumentRange, StoredChunk};

impl Copy {
    /// The chunks of `documents`, each within its range of chunk indexes,
    /// in row order, each once however the ranges overlap. The rows of a
    /// (library, version) are ordered by path and chunk index when the copy
    /// is read, so a range is two binary searches and the rows it holds:
    /// the cost grows with what is read, not with the library.
    pub fn documents_chunks(&self, documents: &[DocumentRange<'_>]) -> Vec<StoredChunk> {
        let mut rows: Vec<usize> = documents
            .iter()
            .flat_map(|document| self.document_rows(document))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows.into_iter().map(|row| self.chunk(row)).collect()
    }

    /// The rows `document` names: its chunks within its range.
    fn document_rows(&self, document: &DocumentRange<'_>) -> Range<usize> {
        let Some(group) = self.group(document.library, document.version) else {
            return 0..0;
        };
        let place = |&(batch, at): &(u32, u32)| {
            let columns = &self.batches[batch as usize];
            (
                columns.file_path(at as usize),
                columns.chunk_index(at as usize),
            )
        };
        let first = (document.file_path, *document.chunks.start());
        let last = (document.file_path, *document.chunks.end());
        let rows = &self.rows[group.clone()];
        let start = rows.partition_point(|row| place(row) < first);
        let end = rows.partition_point(|row| place(row) <= last).max(start);
        group.start + start..group.start + end
    }

    /// The rows of `library` at `version`.
    fn group(&self, library: &str, version: &str) -> Option<Range<usize>> {
        self.groups
            .binary_search_by(|(l, v, _)| (l.as_str(), v.as_str()).cmp(&(library, version)))
            .ok()
            .map(|found| self.groups[found].2.clone())
    }
}
