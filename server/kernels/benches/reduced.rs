//! The reduced-precision products (`Int8Weights`, `Bf16Weights`) against
//! the `gemm` crate's f32 product (the one burn's CPU backend runs), on
//! all-MiniLM-L6-v2's projection shapes at the row counts of an upload's
//! slice (16 chunks × 200 tokens) and of a search query (12 tokens), on
//! every core. Prints microseconds per product and multiply-adds per second.
//!
//! `cargo bench -p docshelf-kernels --bench reduced`

use std::hint::black_box;
use std::time::Instant;

use docshelf_kernels::{Bf16Weights, Int8Weights, ReducedProduct};

mod common;

fn main() {
    let threads = rayon::current_num_threads();
    println!(
        "reduced-precision products vs gemm f32 ({threads} threads; AVX-512 VNNI {}, AVX-512 BF16 {})",
        Int8Weights::accelerated(),
        Bf16Weights::accelerated()
    );
    for rows in [3200, 12] {
        for (k, n) in [(384, 1152), (384, 384), (384, 1536), (1536, 384)] {
            let w: Vec<f32> = (0..k * n)
                .map(|i| ((i * 7919) % 255) as f32 / 128.0 - 1.0)
                .collect();
            let bias = vec![0.5f32; n];
            let x: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 104_729) % 511) as f32 / 256.0 - 1.0)
                .collect();
            let int8 = Int8Weights::new(&w, Some(&bias), k, n);
            let bf16 = Bf16Weights::new(&w, Some(&bias), k, n);
            let reps = (2_000_000_000 / (rows * k * n)).clamp(3, 2000);
            let f32_us = time(reps, || {
                black_box(common::gemm_f32(&x, &w, rows, k, n, threads));
            });
            let int8_us = time(reps, || {
                black_box(int8.product(&x, rows));
            });
            let bf16_us = time(reps, || {
                black_box(bf16.product(&x, rows));
            });
            let gmacs = |us: f64| (rows * k * n) as f64 / us / 1e3;
            println!(
                "[{rows:>4}, {k:>4}] · [{k:>4}, {n:>4}]: f32 gemm {f32_us:>9.1} µs ({:>5.1} GMAC/s) | int8 {int8_us:>9.1} µs ({:>5.1}, ×{:.2}) | bf16 {bf16_us:>9.1} µs ({:>5.1}, ×{:.2})",
                gmacs(f32_us),
                gmacs(int8_us),
                f32_us / int8_us,
                gmacs(bf16_us),
                f32_us / bf16_us,
            );
        }
    }
}

/// Median microseconds of `reps` runs after one warm-up.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut runs: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}
