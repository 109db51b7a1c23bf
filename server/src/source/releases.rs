//! Releases as versions: which of a list of release names (a Git
//! repository's tags, a registry's versions of a package) a `track`
//! pattern follows, newest first.

/// A `track` pattern: `*` any run of characters, `?` one.
#[derive(Debug, Clone)]
pub struct Track {
    pattern: glob::Pattern,
    /// Whether the pattern names a pre-release, so that pre-releases are
    /// followed too.
    with_pre: bool,
}

impl Track {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        let pattern =
            glob::Pattern::new(raw).map_err(|e| format!("{raw:?} is not a pattern: {e}"))?;
        let wanted = raw.to_ascii_lowercase();
        let with_pre = ["-", "rc", "alpha", "beta"]
            .iter()
            .any(|p| wanted.contains(p));
        Ok(Self { pattern, with_pre })
    }

    pub fn as_str(&self) -> &str {
        self.pattern.as_str()
    }

    /// The names the pattern matches, newest first by version order
    /// (`v1.10` after `v1.9`). Pre-releases (`v2.0.0-rc.1`, `2.0b1`) are
    /// left out unless the pattern itself names one (holds `-`, `rc`,
    /// `alpha` or `beta`).
    pub fn newest_first<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut kept: Vec<&str> = names
            .into_iter()
            .filter(|name| self.pattern.matches(name))
            .filter(|name| self.with_pre || !is_prerelease(name))
            .collect();
        kept.sort_by(|a, b| index_core::version::compare(b, a));
        kept.dedup();
        kept
    }
}

/// How many releases an error lists, newest first.
pub const LISTED: usize = 5;

/// The `n` newest of `names` by version order, pre-releases included:
/// what an error lists when a pattern matched none.
pub fn newest<'a>(names: impl IntoIterator<Item = &'a str>, n: usize) -> Vec<String> {
    let mut all: Vec<&str> = names.into_iter().collect();
    all.sort_by(|a, b| index_core::version::compare(b, a));
    all.dedup();
    all.into_iter().take(n).map(str::to_owned).collect()
}

/// Whether a release name is a pre-release: letters or a `-` in its
/// version (build metadata after `+` aside).
pub fn is_prerelease(name: &str) -> bool {
    let core = name.trim_start_matches(|c: char| !c.is_ascii_digit());
    let core = core.split('+').next().unwrap_or(core);
    core.contains('-') || core.bytes().any(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_follow_a_pattern_newest_first_without_pre_releases() {
        let tags = [
            "v1.9.0",
            "v1.10.0",
            "v2.0.0-rc.1",
            "v2.0b1",
            "docs-1",
            "v1.10.1+build.5",
        ];
        let v = Track::parse("v*").unwrap();
        assert_eq!(
            v.newest_first(tags),
            ["v1.10.1+build.5", "v1.10.0", "v1.9.0"]
        );
        let rc = Track::parse("v*-rc*").unwrap();
        assert_eq!(rc.newest_first(tags), ["v2.0.0-rc.1"]);
        let registry = ["2.31.0", "2.32.3", "3.0.0a1", "2.4.0"];
        let two = Track::parse("2.*").unwrap();
        assert_eq!(two.newest_first(registry), ["2.32.3", "2.31.0", "2.4.0"]);
        assert!(Track::parse("[").is_err());
    }
}
