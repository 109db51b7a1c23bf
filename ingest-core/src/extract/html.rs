//! HTML to Markdown: the page's main content, without its chrome.
//!
//! A documentation page wraps its article in navigation, sidebars,
//! breadcrumbs, tables of contents, "edit this page" and "next" links and
//! footers, which would otherwise be indexed with every page of the site and
//! crowd real answers out of searches. So the article's container is kept
//! when the page has one obvious one (`<main>`, `[role=main]`, a single
//! `<article>`, or a known documentation theme's), and within what is kept
//! every element whose tag, role, class or id says it is chrome is dropped.
//!
//! Nesting is bounded. htmd walks the parsed page recursively, and a page of
//! 750 nested `<div>`s was reported to overflow a worker thread's stack and
//! take the whole server down; html5ever's scope checks are linear in the
//! depth of open elements, and a page of deep nesting was reported to take
//! minutes to parse (docs/benchmarks.md, "Hostile inputs, as reported"). So a
//! page that opens more than [`MAX_OPEN_DEPTH`] elements deep is refused
//! before parsing, and in a parsed page every element deeper than
//! [`MAX_DEPTH`] is replaced by its text (with a warning). No real
//! documentation page nests that deep. Every walk here is iterative.

use std::collections::HashMap;
use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

use super::{dom, rustdoc, text::decode, ExtractError, Extracted};

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

/// Elements whose content is never text to index, wherever they are.
const NEVER_TEXT: [&str; 8] = [
    "script", "style", "noscript", "template", "form", "button", "iframe", "svg",
];

/// Converts an HTML page's main content to Markdown, keeping headings,
/// lists, tables and code blocks, and takes `<title>` (else the first
/// `<h1>`) as the title and `<meta name="description">` as the description.
pub fn to_markdown(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    convert(bytes, true)
}

/// As [`to_markdown`], but the whole `<body>` less only its chrome tags
/// (`nav`, `header`, `footer`, `aside`, scripts, forms), as docshelf read
/// pages before it looked for the main content: the baseline for measuring
/// how much boilerplate that leaves out.
pub fn whole_page_markdown(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    convert(bytes, false)
}

fn convert(bytes: &[u8], main_only: bool) -> Result<Extracted, ExtractError> {
    let html = decode(bytes)?;
    let depth = open_depth(&html);
    if depth > MAX_OPEN_DEPTH {
        return Err(ExtractError::Html(format!(
            "the page nests elements {depth} deep (docshelf reads at most {MAX_OPEN_DEPTH})"
        )));
    }
    let title = element_text(&html, "title");
    let description = meta_description(&html);
    let skipped = if main_only {
        NEVER_TEXT.to_vec()
    } else {
        CHROME.to_vec()
    };
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(skipped)
        .add_handler(vec!["pre"], code_block)
        .build();
    let tree = converter
        .html_to_tree(&html)
        .map_err(|e| ExtractError::Html(e.to_string()))?;
    if main_only {
        if rustdoc::generated(meta_content(&html, "generator").as_deref()) {
            rustdoc::drop_boilerplate(&tree);
        }
        keep_main_content(&tree);
    }
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

/// A `<pre>` as a fenced code block. htmd fences only a `<pre>` holding a
/// single `<code>`; highlighters (Sphinx's Pygments, Material) put spans and
/// line numbers there, and unfenced code reads as Markdown: a `# comment`
/// would become a heading and the chunker could split the block.
fn code_block(
    _: &dyn htmd::element_handler::Handlers,
    element: htmd::Element,
) -> Option<htmd::element_handler::HandlerResult> {
    let mut code = String::new();
    let mut stack: Vec<Rc<Node>> = element
        .node
        .children
        .borrow()
        .iter()
        .rev()
        .cloned()
        .collect();
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Text { contents } => code.push_str(&contents.borrow()),
            NodeData::Element { .. } => {
                let skip = with_element(&node, |tag, attrs| {
                    if tag == "br" {
                        code.push('\n');
                    }
                    NEVER_TEXT.contains(&tag)
                        || attr(attrs, "class").is_some_and(|c| {
                            c.split_ascii_whitespace()
                                .any(|c| matches!(c, "linenos" | "lineno" | "linenodiv"))
                        })
                });
                if skip != Some(true) {
                    stack.extend(node.children.borrow().iter().rev().cloned());
                }
            }
            _ => {}
        }
    }
    let code = code.trim_end().trim_start_matches('\n');
    if code.trim().is_empty() {
        return Some(String::new().into());
    }
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let language = code_language(element.node).unwrap_or_default();
    Some(format!("\n\n{fence}{language}\n{code}\n{fence}\n\n").into())
}

/// The language a code block names in its classes (`language-rust`,
/// `lang-sh`, Sphinx's `highlight-python` two levels up), on the `<pre>`, its
/// `<code>` or the wrappers a highlighter puts around it.
fn code_language(pre: &Rc<Node>) -> Option<String> {
    let from = |node: &Node| {
        with_element(node, |_, attrs| {
            attr(attrs, "class")?
                .split_ascii_whitespace()
                .find_map(|c| {
                    let name = ["language-", "lang-", "highlight-"]
                        .iter()
                        .find_map(|p| c.strip_prefix(p))?;
                    let plain = !name.is_empty()
                        && name.chars().all(|c| {
                            c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_')
                        })
                        && !matches!(name, "default" | "none" | "text");
                    plain.then(|| name.to_ascii_lowercase())
                })
        })
        .flatten()
    };
    if let Some(language) = from(pre) {
        return Some(language);
    }
    let first_code = pre.children.borrow().iter().find_map(|c| {
        with_element(c, |tag, _| tag == "code")
            .unwrap_or(false)
            .then(|| Rc::clone(c))
    });
    if let Some(language) = first_code.and_then(|c| from(&c)) {
        return Some(language);
    }
    let mut at = parent_of(pre);
    for _ in 0..2 {
        let node = at?;
        if let Some(language) = from(&node) {
            return Some(language);
        }
        at = parent_of(&node);
    }
    None
}

fn parent_of(node: &Node) -> Option<Rc<Node>> {
    let weak = node.parent.take();
    let parent = weak.as_ref().and_then(std::rc::Weak::upgrade);
    node.parent.set(weak);
    parent
}

/// What choosing the container and pruning need to know about one node,
/// gathered in one pass so no question re-walks a subtree.
struct Info {
    node: Rc<Node>,
    /// The parent's index, `usize::MAX` for the root.
    parent: usize,
    /// Nodes in the subtree, itself included: in pre-order, the subtree of
    /// node `i` is `i..i + size`.
    size: usize,
    /// Visible characters below it, whitespace and scripts not counted.
    text: usize,
    /// Whether that text holds a letter or digit.
    words: bool,
    h1: bool,
    heading: bool,
    pre: bool,
    img: bool,
}

/// Every node of a parsed page in pre-order.
struct Survey {
    nodes: Vec<Info>,
    index: HashMap<*const Node, usize>,
}

impl Survey {
    fn of(root: &Rc<Node>) -> Self {
        let mut nodes: Vec<Info> = Vec::new();
        let mut stack = vec![(Rc::clone(root), usize::MAX, false)];
        while let Some((node, parent, silent)) = stack.pop() {
            let mut info = Info {
                node: Rc::clone(&node),
                parent,
                size: 1,
                text: 0,
                words: false,
                h1: false,
                heading: false,
                pre: false,
                img: false,
            };
            let mut silent = silent;
            match &node.data {
                NodeData::Text { contents } if !silent => {
                    let contents = contents.borrow();
                    info.text = contents.chars().filter(|c| !c.is_whitespace()).count();
                    info.words = contents.chars().any(char::is_alphanumeric);
                }
                NodeData::Element { name, .. } => {
                    let tag = name.local.as_ref();
                    info.h1 = tag == "h1";
                    info.heading = is_heading(tag);
                    info.pre = tag == "pre";
                    info.img = tag == "img";
                    silent |= NEVER_TEXT.contains(&tag);
                }
                _ => {}
            }
            let at = nodes.len();
            for child in node.children.borrow().iter().rev() {
                stack.push((Rc::clone(child), at, silent));
            }
            nodes.push(info);
        }
        // Children come after their parent, so a backward pass sums up.
        for i in (1..nodes.len()).rev() {
            let (size, text, words, h1, heading, pre, img) = {
                let n = &nodes[i];
                (n.size, n.text, n.words, n.h1, n.heading, n.pre, n.img)
            };
            let parent = nodes[i].parent;
            let p = &mut nodes[parent];
            p.size += size;
            p.text += text;
            p.words |= words;
            p.h1 |= h1;
            p.heading |= heading;
            p.pre |= pre;
            p.img |= img;
        }
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (Rc::as_ptr(&n.node), i))
            .collect();
        Survey { nodes, index }
    }

    fn contains(&self, outer: usize, inner: usize) -> bool {
        outer < inner && inner < outer + self.nodes[outer].size
    }

    fn info(&self, node: &Rc<Node>) -> Option<&Info> {
        self.index.get(&Rc::as_ptr(node)).map(|&i| &self.nodes[i])
    }
}

/// Cuts the page down to its main content: the chosen container alone (its
/// ancestors keep only the path to it), or the whole page where there is
/// none, then drops the chrome inside what is left.
fn keep_main_content(root: &Rc<Node>) {
    let survey = Survey::of(root);
    let Some(main) = main_container(&survey) else {
        prune_chrome(root, &survey, false);
        return;
    };
    let mut at = main;
    while let Some(parent) = survey.nodes.get(survey.nodes[at].parent) {
        *parent.node.children.borrow_mut() = vec![Rc::clone(&survey.nodes[at].node)];
        at = survey.nodes[at].parent;
    }
    prune_chrome(&survey.nodes[main].node, &survey, true);
}

/// The generic containers, each trusted only when the page has exactly one.
const GENERIC: usize = 3;

/// The index of the page's main content container, if it has one obvious one.
///
/// Candidates are the generic containers (`<main>`, `[role=main]`,
/// `<article>`), each kind only where it occurs once, and the containers of
/// known documentation themes; empty ones (filled in by scripts) do not
/// count. Themes nest them (Sphinx's `div.body` in `div.document`, Material's
/// article in `<main>`), and the innermost is the article itself. Where
/// several innermost ones lie side by side (a blog index of articles), the
/// innermost candidate holding them all is taken, and if none does the page
/// has no one main content: it is read whole, less its chrome.
fn main_container(survey: &Survey) -> Option<usize> {
    let mut counts = [0usize; GENERIC];
    let mut found: Vec<(usize, [bool; GENERIC], bool)> = Vec::new();
    for (i, info) in survey.nodes.iter().enumerate() {
        let Some((generic, theme)) = with_element(&info.node, |tag, attrs| {
            let role_main =
                attr(attrs, "role").is_some_and(|r| r.trim().eq_ignore_ascii_case("main"));
            let generic = [tag == "main", role_main, tag == "article"];
            (generic, is_theme_container(&info.node, tag, attrs))
        }) else {
            continue;
        };
        for (count, is) in counts.iter_mut().zip(generic) {
            *count += usize::from(is);
        }
        if theme || generic.contains(&true) {
            found.push((i, generic, theme));
        }
    }
    let candidates: Vec<usize> = found
        .into_iter()
        .filter(|&(i, generic, theme)| {
            survey.nodes[i].words
                && (theme
                    || generic
                        .iter()
                        .zip(counts)
                        .any(|(&is, count)| is && count == 1))
        })
        .map(|(i, _, _)| i)
        .collect();
    // In pre-order, a candidate holds another exactly when it holds the next.
    let innermost: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|&(k, &i)| {
            candidates
                .get(k + 1)
                .is_none_or(|&next| !survey.contains(i, next))
        })
        .map(|(_, &i)| i)
        .collect();
    let mut pick = match innermost[..] {
        [] => return None,
        [one] => one,
        [first, .., last] => candidates
            .iter()
            .rev()
            .find(|&&c| survey.contains(c, first) && survey.contains(c, last))
            .copied()?,
    };
    // A candidate holding a sliver of the one around it is not the article
    // (a stray `.markdown` snippet in `<main>`): take the one around it.
    while let Some(&outer) = candidates.iter().rev().find(|&&c| survey.contains(c, pick)) {
        if survey.nodes[outer].text <= SLIVER * survey.nodes[pick].text {
            break;
        }
        pick = outer;
    }
    // The article's title outside it (asciidoc keeps the h1 and the NAME
    // line of a manual page in `#header`, beside `#content`): the
    // container is widened to the nearest one around it that holds the
    // title, and the chrome pruning sorts out the rest.
    if !survey.nodes[pick].h1 {
        let mut at = survey.nodes[pick].parent;
        while let Some(outer) = survey.nodes.get(at) {
            if outer.h1 {
                pick = at;
                break;
            }
            at = outer.parent;
        }
    }
    Some(pick)
}

/// How many times more text the container around a candidate may hold
/// before the candidate is taken for a snippet rather than the article.
const SLIVER: usize = 10;

/// Whether an element is a known documentation theme's article container.
/// Only blocks count (Sphinx's `:doc:` links hold a `span.doc`), and the id
/// of a section that opens with a heading is its slug, not a container's.
fn is_theme_container(node: &Node, tag: &str, attrs: &[(&str, &str)]) -> bool {
    const IDS: [&str; 6] = [
        "main-content",
        "maincontent",
        "content",
        "docs-content",
        "doc-content",
        "article-body",
    ];
    const CLASSES: [&str; 13] = [
        // MkDocs Material
        "md-content__inner",
        "md-content",
        // Docusaurus (and Hugo Book's `.markdown`)
        "theme-doc-markdown",
        "markdown",
        // GitHub-style, GitBook (legacy), docsify
        "markdown-body",
        "markdown-section",
        // Read the Docs' Sphinx theme
        "rst-content",
        // VitePress, Docsy, PyData Sphinx theme, Antora
        "vp-doc",
        "td-content",
        "bd-article",
        "docs-content",
        "article-body",
        "page-content",
    ];
    if !matches!(tag, "div" | "main" | "article" | "section") {
        return false;
    }
    if attr(attrs, "itemprop").is_some_and(|v| v.trim().eq_ignore_ascii_case("articleBody")) {
        return true;
    }
    let id = attr(attrs, "id").map(|id| id.trim().to_ascii_lowercase());
    if id.is_some_and(|id| IDS.contains(&id.as_str())) && !first_element_is_heading(node) {
        return true;
    }
    attr(attrs, "class").is_some_and(|class| {
        class.split_ascii_whitespace().any(|c| {
            let c = c.to_ascii_lowercase();
            CLASSES.contains(&c.as_str())
                // Sphinx's basic themes: `div.body` in `div.document`.
                || (tag == "div" && matches!(c.as_str(), "body" | "document"))
                // Antora
                || (tag == "article" && c == "doc")
        })
    })
}

/// Drops every chrome element below `top` (never `top` itself). Code is not
/// looked into: nothing in a code block is chrome. Inside a heading only
/// permalinks go: mdBook wraps a heading's text in `<a class="header">`.
fn prune_chrome(top: &Rc<Node>, survey: &Survey, in_container: bool) {
    let mut stack = vec![(Rc::clone(top), false)];
    while let Some((node, in_heading)) = stack.pop() {
        node.children
            .borrow_mut()
            .retain(|child| !is_chrome(child, survey, in_container, in_heading));
        if in_heading {
            unwrap_self_links(&node);
        }
        for child in node.children.borrow().iter() {
            if let NodeData::Element { name, .. } = &child.data {
                let tag = name.local.as_ref();
                if !matches!(tag, "pre" | "code") {
                    stack.push((Rc::clone(child), in_heading || is_heading(tag)));
                }
            }
        }
    }
}

/// Replaces each link to a place on this page among `node`'s children by
/// what it holds, so a heading reads "Rules", not "[Rules](#rules)".
fn unwrap_self_links(node: &Node) {
    dom::unwrap_children(node, |n| {
        with_element(n, |tag, attrs| {
            tag == "a" && attr(attrs, "href").is_some_and(|h| h.trim().starts_with('#'))
        })
        .unwrap_or(false)
    });
}

/// Tags kept whatever their class or id says: the content's own structure.
/// Tables are not among them: DocBook and old Javadoc lay out their
/// navigation bars as `<table class="nav">`.
const STRUCTURE: [&str; 16] = [
    "html", "head", "body", "main", "article", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code",
    "thead", "tbody", "caption",
];

/// ARIA roles of page chrome.
const CHROME_ROLES: [&str; 9] = [
    "navigation",
    "banner",
    "contentinfo",
    "search",
    "complementary",
    "menu",
    "menubar",
    "toolbar",
    "dialog",
];

/// Class tokens of admonitions, which an `<aside>` may be.
const NOTE_WORDS: [&str; 16] = [
    "admonition",
    "note",
    "warning",
    "tip",
    "caution",
    "important",
    "callout",
    "info",
    "danger",
    "hint",
    "attention",
    "error",
    "alert",
    "notice",
    "seealso",
    "example",
];

/// Whether `node` is page chrome, to be dropped with all it holds.
fn is_chrome(node: &Rc<Node>, survey: &Survey, in_container: bool, in_heading: bool) -> bool {
    let Some(info) = survey.info(node) else {
        return false;
    };
    with_element(node, |tag, attrs| {
        element_is_chrome(node, tag, attrs, info, in_container, in_heading)
    })
    .unwrap_or(false)
}

fn element_is_chrome(
    node: &Node,
    tag: &str,
    attrs: &[(&str, &str)],
    info: &Info,
    in_container: bool,
    in_heading: bool,
) -> bool {
    let class = attr(attrs, "class").map(tokens).unwrap_or_default();
    match tag {
        t if NEVER_TEXT.contains(&t) => return true,
        "nav" | "footer" => return true,
        // An article's own header holds its title; a page's holds the site's.
        "header" => return !(in_container && info.heading),
        "aside" => return !class.iter().any(|t| NOTE_WORDS.contains(&t.as_str())),
        "a" => {
            let href = attr(attrs, "href").unwrap_or_default().trim();
            let rel = attr(attrs, "rel").unwrap_or_default().to_ascii_lowercase();
            let permalink = href.starts_with('#') && !info.words && !info.img;
            let empty = info.text == 0 && !info.img;
            let sequence = rel
                .split_ascii_whitespace()
                .any(|r| matches!(r, "next" | "prev" | "previous"));
            if permalink || empty || sequence || class.iter().any(|t| t == "headerlink") {
                return true;
            }
        }
        // A site's title as a heading linking home (Sphinx themes'
        // `<h1><a href="../index.html">Django 3.2 documentation</a></h1>`)
        // names the site, not the page.
        t if is_heading(t) && links_home_only(node) => return true,
        _ => {}
    }
    if in_heading || STRUCTURE.contains(&tag) {
        return false;
    }
    let role = attr(attrs, "role").is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|r| CHROME_ROLES.contains(&r.to_ascii_lowercase().as_str()))
    });
    let by_id = || {
        // A section's id is its heading's slug ("next-steps", "search"), so
        // it says nothing about chrome.
        let section = tag == "section"
            || class.iter().any(|t| t == "section")
            || first_element_is_heading(node);
        !section && attr(attrs, "id").is_some_and(|id| id_is_chrome(&tokens(id)))
    };
    if !(role || class_is_chrome(&class) || by_id()) {
        return false;
    }
    // A wrapper that holds the article's title or its code is layout, not
    // chrome ("has-sidebar", a theme's "nav-content"); a header holding a
    // heading is the article's header.
    let holds_content =
        info.h1 || info.pre || (info.heading && class.iter().any(|t| t == "header"));
    !holds_content
}

/// Whether `node`'s whole content is one link to a site's home page
/// (`index.html` at any depth, `/`, `./`, `../`).
fn links_home_only(node: &Node) -> bool {
    let children = node.children.borrow();
    let mut elements = children.iter().filter(|c| match &c.data {
        NodeData::Text { contents } => !contents.borrow().trim().is_empty(),
        NodeData::Element { .. } => true,
        _ => false,
    });
    let (Some(only), None) = (elements.next(), elements.next()) else {
        return false;
    };
    with_element(only, |tag, attrs| {
        let href = attr(attrs, "href").unwrap_or_default().trim();
        let home = href
            .trim_start_matches("./")
            .trim_start_matches("../")
            .trim_start_matches('/');
        tag == "a" && (home.is_empty() || home == "index.html")
    })
    .unwrap_or(false)
}

fn first_element_is_heading(node: &Node) -> bool {
    node.children
        .borrow()
        .iter()
        .find_map(|c| match &c.data {
            NodeData::Element { name, .. } => Some(is_heading(name.local.as_ref())),
            _ => None,
        })
        .unwrap_or(false)
}

fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Words that name chrome when they are a whole token of a class or id.
const CHROME_WORDS: [&str; 51] = [
    // DocBook XSL's Prev/Up/Home/Next bars.
    "navheader",
    "navfooter",
    // YUI grids' page header and footer (Django's documentation theme
    // puts the site's title link there).
    "hd",
    "ft",
    "sidebar",
    "sphinxsidebar",
    "sphinxsidebarwrapper",
    "sidebarwrapper",
    "sidenav",
    "toc",
    "breadcrumb",
    "breadcrumbs",
    "navbar",
    "nav",
    "navigation",
    "navlist",
    "topnav",
    "subnav",
    "menu",
    "menubar",
    "footer",
    "header",
    "headerlink",
    "pagination",
    "pager",
    "paginator",
    "prev",
    "previous",
    "next",
    "related",
    "skip",
    "skiplink",
    "copy",
    "clipboard",
    "copybtn",
    "copybutton",
    "cookie",
    "cookies",
    "consent",
    "search",
    "searchbox",
    "announcement",
    "banner",
    "edit",
    "editlink",
    "feedback",
    "social",
    "share",
    "copyright",
    "versions",
    // rustdoc's "Expand description" toggle.
    "hideme",
];

/// Tokens that say where or how chrome sits, not what it is; an id made
/// only of these and chrome words names chrome.
const LAYOUT_WORDS: [&str; 36] = [
    "left",
    "right",
    "top",
    "bottom",
    "main",
    "site",
    "page",
    "global",
    "local",
    "primary",
    "secondary",
    "wrapper",
    "wrap",
    "container",
    "inner",
    "outer",
    "mobile",
    "desktop",
    "area",
    "box",
    "bar",
    "panel",
    "links",
    "link",
    "list",
    "items",
    "item",
    "widget",
    "block",
    "region",
    "fixed",
    "sticky",
    "drawer",
    "content",
    "doc",
    "docs",
];

/// A class names chrome if any of its tokens is a chrome word, unless a
/// modifier says the element only has one ("has-sidebar", "no-toc").
fn class_is_chrome(tokens: &[String]) -> bool {
    tokens.iter().enumerate().any(|(i, t)| {
        CHROME_WORDS.contains(&t.as_str())
            && !(i > 0 && matches!(tokens[i - 1].as_str(), "has" | "with" | "no" | "without"))
    })
}

/// Ids are often slugs of content ("next-steps", "module.next"), so one
/// names chrome only if all its tokens are chrome or layout words.
fn id_is_chrome(tokens: &[String]) -> bool {
    tokens.iter().any(|t| CHROME_WORDS.contains(&t.as_str()))
        && tokens
            .iter()
            .all(|t| CHROME_WORDS.contains(&t.as_str()) || LAYOUT_WORDS.contains(&t.as_str()))
}

/// Phrases of several tokens that name one kind of chrome.
const PHRASES: [(&[&str], &str); 11] = [
    (&["table", "of", "contents"], "toc"),
    (&["on", "this", "page"], "toc"),
    (&["rel", "links"], "related"),
    (&["hash", "link"], "headerlink"),
    (&["anchorjs", "link"], "headerlink"),
    (&["sr", "only"], "skip"),
    (&["screen", "reader", "text"], "skip"),
    (&["visually", "hidden"], "skip"),
    (&["visuallyhidden"], "skip"),
    (&["last", "updated"], "edit"),
    (&["edit", "this", "page"], "edit"),
];

/// A class or id split into lowercase words: on every non-alphanumeric
/// character and at camelCase humps ("tocCollapsible" → toc, collapsible),
/// with the phrases of [`PHRASES`] made one token.
fn tokens(value: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut after_lower = false;
    for c in value.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            after_lower = false;
            continue;
        }
        if c.is_uppercase() && after_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        after_lower = c.is_lowercase() || c.is_numeric();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    'words: while i < words.len() {
        for (phrase, token) in PHRASES {
            let end = i + phrase.len();
            if end <= words.len() && words[i..end].iter().zip(phrase).all(|(w, p)| w == p) {
                out.push((*token).to_owned());
                i = end;
                continue 'words;
            }
        }
        out.push(std::mem::take(&mut words[i]));
        i += 1;
    }
    out
}

/// Calls `f` with an element's tag and its attributes as (name, value)
/// pairs (html5ever's attribute type is not exported by the crates docshelf
/// depends on); `None` for other nodes.
pub(super) fn with_element<R>(
    node: &Node,
    f: impl FnOnce(&str, &[(&str, &str)]) -> R,
) -> Option<R> {
    let NodeData::Element { name, attrs, .. } = &node.data else {
        return None;
    };
    let held = attrs.borrow();
    let pairs: Vec<(&str, &str)> = held
        .iter()
        .map(|a| (a.name.local.as_ref(), a.value.as_ref()))
        .collect();
    Some(f(name.local.as_ref(), &pairs))
}

/// The value of the attribute `name` (HTML attribute names are lowercase
/// once parsed).
fn attr<'a>(attrs: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
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
pub(super) fn open_depth(html: &str) -> usize {
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
    meta_content(html, "description")
}

/// The `content` of the page's `<meta name=NAME>` (`name` in lower case).
fn meta_content(html: &str, name: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let (double, single) = (format!("name=\"{name}\""), format!("name='{name}'"));
    let mut from = 0;
    while let Some(at) = lower[from..].find("<meta") {
        let start = from + at;
        let end = start + lower[start..].find('>')?;
        let tag = &lower[start..end];
        from = end;
        if !(tag.contains(&double) || tag.contains(&single)) {
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
    html_escape::decode_html_entities(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docbook_bars_site_title_links_and_title_references_are_cleaned() {
        let html = br#"<html><head><title>Formsets &#8212; Django &mdash; 3.2</title></head><body>
<div id="hd"><h1><a href="../index.html">Django 3.2.25 documentation</a></h1></div>
<div class="navheader"><table><tr><td><a href="a.html">Prev</a></td><td>Up</td><td><a href="n.html">Next</a></td></tr></table></div>
<h1>Formsets</h1><p>A formset is a layer of abstraction.</p>
<div class="navfooter"><a href="a.html">Prev</a> <a href="index.html">Home</a></div></body></html>"#;
        let doc = to_markdown(html).unwrap();
        assert_eq!(
            doc.title.as_deref(),
            Some("Formsets \u{2014} Django \u{2014} 3.2")
        );
        assert!(doc.text.starts_with("# Formsets"), "{}", doc.text);
        for chrome in ["Django 3.2.25 documentation", "Prev", "Next", "Home"] {
            assert!(!doc.text.contains(chrome), "{chrome}: {}", doc.text);
        }
    }

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

    /// Asserts that every `kept` text is in `text` and no `gone` text is.
    fn check(text: &str, kept: &[&str], gone: &[&str]) {
        for k in kept {
            assert!(text.contains(k), "{k:?} was lost:\n{text}");
        }
        for g in gone {
            assert!(!text.contains(g), "{g:?} leaked:\n{text}");
        }
    }

    #[test]
    fn a_sphinx_page_keeps_its_body_only() {
        let html = r##"<!DOCTYPE html><html><head><title>Configuration — Widget 2.1 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="Related">
  <h3>Navigation</h3>
  <ul><li class="right"><a href="genindex.html" title="General Index" accesskey="I">index</a></li>
  <li class="right"><a href="usage.html" title="Usage" accesskey="N">next</a> |</li>
  <li><a href="index.html">Widget 2.1 documentation</a> &#187;</li></ul>
</div>
<div class="document">
  <div class="documentwrapper"><div class="bodywrapper">
  <div class="body" role="main">
  <section id="configuration">
  <h1>Configuration<a class="headerlink" href="#configuration" title="Link to this heading">¶</a></h1>
  <p>Widget reads <code class="docutils literal notranslate"><span class="pre">widget.toml</span></code> at start.</p>
  <div class="admonition note"><p class="admonition-title">Note</p><p>Keys are case sensitive.</p></div>
  <section id="next-steps">
  <h2>Next steps<a class="headerlink" href="#next-steps" title="Link to this heading">¶</a></h2>
  <div class="highlight-toml notranslate"><div class="highlight"><pre><span></span><span class="n">threads</span> <span class="o">=</span> <span class="mi">4</span>
</pre></div></div>
  <table class="docutils align-default"><thead><tr class="row-odd"><th class="head"><p>Key</p></th><th class="head"><p>Default</p></th></tr></thead>
  <tbody><tr class="row-even"><td><p>threads</p></td><td><p>4</p></td></tr></tbody></table>
  </section>
  </section>
  </div></div></div>
  <div class="sphinxsidebar" role="navigation" aria-label="Main">
    <div class="sphinxsidebarwrapper">
    <h1 class="logo"><a href="index.html">Widget</a></h1>
    <h3>Table of Contents</h3><ul><li><a class="reference internal" href="#">Configuration</a></li></ul>
    <div role="note" aria-label="source link"><h3>This Page</h3><ul class="this-page-menu"><li><a href="_sources/config.rst.txt" rel="nofollow">Show Source</a></li></ul></div>
    <div id="searchbox" style="display: none" role="search"><h3 id="searchlabel">Quick search</h3>
    <form class="search" action="search.html" method="get"><input type="text" name="q"/><input type="submit" value="Go"/></form></div>
    </div>
  </div>
  <div class="clearer"></div>
</div>
<div class="footer">&#169; Copyright 2024, Widget Team. Created using <a href="https://www.sphinx-doc.org/">Sphinx</a> 7.2.6.</div>
</body></html>"##;
        let doc = to_markdown(html.as_bytes()).unwrap();
        assert_eq!(
            doc.title.as_deref(),
            Some("Configuration — Widget 2.1 documentation")
        );
        check(
            &doc.text,
            &[
                "# Configuration",
                "## Next steps",
                "widget.toml",
                "Keys are case sensitive.",
                "```toml\nthreads = 4\n```",
                "| threads |",
            ],
            &[
                "¶",
                "Navigation",
                "index",
                "next",
                "Table of Contents",
                "Show Source",
                "Quick search",
                "Copyright",
                "Widget 2.1 documentation",
            ],
        );
        assert!(doc.text.starts_with("# Configuration"), "{}", doc.text);
    }

    #[test]
    fn a_read_the_docs_page_keeps_its_article_body() {
        let html = r##"<html><body class="wy-body-for-nav"><div class="wy-grid-for-nav">
<nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-side-nav-search"><a href="index.html" class="icon icon-home">Widget</a></div>
<div class="wy-menu wy-menu-vertical" role="navigation"><p class="caption"><span class="caption-text">Contents</span></p></div></div></nav>
<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><nav class="wy-nav-top" aria-label="Mobile navigation menu"><a href="index.html">Widget</a></nav>
<div class="wy-nav-content"><div class="rst-content">
<div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="index.html">Home</a></li><li class="breadcrumb-item active">Install</li>
<li class="wy-breadcrumbs-aside"><a href="https://github.com/x/y/blob/main/docs/install.rst" class="fa fa-github"> Edit on GitHub</a></li></ul><hr/></div>
<div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article"><div itemprop="articleBody">
<section id="install"><h1>Install<a class="headerlink" href="#install" title="Permalink to this heading"></a></h1><p>Use pip to install the widget.</p></section>
</div></div>
<footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href="usage.html" class="btn btn-neutral float-right" title="Usage" accesskey="n" rel="next">Next <span class="fa fa-arrow-circle-right" aria-hidden="true"></span></a></div><hr/><div role="contentinfo"><p>&#169; Copyright 2024.</p></div></footer>
</div></div></section></div></body></html>"##;
        let doc = to_markdown(html.as_bytes()).unwrap();
        check(
            &doc.text,
            &["# Install", "Use pip to install the widget."],
            &[
                "Contents",
                "Home",
                "Edit on GitHub",
                "Next",
                "Copyright",
                "Widget",
            ],
        );
    }

    #[test]
    fn an_mkdocs_material_page_keeps_its_article() {
        let html = r##"<!doctype html><html lang="en"><head><title>Caching - Widget</title></head><body dir="ltr">
<a href="#caching" class="md-skip">Skip to content</a>
<div data-md-color-scheme="default" data-md-component="outdated" hidden></div>
<header class="md-header" data-md-component="header"><nav class="md-header__inner md-grid" aria-label="Header"><div class="md-header__title"><span class="md-ellipsis">Widget</span></div>
<div class="md-search" data-md-component="search" role="dialog"><label class="md-search__overlay" for="__search"></label><input type="text" class="md-search__input" placeholder="Search"></div></nav></header>
<div class="md-container" data-md-component="container">
<main class="md-main" data-md-component="main"><div class="md-main__inner md-grid">
<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar" data-md-type="navigation"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner">
<nav class="md-nav md-nav--primary" aria-label="Navigation"><label class="md-nav__title">Widget</label><ul class="md-nav__list"><li class="md-nav__item"><a href="../install/" class="md-nav__link">Install guide</a></li></ul></nav></div></div></div>
<div class="md-sidebar md-sidebar--secondary" data-md-component="sidebar" data-md-type="toc"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner">
<nav class="md-nav md-nav--secondary" aria-label="Table of contents"><label class="md-nav__title" for="__toc">Table of contents</label></nav></div></div></div>
<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">
<a href="https://github.com/x/y/edit/main/docs/caching.md" title="Edit this page" class="md-content__button md-icon"><svg viewBox="0 0 24 24"><path d="M10"></path></svg></a>
<h1 id="caching">Caching<a class="headerlink" href="#caching" title="Permanent link">&para;</a></h1>
<p>The cache keeps answers for an hour.</p>
<div class="admonition warning"><p class="admonition-title">Warning</p><p>Clear it after an upgrade.</p></div>
<h2 id="toc-settings">Settings<a class="headerlink" href="#toc-settings" title="Permanent link">&para;</a></h2>
<div class="highlight"><pre><span></span><code>cache:
  ttl: 3600
</code></pre></div>
<aside class="md-source-file"><span class="md-source-file__fact">Last update: 2024-05-01</span></aside>
</article></div></div></main>
<footer class="md-footer"><nav class="md-footer__inner md-grid" aria-label="Footer"><a href="../install/" class="md-footer__link md-footer__link--prev" aria-label="Previous: Install"><div class="md-footer__title"><span class="md-footer__direction">Previous</span><div class="md-ellipsis">Install guide</div></div></a></nav>
<div class="md-footer-meta md-typeset"><div class="md-copyright">Made with Material for MkDocs</div></div></footer></div>
</body></html>"##;
        let doc = to_markdown(html.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Caching - Widget"));
        check(
            &doc.text,
            &[
                "# Caching",
                "## Settings",
                "The cache keeps answers for an hour.",
                "Clear it after an upgrade.",
                "ttl: 3600",
            ],
            &[
                "¶",
                "Skip to content",
                "Search",
                "Install guide",
                "Table of contents",
                "Edit this page",
                "github.com",
                "Previous",
                "Last update",
                "Material for MkDocs",
            ],
        );
    }

    #[test]
    fn a_docusaurus_page_keeps_its_markdown() {
        let html = r##"<!doctype html><html><head><title>Plugins | Widget</title><meta name="description" content="Extend the widget."></head><body>
<div role="region" aria-label="Skip to main content"><a class="skipToContent_fXgn" href="#__docusaurus_skipToContent_fallback">Skip to main content</a></div>
<nav aria-label="Main" class="navbar navbar--fixed-top"><div class="navbar__inner"><a class="navbar__brand" href="/"><b class="navbar__title text--truncate">Widget</b></a><a class="navbar__item navbar__link" href="/docs/intro">Docs</a></div></nav>
<div id="__docusaurus_skipToContent_fallback" class="main-wrapper mainWrapper_z2l0"><div class="docsWrapper_hBAB"><div class="docRoot_UBD9">
<aside class="theme-doc-sidebar-container docSidebarContainer_YfHR"><div class="sidebarViewport_aRkj"><nav aria-label="Docs sidebar" class="menu thin-scrollbar menu_SIkG"><ul class="theme-doc-sidebar-menu menu__list"><li class="menu__list-item"><a class="menu__link" href="/docs/intro">Introduction</a></li></ul></nav></div></aside>
<main class="docMainContainer_TBSr"><div class="container padding-top--md padding-bottom--lg"><div class="row"><div class="col docItemCol_VOVn"><div class="docItemContainer_Djhp">
<article><nav class="theme-doc-breadcrumbs breadcrumbsContainer_Z_bl" aria-label="Breadcrumbs"><ul class="breadcrumbs"><li class="breadcrumbs__item"><a class="breadcrumbs__link" href="/"><span>Home page</span></a></li><li class="breadcrumbs__item breadcrumbs__item--active"><span class="breadcrumbs__link">Guides</span></li></ul></nav>
<div class="tocCollapsible_ETCw theme-doc-toc-mobile tocMobile_ITEo"><button type="button" class="clean-btn tocCollapsibleButton_TO0P">On this page</button></div>
<div class="theme-doc-markdown markdown"><header><h1>Plugins</h1></header>
<p>A plugin adds a command to the widget.</p>
<h2 class="anchor anchorWithStickyNavbar_LWe7" id="writing-one">Writing one<a href="#writing-one" class="hash-link" aria-label="Direct link to Writing one" title="Direct link to Writing one">&#8203;</a></h2>
<div class="theme-admonition theme-admonition-tip admonition_xJq3 alert alert--success"><div class="admonitionHeading_Gvgb">tip</div><div class="admonitionContent_BuS1"><p>Name plugins after their command.</p></div></div>
<div class="language-js codeBlockContainer_Ckt0 theme-code-block"><div class="codeBlockContent_biex"><pre tabindex="0" class="prism-code language-js codeBlock_bY9V"><code class="codeBlockLines_e6Vv"><span class="token-line">export default function plugin() {}</span></code></pre><div class="buttonGroup__atx"><button type="button" aria-label="Copy code to clipboard" title="Copy" class="clean-btn">Copy</button></div></div></div>
</div>
<footer class="theme-doc-footer docusaurus-mt-lg"><div class="theme-doc-footer-edit-meta-row row"><div class="col"><a href="https://github.com/x/y/edit/main/docs/plugins.md" target="_blank" rel="noopener noreferrer" class="theme-edit-this-page">Edit this page</a></div></div></footer></article>
<nav class="pagination-nav docusaurus-mt-lg" aria-label="Docs pages"><a class="pagination-nav__link pagination-nav__link--next" href="/docs/themes"><div class="pagination-nav__sublabel">Next</div><div class="pagination-nav__label">Themes</div></a></nav>
</div></div>
<div class="col col--3"><div class="tableOfContents_bqdL thin-scrollbar theme-doc-toc-desktop"><ul class="table-of-contents table-of-contents__left-border"><li><a href="#writing-one" class="table-of-contents__link toc-highlight">Writing one</a></li></ul></div></div>
</div></div></main></div></div></div>
<footer class="footer footer--dark"><div class="container container-fluid"><div class="footer__copyright">Copyright © 2024 Widget. Built with Docusaurus.</div></div></footer>
</body></html>"##;
        let doc = to_markdown(html.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Plugins | Widget"));
        assert_eq!(doc.description.as_deref(), Some("Extend the widget."));
        check(
            &doc.text,
            &[
                "# Plugins",
                "## Writing one",
                "A plugin adds a command to the widget.",
                "Name plugins after their command.",
                "export default function plugin() {}",
            ],
            &[
                "Skip to main content",
                "Docs",
                "Introduction",
                "Home page",
                "Guides",
                "On this page",
                "Direct link",
                "\u{200b}",
                "Copy",
                "Edit this page",
                "Next",
                "Themes",
                "Copyright",
            ],
        );
        // The heading's text stays once, without the table of contents' copy.
        assert_eq!(doc.text.matches("Writing one").count(), 1, "{}", doc.text);
    }

    #[test]
    fn a_page_without_a_container_loses_only_its_chrome() {
        let html = br##"<html><head><title>GIT-CHERRY-PICK(1)</title></head><body>
<div id="header"><h1>git-cherry-pick(1) Manual Page</h1></div>
<div id="toc" class="toc2"><div id="toctitle">Table of Contents</div><ul><li><a href="#_name">NAME</a></li></ul></div>
<div class="sect1"><h2 id="_name">NAME</h2><div class="sectionbody"><div class="paragraph"><p>git-cherry-pick - Apply the changes introduced by some existing commits</p></div></div></div>
<div class="sect1"><h2 id="_navigation">Navigation</h2><div class="sectionbody"><div class="listingblock"><div class="content"><pre>$ git cherry-pick master</pre></div></div>
<p class="menu-help">Pick from the <span class="menuselection">Tools &#8227; Git</span> menu.</p></div></div>
<div class="breadcrumbs"><a href="git.html">git</a> / cherry-pick</div>
<div id="footer"><div id="footer-text">Last updated 2024-01-01 10:00:00 UTC</div></div>
</body></html>"##;
        let doc = to_markdown(html).unwrap();
        check(
            &doc.text,
            &[
                "git-cherry-pick(1) Manual Page",
                "## NAME",
                "Apply the changes introduced",
                "## Navigation",
                "$ git cherry-pick master",
            ],
            &["Table of Contents", "Last updated", "git /"],
        );
        // Without a container, a paragraph classed "menu-…" is chrome; that
        // is the price of reading the whole page.
        assert!(!doc.text.contains("Pick from the"), "{}", doc.text);
        // The old reading of the whole page keeps the table of contents.
        let whole = whole_page_markdown(html).unwrap();
        assert!(whole.text.contains("Table of Contents"), "{}", whole.text);
    }

    #[test]
    fn a_title_outside_the_content_container_is_kept() {
        let html = br##"<html><head><title>git-add(1)</title></head><body>
<div id="header"><h1>git-add(1) Manual Page</h1><h2>NAME</h2><div class="sectionbody"><p>git-add - Add file contents to the index</p></div></div>
<div id="content"><div class="sect1"><h2 id="_synopsis">SYNOPSIS</h2><div class="sectionbody"><pre>git add [--verbose] [&lt;pathspec&gt;...]</pre></div></div></div>
<div id="footer"><div id="footer-text">Last updated 2024-01-01 10:00:00 UTC</div></div>
</body></html>"##;
        let doc = to_markdown(html).unwrap();
        check(
            &doc.text,
            &[
                "Add file contents to the index",
                "## SYNOPSIS",
                "git add [--verbose]",
            ],
            &["Last updated"],
        );
    }

    #[test]
    fn several_containers_are_resolved() {
        // Two articles in one <main>: the <main> holds them both.
        let html = br##"<body><nav>Site nav</nav><main><article><h2>First post</h2><p>One.</p></article>
<article><h2>Second post</h2><p>Two.</p></article></main><div class="sidebar">Archive</div></body>"##;
        let doc = to_markdown(html).unwrap();
        check(
            &doc.text,
            &["First post", "Second post"],
            &["Site nav", "Archive"],
        );
        // Two articles and nothing around them: the page is read whole.
        let html = br##"<body><div class="navbar">Top bar</div><article><p>One.</p></article>
<article><p>Two.</p></article><p>Between.</p></body>"##;
        let doc = to_markdown(html).unwrap();
        check(&doc.text, &["One.", "Two.", "Between."], &["Top bar"]);
        // A container left empty for scripts to fill is no container.
        let html = br##"<body><div id="content"></div><div class="sidebar">Side</div><p>Static text.</p></body>"##;
        let doc = to_markdown(html).unwrap();
        check(&doc.text, &["Static text."], &["Side"]);
    }

    #[test]
    fn chrome_tokens_are_whole_words() {
        let t = |s: &str| tokens(s);
        assert_eq!(t("md-sidebar--primary"), ["md", "sidebar", "primary"]);
        assert_eq!(t("tocCollapsible_ETCw"), ["toc", "collapsible", "etcw"]);
        assert_eq!(t("table-of-contents__link"), ["toc", "link"]);
        assert!(class_is_chrome(&t("wy-breadcrumbs")));
        assert!(class_is_chrome(&t("theme-edit-this-page")));
        assert!(!class_is_chrome(&t("has-sidebar")));
        assert!(!class_is_chrome(&t("protocol toctree-wrapper")));
        assert!(!class_is_chrome(&t("menuselection")));
        assert!(id_is_chrome(&t("left-sidebar")));
        assert!(id_is_chrome(&t("toc")));
        assert!(!id_is_chrome(&t("next-steps")));
        assert!(!id_is_chrome(&t("module.Iterator.next")));
    }

    #[test]
    fn linked_headings_stay_and_navigation_tables_go() {
        // mdBook links each heading's text to itself; DocBook lays out its
        // navigation bars as tables.
        let html = br##"<html><body><div><table class="nav" summary="Navigation header"><tr>
<td><a accesskey="p" href="index.html"><img src="prev.png" alt="Prev"></a></td><th>Valgrind Documentation</th></tr></table></div>
<main><h1 id="ownership"><a class="header" href="#ownership">What Is Ownership?</a></h1>
<p>Rules that govern memory.</p>
<h2 id="rules"><a class="header" href="#rules">Ownership Rules</a><a class="anchor" href="#rules">&#167;</a></h2>
<table><thead><tr><th>Rule</th></tr></thead><tbody><tr><td>One owner</td></tr></tbody></table>
</main>
<div class="navfooter"><table class="nav"><tr><td><a href="next.html">Next</a></td></tr></table></div>
</body></html>"##;
        let doc = to_markdown(html).unwrap();
        check(
            &doc.text,
            &[
                "# What Is Ownership?\n",
                "## Ownership Rules\n",
                "Rules that govern memory.",
                "One owner",
            ],
            &["§", "Valgrind Documentation", "Prev", "Next"],
        );
    }

    #[test]
    fn stray_containers_do_not_hide_the_article() {
        // Sphinx's `:doc:` link holds a `span.doc`; a section titled
        // "Content" has the id "content"; a short `.markdown` snippet sits
        // in a long `<main>`.
        let html = br##"<html><body><div class="sphinxsidebar">Side</div>
<div class="body" role="main"><section id="guide"><h1>Guide</h1>
<p>See <a class="reference internal" href="intro.html"><span class="doc">the intro</span></a> first.</p>
<section id="content"><h2>Content</h2><p>What a page holds.</p></section>
<p>More text after the section.</p></section></div></body></html>"##;
        let doc = to_markdown(html).unwrap();
        check(
            &doc.text,
            &[
                "# Guide",
                "the intro",
                "## Content",
                "More text after the section.",
            ],
            &["Side"],
        );
        let long = "Long reference text. ".repeat(40);
        let html = format!(
            r#"<body><nav>Menu</nav><main><div class="markdown"><p>A summary.</p></div><p>{long}</p></main></body>"#
        );
        let doc = to_markdown(html.as_bytes()).unwrap();
        check(
            &doc.text,
            &["A summary.", "Long reference text."],
            &["Menu"],
        );
    }
}
