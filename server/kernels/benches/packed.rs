//! `PackedWeights::product` against the `gemm` crate (the product burn's
//! CPU backend uses) on all-MiniLM-L6-v2's projection shapes, for the row
//! counts of search queries. The weights cycle through copies totalling
//! the model's 42 MB, so neither side finds them in cache, as in a real
//! query. Prints microseconds per product and weight bytes read per second.
//!
//! `cargo bench -p docshelf-kernels --bench packed`

use std::hint::black_box;
use std::time::Instant;

use docshelf_kernels::PackedWeights;

mod common;

const MODEL_BYTES: usize = 42 << 20;

fn main() {
    let threads = rayon::current_num_threads();
    println!("packed product vs gemm ({threads} threads), weights cycling through 42 MB");
    for (k, n) in [(384, 1152), (384, 384), (384, 1536), (1536, 384)] {
        // DOCSHELF_BENCH_HOT=1: one copy, which stays in cache, to tell a
        // product bound by memory from one bound by arithmetic.
        let copies = if std::env::var_os("DOCSHELF_BENCH_HOT").is_some() {
            1
        } else {
            MODEL_BYTES / (k * n * 4)
        };
        let weights: Vec<Vec<f32>> = (0..copies)
            .map(|c| (0..k * n).map(|i| ((i + c) % 13) as f32 * 0.1).collect())
            .collect();
        let bias = vec![0.5f32; n];
        let packed: Vec<PackedWeights> = weights
            .iter()
            .map(|w| PackedWeights::new(w, Some(&bias), k, n))
            .collect();
        for rows in [1, 4, 8, 12, 16, 32] {
            let x: Vec<f32> = (0..rows * k).map(|i| (i % 7) as f32 * 0.1).collect();
            let ours = time(packed.len(), |i| {
                black_box(packed[i].product(&x, rows));
            });
            let general = time(weights.len(), |i| {
                black_box(common::gemm_f32(&x, &weights[i], rows, k, n, threads));
            });
            let gbs = |secs: f64| (k * n * 4) as f64 / secs / 1e9;
            println!(
                "[{rows:>2}, {k:>4}]·[{k:>4}, {n:>4}]: packed {:>7.1} us ({:>5.1} GB/s) | gemm {:>7.1} us ({:>5.1} GB/s)",
                ours * 1e6,
                gbs(ours),
                general * 1e6,
                gbs(general)
            );
        }
    }
}

/// Median seconds per product over rounds through every weight copy.
fn time(copies: usize, mut product: impl FnMut(usize)) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        for i in 0..copies {
            product(i);
        }
        samples.push(start.elapsed().as_secs_f64() / copies as f64);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
