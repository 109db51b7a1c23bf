//! Stored documents read by agents: the request (a document, or one of
//! its sections, within a token budget) checked once for every face that
//! takes it (MCP's `get_document` and document resources), and the part
//! read.

use serde::{Deserialize, Serialize};

use crate::budget;
use crate::validate::{self, NameError};

/// Why a read was refused before any lookup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// A library, version, path or section over its limit, or with
    /// control characters.
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("max_tokens must be {}..{}", budget::MIN_TOKENS, budget::MAX_TOKENS)]
    BudgetOutOfRange,
    /// A budget that is not a whole number (`1e12`, `ten`), as a resource
    /// address's query gives it: shown cut ([`validate::cut`]).
    #[error(
        "max_tokens {given:?} is not a whole number; it must be {min}..{max}",
        given = .0,
        min = budget::MIN_TOKENS,
        max = budget::MAX_TOKENS
    )]
    BudgetNotANumber(String),
    /// A resource address not of the shape `docshelf://LIBRARY/VERSION/PATH`;
    /// shown cut.
    #[error("{0:?} is not docshelf://LIBRARY/VERSION/PATH[?section=…&max_tokens=…]")]
    Address(String),
    /// A resource address whose percent-encoded bytes are not UTF-8.
    #[error("{0:?} holds an encoded byte sequence that is not UTF-8")]
    Encoding(String),
    /// A resource address's query names a parameter reads do not take.
    #[error("unknown parameter {0:?} (section, max_tokens)")]
    Parameter(String),
    /// A comparison's resource address not of the shape
    /// `docshelf-changes://LIBRARY/FROM/TO`; shown cut.
    #[error("{0:?} is not docshelf-changes://LIBRARY/FROM/TO[?file_path=…&max_tokens=…]")]
    ChangesAddress(String),
    /// A comparison's resource address names a parameter it does not take.
    #[error("unknown parameter {0:?} (file_path, max_tokens)")]
    ChangesParameter(String),
}

/// What to read of a stored document, checked ([`DocumentRead::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentRead {
    pub library: String,
    /// A version, or `latest`.
    pub version: String,
    pub file_path: String,
    /// Only this section: its heading path, or the path's last parts.
    pub section: Option<String>,
    /// Within this many tokens.
    pub max_tokens: Option<usize>,
}

impl DocumentRead {
    /// Checks every part before any lookup: names within their limits
    /// ([`validate`]; the path and the section, a heading path, within a
    /// path's), the budget within [`budget::MIN_TOKENS`]..=
    /// [`budget::MAX_TOKENS`]. A blank section means the whole document.
    pub fn new(
        library: &str,
        version: &str,
        file_path: &str,
        section: Option<&str>,
        max_tokens: Option<i64>,
    ) -> Result<Self, ReadError> {
        validate::address(library, Some(version), Some(file_path))?;
        let section = match section.map(str::trim).filter(|s| !s.is_empty()) {
            Some(section) => Some(validate::path_lookup("section", section)?.to_owned()),
            None => None,
        };
        let max_tokens = max_tokens
            .map(|n| budget::within_range(n).ok_or(ReadError::BudgetOutOfRange))
            .transpose()?;
        Ok(Self {
            library: library.to_owned(),
            version: version.to_owned(),
            file_path: file_path.to_owned(),
            section,
            max_tokens,
        })
    }

    /// Whether this asks for the whole document as stored.
    pub fn is_whole(&self) -> bool {
        self.section.is_none() && self.max_tokens.is_none()
    }
}

/// A document, or one of its sections, read within a budget: what MCP's
/// `get_document` and document resources give an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentPart {
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    /// The section read (its whole heading path), when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The text: the whole document or the section, within the budget
    /// ([`budget::fit`]: cut where a block starts, or inside the first
    /// block with text when not even that fits).
    pub text: String,
    /// With a budget: the tokens of `text` and the budget, and whether the
    /// text was cut to fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_checked_before_any_lookup() {
        let read = DocumentRead::new("git", "latest", "a.md", Some("  "), Some(300)).expect("ok");
        assert!(read.section.is_none());
        assert_eq!(read.max_tokens, Some(300));
        assert!(!read.is_whole());
        assert!(DocumentRead::new("git", "1", "a.md", None, None)
            .expect("ok")
            .is_whole());
        assert!(matches!(
            DocumentRead::new("git", "1", "a.md", None, Some(10)),
            Err(ReadError::BudgetOutOfRange)
        ));
        let long = "x".repeat(10_000);
        for (library, path, section) in [
            (long.as_str(), "a.md", None),
            ("git", "a\u{0}.md", None),
            ("git", "a.md", Some(long.as_str())),
        ] {
            assert!(
                matches!(
                    DocumentRead::new(library, "1", path, section, None),
                    Err(ReadError::Name(_))
                ),
                "{path:?}"
            );
        }
    }
}
