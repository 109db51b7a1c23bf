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

/// The analyzer's first stage alone: [`full_text_params`]'s split into
/// words (LanceDB's `simple` tokenizer: runs of letters and digits), every
/// later stage off.
fn word_splitter() -> Result<Box<dyn LanceTokenizer>, StoreError> {
    Analyzer::of(
        full_text_params()
            .max_token_length(None)
            .lower_case(false)
            .stem(false)
            .remove_stop_words(false)
            .ascii_folding(false),
    )
    .map(|words| words.0)
}

/// Reads chunks' text into a [`Bm25Builder`], each distinct word analysed
/// once.
///
/// Every stage of LanceDB's analyzer after the split into words (length
/// limit, lower case, stem, stop words, ASCII folding) reads one word at a
/// time and nothing around it, and the split gives a word back unchanged
/// when it splits that word alone, so a word's terms are the analyzer's
/// terms for that word alone (a test compares the two on varied text). Documentation repeats its words: at a million
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
    fn new(analyzer: &Analyzer, words: &dyn LanceTokenizer) -> Self {
        Self {
            analyzer: analyzer.0.box_clone(),
            words: words.box_clone(),
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
/// part runs on a thread of its own, not in rayon's pool: a part is a long
/// run of work, and the embedder's passes, a search's included, queue for
/// rayon's threads.
pub fn index(batches: &[ChunkColumns], rows: &[(u32, u32)]) -> Result<Bm25Index, StoreError> {
    let (analyzer, words) = (Analyzer::new()?, word_splitter()?);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let part = rows.len().div_ceil(threads).max(MIN_PART);
    let parts: Vec<Bm25Builder> = std::thread::scope(|scope| {
        let readers: Vec<_> = rows
            .chunks(part)
            .map(|rows| {
                let mut reader = TextReader::new(&analyzer, words.as_ref());
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
        // Every part joined before any error is returned: a part left
        // unjoined after a panic would panic the scope again.
        let joined: Vec<_> = readers.into_iter().map(|reader| reader.join()).collect();
        joined
            .into_iter()
            .map(|part| {
                part.map_err(|panic| {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    StoreError::TaskStopped(format!("reading the copy's text panicked: {why}"))
                })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy analyses each word alone ([`TextReader`]); LanceDB's index
    /// analyses the whole text. On text that strains the split (punctuation
    /// inside words, case, accents, other scripts, a word over the length
    /// limit, stop words) the two must give the same terms in order.
    #[test]
    fn words_analysed_alone_give_the_whole_text_s_terms() {
        let text = "The Rebasing of rebased BRANCHES: git-rebase --onto <upstream>; naïve café \
                    ÜNÏCÖDÉ fooBar foo_bar snake_case CamelCase x86_64 v2.45.1 e.g. it's don't \
                    a-very-long-word and aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
                    日本語の文書 emoji 🚀 and the stop words a an is are was of to in";
        let analyzer = Analyzer::new().expect("analyzer");
        let mut whole = Vec::new();
        let mut full = analyzer.0.box_clone();
        full.token_stream_for_doc(text)
            .process(&mut |t| whole.push(t.text.clone()));

        let mut by_word = Vec::new();
        let mut words = word_splitter().expect("splitter");
        let mut alone = analyzer.0.box_clone();
        words.token_stream_for_doc(text).process(&mut |word| {
            alone
                .token_stream_for_doc(&word.text)
                .process(&mut |t| by_word.push(t.text.clone()));
        });
        assert!(whole.len() > 20, "{whole:?}");
        assert!(whole.iter().any(|t| t == "rebas"), "stemmed: {whole:?}");
        assert_eq!(by_word, whole);
    }
}
