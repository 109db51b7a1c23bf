//! WordPiece tokenisation from `tokenizer.json`, and per-batch padding.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::EmbedError;

/// The model's tokenizer, set up the way sentence-transformers uses it.
pub struct WordPiece {
    inner: Tokenizer,
}

impl WordPiece {
    /// Loads `tokenizer.json`, truncating at `max_tokens` (special tokens
    /// included) and without padding: padding is per batch, in [`pad`].
    ///
    /// The file as shipped pads and truncates at 128; sentence-transformers
    /// overrides both, and so must we to produce the same vectors.
    pub fn from_file(path: &Path, max_tokens: usize) -> Result<Self, EmbedError> {
        let err = |reason: String| EmbedError::Tokenizer {
            path: path.to_owned(),
            reason,
        };
        let mut inner = Tokenizer::from_file(path).map_err(|e| err(e.to_string()))?;
        inner.with_padding(None);
        inner
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| err(e.to_string()))?;
        Ok(Self { inner })
    }

    /// Token ids of each text, with `[CLS]` and `[SEP]`.
    pub fn encode<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let inputs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        let encodings = self
            .inner
            .encode_batch(inputs, true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }
}

/// A batch padded to its longest row, row-major.
pub struct Padded {
    pub rows: usize,
    pub cols: usize,
    /// Token ids, `0` (`[PAD]`) after each row's end.
    pub ids: Vec<i64>,
    /// Real tokens per row; each row's padding follows them.
    pub lengths: Vec<usize>,
}

/// Pads `rows` to the longest one.
pub fn pad(rows: &[&[u32]]) -> Padded {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
    let mut ids = vec![0_i64; rows.len() * cols];
    for (r, row) in rows.iter().enumerate() {
        for (c, &id) in row.iter().enumerate() {
            ids[r * cols + c] = i64::from(id);
        }
    }
    Padded {
        rows: rows.len(),
        cols,
        ids,
        lengths: rows.iter().map(|r| r.len()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_fills_to_the_longest_row_and_counts_the_real_tokens() {
        let a = [101_u32, 7, 102];
        let b = [101_u32, 102];
        let p = pad(&[&a, &b]);
        assert_eq!((p.rows, p.cols), (2, 3));
        assert_eq!(p.ids, vec![101, 7, 102, 101, 102, 0]);
        assert_eq!(p.lengths, vec![3, 2]);
    }
}
