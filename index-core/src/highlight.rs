//! Query terms in result text: which words to mark, and the snippet that
//! shows the most of them.
//!
//! Matching is deliberately simple and predictable: a query term marks any
//! word that starts with it, ignoring ASCII case, so `commit` marks `commits`
//! and `Committing`. Very common English words are not marked.

/// Words too common to be worth marking.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "the", "this", "to", "what", "when", "where", "which",
    "who", "why", "with",
];

/// The distinct, lower-cased terms of a query worth marking.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words(query) {
        let term = word.to_lowercase();
        if term.chars().count() < 2 || STOPWORDS.contains(&term.as_str()) {
            continue;
        }
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// Words: maximal runs of alphanumerics and `_`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Byte ranges of the words in `text` that start with one of `terms`,
/// in order and not overlapping.
pub fn ranges(text: &str, terms: &[String]) -> Vec<(usize, usize)> {
    if terms.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut offset = 0;
    for word in text.split_inclusive(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let body = word.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if !body.is_empty() && terms.iter().any(|t| starts_with_ignore_case(body, t)) {
            out.push((offset, offset + body.len()));
        }
        offset += word.len();
    }
    out
}

fn starts_with_ignore_case(word: &str, term: &str) -> bool {
    let mut w = word.chars().flat_map(char::to_lowercase);
    term.chars().all(|t| w.next() == Some(t))
}

/// Characters of text shown around the query terms in a snippet.
pub const SNIPPET_CHARS: usize = 280;

/// A window of about `max_chars` characters of `text` around the densest
/// run of query terms, HTML-escaped, with the terms wrapped in `<mark>`.
/// Ellipses show where text was cut.
pub fn snippet(text: &str, terms: &[String], max_chars: usize) -> String {
    let text = text.trim();
    let marks = ranges(text, terms);
    let (start, end) = window(text, &marks, max_chars);
    let mut out = String::with_capacity(end - start + 32);
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for &(s, e) in marks.iter().filter(|&&(s, e)| s >= start && e <= end) {
        escape_into(&mut out, &text[at..s]);
        out.push_str("<mark>");
        escape_into(&mut out, &text[s..e]);
        out.push_str("</mark>");
        at = e;
    }
    escape_into(&mut out, &text[at..end]);
    if end < text.len() {
        out.push('…');
    }
    out
}

/// The same window as [`snippet`] as plain text, for terminals: no marks,
/// nothing escaped.
pub fn plain_snippet(text: &str, terms: &[String], max_chars: usize) -> String {
    let text = text.trim();
    let (start, end) = window(text, &ranges(text, terms), max_chars);
    let mut out = String::with_capacity(end - start + 8);
    if start > 0 {
        out.push('…');
    }
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push('…');
    }
    out
}

/// The byte window of `text` (trimmed) that [`snippet`] shows for `terms`.
pub(crate) fn window_of(text: &str, terms: &[String], max_chars: usize) -> (usize, usize) {
    window(text, &ranges(text, terms), max_chars)
}

/// The byte window to show: the `max_chars` span holding the most marks,
/// started a little before the first of them, snapped to word boundaries.
fn window(text: &str, marks: &[(usize, usize)], max_chars: usize) -> (usize, usize) {
    let byte_len = |from: usize| {
        text[from..]
            .char_indices()
            .nth(max_chars)
            .map_or(text.len(), |(i, _)| from + i)
    };
    if text.chars().count() <= max_chars {
        return (0, text.len());
    }
    // The mark that begins the densest window.
    let mut best = (0usize, None::<usize>);
    for (i, &(s, _)) in marks.iter().enumerate() {
        let end = byte_len(s);
        let count = marks[i..].iter().take_while(|&&(_, e)| e <= end).count();
        if count > best.0 {
            best = (count, Some(s));
        }
    }
    let Some(first) = best.1 else {
        return (0, snap_back(text, 0, byte_len(0)));
    };
    // Lead in with some context before the first mark.
    let lead = max_chars / 5;
    let mut start = match lead {
        0 => first,
        _ => text[..first]
            .char_indices()
            .rev()
            .nth(lead - 1)
            .map_or(0, |(i, _)| i),
    };
    if start > 0 {
        start = text[start..first]
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
            .map_or(start, |(i, c)| start + i + c.len_utf8());
    }
    let end = byte_len(start);
    (
        start,
        if end < text.len() {
            snap_back(text, start, end)
        } else {
            end
        },
    )
}

/// Moves a cut back to the last whitespace before it (but after `start`),
/// if that is not too far.
fn snap_back(text: &str, start: usize, end: usize) -> usize {
    match text[start..end].rfind(char::is_whitespace) {
        Some(i) if i > 0 && end - (start + i) < 30 => start + i,
        _ => end,
    }
}

/// Appends `text` to `out` with HTML's special characters escaped.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_snippet_is_the_html_one_unmarked_and_unescaped() {
        let text = "Intro. ".repeat(60)
            + "Use <b>git rebase</b> & \"friends\" it's fine. "
            + &"Tail. ".repeat(60);
        let terms = query_terms("rebase friends");
        let html = snippet(&text, &terms, 120);
        let plain = plain_snippet(&text, &terms, 120);
        let unescaped = html
            .replace("<mark>", "")
            .replace("</mark>", "")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        assert_eq!(plain, unescaped);
        assert!(plain.starts_with('…') && plain.ends_with('…'), "{plain}");
        assert!(plain.contains("<b>git rebase</b> & \"friends\""), "{plain}");
    }

    #[test]
    fn terms_drop_stopwords_and_repeats() {
        assert_eq!(
            query_terms("How do I rebase a branch onto Main? rebase!"),
            vec!["rebase", "branch", "onto", "main"]
        );
        assert!(query_terms("a the ?").is_empty());
    }

    #[test]
    fn marks_words_starting_with_a_term() {
        let text = "Commits, committing and recommit.";
        let r = ranges(text, &query_terms("commit"));
        let marked: Vec<&str> = r.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(marked, vec!["Commits", "committing"]);
    }

    #[test]
    fn snippet_centres_on_the_terms_and_escapes_html() {
        let filler = "lorem ipsum dolor sit amet ".repeat(40);
        let text = format!("{filler}Use <git rebase> to replay commits onto a branch. {filler}");
        let s = snippet(&text, &query_terms("rebase branch"), 120);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("&lt;git <mark>rebase</mark>&gt;"), "{s}");
        assert!(s.contains("<mark>branch</mark>"), "{s}");
        assert!(s.chars().count() < 200);
    }

    #[test]
    fn short_text_is_whole_and_unmarked_text_starts_at_the_top() {
        assert_eq!(snippet("tiny & small", &[], 100), "tiny &amp; small");
        let long = "word ".repeat(100);
        let s = snippet(&long, &query_terms("absent"), 50);
        assert!(s.starts_with("word") && s.ends_with('…'));
    }

    #[test]
    fn wide_whitespace_before_the_window_is_skipped_whole() {
        let text = "x\u{2009}".repeat(200) + "the rebase step";
        let s = snippet(&text, &query_terms("rebase"), 60);
        assert!(s.contains("<mark>rebase</mark>"));
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "日本語のテキスト ".repeat(50) + "検索 rebase " + &"ü ".repeat(80);
        let s = snippet(&text, &query_terms("rebase"), 40);
        assert!(s.contains("<mark>rebase</mark>"));
    }
}
