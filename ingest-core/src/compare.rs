//! What changed between two versions of a library's documents: documents
//! added, removed, moved and changed, and within a changed document the
//! sections added, removed and changed (by heading path, each without its
//! subsections, [`crate::sections::own`]), a changed one shown as a word
//! diff. A section whose heading path changed (its heading renamed, or the
//! page's title above it) but whose text mostly did not is one section
//! changed and renamed, not one removed and another added.
//!
//! Pure: the documents come in as stored (put back together from their
//! chunks), so nothing is fetched or read again.

use std::collections::{BTreeMap, HashMap, HashSet};

use index_core::changes::{DocumentChange, DocumentChangeKind, SectionChange, SectionChangeKind};
use similar::{ChangeTag, TextDiff};

use crate::sections;

/// How many unchanged words a diff keeps on each side of a change; a run
/// longer than twice this is shortened to `…` between them.
const CONTEXT_WORDS: usize = 8;

/// How alike two documents under different paths must be, line by line
/// (`similar`'s ratio), to be the same page moved. Only documents with the
/// same file name or title are compared so: a whole-corpus comparison of
/// every added page with every removed one would cost a diff per pair.
const MOVED_RATIO: f32 = 0.6;

/// How alike a removed and an added section of one document must be, word
/// by word (`similar`'s ratio), to be one section renamed. The words of a
/// section include its heading's, so a section renamed with its text
/// untouched is well above it, and one rewritten under a new heading stays
/// an addition and a removal. Read off one sample of releases (flask and
/// click; docs/benchmarks.md, "What changed between versions"), not
/// checked on others yet.
const RENAMED_RATIO: f32 = 0.55;

/// The release notes among `paths` (a changelog, CHANGES, HISTORY, NEWS,
/// release notes, what's new, or a page in such a folder), in path order:
/// what a comparison points an upgrade at.
pub fn release_notes<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut notes: Vec<String> = paths
        .into_iter()
        .filter(|path| crate::docs_tree::is_release_notes_path(path))
        .map(str::to_owned)
        .collect();
    notes.sort();
    notes
}

/// One version's document, as stored.
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a> {
    pub path: &'a str,
    pub title: Option<&'a str>,
    pub text: &'a str,
}

/// The documents that differ between `from` and `to` (changed, then
/// added, removed and moved, each by path), and how many are the same.
pub fn compare(from: &[Doc<'_>], to: &[Doc<'_>]) -> (Vec<DocumentChange>, usize) {
    let old: BTreeMap<&str, &Doc> = from.iter().map(|d| (d.path, d)).collect();
    let new: BTreeMap<&str, &Doc> = to.iter().map(|d| (d.path, d)).collect();
    let mut changes = Vec::new();
    let mut unchanged = 0;
    for (path, after) in &new {
        let Some(before) = old.get(path) else {
            continue;
        };
        let sections = compare_sections(before.text, after.text);
        if sections.is_empty() {
            unchanged += 1;
        } else {
            changes.push(document(DocumentChangeKind::Changed, after, None, sections));
        }
    }
    let mut added: Vec<&Doc> = new
        .iter()
        .filter(|(p, _)| !old.contains_key(*p))
        .map(|(_, d)| *d)
        .collect();
    let mut removed: Vec<&Doc> = old
        .iter()
        .filter(|(p, _)| !new.contains_key(*p))
        .map(|(_, d)| *d)
        .collect();
    let moves = find_moves(&removed, &added);
    for (was, is) in &moves {
        let sections = compare_sections(was.text, is.text);
        changes.push(document(
            DocumentChangeKind::Moved,
            is,
            Some(was.path),
            sections,
        ));
    }
    added.retain(|d| !moves.iter().any(|(_, is)| is.path == d.path));
    removed.retain(|d| !moves.iter().any(|(was, _)| was.path == d.path));
    for doc in added {
        let sections = whole(doc.text, SectionChangeKind::Added);
        changes.push(document(DocumentChangeKind::Added, doc, None, sections));
    }
    for doc in removed {
        let sections = whole(doc.text, SectionChangeKind::Removed);
        changes.push(document(DocumentChangeKind::Removed, doc, None, sections));
    }
    changes.sort_by(|a, b| (a.change, &a.file_path).cmp(&(b.change, &b.file_path)));
    (changes, unchanged)
}

fn document(
    change: DocumentChangeKind,
    doc: &Doc<'_>,
    previous_path: Option<&str>,
    sections: Vec<SectionChange>,
) -> DocumentChange {
    DocumentChange {
        change,
        file_path: doc.path.to_owned(),
        previous_path: previous_path.map(str::to_owned),
        title: doc.title.map(str::to_owned),
        sections,
        sections_left_out: 0,
    }
}

/// Removed documents paired with the added ones they became: the same
/// text first, then the most alike of those with the same file name or
/// title, at [`MOVED_RATIO`] or above. Each document pairs once.
fn find_moves<'a>(
    removed: &[&'a Doc<'a>],
    added: &[&'a Doc<'a>],
) -> Vec<(&'a Doc<'a>, &'a Doc<'a>)> {
    let mut by_text: HashMap<&str, Vec<&Doc>> = HashMap::new();
    for doc in added {
        by_text.entry(doc.text.trim()).or_default().push(doc);
    }
    let mut moves: Vec<(&Doc, &Doc)> = Vec::new();
    for was in removed {
        let same = by_text
            .get(was.text.trim())
            .and_then(|docs| docs.iter().find(|d| !taken(&moves, d)).copied());
        if let Some(is) = same {
            moves.push((*was, is));
        }
    }
    for was in removed {
        if moves.iter().any(|(w, _)| w.path == was.path) {
            continue;
        }
        let best = added
            .iter()
            .filter(|is| !taken(&moves, is) && kin(was, is))
            .map(|is| (TextDiff::from_lines(was.text, is.text).ratio(), *is))
            .filter(|(ratio, _)| *ratio >= MOVED_RATIO)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, is)) = best {
            moves.push((*was, is));
        }
    }
    moves
}

/// Whether `doc` is already paired as a move's new place.
fn taken(moves: &[(&Doc<'_>, &Doc<'_>)], doc: &Doc<'_>) -> bool {
    moves.iter().any(|(_, is)| is.path == doc.path)
}

/// Whether two documents may be one page moved: the same file name, or
/// the same title.
fn kin(a: &Doc<'_>, b: &Doc<'_>) -> bool {
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    name(a.path) == name(b.path) || (a.title.is_some() && a.title == b.title)
}

/// Every section of `text`, all added or all removed.
fn whole(text: &str, change: SectionChangeKind) -> Vec<SectionChange> {
    sections::own(text)
        .into_iter()
        .map(|s| SectionChange {
            change,
            heading_path: s.heading_path,
            text: Some(text[s.start..s.end].trim().to_owned()),
            diff: None,
            renamed_from: None,
        })
        .collect()
}

/// The sections that differ between two texts of one document, matched
/// by heading path (the n-th of a repeated path with the n-th), in the
/// newer text's order with removed ones where they stood.
fn compare_sections(before: &str, after: &str) -> Vec<SectionChange> {
    if normal(before) == normal(after) {
        return Vec::new();
    }
    let old = keyed(before);
    let new = keyed(after);
    let old_index: HashMap<&Key, &String> = old.iter().map(|(k, t)| (k, t)).collect();
    let new_keys: HashSet<&Key> = new.iter().map(|(k, _)| k).collect();
    let mut out = Vec::new();
    let mut old_at = 0;
    for (key, text) in &new {
        // Removed sections that stood before this one's place in the old text.
        if let Some(pos) = old.iter().position(|(k, _)| k == key) {
            for (k, t) in &old[old_at.min(pos)..pos] {
                if !new_keys.contains(k) {
                    out.push(removed(k, t));
                }
            }
            old_at = old_at.max(pos + 1);
        }
        match old_index.get(key) {
            None => out.push(SectionChange {
                change: SectionChangeKind::Added,
                heading_path: key.0.clone(),
                text: Some(text.clone()),
                diff: None,
                renamed_from: None,
            }),
            Some(was) if normal(was) != normal(text) => out.push(SectionChange {
                change: SectionChangeKind::Changed,
                heading_path: key.0.clone(),
                text: None,
                diff: Some(word_diff(was, text)),
                renamed_from: None,
            }),
            Some(_) => {}
        }
    }
    for (k, t) in &old[old_at.min(old.len())..] {
        if !new_keys.contains(k) {
            out.push(removed(k, t));
        }
    }
    renamed(out)
}

/// `changes` with each removed section that an added one mostly repeats
/// (at least [`RENAMED_RATIO`] of their words alike) made one changed
/// section, renamed, in the added one's place: pairs taken most alike
/// first, each section in one pair at most.
fn renamed(changes: Vec<SectionChange>) -> Vec<SectionChange> {
    let texts = |kind| {
        changes
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.change == kind)
            .filter_map(|(at, c)| c.text.as_deref().map(|t| (at, t)))
    };
    let mut pairs: Vec<(f32, usize, usize)> = Vec::new();
    for (gone, was) in texts(SectionChangeKind::Removed) {
        for (new, is) in texts(SectionChangeKind::Added) {
            let ratio = TextDiff::from_words(was, is).ratio();
            if ratio >= RENAMED_RATIO {
                pairs.push((ratio, gone, new));
            }
        }
    }
    if pairs.is_empty() {
        return changes;
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let (mut used, mut renames): (HashSet<usize>, HashMap<usize, usize>) = Default::default();
    for (_, gone, new) in pairs {
        if !used.contains(&gone) && !used.contains(&new) {
            used.extend([gone, new]);
            renames.insert(new, gone);
        }
    }
    let old: Vec<(String, String)> = changes
        .iter()
        .map(|c| (c.heading_path.clone(), c.text.clone().unwrap_or_default()))
        .collect();
    changes
        .into_iter()
        .enumerate()
        .filter(|(at, c)| !(c.change == SectionChangeKind::Removed && used.contains(at)))
        .map(|(at, c)| match renames.get(&at) {
            Some(&gone) => {
                let (was_path, was) = &old[gone];
                let is = c.text.unwrap_or_default();
                SectionChange {
                    change: SectionChangeKind::Changed,
                    heading_path: c.heading_path,
                    text: None,
                    diff: Some(word_diff(was, &is)),
                    renamed_from: Some(was_path.clone()),
                }
            }
            None => c,
        })
        .collect()
}

/// A section's heading path, and which of the sections with that path it
/// is (1 for the first).
type Key = (String, usize);

/// The sections of `text` by [`Key`], with their text.
fn keyed(text: &str) -> Vec<(Key, String)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    sections::own(text)
        .into_iter()
        .map(|s| {
            let n = seen.entry(s.heading_path.clone()).or_default();
            *n += 1;
            ((s.heading_path, *n), text[s.start..s.end].trim().to_owned())
        })
        .collect()
}

fn removed(key: &Key, text: &str) -> SectionChange {
    SectionChange {
        change: SectionChangeKind::Removed,
        heading_path: key.0.clone(),
        text: Some(text.to_owned()),
        diff: None,
        renamed_from: None,
    }
}

/// Text compared without differences in spacing alone.
fn normal(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `before` to `after` as a word diff, `[-removed-]{+added+}`, with at
/// most [`CONTEXT_WORDS`] unchanged words kept on each side of a change.
/// The spaces between changed words belong to the change, so a rewritten
/// phrase reads `[-To enable the-] {+The debugger is+}`, not a chain of
/// one-word pairs.
pub fn word_diff(before: &str, after: &str) -> String {
    /// A run of words: unchanged, or what was removed and added in place.
    enum Run {
        Same(String),
        Changed(String, String),
    }
    let before = normal(before);
    let after = normal(after);
    let diff = TextDiff::from_words(before.as_str(), after.as_str());
    let mut runs: Vec<Run> = Vec::new();
    for change in diff.iter_all_changes() {
        let value = change.value();
        let spacing = value.trim().is_empty();
        match (change.tag(), runs.last_mut()) {
            (ChangeTag::Equal, Some(Run::Changed(removed, added))) if spacing => {
                removed.push_str(value);
                added.push_str(value);
            }
            (ChangeTag::Equal, Some(Run::Same(text))) => text.push_str(value),
            (ChangeTag::Equal, _) => runs.push(Run::Same(value.to_owned())),
            (ChangeTag::Delete, Some(Run::Changed(removed, _))) => removed.push_str(value),
            (ChangeTag::Insert, Some(Run::Changed(_, added))) => added.push_str(value),
            (ChangeTag::Delete, _) => runs.push(Run::Changed(value.to_owned(), String::new())),
            (ChangeTag::Insert, _) => runs.push(Run::Changed(String::new(), value.to_owned())),
        }
    }
    let last = runs.len().saturating_sub(1);
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        match run {
            Run::Same(text) => out.push_str(&shorten(text, i > 0, i < last)),
            Run::Changed(removed, added) => {
                let parts: Vec<String> = [(removed.trim(), "[-", "-]"), (added.trim(), "{+", "+}")]
                    .into_iter()
                    .filter(|(words, _, _)| !words.is_empty())
                    .map(|(words, open, close)| format!("{open}{words}{close}"))
                    .collect();
                out.push_str(&parts.join(" "));
                if i < last {
                    out.push(' ');
                }
            }
        }
    }
    out.trim().to_owned()
}

/// An unchanged run, keeping the words next to the changes around it
/// (`after_change`: one comes before it; `before_change`: one follows).
fn shorten(text: &str, after_change: bool, before_change: bool) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let keep_head = if after_change { CONTEXT_WORDS } else { 0 };
    let keep_tail = if before_change { CONTEXT_WORDS } else { 0 };
    if words.len() <= keep_head + keep_tail {
        return format!("{} ", words.join(" "));
    }
    let head = words[..keep_head].join(" ");
    let tail = words[words.len() - keep_tail..].join(" ");
    match (head.is_empty(), tail.is_empty()) {
        (true, true) => "… ".to_owned(),
        (true, false) => format!("… {tail} "),
        (false, true) => format!("{head} … "),
        (false, false) => format!("{head} … {tail} "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(path: &'a str, text: &'a str) -> Doc<'a> {
        Doc {
            path,
            title: None,
            text,
        }
    }

    const GUIDE_OLD: &str = "# Guide\n\nIntro.\n\n## Install\n\nRun pip install widgets.\n\n## Configure\n\nSet WIDGETS_HOME.\n\n## Legacy\n\nThe old loader.\n";
    const GUIDE_NEW: &str = "# Guide\n\nIntro.\n\n## Install\n\nRun pip install widgets[fast] on Python 3.10 or later.\n\n## Configure\n\nSet WIDGETS_HOME.\n\n## Plugins\n\nLoad plugins with widgets.load().\n";

    #[test]
    fn a_changed_document_lists_its_sections_added_removed_and_changed() {
        let (changes, unchanged) = compare(
            &[
                doc("guide.md", GUIDE_OLD),
                doc("same.md", "# Same\n\nText.\n"),
            ],
            &[
                doc("guide.md", GUIDE_NEW),
                doc("same.md", "# Same\n\n  Text.\n"),
            ],
        );
        assert_eq!(unchanged, 1, "spacing alone is no change");
        assert_eq!(changes.len(), 1);
        let guide = &changes[0];
        assert_eq!(guide.change, DocumentChangeKind::Changed);
        let listed: Vec<(SectionChangeKind, &str)> = guide
            .sections
            .iter()
            .map(|s| (s.change, s.heading_path.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                (SectionChangeKind::Changed, "Guide > Install"),
                (SectionChangeKind::Added, "Guide > Plugins"),
                (SectionChangeKind::Removed, "Guide > Legacy"),
            ]
        );
        let diff = guide.sections[0].diff.as_deref().unwrap();
        assert!(diff.contains("[-widgets.-]"), "{diff}");
        assert!(
            diff.contains("{+widgets[fast] on Python 3.10 or later.+}"),
            "{diff}"
        );
        assert_eq!(
            guide.sections[2].text.as_deref(),
            Some("## Legacy\n\nThe old loader.")
        );
    }

    #[test]
    fn moved_documents_are_told_apart_from_added_and_removed_ones() {
        let (changes, unchanged) = compare(
            &[
                doc("old/setup.md", GUIDE_OLD),
                doc("faq.md", "# FAQ\n\nAsk.\n"),
                doc("gone.md", "# Gone\n\nBye.\n"),
            ],
            &[
                doc("guide/setup.md", GUIDE_OLD),
                doc("help/faq.md", "# FAQ\n\nAsk.\n\nMore.\n"),
                doc("new.md", "# New\n\nHello.\n"),
            ],
        );
        assert_eq!(unchanged, 0);
        let listed: Vec<(DocumentChangeKind, &str, Option<&str>)> = changes
            .iter()
            .map(|d| (d.change, d.file_path.as_str(), d.previous_path.as_deref()))
            .collect();
        assert_eq!(
            listed,
            [
                (DocumentChangeKind::Added, "new.md", None),
                (DocumentChangeKind::Removed, "gone.md", None),
                (
                    DocumentChangeKind::Moved,
                    "guide/setup.md",
                    Some("old/setup.md")
                ),
                (DocumentChangeKind::Moved, "help/faq.md", Some("faq.md")),
            ]
        );
        assert!(changes[2].sections.is_empty(), "moved as it was");
        assert_eq!(changes[3].sections[0].change, SectionChangeKind::Changed);
        assert_eq!(
            changes[0].sections[0].text.as_deref(),
            Some("# New\n\nHello.")
        );
    }

    #[test]
    fn a_renamed_section_is_one_change_and_a_rewritten_one_is_not() {
        let body = "Flask is small: its core is simple and extensible, and it makes few decisions for you.";
        let before = format!("# Design\n\n## Micro with Dependencies\n\n{body}\n\n## Threads\n\nThreads are used for contexts.\n");
        let after = format!("# Design\n\n## What does micro mean?\n\n{body}\n\n## Async\n\nCoroutines run in an event loop of their own now, one per request.\n");
        let changes = compare_sections(&before, &after);
        let kinds: Vec<(SectionChangeKind, &str, Option<&str>)> = changes
            .iter()
            .map(|c| (c.change, c.heading_path.as_str(), c.renamed_from.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    SectionChangeKind::Changed,
                    "Design > What does micro mean?",
                    Some("Design > Micro with Dependencies")
                ),
                (SectionChangeKind::Added, "Design > Async", None),
                (SectionChangeKind::Removed, "Design > Threads", None),
            ],
            "{changes:#?}"
        );
        let diff = changes[0].diff.as_deref().unwrap_or_default();
        assert!(diff.contains("[-Micro with Dependencies-]"), "{diff}");
        assert!(diff.contains("{+What does micro mean?+}"), "{diff}");
    }

    #[test]
    fn release_notes_are_told_by_name_and_folder() {
        let paths = [
            "guide.md",
            "CHANGES.rst",
            "docs/changelog.md",
            "releases/2.0.md",
            "whats-new.md",
            "CONTRIBUTING.md",
            "news-letter-design.md",
        ];
        assert_eq!(
            release_notes(paths),
            [
                "CHANGES.rst",
                "docs/changelog.md",
                "releases/2.0.md",
                "whats-new.md"
            ]
        );
    }

    #[test]
    fn a_word_diff_keeps_the_words_around_each_change() {
        let before = (1..=40)
            .map(|n| format!("w{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        let after = before.replace("w20", "twenty");
        let diff = word_diff(&before, &after);
        assert_eq!(
            diff,
            "… w12 w13 w14 w15 w16 w17 w18 w19 [-w20-] {+twenty+} w21 w22 w23 w24 w25 w26 w27 w28 …"
        );
        assert_eq!(word_diff("a b", "a c"), "a [-b-] {+c+}");
        // A rewritten phrase is one change, not a chain of word pairs.
        assert_eq!(
            word_diff(
                "To enable the debugger, run it",
                "The debugger is on when you run it"
            ),
            "[-To enable the debugger,-] {+The debugger is on when you+} run it"
        );
    }
}
