//! A scan of many rows divided across the cores.
//!
//! Scanning a million rows of 8-bit vectors reads 384 MB, and one core
//! reads memory at a fraction of what the machine can (docs/benchmarks.md,
//! "Every library of a million chunks"). A scan of that many rows is split
//! into one part per core; a small one stays on the calling thread, where
//! starting threads would cost more than the part saves.
//!
//! The parts run on threads of their own, not in rayon's pool: the
//! embedder's passes, a search's query among them, queue for rayon's
//! threads, and a part takes milliseconds. One split scan runs at a time:
//! with many large searches at once, each scans on its own thread, so the
//! threads stay about one per search rather than one per core per search.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Rows in scope from which a scan is split: below this, a scan takes about
/// as long as starting threads for it saves (docs/benchmarks.md, "Every
/// library of a million chunks").
pub const SPLIT_ROWS: usize = 50_000;

/// Set while a split scan runs.
static SPLITTING: AtomicBool = AtomicBool::new(false);

/// The cores this process may use, read once.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `scan` of `ranges`, split into one part per core when they hold at
/// least [`SPLIT_ROWS`] rows and no other split scan is running, the parts'
/// results folded into the first part's by `merge` in order.
pub(crate) fn across_cores<T: Send>(
    ranges: &[Range<usize>],
    scan: impl Fn(&[Range<usize>]) -> T + Sync,
    merge: impl Fn(&mut T, T),
) -> T {
    let parts = parts(ranges, cores());
    if parts.len() < 2 || SPLITTING.swap(true, Ordering::Acquire) {
        return scan(ranges);
    }
    // Clears the flag however the scan ends, a panic included.
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            SPLITTING.store(false, Ordering::Release);
        }
    }
    let _done = Done;
    std::thread::scope(|threads| {
        let scan = &scan;
        let running: Vec<_> = parts[1..]
            .iter()
            .map(|part| threads.spawn(move || scan(part)))
            .collect();
        // The calling thread scans the first part meanwhile.
        let mut whole = scan(&parts[0]);
        for part in running {
            let found = part
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            merge(&mut whole, found);
        }
        whole
    })
}

/// `ranges` cut into at most `count` parts of about equal rows, in order;
/// one part when they hold fewer than [`SPLIT_ROWS`] rows.
fn parts(ranges: &[Range<usize>], count: usize) -> Vec<Vec<Range<usize>>> {
    let total: usize = ranges.iter().map(ExactSizeIterator::len).sum();
    if total < SPLIT_ROWS || count < 2 {
        return vec![ranges.to_vec()];
    }
    let per_part = total.div_ceil(count);
    let mut parts = vec![Vec::new()];
    let mut room = per_part;
    for range in ranges {
        let mut range = range.clone();
        while !range.is_empty() {
            if room == 0 {
                parts.push(Vec::new());
                room = per_part;
            }
            let end = range.end.min(range.start + room);
            room -= end - range.start;
            if let Some(part) = parts.last_mut() {
                part.push(range.start..end);
            }
            range.start = end;
        }
    }
    parts
}

#[cfg(test)]
// A slice of one range is a scope of one library, not a range's rows.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_row_once_in_order_and_about_evenly() {
        let ranges = vec![
            0..150_000,
            150_000..150_000,
            200_000..330_001,
            400_000..400_010,
        ];
        for count in [2, 3, 4] {
            let parts = parts(&ranges, count);
            assert_eq!(parts.len(), count);
            let rows: Vec<usize> = parts.iter().flatten().flat_map(Clone::clone).collect();
            let expected: Vec<usize> = ranges.iter().flat_map(Clone::clone).collect();
            assert_eq!(rows, expected);
            let sizes: Vec<usize> = parts
                .iter()
                .map(|p| p.iter().map(ExactSizeIterator::len).sum())
                .collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= count);
        }
        assert_eq!(
            parts(&[0..SPLIT_ROWS - 1], 4),
            vec![vec![0..SPLIT_ROWS - 1]]
        );
        assert_eq!(parts(&ranges, 1), vec![ranges.clone()]);
    }

    #[test]
    fn a_split_scan_merges_every_part_in_order() {
        let ranges = [0..SPLIT_ROWS * 2, SPLIT_ROWS * 3..SPLIT_ROWS * 3 + 7];
        let rows = across_cores(
            &ranges,
            |part| part.iter().map(ExactSizeIterator::len).sum::<usize>(),
            |a, b| *a += b,
        );
        assert_eq!(rows, SPLIT_ROWS * 2 + 7);
        let firsts = across_cores(&ranges, |part| vec![part[0].start], |a, b| a.extend(b));
        assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{firsts:?}");
    }
}
