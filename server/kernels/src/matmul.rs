//! A bounds-checked face on the `gemm` crate for strided single-threaded
//! products: the attention kernel multiplies one head's slice of a
//! `[tokens, width]` row-major matrix, which is a strided view, and the
//! `gemm` crate (the same one burn's CPU backend uses) reads such views in
//! place instead of copying them out first.

/// A read-only strided view of a row-major `f32` matrix.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    /// Elements between the starts of consecutive rows.
    pub row_stride: usize,
    /// Elements between consecutive columns.
    pub col_stride: usize,
}

impl<'a> View<'a> {
    /// `rows × cols` elements from the start of `data`, rows `row_stride`
    /// apart, columns adjacent.
    pub fn rows(data: &'a [f32], rows: usize, cols: usize, row_stride: usize) -> Self {
        Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride: 1,
        }
    }

    /// The matrix as its transpose, without moving any data.
    pub fn transposed(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// One past the largest index the view can touch.
    fn extent(&self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride + 1
    }
}

/// `dst[rows × cols] = scale · lhs · rhs`, where `dst` has the given row
/// stride and unit column stride, on the calling thread.
///
/// # Panics
/// If the shapes disagree or a view reaches past its slice: both are
/// programming errors in the caller, checked here because `gemm` itself
/// takes raw pointers and would read or write out of bounds instead.
pub fn product(dst: &mut [f32], dst_row_stride: usize, lhs: View<'_>, rhs: View<'_>, scale: f32) {
    let (m, n, k) = (lhs.rows, rhs.cols, lhs.cols);
    assert_eq!(rhs.rows, k, "inner dimensions differ");
    assert!(lhs.extent() <= lhs.data.len(), "lhs view out of bounds");
    assert!(rhs.extent() <= rhs.data.len(), "rhs view out of bounds");
    if m == 0 || n == 0 {
        return;
    }
    assert!(
        (m - 1) * dst_row_stride + n <= dst.len() && n <= dst_row_stride,
        "destination out of bounds"
    );
    let stride = |s: usize| isize::try_from(s).expect("stride fits in isize");
    // SAFETY: the asserts above keep every element `gemm` reads within
    // `lhs.data` and `rhs.data`, and every element it writes within `dst`,
    // which the exclusive borrow makes ours alone. `read_dst` is false, so
    // `dst`'s previous contents are never read, and `Parallelism::None`
    // keeps the work on this thread, so the borrows outlive it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            stride(dst_row_stride),
            false,
            lhs.data.as_ptr(),
            stride(lhs.col_stride),
            stride(lhs.row_stride),
            rhs.data.as_ptr(),
            stride(rhs.col_stride),
            stride(rhs.row_stride),
            0.0,
            scale,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        out
    }

    #[test]
    fn strided_and_transposed_views_multiply_like_dense_matrices() {
        // A 5 × 3 block at column 2 of a 5 × 8 matrix, times the transpose
        // of a 4 × 3 block at column 4 of a 4 × 8 matrix: the shapes of
        // one head's query and key slices.
        let wide_a: Vec<f32> = (0..40).map(|i| (i as f32 * 0.37).sin()).collect();
        let wide_b: Vec<f32> = (0..32).map(|i| (i as f32 * 0.11).cos()).collect();
        let a: Vec<f32> = (0..5)
            .flat_map(|r| wide_a[r * 8 + 2..r * 8 + 5].to_vec())
            .collect();
        let b: Vec<f32> = (0..4)
            .flat_map(|r| wide_b[r * 8 + 4..r * 8 + 7].to_vec())
            .collect();
        let b_t: Vec<f32> = (0..3)
            .flat_map(|c| (0..4).map(move |r| (r, c)))
            .map(|(r, c)| b[r * 3 + c])
            .collect();
        let want = naive(&a, &b_t, 5, 3, 4);

        let lhs = View::rows(&wide_a[2..], 5, 3, 8);
        let rhs = View::rows(&wide_b[4..], 4, 3, 8).transposed();
        // Written into the middle of wider rows, as a head's output is.
        let mut dst = [f32::NAN; 5 * 6];
        product(&mut dst[1..], 6, lhs, rhs, 2.0);
        for i in 0..5 {
            for j in 0..4 {
                let got = dst[1 + i * 6 + j];
                assert!(
                    (got - 2.0 * want[i * 4 + j]).abs() < 1e-5,
                    "({i}, {j}): {got}"
                );
            }
            assert!(
                dst[i * 6].is_nan() && dst[i * 6 + 5].is_nan(),
                "wrote outside the block"
            );
        }
    }

    #[test]
    #[should_panic(expected = "lhs view out of bounds")]
    fn a_view_past_its_slice_is_refused() {
        let data = vec![0.0; 10];
        let lhs = View::rows(&data, 3, 4, 4);
        let rhs = View::rows(&data, 4, 1, 1);
        product(&mut [0.0; 3], 1, lhs, rhs, 1.0);
    }
}
