//! HTML to Markdown, without the page chrome.
//!
//! Nesting is bounded. htmd walks the parsed page recursively, and a page of
//! 750 nested `<div>`s was reported to overflow a worker thread's stack and
//! take the whole server down; html5ever's scope checks are linear in the
//! depth of open elements, and a page of deep nesting was reported to take
//! minutes to parse (docs/benchmarks.md, "Hostile inputs, as reported"). So a
//! page that opens more than [`MAX_OPEN_DEPTH`] elements deep is refused
//! before parsing, and in a parsed page every element deeper than
//! [`MAX_DEPTH`] is replaced by its text (with a warning). No real
//! documentation page nests that deep.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

use super::{text::decode, ExtractError, Extracted};

/// Elements below this depth of the parsed page are read as plain text.
pub const MAX_DEPTH: usize = 200;

/// A page whose tags open deeper than this is refused unparsed.
pub const MAX_OPEN_DEPTH: usize = 4096;

/// Elements that are never documentation content: scripts, styles, and the
/// navigation chrome around an article.
const CHROME: [&str; 12] = [
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "button", "iframe", "svg",
];

/// Converts an HTML page to Markdown, keeping headings, lists, tables and
/// code blocks, and takes `<title>` (else the first `<h1>`) as the title and
/// `<meta name="description">` as the description.
pub fn to_markdown(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let html = decode(bytes)?;
    let depth = open_depth(&html);
    if depth > MAX_OPEN_DEPTH {
        return Err(ExtractError::Html(format!(
            "the page nests elements {depth} deep (docshelf reads at most {MAX_OPEN_DEPTH})"
        )));
    }
    let title = element_text(&html, "title");
    let description = meta_description(&html);
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(CHROME.to_vec())
        .build();
    let tree = converter
        .html_to_tree(&html)
        .map_err(|e| ExtractError::Html(e.to_string()))?;
    let mut warnings = Vec::new();
    if flatten_below(&tree, MAX_DEPTH) {
        warnings.push(format!(
            "elements nested more than {MAX_DEPTH} deep were read as plain text"
        ));
    }
    let markdown = converter.tree_to_markdown(&tree);
    // The converter keeps <head>'s title as a line of text; it is metadata.
    let mut text = markdown.trim().to_owned();
    if let Some(t) = &title {
        if let Some(rest) = text.strip_prefix(t.as_str()) {
            text = rest.trim_start().to_owned();
        }
    }
    text.push('\n');
    let title = title.or_else(|| element_text(&html, "h1"));
    Ok(Extracted {
        file_path: String::new(),
        title,
        description,
        text,
        pages: Vec::new(),
        warnings,
    })
}

/// Replaces the children of every node at `max` depth by the text nodes
/// below it, in document order. Iterative, so depth costs no stack.
/// Returns whether anything was flattened.
fn flatten_below(root: &Rc<Node>, max: usize) -> bool {
    let mut flattened = false;
    let mut stack = vec![(Rc::clone(root), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= max {
            let has_elements = node
                .children
                .borrow()
                .iter()
                .any(|c| !matches!(c.data, NodeData::Text { .. }));
            if has_elements {
                let texts = descendant_texts(&node);
                // The old subtree is dropped iteratively by rcdom.
                *node.children.borrow_mut() = texts;
                flattened = true;
            }
            continue;
        }
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
    flattened
}

/// The text nodes below `node`, in document order.
fn descendant_texts(node: &Rc<Node>) -> Vec<Rc<Node>> {
    let mut out = Vec::new();
    let mut stack: Vec<Rc<Node>> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match n.data {
            NodeData::Text { .. } => out.push(n),
            NodeData::Element { ref name, .. } if CHROME.contains(&name.local.as_ref()) => {}
            _ => stack.extend(n.children.borrow().iter().rev().cloned()),
        }
    }
    out
}

/// Elements that never hold others (no end tag).
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements whose end tag is often left out: opening one right inside
/// another of its kind closes that one.
const IMPLIED_END: [&str; 10] = [
    "p", "li", "dt", "dd", "option", "tr", "td", "th", "tbody", "thead",
];

/// Block elements: opening one closes an open `<p>` (a paragraph cannot
/// hold blocks).
const BLOCK: [&str; 31] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "dialog",
    "div",
    "dl",
    "dd",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// How deep the page's tags open, by a scan of the source: a stack of
/// open elements, void elements and comments skipped, a close tag popping
/// to its element, and an element with an optional end tag closing one of
/// its kind directly above it. Sloppy pages may count a little deep; the
/// limit it is checked against is twenty times [`MAX_DEPTH`].
fn open_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let mut stack: Vec<String> = Vec::new();
    let (mut deepest, mut at) = (0usize, 0usize);
    while let Some(offset) = html[at..].find('<') {
        let start = at + offset;
        let rest = &html[start..];
        if rest.starts_with("<!--") {
            at = rest.find("-->").map_or(html.len(), |e| start + e + 3);
            continue;
        }
        let end = rest.find('>').map_or(html.len(), |e| start + e + 1);
        at = end;
        let closing = bytes.get(start + 1) == Some(&b'/');
        let name: String = html[start + 1 + usize::from(closing)..end]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if name.is_empty() {
            continue;
        }
        if closing {
            if let Some(i) = stack.iter().rposition(|n| *n == name) {
                stack.truncate(i);
            }
            continue;
        }
        if VOID.contains(&name.as_str()) || html[start..end].ends_with("/>") {
            continue;
        }
        if BLOCK.contains(&name.as_str()) && stack.last().is_some_and(|n| n == "p") {
            stack.pop();
        }
        if IMPLIED_END.contains(&name.as_str()) && stack.last() == Some(&name) {
            stack.pop();
        }
        if matches!(name.as_str(), "script" | "style" | "textarea" | "title") {
            // Raw text: skip to its end tag.
            let close = format!("</{name}");
            at = html[at..]
                .to_ascii_lowercase()
                .find(&close)
                .map_or(html.len(), |e| at + e);
            continue;
        }
        stack.push(name);
        deepest = deepest.max(stack.len());
    }
    deepest
}

/// The text of the first `<tag>` element, tags inside it removed and
/// whitespace collapsed.
fn element_text(html: &str, tag: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = format!("<{tag}");
    let start = lower.match_indices(&open).map(|(i, _)| i).find(|&i| {
        matches!(
            lower.as_bytes().get(i + open.len()),
            Some(b'>' | b' ' | b'\t' | b'\n')
        )
    })?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find(&format!("</{tag}>"))?;
    let inner = strip_tags(&html[open_end..close]);
    let text = inner.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then(|| decode_entities(&text))
}

/// The `content` of `<meta name="description" …>`.
fn meta_description(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<meta") {
        let start = from + at;
        let end = start + lower[start..].find('>')?;
        let tag = &lower[start..end];
        from = end;
        if !(tag.contains("name=\"description\"") || tag.contains("name='description'")) {
            continue;
        }
        let quoted = |q: char| {
            let key = format!("content={q}");
            let at = tag.find(&key)? + key.len();
            let len = tag[at..].find(q)?;
            // Same offsets in the original-case text.
            Some(html[start + at..start + at + len].to_owned())
        };
        let content = quoted('"').or_else(|| quoted('\''))?;
        let content = content.split_whitespace().collect::<Vec<_>>().join(" ");
        return (!content.is_empty()).then(|| decode_entities(&content));
    }
    None
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn decode_entities(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_structure_and_drops_chrome() {
        let html = br#"<html><head><title>Guide &amp; more</title><style>p{}</style></head>
<body><nav><a href="/">Home</a> | Menu</nav>
<h1>Install</h1><p>Run the <code>setup</code> script.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code class="language-sh">make run
make test</code></pre>
<script>alert('x')</script><footer>Copyright</footer></body></html>"#;
        let doc = to_markdown(html).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Guide & more"));
        assert_eq!(doc.description, None);
        assert!(doc.text.contains("# Install"), "{}", doc.text);
        assert!(doc.text.contains("`setup`"), "{}", doc.text);
        assert!(
            doc.text.contains("one") && doc.text.contains("two"),
            "{}",
            doc.text
        );
        assert!(doc.text.contains("```"), "{}", doc.text);
        assert!(doc.text.contains("make run\nmake test"), "{}", doc.text);
        for chrome in ["alert", "Menu", "Copyright", "p{}"] {
            assert!(!doc.text.contains(chrome), "{chrome} leaked: {}", doc.text);
        }
    }

    #[test]
    fn deep_nesting_is_read_as_text_without_exhausting_the_stack() {
        // 750 levels overflowed a worker's 2 MB stack before; run it on a
        // thread with a smaller one to prove the walk no longer recurses
        // that deep.
        let depth = 3000;
        let html = format!(
            "<html><body><h1>Deep</h1>{}needle text{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let doc = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || to_markdown(html.as_bytes()))
            .expect("thread")
            .join()
            .expect("no stack overflow")
            .expect("extracted");
        assert!(doc.text.contains("needle text"), "{}", doc.text);
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
    }

    #[test]
    fn absurd_nesting_is_refused_before_parsing() {
        let html = format!("<body>{}x", "<section>".repeat(MAX_OPEN_DEPTH + 1));
        let started = std::time::Instant::now();
        let err = to_markdown(html.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("nests elements"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Sloppy but ordinary pages are not refused: unclosed items and
        // paragraphs close themselves.
        let list = format!("<ul>{}</ul>", "<li><p>item".repeat(5000));
        assert!(open_depth(&list) < 10, "{}", open_depth(&list));
        assert!(to_markdown(list.as_bytes()).is_ok());
    }

    #[test]
    fn without_a_title_the_first_h1_names_the_page_and_meta_describes_it() {
        let html =
            br#"<html><head><meta name="description" content="Keep   your &amp; data"></head>
<body><h1 class="x">Backup <em>and</em> restore</h1><p>Text.</p></body></html>"#;
        let doc = to_markdown(html).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Backup and restore"));
        assert_eq!(doc.description.as_deref(), Some("Keep your & data"));
    }
}
