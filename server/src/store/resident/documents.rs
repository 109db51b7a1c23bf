//! A copy's chunks read by document: what a budgeted answer reads its
//! passages' whole sections from, without a query to the store.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use super::Copy;
use crate::store::{DocumentRange, StoredChunk};

impl Copy {
    /// The chunks of `documents`, each within its range of chunk indexes,
    /// in no particular order: one pass over the rows of their libraries'
    /// versions, where the store would take a query.
    pub fn documents_chunks(&self, documents: &[DocumentRange<'_>]) -> Vec<StoredChunk> {
        let mut found = Vec::new();
        for (library, version, rows) in &self.groups {
            let wanted: HashMap<&str, &RangeInclusive<u32>> = documents
                .iter()
                .filter(|d| d.library == library && d.version == version)
                .map(|d| (d.file_path, &d.chunks))
                .collect();
            if wanted.is_empty() {
                continue;
            }
            for row in rows.clone() {
                let (batch, at) = self.rows[row];
                let (columns, at) = (&self.batches[batch as usize], at as usize);
                let index = columns.chunk_index(at);
                if wanted
                    .get(columns.file_path(at))
                    .is_some_and(|chunks| chunks.contains(&index))
                {
                    found.push(columns.chunk(at));
                }
            }
        }
        found
    }
}
