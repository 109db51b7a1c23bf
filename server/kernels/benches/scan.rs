//! `QuantizedRows::nearest`: the top 50 of 10k, 100k and 1M 384-d rows
//! (one library of the search bench, all of it, its 1M form), on one
//! thread as a search runs it. Rows are pseudo-random, which costs the
//! same as real vectors: the scan reads every candidate row whatever its
//! values. Prints the median and 90th percentile of 50 scans.
//!
//! `cargo bench -p docshelf-kernels --bench scan`

use std::hint::black_box;
use std::time::Instant;

use docshelf_kernels::QuantizedRows;

const DIM: usize = 384;

// One range of rows: the whole matrix.
#[allow(clippy::single_range_in_vec_init)]
fn main() {
    println!(
        "{:>10} {:>10} {:>10} {:>10}",
        "rows", "p50 ms", "p90 ms", "MB held"
    );
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    for count in [10_000, 100_000, 1_000_000] {
        let mut rows = QuantizedRows::with_capacity(DIM, count);
        let mut row = vec![0.0f32; DIM];
        for _ in 0..count {
            row.iter_mut().for_each(|x| *x = next());
            rows.push(&row);
        }
        let queries: Vec<Vec<f32>> = (0..50)
            .map(|_| (0..DIM).map(|_| next()).collect())
            .collect();
        let mut ms: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                black_box(rows.nearest(q, &[0..count], None, 50));
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "{count:>10} {:>10.2} {:>10.2} {:>10.0}",
            ms[ms.len() / 2],
            ms[ms.len() * 9 / 10],
            rows.bytes() as f64 / 1e6
        );
    }
}
