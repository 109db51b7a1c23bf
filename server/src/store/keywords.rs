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
        full_text_params()
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

    /// Adds one chunk's `search_text` to `builder` as its next row.
    fn add_row(&mut self, builder: &mut Bm25Builder, context: &str, text: &str) {
        let search_text = schema::search_text(context, text);
        self.0
            .token_stream_for_doc(&search_text)
            .process(&mut |t| builder.push_token(&t.text));
        builder.end_row();
    }
}

/// The BM25 index of `rows` (batch, row within it) of `batches`, row `i`
/// of the index being `rows[i]`.
///
/// Reading text is most of a copy's time at scale (about 45 µs a chunk,
/// docs/benchmarks.md, "The keyword leg from memory"), so the rows are read
/// in one part per core and the parts' postings appended in order. Each
/// part runs on a thread of its own, not in rayon's pool: a part takes
/// seconds, and the embedder's passes, a search's included, queue for
/// rayon's threads.
pub fn index(batches: &[ChunkColumns], rows: &[(u32, u32)]) -> Result<Bm25Index, StoreError> {
    let analyzer = Analyzer::new()?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let part = rows.len().div_ceil(threads).max(MIN_PART);
    let parts: Vec<Bm25Builder> = std::thread::scope(|scope| {
        let readers: Vec<_> = rows
            .chunks(part)
            .map(|rows| {
                let mut analyzer = Analyzer(analyzer.0.box_clone());
                scope.spawn(move || {
                    let mut builder = Bm25Builder::new();
                    for &(batch, row) in rows {
                        let columns = &batches[batch as usize];
                        analyzer.add_row(
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
