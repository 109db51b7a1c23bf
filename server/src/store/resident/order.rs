//! The order a copy holds its rows in: by library, version, path and
//! chunk index. A library version's rows are then one run, which a scope
//! selects as a range, and a document's rows a run within it in chunk
//! order, which a section read finds by binary search.

use std::collections::HashMap;
use std::ops::Range;

use crate::store::schema::ChunkColumns;

/// A (library, version) and its run of rows.
pub(super) type Group = (String, String, Range<usize>);

/// The rows `read` (each a batch of `batches` and a row within it) in
/// copy order, as indexes into `read`; and each (library, version) with
/// its run of them, in name order.
///
/// Each row's document is numbered as first seen (one hash a row), the
/// distinct documents alone are sorted as strings, and the rows are then
/// sorted by their document's place in that order and their chunk index:
/// integers, cheap even unoptimised at a million rows.
pub(super) fn by_document(
    batches: &[ChunkColumns],
    read: &[(u32, u32)],
) -> (Vec<usize>, Vec<Group>) {
    let document = |&(batch, row): &(u32, u32)| {
        let c = &batches[batch as usize];
        let row = row as usize;
        (c.library(row), c.version(row), c.file_path(row))
    };
    let mut seen: HashMap<(&str, &str, &str), u32> = HashMap::new();
    let first_seen: Vec<u32> = read
        .iter()
        .map(|r| {
            let next = seen.len() as u32;
            *seen.entry(document(r)).or_insert(next)
        })
        .collect();
    let mut documents: Vec<((&str, &str, &str), u32)> = seen.into_iter().collect();
    documents.sort_unstable();
    let mut rank = vec![0u32; documents.len()];
    for (place, (_, first)) in documents.iter().enumerate() {
        rank[*first as usize] = place as u32;
    }
    let place: Vec<(u32, u32)> = read
        .iter()
        .zip(&first_seen)
        .map(|(r, &first)| {
            (
                rank[first as usize],
                batches[r.0 as usize].chunk_index(r.1 as usize),
            )
        })
        .collect();
    let mut order: Vec<usize> = (0..read.len()).collect();
    order.sort_unstable_by_key(|&i| place[i]);

    let mut groups: Vec<Group> = Vec::new();
    for (row, &at) in order.iter().enumerate() {
        let ((library, version, _), _) = documents[place[at].0 as usize];
        match groups.last_mut() {
            Some((l, v, rows)) if l == library && v == version => rows.end = row + 1,
            _ => groups.push((library.to_owned(), version.to_owned(), row..row + 1)),
        }
    }
    (order, groups)
}
