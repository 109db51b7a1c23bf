//! Token budgets: an answer sized by what an agent can spend, not by `k`;
//! the contract (what an answer says of its budget) and the cut of a text
//! to a budget. Filling a search answer is the server's
//! (`search::budget`).
//!
//! A search with `max_tokens` turns its hits into *passages* in compact
//! Markdown (where the text is from, then the text, no markup for people)
//! and fills the answer best first until the budget is met. A passage is
//! the whole section a result's best chunk sits in where that takes at most
//! half of the budget left, else the chunk as stored; the chunker never splits a code block, so code
//! comes whole or not at all. A passage that does not fit is left out and
//! a smaller one after it may still fit.
//!
//! No text twice: the same passage met again, word for word or nearly (two
//! versions, two paths, two libraries), is given once, and the others are
//! named in
//! [`Budget::repeats`]. Of the copies, the latest version's is kept (in the
//! place of the best-ranked copy), so an unfiltered search answers from the
//! newest release.
//!
//! Counting is the caller's: the server counts with the BPE agents' models
//! use; this crate stays free of it, for the browser's build.

use serde::{Deserialize, Serialize};

/// The smallest and largest budgets a search or a document read takes.
pub const MIN_TOKENS: usize = 50;
pub const MAX_TOKENS: usize = 100_000;

/// `max_tokens` as a client sent it, if it is a budget docshelf takes
/// ([`MIN_TOKENS`]..=[`MAX_TOKENS`]): one check for every request that
/// takes a budget.
pub fn within_range(max_tokens: i64) -> Option<usize> {
    usize::try_from(max_tokens)
        .ok()
        .filter(|n| (MIN_TOKENS..=MAX_TOKENS).contains(n))
}

/// Budget tokens per result ranked: a budgeted search without `k` ranks
/// one result per this many tokens (`k`'s default to its most), about what a passage
/// takes, so a small budget is filled from the ranking a small `k` gives
/// and a large one has enough to fill it (measured: docs/benchmarks.md).
pub const TOKENS_PER_RESULT: usize = 100;

/// How a budgeted answer was filled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Budget {
    /// The tokenizer that counted (`o200k_base`).
    pub tokenizer: String,
    pub max_tokens: usize,
    /// Tokens of `context`, as that tokenizer counts them: at most
    /// `max_tokens`.
    pub tokens: usize,
    /// Passages given (the results kept, in order).
    pub passages: usize,
    /// The passages (0-based, in `results`) that hold their whole section:
    /// the section itself where it fits, or a best chunk that holds it. The
    /// others are a best chunk, part of a section too long for the budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<usize>,
    /// Results left out because their passage did not fit.
    pub left_out: usize,
    /// Results whose text another passage already gives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<Repeat>,
}

/// A result left out because its text is given by another passage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Repeat {
    pub library: String,
    pub version: String,
    pub file_path: String,
    /// The kept result (0-based, in `results`) that gives the same text.
    pub same_as: usize,
}

/// The longest prefix of `text` that fits `max_tokens`, by `count`: `text`
/// itself when it fits, else cut where a block starts (one of `cuts`,
/// ascending). When nothing but headings fits that way, the next block is
/// cut at its last line that fits, else its last word: an agent reading a
/// document within a budget gets the start of its text, not a title alone
/// (a code block so cut leaves its fence open). Found by halving, so a long
/// document costs a few counts.
pub fn fit<'a>(
    text: &'a str,
    cuts: &[usize],
    max_tokens: usize,
    count: impl Fn(&str) -> usize,
) -> (&'a str, usize) {
    let whole = count(text);
    if whole <= max_tokens {
        return (text, whole);
    }
    let inside = |at: &usize| *at > 0 && *at < text.len();
    let blocks: Vec<usize> = cuts.iter().copied().filter(inside).collect();
    let kept = longest(text, &blocks, max_tokens, &count).unwrap_or(("", 0));
    if has_text(kept.0) {
        return kept;
    }
    let from = kept.0.len();
    let to = blocks
        .iter()
        .copied()
        .find(|&at| at > from)
        .unwrap_or(text.len());
    let block = &text[from..to];
    let further = |found: Option<(&'a str, usize)>| found.filter(|(t, _)| t.len() > from);
    let lines: Vec<usize> = block
        .match_indices('\n')
        .map(|(at, _)| from + at + 1)
        .filter(|&at| at < to)
        .collect();
    if let Some(found) = further(longest(text, &lines, max_tokens, &count)) {
        return found;
    }
    let words: Vec<usize> = block
        .char_indices()
        .filter(|(_, c)| c.is_whitespace())
        .map(|(at, _)| from + at)
        .filter(|&at| at > from)
        .collect();
    further(longest(text, &words, max_tokens, &count)).unwrap_or(kept)
}

/// Whether `text` holds more than headings and blank lines.
fn has_text(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .any(|line| !line.is_empty() && !line.starts_with('#'))
}

/// The longest prefix of `text` ending at one of `cuts` (ascending) that
/// fits `max_tokens`, by halving.
fn longest<'a>(
    text: &'a str,
    cuts: &[usize],
    max_tokens: usize,
    count: &impl Fn(&str) -> usize,
) -> Option<(&'a str, usize)> {
    let (mut lo, mut hi) = (0, cuts.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let prefix = &text[..cuts[mid]];
        let tokens = count(prefix);
        if tokens <= max_tokens {
            best = Some((prefix, tokens));
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words as tokens: enough to test the cutting.
    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    #[test]
    fn a_text_is_cut_at_the_last_block_that_fits() {
        let text = "one two\n\nthree four five\n\nsix\n";
        let cuts = [0, 9, 26];
        assert_eq!(fit(text, &cuts, 100, words), (text, 6));
        assert_eq!(
            fit(text, &cuts, 5, words),
            ("one two\n\nthree four five\n\n", 5)
        );
        assert_eq!(fit(text, &cuts, 3, words), ("one two\n\n", 2));
    }

    #[test]
    fn a_first_block_over_the_budget_is_cut_at_a_line_else_a_word() {
        let text = "one two\nthree four five\n\nsix\n";
        let cuts = [0, 25];
        assert_eq!(fit(text, &cuts, 3, words), ("one two\n", 2));
        assert_eq!(fit(text, &cuts, 1, words), ("one", 1));
        assert_eq!(fit("", &[0], 1, words), ("", 0));
        assert_eq!(fit("several words", &[0], 0, words), ("", 0));
    }

    #[test]
    fn a_heading_alone_is_not_all_a_budget_gives() {
        let text = "# Title\n\nalpha beta gamma delta\nepsilon zeta\n\n## Next\n\nomega\n";
        let cuts = [0, 9, 46, 55];
        assert_eq!(
            fit(text, &cuts, 7, words),
            ("# Title\n\nalpha beta gamma delta\n", 6)
        );
        assert_eq!(fit(text, &cuts, 3, words), ("# Title\n\nalpha", 3));
        // Too small for a word of the text: the heading, as before.
        assert_eq!(fit(text, &cuts, 2, words), ("# Title\n\n", 2));
    }

    #[test]
    fn budgets_outside_the_range_are_refused() {
        assert_eq!(within_range(MIN_TOKENS as i64), Some(MIN_TOKENS));
        assert_eq!(within_range(MAX_TOKENS as i64), Some(MAX_TOKENS));
        for bad in [
            -1,
            0,
            MIN_TOKENS as i64 - 1,
            MAX_TOKENS as i64 + 1,
            i64::MIN,
        ] {
            assert_eq!(within_range(bad), None, "{bad}");
        }
    }
}
