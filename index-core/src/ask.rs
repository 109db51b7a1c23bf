//! Ask: a question answered in prose from the stored documents, citing
//! numbered sources.
//!
//! The contract every face shares: the request ([`AskParams`]), the sources
//! an answer may cite ([`Source`]), the events an answer streams as
//! ([`AskEvent`]), and how `[n]` citation marks in the answer's text map
//! back to sources ([`marks`], [`cited`]). The server makes the answer; the
//! dashboard uses the same marks to turn citations into links.

use serde::{Deserialize, Serialize};

use crate::error::ErrorBody;
use crate::search::{SearchParams, MAX_QUERY_CHARS};

/// Most characters a question may have (the search query's limit: the
/// question is searched as it is).
pub const MAX_QUESTION_CHARS: usize = MAX_QUERY_CHARS;

/// A question as a client sends it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AskParams {
    /// The question, in words.
    pub question: String,
    /// Only this library (loose names resolve, and the library sticks for
    /// the session's follow-ups, as in search).
    pub library: Option<String>,
    /// Only this version of the library, or "latest".
    pub version: Option<String>,
    /// The conversation: its earlier questions and answers go to the model
    /// with this one, and its sticky library applies. A new one is made if
    /// absent, and every answer names it.
    pub session_id: Option<String>,
    /// Start the conversation over: forget its earlier questions and its
    /// sticky library before answering.
    pub clear: Option<bool>,
}

/// Why a question was refused before anything ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("question cannot be empty")]
    EmptyQuestion,
    #[error("question is too long: {0} characters (at most {MAX_QUESTION_CHARS})")]
    QuestionTooLong(usize),
    /// A library, version, session id or question over its limit, or with
    /// control characters ([`crate::validate`]).
    #[error(transparent)]
    Identifier(#[from] crate::validate::NameError),
}

/// A checked question.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub question: String,
    pub library: Option<String>,
    pub version: Option<String>,
    pub session_id: Option<String>,
    pub clear: bool,
}

impl AskParams {
    /// Checks the question; blank optional fields count as absent.
    pub fn validate(self) -> Result<Ask, AskError> {
        use crate::validate;
        validate::query("question", &self.question)?;
        for (what, value) in [("library", &self.library), ("version", &self.version)] {
            if let Some(value) = value {
                validate::lookup(what, value)?;
            }
        }
        if let Some(id) = &self.session_id {
            validate::session_id(id)?;
        }
        let question = self.question.trim();
        if question.is_empty() {
            return Err(AskError::EmptyQuestion);
        }
        let chars = question.chars().count();
        if chars > MAX_QUESTION_CHARS {
            return Err(AskError::QuestionTooLong(chars));
        }
        let given = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        Ok(Ask {
            question: question.to_owned(),
            library: given(self.library),
            version: given(self.version),
            session_id: given(self.session_id),
            clear: self.clear.unwrap_or(false),
        })
    }
}

impl Ask {
    /// The search that gathers the first passages: the question itself,
    /// with the same library, version, session and sticky rules as search.
    pub fn search(&self, k: usize) -> SearchParams {
        SearchParams {
            query: self.question.clone(),
            k: Some(k as i64),
            library: self.library.clone(),
            version: self.version.clone(),
            session_id: self.session_id.clone(),
            clear_sticky: Some(self.clear),
            ..SearchParams::default()
        }
    }
}

/// A passage an answer may cite, numbered as the model saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Source {
    /// The number the answer cites it by, `[n]`, from 1.
    pub n: u32,
    pub chunk_id: String,
    pub library: String,
    pub version: String,
    pub file_path: String,
    /// Where the passage is in its document (links open the document there).
    pub chunk_index: u32,
    pub title: Option<String>,
    pub heading_path: String,
    pub page: Option<u32>,
    /// The start of the passage, for display.
    pub snippet: String,
}

/// The first event: the passages found for the question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SourcesFound {
    pub sources: Vec<Source>,
    pub session_id: String,
    /// The library the search was filtered to, as stored (given or sticky).
    pub library: Option<String>,
}

/// More of the answer's text, as the model writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Token {
    pub text: String,
}

/// Sources found by a search the model asked for itself, numbered after
/// those already sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MoreSources {
    /// What the model searched for.
    pub query: String,
    pub sources: Vec<Source>,
}

/// The last event of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Answer {
    /// The whole answer, as streamed.
    pub answer: String,
    /// The sources the answer cites, in the order first cited.
    pub cited: Vec<Source>,
    pub session_id: String,
    /// Searches the model ran through its `search_docs` tool.
    pub tool_searches: u32,
    pub took_ms: f64,
}

/// What an answer streams, in order: `sources`, any number of `search`
/// (the model searching again) and `token`, then `done` or `error`.
#[derive(Debug, Clone, PartialEq)]
pub enum AskEvent {
    Sources(SourcesFound),
    Search(MoreSources),
    Token(Token),
    Done(Answer),
    Error(ErrorBody),
}

impl AskEvent {
    /// The name of [`AskEvent::Sources`] on the wire. The names are
    /// constants so that a client reading the stream matches on them
    /// rather than on strings of its own.
    pub const SOURCES: &'static str = "sources";
    /// The name of [`AskEvent::Search`] on the wire.
    pub const SEARCH: &'static str = "search";
    /// The name of [`AskEvent::Token`] on the wire.
    pub const TOKEN: &'static str = "token";
    /// The name of [`AskEvent::Done`] on the wire: every stream's last
    /// event when it succeeds ([`crate::stream::DONE`]).
    pub const DONE: &'static str = crate::stream::DONE;
    /// The name of [`AskEvent::Error`] on the wire: every stream's last
    /// event when it fails ([`crate::stream::ERROR`]).
    pub const ERROR: &'static str = crate::stream::ERROR;

    /// The event's name on the wire (the SSE `event:` field).
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Sources(_) => Self::SOURCES,
            Self::Search(_) => Self::SEARCH,
            Self::Token(_) => Self::TOKEN,
            Self::Done(_) => Self::DONE,
            Self::Error(_) => Self::ERROR,
        }
    }
}

/// A citation mark in an answer: where it is, and the source numbers it
/// names (`[2]`, `[1, 3]` and `[1][3]` are all understood).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub start: usize,
    pub end: usize,
    pub numbers: Vec<u32>,
}

/// Every citation mark in `text`, in order. Brackets holding anything but
/// numbers, commas and spaces (`[a]`, `[]`, Markdown links' `[text]`) are
/// not marks.
pub fn marks(text: &str) -> Vec<Mark> {
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(open) = text[rest..].find('[').map(|i| i + rest) {
        let Some(close) = text[open..].find(']').map(|i| i + open) else {
            break;
        };
        let inner = &text[open + 1..close];
        let numbers: Option<Vec<u32>> = inner
            .split(',')
            .map(|part| {
                let part = part.trim();
                (!part.is_empty() && part.len() <= 4 && part.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| part.parse().ok())
                    .flatten()
            })
            .collect();
        match numbers {
            Some(numbers) if !inner.trim().is_empty() => {
                found.push(Mark {
                    start: open,
                    end: close + 1,
                    numbers,
                });
                rest = close + 1;
            }
            _ => rest = open + 1,
        }
    }
    found
}

/// The sources `answer` cites, in the order first cited, each once.
/// Numbers that name no source (a model's slip) are left out.
pub fn cited(answer: &str, sources: &[Source]) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    for n in marks(answer).into_iter().flat_map(|m| m.numbers) {
        if out.iter().any(|s| s.n == n) {
            continue;
        }
        if let Some(source) = sources.iter().find(|s| s.n == n) {
            out.push(source.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(n: u32) -> Source {
        Source {
            n,
            chunk_id: format!("c{n}"),
            library: "git".into(),
            version: "2.45".into(),
            file_path: format!("p{n}.md"),
            chunk_index: 0,
            title: None,
            heading_path: String::new(),
            page: None,
            snippet: String::new(),
        }
    }

    #[test]
    fn questions_are_checked_like_queries() {
        assert_eq!(
            AskParams::default().validate(),
            Err(AskError::EmptyQuestion)
        );
        let long = AskParams {
            question: "x".repeat(MAX_QUESTION_CHARS + 1),
            ..AskParams::default()
        };
        assert!(matches!(
            long.validate(),
            Err(AskError::QuestionTooLong(n)) if n == MAX_QUESTION_CHARS + 1
        ));
        let ask = AskParams {
            question: "  how do I rebase?  ".into(),
            library: Some(" ".into()),
            clear: Some(true),
            ..AskParams::default()
        }
        .validate()
        .unwrap();
        assert_eq!(ask.question, "how do I rebase?");
        assert_eq!(ask.library, None);
        let search = ask.search(6);
        assert_eq!(search.query, "how do I rebase?");
        assert_eq!(search.k, Some(6));
        assert_eq!(search.clear_sticky, Some(true));
    }

    #[test]
    fn marks_are_numbers_in_brackets_only() {
        let text = "Use rebase [1]. See [2, 3][4] and [the manual](x) or [] or [a1] [5";
        let found = marks(text);
        let numbers: Vec<_> = found.iter().map(|m| m.numbers.clone()).collect();
        assert_eq!(numbers, vec![vec![1], vec![2, 3], vec![4]]);
        assert_eq!(&text[found[0].start..found[0].end], "[1]");
        assert_eq!(&text[found[1].start..found[1].end], "[2, 3]");
    }

    #[test]
    fn cited_sources_come_once_in_first_cited_order_and_unknown_numbers_drop() {
        let sources: Vec<_> = (1..=4).map(source).collect();
        let got = cited("b [3] a [1][3] c [9] d [1, 2]", &sources);
        let order: Vec<_> = got.iter().map(|s| s.n).collect();
        assert_eq!(order, vec![3, 1, 2]);
    }
}
