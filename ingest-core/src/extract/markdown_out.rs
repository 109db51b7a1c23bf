//! Writing Markdown: the pieces every reader that converts to Markdown
//! (MDX, reStructuredText, AsciiDoc, Word, notebooks) needs written the
//! same safe way.

/// `marker` text `marker`, with the markers inside any space at its ends
/// (`** a**` is no emphasis); nothing for no text.
pub(super) fn wrap(out: &mut String, marker: &str, text: &str) {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        out.push_str(text);
        return;
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    out.push_str(lead);
    out.push_str(marker);
    out.push_str(trimmed);
    out.push_str(marker);
    out.push_str(trail);
}

/// Inline code with a fence longer than any run of backticks in it.
pub(super) fn code_span(code: &str) -> String {
    let ticks = "`".repeat(longest_run(code, '`') + 1);
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{code}{pad}{ticks}")
}

/// A fenced code block that no line of the code can close.
pub(super) fn fence(lang: &str, code: &str) -> String {
    let ticks = "`".repeat((longest_run(code, '`') + 1).max(3));
    format!("{ticks}{lang}\n{code}\n{ticks}")
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// `text` with its runs of white space, line breaks included, made one
/// space each.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A GFM table; the first row is the header. `None` when it has no cells.
pub(super) fn table_markdown(rows: &[Vec<String>]) -> Option<String> {
    let width = rows.iter().map(Vec::len).max().filter(|&w| w > 0)?;
    let line = |row: &[String]| {
        let mut cells: Vec<&str> = row.iter().map(String::as_str).collect();
        cells.resize(width, "");
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&rows[0])];
    out.push(format!("|{}", " --- |".repeat(width)));
    out.extend(rows[1..].iter().map(|row| line(row)));
    Some(out.join("\n"))
}
