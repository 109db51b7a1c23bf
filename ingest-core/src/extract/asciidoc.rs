//! AsciiDoc (Asciidoctor, Antora) as Markdown, so that an `.adoc` page gets
//! a title, a heading path, whole code blocks and lists as a Markdown page
//! does.
//!
//! Hand-written for the subset documentation uses: `=` (and `#`) section
//! titles and two-line titles, listing (`----`), literal (`....`) and
//! Markdown-style fenced blocks with the `[source,lang]` language,
//! admonitions (`NOTE:` paragraphs and `[NOTE]` blocks) as labelled
//! paragraphs, lists, description lists, tables as text rows, block titles,
//! links and cross references as their text. Attribute entries are dropped
//! (their values replace `{name}` references), and so are comments,
//! `include::` and other block macros, and the header's author lines; the
//! header's `:description:` becomes the document's description (as front
//! matter, which the Markdown reader takes out).
//!
//! `asciidocr` (0.1, a CLI-first converter with templating dependencies)
//! was the one candidate on crates.io; a careful reader of the common
//! subset is smaller and builds for wasm32 with nothing added. One pass over
//! the lines, no recursion (nested blocks are only their delimiters, which
//! are dropped), and inline markup is scanned once left to right, so time
//! is linear whatever the input holds.

use std::collections::HashMap;

use super::rst::{escape_block_start, indent, Out};

const ADMONITIONS: &[(&str, &str)] = &[
    ("NOTE", "Note"),
    ("TIP", "Tip"),
    ("IMPORTANT", "Important"),
    ("WARNING", "Warning"),
    ("CAUTION", "Caution"),
];

/// The page as Markdown, with front matter when it has a description.
pub(super) fn to_markdown(text: &str) -> String {
    let text = super::rst::normalise_newlines(text);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut reader = Reader {
        lines,
        at: 0,
        out: Out::default(),
        attributes: HashMap::new(),
        description: None,
        lang: None,
        admonition: None,
        in_header: false,
        seen_content: false,
        in_table: false,
        header_lines: 0,
    };
    reader.run();
    let body = reader.out.finish();
    match reader.description {
        Some(d) => format!("---\ndescription: {d}\n---\n\n{body}"),
        None => body,
    }
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    at: usize,
    out: Out,
    /// Attribute values, for `{name}` references.
    attributes: HashMap<String, String>,
    description: Option<String>,
    /// Set by `[source,lang]`: the next block (or paragraph) is code in
    /// this language (`""` when it names none).
    lang: Option<String>,
    /// Set by `[NOTE]` and the like: the label of the next block.
    admonition: Option<&'static str>,
    /// Between the document title and the first blank line, where the
    /// author and revision lines are.
    in_header: bool,
    seen_content: bool,
    /// Inside a table (`|===`), whose rows are kept as text.
    in_table: bool,
    /// How many more header lines may be author or revision lines.
    header_lines: u8,
}

impl Reader<'_> {
    fn run(&mut self) {
        while self.at < self.lines.len() {
            let line = self.lines[self.at];
            self.at += 1;
            if line.trim().is_empty() {
                self.in_header = false;
                self.out.blank();
                continue;
            }
            self.line(line);
        }
    }

    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if let Some(delimiter) = verbatim_delimiter(line) {
            self.verbatim(delimiter);
            return;
        }
        if trimmed.starts_with("//") {
            return; // a comment line (`////` blocks are verbatim above)
        }
        if self.attribute_entry(line) {
            return;
        }
        if self.in_header {
            if self.header_lines > 0 {
                self.header_lines -= 1;
                return; // the author and revision lines
            }
            self.in_header = false;
        }
        if is_compound_delimiter(trimmed) {
            let table = trimmed.starts_with(['|', ',', ':', '!']);
            if table && trimmed.len() >= 4 && trimmed[1..].bytes().all(|b| b == b'=') {
                self.in_table = !self.in_table;
            }
            if let Some(label) = self.admonition.take() {
                self.out.block(&format!("**{label}:**"));
            }
            self.lang = None;
            return;
        }
        if trimmed.starts_with('[') && trimmed.ends_with(']') && indent(line) == 0 {
            self.block_attributes(&trimmed[1..trimmed.len() - 1]);
            return;
        }
        if trimmed == "+" || trimmed == "'''" || trimmed == "<<<" || is_block_macro(trimmed) {
            return;
        }
        if let Some(level) = heading_level(trimmed) {
            let title = trimmed[level..].trim().trim_end_matches(['=', '#']).trim();
            self.heading(level, title);
            return;
        }
        if let Some(level) = self.two_line_title(line) {
            self.heading(level, trimmed);
            self.at += 1;
            return;
        }
        if let Some(title) = trimmed.strip_prefix('.') {
            if title.starts_with(|c: char| !c.is_whitespace() && c != '.') {
                let title = self.inline(title);
                self.out.block(&format!("**{title}**"));
                return;
            }
        }
        let literal = self.paragraph_start() && indent(line) > 0 && list_item(trimmed).is_none();
        if self.lang.is_some() || literal && !self.in_table {
            // A paragraph of code: `[source]` on a paragraph, or a literal
            // paragraph (indented).
            let lang = self.lang.take().unwrap_or_default();
            let start = self.at - 1;
            let end = (start..self.lines.len())
                .find(|&j| self.lines[j].trim().is_empty())
                .unwrap_or(self.lines.len());
            self.out.fence(&lang, &self.lines[start..end]);
            self.at = end;
            return;
        }
        self.seen_content = true;
        let text = self.prose(trimmed);
        self.out.line(&text);
    }

    fn prose(&mut self, trimmed: &str) -> String {
        if let Some(label) = self.admonition.take() {
            return format!("**{label}:** {}", self.inline(trimmed));
        }
        for (marker, label) in ADMONITIONS {
            if let Some(text) = trimmed
                .strip_prefix(marker)
                .and_then(|t| t.strip_prefix(": "))
            {
                return format!("**{label}:** {}", self.inline(text));
            }
        }
        if self.in_table {
            let cells: Vec<String> = trimmed
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| self.inline(c))
                .collect();
            return cells.join(" | ");
        }
        if let Some(item) = list_item(trimmed) {
            return item_line(item, self.inline(item.1));
        }
        if let Some((term, definition)) = description_item(trimmed) {
            let term = self.inline(term);
            let definition = self.inline(definition);
            self.out.blank();
            return format!("**{term}:** {definition}").trim_end().to_owned();
        }
        escape_block_start(self.inline(trimmed))
    }

    /// Whether the last line written ended a block (or nothing is written).
    fn paragraph_start(&self) -> bool {
        self.at < 2 || self.lines[self.at - 2].trim().is_empty()
    }

    /// A listing, literal, passthrough or comment block, or a Markdown
    /// fence, up to its closing delimiter (or the end of the text).
    fn verbatim(&mut self, delimiter: &str) {
        let start = self.at;
        let end = (start..self.lines.len())
            .find(|&j| self.lines[j].trim_end() == delimiter)
            .unwrap_or(self.lines.len());
        self.at = (end + 1).min(self.lines.len());
        let lang = self.lang.take();
        let label = self.admonition.take();
        if delimiter.starts_with('/') || delimiter.starts_with('+') {
            return; // comments, and raw output for a backend
        }
        if let Some(label) = label {
            self.out.block(&format!("**{label}:**"));
        }
        let lang = match delimiter.strip_prefix("```") {
            Some(_) => {
                let opener = self.lines[start - 1].trim();
                opener.trim_start_matches('`').trim().to_owned()
            }
            None => lang.unwrap_or_default(),
        };
        self.out.fence(&lang, &self.lines[start..end]);
    }

    /// `:name: value` (or `:name!:`): remembered, and dropped from the text.
    fn attribute_entry(&mut self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix(':') else {
            return false;
        };
        let Some((name, value)) = rest.split_once(':') else {
            return false;
        };
        let name = name.trim_start_matches('!').trim_end_matches('!');
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid || !(value.is_empty() || value.starts_with(' ')) {
            return false;
        }
        self.header_lines = 0;
        let mut value = value.trim().to_owned();
        // A value continued on the next lines (` \` at a line's end).
        while let Some(head) = value.strip_suffix(" \\") {
            value = head.to_owned();
            match self.lines.get(self.at) {
                Some(next) => {
                    value.push(' ');
                    value.push_str(next.trim());
                    self.at += 1;
                }
                None => break,
            }
        }
        if name == "description" && self.description.is_none() {
            let shown = self.inline(&value);
            if !shown.trim().is_empty() {
                self.description = Some(shown.trim().to_owned());
            }
        }
        // Kept as written: values are not expanded within values, so a
        // chain of references cannot grow without bound.
        if self.attributes.len() < 10_000 || self.attributes.contains_key(name) {
            self.attributes.insert(name.to_owned(), value);
        }
        true
    }

    /// `[source,python]`, `[NOTE]`, `[[id]]`, `[cols="1,2"]`: what they say
    /// about the next block.
    fn block_attributes(&mut self, inner: &str) {
        if inner.starts_with('[') {
            return; // an anchor
        }
        let mut parts = inner.split(',').map(str::trim);
        let first = parts.next().unwrap_or("");
        // The style, without `#id`, `.role` or `%option` shorthands.
        let style = first.split(['#', '.', '%']).next().unwrap_or("");
        if style == "source" || style.is_empty() && inner.starts_with(',') {
            let lang = parts
                .next()
                .filter(|l| !l.contains('='))
                .map(str::to_owned)
                .or_else(|| self.attributes.get("source-language").cloned())
                .unwrap_or_default();
            self.lang = Some(lang);
        } else if style == "listing" || style == "literal" {
            self.lang = Some(String::new());
        } else if let Some((_, label)) = ADMONITIONS.iter().find(|(m, _)| *m == style) {
            self.admonition = Some(label);
        }
    }

    fn heading(&mut self, level: usize, title: &str) {
        // A title is words: code spans lose their backticks.
        let title = self.inline(title).replace('`', "");
        self.lang = None;
        self.admonition = None;
        if title.trim().is_empty() {
            return;
        }
        if level == 1 && !self.seen_content && self.out_is_empty() {
            // The document title: author and revision lines may follow.
            self.in_header = true;
            self.header_lines = 2;
            self.attributes
                .insert("doctitle".to_owned(), title.trim().to_owned());
        }
        self.seen_content = true;
        self.out
            .block(&format!("{} {}", "#".repeat(level.min(6)), title.trim()));
        self.out.blank();
    }

    fn out_is_empty(&self) -> bool {
        self.at <= 1
            || self.lines[..self.at - 1].iter().all(|l| {
                let t = l.trim();
                t.is_empty() || t.starts_with("//") || t.starts_with(':') || t.starts_with('[')
            })
    }

    /// A two-line (setext) title: text over a line of `=`, `-`, `~`, `^` or
    /// `+` as long as it (give or take one).
    fn two_line_title(&self, line: &str) -> Option<usize> {
        let under = self.lines.get(self.at)?;
        let first = *under.as_bytes().first()?;
        let level = match first {
            b'=' => 1,
            b'-' => 2,
            b'~' => 3,
            b'^' => 4,
            b'+' => 5,
            _ => return None,
        };
        let width = line.chars().count();
        let starts_word = line.starts_with(|c: char| c.is_alphanumeric());
        let same = under.bytes().all(|b| b == first);
        (starts_word && same && under.len() >= 2 && under.len().abs_diff(width) <= 1)
            .then_some(level)
    }

    /// Inline markup as Markdown (see [`inline`]), attributes substituted.
    fn inline(&self, text: &str) -> String {
        inline(&substitute(text, &self.attributes))
    }
}

/// `----`, `....`, `++++`, `////` (four or more) or a Markdown fence: the
/// line that closes the block.
fn verbatim_delimiter(line: &str) -> Option<&str> {
    let line = line.trim_end();
    if line.starts_with("```") {
        return Some("```");
    }
    let first = *line.as_bytes().first()?;
    (matches!(first, b'-' | b'.' | b'+' | b'/')
        && line.len() >= 4
        && line.bytes().all(|b| b == first))
    .then_some(line)
}

/// Delimiters of blocks whose content is read as usual: example, sidebar,
/// quote, open blocks and tables (whose rows are kept as text).
fn is_compound_delimiter(line: &str) -> bool {
    let bytes = line.as_bytes();
    if line == "--" {
        return true;
    }
    if matches!(line, "|===" | ",===" | ":===" | "!===") || line.starts_with("|====") {
        return true;
    }
    bytes.len() >= 4
        && matches!(bytes[0], b'=' | b'*' | b'_')
        && bytes.iter().all(|&b| b == bytes[0])
}

/// `include::x[]`, `image::x[]`, `toc::[]`, `ifdef::x[]` and other block
/// macros, which are no text.
fn is_block_macro(line: &str) -> bool {
    let Some((name, rest)) = line.split_once("::") else {
        return false;
    };
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !rest.starts_with(' ')
        && rest.ends_with(']')
        && rest.contains('[')
}

/// `== Title` or `## Title`: the number of markers.
fn heading_level(line: &str) -> Option<usize> {
    let first = *line.as_bytes().first()?;
    if first != b'=' && first != b'#' {
        return None;
    }
    let level = line.bytes().take_while(|&b| b == first).count();
    let rest = &line[level..];
    (level <= 6 && rest.starts_with(' ') && !rest.trim().is_empty()).then_some(level)
}

/// A list item: its marker kind (`'*'` for bullets, `'.'` for numbers) and
/// its text.
fn list_item(line: &str) -> Option<(u8, &str)> {
    let first = *line.as_bytes().first()?;
    if matches!(first, b'*' | b'-' | b'.') {
        let run = line.bytes().take_while(|&b| b == first).count();
        if first == b'-' && run > 1 {
            return None;
        }
        let text = line[run..].strip_prefix(' ')?;
        let kind = if first == b'.' { b'.' } else { b'*' };
        return Some((kind, text.trim_start()));
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let text = line[digits..].strip_prefix(". ")?;
        return Some((b'.', text.trim_start()));
    }
    None
}

fn item_line((kind, _): (u8, &str), text: String) -> String {
    if kind == b'.' {
        format!("1. {text}")
    } else {
        format!("- {text}")
    }
}

/// `term:: definition` (and `:::`, `;;`): the term and definition.
fn description_item(line: &str) -> Option<(&str, &str)> {
    for marker in [":::: ", "::: ", ":: ", ";; "] {
        if let Some((term, def)) = line.split_once(marker) {
            if !term.trim().is_empty() && !term.contains("://") {
                return Some((term.trim(), def.trim()));
            }
        }
    }
    for marker in ["::::", ":::", "::", ";;"] {
        if let Some(term) = line.strip_suffix(marker) {
            if !term.trim().is_empty() && !term.ends_with(':') {
                return Some((term.trim(), ""));
            }
        }
    }
    None
}

/// Attributes Asciidoctor defines for characters.
fn builtin_attribute(name: &str) -> Option<&'static str> {
    Some(match name {
        "nbsp" | "sp" => " ",
        "empty" | "zwsp" | "blank" => "",
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "startsb" => "[",
        "endsb" => "]",
        "vbar" => "|",
        "caret" => "^",
        "asterisk" => "*",
        "tilde" => "~",
        "apos" => "'",
        "quot" => "\"",
        "backslash" => "\\",
        "backtick" => "`",
        "plus" => "+",
        "deg" => "°",
        "two-colons" => "::",
        "two-semicolons" => ";;",
        "cpp" => "C++",
        _ => return None,
    })
}

/// Inline macros whose target is a URL: `https://x[text]`, `link:x[text]`.
const URL_PREFIXES: &[&str] = &["https://", "http://", "ftp://", "mailto:", "link:"];

/// Inline macros shown as their bracketed text (or nothing).
const MACROS: &[&str] = &[
    "xref:",
    "image:",
    "kbd:",
    "btn:",
    "menu:",
    "footnote:",
    "footnoteref:",
    "pass:",
    "icon:",
    "anchor:",
    "indexterm:",
    "indexterm2:",
    "stem:",
    "latexmath:",
    "asciimath:",
];

/// `{name}` references replaced by the attribute's value, where it has
/// one (before macros are read, as Asciidoctor does: `{url}[text]`).
fn substitute(text: &str, attributes: &HashMap<String, String>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    // What substitution may add, so that many references to a long value
    // cannot make the text grow by more than a bounded factor.
    let mut budget = 4 * text.len() + 4096;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\' && bytes.get(at + 1) == Some(&b'{') {
            // An escaped reference, shown as written without the backslash.
            out.push_str(&text[copied..at]);
            at += 2;
            copied = at - 1;
            continue;
        }
        if bytes[at] == b'{' {
            // Names are short; a bound keeps a line of braces linear.
            let end = bytes[at + 1..]
                .iter()
                .take(64)
                .position(|&c| c == b'}')
                .map(|p| at + 1 + p);
            if let Some(end) = end {
                let name = &text[at + 1..end];
                let value = attributes
                    .get(name)
                    .map(String::as_str)
                    .or_else(|| builtin_attribute(name));
                if let Some(value) = value.filter(|v| v.len() <= budget) {
                    budget -= value.len();
                    out.push_str(&text[copied..at]);
                    out.push_str(value);
                    at = end + 1;
                    copied = at;
                    continue;
                }
            }
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Inline markup as Markdown: links as links, cross references and other
/// macros as their text. Monospace,
/// emphasis and strong are close enough as they are. One pass: each search
/// for a closing mark that finds one moves past it, and one that finds none
/// is not repeated.
fn inline(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    let mut brackets_left = true;
    let mut xrefs_left = true;
    let mut anchors_left = true;
    while at < bytes.len() {
        let b = bytes[at];
        let word_start = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        if b == b'<' && bytes.get(at + 1) == Some(&b'<') && xrefs_left {
            match text[at + 2..].find(">>") {
                Some(close) => {
                    let close = at + 2 + close;
                    let inner = &text[at + 2..close];
                    let shown = inner.split_once(',').map_or(inner, |(_, t)| t.trim());
                    out.push_str(&text[copied..at]);
                    out.push_str(shown);
                    at = close + 2;
                    copied = at;
                    continue;
                }
                None => xrefs_left = false,
            }
        } else if b == b'[' && bytes.get(at + 1) == Some(&b'[') && anchors_left {
            match text[at + 2..].find("]]") {
                Some(close) => {
                    out.push_str(&text[copied..at]);
                    at = at + 2 + close + 2;
                    copied = at;
                    continue;
                }
                None => anchors_left = false,
            }
        } else if word_start && b.is_ascii_alphabetic() && brackets_left {
            let rest = &text[at..];
            let url = URL_PREFIXES.iter().find(|p| rest.starts_with(*p));
            let name = MACROS.iter().find(|p| rest.starts_with(*p));
            if let Some(prefix) = url.or(name) {
                // The target runs to `[` or whitespace.
                let target_end = rest
                    .find(|c: char| c == '[' || c.is_whitespace())
                    .unwrap_or(rest.len());
                if rest[target_end..].starts_with('[') {
                    let open = at + target_end;
                    match text[open + 1..].find(']') {
                        Some(close) => {
                            let close = open + 1 + close;
                            let target = &text[at..open];
                            let inside = &text[open + 1..close];
                            out.push_str(&text[copied..at]);
                            out.push_str(&macro_text(prefix, target, inside));
                            at = close + 1;
                            copied = at;
                            continue;
                        }
                        None => brackets_left = false,
                    }
                }
                // A bare URL (or a macro with no text): as it is.
                at += target_end.max(1);
                continue;
            }
        }
        at += 1;
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// What a reader sees of an inline macro: `target` starts with `prefix`.
fn macro_text(prefix: &str, target: &str, inside: &str) -> String {
    // Link text may carry attributes: `text,window=_blank`, `text^`.
    let (first, rest) = inside.split_once(',').unwrap_or((inside, ""));
    let named = |part: &str| {
        part.split_once('=').is_some_and(|(key, _)| {
            let key = key.trim();
            !key.is_empty()
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
    };
    let text = if named(first) {
        ""
    } else if rest.contains('=') {
        first
    } else {
        inside
    };
    let text = text.trim().trim_end_matches('^').trim_matches('"');
    let name = &target[prefix.len()..];
    match prefix {
        "link:" | "https://" | "http://" | "ftp://" | "mailto:" => {
            let url = if prefix == "link:" { name } else { target };
            if text.is_empty() {
                url.to_owned()
            } else {
                format!("[{text}]({url})")
            }
        }
        "xref:" => {
            if text.is_empty() {
                // `component:module:page.adoc#part`: the page's name.
                let page = name.split('#').next().unwrap_or(name);
                let page = page.rsplit([':', '/']).next().unwrap_or(page);
                page.trim_end_matches(".adoc").replace(['-', '_'], " ")
            } else {
                text.to_owned()
            }
        }
        "kbd:" | "btn:" | "stem:" | "latexmath:" | "asciimath:" => {
            format!("`{}`", text.replace('`', ""))
        }
        "menu:" => {
            let items = text.replace('>', " > ");
            let items = items.split_whitespace().collect::<Vec<_>>().join(" ");
            if items.is_empty() {
                name.to_owned()
            } else {
                format!("{name} > {items}")
            }
        }
        "footnote:" | "footnoteref:" => {
            if text.is_empty() {
                String::new()
            } else {
                format!(" ({text})")
            }
        }
        "image:" | "pass:" => text.to_owned(),
        _ => String::new(), // icons, anchors, index terms
    }
}

#[cfg(test)]
mod tests {
    use super::super::rst::tests::{chunk_holding, fences_are_closed};
    use super::*;
    use proptest::prelude::*;

    const ASCIIDOCTOR_PAGE: &str = r#"= Getting Started with Widgets
Jane Doe <jane@example.org>
v1.2, 2024-01-01
:description: How to install and configure widgets.
:toc: left
:source-language: java
:project: Widgets
// A comment about the page.

This guide shows {project} in action (not \{project}); see link:https://example.org/docs[the docs],
https://example.org[Example^] and <<config,the configuration>>.

== Installation

NOTE: You need Java 17 or later.

[source,xml]
----
<dependency>
  <artifactId>widgets</artifactId>
</dependency>
----

.Running the demo
[source]
----
Widgets.run();
----

=== Configuration

[[config]]
[quote]
____
Configuration is code.
____

[WARNING]
====
Never commit secrets.
Keep them in the environment.
====

* first
** nested
* second with `code`

. one
. two

timeout:: How long to wait.

////
A block comment.
////

include::partials/footer.adoc[]

....
literal text
....

|===
|Name |Default

|timeout
|30
|===

ifdef::env-github[]
TIP: Rendered on GitHub.
endif::[]
"#;

    #[test]
    fn an_asciidoctor_page_becomes_markdown() {
        let md = to_markdown(ASCIIDOCTOR_PAGE);
        let doc = crate::extract::text::markdown(md.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Getting Started with Widgets"));
        assert_eq!(
            doc.description.as_deref(),
            Some("How to install and configure widgets.")
        );
        let md = doc.text;
        assert!(md.starts_with("# Getting Started with Widgets\n\n"), "{md}");
        assert!(md.contains("\n## Installation\n"), "{md}");
        assert!(md.contains("\n### Configuration\n"), "{md}");
        assert!(
            md.contains("This guide shows Widgets in action (not {project});"),
            "{md}"
        );
        assert!(md.contains("[the docs](https://example.org/docs)"), "{md}");
        assert!(md.contains("[Example](https://example.org)"), "{md}");
        assert!(md.contains("and the configuration."), "{md}");
        assert!(md.contains("**Note:** You need Java 17 or later."), "{md}");
        assert!(
            md.contains(
                "```xml\n<dependency>\n  <artifactId>widgets</artifactId>\n</dependency>\n```"
            ),
            "{md}"
        );
        assert!(
            md.contains("**Running the demo**\n\n```java\nWidgets.run();\n```"),
            "{md}"
        );
        assert!(
            md.contains("**Warning:**\nNever commit secrets.\nKeep them in the environment."),
            "{md}"
        );
        assert!(
            md.contains("- first\n- nested\n- second with `code`\n"),
            "{md}"
        );
        assert!(md.contains("1. one\n1. two\n"), "{md}");
        assert!(md.contains("**timeout:** How long to wait."), "{md}");
        assert!(md.contains("```\nliteral text\n```"), "{md}");
        assert!(md.contains("Name | Default"), "{md}");
        assert!(md.contains("Configuration is code."), "{md}");
        assert!(md.contains("timeout\n30"), "{md}");
        assert!(md.contains("**Tip:** Rendered on GitHub."), "{md}");
        for noise in [
            "Jane",
            "v1.2",
            ":toc:",
            "comment",
            "include::",
            "footer",
            "[[",
            "[source",
            "----",
            "====",
            "|===",
            "ifdef",
            "endif",
            "{project}\n",
            "<<",
            "link:",
        ] {
            assert!(!md.contains(noise), "{noise:?} left in:\n{md}");
        }
    }

    #[test]
    fn asciidoc_files_are_extracted_as_markdown() {
        let limits = crate::extract::ArchiveLimits::default();
        for name in ["guide/widgets.adoc", "guide/widgets.ADOC"] {
            let extraction = crate::extract::extract(name, ASCIIDOCTOR_PAGE.as_bytes(), &limits);
            let doc = &extraction.unwrap().documents[0];
            assert_eq!(doc.title.as_deref(), Some("Getting Started with Widgets"));
            assert_eq!(
                doc.description.as_deref(),
                Some("How to install and configure widgets.")
            );
            assert!(!doc.text.starts_with("---"), "{}", doc.text);
            let code = chunk_holding(doc, "Widgets.run()");
            assert_eq!(
                code.heading_path_display(),
                "Getting Started with Widgets > Installation"
            );
        }
    }

    #[test]
    fn example_blocks_are_not_tables_and_header_text_is_kept() {
        let md = to_markdown(
            "= Title\n:toc:\nIntro right under the header.\n\n====\n|a |b\n====\n\n* item\n",
        );
        assert!(md.contains("Intro right under the header."), "{md}");
        assert!(md.contains("|a |b"), "{md}");
        assert!(md.contains("- item"), "{md}");
    }

    #[test]
    fn markdown_style_headings_and_fences_are_kept() {
        let md = to_markdown("# Title\n\n## Part\n\n```rust\nfn main() {}\n```\n\nText.\n");
        assert_eq!(
            md,
            "# Title\n\n## Part\n\n```rust\nfn main() {}\n```\n\nText.\n"
        );
    }

    #[test]
    fn two_line_titles_and_literal_paragraphs() {
        let md = to_markdown("Document Title\n==============\n\nSection\n-------\n\n  $ make\n  $ make install\n\nxref:docs::guides/other-page.adoc#top[] and kbd:[Ctrl+C].\nimage:badge.svg[link=\"https://ci.example.org\",title=\"CI\"] image:logo.png[The logo,width=20]\n");
        assert!(
            md.starts_with("# Document Title\n\n## Section\n\n```\n$ make\n$ make install\n```"),
            "{md}"
        );
        assert!(md.contains("other page and `Ctrl+C`.\n The logo"), "{md}");
    }

    #[test]
    fn unclosed_blocks_and_hostile_lines_stay_linear() {
        let line = "<<".repeat(20_000)
            + &"[[".repeat(20_000)
            + &"link:x[".repeat(20_000)
            + &"{".repeat(20_000);
        let started = std::time::Instant::now();
        let _ = to_markdown(&format!("----\n{line}\n"));
        let _ = to_markdown(&format!("{line}\n"));
        let _ = to_markdown(&"====\n".repeat(50_000));
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn attribute_references_cannot_blow_up() {
        let long = "x".repeat(100_000);
        let text = format!(
            ":a: {long}\n:b: {{a}}{{a}}\n:c: {{b}}{{b}}\n\n{}\n",
            "{c}{a}".repeat(10_000)
        );
        let md = to_markdown(&text);
        assert!(md.len() < 10 * text.len(), "{}", md.len());
    }

    proptest! {
        #[test]
        fn any_text_converts_without_panicking(
            lines in proptest::collection::vec(
                prop_oneof![
                    "[ \t]{0,3}(=+ |#+ |\\[|\\.|\\* |:[a-z]{1,5}:|NOTE: |//|\\||<<|link:|https://|\\{)?[^\n]{0,40}",
                    "[=\\-.+/*_|`]{1,8}",
                    ".{0,30}",
                ],
                0..40,
            )
        ) {
            let text = lines.join("\n");
            let md = to_markdown(&text);
            prop_assert!(fences_are_closed(&md), "{}", md);
        }

        #[test]
        fn any_bytes_convert_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = to_markdown(&String::from_utf8_lossy(&bytes));
        }
    }
}
