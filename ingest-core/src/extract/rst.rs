//! reStructuredText (Sphinx, docutils) as Markdown, so that a `.rst` page
//! gets a title, a heading path, whole code blocks and lists as a Markdown
//! page does.
//!
//! Hand-written for the subset documentation uses: section titles by their
//! adornment (levels in the order styles first appear, as docutils does),
//! literal blocks (`::`), code directives, doctest blocks, admonitions and
//! version notes as labelled paragraphs, API descriptions (`.. function::`)
//! as their signature and text, roles and hyperlinks as their text, bullet,
//! enumerated and field lists as text. Directives that are no prose
//! (`toctree`, `image`, `automodule`, targets, substitutions, comments) are
//! dropped with their bodies.
//!
//! No crate on crates.io does this for a wasm32 build: `rst_parser` is a
//! partial pest grammar that refuses much of what Sphinx writes. The reader
//! here is one pass over the lines with no recursion: nesting is only
//! indentation, which it strips. Each line is looked at a bounded number of
//! times, and inline markup is scanned once left to right, so time is linear
//! in the input whatever it holds.

use super::markdown_out::code_span;

/// Admonition directives and the label each is shown with.
const ADMONITIONS: &[(&str, &str)] = &[
    ("note", "Note"),
    ("warning", "Warning"),
    ("tip", "Tip"),
    ("important", "Important"),
    ("caution", "Caution"),
    ("attention", "Attention"),
    ("danger", "Danger"),
    ("error", "Error"),
    ("hint", "Hint"),
    ("seealso", "See also"),
    ("todo", "To do"),
];

/// Version notes and the words Sphinx shows before the version.
const VERSION_NOTES: &[(&str, &str)] = &[
    ("versionadded", "New in version"),
    ("versionchanged", "Changed in version"),
    ("deprecated", "Deprecated since version"),
    ("versionremoved", "Removed in version"),
];

/// Directives whose body is code, and the language when they name none.
const CODE: &[(&str, &str)] = &[
    ("code-block", ""),
    ("code", ""),
    ("sourcecode", ""),
    ("doctest", "pycon"),
    ("testcode", "python"),
    ("testoutput", ""),
    ("ipython", "python"),
    ("jupyter-execute", "python"),
    ("parsed-literal", ""),
    ("productionlist", ""),
    ("math", "math"),
];

/// Directives dropped with their bodies: navigation, images, generated API
/// pages and page settings carry no prose of the page's own.
const DROPPED: &[&str] = &[
    "toctree",
    "image",
    "contents",
    "index",
    "include",
    "literalinclude",
    "raw",
    "meta",
    "sectionauthor",
    "moduleauthor",
    "codeauthor",
    "currentmodule",
    "module",
    "default-role",
    "default-domain",
    "role",
    "tabularcolumns",
    "target-notes",
    "footbibliography",
    "bibliography",
    "graphviz",
    "digraph",
    "graph",
    "uml",
    "mermaid",
    "plot",
    "inheritance-diagram",
    "program",
    "cssclass",
    "rst-class",
    "class",
    "title",
    "sectnum",
    "header",
    "footer",
    "todolist",
    "spelling:word-list",
    "testsetup",
    "testcleanup",
    "only-if",
];

/// Object descriptions (`.. function:: name(args)`): the signature is kept
/// as code, the body as text.
const DESCRIPTIONS: &[&str] = &[
    "function",
    "method",
    "staticmethod",
    "classmethod",
    "attribute",
    "property",
    "data",
    "exception",
    "decorator",
    "decoratormethod",
    "describe",
    "object",
    "envvar",
    "option",
    "cmdoption",
    "confval",
    "setting",
    "event",
    "type",
    "macro",
    "member",
    "var",
    "struct",
    "enum",
    "enumerator",
    "concept",
];

/// Directives whose argument is a title for the prose in their body.
const TITLED: &[&str] = &[
    "topic",
    "sidebar",
    "table",
    "list-table",
    "csv-table",
    "tab",
    "group-tab",
    "code-tab",
    "rubric",
    "centered",
    "dropdown",
    "card",
];

/// The page as Markdown.
pub(crate) fn to_markdown(text: &str) -> String {
    let text = normalise_newlines(text);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut reader = Reader {
        lines,
        at: 0,
        out: Out::default(),
        styles: Vec::new(),
        highlight: String::new(),
    };
    reader.run();
    reader.out.finish()
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    at: usize,
    out: Out,
    /// Adornment styles (character, overlined) in the order they appeared:
    /// the first is level 1.
    styles: Vec<(u8, bool)>,
    /// The language `.. highlight::` set for `::` literal blocks.
    highlight: String,
}

impl Reader<'_> {
    fn run(&mut self) {
        while self.at < self.lines.len() {
            let line = self.lines[self.at];
            if line.trim().is_empty() {
                self.out.blank();
                self.at += 1;
                continue;
            }
            if self.section_title() {
                continue;
            }
            let ind = indent(line);
            let rest = &line[ind..];
            if rest == ".." || rest.starts_with(".. ") {
                self.explicit_markup(ind, rest[2..].trim());
            } else if rest.starts_with("__ ") {
                // An anonymous hyperlink target.
                self.at = block_end(&self.lines, self.at + 1, ind);
            } else if rest == ">>>" || rest.starts_with(">>> ") {
                let end = (self.at..self.lines.len())
                    .find(|&j| self.lines[j].trim().is_empty())
                    .unwrap_or(self.lines.len());
                self.out.fence("pycon", &self.lines[self.at..end]);
                self.at = end;
            } else if is_decoration(rest) {
                self.at += 1;
            } else {
                self.prose(ind, rest);
            }
        }
    }

    /// A section title at `self.at`, underlined or over- and underlined.
    fn section_title(&mut self) -> bool {
        let lines = &self.lines;
        let at = self.at;
        let line = lines[at];
        if let Some(ch) = adornment(line) {
            let (Some(title), Some(under)) = (lines.get(at + 1), lines.get(at + 2)) else {
                return false;
            };
            let title = title.trim();
            if title.is_empty() || adornment(under) != Some(ch) || adornment(title).is_some() {
                return false;
            }
            self.heading((ch, true), title);
            self.at += 3;
            return true;
        }
        let Some(under) = lines.get(at + 1) else {
            return false;
        };
        let after_blank = at == 0 || lines[at - 1].trim().is_empty();
        let Some(ch) = adornment(under) else {
            return false;
        };
        let width = line.chars().count();
        if !after_blank || indent(line) > 0 || (under.len() < width && under.len() < 4) {
            return false;
        }
        if line.starts_with("..") || *under == "::" {
            return false;
        }
        self.heading((ch, false), line.trim());
        self.at += 2;
        true
    }

    fn heading(&mut self, style: (u8, bool), title: &str) {
        let level = match self.styles.iter().position(|s| *s == style) {
            Some(i) => i + 1,
            None => {
                self.styles.push(style);
                self.styles.len()
            }
        };
        // A title is words: code spans lose their backticks.
        let text = inline(title).replace('`', "");
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let hashes = "#".repeat(level.min(6));
        self.out.block(&format!("{hashes} {text}"));
        self.out.blank();
    }

    /// A line starting with `..`: a directive, target, substitution,
    /// footnote or comment. `body` is what follows the `..`.
    fn explicit_markup(&mut self, ind: usize, body: &str) {
        let lines = &self.lines;
        let (token, arg) = body
            .split_once(char::is_whitespace)
            .map_or((body, ""), |(t, a)| (t, a.trim()));
        if body.is_empty() {
            // An empty comment ends at a blank line; else its body follows.
            let next_blank = lines.get(self.at + 1).is_none_or(|l| l.trim().is_empty());
            self.at = if next_blank {
                self.at + 1
            } else {
                block_end(lines, self.at + 1, ind)
            };
        } else if token.starts_with('[') && token.ends_with(']') {
            // A footnote or citation: its text is prose.
            self.at += 1;
            self.out.block(&format!("{token} {}", inline(arg)));
        } else if let Some(name) = token.strip_suffix("::").filter(|n| is_directive_name(n)) {
            self.directive(ind, &name.to_ascii_lowercase(), arg);
        } else {
            // Targets (`.. _label:`), substitutions (`.. |x| replace::`)
            // and comments, with their bodies.
            self.at = block_end(lines, self.at + 1, ind);
        }
    }

    fn directive(&mut self, ind: usize, name: &str, arg: &str) {
        let lines = &self.lines;
        // Options: a field list right under the directive line.
        let mut body = self.at + 1;
        while lines.get(body).is_some_and(|l| {
            let t = l.trim_start();
            !t.is_empty() && indent(l) > ind && t.starts_with(':')
        }) {
            body += 1;
        }
        let short = name.rsplit(':').next().unwrap_or(name);
        let domain = name.contains(':');
        if let Some((_, default)) = CODE.iter().find(|(n, _)| *n == name) {
            let lang = arg.split_whitespace().next().unwrap_or(default);
            let end = block_end(lines, body, ind);
            self.out.fence(lang, &lines[body..end]);
            self.at = end;
        } else if name == "highlight" {
            self.highlight = arg.split_whitespace().next().unwrap_or("").to_owned();
            self.at = block_end(lines, body, ind);
        } else if DROPPED.contains(&name)
            || DROPPED.contains(&short) && domain
            || short.starts_with("auto")
        {
            self.at = block_end(lines, body, ind);
        } else if let Some((_, label)) = ADMONITIONS.iter().find(|(n, _)| *n == name) {
            self.label(&format!("**{label}:**"), arg, body, ind);
        } else if name == "admonition" {
            let title = if arg.is_empty() { "Note" } else { arg };
            self.label(&format!("**{}:**", inline(title)), "", body, ind);
        } else if let Some((_, words)) = VERSION_NOTES.iter().find(|(n, _)| *n == name) {
            let (version, says) = arg
                .split_once(char::is_whitespace)
                .map_or((arg, ""), |(v, s)| (v, s.trim()));
            self.label(&format!("*{words} {version}:*"), says, body, ind);
        } else if TITLED.contains(&name) {
            if arg.is_empty() {
                self.at = body;
            } else {
                self.label(&format!("**{}**", inline(arg)), "", body, ind);
            }
        } else if DESCRIPTIONS.contains(&short) || domain {
            if arg.is_empty() {
                self.at = body;
            } else {
                self.label(&code_span(arg), "", body, ind);
            }
        } else {
            // Containers (`only`, `glossary`, `figure`, `tabs`, unknown
            // extensions): their body is read as prose, their argument
            // (a file name, an expression) is not.
            self.at = body;
        }
    }

    /// Writes `label` (and `text` after it) as the start of a paragraph
    /// that the directive's body continues.
    fn label(&mut self, label: &str, text: &str, body: usize, ind: usize) {
        let lines = &self.lines;
        let mut line = label.to_owned();
        if !text.is_empty() {
            line.push(' ');
            line.push_str(&inline(text));
        }
        self.out.block(&line);
        // The body's first paragraph joins the label's.
        let first = (body..lines.len()).find(|&j| !lines[j].trim().is_empty());
        self.at = match first {
            Some(j) if indent(lines[j]) > ind => j,
            _ => body,
        };
    }

    /// A line of a paragraph, list item or field.
    /// A paragraph or list item, with the lines that continue it (read
    /// together, so that markup split over lines is understood), or a
    /// field or definition term, which are lines of their own.
    fn prose(&mut self, ind: usize, rest: &str) {
        self.at += 1;
        let mut joined = rest.to_owned();
        if field(rest).is_none() && !rest.starts_with("| ") && !self.is_term(ind) {
            while !joined.ends_with("::") {
                let Some(next) = self.lines.get(self.at) else {
                    break;
                };
                let next_text = next.trim_start();
                if next_text.is_empty() || indent(next) < ind || starts_block(next_text) {
                    break;
                }
                joined.push('\n');
                joined.push_str(next_text);
                self.at += 1;
            }
        }
        let (text, literal) = match joined.strip_suffix("::") {
            Some(before) if before.is_empty() || before.ends_with(char::is_whitespace) => {
                (before.trim_end(), true)
            }
            Some(_) => (&joined[..joined.len() - 1], true),
            None => (joined.as_str(), false),
        };
        if let Some(converted) = self.prose_line(ind, text) {
            for (i, line) in converted.lines().enumerate() {
                if i == 0 {
                    self.out.line(line);
                } else {
                    self.out.line(&escape_block_start(line.to_owned()));
                }
            }
        }
        if literal {
            self.literal_block(ind);
        }
    }

    /// Whether the line just read (at `self.at - 1`) is a definition
    /// list's term: a paragraph's first line with the definition indented
    /// under it.
    fn is_term(&self, ind: usize) -> bool {
        let starts_paragraph = self.at < 2 || self.lines[self.at - 2].trim().is_empty();
        let defined = self
            .lines
            .get(self.at)
            .is_some_and(|l| !l.trim().is_empty() && indent(l) > ind);
        starts_paragraph && defined
    }

    fn prose_line(&self, ind: usize, text: &str) -> Option<String> {
        if text.is_empty() {
            return None;
        }
        if let Some(item) = bullet(text) {
            return Some(format!("- {}", inline(item)));
        }
        if let Some((number, item)) = enumerated(text) {
            return Some(format!("{number}. {}", inline(item)));
        }
        if let Some((name, value)) = field(text) {
            // Page metadata (`:orphan:`, `:tocdepth: 2`) and fields with
            // no text say nothing to a reader.
            let has_body = self
                .lines
                .get(self.at)
                .is_some_and(|l| !l.trim().is_empty() && indent(l) > ind);
            if value.is_empty() && !has_body || is_page_metadata(name) {
                return None;
            }
            let line = format!("{}: {}", inline(name), inline(value));
            return Some(escape_block_start(line));
        }
        let text = match text.strip_prefix("| ") {
            Some(line_block) => line_block,
            None => text,
        };
        let line = inline(text);
        if !text.contains('\n') && self.is_term(ind) && !line.is_empty() {
            return Some(format!("**{line}**"));
        }
        Some(escape_block_start(line))
    }

    /// The indented block after a paragraph ending in `::`.
    fn literal_block(&mut self, ind: usize) {
        let lines = &self.lines;
        let Some(start) = (self.at..lines.len()).find(|&j| !lines[j].trim().is_empty()) else {
            return;
        };
        if start == self.at || indent(lines[start]) <= ind {
            return;
        }
        let end = block_end(lines, start, ind);
        let lang = self.highlight.clone();
        self.out.fence(&lang, &lines[start..end]);
        self.at = end;
    }
}

/// Markdown being written, a line at a time.
#[derive(Default)]
pub(super) struct Out {
    text: String,
}

impl Out {
    /// A line of the current block.
    pub(super) fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Ends the current block, if one is open.
    pub(super) fn blank(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push('\n');
        }
    }

    /// A line that starts a block of its own.
    pub(super) fn block(&mut self, line: &str) {
        self.blank();
        self.line(line);
    }

    /// A fenced code block of `lines`, dedented, in `lang`. The fence is
    /// longer than any run of backticks the code starts a line with.
    pub(super) fn fence(&mut self, lang: &str, lines: &[&str]) {
        let mut lines = lines;
        while let [rest @ .., last] = lines {
            if last.trim().is_empty() {
                lines = rest;
            } else {
                break;
            }
        }
        while let [first, rest @ ..] = lines {
            if first.trim().is_empty() {
                lines = rest;
            } else {
                break;
            }
        }
        if lines.is_empty() {
            return;
        }
        let dedent = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent(l))
            .min()
            .unwrap_or(0);
        let ticks = lines
            .iter()
            .map(|l| l.trim_start().bytes().take_while(|&b| b == b'`').count())
            .max()
            .unwrap_or(0);
        let fence = "`".repeat((ticks + 1).max(3));
        let lang: String = lang
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '`')
            .collect();
        self.block(&format!("{fence}{lang}"));
        for line in lines {
            self.line(line.get(dedent..).unwrap_or(""));
        }
        self.line(&fence);
        self.blank();
    }

    pub(super) fn finish(mut self) -> String {
        while self.text.ends_with("\n\n") {
            self.text.pop();
        }
        self.text
    }
}

/// Text with `\r\n` and lone `\r` line ends made `\n`.
pub(super) fn normalise_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        text.into()
    }
}

/// Leading spaces and tabs, in bytes.
pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// Where the block of lines from `from` that are blank or indented more
/// than `ind` ends, trailing blank lines left out.
fn block_end(lines: &[&str], from: usize, ind: usize) -> usize {
    let mut end = from;
    for (j, line) in lines.iter().enumerate().skip(from) {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) <= ind {
            break;
        }
        end = j + 1;
    }
    end.min(lines.len())
}

/// The character of a section adornment line: one punctuation character
/// repeated, at least twice, from the first column.
fn adornment(line: &str) -> Option<u8> {
    let bytes = line.as_bytes();
    let first = *bytes.first()?;
    (bytes.len() >= 2 && first.is_ascii_punctuation() && bytes.iter().all(|&b| b == first))
        .then_some(first)
}

/// Transitions and table borders (`----`, `+---+---+`, `===  ===`).
fn is_decoration(text: &str) -> bool {
    let bytes = text.as_bytes();
    let first = bytes[0];
    if bytes.len() >= 3 && first.is_ascii_punctuation() && bytes.iter().all(|&b| b == first) {
        return true;
    }
    let rules = bytes.iter().filter(|&&b| b == b'=' || b == b'-').count();
    matches!(first, b'+' | b'=' | b'-')
        && rules >= 3
        && bytes
            .iter()
            .all(|b| matches!(b, b'=' | b'-' | b'+' | b'|' | b':' | b' '))
}

/// Whether a line starts a block of its own rather than continuing a
/// paragraph.
fn starts_block(text: &str) -> bool {
    bullet(text).is_some()
        || enumerated(text).is_some()
        || field(text).is_some()
        || text.starts_with("..")
        || text.starts_with(">>>")
        || text.starts_with("__ ")
        || text.starts_with("| ")
        || is_decoration(text)
}

fn is_directive_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.' | b'+'))
}

fn is_page_metadata(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "orphan" | "nosearch" | "tocdepth" | "nocomments" | "hide-toc" | "hide-navigation"
    ) || name.starts_with("og:")
}

fn bullet(text: &str) -> Option<&str> {
    ["* ", "- ", "+ ", "• "]
        .iter()
        .find_map(|b| text.strip_prefix(b))
        .map(str::trim_start)
}

/// `1. item`, `#. item`, `(2) item`, `3) item`: the number and the item.
fn enumerated(text: &str) -> Option<(String, &str)> {
    let inner = text.strip_prefix('(').unwrap_or(text);
    let end = inner.find(['.', ')'])?;
    let (label, after) = inner.split_at(end);
    let item = after[1..].strip_prefix(' ')?;
    if text.starts_with('(') && !after.starts_with(')') {
        return None;
    }
    let number = if label == "#" {
        "1".to_owned()
    } else if !label.is_empty() && label.len() <= 9 && label.bytes().all(|b| b.is_ascii_digit()) {
        label.to_owned()
    } else {
        return None;
    };
    Some((number, item.trim_start()))
}

/// `:name: value`, a field list item (not a role at the start of a line).
fn field(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(':')?;
    let mut from = 0;
    while let Some(close) = rest[from..].find(':') {
        let close = from + close;
        let after = &rest[close + 1..];
        if close > 0 && !rest[..close].ends_with('\\') {
            if after.is_empty() || after.starts_with(char::is_whitespace) {
                return Some((rest[..close].trim(), after.trim()));
            }
            if after.starts_with('`') {
                return None;
            }
        }
        from = close + 1;
    }
    None
}

/// Inline markup as Markdown: ``literal`` and code roles as code spans,
/// other roles as their text, `` `Text <url>`_ `` as a link; emphasis is
/// the same in both. One pass: each search for a closing mark that finds
/// one moves past it, and one that finds none is not repeated.
pub(super) fn inline(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    // Whether any "``" or "`" is left after the searches so far.
    let mut doubles_left = true;
    let mut ticks_left = true;
    // Whether the word so far is letters, digits and hyphens: a reference
    // name, when `_` ends it (`marked_`).
    let mut plain_word = true;
    while at < bytes.len() {
        let b = bytes[at];
        if b == b'\\' {
            at += 2;
            plain_word = false;
            continue;
        }
        if b == b'_' && plain_word && at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            let underscores = 1 + usize::from(bytes.get(at + 1) == Some(&b'_'));
            let after = bytes.get(at + underscores);
            if after.is_none_or(|&c| !c.is_ascii_alphanumeric() && c != b'_' && c != b'`') {
                out.push_str(&text[copied..at]);
                at += underscores;
                copied = at;
                plain_word = false;
                continue;
            }
        }
        plain_word = if b.is_ascii_whitespace() {
            true
        } else {
            plain_word && (b.is_ascii_alphanumeric() || b == b'-')
        };
        if b == b'`' && bytes.get(at + 1) == Some(&b'`') && doubles_left {
            match text[at + 2..].find("``") {
                Some(close) => {
                    let close = at + 2 + close;
                    out.push_str(&text[copied..at]);
                    out.push_str(&code_span(&text[at + 2..close]));
                    at = close + 2;
                    copied = at;
                }
                None => {
                    doubles_left = false;
                    at += 2;
                }
            }
            continue;
        }
        if b == b':' && ticks_left {
            if let Some((name_end, close)) = role_at(text, at, &mut ticks_left) {
                out.push_str(&text[copied..at]);
                out.push_str(&role(&text[at + 1..name_end], &text[name_end + 2..close]));
                at = close + 1;
                copied = at;
                continue;
            }
        }
        if b == b'`' && ticks_left {
            let Some(close) = text[at + 1..].find('`').map(|c| at + 1 + c) else {
                ticks_left = false;
                at += 1;
                continue;
            };
            out.push_str(&text[copied..at]);
            let content = &text[at + 1..close];
            let mut next = close + 1;
            if bytes.get(next) == Some(&b'_') {
                next += 1 + usize::from(bytes.get(next + 1) == Some(&b'_'));
                out.push_str(&link(content));
            } else if let Some(end) = suffix_role(text, next) {
                out.push_str(&role(&text[next + 1..end - 1], content));
                next = end;
            } else {
                out.push_str(&code_span(content));
            }
            at = next;
            copied = at;
            continue;
        }
        at += 1;
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// A role before interpreted text, `:name:`text``, at `at`: where the name
/// ends (its closing colon) and where the text's closing backtick is.
fn role_at(text: &str, at: usize, ticks_left: &mut bool) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut end = at + 1;
    // Names are short; a bound keeps a line of colons linear.
    while end < bytes.len() && end - at <= 64 && is_role_char(bytes[end]) {
        end += 1;
    }
    if bytes.get(end) != Some(&b'`') || end < at + 3 || bytes[end - 1] != b':' {
        return None;
    }
    let name_end = end - 1;
    if !bytes[at + 1].is_ascii_alphabetic() {
        return None;
    }
    match text[end + 1..].find('`') {
        Some(close) => Some((name_end, end + 1 + close)),
        None => {
            *ticks_left = false;
            None
        }
    }
}

/// A role after interpreted text, `` `text`:name: ``: where it ends.
fn suffix_role(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b':') {
        return None;
    }
    let mut end = at + 1;
    while end < bytes.len() && end - at <= 64 && bytes[end] != b':' && is_role_char(bytes[end]) {
        end += 1;
    }
    (end > at + 1 && bytes.get(end) == Some(&b':')).then_some(end + 1)
}

fn is_role_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.' | b'+')
}

/// `text <target>` split in two; plain `text` has no target.
fn split_target(content: &str) -> (&str, Option<&str>) {
    if let Some(body) = content.strip_suffix('>') {
        if let Some((text, target)) = body.rsplit_once('<') {
            let text = text.trim();
            if !text.is_empty() {
                return (text, Some(target.trim()));
            }
            return (target.trim(), Some(target.trim()));
        }
    }
    (content, None)
}

fn link(content: &str) -> String {
    match split_target(content) {
        (text, Some(url)) if url.contains("://") || url.starts_with("mailto:") => {
            format!("[{text}]({url})")
        }
        (text, _) => text.to_owned(),
    }
}

/// A role's text as a reader sees it: cross-references to code as code,
/// others as words.
fn role(name: &str, content: &str) -> String {
    let short = name.rsplit(':').next().unwrap_or(name);
    let (text, target) = split_target(content);
    match short {
        "ref" | "doc" | "term" | "abbr" | "numref" | "download" | "keyword" | "guilabel"
        | "menuselection" | "title-reference" | "title" | "t" | "index" | "dfn" | "sub" | "sup"
        | "subscript" | "superscript" | "math" | "eq" | "any" | "manpage" | "cite" => {
            text.to_owned()
        }
        "pep" | "PEP" => format!("PEP {text}"),
        "rfc" | "RFC" => format!("RFC {text}"),
        "emphasis" => format!("*{text}*"),
        "strong" => format!("**{text}**"),
        "kbd" | "samp" | "file" | "command" | "program" | "code" | "literal" | "envvar"
        | "option" | "makevar" | "regexp" | "mimetype" => code_span(text),
        _ => {
            // Python and C cross-references: `~a.b.c` shows `c`, `!x` is x.
            let mut shown = text.trim_start_matches('!');
            if target.is_none() {
                if let Some(tail) = shown.strip_prefix('~') {
                    shown = tail.rsplit('.').next().unwrap_or(tail);
                }
            }
            code_span(shown)
        }
    }
}

/// A prose line that Markdown would read as a heading or a fence opener,
/// escaped so that it stays text.
pub(super) fn escape_block_start(line: String) -> String {
    if line.starts_with('#') || line.starts_with("```") || line.starts_with("~~~") {
        format!("\\{line}")
    } else {
        line
    }
}

/// Whether plain text is reStructuredText by its content: at least one
/// section title (a line underlined, or over- and underlined, by one
/// punctuation character repeated at least as long as the title), and
/// beside it a directive (`.. note::`), an interpreted role (`:ref:`…`),
/// or a second title. Prose with one dashed line under a sentence is not.
pub fn looks_like_rst(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(2_000).collect();
    let titles = lines
        .windows(2)
        .filter(|pair| is_underline(pair[1], pair[0]))
        .count();
    if titles == 0 {
        return false;
    }
    let directive = lines.iter().any(|l| {
        let l = l.trim_start();
        l.starts_with(".. ") && l.contains("::")
    });
    let role = text.contains(":ref:`") || text.contains(":doc:`") || text.contains(":class:`");
    titles >= 2 || directive || role
}

/// Whether `line` underlines the title `above`.
fn is_underline(line: &str, above: &str) -> bool {
    let line = line.trim_end();
    let title = above.trim();
    let Some(first) = line.chars().next() else {
        return false;
    };
    !title.is_empty()
        && !above.starts_with(' ')
        && line.len() >= 3
        && line.chars().count() >= title.chars().count()
        && "=-~^\"'*+#:.`_".contains(first)
        && line.chars().all(|c| c == first)
        && !title.chars().all(|c| c == first)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    const SPHINX_PAGE: &str = r#".. _installing:

:orphan:

=============
 Installation
=============

.. contents:: On this page
   :local:

.. toctree::
   :maxdepth: 2

   quickstart
   api

Getting started
===============

Install the package with :command:`pip`, then call :func:`~attr.define`
or :py:class:`attr.Factory`. See :ref:`the tutorial <tutorial>` and
``attrs.fields()`` for more; `The homepage <https://www.attrs.org/>`_ has
**everything** and *more*. Read `the long guide
<https://example.org/guide>`_ too.

.. code-block:: python
   :linenos:
   :caption: example.py

   import attr

   @attr.s
   class C:
       x = attr.ib()

.. note::
   Slotted classes are faster.

   They use less memory too.

A literal block follows::

    $ pip install attrs
    $ python -c "import attr"

Details
-------

.. versionadded:: 21.3.0 The ``attrs`` namespace.

.. automodule:: attr
   :members:

.. image:: logo.png
   :alt: The logo

- first item
- second item with :class:`Thing`

#. numbered
#. again

:param name: The name.
:returns: Nothing.

>>> import attr
>>> attr.__version__
'21.4.0'

.. |br| replace:: <br/>

.. this is a comment
   spanning lines

The end, as marked_ says; foo_bar_ and __init__ stay.
"#;

    #[test]
    fn a_sphinx_page_becomes_markdown() {
        let md = to_markdown(SPHINX_PAGE);
        // Overlined and underlined titles, levels in order of appearance.
        assert!(md.starts_with("# Installation\n"), "{md}");
        assert!(md.contains("\n## Getting started\n"), "{md}");
        assert!(md.contains("\n### Details\n"), "{md}");
        // Code blocks are fenced, options dropped, code dedented.
        assert!(
            md.contains("```python\nimport attr\n\n@attr.s\nclass C:\n    x = attr.ib()\n```\n"),
            "{md}"
        );
        assert!(
            !md.contains(":linenos:") && !md.contains(":caption:"),
            "{md}"
        );
        assert!(
            md.contains("A literal block follows:\n\n```\n$ pip install attrs\n"),
            "{md}"
        );
        assert!(md.contains("```pycon\n>>> import attr\n"), "{md}");
        // Admonitions keep their text behind a label.
        assert!(
            md.contains("**Note:**\nSlotted classes are faster."),
            "{md}"
        );
        assert!(md.contains("They use less memory too."), "{md}");
        assert!(
            md.contains("*New in version 21.3.0:* The `attrs` namespace."),
            "{md}"
        );
        // Roles and links as their text.
        assert!(md.contains("call `define`"), "{md}");
        assert!(md.contains("`attr.Factory`"), "{md}");
        assert!(md.contains("See the tutorial and"), "{md}");
        assert!(md.contains("`attrs.fields()`"), "{md}");
        assert!(
            md.contains("[The homepage](https://www.attrs.org/) has"),
            "{md}"
        );
        assert!(md.contains("**everything** and *more*"), "{md}");
        assert!(
            md.contains("Read [the long guide](https://example.org/guide) too."),
            "{md}"
        );
        assert!(md.contains("`pip`"), "{md}");
        // Lists and fields.
        assert!(
            md.contains("- first item\n- second item with `Thing`\n"),
            "{md}"
        );
        assert!(md.contains("1. numbered\n1. again\n"), "{md}");
        assert!(
            md.contains("param name: The name.\nreturns: Nothing.\n"),
            "{md}"
        );
        assert!(
            md.contains("The end, as marked says; foo_bar_ and __init__ stay."),
            "{md}"
        );
        // Directive noise is gone.
        for noise in [
            "..",
            "toctree",
            "maxdepth",
            "quickstart",
            "automodule",
            ":members:",
            "logo.png",
            "contents",
            "replace::",
            "comment",
            "orphan",
            "_installing",
            ":func:",
            ":ref:",
            "====",
        ] {
            assert!(!md.contains(noise), "{noise:?} left in:\n{md}");
        }
    }

    #[test]
    fn rst_files_are_extracted_as_markdown() {
        let limits = crate::extract::ArchiveLimits::default();
        let bytes = SPHINX_PAGE.replace('\n', "\r\n");
        let extraction = crate::extract::extract("docs/install.rst", bytes.as_bytes(), &limits);
        let doc = &extraction.unwrap().documents[0];
        assert_eq!(doc.title.as_deref(), Some("Installation"));
        assert!(doc.text.contains("\n## Getting started\n"), "{}", doc.text);
        let code = chunk_holding(doc, "attr.ib()");
        assert_eq!(
            code.heading_path_display(),
            "Installation > Getting started"
        );
        assert!(
            code.text.contains("```python\nimport attr"),
            "{}",
            code.text
        );
    }

    #[test]
    fn descriptions_keep_their_signature_and_text() {
        let md = to_markdown(
            ".. py:function:: send(message, *, retries=3)\n   :async:\n\n   Sends a message.\n\n.. highlight:: rust\n\nThen::\n\n   let x = 1;\n",
        );
        assert!(
            md.starts_with("`send(message, *, retries=3)`\nSends a message."),
            "{md}"
        );
        assert!(md.contains("Then:\n\n```rust\nlet x = 1;\n```"), "{md}");
    }

    #[test]
    fn code_holding_fences_gets_a_longer_fence() {
        let md = to_markdown(".. code-block:: markdown\n\n   ```\n   x\n   ```\n");
        assert_eq!(md, "````markdown\n```\nx\n```\n````\n");
    }

    #[test]
    fn inline_markup_scans_hostile_lines_in_linear_time() {
        let line = ":a:".repeat(20_000) + &"``".repeat(20_000) + &"`x".repeat(20_000);
        let started = std::time::Instant::now();
        let _ = inline(&line);
        let _ = to_markdown(&format!("{line}\n{}\n", "=".repeat(10)));
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let mut text = String::new();
        for depth in 0..5_000 {
            text.push_str(&" ".repeat(depth));
            text.push_str(".. note::\n\n");
        }
        let md = to_markdown(&text);
        assert!(md.contains("**Note:**"));
    }

    /// Whether every code fence the Markdown opens is closed (as the
    /// chunker reads fences).
    /// The chunk of `doc`, chunked small, whose text holds `needle`: where
    /// a converted document's code block lands, and under which headings.
    pub(in crate::extract) fn chunk_holding(
        doc: &crate::extract::Extracted,
        needle: &str,
    ) -> crate::chunk::Chunk {
        let small = crate::chunk::ChunkConfig {
            target: 200,
            overlap: 0,
            hard_max: 2000,
        };
        crate::chunk::chunk_document(doc, &small)
            .into_iter()
            .find(|c| c.text.contains(needle))
            .unwrap_or_else(|| panic!("no chunk holds {needle:?}"))
    }

    pub(in crate::extract) fn fences_are_closed(md: &str) -> bool {
        let mut open: Option<usize> = None;
        for line in md.lines() {
            let ticks = line.bytes().take_while(|&b| b == b'`').count();
            match open {
                Some(n) if ticks >= n && line.trim().len() == ticks => open = None,
                Some(_) => {}
                None if ticks >= 3 => open = Some(ticks),
                None => {}
            }
        }
        open.is_none()
    }

    proptest! {
        #[test]
        fn any_text_converts_without_panicking(
            lines in proptest::collection::vec(
                prop_oneof![
                    "[ \t]{0,6}(\\.\\. |::|:[a-z]{1,5}:|``|`|_|\\*|#\\. |- |>>> |\\|)?[^\n]{0,40}",
                    "[=\\-~^+#*.:`]{1,12}",
                    ".{0,30}",
                ],
                0..40,
            )
        ) {
            let text = lines.join("\n");
            let md = to_markdown(&text);
            let _ = inline(&text);
            prop_assert!(fences_are_closed(&md), "{}", md);
        }

        #[test]
        fn any_bytes_convert_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = to_markdown(&text);
        }
    }
}
