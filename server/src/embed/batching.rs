//! How many texts go through the network at once, and on which cores.
//!
//! Both networks (the embedder and the cross-encoder) run the same way:
//! rows sorted by token count so each batch pads to a similar length (a
//! short query never pays for a 256-token neighbour), batches of at most
//! `batch` rows, and on the CPU each batch split into one slice per core,
//! run side by side.
//!
//! Why the split: not every burn kernel uses every core, so a single
//! forward pass leaves cores idle for part of it. On 2 cores, with GELU and
//! attention already in the parallel kernels of `docshelf-kernels`, two
//! slices embedded chunks more than half as fast again as one pass, and four
//! about as fast as two (docs/benchmarks.md, "Embedding speed and the CPU
//! kernels"). Each slice is padded to its own longest row.

use rayon::prelude::*;

use super::EmbedError;

/// The fewest rows worth a forward pass of their own on a CPU core: below
/// this, splitting a batch costs more in small matrix products than it gains.
const MIN_ROWS_PER_SLICE: usize = 4;

/// Runs `forward` over `rows` as described in the module docs and returns
/// one output per row, in the order of `rows`. `tokens` says how long a row
/// is; `split` allows slicing batches across cores (the CPU backend only:
/// a GPU wants whole batches).
pub fn run<R, T>(
    rows: &[R],
    tokens: impl Fn(&R) -> usize,
    batch: usize,
    split: bool,
    forward: impl Fn(&[&R]) -> Result<Vec<T>, EmbedError> + Sync,
) -> Result<Vec<T>, EmbedError>
where
    R: Sync,
    T: Send,
{
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| tokens(&rows[i]));

    let mut out: Vec<Option<T>> = std::iter::repeat_with(|| None).take(rows.len()).collect();
    for group in order.chunks(batch.max(1)) {
        let batch_rows: Vec<&R> = group.iter().map(|&i| &rows[i]).collect();
        let outputs = sliced(&batch_rows, split, &forward)?;
        if outputs.len() != group.len() {
            return Err(EmbedError::Backend(format!(
                "the network returned {} outputs for {} inputs",
                outputs.len(),
                group.len()
            )));
        }
        for (&i, output) in group.iter().zip(outputs) {
            out[i] = Some(output);
        }
    }
    // Every index of `order` was in exactly one group, and each group's
    // outputs were counted, so every slot is filled.
    Ok(out.into_iter().flatten().collect())
}

/// One batch, in one slice per core where `split` allows it.
fn sliced<R, T>(
    rows: &[&R],
    split: bool,
    forward: &(impl Fn(&[&R]) -> Result<Vec<T>, EmbedError> + Sync),
) -> Result<Vec<T>, EmbedError>
where
    R: Sync,
    T: Send,
{
    let parts = if split {
        rayon::current_num_threads().min(rows.len() / MIN_ROWS_PER_SLICE)
    } else {
        1
    };
    if parts <= 1 {
        return forward(rows);
    }
    let slices: Vec<Result<Vec<T>, EmbedError>> = rows
        .par_chunks(rows.len().div_ceil(parts))
        .map(forward)
        .collect();
    let mut out = Vec::with_capacity(rows.len());
    for slice in slices {
        out.extend(slice?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_come_back_in_input_order_whatever_the_batching() {
        let rows: Vec<Vec<u32>> = (0..37).map(|i| vec![0; (i * 7) % 11 + 1]).collect();
        for (batch, split) in [(1, false), (4, true), (32, true), (100, false)] {
            let out = run(&rows, Vec::len, batch, split, |b| {
                Ok(b.iter().map(|r| r.len()).collect())
            })
            .expect("runs");
            let want: Vec<usize> = rows.iter().map(Vec::len).collect();
            assert_eq!(out, want, "batch {batch}, split {split}");
        }
    }

    #[test]
    fn a_short_answer_from_the_network_is_an_error() {
        let rows = vec![vec![1_u32], vec![2]];
        let err = run(&rows, Vec::len, 8, false, |_| Ok(vec![0_u8])).unwrap_err();
        assert!(err.to_string().contains("1 outputs for 2 inputs"), "{err}");
    }
}
