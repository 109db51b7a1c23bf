//! Ordering version names, so `latest` can mean the newest one stored.
//!
//! Versions are compared piece by piece, numbers as numbers (`1.10` > `1.9`)
//! and other text alphabetically; a version with a pre-release tail
//! (`2.0-rc1`, or without the hyphen as Python writes them: `2.0rc1`,
//! `2.0.dev1`, `1.0b2`) sorts before the same version without it (`2.0`).

use std::cmp::Ordering;

/// The name that asks for the newest stored version.
pub const LATEST: &str = "latest";

/// Whether `version` asks for the newest one.
pub fn is_latest(version: &str) -> bool {
    version.trim().eq_ignore_ascii_case(LATEST)
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part<'a> {
    // Declared first: text sorts below numbers, so `2.0-rc1` < `2.0.1`.
    Text(&'a str),
    Number(u64),
}

fn parts(version: &str) -> (Vec<Part<'_>>, bool) {
    let v = version.trim().trim_start_matches(['v', 'V']);
    let (core, pre) = match v.find(['-', '+']) {
        Some(i) => (&v[..i], !v[i..].starts_with('+')),
        None => (v, false),
    };
    let mut out = Vec::new();
    let mut rest = core;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits > 0 {
            out.push(Part::Number(rest[..digits].parse().unwrap_or(u64::MAX)));
            rest = &rest[digits..];
            continue;
        }
        let text = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let piece = rest[..text].trim_matches(['.', '_']);
        if !piece.is_empty() {
            out.push(Part::Text(piece));
        }
        rest = &rest[text..];
    }
    // A pre-release marker after the numbers, written without a hyphen:
    // the parts from it on are the pre-release.
    let marker = out.iter().position(
        |p| matches!(p, Part::Text(t) if PRE_RELEASE.contains(&t.to_ascii_lowercase().as_str())),
    );
    match marker {
        Some(at) if at > 0 && !pre => {
            out.truncate(at);
            (out, true)
        }
        _ => (out, pre),
    }
}

/// Words that mark a pre-release when they follow a version's numbers
/// (PEP 440's `a`, `b`, `rc`, `dev`, and their long forms).
const PRE_RELEASE: [&str; 9] = [
    "a", "alpha", "b", "beta", "c", "rc", "dev", "pre", "preview",
];

/// Compares two version names (see the module docs).
pub fn compare(a: &str, b: &str) -> Ordering {
    let ((pa, pre_a), (pb, pre_b)) = (parts(a), parts(b));
    pa.cmp(&pb)
        .then_with(|| pre_b.cmp(&pre_a))
        .then_with(|| a.cmp(b))
}

/// The newest of `versions`.
pub fn latest<'a>(versions: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    versions.into_iter().max_by(|a, b| compare(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_as_numbers() {
        assert_eq!(compare("1.10", "1.9"), Ordering::Greater);
        assert_eq!(compare("v2.0", "1.99.9"), Ordering::Greater);
        assert_eq!(compare("2.0-rc1", "2.0"), Ordering::Less);
        assert_eq!(compare("2.0+build5", "2.0"), Ordering::Greater);
        // Pre-releases as Python names them, below their release.
        assert_eq!(compare("v2.34.0.dev1", "v2.34.0"), Ordering::Less);
        assert_eq!(compare("2.34.0rc1", "2.34.0"), Ordering::Less);
        assert_eq!(compare("1.0b2", "1.0"), Ordering::Less);
        assert_eq!(compare("2.34.0rc1", "2.33.1"), Ordering::Greater);
        assert_eq!(compare("2.0.post1", "2.0"), Ordering::Greater);
        assert_eq!(
            latest(["18.2", "17.0.2", "18.10", "18.3-beta"]),
            Some("18.10")
        );
        assert_eq!(latest([]), None);
        assert!(is_latest(" Latest "));
    }
}
