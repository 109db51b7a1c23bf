//! Pages rustdoc generated (docs.rs serves one per item of every crate):
//! their main content is found as any page's is, but rustdoc repeats the
//! same boilerplate on every type's page, which would crowd real answers
//! out of searches: the auto-trait and blanket implementations (`Send`,
//! `Sync`, `Any`, `From<T>`… with the standard library's own docs), a
//! `Source` link beside every item, and the Rust version each standard
//! item is stable since. That is dropped before the content is read.
//!
//! Only a page whose `<meta name="generator">` says rustdoc is touched:
//! an ordinary page may well have a section slugged
//! `blanket-implementations`.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

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

/// Removes rustdoc's boilerplate from the parsed page. Iterative, so a
/// deep page costs no stack.
pub(super) fn drop_boilerplate(root: &Rc<Node>) {
    let mut stack = vec![Rc::clone(root)];
    while let Some(node) = stack.pop() {
        node.children.borrow_mut().retain(|c| !is_boilerplate(c));
        stack.extend(node.children.borrow().iter().cloned());
    }
}

fn is_boilerplate(node: &Node) -> bool {
    let NodeData::Element { name, attrs, .. } = &node.data else {
        return false;
    };
    let attrs = attrs.borrow();
    let value = |wanted: &str| {
        attrs
            .iter()
            .find(|a| a.name.local.as_ref() == wanted)
            .map_or("", |a| a.value.as_ref())
    };
    let class = value("class");
    let has_class = |c: &str| class.split_ascii_whitespace().any(|t| t == c);
    BOILERPLATE_IDS.contains(&value("id"))
        // "Source" links, and the "1.0.0 ·" stable-since marks.
        || has_class("rightside")
        || has_class("since")
        || (name.local.as_ref() == "a" && has_class("src"))
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
<div class="docblock"><p>A correctly sized stack allocation.</p></div>
<h2 id="implementations">Implementations</h2>
<section id="method.new" class="method"><a class="src rightside" href="../src/itoa/lib.rs.html#89">Source</a><h4 class="code-header">pub fn new() -&gt; Buffer</h4></section>
<div class="docblock"><p>This is a cheap operation.</p></div>
<section id="method.clone_from"><span class="rightside"><span class="since">1.0.0</span> · <a class="src" href="x">Source</a></span><h4>fn clone_from(&amp;mut self)</h4></section>
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
            "Struct Buffer",
            "cheap operation",
            "pub fn new()",
            r"fn clone\_from",
        ] {
            assert!(text.contains(kept), "{kept} is lost: {text}");
        }
        for dropped in [
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
