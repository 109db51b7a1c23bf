//! A search answer filled to a token budget ([`index_core::budget`]):
//! each hit a *passage* in compact Markdown, given best first while it
//! fits, the same text once.
//!
//! No text twice: a passage met again (two versions, two paths, two
//! libraries) is given once and the others named in
//! [`Budget::repeats`]. Of one library's copies, the latest version's is
//! kept, in the place of the best-ranked copy, so an unfiltered search
//! answers from the newest release.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use index_core::budget::{Budget, Repeat};
use index_core::search::SearchHit;

/// A hit as an agent reads it: the heading path (else the title) as a
/// heading, where it is from (and where else the same text is, so a page
/// whose best passage another page repeats is still named), then its text
/// (the expanded text when the search merged neighbours in).
pub fn passage(hit: &SearchHit, copies: &Copies) -> String {
    let heading = match (hit.heading_path.trim(), hit.title.as_deref()) {
        ("", Some(title)) if !title.trim().is_empty() => title.trim(),
        ("", _) => hit.file_path.as_str(),
        (path, _) => path,
    };
    let text = hit
        .expanded
        .as_ref()
        .map_or(hit.text.as_str(), |e| e.text.as_str());
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

/// The copies of a passage left out: library, version and path of each.
pub type Copies = Vec<(String, String, String)>;

/// What a budget kept: the results given, their passages joined (what
/// the agent reads), and how it was filled.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    pub results: Vec<SearchHit>,
    pub context: String,
    pub budget: Budget,
}

/// Fills `max_tokens` best first from `hits` (ranked), each repeat of a
/// text given once, counting with `count` (named `tokenizer`). The
/// context's own count is at most `max_tokens`: passages are counted
/// alone as they are added, then the whole once more, and trimmed from
/// the end should the joins have cost a token.
pub fn fill(
    hits: Vec<SearchHit>,
    max_tokens: usize,
    tokenizer: &str,
    count: impl Fn(&str) -> usize,
) -> Filled {
    let (unique, repeats_of) = without_repeats(hits);
    let mut kept: Vec<(SearchHit, String, Copies)> = Vec::new();
    let (mut used, mut left_out) = (0usize, 0);
    for (hit, repeats) in unique.into_iter().zip(repeats_of) {
        let text = passage(&hit, &repeats);
        let tokens = count(&text);
        if used.saturating_add(tokens) > max_tokens {
            left_out += 1;
            continue;
        }
        used += tokens;
        kept.push((hit, text, repeats));
    }
    let mut context: String = kept.iter().map(|(_, p, _)| p.as_str()).collect();
    let mut tokens = count(&context);
    while tokens > max_tokens {
        let Some((_, text, _)) = kept.pop() else {
            break;
        };
        left_out += 1;
        context.truncate(context.len() - text.len());
        tokens = count(&context);
    }
    let mut repeats = Vec::new();
    for (at, (_, _, copies)) in kept.iter().enumerate() {
        repeats.extend(copies.iter().map(|(library, version, file_path)| Repeat {
            library: library.clone(),
            version: version.clone(),
            file_path: file_path.clone(),
            same_as: at,
        }));
    }
    let passages = kept.len();
    // The passages are the context: the results say where each is from,
    // without their text a second time.
    for (hit, _, _) in &mut kept {
        hit.text.clear();
        hit.snippet.clear();
        hit.expanded = None;
        hit.sections.clear();
    }
    Filled {
        results: kept.into_iter().map(|(hit, _, _)| hit).collect(),
        context,
        budget: Budget {
            tokenizer: tokenizer.to_owned(),
            max_tokens,
            tokens,
            passages,
            left_out,
            repeats,
        },
    }
}

/// The hits with each text once, in rank order (a copy's place is its
/// best-ranked one's, its hit the latest version's), and per hit the
/// copies left out (library, version, path).
fn without_repeats(hits: Vec<SearchHit>) -> (Vec<SearchHit>, Vec<Copies>) {
    let mut place: HashMap<u64, usize> = HashMap::new();
    let mut unique: Vec<SearchHit> = Vec::new();
    let mut copies: Vec<Copies> = Vec::new();
    for hit in hits {
        let key = text_key(&hit);
        let Some(&at) = place.get(&key) else {
            place.insert(key, unique.len());
            unique.push(hit);
            copies.push(Vec::new());
            continue;
        };
        let held = &mut unique[at];
        let newer = hit.library == held.library
            && index_core::version::compare(&hit.version, &held.version).is_gt();
        let hit = if newer {
            std::mem::replace(held, hit)
        } else {
            hit
        };
        copies[at].push((hit.library, hit.version, hit.file_path));
    }
    (unique, copies)
}

/// The hit's text with its whitespace runs made one space: the same
/// passage from a page and its mirror differs in line breaks at most.
fn text_key(hit: &SearchHit) -> u64 {
    let text = hit
        .expanded
        .as_ref()
        .map_or(hit.text.as_str(), |e| e.text.as_str());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for word in text.split_whitespace() {
        word.hash(&mut hasher);
    }
    hasher.finish()
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

    /// Words as tokens: enough to test the filling.
    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    #[test]
    fn passages_say_where_they_are_from_then_the_text() {
        let install = hit("lib", "1.0", "docs/install.md", "Run the installer.\n");
        let p = passage(&install, &Vec::new());
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
        let filled = fill(hits, 40, "words", words);
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
        let filled = fill(hits, 1_000, "words", words);
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
}
