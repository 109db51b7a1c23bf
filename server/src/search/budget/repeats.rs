//! No text twice in one budgeted answer: hits whose texts are the same
//! passage, word for word or nearly ([`same_passage`], the rule
//! and how it was measured: [`crate::search::copies`]), are given once.

use index_core::search::SearchHit;

use super::sections::Section;
use crate::search::copies::{same_passage, Shingles};

/// The copies of a passage left out: library, version and path of each.
pub type Copies = Vec<(String, String, String)>;

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
        let Some(at) = shingles.iter().position(|s| same_passage(s, &own)) else {
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
