//! Pages rustdoc generated (docs.rs serves one per item of every crate):
//! their main content is found as any page's is, but rustdoc repeats the
//! same boilerplate on every type's page, which would crowd real answers
//! out of searches: the auto-trait and blanket implementations (`Send`,
//! `Sync`, `Any`, `From<T>`… with the standard library's own docs), a
//! `Source` link beside every item, and the Rust version each standard
//! item is stable since, and under each trait a type implements, the
//! trait's own methods with their docs copied from the trait (an iterator
//! type carries seventy-odd `Iterator` methods). That is dropped before the
//! content is read; the trait implementations themselves stay listed.
//!
//! Item signatures are headings: their links become plain text (a heading
//! path reads `impl Error > pub fn is<E>(&self) -> bool`), and a `where`
//! clause starts its own line.
//!
//! Only a page whose `<meta name="generator">` says rustdoc is touched:
//! an ordinary page may well have a section slugged
//! `blanket-implementations`.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

use super::dom;

/// The ids of the sections rustdoc writes on every type's page.
const BOILERPLATE_IDS: [&str; 4] = [
    "synthetic-implementations",
    "synthetic-implementations-list",
    "blanket-implementations",
    "blanket-implementations-list",
];

/// Whether a page whose `<meta name="generator">` says `generator` was
/// written by rustdoc.
pub(super) fn generated(generator: Option<&str>) -> bool {
    generator.is_some_and(|g| g.trim().eq_ignore_ascii_case("rustdoc"))
}

/// Removes rustdoc's boilerplate from the parsed page, and makes its
/// signatures plain. Iterative, so a deep page costs no stack.
pub(super) fn drop_boilerplate(root: &Rc<Node>) {
    let mut stack = vec![(Rc::clone(root), Place::Page)];
    while let Some((node, place)) = stack.pop() {
        node.children
            .borrow_mut()
            .retain(|c| !is_boilerplate(c, place));
        let place = place.inside(&node);
        if place == Place::Signature {
            unwrap_links(&node);
        }
        strip_link_titles(&node);
        if classes(&node).iter().any(|c| c == "where") {
            line_before(&node);
        }
        stack.extend(node.children.borrow().iter().map(|c| (Rc::clone(c), place)));
    }
}

/// Where a node lies on the page, for what is dropped there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Page,
    /// Under the "Trait Implementations" list.
    TraitImpls,
    /// In an item's signature (`.code-header`).
    Signature,
}

impl Place {
    /// The place of `node`'s children.
    fn inside(self, node: &Node) -> Self {
        match (
            id(node).as_deref(),
            classes(node).iter().any(|c| c == "code-header"),
        ) {
            (_, true) => Self::Signature,
            (Some("trait-implementations-list"), _) => Self::TraitImpls,
            _ => self,
        }
    }
}

fn attr(node: &Node, wanted: &str) -> Option<String> {
    let NodeData::Element { attrs, .. } = &node.data else {
        return None;
    };
    let attrs = attrs.borrow();
    attrs
        .iter()
        .find(|a| a.name.local.as_ref() == wanted)
        .map(|a| a.value.to_string())
}

fn id(node: &Node) -> Option<String> {
    attr(node, "id")
}

fn classes(node: &Node) -> Vec<String> {
    attr(node, "class")
        .map(|c| c.split_ascii_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn tag(node: &Node) -> Option<String> {
    match &node.data {
        NodeData::Element { name, .. } => Some(name.local.to_string()),
        _ => None,
    }
}

/// Replaces each link among `node`'s children by the link's own content.
fn unwrap_links(node: &Node) {
    dom::unwrap_children(node, |child| tag(child).as_deref() == Some("a"));
}

/// Drops the `title` of `node`, when it is a link: rustdoc titles every
/// link (`struct anyhow::Chain`), which would sit in the text as
/// Markdown link titles.
fn strip_link_titles(node: &Node) {
    if let NodeData::Element { name, attrs, .. } = &node.data {
        if name.local.as_ref() == "a" {
            attrs
                .borrow_mut()
                .retain(|a| a.name.local.as_ref() != "title");
        }
    }
}

/// Starts `node`'s first text on a line of its own: a `where` clause is a
/// block in the page, but its text would otherwise run on from the
/// signature's (`-> Twhere`), in code blocks above all.
fn line_before(node: &Node) {
    let first = node.children.borrow().first().cloned();
    if let Some(first) = first {
        if let NodeData::Text { contents } = &first.data {
            let mut text = contents.borrow_mut();
            let old = text.to_string();
            text.clear();
            text.push_slice("\n");
            text.push_slice(&old);
        }
    }
}

fn is_boilerplate(node: &Node, place: Place) -> bool {
    let Some(tag) = tag(node) else {
        return false;
    };
    let classes = classes(node);
    let has_class = |c: &str| classes.iter().any(|t| t == c);
    id(node).is_some_and(|id| BOILERPLATE_IDS.contains(&id.as_str()))
        // "Source" links, and the "1.0.0 ·" stable-since marks.
        || has_class("rightside")
        || has_class("since")
        || (tag == "a" && has_class("src"))
        // A trait's methods under its implementation, their docs the
        // trait's own.
        || (place == Place::TraitImpls && has_class("impl-items"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rustdoc_pages_are_recognised() {
        assert!(generated(Some("rustdoc")));
        assert!(generated(Some(" Rustdoc ")));
        assert!(!generated(Some("Sphinx 7.2")));
        assert!(!generated(None));
    }

    /// The shape of rustdoc 1.95's pages, cut down.
    const PAGE: &str = r##"<html><head><meta name="generator" content="rustdoc"><title>Buffer in itoa - Rust</title></head><body>
<nav class="sidebar"><a href="#synthetic-implementations">Auto Trait Implementations</a></nav>
<main><section id="main-content" class="content"><div class="main-heading"><h1>Struct Buffer</h1>
<span class="sub-heading"><a class="src" href="../src/itoa/lib.rs.html#63">Source</a></span></div>
<pre class="rust item-decl"><code>pub fn twice&lt;T&gt;(t: T) -&gt; T<div class="where">where
    T: Clone,</div></code></pre>
<div class="docblock"><p>A correctly sized stack allocation.</p></div>
<h2 id="implementations">Implementations</h2>
<section id="method.new" class="method"><a class="src rightside" href="../src/itoa/lib.rs.html#89">Source</a><h4 class="code-header">pub fn new() -&gt; Buffer</h4></section>
<div class="docblock"><p>This is a cheap operation.</p></div>
<section id="method.slot" class="method"><h4 class="code-header">pub fn slot(&amp;self) -&gt; <a class="struct" href="struct.Slot.html"><span>Slot</span></a></h4></section>
<section id="method.clone_from"><span class="rightside"><span class="since">1.0.0</span> · <a class="src" href="x">Source</a></span><h4>fn clone_from(&amp;mut self)</h4></section>
<section id="method.is"><h4 class="code-header">pub fn <a href="#method.is" class="fn">is</a>&lt;E&gt;(&amp;self) -&gt; <a class="primitive" href="https://doc.rust-lang.org/core/primitive.bool.html" title="primitive bool">bool</a><div class="where">where
    E: <a class="trait" href="x" title="trait Display">Display</a>,</div></h4></section>
<p>See <a href="struct.Chain.html" title="struct anyhow::Chain">Chain</a>.</p>
<h2 id="trait-implementations">Trait Implementations</h2>
<div id="trait-implementations-list"><details><summary><section class="impl"><h3 class="code-header">impl <a href="x">Iterator</a> for Chain</h3></section></summary>
<div class="impl-items"><h4 class="code-header">fn size_hint(&amp;self)</h4><div class="docblock">Returns the bounds on the remaining length. <a href="y">Read more</a></div></div></details></div>
<h2 id="synthetic-implementations">Auto Trait Implementations</h2>
<div id="synthetic-implementations-list"><h3>impl Send for Buffer</h3></div>
<h2 id="blanket-implementations">Blanket Implementations</h2>
<div id="blanket-implementations-list"><h3>impl&lt;T&gt; Any for T</h3><p>Gets the TypeId of self.</p></div>
</section></main></body></html>"##;

    #[test]
    fn rustdoc_boilerplate_is_left_out_and_the_docs_kept() {
        let read = |html: &str| {
            let got = crate::extract::extract("page.html", html.as_bytes(), &Default::default());
            got.map(|x| x.documents[0].text.clone()).unwrap_or_default()
        };
        let text = read(PAGE);
        for kept in [
            "impl Iterator for Chain",
            "pub fn is\\<E>(&self) -> bool",
            "where E: Display",
            "-> T\nwhere\n    T: Clone,",
            "[Chain](struct.Chain.html)",
            "Struct Buffer",
            "cheap operation",
            "pub fn new()",
            // A link in a signature is unwrapped with what it holds.
            "pub fn slot(&self) -> Slot",
            r"fn clone\_from",
        ] {
            assert!(text.contains(kept), "{kept} is lost: {text}");
        }
        for dropped in [
            "size\\_hint",
            "remaining length",
            "primitive bool",
            "doc.rust-lang.org",
            "Auto Trait",
            "impl Send",
            "Blanket",
            "TypeId",
            "Source",
            "1.0.0",
        ] {
            assert!(!text.contains(dropped), "{dropped} is kept: {text}");
        }
        // The same page from another generator keeps what it says.
        let other = read(&PAGE.replace("rustdoc", "Sphinx"));
        assert!(other.contains("Blanket Implementations"), "{other}");
    }
}
