//! WordPiece tokenisation from `tokenizer.json`, and per-batch padding.

use std::path::Path;

use tokenizers::{
    EncodeInput, Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};

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
        Ok(self
            .encode_batch(inputs)?
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// Each input through the tokenizer, with `[CLS]` and `[SEP]`.
    fn encode_batch<'s, E>(&self, inputs: Vec<E>) -> Result<Vec<Encoding>, EmbedError>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        self.inner
            .encode_batch(inputs, true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))
    }

    /// Tokens of `first` paired with each of `seconds`, through the
    /// tokenizer's own pair template. Truncation takes tokens from the
    /// longer text first, as Hugging Face's `longest_first` does. An empty
    /// second text is no second segment at all (`[CLS] first [SEP]`):
    /// `transformers` encodes it so, and a model must see what it would.
    pub fn encode_pairs<S: AsRef<str>>(
        &self,
        first: &str,
        seconds: &[S],
    ) -> Result<Vec<Pair>, EmbedError> {
        let inputs: Vec<EncodeInput<'_>> = seconds
            .iter()
            .map(|s| match s.as_ref() {
                "" => EncodeInput::Single(first.into()),
                second => EncodeInput::Dual(first.into(), second.into()),
            })
            .collect();
        Ok(self
            .encode_batch(inputs)?
            .into_iter()
            .map(|e| {
                let ids = e.get_ids().to_vec();
                let second = e
                    .get_type_ids()
                    .iter()
                    .position(|&t| t == 1)
                    .unwrap_or(ids.len());
                Pair { ids, second }
            })
            .collect())
    }
}

/// The tokens of a (first, second) text pair, `[CLS] first [SEP] second
/// [SEP]`, as a cross-encoder reads it.
pub struct Pair {
    pub ids: Vec<u32>,
    /// Where the second segment starts: its tokens and the final `[SEP]`
    /// are segment 1, everything before is segment 0.
    pub second: usize,
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

impl Padded {
    /// Each token's segment, row-major like `ids`: 1 from `starts[row]` to
    /// the row's end, 0 before it and in the padding.
    pub fn segments(&self, starts: &[usize]) -> Vec<i64> {
        let mut types = vec![0_i64; self.rows * self.cols];
        for (r, (&start, &len)) in starts.iter().zip(&self.lengths).enumerate() {
            for t in &mut types[r * self.cols + start.min(len)..r * self.cols + len] {
                *t = 1;
            }
        }
        types
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

    #[test]
    fn segments_mark_each_second_text_up_to_its_end() {
        let a = [101_u32, 7, 102, 8, 102];
        let b = [101_u32, 9, 102];
        let p = pad(&[&a, &b]);
        assert_eq!(p.segments(&[3, 3]), vec![0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    }
}
