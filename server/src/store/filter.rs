//! Row filters as LanceDB SQL predicates.
//!
//! Every name that reaches SQL goes through [`sql_string`], so a library
//! called `o'reilly` stays a string and cannot end the literal.

/// Which chunks a search or listing may see. Empty means everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// `(library, version)` pairs, OR-ed; a `None` version is any version.
    /// Empty: every library.
    pub targets: Vec<(String, Option<String>)>,
    /// A version in every library (a version given without a library).
    pub version: Option<String>,
    /// Only files whose path starts with this.
    pub file_prefix: Option<String>,
}

impl Scope {
    /// The SQL predicate, or `None` when the scope is everything.
    pub fn to_sql(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.targets.is_empty() {
            let alternatives: Vec<String> = self
                .targets
                .iter()
                .map(|(library, version)| match version {
                    Some(v) => format!(
                        "(library = {} AND version = {})",
                        sql_string(library),
                        sql_string(v)
                    ),
                    None => format!("library = {}", sql_string(library)),
                })
                .collect();
            parts.push(if alternatives.len() == 1 {
                alternatives[0].clone()
            } else {
                format!("({})", alternatives.join(" OR "))
            });
        }
        if let Some(v) = &self.version {
            parts.push(format!("version = {}", sql_string(v)));
        }
        if let Some(prefix) = &self.file_prefix {
            parts.push(format!("starts_with(file_path, {})", sql_string(prefix)));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

/// The SQL filter selecting one document's rows.
pub fn document(library: &str, version: &str, file_path: &str) -> String {
    format!(
        "library = {} AND version = {} AND file_path = {}",
        sql_string(library),
        sql_string(version),
        sql_string(file_path)
    )
}

/// A SQL string literal: quotes doubled, so names cannot break out of it.
pub fn sql_string(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_safely() {
        assert_eq!(
            document("o'reilly", "1", "a.md"),
            "library = 'o''reilly' AND version = '1' AND file_path = 'a.md'"
        );
    }

    #[test]
    fn scopes_combine_with_and_and_targets_with_or() {
        assert_eq!(Scope::default().to_sql(), None);
        let scope = Scope {
            targets: vec![("git".into(), Some("2.39".into())), ("react".into(), None)],
            version: None,
            file_prefix: Some("docs/".into()),
        };
        assert_eq!(
            scope.to_sql().as_deref(),
            Some(
                "((library = 'git' AND version = '2.39') OR library = 'react') \
                 AND starts_with(file_path, 'docs/')"
            )
        );
    }
}
