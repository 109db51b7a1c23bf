//! The links of an HTML page, for a crawler.
//!
//! Unlike the text (see `html.rs`), links come from the whole page: a
//! documentation site is reached through its navigation, even though the
//! index leaves that navigation out. Resolving them against the page's
//! address is the caller's business; this reads only what the page says.

use std::collections::HashSet;
use std::rc::Rc;

use markup5ever_rcdom::Node;

use super::html::{open_depth, with_element, MAX_OPEN_DEPTH};
use super::text::decode;

/// What a page says about where it lives and where it leads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// `<base href>`, if the page sets one (relative links resolve against it).
    pub base: Option<String>,
    /// `<link rel="canonical" href>`: the page's preferred address.
    pub canonical: Option<String>,
    /// Every `<a href>` (and `<area href>`) in document order, raw as
    /// written (trimmed, entities decoded), duplicates removed; `rel=nofollow`
    /// links excluded; `javascript:`, `mailto:`, `tel:`, `data:` and
    /// fragment-only (`#x`) hrefs excluded.
    pub hrefs: Vec<String>,
    /// `<meta name="robots" content="noindex">` (or "none"): the page asks not to be indexed.
    pub noindex: bool,
    /// `<meta name="robots" content="nofollow">` (or "none"): the page asks its links not be followed.
    pub nofollow: bool,
}

/// The links of the HTML page `bytes`. A page that cannot be decoded, or
/// that nests so deep that text extraction refuses it, yields none: a
/// hostile page should not steer a crawl.
pub fn page_links(bytes: &[u8]) -> PageLinks {
    let mut links = PageLinks::default();
    let Ok(html) = decode(bytes) else {
        return links;
    };
    if open_depth(&html) > MAX_OPEN_DEPTH {
        return links;
    }
    let Ok(tree) = htmd::HtmlToMarkdown::new().html_to_tree(&html) else {
        return links;
    };
    let mut seen = HashSet::new();
    // `tree` stays held: rcdom empties a dropped node's whole subtree, even
    // the parts still on the stack.
    let mut stack: Vec<Rc<Node>> = vec![Rc::clone(&tree)];
    while let Some(node) = stack.pop() {
        with_element(&node, |tag, attrs| {
            read_element(tag, attrs, &mut links, &mut seen)
        });
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    links
}

fn read_element(
    tag: &str,
    attrs: &[(&str, &str)],
    links: &mut PageLinks,
    seen: &mut HashSet<String>,
) {
    let get = |name: &str| attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let href = get("href").map(str::trim);
    let rel_has = |word: &str| {
        get("rel").is_some_and(|rel| {
            rel.split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case(word))
        })
    };
    match tag {
        "base" if links.base.is_none() => {
            links.base = href.filter(|h| !h.is_empty()).map(str::to_owned);
        }
        "link" if links.canonical.is_none() && rel_has("canonical") => {
            links.canonical = href.filter(|h| !h.is_empty()).map(str::to_owned);
        }
        "meta" if get("name").is_some_and(|n| n.trim().eq_ignore_ascii_case("robots")) => {
            let content = get("content").unwrap_or_default().to_ascii_lowercase();
            for directive in content.split([',', ' ', '\t', '\n']) {
                match directive {
                    "noindex" => links.noindex = true,
                    "nofollow" => links.nofollow = true,
                    "none" => (links.noindex, links.nofollow) = (true, true),
                    _ => {}
                }
            }
        }
        "a" | "area" => {
            let Some(href) = href else { return };
            if followable(href) && !rel_has("nofollow") && seen.insert(href.to_owned()) {
                links.hrefs.push(href.to_owned());
            }
        }
        _ => {}
    }
}

/// Whether an href can lead to another page: not empty, not a fragment of
/// this one, not a script, an address or inline data.
fn followable(href: &str) -> bool {
    if href.is_empty() || href.starts_with('#') {
        return false;
    }
    // Browsers (and the url crate) ignore tabs and newlines inside a URL, so
    // "java\tscript:" is still a script.
    let start: String = href
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take(11)
        .collect::<String>()
        .to_ascii_lowercase();
    !["javascript:", "mailto:", "tel:", "data:"]
        .iter()
        .any(|scheme| start.starts_with(scheme))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_canonical_and_links_in_document_order() {
        let page = br#"<!doctype html><html><head>
<base href="https://docs.example.com/v2/">
<link rel="stylesheet" href="/style.css">
<link rel="Canonical" href=" https://docs.example.com/v2/guide/ ">
</head><body>
<nav><a href="/v2/">Home</a> <a href="install.html">Install</a></nav>
<main><p>See <a href="guide/config.html#options">options</a> and
<a href="install.html">install</a> again.</p>
<map><area href="map.html" alt="map"></map></main>
<footer><a href="https://example.com/about">About</a></footer>
</body></html>"#;
        let links = page_links(page);
        assert_eq!(links.base.as_deref(), Some("https://docs.example.com/v2/"));
        assert_eq!(
            links.canonical.as_deref(),
            Some("https://docs.example.com/v2/guide/")
        );
        assert_eq!(
            links.hrefs,
            [
                "/v2/",
                "install.html",
                "guide/config.html#options",
                "map.html",
                "https://example.com/about"
            ]
        );
        assert!(!links.noindex && !links.nofollow);
    }

    #[test]
    fn excluded_schemes_fragments_and_nofollow_links_are_left_out() {
        let page = br##"<body>
<a href="#top">Top</a><a href="">self</a><a>no href</a>
<a href="javascript:void(0)">js</a><a href=" JavaScript:alert(1)">js</a>
<a href="java&#9;script:alert(1)">js</a>
<a href="mailto:team@example.com">mail</a><a href="tel:+1555">call</a>
<a href="data:text/html,hi">data</a>
<a href="/sponsor" rel="sponsored nofollow">ad</a>
<a href="/kept" rel="noopener">kept</a>
<a href="page?q=mailto:x">query</a>
</body>"##;
        let links = page_links(page);
        assert_eq!(links.hrefs, ["/kept", "page?q=mailto:x"]);
    }

    #[test]
    fn entities_are_decoded_and_duplicates_removed() {
        let page = br#"<p><a href="search.html?q=a&amp;page=2">one</a>
<a href="search.html?q=a&page=2">two</a>
<a href="  api.html  ">api</a><a href="api.html">api</a></p>"#;
        let links = page_links(page);
        assert_eq!(links.hrefs, ["search.html?q=a&page=2", "api.html"]);
    }

    #[test]
    fn robots_meta_sets_noindex_and_nofollow() {
        let page = |content: &str| {
            format!(r#"<head><meta name="ROBOTS" content="{content}"></head><a href="x">x</a>"#)
        };
        let noindex = page_links(page("noindex, follow").as_bytes());
        assert!(noindex.noindex && !noindex.nofollow);
        let nofollow = page_links(page("NoFollow").as_bytes());
        assert!(!nofollow.noindex && nofollow.nofollow);
        let none = page_links(page("none").as_bytes());
        assert!(none.noindex && none.nofollow);
        // Links are still reported; following them is the caller's choice.
        assert_eq!(none.hrefs, ["x"]);
        let other = page_links(br#"<meta name="description" content="noindex">"#);
        assert!(!other.noindex && !other.nofollow);
    }

    #[test]
    fn hostile_and_undecodable_pages_have_no_links() {
        let deep = format!(
            "<body><a href=\"x\">x</a>{}",
            "<section>".repeat(MAX_OPEN_DEPTH + 1)
        );
        assert_eq!(page_links(deep.as_bytes()), PageLinks::default());
        // Deep but allowed nesting is walked without recursion.
        let nested = format!(
            "<body>{}<a href=\"deep.html\">deep</a>{}",
            "<div>".repeat(3000),
            "</div>".repeat(3000)
        );
        let links = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || page_links(nested.as_bytes()))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(links.hrefs, ["deep.html"]);
    }
}
