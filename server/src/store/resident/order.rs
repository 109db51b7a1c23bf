//! The order a copy holds its rows in: by library, version, path and
//! chunk index. A library version's rows are then one run, which a scope
//! selects as a range, and a document's rows a run within it in chunk
//! order, which a section read finds by binary search.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::store::schema::ChunkColumns;

/// A (library, version) and its run of rows.
pub(super) type Group = (String, String, Range<usize>);

/// The rows `read` (each a batch of `batches` and a row within it) in
/// copy order, as indexes into `read`; and each (library, version) with
/// its run of them, in name order.
///
/// Each row's document is numbered in (library, version, path) order, and
/// the rows are sorted by that number and their chunk index: integers,
/// cheap even unoptimised at a million rows. Only the distinct documents
/// are sorted as strings.
pub(super) fn by_document(
    batches: &[ChunkColumns],
    read: &[(u32, u32)],
) -> (Vec<usize>, Vec<Group>) {
    let document = |&(batch, row): &(u32, u32)| {
        let c = &batches[batch as usize];
        let row = row as usize;
        (c.library(row), c.version(row), c.file_path(row))
    };
    let mut documents: Vec<(&str, &str, &str)> = read
        .iter()
        .map(document)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    documents.sort_unstable();
    let number: HashMap<(&str, &str, &str), u32> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (*d, i as u32))
        .collect();
    let place: Vec<(u32, u32)> = read
        .iter()
        .map(|r| {
            let chunk = batches[r.0 as usize].chunk_index(r.1 as usize);
            (number[&document(r)], chunk)
        })
        .collect();
    let mut order: Vec<usize> = (0..read.len()).collect();
    order.sort_unstable_by_key(|&i| place[i]);

    let mut groups: Vec<Group> = Vec::new();
    for (row, &at) in order.iter().enumerate() {
        let (library, version, _) = documents[place[at].0 as usize];
        match groups.last_mut() {
            Some((l, v, rows)) if l == library && v == version => rows.end = row + 1,
            _ => groups.push((library.to_owned(), version.to_owned(), row..row + 1)),
        }
    }
    (order, groups)
}
