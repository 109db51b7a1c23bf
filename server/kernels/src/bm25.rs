//! BM25 over an inverted index held in memory.
//!
//! The keyword leg answers from this while the server's in-memory copy of
//! the chunk table is current. Asking LanceDB's full-text index instead
//! costs a query plan, an async stream and a row-id mask for the scope on
//! every search: a fixed few milliseconds, which on a documentation set of a
//! few thousand chunks was most of a hybrid search's time
//! (docs/benchmarks.md, "The keyword leg from memory").
//!
//! The index does not tokenize: the caller feeds it tokens from the same
//! analyzer LanceDB's index uses, and the scores follow Lance's BM25
//! (k1 = 1.2, b = 0.75, idf = ln(1 + (N − n + 0.5) / (n + 0.5)), the
//! `(k1 + 1)` numerator kept). The collection's statistics (N, the
//! average length, each term's n) are an index's own by default
//! ([`Bm25Index::search`]), or summed over several indexes
//! ([`Statistics::add`], [`Bm25Index::search_with`]): the server holds one
//! index per library version and scores a search over several of them with
//! the statistics of all it searches, without building an index of them
//! all.
//!
//! Rows are numbered in the order they are added; a search takes the rows
//! in scope as ranges of those numbers, as the copy's dense scan
//! ([`crate::QuantizedRows`]) does. It lives beside that scan, in this crate
//! built optimised even in the dev profile, for the same reason: it runs on
//! every keyword search, and reads every chunk's tokens when the copy is
//! built.

use std::ops::Range;

use foldhash::HashMap;

use super::best::Best;
use super::Keep;

/// Lance's BM25 term-frequency saturation.
const K1: f32 = 1.2;
/// Lance's BM25 length normalisation.
const B: f32 = 0.75;

/// Builds a [`Bm25Index`] one row at a time.
#[derive(Debug, Default)]
pub struct Bm25Builder {
    terms: HashMap<Box<str>, u32>,
    /// Each term's (row, frequency), rows ascending.
    postings: Vec<Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    /// The term ids of the row being added.
    row: Vec<u32>,
    /// Each word given to [`Self::push_word`], and its terms' ids.
    words: HashMap<Box<str>, Box<[u32]>>,
}

/// What reads a word into its terms for [`Bm25Builder::push_word`]: called
/// with the word and a function to call once per term.
pub type Analyze<'a> = dyn FnMut(&str, &mut dyn FnMut(&str)) + 'a;

impl Bm25Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a token to the row being built.
    pub fn push_token(&mut self, token: &str) {
        let id = self.term(token);
        self.row.push(id);
    }

    /// Adds to the row being built the terms `analyze` gives for `word`
    /// (it calls its second argument once per term). `analyze` runs the
    /// first time the builder meets `word`; after that its terms are
    /// remembered, so they must depend on the word alone. This saves an
    /// analyzer's work (lower case, stem, stop words) on every repeat of a
    /// word, which is most words of a large text.
    pub fn push_word(&mut self, word: &str, analyze: &mut Analyze<'_>) {
        if let Some(ids) = self.words.get(word) {
            self.row.extend_from_slice(ids);
            return;
        }
        let mut ids = Vec::new();
        analyze(word, &mut |term| ids.push(self.term(term)));
        self.row.extend_from_slice(&ids);
        self.words.insert(word.into(), ids.into_boxed_slice());
    }

    /// The id of `token`'s term, numbered now if it is new.
    fn term(&mut self, token: &str) -> u32 {
        if let Some(&id) = self.terms.get(token) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.terms.insert(token.into(), id);
        self.postings.push(Vec::new());
        id
    }

    /// Ends the row being built; the next token starts the next row.
    pub fn end_row(&mut self) {
        let row = self.lengths.len() as u32;
        self.lengths.push(self.row.len() as u32);
        self.row.sort_unstable();
        for run in self.row.chunk_by(|a, b| a == b) {
            self.postings[run[0] as usize].push((row, run.len() as u32));
        }
        self.row.clear();
    }

    /// Appends `later`'s rows after the rows ended here, as if they had
    /// been added to this builder in order: how rows read in parts on
    /// several threads become one index. Neither may have a row still being
    /// built.
    pub fn append(&mut self, later: Bm25Builder) {
        debug_assert!(
            self.row.is_empty() && later.row.is_empty(),
            "rows are appended whole"
        );
        let offset = self.lengths.len() as u32;
        // Later's term ids, in this builder's numbering.
        let mut renumbered = vec![0u32; later.postings.len()];
        for (term, id) in later.terms {
            let next = self.postings.len() as u32;
            renumbered[id as usize] = *self.terms.entry(term).or_insert_with(|| {
                self.postings.push(Vec::new());
                next
            });
        }
        for (id, list) in later.postings.into_iter().enumerate() {
            let into = &mut self.postings[renumbered[id] as usize];
            into.extend(list.into_iter().map(|(row, f)| (row + offset, f)));
        }
        self.lengths.extend(later.lengths);
    }

    /// The index of the rows ended so far.
    pub fn finish(self) -> Bm25Index {
        // Rows without a token count in neither statistic, as in Lance.
        let documents = self.lengths.iter().filter(|&&l| l > 0).count();
        let total: u64 = self.lengths.iter().map(|&l| u64::from(l)).sum();
        let entries: usize = self.postings.iter().map(Vec::len).sum();
        let mut starts = Vec::with_capacity(self.postings.len() + 1);
        let (mut rows, mut frequencies) =
            (Vec::with_capacity(entries), Vec::with_capacity(entries));
        starts.push(0);
        for list in self.postings {
            for (row, frequency) in list {
                rows.push(row);
                frequencies.push(frequency);
            }
            starts.push(rows.len());
        }
        let mut terms = self.terms;
        terms.shrink_to_fit();
        Bm25Index {
            terms,
            starts,
            rows,
            frequencies,
            lengths: self.lengths,
            documents,
            tokens: total,
        }
    }
}

/// The collection statistics BM25 scores a query with: rows with a token
/// (N), their tokens, and how many of them hold each of the query's tokens
/// (n), in the query's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Statistics {
    pub documents: u64,
    pub tokens: u64,
    pub containing: Vec<u64>,
}

impl Statistics {
    /// Adds another index's statistics for the same query.
    pub fn add(&mut self, other: &Statistics) {
        self.documents += other.documents;
        self.tokens += other.tokens;
        if self.containing.len() < other.containing.len() {
            self.containing.resize(other.containing.len(), 0);
        }
        for (sum, n) in self.containing.iter_mut().zip(&other.containing) {
            *sum += n;
        }
    }

    fn average_length(&self) -> f32 {
        if self.documents == 0 {
            0.0
        } else {
            // As [`Bm25Builder::finish`] divides: one index scores alike
            // either way.
            self.tokens as f32 / self.documents as f32
        }
    }
}

/// Rows' tokens as postings lists, searchable by BM25.
#[derive(Debug, Default)]
pub struct Bm25Index {
    terms: HashMap<Box<str>, u32>,
    /// Term `t`'s postings are `rows[starts[t]..starts[t + 1]]` (ascending)
    /// and the same range of `frequencies`.
    starts: Vec<usize>,
    rows: Vec<u32>,
    frequencies: Vec<u32>,
    /// Tokens in each row.
    lengths: Vec<u32>,
    /// Rows with at least one token: the N of the idf.
    documents: usize,
    /// Tokens in all rows.
    tokens: u64,
}

impl Bm25Index {
    /// How many rows it indexes.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether it indexes no row.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Bytes held, the term table at its capacity.
    pub fn bytes(&self) -> usize {
        let term_text: usize = self.terms.keys().map(|t| t.len()).sum();
        term_text
            + self.terms.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
            + self.starts.capacity() * std::mem::size_of::<usize>()
            + (self.rows.capacity() + self.frequencies.capacity() + self.lengths.capacity()) * 4
    }

    /// The `k` rows within `ranges` (and, when given, accepted by `keep`)
    /// that score highest for `query` (its tokens, each counted once per
    /// time it occurs), best first, as (row, score). Rows matching no
    /// token are left out. Equal scores go to the lower row, so the answer
    /// is deterministic.
    pub fn search(
        &self,
        query: &[&str],
        ranges: &[Range<usize>],
        keep: Option<&Keep<'_>>,
        k: usize,
    ) -> Vec<(usize, f32)> {
        let statistics = self.statistics(query);
        self.search_with(query, ranges, keep, k, &statistics)
    }

    /// This index's statistics for `query`'s tokens: what
    /// [`Bm25Index::search_with`] takes, summed over every index searched.
    pub fn statistics(&self, query: &[&str]) -> Statistics {
        Statistics {
            documents: self.documents as u64,
            tokens: self.tokens,
            containing: query
                .iter()
                .map(|token| {
                    self.terms.get(*token).map_or(0, |&term| {
                        (self.starts[term as usize + 1] - self.starts[term as usize]) as u64
                    })
                })
                .collect(),
        }
    }

    /// [`Self::search`] scored with `statistics` (for `query`'s tokens, in
    /// order) instead of this index's own.
    pub fn search_with(
        &self,
        query: &[&str],
        ranges: &[Range<usize>],
        keep: Option<&Keep<'_>>,
        k: usize,
        statistics: &Statistics,
    ) -> Vec<(usize, f32)> {
        if k == 0 || self.is_empty() {
            return Vec::new();
        }
        let documents = statistics.documents as f32;
        let average_length = statistics.average_length();
        // Scores by row, in a buffer as long as the index: a common term
        // touches a large share of a large copy's rows, and adding into a
        // buffer costs far less than into a hash map. Its pages are zeroed
        // by the system as they are first written, so a search pays for the
        // rows it touches. Every term's share is positive (idf > 0 since
        // n ≤ N, and the frequency ≥ 1), so a zero score is an untouched row.
        let mut scores = vec![0.0f32; self.lengths.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (at, token) in query.iter().enumerate() {
            let Some(&term) = self.terms.get(*token) else {
                continue;
            };
            let postings = self.starts[term as usize]..self.starts[term as usize + 1];
            let (in_rows, frequencies) =
                (&self.rows[postings.clone()], &self.frequencies[postings]);
            // At least this index's own rows, whatever was summed.
            let containing = statistics
                .containing
                .get(at)
                .map_or(0, |&n| n)
                .max(in_rows.len() as u64) as f32;
            let idf = ((documents - containing + 0.5) / (containing + 0.5) + 1.0).ln();
            for range in ranges {
                let from = in_rows.partition_point(|&r| (r as usize) < range.start);
                let to = in_rows.partition_point(|&r| (r as usize) < range.end);
                for (&row, &frequency) in in_rows[from..to].iter().zip(&frequencies[from..to]) {
                    if keep.is_some_and(|keep| !keep(row as usize)) {
                        continue;
                    }
                    let score = &mut scores[row as usize];
                    if *score == 0.0 {
                        touched.push(row);
                    }
                    *score += idf * self.weight(row, frequency, average_length);
                }
            }
        }
        let mut best = Best::new(k);
        for row in touched {
            best.offer(row as usize, scores[row as usize]);
        }
        best.into_best_first()
    }

    /// The frequency half of BM25 for a term seen `frequency` times in `row`.
    fn weight(&self, row: u32, frequency: u32, average_length: f32) -> f32 {
        let length = self.lengths[row as usize] as f32;
        let norm = K1 * (1.0 - B + B * length / average_length);
        let frequency = frequency as f32;
        (K1 + 1.0) * frequency / (frequency + norm)
    }
}

#[cfg(test)]
// A scope of one row range is what these searches mean, not a range's rows.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn builder(rows: &[&str]) -> Bm25Builder {
        let mut builder = Bm25Builder::new();
        for row in rows {
            for token in row.split_whitespace() {
                builder.push_token(token);
            }
            builder.end_row();
        }
        builder
    }

    fn index(rows: &[&str]) -> Bm25Index {
        builder(rows).finish()
    }

    /// BM25 by its formula, in f64, for one row.
    fn reference(rows: &[&str], query: &[&str], row: usize) -> f64 {
        let tokens: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.split_whitespace().collect())
            .collect();
        let n = rows.len() as f64;
        let average = tokens.iter().map(Vec::len).sum::<usize>() as f64 / n;
        query
            .iter()
            .map(|term| {
                let containing = tokens.iter().filter(|t| t.contains(term)).count() as f64;
                let frequency = tokens[row].iter().filter(|t| *t == term).count() as f64;
                if frequency == 0.0 {
                    return 0.0;
                }
                let idf = ((n - containing + 0.5) / (containing + 0.5) + 1.0).ln();
                let norm = 1.2 * (1.0 - 0.75 + 0.75 * tokens[row].len() as f64 / average);
                idf * 2.2 * frequency / (frequency + norm)
            })
            .sum()
    }

    const ROWS: &[&str] = &[
        "git rebase onto a branch",
        "rebase rebase rebase interactive",
        "merge a branch into main",
        "the stash keeps work aside",
        "git merge and git rebase compared at length with many more words here",
    ];

    /// Two indexes searched with their statistics summed score every row
    /// as one index of all their rows does: what the server's search over
    /// several library versions relies on.
    #[test]
    fn summed_statistics_score_as_one_index() {
        let (first, second) = ROWS.split_at(2);
        let (a, b, whole) = (index(first), index(second), index(ROWS));
        let query = ["rebase", "branch", "git", "absent"];
        let mut statistics = a.statistics(&query);
        statistics.add(&b.statistics(&query));
        assert_eq!(statistics, whole.statistics(&query));
        let mut split: Vec<(usize, f32)> = a.search_with(&query, &[0..2], None, 10, &statistics);
        split.extend(
            b.search_with(&query, &[0..3], None, 10, &statistics)
                .into_iter()
                .map(|(row, score)| (row + 2, score)),
        );
        split.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        let together = whole.search(&query, &[0..ROWS.len()], None, 10);
        assert_eq!(split.len(), together.len());
        for ((row, score), (expected_row, expected)) in split.iter().zip(&together) {
            assert_eq!(row, expected_row);
            assert!(
                (score - expected).abs() < 1e-6,
                "{row}: {score} vs {expected}"
            );
        }
        // Alone, an index scores by its own rows: another ranking.
        assert_ne!(a.search(&query, &[0..2], None, 10), split[..2].to_vec());
    }

    #[test]
    fn scores_follow_the_formula() {
        let idx = index(ROWS);
        let query = ["rebase", "branch", "absent"];
        let hits = idx.search(&query, &[0..ROWS.len()], None, 10);
        assert_eq!(hits.len(), 4, "rows without a query token are left out");
        for (row, score) in &hits {
            let expected = reference(ROWS, &query, *row);
            assert!(
                (f64::from(*score) - expected).abs() < 1e-5,
                "{row}: {score} vs {expected}"
            );
        }
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
        assert_eq!(hits[0].0, 0, "both tokens outrank one token thrice");
    }

    #[test]
    fn ranges_and_keep_limit_the_rows_but_not_the_statistics() {
        let idx = index(ROWS);
        let all = idx.search(&["git"], &[0..5], None, 10);
        let rows: Vec<usize> = all.iter().map(|h| h.0).collect();
        assert_eq!(rows.len(), 2);
        let scoped = idx.search(&["git"], &[4..5], None, 10);
        assert_eq!(scoped, vec![*all.iter().find(|h| h.0 == 4).expect("row 4")]);
        let kept = idx.search(&["branch"], &[0..2, 2..5], Some(&|row| row != 0), 10);
        assert_eq!(kept.iter().map(|h| h.0).collect::<Vec<_>>(), vec![2]);
        assert!(idx.search(&["git"], &[], None, 10).is_empty());
    }

    #[test]
    fn a_repeated_query_token_counts_each_time_and_ties_go_to_the_lower_row() {
        let idx = index(&["a b", "a c", "a b"]);
        let once = idx.search(&["b"], &[0..3], None, 10);
        let twice = idx.search(&["b", "b"], &[0..3], None, 10);
        assert_eq!(once.iter().map(|h| h.0).collect::<Vec<_>>(), vec![0, 2]);
        assert!((twice[0].1 - 2.0 * once[0].1).abs() < 1e-6);
        assert_eq!(idx.search(&["b"], &[0..3], None, 1), vec![once[0]]);
        assert!(Bm25Builder::new()
            .finish()
            .search(&["a"], &[0..0], None, 5)
            .is_empty());
    }

    #[test]
    fn rows_built_in_parts_and_appended_index_as_one_builder_does() {
        let mut appended = builder(&ROWS[..2]);
        for part in [&ROWS[2..3], &[], &ROWS[3..]] {
            appended.append(builder(part));
        }
        let (appended, whole) = (appended.finish(), index(ROWS));
        assert_eq!(appended.len(), ROWS.len());
        for query in [
            &["rebase"][..],
            &["git", "branch", "stash"],
            &["words", "main"],
        ] {
            assert_eq!(
                appended.search(query, &[0..ROWS.len()], None, 10),
                whole.search(query, &[0..ROWS.len()], None, 10),
                "{query:?}"
            );
        }
    }

    #[test]
    fn a_word_is_analysed_once_and_indexes_as_its_terms() {
        let rows = ["The Rebase", "the rebase rebase REBASE", "merge rebase"];
        let mut calls = 0;
        let mut by_word = Bm25Builder::new();
        {
            // Lower case, and "the" a stop word.
            let mut analyze = |word: &str, term: &mut dyn FnMut(&str)| {
                calls += 1;
                if !word.eq_ignore_ascii_case("the") {
                    term(&word.to_lowercase());
                }
            };
            for row in rows {
                for word in row.split_whitespace() {
                    by_word.push_word(word, &mut analyze);
                }
                by_word.end_row();
            }
        }
        assert_eq!(calls, 6, "The, Rebase, the, rebase, REBASE, merge");
        let (by_word, by_token) = (
            by_word.finish(),
            index(&["rebase", "rebase rebase rebase", "merge rebase"]),
        );
        for query in [&["rebase"][..], &["merge", "rebase"], &["the"]] {
            assert_eq!(
                by_word.search(query, &[0..3], None, 10),
                by_token.search(query, &[0..3], None, 10),
                "{query:?}"
            );
        }
    }

    #[test]
    fn rows_without_a_token_count_in_no_statistic() {
        let with_empty = index(&["a b", "", "a c", "a b"]);
        let without = index(&["a b", "a c", "a b"]);
        let got = with_empty.search(&["b"], &[0..4], None, 10);
        let want = without.search(&["b"], &[0..3], None, 10);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(got[0].1, want[0].1);
    }
}
