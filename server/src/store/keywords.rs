//! The in-memory copy's keyword index: the chunks' `search_text` read by
//! LanceDB's own analyzer into index-core's BM25 postings
//! ([`docshelf_kernels::Bm25Index`]).
//!
//! Why the same analyzer: the keyword leg answers from this index while the
//! copy is current and from LanceDB's full-text index otherwise (a write
//! not yet copied, a table too large to copy). Reading text the same way
//! and scoring by the same formula makes the two answers agree (a test
//! compares them), so which one answered does not show in a ranking. They
//! can differ in two cases: between a delete and the next index refresh,
//! LanceDB's statistics still count the deleted rows (every upload ends
//! with a refresh); and an index built by an older LanceDB with other
//! defaults reads text by those, where this reads by today's.

use docshelf_kernels::{Bm25Builder, Bm25Index};
use lance_index::scalar::inverted::tokenizer::document_tokenizer::LanceTokenizer;
use lance_tokenizer::TokenStream;
use lancedb::index::scalar::FtsIndexBuilder;

use super::indexes::full_text_params;
use super::schema::{self, ChunkColumns};
use super::StoreError;

/// Fewest rows worth a thread of their own.
const MIN_PART: usize = 4096;

/// LanceDB's full-text analyzer, as the index on `search_text` is built with.
pub struct Analyzer(Box<dyn LanceTokenizer>);

impl Analyzer {
    /// The analyzer of [`full_text_params`].
    pub fn new() -> Result<Self, StoreError> {
        Self::of(full_text_params())
    }

    /// Its first stage alone: [`full_text_params`]'s split into words,
    /// every later stage off.
    fn words() -> Result<Self, StoreError> {
        Self::of(
            full_text_params()
                .max_token_length(None)
                .lower_case(false)
                .stem(false)
                .remove_stop_words(false)
                .ascii_folding(false),
        )
    }

    fn of(params: FtsIndexBuilder) -> Result<Self, StoreError> {
        params
            .build()
            .map(Self)
            .map_err(|e| StoreError::Shape(format!("the full-text analyzer: {e}")))
    }

    /// The tokens of a query, in order, repeats kept. Takes `&self` so that
    /// searches share one analyzer: each tokenizes with a clone (its stop
    /// words are shared, not copied).
    pub fn query_tokens(&self, query: &str) -> Vec<String> {
        let mut tokens = Vec::new();
        let mut analyzer = self.0.box_clone();
        analyzer
            .token_stream_for_search(query)
            .process(&mut |t| tokens.push(t.text.clone()));
        tokens
    }
}

/// Reads chunks' text into a [`Bm25Builder`], each distinct word analysed
/// once.
///
/// Every stage of LanceDB's analyzer after the split into words (length
/// limit, lower case, stem, stop words, ASCII folding) reads one word at a
/// time and nothing around it, so a word's terms are the analyzer's terms
/// for that word alone. Documentation repeats its words: at a million
/// chunks, analysing each word at every occurrence, the stemmer above all,
/// was most of reading the copy's text (a `perf` profile; docs/benchmarks.md,
/// "The copy's text analysed once per word"). So the text is only split
/// into words here, and the builder remembers each word's terms
/// ([`Bm25Builder::push_word`]).
struct TextReader {
    analyzer: Box<dyn LanceTokenizer>,
    /// The analyzer's first stage alone: text to words.
    words: Box<dyn LanceTokenizer>,
}

impl TextReader {
    fn new(analyzer: &Analyzer, words: &Analyzer) -> Self {
        Self {
            analyzer: analyzer.0.box_clone(),
            words: words.0.box_clone(),
        }
    }

    /// Adds one chunk's `search_text` to `builder` as its next row.
    fn add_row(&mut self, builder: &mut Bm25Builder, context: &str, text: &str) {
        let search_text = schema::search_text(context, text);
        let analyzer = &mut self.analyzer;
        let mut analyze = |word: &str, term: &mut dyn FnMut(&str)| {
            analyzer
                .token_stream_for_doc(word)
                .process(&mut |t| term(&t.text));
        };
        self.words
            .token_stream_for_doc(&search_text)
            .process(&mut |word| builder.push_word(&word.text, &mut analyze));
        builder.end_row();
    }
}

/// The BM25 index of `rows` (batch, row within it) of `batches`, row `i`
/// of the index being `rows[i]`.
///
/// Reading text is most of a copy's time at scale (docs/benchmarks.md,
/// "Every library of a million chunks"), so the rows are read
/// in one part per core and the parts' postings appended in order. Each
/// part runs on a thread of its own, not in rayon's pool: a part takes
/// seconds, and the embedder's passes, a search's included, queue for
/// rayon's threads.
pub fn index(batches: &[ChunkColumns], rows: &[(u32, u32)]) -> Result<Bm25Index, StoreError> {
    let (analyzer, words) = (Analyzer::new()?, Analyzer::words()?);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let part = rows.len().div_ceil(threads).max(MIN_PART);
    let parts: Vec<Bm25Builder> = std::thread::scope(|scope| {
        let readers: Vec<_> = rows
            .chunks(part)
            .map(|rows| {
                let mut reader = TextReader::new(&analyzer, &words);
                scope.spawn(move || {
                    let mut builder = Bm25Builder::new();
                    for &(batch, row) in rows {
                        let columns = &batches[batch as usize];
                        reader.add_row(
                            &mut builder,
                            columns.context(row as usize),
                            columns.text(row as usize),
                        );
                    }
                    builder
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|reader| {
                reader
                    .join()
                    .map_err(|_| StoreError::TaskStopped("reading the copy's text panicked".into()))
            })
            .collect::<Result<_, _>>()
    })?;
    let mut parts = parts.into_iter();
    let mut whole = parts.next().unwrap_or_default();
    for part in parts {
        whole.append(part);
    }
    Ok(whole.finish())
}
