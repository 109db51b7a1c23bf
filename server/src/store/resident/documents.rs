//! Chunks read by document from the held segments: what a budgeted answer
//! reads its passages' whole sections from, without a query to the store.

use super::Held;
use crate::store::{DocumentRange, StoredChunk};

impl Held {
    /// The chunks of `documents`, each within its range of chunk indexes,
    /// each once however the ranges overlap; nothing for a version not
    /// held. A segment's rows are in path and chunk order, so a range is two
    /// binary searches and the rows it holds: the cost grows with what is
    /// read, not with the library.
    pub fn documents_chunks(&self, documents: &[DocumentRange<'_>]) -> Vec<StoredChunk> {
        let mut rows: Vec<(usize, usize)> = Vec::new();
        for document in documents {
            let Some((at, segment)) = self.segment_at(document.library, document.version) else {
                continue;
            };
            rows.extend(
                segment
                    .document_rows(document.file_path, &document.chunks)
                    .map(|row| (at, row)),
            );
        }
        rows.sort_unstable();
        rows.dedup();
        rows.into_iter()
            .filter_map(|(at, row)| self.segment_by_index(at).map(|s| s.chunk(row)))
            .collect()
    }
}
