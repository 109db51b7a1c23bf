//! What the kernel benches share: the `gemm` crate's f32 product, the one
//! burn's CPU backend runs, as the reference each kernel is measured against.

/// `x · w` for `x` `[rows, k]` and `w` `[k, n]`, row-major, on `threads`
/// rayon threads.
pub fn gemm_f32(x: &[f32], w: &[f32], rows: usize, k: usize, n: usize, threads: usize) -> Vec<f32> {
    assert!(x.len() >= rows * k && w.len() >= k * n, "shapes");
    let mut out = vec![0.0f32; rows * n];
    // SAFETY: `out` is [rows, n], `x` is [rows, k] and `w` [k, n] (checked
    // above), all row-major and alive for the call.
    unsafe {
        gemm::gemm(
            rows,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(threads),
        );
    }
    out
}
