//! No text twice in one budgeted answer: hits whose texts are the same
//! passage, word for word or nearly, are given once.
//!
//! The same passage comes back from two versions of a page, from pages
//! that include one shared text (git's option lists, npm's config
//! options), and from a page and its mirror or print view. Near, not only
//! exact: between versions a link or a word changes, and between pages the
//! chunker cuts the shared text at other places.
//!
//! **The rule.** Two texts are the same passage when at least
//! [`SAME_PASSAGE`] of the shorter one's 5-word shingles are in the other.
//! Measured on the six eval sets with an older release of three of them
//! beside (`scripts/bench-near-duplicates.py`; docs/benchmarks.md,
//! "Near-duplicate passages"): pairs from 0.9 up were the same text with a
//! link, a word or the cut changed; from 0.8 to 0.9 the same text cut
//! elsewhere, with a tenth or more of its own; below 0.8, texts that share
//! a part and say other things.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use index_core::search::SearchHit;

use super::sections::Section;

/// The share of the shorter text's shingles the other must hold.
pub const SAME_PASSAGE: f64 = 0.9;

/// Words per shingle.
const SHINGLE: usize = 5;

/// The copies of a passage left out: library, version and path of each.
pub type Copies = Vec<(String, String, String)>;

/// A text's 5-word shingles (words lower-cased, split on whitespace), as
/// hashes; a text of fewer words is one shingle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shingles(HashSet<u64>);

impl Shingles {
    pub fn of(text: &str) -> Self {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        let hash = |window: &[String]| {
            let mut hasher = DefaultHasher::new();
            window.hash(&mut hasher);
            hasher.finish()
        };
        if words.len() < SHINGLE {
            return Self(HashSet::from([hash(&words)]));
        }
        Self(words.windows(SHINGLE).map(hash).collect())
    }

    /// The share of the smaller set found in the larger.
    pub fn containment(&self, other: &Self) -> f64 {
        let (small, large) = match self.0.len() <= other.0.len() {
            true => (&self.0, &other.0),
            false => (&other.0, &self.0),
        };
        if small.is_empty() {
            return 0.0;
        }
        small.iter().filter(|s| large.contains(s)).count() as f64 / small.len() as f64
    }

    pub fn same_passage(&self, other: &Self) -> bool {
        self.containment(other) >= SAME_PASSAGE
    }
}

/// The hits with each passage once, in rank order, and per hit the copies
/// left out (library, version, path). A copy's place is its best-ranked
/// one's; of one library's copies, the latest version's hit is kept there,
/// so an unfiltered search answers from the newest release.
pub fn without_repeats(
    hits: Vec<(SearchHit, Section)>,
    text: impl Fn(&SearchHit) -> &str,
) -> (Vec<(SearchHit, Section)>, Vec<Copies>) {
    let mut unique: Vec<(SearchHit, Section)> = Vec::new();
    let mut shingles: Vec<Shingles> = Vec::new();
    let mut copies: Vec<Copies> = Vec::new();
    for (hit, section) in hits {
        let own = Shingles::of(text(&hit));
        let Some(at) = shingles.iter().position(|s| s.same_passage(&own)) else {
            unique.push((hit, section));
            shingles.push(own);
            copies.push(Vec::new());
            continue;
        };
        let held = &mut unique[at];
        let newer = hit.library == held.0.library
            && index_core::version::compare(&hit.version, &held.0.version).is_gt();
        let hit = if newer {
            shingles[at] = own;
            std::mem::replace(held, (hit, section)).0
        } else {
            hit
        };
        copies[at].push((hit.library, hit.version, hit.file_path));
    }
    (unique, copies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_cut_or_edited_a_little_is_the_same_passage() {
        let text = "Scoped packages are not public by default. You will need to specify \
                    the access flag with the initial publish command. This will publish the \
                    package and set access to public as if you had run the access command.";
        let spaced = text.replace(' ', "\n ");
        assert!(Shingles::of(text).same_passage(&Shingles::of(&spaced)));
        // A word changed in a long text, or the text inside a longer one.
        let edited = text.replace("initial", "first");
        assert!(Shingles::of(text).containment(&Shingles::of(&edited)) < 1.0);
        let longer = format!("{text} Another sentence follows it here.");
        assert!(Shingles::of(text).same_passage(&Shingles::of(&longer)));
        // Half of it, beside other words, is not.
        let half: String = text
            .split_whitespace()
            .take(18)
            .collect::<Vec<_>>()
            .join(" ");
        let other = format!("{half} and then something else entirely, about other things");
        assert!(!Shingles::of(text).same_passage(&Shingles::of(&other)));
        assert!(Shingles::of("Run it.").same_passage(&Shingles::of("run  IT.")));
    }
}
