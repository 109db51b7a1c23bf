//! The vector index: when it is built, how many partitions it has, how many
//! of them a search probes, and when it is rebuilt.
//!
//! An IVF-PQ index splits the vectors into partitions (about √n of them, n
//! the rows at build time); a search reads the partitions nearest to the
//! query, ranks their rows by compressed (PQ) distance, and re-ranks the
//! best `limit × refine factor` of those with the full vectors. The
//! settings that served 100k rows (20 probes, refine factor 5) kept dense
//! recall@10 against exact search high there but lost far too much at 1M.
//! The sweep `DOCSHELF_BENCH_RECALL_SWEEP=1 make bench-search ROWS=…`
//! showed why: past ~32 probes more probes changed nothing, so the
//! partitions hold the true neighbours; what loses them is the PQ ranking,
//! whose near-ties grow with the rows, and only a larger refine factor won
//! them back (docs/benchmarks.md, "Probes and refining by partitions"). So
//! both grow with the partitions the index has
//! ([`VectorSearchTuning::probes`], [`VectorSearchTuning::refine`]): 1/32
//! of them probed, at least 20, and a refine factor of one per 50
//! partitions, at least 5. That keeps 100k's 20 probes and raises its
//! refine factor from 5 to 7 (a little slower; 7 was not swept on its own),
//! and gives 1M 32 probes and refine 20, which brings recall there back
//! above 0.95 for a slower dense leg.
//!
//! LanceDB's index statistics do not give the partition count, so the
//! index's name carries it (`vector_ivf_pq_p316`), and the store reads it
//! back whenever the table's version has changed since it last did: a
//! process that never writes (a second server on the same store) follows
//! another's rebuild. An index named otherwise (built by an older
//! docshelf) is taken to have √(rows it covers) partitions: as many as a
//! rebuild would give it, so its probes err on the side of recall.
//!
//! The index is built once, when the table first reaches
//! [`VECTOR_INDEX_MIN_ROWS`], and later rows are folded into its existing
//! partitions. A store that grew by uploads would keep the partitions of
//! its first 50k rows for ever, and its partitions would grow ever larger
//! (each probe reading more rows). So a refresh rebuilds the index once the
//! table holds [`REBUILD_GROWTH`]× the rows its partitions suit, and
//! drops the old one after the new one is committed: searches use one or
//! the other throughout.

use std::sync::RwLock;

use lancedb::index::vector::IvfPqIndexBuilder;
use lancedb::index::Index;
use lancedb::DistanceType;

use super::{Store, StoreError};

/// Rows before a vector index pays for itself; below this, exact search
/// over every vector is both exact and fast (a few ms for 50k×384 floats).
pub const VECTOR_INDEX_MIN_ROWS: usize = 50_000;

/// How many times the rows its partitions suit (partitions²) the table may
/// hold before a refresh rebuilds the index: 4× rows is 2× partitions.
pub const REBUILD_GROWTH: u64 = 4;

/// The index's name before its partition count.
const NAME_PREFIX: &str = "vector_ivf_pq_p";

/// Search settings for the vector index, tuned with `cargo bench --bench
/// vector_index` and `make bench-search` for recall@10 ≥ 0.95 against exact
/// search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorSearchTuning {
    /// The fewest partitions a search probes.
    pub nprobes: usize,
    /// The share of the index's partitions a search probes, when that is
    /// more than `nprobes` (see the module docs).
    pub probe_share: f32,
    /// The least refine factor: candidates re-ranked with full vectors are
    /// `limit × refine factor`.
    pub refine_factor: u32,
    /// The refine factor per partition of the index, when that is more
    /// than `refine_factor` (see the module docs).
    pub refine_share: f32,
}

impl Default for VectorSearchTuning {
    fn default() -> Self {
        Self {
            nprobes: 20,
            probe_share: 1.0 / 32.0,
            refine_factor: 5,
            refine_share: 1.0 / 50.0,
        }
    }
}

impl VectorSearchTuning {
    /// The partitions to probe in an index of `partitions` (`None` when
    /// unknown: `nprobes`).
    pub fn probes(&self, partitions: Option<u32>) -> usize {
        self.nprobes
            .max(share_of(partitions, self.probe_share) as usize)
    }

    /// The refine factor for an index of `partitions` (`None` when
    /// unknown: `refine_factor`).
    pub fn refine(&self, partitions: Option<u32>) -> u32 {
        self.refine_factor
            .max(share_of(partitions, self.refine_share))
    }
}

/// `share` of `partitions`, rounded up; 0 when unknown.
fn share_of(partitions: Option<u32>, share: f32) -> u32 {
    partitions.map_or(0, |p| (p as f32 * share).ceil() as u32)
}

/// The partition count of an index over `rows` rows: about √n, so that a
/// partition holds about as many rows as there are partitions.
pub fn partitions_for(rows: u64) -> u32 {
    ((rows as f64).sqrt() as u32).clamp(1, 4096)
}

/// Whether an index of `partitions` partitions should be rebuilt over a
/// table of `rows` rows (see [`REBUILD_GROWTH`]); never when a rebuild
/// would not add partitions (past the most an index is given).
pub fn outgrown(partitions: u32, rows: u64) -> bool {
    rows >= REBUILD_GROWTH * u64::from(partitions).pow(2) && partitions_for(rows) > partitions
}

/// The vector index's partition count (`None`: no index) as of a table
/// version: read again when the table has moved on.
#[derive(Debug, Default)]
pub(super) struct KnownPartitions(RwLock<Option<(u64, Option<u32>)>>);

impl KnownPartitions {
    fn at(&self, version: u64) -> Option<Option<u32>> {
        match *self.0.read().unwrap_or_else(|e| e.into_inner()) {
            Some((v, partitions)) if v == version => Some(partitions),
            _ => None,
        }
    }

    fn set(&self, version: u64, partitions: Option<u32>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some((version, partitions));
    }
}

/// The partition count in an index name this module gave.
fn partitions_in(name: &str) -> Option<u32> {
    name.strip_prefix(NAME_PREFIX)?
        .parse()
        .ok()
        .filter(|&p| p > 0)
}

impl Store {
    /// The vector index's partition count (`None` without an index), read
    /// from the index's name when the table's version has changed since
    /// the last read; a list of the table's indexes otherwise costs nothing.
    pub async fn vector_partitions(&self) -> Result<Option<u32>, StoreError> {
        let version = self.chunks.version().await?;
        if let Some(known) = self.vector_partitions.at(version) {
            return Ok(known);
        }
        let partitions = self.current_vector_index().await?.map(|(_, p)| p);
        self.vector_partitions.set(version, partitions);
        Ok(partitions)
    }

    /// The vector index's name and partition count (estimated for an index
    /// this module did not name), or `None` without one.
    async fn current_vector_index(&self) -> Result<Option<(String, u32)>, StoreError> {
        let Some(index) = self
            .chunks
            .list_indices()
            .await?
            .into_iter()
            .find(|i| i.columns == ["vector"])
        else {
            return Ok(None);
        };
        let partitions = match partitions_in(&index.name) {
            Some(p) => p,
            None => {
                let covered = self
                    .chunks
                    .index_stats(&index.name)
                    .await?
                    .map_or(0, |s| s.num_indexed_rows);
                partitions_for(covered as u64)
            }
        };
        Ok(Some((index.name, partitions)))
    }

    /// Builds the vector index if the table has rows enough and none, or
    /// rebuilds it if the table has outgrown it; `rows` is the table's row
    /// count. The caller holds the write turn.
    pub(super) async fn maintain_vector_index(
        &self,
        rows: u64,
        min_rows: usize,
    ) -> Result<(), StoreError> {
        match self.current_vector_index().await? {
            None if rows >= min_rows as u64 => {
                tracing::info!(rows, "building the vector index");
                self.build_vector_index().await.map(drop)
            }
            Some((name, partitions)) if outgrown(partitions, rows) => {
                tracing::info!(
                    rows,
                    partitions,
                    "the table has outgrown its vector index: rebuilding it"
                );
                let built = self.build_vector_index().await?;
                // The old index goes once the new one is committed.
                if built != name {
                    self.chunks.drop_index(&name).await?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Builds the cosine IVF-PQ vector index over every stored vector,
    /// replacing one of the same partition count, and returns its name.
    #[tracing::instrument(skip(self))]
    pub async fn build_vector_index(&self) -> Result<String, StoreError> {
        let rows = self.chunks.count_rows(None).await?;
        let partitions = partitions_for(rows as u64);
        // 48 sub-vectors of 8 dimensions keep PQ codes small and distances
        // good enough for the refine step to fix the order.
        let builder = IvfPqIndexBuilder::default()
            .distance_type(DistanceType::Cosine)
            .num_partitions(partitions)
            .num_sub_vectors(48);
        let name = format!("{NAME_PREFIX}{partitions}");
        self.chunks
            .create_index(&["vector"], Index::IvfPq(builder))
            .name(name.clone())
            .replace(true)
            .execute()
            .await?;
        Ok(name)
    }

    /// Whether the vector index exists.
    pub async fn has_vector_index(&self) -> Result<bool, StoreError> {
        Ok(self.current_vector_index().await?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_and_refining_are_shares_of_the_partitions_and_never_below_their_floors() {
        let t = VectorSearchTuning::default();
        assert_eq!((t.probes(None), t.refine(None)), (20, 5));
        assert_eq!((t.probes(Some(100)), t.refine(Some(100))), (20, 5));
        let at_100k = Some(partitions_for(100_000));
        assert_eq!((t.probes(at_100k), t.refine(at_100k)), (20, 7));
        let at_1m = Some(partitions_for(1_000_000));
        assert_eq!((t.probes(at_1m), t.refine(at_1m)), (32, 20));
    }

    #[test]
    fn an_index_is_outgrown_at_four_times_the_rows_its_partitions_suit() {
        let p = partitions_for(50_000);
        assert!(!outgrown(p, 50_000));
        assert!(!outgrown(p, 150_000));
        assert!(outgrown(p, 200_000));
        // After the rebuild, the same table no longer outgrows it.
        assert!(!outgrown(partitions_for(200_000), 200_000));
        // At the most partitions an index is given, no rebuild adds any.
        assert!(!outgrown(4096, 1_000_000_000));
    }

    #[test]
    fn the_partition_count_reads_back_from_the_name() {
        assert_eq!(partitions_in("vector_ivf_pq_p316"), Some(316));
        assert_eq!(partitions_in("vector_idx"), None);
        assert_eq!(partitions_in("vector_ivf_pq_p0"), None);
        assert_eq!(partitions_in("vector_ivf_pq_px"), None);
    }
}
