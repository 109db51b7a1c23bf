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
    /// Whether `targets` lists every library the request may see, so that
    /// an empty list means none rather than all: a caller whose token
    /// reads no stored library finds nothing.
    pub only_listed: bool,
}

impl Scope {
    /// The SQL predicate, or `None` when the scope is everything.
    pub fn to_sql(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.only_listed && self.targets.is_empty() {
            return Some("false".to_owned());
        }
        let whole_libraries =
            self.targets.len() > 1 && self.targets.iter().all(|(_, v)| v.is_none());
        if whole_libraries {
            // One `IN` list, not a chain of ORs: a token's libraries can
            // number in the thousands.
            let names: Vec<String> = self.targets.iter().map(|(l, _)| sql_string(l)).collect();
            parts.push(format!("library IN ({})", names.join(", ")));
        } else if !self.targets.is_empty() {
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

    /// Whether rows of `library` at `version` are in scope, its file prefix
    /// aside: [`Self::to_sql`]'s rule for the searches that read the
    /// in-memory copy instead of LanceDB (see [`super::resident`]).
    /// One question; a search asking about every stored library and
    /// version builds the [`Self::matcher`] once instead.
    pub fn covers(&self, library: &str, version: &str) -> bool {
        self.matcher().covers(library, version)
    }

    /// [`Self::covers`] for many calls: the targets sorted by library and
    /// found by binary search rather than scanned, since a token's
    /// libraries can number in the thousands and every stored library and
    /// version is asked about. (Sorted once, usually for free: the catalog
    /// they come from is in name order.)
    pub fn matcher(&self) -> ScopeMatcher<'_> {
        let mut sorted: Vec<(&str, Option<&str>)> = self
            .targets
            .iter()
            .map(|(l, v)| (l.as_str(), v.as_deref()))
            .collect();
        if !sorted.is_sorted_by(|a, b| a.0 <= b.0) {
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        }
        ScopeMatcher {
            scope: self,
            sorted,
        }
    }

    /// Whether a file at `path` is in scope, its library and version aside.
    pub fn covers_path(&self, path: &str) -> bool {
        self.file_prefix
            .as_deref()
            .is_none_or(|p| path.starts_with(p))
    }
}

/// A [`Scope`]'s library and version test, its targets sorted.
pub struct ScopeMatcher<'a> {
    scope: &'a Scope,
    sorted: Vec<(&'a str, Option<&'a str>)>,
}

impl ScopeMatcher<'_> {
    /// [`Scope::covers`], by binary search.
    pub fn covers(&self, library: &str, version: &str) -> bool {
        let targeted = if self.sorted.is_empty() {
            !self.scope.only_listed
        } else {
            let first = self.sorted.partition_point(|(l, _)| *l < library);
            self.sorted[first..]
                .iter()
                .take_while(|(l, _)| *l == library)
                .any(|(_, v)| v.is_none_or(|v| v == version))
        };
        targeted && self.scope.version.as_deref().is_none_or(|v| v == version)
    }
}

/// The SQL filter selecting one document's rows.
pub fn document(library: &str, version: &str, file_path: &str) -> String {
    format!(
        "{} AND file_path = {}",
        self::version(library, version),
        sql_string(file_path)
    )
}

/// The rows of one library version.
pub fn version(library: &str, version: &str) -> String {
    format!(
        "library = {} AND version = {}",
        sql_string(library),
        sql_string(version)
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
    fn covers_follows_the_same_rule_as_the_sql() {
        assert!(Scope::default().covers("any", "1"));
        let scope = Scope {
            targets: vec![("git".into(), Some("2.39".into())), ("react".into(), None)],
            version: None,
            file_prefix: Some("docs/".into()),
            only_listed: false,
        };
        assert!(scope.covers("git", "2.39"));
        assert!(!scope.covers("git", "2.40"));
        assert!(scope.covers("react", "18"));
        assert!(!scope.covers("vue", "3"));
        assert!(scope.covers_path("docs/a.md"));
        assert!(!scope.covers_path("src/a.md"));
        let any_library = Scope {
            version: Some("2".into()),
            ..Scope::default()
        };
        assert!(any_library.covers("git", "2"));
        assert!(!any_library.covers("git", "1"));
    }

    #[test]
    fn the_matcher_agrees_with_covers() {
        let scopes = [
            Scope::default(),
            Scope {
                targets: vec![("a".into(), Some("1".into())), ("b".into(), None)],
                ..Scope::default()
            },
            Scope {
                targets: vec![("a".into(), None)],
                version: Some("2".into()),
                only_listed: true,
                ..Scope::default()
            },
            Scope {
                only_listed: true,
                ..Scope::default()
            },
        ];
        for scope in &scopes {
            let matcher = scope.matcher();
            for library in ["a", "b", "c"] {
                for version in ["1", "2"] {
                    assert_eq!(
                        matcher.covers(library, version),
                        scope.covers(library, version),
                        "{scope:?} {library} {version}"
                    );
                }
            }
        }
    }

    #[test]
    fn whole_libraries_are_one_in_list_and_an_empty_list_is_nothing() {
        let scope = Scope {
            targets: vec![("a".into(), None), ("o'b".into(), None)],
            version: Some("1".into()),
            only_listed: true,
            ..Scope::default()
        };
        assert_eq!(
            scope.to_sql().as_deref(),
            Some("library IN ('a', 'o''b') AND version = '1'")
        );
        let nothing = Scope {
            only_listed: true,
            ..Scope::default()
        };
        assert_eq!(nothing.to_sql().as_deref(), Some("false"));
        assert!(!nothing.covers("a", "1"));
    }

    #[test]
    fn scopes_combine_with_and_and_targets_with_or() {
        assert_eq!(Scope::default().to_sql(), None);
        let scope = Scope {
            targets: vec![("git".into(), Some("2.39".into())), ("react".into(), None)],
            version: None,
            file_prefix: Some("docs/".into()),
            only_listed: false,
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
