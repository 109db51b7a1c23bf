//! Tokens as agents' models count them: OpenAI's o200k_base BPE (GPT-4o
//! and later), whose vocabulary is compiled in, so counting needs no
//! download. What [`index_core::budget`] fills a budget with.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// The tokenizer's name, as answers report it.
pub const TOKENIZER: &str = "o200k_base";

/// The tokenizer, built once (its 200k-entry vocabulary takes a moment to
/// read), or why it could not be.
fn bpe() -> Result<&'static CoreBPE, &'static str> {
    static BPE: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
    BPE.get_or_init(|| {
        tiktoken_rs::o200k_base().map_err(|e| format!("the {TOKENIZER} tokenizer: {e}"))
    })
    .as_ref()
    .map_err(String::as_str)
}

/// Builds the tokenizer ahead of the first budgeted search.
pub fn warm() {
    if let Err(err) = bpe() {
        tracing::warn!(err, "token budgets are unavailable");
    }
}

/// A counter over the loaded tokenizer, or why it could not load (it is
/// compiled in, so only a broken build fails here).
pub fn counter() -> Result<impl Fn(&str) -> usize, &'static str> {
    let bpe = bpe()?;
    Ok(move |text: &str| bpe.encode_ordinary(text).len())
}

/// Counts `text`'s tokens; special tokens' spellings count as text, as an
/// agent's client sends them.
pub fn count(text: &str) -> Result<usize, &'static str> {
    Ok(bpe()?.encode_ordinary(text).len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_as_o200k_base_does() {
        // Figures from OpenAI's tiktoken (o200k_base).
        assert_eq!(count("hello world").unwrap(), 2);
        assert_eq!(count("").unwrap(), 0);
        assert!(count("<|endoftext|>").unwrap() > 1);
    }
}
