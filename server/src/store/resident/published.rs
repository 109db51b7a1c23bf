//! What is published, version by version: the library versions the chunk
//! table holds as of one table version, each with its row count and a
//! [`Stamp`] of its rows.
//!
//! Why a stamp: a segment of the in-memory copy holds one library version
//! as it was read. It may answer a search only while the table still holds
//! exactly those rows, and a commit (ours or another replica's) names no
//! library: it only moves the table's version. The catalog already reads
//! every row's library, version, path and time once per table version (see
//! [`crate::store::catalog`]), so it reads each row's id as well and folds
//! them into one stamp per version; a segment whose stamp matches is
//! current, whatever else was written meanwhile. A chunk's id hashes its
//! place and everything it was embedded from ([`ingest_core::ids::chunk_id`])
//! and a publish writes its rows with a new `created_at`, so a publish or a
//! delete changes the stamp, and a compaction, which moves rows without
//! changing them, does not.

use std::hash::{Hash, Hasher};

/// An order-free fingerprint of a library version's rows: the wrapping sum
/// of a 64-bit hash of each row's chunk id and creation time (to the
/// microsecond). Two different sets of rows share a stamp only by a hash
/// collision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stamp(u64);

impl Stamp {
    /// One row's stamp.
    pub fn of(chunk_id: &str, created_at_micros: i64) -> Self {
        // SipHash with fixed keys: the same in every process of one build,
        // which is all a stamp needs (stamps are never stored).
        let mut hasher = std::hash::DefaultHasher::new();
        (chunk_id, created_at_micros).hash(&mut hasher);
        Self(hasher.finish())
    }

    /// Adds one row.
    pub fn add(&mut self, chunk_id: &str, created_at_micros: i64) {
        self.merge(Self::of(chunk_id, created_at_micros));
    }

    /// Adds another set of rows' stamp.
    pub fn merge(&mut self, other: Stamp) {
        self.0 = self.0.wrapping_add(other.0);
    }
}

/// One published library version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedVersion {
    pub library: String,
    pub version: String,
    /// Its rows.
    pub chunks: usize,
    /// Its rows' stamp.
    pub stamp: Stamp,
    /// When its newest row was written (seconds since the epoch).
    pub updated_at: i64,
}

/// Every published library version as of one table version, sorted by
/// library and version.
#[derive(Debug, Clone, Default)]
pub struct PublishedVersions {
    pub table_version: u64,
    pub versions: Vec<PublishedVersion>,
}

impl PublishedVersions {
    /// The entry for `library` at `version`.
    pub fn get(&self, library: &str, version: &str) -> Option<&PublishedVersion> {
        self.versions
            .binary_search_by(|p| (p.library.as_str(), p.version.as_str()).cmp(&(library, version)))
            .ok()
            .map(|at| &self.versions[at])
    }
}

#[cfg(test)]
mod tests {
    use super::Stamp;

    #[test]
    fn a_stamp_ignores_order_and_sees_any_changed_row() {
        let rows = [("a0", 10), ("a1", 10), ("b0", 11)];
        let stamp = |rows: &[(&str, i64)]| {
            let mut s = Stamp::default();
            for &(id, t) in rows {
                s.add(id, t);
            }
            s
        };
        let mut reversed = rows;
        reversed.reverse();
        assert_eq!(stamp(&rows), stamp(&reversed));
        assert_ne!(stamp(&rows), stamp(&rows[..2]), "a row removed");
        assert_ne!(
            stamp(&rows),
            stamp(&[("a0", 10), ("a1", 10), ("b0", 12)]),
            "a row written again"
        );
        assert_ne!(
            stamp(&rows),
            stamp(&[("a0", 10), ("a2", 10), ("b0", 11)]),
            "a row with other text"
        );
    }
}
