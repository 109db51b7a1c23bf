//! The same passage in several places, and what it is worth to a ranking.
//!
//! Documentation repeats itself: npm prints a config option's text on
//! every command page that reads it, git its diff options on every
//! diff-like command, a site keeps a print view beside each page, and two
//! releases share most of their text. Near, not only exact: between
//! versions a link or a word changes, and between pages the chunker cuts
//! the shared text at other places.
//!
//! **The rule.** Two texts are the same passage when at least
//! [`SAME_PASSAGE`] of the shorter one's 5-word shingles are in the other.
//! Measured on the six eval sets with an older release of three of them
//! beside (`scripts/bench-near-duplicates.py`; docs/benchmarks.md,
//! 2026-11-27, "… and near-duplicate passages"): pairs from 0.9 up were
//! the same text with a link, a word or the cut changed; from 0.8 to 0.9
//! the same text cut elsewhere, with a tenth or more of its own; below
//! 0.8, texts that share a part and say other things.
//!
//! Two uses: a budgeted answer gives a passage once ([`super::budget::repeats`]),
//! and a ranking counts the text a library version repeats on several of
//! its pages once ([`demote_repeated`]).

pub use docshelf_kernels::Shingles;

use super::Candidate;

/// The share of the shorter text's shingles the other must hold.
pub const SAME_PASSAGE: f64 = 0.9;

/// Whether two texts are the same passage (see the module docs).
pub fn same_passage(a: &Shingles, b: &Shingles) -> bool {
    a.containment(b) >= SAME_PASSAGE
}

/// What a candidate whose text a better-ranked page of its library version
/// already gives keeps of its score (relevance blended with recency and
/// feedback).
///
/// Why: a page's place in a ranking should come from what it says itself.
/// Text a documentation set repeats on many pages (npm's config options on
/// every command page) otherwise ranks every copy alike, and the copies
/// fill the first places ahead of the one page that explains the question.
/// The copy is lowered, not dropped: while it stays among the results it
/// is still listed, and a budgeted answer names it beside the passage it
/// gives. The share was chosen on the tuning sets (docs/benchmarks.md,
/// 2026-11-27, "Concept questions").
pub const REPEAT_SHARE: f32 = 0.7;

/// Lowers each candidate of `pool` (sorted best first) whose text is the
/// same passage as a better-ranked candidate's from another page of the
/// same library and version, to [`REPEAT_SHARE`] of its score (noted in
/// its `parts.repeated`), and sorts the pool again. Copies across versions
/// or libraries are left to the filters, and to the budget, which keeps
/// the latest version's.
///
/// Each text is compared only with the candidates it shares a shingle
/// with ([`docshelf_kernels::first_copies`]), so a pool of hundreds costs
/// about what reading its words costs.
pub fn demote_repeated(pool: &mut [Candidate]) {
    let shingles: Vec<Shingles> = pool.iter().map(|c| Shingles::of(&c.chunk.text)).collect();
    let copies = docshelf_kernels::first_copies(&shingles, SAME_PASSAGE, &|earlier, this| {
        let (a, b) = (&pool[earlier].chunk, &pool[this].chunk);
        a.library == b.library && a.version == b.version && a.file_path != b.file_path
    });
    let mut lowered = false;
    for (c, copy) in pool.iter_mut().zip(copies) {
        if copy.is_some() {
            c.score *= REPEAT_SHARE;
            c.parts.repeated = Some(REPEAT_SHARE);
            lowered = true;
        }
    }
    if lowered {
        pool.sort_by(super::best_first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Scoped packages are not public by default. You will need to specify \
                        the access flag with the initial publish command. This will publish the \
                        package and set access to public as if you had run the access command.";

    fn candidate(path: &str, version: &str, text: &str, score: f32) -> Candidate {
        let mut c = Candidate::for_test(path, 0, score);
        c.chunk.chunk_id = format!("{path}@{version}");
        c.chunk.version = version.into();
        c.chunk.text = text.into();
        c
    }

    #[test]
    fn a_text_repeated_on_other_pages_counts_once_for_the_best_ranked() {
        let own = "The folders page explains where packages are placed and why the tree \
                   is flattened when versions agree.";
        let mut pool = vec![
            candidate("npm-install.md", "1", TEXT, 0.90),
            candidate("npm-ci.md", "1", &format!("{TEXT} Default: true"), 0.89),
            candidate("npm-update.md", "1", TEXT, 0.88),
            candidate("folders.md", "1", own, 0.80),
            // The same page in another release is a version, not a repeat.
            candidate("npm-install.md", "0", TEXT, 0.85),
        ];
        demote_repeated(&mut pool);
        let order: Vec<(&str, &str)> = pool
            .iter()
            .map(|c| (c.chunk.file_path.as_str(), c.chunk.version.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("npm-install.md", "1"),
                ("npm-install.md", "0"),
                ("folders.md", "1"),
                ("npm-ci.md", "1"),
                ("npm-update.md", "1"),
            ]
        );
        assert!((pool[3].score - 0.89 * REPEAT_SHARE).abs() < 1e-6);
        assert_eq!(pool[3].parts.repeated, Some(REPEAT_SHARE));
        assert_eq!(pool[0].parts.repeated, None);
    }
}
