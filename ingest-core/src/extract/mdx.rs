//! MDX (`.mdx`) to the Markdown it reads as.
//!
//! An MDX page is parsed as MDX (markdown-rs: ES modules, JSX and
//! expressions as well as CommonMark and GFM) and its tree written back as
//! plain Markdown, which the Markdown path chunks:
//!
//! - `import`/`export` blocks, `{expressions}` and `{/* comments */}` are
//!   dropped (an expression that is only a string literal, `{'<'}`, is its
//!   text), so heading ids (`## Setup {#setup}`, `{/*setup*/}`) leave the
//!   heading's text;
//! - components keep their content (`<Tabs><TabItem label="npm">…`, with
//!   the tab's label as a bold line); admonitions (`<Note>`, `<Warning>`,
//!   `<Tip>`, `<Callout type=…>`, `<Admonition>`, Docusaurus `:::note`
//!   blocks) become a bold label before their text, as reStructuredText's
//!   and AsciiDoc's do (`**Note:**`); components without content
//!   (`<DocCardList />`) are dropped;
//! - code blocks are kept whole with their language; YAML front matter is
//!   kept for the Markdown path to take the title from.
//!
//! MDX is strict: a stray `<` or `{`, or an HTML comment, is a syntax error
//! for it. Such a page is not lost: it is read line by line instead (ESM
//! lines and lines of only component tags dropped), and a warning says so.

use markdown::mdast::{AttributeContent, AttributeValue, Node};
use markdown::{Constructs, MdxSignal, ParseOptions};

use super::markdown_out::{code_span, fence, one_line, table_markdown, wrap};
use super::text;

/// An MDX page as Markdown, and a warning when it was not valid MDX and was
/// read line by line instead.
pub struct Converted {
    pub markdown: String,
    pub warning: Option<String>,
}

/// Containers deeper than this are written as their text only: the
/// writer recurses, and a page nests a few levels, not hundreds.
const MAX_DEPTH: usize = 64;

/// The Markdown an MDX page reads as (see the module's documentation),
/// with a warning when it was not valid MDX.
pub fn to_markdown(src: &str) -> Converted {
    let src = super::rst::normalise_newlines(src);
    if let Some(why) = too_costly(&src) {
        return Converted {
            markdown: line_by_line(&src),
            warning: Some(format!(
                "{why}, so read line by line: some component markup may remain"
            )),
        };
    }
    // markdown-rs 1.0 still panics on some inputs (its issue 139: `Hi <>`
    // over a setext underline): such a page is read line by line too.
    let parsed = super::guard("the MDX parser failed on this page", || {
        markdown::to_mdast(&without_html_comments(&src), &options())
    })
    .and_then(|parsed| parsed.map_err(|message| message_text(&message)));
    match parsed {
        Ok(tree) => Converted {
            markdown: write_root(&tree),
            warning: None,
        },
        Err(message) => Converted {
            markdown: line_by_line(&src),
            warning: Some(format!(
                "not valid MDX ({message}), so read line by line: some component markup may remain"
            )),
        },
    }
}

/// Pages larger than this are read line by line: a real MDX page is a few
/// to a few tens of KiB, and markdown-rs's time grows faster than the
/// page on some hostile inputs (runs of emphasis marks, brackets).
const MAX_PARSED_BYTES: usize = 256 * 1024;

/// Block containers (`>`, list items) opened on one line beyond this, or
/// JSX elements open at once beyond [`MAX_OPEN_ELEMENTS`], send the page
/// line by line too. markdown-rs checks every open container on every
/// line, so the cost grows with nesting times lines (docs/benchmarks.md,
/// "MDX's parser on hostile pages"); real pages nest a handful deep.
const MAX_LINE_CONTAINERS: usize = 32;
const MAX_OPEN_ELEMENTS: usize = 100;

/// A run of `*` or `_` longer than this sends the page line by line: the
/// parser's time grew with the square of such a run (docs/benchmarks.md,
/// "MDX's parser on hostile pages"), and prose uses two or three.
const MAX_EMPHASIS_RUN: usize = 64;

/// Why `src` would cost the strict parser too much, if it would: a linear
/// scan that bounds what markdown-rs's superlinear cases can cost.
fn too_costly(src: &str) -> Option<String> {
    if src.len() > MAX_PARSED_BYTES {
        return Some(format!(
            "larger than {} KiB for the MDX parser",
            MAX_PARSED_BYTES / 1024
        ));
    }
    let mut elements = OpenElements::default();
    let mut fence = Fence::default();
    for (number, line) in src.lines().enumerate() {
        if line_containers(line) > MAX_LINE_CONTAINERS {
            return Some(format!(
                "line {} opens more than {MAX_LINE_CONTAINERS} quotes or lists",
                number + 1
            ));
        }
        let in_code = fence.holds(line);
        let bytes = line.as_bytes();
        let mut run = 0;
        elements.new_line();
        for (i, &byte) in bytes.iter().enumerate() {
            let open = if in_code {
                elements.open
            } else {
                elements.step(byte, bytes.get(i + 1).copied())
            };
            if open > MAX_OPEN_ELEMENTS {
                return Some(format!(
                    "more than {MAX_OPEN_ELEMENTS} elements open at line {}",
                    number + 1
                ));
            }
            run = if byte == b'*' || byte == b'_' {
                run + 1
            } else {
                0
            };
            if run > MAX_EMPHASIS_RUN {
                return Some(format!(
                    "line {} has a run of more than {MAX_EMPHASIS_RUN} emphasis marks",
                    number + 1
                ));
            }
        }
    }
    None
}

/// The JSX elements left open, counted byte by byte. A `<` counts only
/// where the parser would read a tag: not in a code span, nor inside a
/// tag's quoted attribute values or `{…}` expressions, where TypeScript's
/// `Array<ToolCall<TOOLS>>` is text (the API reference pages of real MDX
/// sites are full of it). Fenced code is skipped by the caller.
#[derive(Default)]
struct OpenElements {
    open: usize,
    /// Inside a backtick code span (spans end with their line here).
    code_span: bool,
    /// Inside a tag, between its `<` and `>`.
    in_tag: bool,
    /// The quote a tag's attribute value opened, while inside it.
    quote: Option<u8>,
    /// Depth of `{…}` inside a tag.
    braces: usize,
}

impl OpenElements {
    fn new_line(&mut self) {
        self.code_span = false;
    }

    /// Reads `byte` (with the byte after it); returns the count open.
    fn step(&mut self, byte: u8, next: Option<u8>) -> usize {
        if self.in_tag {
            match (self.quote, byte) {
                (Some(q), b) if b == q => self.quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => self.quote = Some(byte),
                (None, b'{') => self.braces += 1,
                (None, b'}') => self.braces = self.braces.saturating_sub(1),
                (None, _) if self.braces > 0 => {}
                (None, b'/') if next == Some(b'>') => {
                    self.open = self.open.saturating_sub(1);
                }
                (None, b'>') => self.in_tag = false,
                // Not valid JSX, but what a hostile page would nest with.
                (None, b'<') if next.is_some_and(|c| c.is_ascii_alphabetic()) => self.open += 1,
                _ => {}
            }
            return self.open;
        }
        match (byte, next) {
            (b'`', _) => self.code_span = !self.code_span,
            _ if self.code_span => {}
            (b'<', Some(b'/')) => {
                self.open = self.open.saturating_sub(1);
                self.in_tag = true;
            }
            (b'<', Some(c)) if c.is_ascii_alphabetic() => {
                self.open += 1;
                self.in_tag = true;
            }
            _ => {}
        }
        self.open
    }
}

/// Quote markers and list markers that open a line, one after another.
fn line_containers(line: &str) -> usize {
    let mut rest = line.trim_start();
    let mut count = 0;
    loop {
        let marker = if rest.starts_with('>') {
            1
        } else if rest.starts_with("- ") || rest.starts_with("* ") || rest.starts_with("+ ") {
            2
        } else {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest.as_bytes().get(digits..digits + 2) {
                Some([b'.' | b')', b' ']) if digits > 0 => digits + 2,
                _ => return count,
            }
        };
        count += 1;
        rest = rest[marker..].trim_start();
    }
}

/// Fenced code blocks met line by line: which lines belong to one (its
/// fences included), so the text scans below leave code as it is.
#[derive(Default)]
struct Fence {
    /// The open block's marker (three backticks or tildes).
    open: Option<&'static str>,
}

impl Fence {
    /// Whether `line` opens, closes or is inside a fenced block.
    fn holds(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if let Some(marker) = self.open {
            if trimmed.starts_with(marker) {
                self.open = None;
            }
            return true;
        }
        self.open = ["```", "~~~"]
            .into_iter()
            .find(|marker| trimmed.starts_with(marker));
        self.open.is_some()
    }
}

/// The page without its HTML comments (`<!-- truncate -->`), outside fenced
/// code. MDX has none and refuses them, yet pages written for MDX 1 carry
/// them and Docusaurus still reads them (its `mdx1Compat.comments`); a
/// comment's line breaks stay, so lines keep their numbers.
fn without_html_comments(src: &str) -> String {
    if !src.contains("<!--") {
        return src.to_owned();
    }
    let mut out = String::with_capacity(src.len());
    let mut fence = Fence::default();
    let mut comment = false;
    for line in src.split_inclusive('\n') {
        if !comment && fence.holds(line) {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        loop {
            if comment {
                match rest.find("-->") {
                    Some(end) => {
                        comment = false;
                        rest = &rest[end + 3..];
                    }
                    None => {
                        if rest.ends_with('\n') {
                            out.push('\n');
                        }
                        break;
                    }
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        out.push_str(&rest[..start]);
                        comment = true;
                        rest = &rest[start + 4..];
                    }
                    None => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
    }
    out
}

fn options() -> ParseOptions {
    ParseOptions {
        constructs: Constructs {
            frontmatter: true,
            gfm_autolink_literal: true,
            gfm_footnote_definition: true,
            gfm_label_start_footnote: true,
            gfm_strikethrough: true,
            gfm_table: true,
            gfm_task_list_item: true,
            math_flow: true,
            math_text: true,
            ..Constructs::mdx()
        },
        // Without a parser for ES modules, markdown-rs reads `import` lines
        // as prose. A module is only dropped here, so it need not be parsed
        // as JavaScript: it ends where its brackets close.
        mdx_esm_parse: Some(Box::new(esm_complete)),
        ..ParseOptions::mdx()
    }
}

/// Whether an ESM block is whole: its brackets balance (strings, template
/// literals and comments skipped). While they do not, markdown-rs is asked
/// to read on past a blank line.
fn esm_complete(code: &str) -> MdxSignal {
    let mut depth: i64 = 0;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '"' | '\'' | '`' => {
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == c || (d == '\n' && c != '`') {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut star = false;
                for d in chars.by_ref() {
                    if star && d == '/' {
                        break;
                    }
                    star = d == '*';
                }
            }
            _ => {}
        }
    }
    if depth > 0 {
        MdxSignal::Eof(
            "an import or export whose brackets do not close".into(),
            Box::new("unexpected-eof".into()),
            Box::new("docshelf".into()),
        )
    } else {
        MdxSignal::Ok
    }
}

/// markdown-rs's message, where it was and why, without its rule names.
fn message_text(message: &markdown::message::Message) -> String {
    let reason = message.reason.replace('`', "");
    match &message.place {
        Some(place) => match place.as_ref() {
            markdown::message::Place::Point(p) => format!("line {}: {reason}", p.line),
            markdown::message::Place::Position(p) => format!("line {}: {reason}", p.start.line),
        },
        None => reason,
    }
}

fn write_root(tree: &Node) -> String {
    let children: &[Node] = match tree {
        Node::Root(root) => &root.children,
        other => std::slice::from_ref(other),
    };
    let mut out = String::new();
    if let Some(Node::Yaml(yaml)) = children.first() {
        out.push_str("---\n");
        out.push_str(&yaml.value);
        out.push_str("\n---\n\n");
    }
    out.push_str(&blocks(children, 0).join("\n\n"));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Flow content as Markdown blocks (no blank lines between them yet).
///
/// A Docusaurus admonition's opening line (`:::tip`) that is a paragraph of
/// its own becomes a label held for the next block: a paragraph starts with
/// it, as an admonition component's does, anything else follows it.
fn blocks(nodes: &[Node], depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut label: Option<String> = None;
    for node in nodes {
        if let Node::Paragraph(p) = node {
            let text = inline(&p.children, depth);
            let text = text.trim();
            if !text.contains('\n') {
                if let Some(Directive::Open(open)) = directive_line(text) {
                    if let Some(held) = label.replace(open) {
                        out.push(held);
                    }
                    continue;
                }
            }
        }
        let before = out.len();
        block(node, depth, &mut out);
        if out.len() > before {
            if let Some(held) = label.take() {
                if matches!(node, Node::Paragraph(_)) {
                    out[before] = format!("{held}\n{}", out[before]);
                } else {
                    out.insert(before, held);
                }
            }
        }
    }
    out.extend(label);
    out
}

fn block(node: &Node, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        let text = plain_text(node);
        if !text.trim().is_empty() {
            out.push(text.trim().to_owned());
        }
        return;
    }
    match node {
        Node::Paragraph(p) => {
            let text = directives(inline(&p.children, depth).trim());
            if !text.is_empty() {
                out.push(text);
            }
        }
        Node::Heading(h) => {
            let text = one_line(&inline(&h.children, depth));
            if !text.is_empty() {
                out.push(format!(
                    "{} {text}",
                    "#".repeat(h.depth.clamp(1, 6) as usize)
                ));
            }
        }
        Node::Code(code) => out.push(fence(code.lang.as_deref().unwrap_or(""), &code.value)),
        Node::Math(math) => out.push(format!("$$\n{}\n$$", math.value)),
        Node::Blockquote(quote) => {
            let inner = blocks(&quote.children, depth + 1).join("\n\n");
            if !inner.is_empty() {
                out.push(prefix_lines(&inner, "> ", "> "));
            }
        }
        Node::List(list) => {
            let mut number = list.start.unwrap_or(1);
            let mut items = Vec::new();
            for item in &list.children {
                let Node::ListItem(item) = item else {
                    block(item, depth + 1, out);
                    continue;
                };
                let marker = if list.ordered {
                    number += 1;
                    format!("{}. ", number - 1)
                } else {
                    "- ".to_owned()
                };
                let marker = match item.checked {
                    Some(true) => format!("{marker}[x] "),
                    Some(false) => format!("{marker}[ ] "),
                    None => marker,
                };
                let sep = if item.spread { "\n\n" } else { "\n" };
                let inner = blocks(&item.children, depth + 1).join(sep);
                let indent = " ".repeat(marker.len());
                items.push(prefix_lines(&inner, &marker, &indent));
            }
            if !items.is_empty() {
                out.push(items.join(if list.spread { "\n\n" } else { "\n" }));
            }
        }
        Node::Table(table) => {
            let rows: Vec<Vec<String>> = table
                .children
                .iter()
                .map(|row| match row {
                    Node::TableRow(row) => row
                        .children
                        .iter()
                        .map(|cell| match cell {
                            Node::TableCell(cell) => {
                                one_line(&inline(&cell.children, depth)).replace('|', "\\|")
                            }
                            other => one_line(&plain_text(other)),
                        })
                        .collect(),
                    other => vec![one_line(&plain_text(other))],
                })
                .collect();
            if let Some(table) = table_markdown(&rows) {
                out.push(table);
            }
        }
        Node::FootnoteDefinition(def) => {
            let inner = blocks(&def.children, depth + 1).join("\n\n");
            let marker = format!("[^{}]: ", def.label.as_deref().unwrap_or(&def.identifier));
            out.push(prefix_lines(&inner, &marker, "    "));
        }
        Node::MdxJsxFlowElement(el) => {
            component(el.name.as_deref(), &el.attributes, &el.children, depth, out);
        }
        // Modules, expressions, link definitions, front matter (taken by
        // `write_root`) and rules carry no prose.
        Node::MdxjsEsm(_)
        | Node::MdxFlowExpression(_)
        | Node::Definition(_)
        | Node::Yaml(_)
        | Node::Toml(_)
        | Node::ThematicBreak(_) => {}
        Node::Html(html) => out.push(html.value.clone()),
        // Phrasing where flow was expected (not produced by the parser).
        other => {
            let text = inline(std::slice::from_ref(other), depth);
            if !text.trim().is_empty() {
                out.push(text.trim().to_owned());
            }
        }
    }
}

/// A JSX element in flow: its children's blocks, under an admonition's
/// label or a tab's.
fn component(
    name: Option<&str>,
    attributes: &[AttributeContent],
    children: &[Node],
    depth: usize,
    out: &mut Vec<String>,
) {
    let mut inner = Vec::new();
    // Whether the first block written is a paragraph, which the label joins.
    let mut first_is_prose = None;
    for child in children {
        let before = inner.len();
        block(child, depth + 1, &mut inner);
        if first_is_prose.is_none() && inner.len() > before {
            first_is_prose = Some(matches!(child, Node::Paragraph(_)));
        }
    }
    let label = name.and_then(|name| label_of(name, attributes));
    if let Some(label) = label {
        if inner.is_empty() {
            return;
        }
        if first_is_prose == Some(true) {
            inner[0] = format!("{label}\n{}", inner[0]);
        } else {
            inner.insert(0, label);
        }
    }
    out.extend(inner);
}

/// Admonition components and the label their text is read under.
const ADMONITIONS: &[(&str, &str)] = &[
    ("Note", "Note"),
    ("Info", "Info"),
    ("Tip", "Tip"),
    ("Hint", "Hint"),
    ("Important", "Important"),
    ("Warning", "Warning"),
    ("Caution", "Caution"),
    ("Danger", "Danger"),
    ("Error", "Error"),
    ("Check", "Check"),
];

/// Components that say what kind of admonition they are in an attribute
/// (`<Callout type="warning">`, `<Admonition type="tip">`, Starlight's
/// `<Aside type="caution">`).
const TYPED_ADMONITIONS: &[&str] = &["Callout", "Admonition", "Aside"];

/// Tabs, whose label says what their content is for (`npm`, `yarn`).
const TABS: &[&str] = &["TabItem", "Tab", "Tabs.Tab"];

/// The bold line a component's content is read under, if any.
fn label_of(name: &str, attributes: &[AttributeContent]) -> Option<String> {
    let title = attribute(attributes, "title").map(|t| one_line(&t));
    if let Some((_, label)) = ADMONITIONS.iter().find(|(n, _)| *n == name) {
        let label = title
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| (*label).to_owned());
        return Some(format!("**{label}:**"));
    }
    if TYPED_ADMONITIONS.contains(&name) {
        let label = title.filter(|t| !t.is_empty()).unwrap_or_else(|| {
            attribute(attributes, "type")
                .map(|t| capitalise(&t))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "Note".to_owned())
        });
        return Some(format!("**{label}:**"));
    }
    if TABS.contains(&name) {
        let label = attribute(attributes, "label")
            .or_else(|| attribute(attributes, "title"))
            .or_else(|| attribute(attributes, "value"))
            .map(|l| one_line(&l))
            .filter(|l| !l.is_empty())?;
        return Some(format!("**{label}**"));
    }
    None
}

/// A JSX attribute's literal value (`label="npm"`, not `label={x}`).
fn attribute(attributes: &[AttributeContent], name: &str) -> Option<String> {
    attributes.iter().find_map(|a| match a {
        AttributeContent::Property(p) if p.name == name => match &p.value {
            Some(AttributeValue::Literal(value)) => Some(value.clone()),
            Some(AttributeValue::Expression(e)) => string_literal(&e.value).map(str::to_owned),
            None => None,
        },
        _ => None,
    })
}

fn capitalise(word: &str) -> String {
    let word = word.trim();
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The text of an expression that is a plain string literal (`'<'`,
/// `"a b"`, a template without substitutions); `None` for any other.
fn string_literal(expression: &str) -> Option<&str> {
    let e = expression.trim();
    let quote = e.chars().next()?;
    if !matches!(quote, '"' | '\'' | '`') || e.len() < 2 || !e.ends_with(quote) {
        return None;
    }
    let inner = &e[1..e.len() - 1];
    let plain = !inner.contains(quote) && !inner.contains('\\') && !inner.contains("${");
    plain.then_some(inner)
}

/// Phrasing content as Markdown text.
fn inline(nodes: &[Node], depth: usize) -> String {
    let mut out = String::new();
    for node in nodes {
        inline_node(node, depth, &mut out);
    }
    out
}

fn inline_node(node: &Node, depth: usize, out: &mut String) {
    if depth > MAX_DEPTH {
        out.push_str(&plain_text(node));
        return;
    }
    let depth = depth + 1;
    match node {
        Node::Text(t) => out.push_str(&t.value),
        Node::Emphasis(e) => wrap(out, "*", &inline(&e.children, depth)),
        Node::Strong(s) => wrap(out, "**", &inline(&s.children, depth)),
        Node::Delete(d) => wrap(out, "~~", &inline(&d.children, depth)),
        Node::InlineCode(code) => out.push_str(&code_span(&code.value)),
        Node::InlineMath(math) => {
            out.push('$');
            out.push_str(&math.value);
            out.push('$');
        }
        Node::Break(_) => out.push('\n'),
        Node::Link(link) => {
            // A link's text holds no links (GFM reads a bare address in
            // it as one); a bare address is written as itself.
            let mut text = String::new();
            for child in &link.children {
                match child {
                    Node::Link(inner) => text.push_str(&inline(&inner.children, depth)),
                    other => inline_node(other, depth, &mut text),
                }
            }
            let bare = text == link.url || format!("mailto:{text}") == link.url;
            if link.url.is_empty() || text.trim().is_empty() || bare {
                out.push_str(&text);
            } else {
                out.push_str(&format!("[{text}]({})", link.url));
            }
        }
        Node::LinkReference(link) => out.push_str(&inline(&link.children, depth)),
        Node::Image(image) => {
            if !image.alt.trim().is_empty() {
                out.push_str(&format!("![{}]({})", image.alt, image.url));
            }
        }
        Node::ImageReference(image) => out.push_str(&image.alt),
        Node::FootnoteReference(r) => {
            out.push_str(&format!(
                "[^{}]",
                r.label.as_deref().unwrap_or(&r.identifier)
            ));
        }
        Node::MdxTextExpression(e) => {
            if let Some(text) = string_literal(&e.value) {
                out.push_str(text);
            }
        }
        Node::MdxJsxTextElement(el) => {
            let text = inline(&el.children, depth);
            match el.name.as_deref() {
                Some("code" | "kbd") if !text.is_empty() => out.push_str(&code_span(&text)),
                Some("br") => out.push('\n'),
                Some("a") => match attribute(&el.attributes, "href") {
                    Some(href) if !text.trim().is_empty() => {
                        out.push_str(&format!("[{text}]({href})"));
                    }
                    _ => out.push_str(&text),
                },
                Some("strong" | "b") => wrap(out, "**", &text),
                Some("em" | "i") => wrap(out, "*", &text),
                Some(name) => match label_of(name, &el.attributes) {
                    Some(label) if !text.trim().is_empty() => {
                        out.push_str(&label);
                        out.push(' ');
                        out.push_str(&text);
                    }
                    _ => out.push_str(&text),
                },
                None => out.push_str(&text),
            }
        }
        Node::Html(html) => out.push_str(&html.value),
        // Flow inside phrasing (not produced by the parser): its text.
        other => out.push_str(&plain_text(other)),
    }
}

/// A node's text, without markup (for what nests too deep, and flow where
/// phrasing was expected).
fn plain_text(node: &Node) -> String {
    let mut out = String::new();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match node {
            Node::Text(t) => out.push_str(&t.value),
            Node::InlineCode(c) => out.push_str(&c.value),
            Node::Code(c) => {
                out.push('\n');
                out.push_str(&c.value);
                out.push('\n');
            }
            Node::Paragraph(_) | Node::Heading(_) => out.push('\n'),
            _ => {}
        }
        if let Some(children) = node.children() {
            stack.extend(children.iter().rev());
        }
    }
    out
}

/// Docusaurus admonition lines in a paragraph's text: `:::note`,
/// `:::tip Title` or `:::tip[Title]` become the label, a closing `:::` goes.
/// (markdown-rs does not read directives, so they arrive as text.)
fn directives(text: &str) -> String {
    if !text.contains(":::") {
        return text.to_owned();
    }
    text.split('\n')
        .filter_map(|line| match directive_line(line) {
            Some(Directive::Close) => None,
            Some(Directive::Open(label)) => Some(label),
            None => Some(line.to_owned()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

enum Directive {
    Open(String),
    Close,
}

/// Reads one line as a container directive's fence.
fn directive_line(line: &str) -> Option<Directive> {
    let trimmed = line.trim();
    let rest = trimmed.trim_start_matches(':');
    if trimmed.len() - rest.len() < 3 {
        return None;
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(Directive::Close);
    }
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    let (name, title) = rest.split_at(name_end);
    if name.is_empty() {
        return None;
    }
    let title = title.trim();
    let title = title
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(title);
    // `{title="…"}` attributes, when the expression was kept as text.
    let title = if title.starts_with('{') {
        ""
    } else {
        title.trim()
    };
    let label = if title.is_empty() {
        capitalise(name)
    } else {
        one_line(title)
    };
    Some(Directive::Open(format!("**{label}:**")))
}

/// Today's reading of MDX that is not valid MDX: front matter kept, then
/// outside fenced code, ESM `import`/`export` lines and lines of only
/// component tags dropped, admonition fences made labels and heading ids
/// taken out of headings. The text between a component's tags stays.
fn line_by_line(src: &str) -> String {
    let (front, body) = text::split_front_matter(src);
    let mut out = String::with_capacity(src.len());
    if let Some(front) = front {
        out.push_str("---\n");
        out.push_str(front);
        out.push_str("---\n\n");
    }
    let mut fence = Fence::default();
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim();
        if fence.holds(line) {
            out.push_str(line);
            continue;
        }
        let esm = trimmed.starts_with("import ") || trimmed.starts_with("export ");
        if esm || is_jsx_tag_line(trimmed) || is_comment_line(trimmed) {
            continue;
        }
        match directive_line(trimmed) {
            Some(Directive::Close) => continue,
            Some(Directive::Open(label)) => {
                out.push_str(&label);
                out.push('\n');
                continue;
            }
            None => {}
        }
        if trimmed.starts_with('#') {
            out.push_str(&without_heading_id(line.trim_end()));
            out.push('\n');
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Whether a line is only JSX tags: starts with `<` and an upper-case
/// component name (or `</`), and ends with `>`. Lower-case tags are HTML,
/// which Markdown renders, so they stay.
fn is_jsx_tag_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('<') else {
        return false;
    };
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    rest.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && line.ends_with('>')
}

/// A line that is only a comment: `{/* … */}` or `<!-- … -->`.
fn is_comment_line(line: &str) -> bool {
    (line.starts_with("{/*") && line.ends_with("*/}"))
        || (line.starts_with("<!--") && line.ends_with("-->"))
}

/// A heading line without a trailing `{#id}` or `{/*id*/}`.
fn without_heading_id(line: &str) -> String {
    if let Some(open) = line.rfind('{') {
        let tail = &line[open..];
        if tail.ends_with('}') && (tail.starts_with("{#") || tail.starts_with("{/*")) {
            return line[..open].trim_end().to_owned();
        }
    }
    line.to_owned()
}

/// `first` before the first line, `rest` before the others (empty lines
/// stay empty, but for a quote's `>`).
fn prefix_lines(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let prefix = if i == 0 { first } else { rest };
        if line.is_empty() {
            out.push_str(prefix.trim_end());
        } else {
            out.push_str(prefix);
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(src: &str) -> String {
        let converted = to_markdown(src);
        assert_eq!(converted.warning, None, "{src}");
        converted.markdown
    }

    #[test]
    fn modules_expressions_and_comments_are_dropped() {
        let out = md("import Tabs from '@theme/Tabs';\nimport { x } from \"y\";\nexport const meta = {\n  a: 1,\n\n  b: [2, 3],\n};\n\n# Caching\n\n{/* a comment for editors */}\n\nRevalidate every {props.hours} hours{' '}or{\" \"}so.\n\n{frontMatter.description}\n");
        assert_eq!(out, "# Caching\n\nRevalidate every  hours or so.\n");
    }

    #[test]
    fn heading_ids_leave_the_heading_text() {
        let out = md("## Install the CLI {#install}\n\n### Config {/*config*/}\n\nText.\n");
        assert_eq!(out, "## Install the CLI\n\n### Config\n\nText.\n");
    }

    #[test]
    fn components_keep_their_content_and_admonitions_their_label() {
        let src = "<Note>\n  Keys are **case-sensitive**.\n</Note>\n\n<Warning title=\"Data loss\">\nThis deletes the volume.\n</Warning>\n\n<Callout type=\"info\">The cache is per region.</Callout>\n\n<Tip>\n\n```sh\nnpm i x\n```\n\n</Tip>\n\n<DocCardList />\n\n<Image src=\"a.png\" alt=\"diagram\" />\n";
        let out = md(src);
        assert_eq!(
            out,
            "**Note:**\nKeys are **case-sensitive**.\n\n**Data loss:**\nThis deletes the volume.\n\n**Info:** The cache is per region.\n\n**Tip:**\n\n```sh\nnpm i x\n```\n"
        );
    }

    #[test]
    fn tabs_keep_each_tab_with_its_label() {
        let src = "<Tabs groupId=\"pm\">\n  <TabItem value=\"npm\" label=\"npm\">\n\n```bash\nnpm install docshelf\n```\n\n  </TabItem>\n  <TabItem value=\"yarn\">\n\n```bash\nyarn add docshelf\n```\n\n  </TabItem>\n</Tabs>\n";
        assert_eq!(
            md(src),
            "**npm**\n\n```bash\nnpm install docshelf\n```\n\n**yarn**\n\n```bash\nyarn add docshelf\n```\n"
        );
    }

    #[test]
    fn docusaurus_admonitions_become_labels() {
        let src = ":::note\n\nSome **content** with Markdown.\n\n:::\n\n:::tip[Pro tip]\nUse the cache.\n:::\n\n:::danger Take care\n\n- one\n- two\n\n:::\n";
        assert_eq!(
            md(src),
            "**Note:**\nSome **content** with Markdown.\n\n**Pro tip:**\nUse the cache.\n\n**Take care:**\n\n- one\n- two\n"
        );
    }

    #[test]
    fn code_blocks_stay_whole_with_their_language() {
        let src = "Run:\n\n```jsx title=\"src/App.js\" {2}\nimport React from 'react';\n<Foo bar={1} />\n{/* not a comment here */}\n```\n\n````md\n```js\nx\n```\n````\n";
        assert_eq!(
            md(src),
            "Run:\n\n```jsx\nimport React from 'react';\n<Foo bar={1} />\n{/* not a comment here */}\n```\n\n````md\n```js\nx\n```\n````\n"
        );
    }

    #[test]
    fn front_matter_lists_tables_and_quotes_are_written_back() {
        let src = "---\ntitle: Routing\nsidebar_position: 2\n---\n\n# Routes\n\n1. First\n2. Second\n   - nested `code`\n\n| Option | Default |\n| --- | --- |\n| `a\\|b` | <code>none</code> |\n\n> Quoted *words*\n>\n> and more.\n\n- [x] done\n";
        assert_eq!(
            md(src),
            "---\ntitle: Routing\nsidebar_position: 2\n---\n\n# Routes\n\n1. First\n2. Second\n   - nested `code`\n\n| Option | Default |\n| --- | --- |\n| `a\\|b` | `none` |\n\n> Quoted *words*\n>\n> and more.\n\n- [x] done\n"
        );
        let doc = text::markdown(md(src).as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Routing"));
        assert!(doc.text.starts_with("# Routes\n"), "{}", doc.text);
    }

    #[test]
    fn invalid_mdx_is_read_line_by_line_and_not_lost() {
        let src = "---\ntitle: Old page\n---\nimport { Tabs } from 'nextra'\n\n# Cache {#cache}\n\n<!-- TODO: rewrite -->\n\n<Tabs items={['a']}>\nRevalidate <b>every</b> hour.\n<Tabs.Tab>Unclosed\n</Tabs>\n\n:::note\nKept.\n:::\n\n```js\nimport x from 'y'\n<Foo />\n```\n";
        let converted = to_markdown(src);
        let warning = converted.warning.expect("a warning");
        assert!(warning.contains("not valid MDX"), "{warning}");
        assert!(warning.contains("line 12"), "{warning}");
        assert_eq!(
            converted.markdown,
            "---\ntitle: Old page\n---\n\n\n# Cache\n\n\nRevalidate <b>every</b> hour.\n<Tabs.Tab>Unclosed\n\n**Note:**\nKept.\n\n```js\nimport x from 'y'\n<Foo />\n```\n"
        );
        let doc = text::markdown(converted.markdown.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Old page"));
    }

    #[test]
    fn links_keep_their_address_once() {
        let src = "See [http://localhost:3000/a](http://localhost:3000/a), https://x.org/b and [the *guide*](/guide).\n";
        assert_eq!(
            md(src),
            "See http://localhost:3000/a, https://x.org/b and [the *guide*](/guide).\n"
        );
    }

    #[test]
    fn html_comments_are_dropped_outside_code() {
        let src = "<!-- prettier-ignore -->\n# Blog post\n\nIntro.\n\n<!--\ntruncate\n-->\n\nMore <!-- inline --> text.\n\n```html\n<!-- kept -->\n```\n";
        assert_eq!(
            md(src),
            "# Blog post\n\nIntro.\n\nMore  text.\n\n```html\n<!-- kept -->\n```\n"
        );
    }

    #[test]
    fn pages_the_strict_parser_would_take_too_long_on_are_read_line_by_line() {
        let markers = format!("{}deep\n", "- ".repeat(4_000));
        let out = to_markdown(&markers);
        assert!(out.markdown.contains("deep"));
        assert!(
            out.warning
                .as_deref()
                .is_some_and(|w| w.contains("opens more than")),
            "{:?}",
            out.warning
        );
        let elements = format!("{}deep{}", "<A>".repeat(500), "</A>".repeat(500));
        let out = to_markdown(&elements);
        assert!(out
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("elements open")));
        let big = "Some prose.\n\n".repeat(30_000);
        let out = to_markdown(&big);
        assert!(out
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("larger than")));
        // Ordinary nesting is parsed.
        let emphasis = format!("{}x{}", "*".repeat(1_000), "*".repeat(1_000));
        let out = to_markdown(&emphasis);
        assert!(out
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("emphasis marks")));
        let fine =
            "> - 1. quoted list\n\n<Tabs><TabItem>x</TabItem></Tabs>\n\n---\n\n***bold italic***\n";
        assert_eq!(to_markdown(fine).warning, None);
    }

    /// markdown-rs 1.0 panics on this input (its issue 139); the page is
    /// read line by line instead of failing its upload.
    #[test]
    fn a_page_the_parser_panics_on_is_read_line_by_line() {
        let out = to_markdown("Hi <>\n=====\n\nMore text.\n");
        assert!(out.markdown.contains("More text."), "{}", out.markdown);
        assert!(out.warning.is_some());
    }

    /// API reference pages: TypeScript generics in code and in components'
    /// quoted or `{…}` props are text, not elements, however many there are.
    #[test]
    fn generics_in_code_and_props_are_not_counted_as_elements() {
        let prop = "<PropertiesTable content={[{ name: 'steps', type: 'Array<StepResult<TOOLS>>' }]} />\n\n";
        let quoted = "<Type name=\"Array<ToolCall<TOOLS>>\" />\n\n";
        let code = format!(
            "```ts\n{}```\n\n",
            "const x: Array<Promise<T>> = [];\n".repeat(200)
        );
        let inline = "Returns `Promise<Array<T>>`.\n\n";
        for page in [
            prop.repeat(150),
            quoted.repeat(150),
            code,
            inline.repeat(150),
        ] {
            let out = to_markdown(&page);
            assert_eq!(out.warning, None, "{}", &page[..80]);
        }
        // Unclosed tags inside a tag still count.
        let hostile = format!("<a{}", "<a".repeat(500));
        assert!(too_costly(&hostile).is_some());
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let quotes = format!("{}deep\n", "> ".repeat(5_000));
        let out = to_markdown(&quotes).markdown;
        assert!(out.contains("deep"), "{}", &out[..200.min(out.len())]);
        let tags = format!("{}deep\n{}", "<A>\n".repeat(2_000), "</A>\n".repeat(2_000));
        assert!(to_markdown(&tags).markdown.contains("deep"));
        let emphasis = format!("{}deep{}", "*a ".repeat(3_000), " a*".repeat(3_000));
        assert!(to_markdown(&emphasis).markdown.contains("deep"));
    }

    #[test]
    fn string_literals_only() {
        assert_eq!(string_literal("'<'"), Some("<"));
        assert_eq!(string_literal(" \"a b\" "), Some("a b"));
        assert_eq!(string_literal("`x ${y}`"), None);
        assert_eq!(string_literal("a + 'b'"), None);
        assert_eq!(string_literal("'a' + 'b'"), None);
    }
}
