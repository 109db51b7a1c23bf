//! What a search asks for, checked once for every face (REST, dashboard,
//! MCP, CLI) so they all refuse bad input with the same words.

use serde::{Deserialize, Serialize};

use crate::budget::{Budget, TOKENS_PER_RESULT};
use crate::fusion::DEFAULT_RRF_K;
use crate::scoring::{WeightError, Weights};

/// Results per search, by default and at most.
pub const DEFAULT_K: usize = 10;
pub const MAX_K: usize = 50;

pub use crate::validate::MAX_QUERY_CHARS;

/// Which retrievers run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Hybrid,
    Dense,
    Keyword,
}

impl Mode {
    /// Every mode, the default first: what every face offers and parses.
    pub const ALL: [Self; 3] = [Self::Hybrid, Self::Dense, Self::Keyword];

    /// The name clients use for it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Hybrid => "hybrid",
            Self::Dense => "dense",
            Self::Keyword => "keyword",
        }
    }

    /// What it searches by, for people choosing one.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Hybrid => "meaning and exact words, fused",
            Self::Dense => "meaning (embeddings)",
            Self::Keyword => "exact words (BM25)",
        }
    }

    /// The mode a name stands for, in any case.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// How many ranked lists it fuses (dense, keyword or both).
    pub const fn legs(self) -> usize {
        match self {
            Self::Hybrid => 2,
            Self::Dense | Self::Keyword => 1,
        }
    }
}

/// A point in a search at which results are ready; the streaming API sends
/// one event per stage, named as [`Stage::name`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The keyword leg's best hits (before the dense leg is in).
    Keyword,
    /// Both legs fused and blended: the answer, unless expanded.
    Fused,
    /// The answer with neighbouring chunks merged in.
    Expanded,
}

impl Stage {
    /// The event name it is streamed under.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Keyword => "keyword",
            Self::Fused => "fused",
            Self::Expanded => "expanded",
        }
    }
}

/// How hybrid results are merged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum Fusion {
    Rrf { k: f32 },
    Dbsf,
}

/// A fusion method by name, as clients, the CLI and answers give it; the
/// parameters (RRF's `k`) travel beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FusionMethod {
    Rrf,
    #[default]
    Dbsf,
}

impl FusionMethod {
    /// Every method.
    pub const ALL: [Self; 2] = [Self::Rrf, Self::Dbsf];

    /// The name clients use for it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rrf => "rrf",
            Self::Dbsf => "dbsf",
        }
    }

    /// The method `name` names, in any case.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl Fusion {
    /// Every method's name.
    pub const NAMES: [&'static str; 2] = [FusionMethod::Rrf.name(), FusionMethod::Dbsf.name()];

    /// `method`, with RRF's `k` where it takes one.
    pub fn new(method: FusionMethod, rrf_k: f32) -> Self {
        match method {
            FusionMethod::Rrf => Self::Rrf { k: rrf_k },
            FusionMethod::Dbsf => Self::Dbsf,
        }
    }

    /// Which method this is.
    pub fn method(&self) -> FusionMethod {
        match self {
            Self::Rrf { .. } => FusionMethod::Rrf,
            Self::Dbsf => FusionMethod::Dbsf,
        }
    }

    /// The name clients use for it.
    pub fn name(&self) -> &'static str {
        self.method().name()
    }

    /// RRF's `k`, for the methods that take one.
    pub fn rrf_k(&self) -> Option<f32> {
        match *self {
            Self::Rrf { k } => Some(k),
            Self::Dbsf => None,
        }
    }

    /// The highest fused score `legs` lists can give one id: first in
    /// every list. Dividing by it puts fused scores in [0, 1].
    pub fn ceiling(&self, legs: usize) -> f32 {
        match *self {
            Self::Rrf { k } => crate::fusion::rrf_ceiling(legs, k),
            Self::Dbsf => crate::fusion::dbsf_ceiling(legs),
        }
    }
}

fn mode_names() -> String {
    crate::phrase::one_of(&Mode::ALL.map(Mode::name))
}

fn fusion_names() -> String {
    crate::phrase::one_of(&Fusion::NAMES)
}

impl Default for Fusion {
    /// DBSF: with the default second stage it ranks pages better than RRF
    /// on every evaluation set, held-out ones included (`make eval`;
    /// docs/search.md has the table).
    /// BM25 scores are far from uniform: one chunk that names every query
    /// term in its title stands out, and ranks alone cannot say by how much.
    fn default() -> Self {
        Self::new(FusionMethod::default(), DEFAULT_RRF_K)
    }
}

/// A search request as a client sends it: every field optional but the
/// query (or, for a dense search, the client's own query vector).
///
/// Every face takes exactly this: the REST API's body, the dashboard's
/// server function, MCP's `search_docs` arguments (whose schema is derived
/// from it, field docs included) and the CLI's flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchParams {
    /// What to look for, in words: a question or keywords. May be left out
    /// when `embedding` is given (the search is then dense).
    #[serde(default)]
    pub query: String,
    /// The query as a vector the client embedded itself (384 floats from
    /// all-MiniLM-L6-v2, the model docshelf stores with): the dense leg
    /// uses it instead of embedding `query`. The keyword leg still needs
    /// `query`; without one the search is dense. Scaled to unit length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// Number of results, 1..50 (default 10).
    pub k: Option<i64>,
    /// Only this library. Loose names resolve ("NextJS" finds "nextjs").
    /// Once given, later searches in the session stay in it until another
    /// is named or the sticky library is cleared.
    pub library: Option<String>,
    /// Only this version of the library, or "latest".
    pub version: Option<String>,
    /// Only documents whose path starts with this.
    pub file_path: Option<String>,
    /// "hybrid" (default: meaning and exact words), "dense" (meaning) or
    /// "keyword" (exact words).
    pub mode: Option<String>,
    /// How hybrid search merges its rankings: "dbsf" (default) or "rrf".
    pub fusion: Option<String>,
    /// RRF's constant (default 60); giving it alone asks for RRF.
    pub rrf_k: Option<f32>,
    /// Weight of recency in the final score, 0..1 (default 0).
    pub w_rec: Option<f32>,
    /// Weight of likes and dislikes in the final score, 0..1 (default 0).
    pub w_sig: Option<f32>,
    /// Neighbouring chunks to merge into each result for more context, 0..5.
    pub expand: Option<u32>,
    /// Return raw chunks, several of which may come from one page. By
    /// default each result is one page: its best chunk leads and its other
    /// matching chunks come under it as `sections`.
    pub duplicates: Option<bool>,
    /// The session whose sticky library applies; a new one is made if
    /// absent, and every answer names it.
    pub session_id: Option<String>,
    /// Forget the session's sticky library before searching, and search
    /// every library again.
    #[serde(alias = "clear_library")]
    pub clear_sticky: Option<bool>,
    /// Rescore the best fused candidates with the second stage (default
    /// true); false returns the first stage's order.
    pub rerank: Option<bool>,
    /// Size the answer by tokens, not by `k`: its results become passages
    /// in compact Markdown (heading path, source, text: the whole section
    /// where that takes at most half the budget left, else the best chunk),
    /// given best first while they fit this many tokens of OpenAI's
    /// o200k_base (50 to 100,000), the same or nearly the same text from
    /// two versions, paths or libraries once.
    /// The answer's `context` holds them and `budget` says how it was
    /// filled; its results say where each passage is from, without their
    /// text again. `k` is then how many results are ranked to fill it from
    /// (default one per 100 tokens, 10 to 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    /// Only sections added or changed since this version of the library
    /// (the version searched, `latest` by default, compared with it):
    /// "authentication, changed since 4.2". Needs a library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<String>,
}

/// A checked search request.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The query in words; empty only for a dense search by `embedding`.
    pub query: String,
    /// The client's query vector, unit length, if it sent one.
    pub embedding: Option<Vec<f32>>,
    pub k: usize,
    pub library: Option<String>,
    pub version: Option<String>,
    pub file_path: Option<String>,
    pub mode: Mode,
    pub fusion: Fusion,
    pub weights: Weights,
    /// Neighbouring chunks merged into each hit, on each side.
    pub expand: u32,
    /// Whether results are raw chunks (several may share a page) rather
    /// than one per page.
    pub duplicates: bool,
    /// Whether the second stage rescores the fused candidates.
    pub rerank: bool,
    /// The session whose sticky library applies; a new one if `None`.
    pub session_id: Option<String>,
    /// Forget the session's sticky library before searching.
    pub clear_sticky: bool,
    /// The answer's token budget, if it has one.
    pub max_tokens: Option<usize>,
    /// Only sections added or changed since this version.
    pub changed_since: Option<String>,
}

/// Why a search request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error("query cannot be empty")]
    EmptyQuery,
    #[error("query is too long: {0} characters (at most {MAX_QUERY_CHARS})")]
    QueryTooLong(usize),
    #[error("k must be 1..{MAX_K}")]
    KOutOfRange,
    #[error("changed_since compares two versions of one library: name the library")]
    ChangedSinceNeedsLibrary,
    #[error("unknown mode {0:?} (use {names})", names = mode_names())]
    UnknownMode(String),
    #[error("unknown fusion {0:?} (use {names})", names = fusion_names())]
    UnknownFusion(String),
    #[error("rrf_k must be a positive number")]
    BadRrfK,
    #[error("expand must be at most 5")]
    ExpandTooLarge,
    #[error(
        "max_tokens must be {}..{}",
        crate::budget::MIN_TOKENS,
        crate::budget::MAX_TOKENS
    )]
    BudgetOutOfRange,
    #[error(transparent)]
    Weights(#[from] WeightError),
    /// A library, version, path, session id or query over its limit, or
    /// with control characters ([`crate::validate`]).
    #[error(transparent)]
    Identifier(#[from] crate::validate::NameError),
    #[error("embedding must hold {EMBEDDING_DIM} numbers (the model's dimension); it holds {0}")]
    EmbeddingDimension(usize),
    #[error("embedding must hold finite numbers only")]
    EmbeddingNotFinite,
    #[error("embedding cannot be all zeros")]
    EmbeddingZero,
    #[error("{0} search needs a query in words (the keyword leg cannot use an embedding); send query, or mode \"dense\"")]
    KeywordNeedsQuery(&'static str),
}

/// The length of a query vector: all-MiniLM-L6-v2's output, what every
/// stored chunk was embedded with.
pub const EMBEDDING_DIM: usize = 384;

/// A client's query vector checked and scaled to unit length (stored
/// vectors are unit length; a client's may not be).
fn query_vector(raw: Vec<f32>) -> Result<Vec<f32>, SearchError> {
    if raw.len() != EMBEDDING_DIM {
        return Err(SearchError::EmbeddingDimension(raw.len()));
    }
    if raw.iter().any(|x| !x.is_finite()) {
        return Err(SearchError::EmbeddingNotFinite);
    }
    let norm = raw
        .iter()
        .map(|x| f64::from(*x).powi(2))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(SearchError::EmbeddingZero);
    }
    Ok(raw
        .into_iter()
        .map(|x| (f64::from(x) / norm) as f32)
        .collect())
}

/// Results a budgeted search ranks to fill `max_tokens` from, when `k` is
/// not given.
fn budget_pool(max_tokens: usize) -> usize {
    (max_tokens / TOKENS_PER_RESULT).clamp(DEFAULT_K, MAX_K)
}

/// A blank optional field means "not given".
fn given(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl SearchParams {
    /// Checks the request and fills in the defaults.
    pub fn validate(self) -> Result<Search, SearchError> {
        self.check_identifiers()?;
        let embedding = self.embedding.map(query_vector).transpose()?;
        let query = self.query.trim();
        if query.is_empty() && embedding.is_none() {
            return Err(SearchError::EmptyQuery);
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(SearchError::QueryTooLong(chars));
        }
        let query = query.to_owned();
        let max_tokens = self
            .max_tokens
            .map(|n| crate::budget::within_range(n).ok_or(SearchError::BudgetOutOfRange))
            .transpose()?;
        let k = match self.k {
            None => max_tokens.map_or(DEFAULT_K, budget_pool),
            Some(k) if (1..=MAX_K as i64).contains(&k) => k as usize,
            Some(_) => return Err(SearchError::KOutOfRange),
        };
        let mode = match given(self.mode) {
            // A vector alone asks for a dense search.
            None if query.is_empty() => Mode::Dense,
            None => Mode::default(),
            Some(name) => Mode::parse(&name).ok_or(SearchError::UnknownMode(name))?,
        };
        if query.is_empty() && mode != Mode::Dense {
            return Err(SearchError::KeywordNeedsQuery(mode.name()));
        }
        let rrf_k = match self.rrf_k {
            None => DEFAULT_RRF_K,
            Some(k) if k.is_finite() && k > 0.0 => k,
            Some(_) => return Err(SearchError::BadRrfK),
        };
        let method = match given(self.fusion) {
            Some(name) => FusionMethod::parse(&name)
                .ok_or_else(|| SearchError::UnknownFusion(name.to_ascii_lowercase()))?,
            // An `rrf_k` alone asks for RRF.
            None if self.rrf_k.is_some() => FusionMethod::Rrf,
            None => FusionMethod::default(),
        };
        let fusion = Fusion::new(method, rrf_k);
        let expand = self.expand.unwrap_or(0);
        if expand > 5 {
            return Err(SearchError::ExpandTooLarge);
        }
        Ok(Search {
            query,
            embedding,
            k,
            library: given(self.library),
            version: given(self.version),
            file_path: given(self.file_path),
            mode,
            fusion,
            weights: Weights::new(self.w_rec, self.w_sig)?,
            expand,
            duplicates: self.duplicates.unwrap_or(false),
            rerank: self.rerank.unwrap_or(true),
            session_id: given(self.session_id),
            clear_sticky: self.clear_sticky.unwrap_or(false),
            max_tokens,
            changed_since: given(self.changed_since),
        })
    }
}

impl SearchParams {
    /// Every identifier within its limits ([`crate::validate`]), before any
    /// other check reads them.
    fn check_identifiers(&self) -> Result<(), crate::validate::NameError> {
        use crate::validate;
        validate::query("query", &self.query)?;
        if let Some(library) = &self.library {
            validate::lookup("library", library)?;
        }
        if let Some(version) = &self.version {
            validate::lookup("version", version)?;
        }
        if let Some(path) = &self.file_path {
            validate::path_lookup("file_path", path)?;
        }
        if let Some(id) = &self.session_id {
            validate::session_id(id)?;
        }
        if let Some(since) = &self.changed_since {
            validate::lookup("changed_since", since)?;
        }
        for (what, value) in [("mode", &self.mode), ("fusion", &self.fusion)] {
            if let Some(value) = value {
                validate::lookup(what, value)?;
            }
        }
        Ok(())
    }
}

/// The weights a search used, as echoed back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WeightsUsed {
    pub w_cos: f32,
    pub w_rec: f32,
    pub w_sig: f32,
}

impl From<Weights> for WeightsUsed {
    fn from(w: Weights) -> Self {
        Self {
            w_cos: w.w_cos,
            w_rec: w.w_rec,
            w_sig: w.w_sig,
        }
    }
}

/// How a hit's score came about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScoreParts {
    /// Cosine similarity to the query, when the dense leg found the chunk.
    pub dense: Option<f32>,
    /// BM25 score, when the keyword leg found the chunk.
    pub keyword: Option<f32>,
    /// 1-based ranks in each leg.
    pub dense_rank: Option<usize>,
    pub keyword_rank: Option<usize>,
    /// Relevance after fusion, in [0, 1].
    pub fused: f32,
    /// Recency in [0, 1], when `w_rec` > 0.
    pub recency: Option<f32>,
    /// Feedback signal in [0, 1], when `w_sig` > 0.
    pub signal: Option<f32>,
    /// What the second stage added to the relevance, when it ran.
    pub rerank: Option<f32>,
    /// When the chunk's text is the same passage as a better-ranked
    /// chunk's on another page of its library version: the share of its
    /// score it kept (text repeated on several pages counts once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeated: Option<f32>,
}

/// Neighbouring chunks merged into a hit (`expand`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Expansion {
    pub from_chunk: u32,
    pub to_chunk: u32,
    /// The merged text, overlaps removed.
    pub text: String,
}

/// Another matching chunk of a result's page, listed under the page's best
/// chunk (the hit) when results are pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageSection {
    pub chunk_id: String,
    pub chunk_index: u32,
    pub heading_path: String,
    pub page: Option<u32>,
    /// HTML, as [`SearchHit::snippet`].
    pub snippet: String,
    pub score: f32,
}

/// One search result: a page, led by its best chunk (or, with
/// `duplicates`, one chunk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchHit {
    pub chunk_id: String,
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    pub chunk_index: u32,
    pub heading_path: String,
    pub page: Option<u32>,
    pub text: String,
    /// HTML: the text around the query terms, rendered from its Markdown
    /// as a small fixed set of tags (paragraphs, code, emphasis, lists;
    /// [`crate::markdown`]), everything else escaped, terms in `<mark>`.
    pub snippet: String,
    /// The final score (the blend of `parts`).
    pub score: f32,
    pub parts: ScoreParts,
    /// Days since the chunk was stored.
    pub days_old: f32,
    pub expanded: Option<Expansion>,
    /// The page's other matching chunks, best first (empty with
    /// `duplicates`).
    #[serde(default)]
    pub sections: Vec<PageSection>,
}

/// The sticky library a session carries between queries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Sticky {
    pub library: String,
    pub version: Option<String>,
}

/// A search's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchResponse {
    pub query: String,
    pub k: usize,
    pub mode: Mode,
    pub fusion: FusionMethod,
    pub rrf_k: Option<f32>,
    pub weights: WeightsUsed,
    pub total_results: usize,
    pub results: Vec<SearchHit>,
    /// The library the results were filtered to, as stored.
    pub library: Option<String>,
    /// The version filtered to (`latest` resolved to a real one).
    pub version: Option<String>,
    /// How a loosely named library was resolved.
    pub resolution: Option<crate::library::Resolution>,
    pub session_id: Option<String>,
    /// The session's sticky library after this search.
    pub sticky_library: Option<Sticky>,
    /// Whether the sticky library filtered this search (no library given).
    pub sticky_applied: bool,
    /// When several libraries answered an unfiltered query: their names,
    /// and results are the best of each, fused.
    pub libraries_found: Vec<String>,
    /// A sentence for people: what was filtered, where results came from.
    pub notice: Option<String>,
    pub took_ms: f64,
    /// With `max_tokens`: the results' passages, joined, as an agent
    /// reads them (compact Markdown), within the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// With `max_tokens`: how the budget was filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
}

#[cfg(feature = "json")]
impl SearchResponse {
    /// The response as JSON, exactly as `serde_json` writes it.
    ///
    /// Why here: serde's encoding is generic code, compiled into the crate
    /// that names the concrete type. This crate is built optimised in the
    /// dev profile; the server crate is not, and encoding an answer there
    /// was a large share of a search's server CPU (docs/benchmarks.md,
    /// "Search over HTTP: the answer encoded optimised").
    pub fn to_json(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> SearchParams {
        SearchParams {
            query: query.into(),
            ..SearchParams::default()
        }
    }

    #[test]
    fn defaults_fill_in() {
        let s = params("  rebase  ").validate().unwrap();
        assert_eq!(s.query, "rebase");
        assert_eq!(s.k, DEFAULT_K);
        assert_eq!(s.mode, Mode::Hybrid);
        assert_eq!(s.fusion, Fusion::Dbsf);
        assert_eq!(s.weights.w_cos, 1.0);
        assert_eq!(s.library, None);
    }

    #[test]
    fn bad_requests_get_the_documented_messages() {
        assert_eq!(
            params(" ").validate().unwrap_err().to_string(),
            "query cannot be empty"
        );
        assert_eq!(
            params(&"x".repeat(MAX_QUERY_CHARS + 1))
                .validate()
                .unwrap_err()
                .to_string(),
            "query is too long: 1001 characters (at most 1000)"
        );
        assert!(params(&"é".repeat(MAX_QUERY_CHARS)).validate().is_ok());
        for k in [0, 51, -3] {
            let p = SearchParams {
                k: Some(k),
                ..params("q")
            };
            assert_eq!(p.validate().unwrap_err().to_string(), "k must be 1..50");
        }
        let p = SearchParams {
            mode: Some("fuzzy".into()),
            ..params("q")
        };
        assert!(matches!(p.validate(), Err(SearchError::UnknownMode(_))));
        let p = SearchParams {
            fusion: Some("max".into()),
            ..params("q")
        };
        assert!(matches!(p.validate(), Err(SearchError::UnknownFusion(_))));
        let p = SearchParams {
            w_rec: Some(2.0),
            ..params("q")
        };
        assert!(matches!(p.validate(), Err(SearchError::Weights(_))));
    }

    #[test]
    fn options_parse_case_insensitively_and_blanks_mean_absent() {
        let p = SearchParams {
            mode: Some("Keyword".into()),
            fusion: Some("DBSF".into()),
            library: Some("  ".into()),
            k: Some(50),
            ..params("q")
        };
        let s = p.validate().unwrap();
        assert_eq!(
            (s.mode, s.fusion, s.library, s.k),
            (Mode::Keyword, Fusion::Dbsf, None, 50)
        );
    }

    #[test]
    fn a_client_vector_is_checked_scaled_and_makes_a_dense_search() {
        let vector = |values: Vec<f32>| SearchParams {
            embedding: Some(values),
            ..SearchParams::default()
        };
        let mut raw = vec![0.0; EMBEDDING_DIM];
        raw[0] = 3.0;
        raw[1] = 4.0;
        let search = vector(raw.clone()).validate().unwrap();
        assert_eq!(search.mode, Mode::Dense, "a vector alone is a dense search");
        let unit = search.embedding.unwrap();
        assert!((unit[0] - 0.6).abs() < 1e-6 && (unit[1] - 0.8).abs() < 1e-6);

        let err = vector(vec![1.0; 3]).validate().unwrap_err();
        assert_eq!(err, SearchError::EmbeddingDimension(3));
        assert!(err.to_string().contains("384"), "{err}");
        let mut bad = raw.clone();
        bad[5] = f32::INFINITY;
        assert_eq!(
            vector(bad).validate().unwrap_err(),
            SearchError::EmbeddingNotFinite
        );
        assert_eq!(
            vector(vec![0.0; EMBEDDING_DIM]).validate().unwrap_err(),
            SearchError::EmbeddingZero
        );
        let hybrid = SearchParams {
            mode: Some("hybrid".into()),
            ..vector(raw.clone())
        };
        assert_eq!(
            hybrid.validate().unwrap_err(),
            SearchError::KeywordNeedsQuery("hybrid")
        );
        // With words too, the default stays hybrid: the vector serves the
        // dense leg and the words the keyword leg.
        let both = SearchParams {
            query: "merge".into(),
            ..vector(raw)
        };
        assert_eq!(both.validate().unwrap().mode, Mode::Hybrid);
        // JSON without `query` is a valid request.
        let parsed: SearchParams =
            serde_json::from_value(serde_json::json!({"embedding": vec![0.5; EMBEDDING_DIM]}))
                .unwrap();
        assert!(parsed.validate().is_ok());
    }
}
