//! What changed between two versions of a library: the answer to "what
//! changed from 2.39 to 2.40", section by section, shared by every face.

use serde::{Deserialize, Serialize};

use crate::budget;
use crate::reading::ReadError;
use crate::validate;

/// Two versions to compare, and how much of the answer to give.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangesRequest {
    /// The older version (or `latest`).
    pub from: String,
    /// The newer version (or `latest`).
    pub to: String,
    /// Only documents whose path starts with this (`guide/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// The answer's sections within this many tokens (o200k_base); the
    /// totals count everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
}

impl ChangesRequest {
    /// Checks every part before any lookup, as a document read is
    /// checked: the library, then each version, then the path prefix,
    /// within their limits; the budget within [`budget::MIN_TOKENS`]..=
    /// [`budget::MAX_TOKENS`]. Versions must be given.
    pub fn check(&self, library: &str) -> Result<(), ReadError> {
        validate::address(library, Some(&self.from), self.file_path.as_deref())?;
        validate::required("from", &self.from)?;
        validate::required("to", &self.to)?;
        validate::lookup("to", &self.to)?;
        if let Some(n) = self.max_tokens {
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            budget::within_range(n).ok_or(ReadError::BudgetOutOfRange)?;
        }
        Ok(())
    }
}

/// How a document differs between the two versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DocumentChangeKind {
    /// In both, with sections added, removed or changed.
    Changed,
    /// Only in the newer version.
    Added,
    /// Only in the older version.
    Removed,
    /// The same page under a new path (its sections, if any, changed too).
    Moved,
}

/// How a section differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SectionChangeKind {
    Added,
    Removed,
    Changed,
}

/// One section that differs, by its heading path (as search results name
/// sections; empty for the text before a document's first heading).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SectionChange {
    pub change: SectionChangeKind,
    pub heading_path: String,
    /// An added or removed section's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A changed section as a word diff: `[-removed-]{+added+}`, long runs
    /// of unchanged words shortened to `…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// A changed section that was under another heading path before (its
    /// heading, or a heading above it, renamed): that path. Its `diff`
    /// then runs from the old section to the new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
}

/// One run of a changed section's word diff ([`SectionChange::diff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffPart<'a> {
    /// Words both versions have (`…` where a long run was shortened).
    Same(&'a str),
    /// Words only the older version has (`[-…-]`).
    Removed(&'a str),
    /// Words only the newer version has (`{+…+}`).
    Added(&'a str),
}

/// A word diff read back into its runs, in order, so a face can show a
/// changed section's two sides (the older: `Same` and `Removed`; the
/// newer: `Same` and `Added`) from the one string every face is given,
/// rather than from a second copy of both texts. A marker without its
/// closing one is ordinary text. The space written between a removal and
/// the addition that replaces it belongs to neither side, and is dropped.
pub fn diff_parts(diff: &str) -> Vec<DiffPart<'_>> {
    let mut parts = Vec::new();
    let mut rest = diff;
    while let Some((start, end, part)) = next_change(rest) {
        let before = &rest[..start];
        let replacing = matches!(part, DiffPart::Added(_))
            && before == " "
            && matches!(parts.last(), Some(DiffPart::Removed(_)));
        if !before.is_empty() && !replacing {
            parts.push(DiffPart::Same(before));
        }
        parts.push(part);
        rest = &rest[end..];
    }
    if !rest.is_empty() {
        parts.push(DiffPart::Same(rest));
    }
    parts
}

/// The first complete `[-…-]` or `{+…+}` in `text`: where it starts and
/// ends, and what it holds.
fn next_change(text: &str) -> Option<(usize, usize, DiffPart<'_>)> {
    let mut from = 0;
    loop {
        // Both openers start with an ASCII byte: `at + 1` is a boundary.
        let at = from + text[from..].find(['[', '{'])?;
        let marker = match &text[at..] {
            t if t.starts_with("[-") => Some(("-]", true)),
            t if t.starts_with("{+") => Some(("+}", false)),
            _ => None,
        };
        if let Some((close, removed)) = marker {
            let body = at + 2;
            if let Some(len) = text[body..].find(close) {
                let words = &text[body..body + len];
                let part = match removed {
                    true => DiffPart::Removed(words),
                    false => DiffPart::Added(words),
                };
                return Some((at, body + len + 2, part));
            }
        }
        from = at + 1;
    }
}

/// One document that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DocumentChange {
    pub change: DocumentChangeKind,
    /// Its path in the newer version (the older one's for a removal).
    pub file_path: String,
    /// Where a moved document was before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its sections that differ, in document order (removed ones where
    /// they stood); left out past the token budget.
    pub sections: Vec<SectionChange>,
    /// Sections that differ but were left out of `sections` by the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sections_left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How much changed, counted whole whatever the budget kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangeTotals {
    pub documents_changed: usize,
    pub documents_added: usize,
    pub documents_removed: usize,
    pub documents_moved: usize,
    pub documents_unchanged: usize,
    pub sections_added: usize,
    pub sections_removed: usize,
    pub sections_changed: usize,
}

impl ChangeTotals {
    /// The totals of `documents`, with `unchanged` documents beside them.
    pub fn of(documents: &[DocumentChange], unchanged: usize) -> Self {
        let mut totals = Self {
            documents_unchanged: unchanged,
            ..Self::default()
        };
        for document in documents {
            match document.change {
                DocumentChangeKind::Changed => totals.documents_changed += 1,
                DocumentChangeKind::Added => totals.documents_added += 1,
                DocumentChangeKind::Removed => totals.documents_removed += 1,
                DocumentChangeKind::Moved => totals.documents_moved += 1,
            }
            for section in &document.sections {
                match section.change {
                    SectionChangeKind::Added => totals.sections_added += 1,
                    SectionChangeKind::Removed => totals.sections_removed += 1,
                    SectionChangeKind::Changed => totals.sections_changed += 1,
                }
            }
        }
        totals
    }
}

/// What changed in `library` from one version to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VersionChanges {
    pub library: String,
    /// The versions compared (`latest` resolved).
    pub from: String,
    pub to: String,
    /// Documents that differ: changed, then added, removed and moved, each
    /// by path.
    pub documents: Vec<DocumentChange>,
    pub totals: ChangeTotals,
    /// Whether the budget left sections or documents out.
    #[serde(default)]
    pub cut: bool,
    /// Tokens the answer's sections take, with a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// The release notes the newer version holds (a changelog, CHANGES,
    /// HISTORY, NEWS, release notes or what's-new page, by path): what an
    /// upgrade reads beside the comparison. A source leaves them out of
    /// what it stores unless its `include` names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub release_notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_checked_part_by_part() {
        let request = |from: &str, to: &str, max_tokens| ChangesRequest {
            from: from.into(),
            to: to.into(),
            file_path: Some("guide/".into()),
            max_tokens,
        };
        assert_eq!(request("2.39", "latest", Some(2000)).check("git"), Ok(()));
        assert!(request("", "2.40", None).check("git").is_err());
        assert!(request("2.39", "2.40\u{202e}", None).check("git").is_err());
        assert_eq!(
            request("2.39", "2.40", Some(10)).check("git"),
            Err(ReadError::BudgetOutOfRange)
        );
    }

    #[test]
    fn a_word_diff_reads_back_into_both_sides() {
        use DiffPart::*;
        assert_eq!(
            diff_parts("… run [-pip install-] {+uv add+} now [-please-] {+x"),
            [
                Same("… run "),
                Removed("pip install"),
                Added("uv add"),
                Same(" now "),
                Removed("please"),
                Same(" {+x"),
            ]
        );
        assert_eq!(
            diff_parts("{+new+} a [b] c"),
            [Added("new"), Same(" a [b] c")]
        );
        assert_eq!(diff_parts(""), []);
    }

    #[test]
    fn totals_count_documents_and_sections_by_kind() {
        let section = |change| SectionChange {
            change,
            heading_path: "A".into(),
            text: None,
            diff: None,
            renamed_from: None,
        };
        let documents = vec![
            DocumentChange {
                change: DocumentChangeKind::Changed,
                file_path: "a.md".into(),
                previous_path: None,
                title: None,
                sections: vec![
                    section(SectionChangeKind::Changed),
                    section(SectionChangeKind::Added),
                ],
                sections_left_out: 0,
            },
            DocumentChange {
                change: DocumentChangeKind::Moved,
                file_path: "b.md".into(),
                previous_path: Some("old/b.md".into()),
                title: None,
                sections: vec![],
                sections_left_out: 0,
            },
        ];
        let totals = ChangeTotals::of(&documents, 7);
        assert_eq!(
            (
                totals.documents_changed,
                totals.documents_moved,
                totals.documents_unchanged,
                totals.sections_changed,
                totals.sections_added
            ),
            (1, 1, 7, 1, 1)
        );
        let json = serde_json::to_value(&documents[1]).unwrap();
        assert_eq!(json["change"], "moved");
        assert!(json.get("sections_left_out").is_none());
    }
}
