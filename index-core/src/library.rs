//! Resolving a library named loosely (`"NextJS"`, `"next"`, `"recat"`) to a
//! stored one, and what to say when that fails.
//!
//! Tried in order, stopping at the first step with exactly one answer:
//! 1. the exact name;
//! 2. the same name ignoring case, spaces, punctuation and a `js` suffix;
//! 3. a stored name that starts with the normalised query (three letters or
//!    more), or the other way round;
//! 4. the closest stored name by edit distance, if close enough.
//!
//! A step with several answers is ambiguous and resolves nothing; the caller
//! gets candidates, closest first, to offer the user.

use serde::{Deserialize, Serialize};

/// How close (normalised Damerau–Levenshtein similarity) a fuzzy match must be.
const FUZZY_MIN: f64 = 0.7;

/// How many candidates an unresolved name lists.
const MAX_CANDIDATES: usize = 5;

/// What a loosely given library name came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Resolution {
    /// The name is stored as given.
    Exact { library: String },
    /// The name resolved to a stored one with another spelling.
    Resolved {
        given: String,
        library: String,
        /// How it was matched: `normalised`, `prefix` or `fuzzy`.
        how: String,
    },
    /// Nothing (or too much) matched; the closest stored names.
    Unknown {
        given: String,
        candidates: Vec<String>,
    },
}

impl Resolution {
    /// The stored library, when there is one.
    pub fn library(&self) -> Option<&str> {
        match self {
            Self::Exact { library } | Self::Resolved { library, .. } => Some(library),
            Self::Unknown { .. } => None,
        }
    }
}

/// Lower case, letters and digits only, without a trailing `js`.
pub fn normalise(name: &str) -> String {
    let flat: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    match flat.strip_suffix("js") {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => flat,
    }
}

/// Resolves `given` against the stored library names.
pub fn resolve(given: &str, known: &[String]) -> Resolution {
    let given = given.trim();
    if let Some(library) = known.iter().find(|k| k.as_str() == given) {
        return Resolution::Exact {
            library: library.clone(),
        };
    }
    let norm = normalise(given);
    let resolved = |library: &String, how: &str| Resolution::Resolved {
        given: given.to_owned(),
        library: library.clone(),
        how: how.to_owned(),
    };
    let normalised: Vec<&String> = known.iter().filter(|k| normalise(k) == norm).collect();
    if let [one] = normalised[..] {
        return resolved(one, "normalised");
    }
    if normalised.is_empty() && norm.chars().count() >= 3 {
        let prefixed: Vec<&String> = known
            .iter()
            .filter(|k| {
                let kn = normalise(k);
                kn.starts_with(&norm) || (kn.chars().count() >= 3 && norm.starts_with(&kn))
            })
            .collect();
        if let [one] = prefixed[..] {
            return resolved(one, "prefix");
        }
    }
    let mut scored: Vec<(f64, &String)> = known
        .iter()
        .map(|k| {
            (
                strsim::normalized_damerau_levenshtein(&norm, &normalise(k)),
                k,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    if normalised.is_empty() {
        match scored[..] {
            [(best, one), (second, _), ..] if best >= FUZZY_MIN && best > second => {
                return resolved(one, "fuzzy")
            }
            [(best, one)] if best >= FUZZY_MIN => return resolved(one, "fuzzy"),
            _ => {}
        }
    }
    Resolution::Unknown {
        given: given.to_owned(),
        candidates: scored
            .into_iter()
            .take(MAX_CANDIDATES)
            .map(|(_, k)| k.clone())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        ["nextjs", "react", "react-router", "git", "Vue"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn exact_then_normalised_then_prefix_then_fuzzy() {
        let k = known();
        assert_eq!(
            resolve("git", &k),
            Resolution::Exact {
                library: "git".into()
            }
        );
        let lib = |name: &str| resolve(name, &k).library().map(str::to_owned);
        assert_eq!(lib("NextJS").as_deref(), Some("nextjs"));
        assert_eq!(lib("next").as_deref(), Some("nextjs"));
        assert_eq!(lib("Next.js").as_deref(), Some("nextjs"));
        assert_eq!(lib("vue").as_deref(), Some("Vue"));
        assert_eq!(lib("recat").as_deref(), Some("react"));
        assert_eq!(lib("react router").as_deref(), Some("react-router"));
    }

    #[test]
    fn ambiguous_or_far_names_list_candidates() {
        let k = known();
        // "rea" is a prefix of two libraries.
        match resolve("rea", &k) {
            Resolution::Unknown { candidates, .. } => {
                assert!(candidates.contains(&"react".to_owned()), "{candidates:?}");
            }
            other => panic!("resolved an ambiguous name: {other:?}"),
        }
        assert!(matches!(
            resolve("kubernetes", &k),
            Resolution::Unknown { .. }
        ));
        assert!(
            matches!(resolve("x", &[]), Resolution::Unknown { candidates, .. } if candidates.is_empty())
        );
    }
}
