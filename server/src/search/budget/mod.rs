//! A search answer filled to a token budget ([`index_core::budget`]):
//! each hit a *passage* in compact Markdown, given best first while it
//! fits, the same text once.
//!
//! A passage is the hit's whole section ([`sections`]) where that takes at
//! most half of the budget still left, else its best chunk. Why half:
//! giving every section that fits cost pages, and growing chunks into
//! sections with what is left gave almost no sections, since budgets are
//! filled to the end; half keeps room for the pages after it (measured on
//! the six eval sets: docs/benchmarks.md, "Whole sections in budgeted
//! answers").
//!
//! No text twice ([`repeats`]): a passage met again, word for word or
//! nearly (two versions, two paths, two libraries), is given once and the
//! others named in [`Budget::repeats`]. A hit whose chunk a section already
//! given holds (two chunks of one page, with `duplicates`) is a repeat too.

pub mod repeats;
pub mod sections;

use std::ops::RangeInclusive;

use index_core::budget::{Budget, Repeat};
use index_core::search::SearchHit;

use self::repeats::{without_repeats, Copies};
use self::sections::Section;

/// A hit as an agent reads it: the heading path (else the title) as a
/// heading, where it is from (and where else the same text is, so a page
/// whose best passage another page repeats is still named), then `text`.
pub fn passage(hit: &SearchHit, text: &str, copies: &Copies) -> String {
    let heading = match (hit.heading_path.trim(), hit.title.as_deref()) {
        ("", Some(title)) if !title.trim().is_empty() => title.trim(),
        ("", _) => hit.file_path.as_str(),
        (path, _) => path,
    };
    let also: String = copies
        .iter()
        .map(|(library, version, path)| format!("\nAlso in: {library} {version} · {path}"))
        .collect();
    format!(
        "### {heading}\nSource: {} {} · {}{also}\n\n{}\n\n",
        hit.library,
        hit.version,
        hit.file_path,
        text.trim()
    )
}

/// A section longer than this many bytes per token it may take is taken
/// not to fit, uncounted. o200k_base averages about 4 bytes a token on
/// English prose and fewer on code, so a section this long would not fit.
const MOST_BYTES_PER_TOKEN: usize = 10;

/// The hit's own text: the expanded text when the search merged
/// neighbours in, else its chunk.
pub fn chunk_text(hit: &SearchHit) -> &str {
    hit.expanded
        .as_ref()
        .map_or(hit.text.as_str(), |e| e.text.as_str())
}

/// What a budget kept: the results given, their passages joined (what
/// the agent reads), and how it was filled.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    pub results: Vec<SearchHit>,
    pub context: String,
    pub budget: Budget,
}

/// A passage taken.
struct Kept {
    hit: SearchHit,
    text: String,
    copies: Copies,
    /// The chunks of its document the passage holds.
    holds: RangeInclusive<u32>,
    /// Whether the passage holds its whole section.
    whole: bool,
}

/// Fills `max_tokens` best first from `hits` (ranked, each with its
/// section), each repeat of a text given once, counting with `count`
/// (named `tokenizer`). The context's own count is at most `max_tokens`:
/// passages are counted alone as they are added, then the whole once
/// more, and trimmed from the end should the joins have cost a token.
pub fn fill(
    hits: Vec<(SearchHit, Section)>,
    max_tokens: usize,
    tokenizer: &str,
    count: impl Fn(&str) -> usize,
) -> Filled {
    let (unique, repeats_of) = without_repeats(hits, chunk_text);
    let mut kept: Vec<Kept> = Vec::new();
    let mut repeats = Vec::new();
    let (mut used, mut left_out) = (0usize, 0);
    for ((hit, section), copies) in unique.into_iter().zip(repeats_of) {
        if let Some(at) = kept
            .iter()
            .position(|k| holds(k, &hit, &(hit.chunk_index..=hit.chunk_index)))
        {
            repeats.push(repeat_of(&hit, at));
            continue;
        }
        // The whole section, when it takes at most half of what is left:
        // the passages after it keep room (measured: see the module docs).
        // One far longer in bytes is not counted (a long page's one
        // section would cost more to count than the search), nor one
        // holding a passage already given (two chunks of a page, with
        // `duplicates`): its text would come twice.
        let allowed = (max_tokens - used) / 2;
        let given = |range: &RangeInclusive<u32>| kept.iter().any(|k| holds(k, &hit, range));
        let whole = match &section {
            Section::Chunks { text, range }
                if text.len() <= allowed * MOST_BYTES_PER_TOKEN && !given(range) =>
            {
                Some(passage(&hit, text, &copies))
            }
            _ => None,
        }
        .map(|text| (count(&text), text))
        .filter(|(tokens, _)| *tokens <= allowed);
        let (tokens, text, whole) = match whole {
            Some((tokens, text)) => (tokens, text, true),
            None => {
                let text = passage(&hit, chunk_text(&hit), &copies);
                (count(&text), text, section == Section::Chunk)
            }
        };
        if used.saturating_add(tokens) > max_tokens {
            left_out += 1;
            continue;
        }
        used += tokens;
        let holds = match whole {
            true => section.covers(hit.chunk_index),
            false => hit.chunk_index..=hit.chunk_index,
        };
        kept.push(Kept {
            hit,
            text,
            copies,
            holds,
            whole,
        });
    }
    let mut context: String = kept.iter().map(|k| k.text.as_str()).collect();
    let mut tokens = count(&context);
    while tokens > max_tokens {
        let Some(last) = kept.pop() else {
            break;
        };
        left_out += 1;
        context.truncate(context.len() - last.text.len());
        tokens = count(&context);
    }
    repeats.retain(|r: &Repeat| r.same_as < kept.len());
    for (at, k) in kept.iter().enumerate() {
        repeats.extend(k.copies.iter().map(|(library, version, file_path)| Repeat {
            library: library.clone(),
            version: version.clone(),
            file_path: file_path.clone(),
            same_as: at,
        }));
    }
    let passages = kept.len();
    let sections = (0..kept.len()).filter(|&at| kept[at].whole).collect();
    // The passages are the context: the results say where each is from,
    // without their text a second time.
    let results = kept
        .into_iter()
        .map(|mut k| {
            k.hit.text.clear();
            k.hit.snippet.clear();
            k.hit.expanded = None;
            k.hit.sections.clear();
            k.hit
        })
        .collect();
    Filled {
        results,
        context,
        budget: Budget {
            tokenizer: tokenizer.to_owned(),
            max_tokens,
            tokens,
            passages,
            sections,
            left_out,
            repeats,
        },
    }
}

/// Whether a passage taken already holds any of `chunks` of `hit`'s page.
fn holds(kept: &Kept, hit: &SearchHit, chunks: &RangeInclusive<u32>) -> bool {
    kept.hit.library == hit.library
        && kept.hit.version == hit.version
        && kept.hit.file_path == hit.file_path
        && kept.holds.start() <= chunks.end()
        && chunks.start() <= kept.holds.end()
}

fn repeat_of(hit: &SearchHit, same_as: usize) -> Repeat {
    Repeat {
        library: hit.library.clone(),
        version: hit.version.clone(),
        file_path: hit.file_path.clone(),
        same_as,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(library: &str, version: &str, path: &str, text: &str) -> SearchHit {
        SearchHit {
            chunk_id: format!("{library}/{version}/{path}"),
            library: library.into(),
            version: version.into(),
            file_path: path.into(),
            title: None,
            chunk_index: 0,
            heading_path: "Guide > Install".into(),
            page: None,
            text: text.into(),
            snippet: String::new(),
            score: 1.0,
            parts: Default::default(),
            days_old: 0.0,
            expanded: None,
            sections: Vec::new(),
        }
    }

    fn chunks(hits: Vec<SearchHit>) -> Vec<(SearchHit, Section)> {
        hits.into_iter().map(|h| (h, Section::Chunk)).collect()
    }

    /// Words as tokens: enough to test the filling.
    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    #[test]
    fn passages_say_where_they_are_from_then_the_text() {
        let install = hit("lib", "1.0", "docs/install.md", "Run the installer.\n");
        let p = passage(&install, &install.text, &Vec::new());
        assert_eq!(
            p,
            "### Guide > Install\nSource: lib 1.0 · docs/install.md\n\nRun the installer.\n\n"
        );
    }

    #[test]
    fn the_budget_is_filled_best_first_and_a_smaller_passage_may_follow() {
        let long = "word ".repeat(60);
        let hits = vec![
            hit("a", "1", "one.md", "first passage short"),
            hit("a", "1", "two.md", &long),
            hit("a", "1", "three.md", "third passage short too"),
        ];
        let filled = fill(chunks(hits), 40, "words", words);
        let kept: Vec<&str> = filled
            .results
            .iter()
            .map(|h| h.file_path.as_str())
            .collect();
        assert_eq!(kept, ["one.md", "three.md"]);
        assert_eq!(filled.budget.left_out, 1);
        assert_eq!(filled.budget.tokens, words(&filled.context));
        assert!(filled.budget.tokens <= 40);
        assert!(filled.context.contains("three.md"));
    }

    #[test]
    fn a_text_met_twice_is_given_once_from_the_latest_version() {
        let hits = vec![
            hit("a", "1.0", "install.md", "Run  the\ninstaller."),
            hit("b", "2.0", "mirror/install.md", "Other text entirely."),
            hit("a", "1.2", "install.md", "Run the installer."),
        ];
        let filled = fill(chunks(hits), 1_000, "words", words);
        let kept: Vec<(&str, &str)> = filled
            .results
            .iter()
            .map(|h| (h.library.as_str(), h.version.as_str()))
            .collect();
        assert_eq!(kept, [("a", "1.2"), ("b", "2.0")]);
        // The copy left out is still named where the agent reads.
        assert!(
            filled
                .context
                .contains("Source: a 1.2 · install.md\nAlso in: a 1.0 · install.md\n"),
            "{}",
            filled.context
        );
        assert!(filled.results.iter().all(|h| h.text.is_empty()));
        assert_eq!(
            filled.budget.repeats,
            [Repeat {
                library: "a".into(),
                version: "1.0".into(),
                file_path: "install.md".into(),
                same_as: 0
            }]
        );
    }

    #[test]
    fn a_whole_section_is_given_where_it_fits_else_the_chunk() {
        let section = |text: &str| Section::Chunks {
            range: 0..=2,
            text: text.into(),
        };
        let long = format!("## Install {}", "step ".repeat(40));
        let hits = vec![
            (
                hit("a", "1", "one.md", "best chunk"),
                section("## Install whole section text"),
            ),
            (hit("a", "1", "two.md", "second chunk"), section(&long)),
        ];
        let filled = fill(hits.clone(), 30, "words", words);
        assert!(
            filled.context.contains("whole section text"),
            "{}",
            filled.context
        );
        assert!(
            filled.context.contains("second chunk"),
            "{}",
            filled.context
        );
        assert_eq!(filled.budget.sections, [0]);
        assert_eq!(filled.budget.passages, 2);

        // Another chunk of a page whose section was given is that text again.
        let mut inside = hit("a", "1", "one.md", "a chunk inside the section");
        inside.chunk_index = 2;
        let mut after = hits;
        after.insert(1, (inside, Section::Chunk));
        let filled = fill(after, 30, "words", words);
        assert!(
            !filled.context.contains("inside the section"),
            "{}",
            filled.context
        );
        assert_eq!(filled.budget.repeats.len(), 1);
        assert_eq!(filled.budget.repeats[0].same_as, 0);
    }

    #[test]
    fn a_section_holding_a_passage_already_given_is_not_given_whole() {
        // With `duplicates`, a page's chunk 2 comes first as a chunk; then
        // its chunk 1, whose section spans chunks 0..=2.
        let mut first = hit("a", "1", "one.md", "the third chunk");
        first.chunk_index = 2;
        let mut second = hit("a", "1", "one.md", "the second chunk");
        second.chunk_index = 1;
        let section = Section::Chunks {
            range: 0..=2,
            text: "## Install the first chunk the second chunk the third chunk".into(),
        };
        let filled = fill(
            vec![(first, Section::Chunk), (second, section)],
            1_000,
            "words",
            words,
        );
        assert_eq!(filled.context.matches("the third chunk").count(), 1);
        assert!(filled.context.contains("the second chunk"));
        assert_eq!(filled.budget.passages, 2);
        assert_eq!(filled.budget.sections, [0]);
    }
}
