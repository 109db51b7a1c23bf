//! Snippets never panic and never lose the marks' balance, whatever the text.

use index_core::highlight::{query_terms, ranges, snippet};
use index_core::markdown::markdown_snippet;
use proptest::prelude::*;

proptest! {
    #[test]
    fn snippets_of_any_text_are_well_formed(
        text in "[a-c \\u{2009}\\u{3000}é日\\n<>&]{0,400}",
        query in "[a-c é日]{0,12}",
        max in 1usize..200,
    ) {
        let terms = query_terms(&query);
        let s = snippet(&text, &terms, max);
        prop_assert_eq!(s.matches("<mark>").count(), s.matches("</mark>").count());
        // Text is escaped: the only markup left is the marks themselves.
        let bare = s.replace("<mark>", "").replace("</mark>", "");
        prop_assert!(!bare.contains('<') && !bare.contains('>'), "unescaped markup in {:?}", s);
        // The Markdown snippet: only its fixed set of tags is markup.
        let md = markdown_snippet(&text, &terms, max);
        prop_assert_eq!(md.matches("<mark>").count(), md.matches("</mark>").count());
        let mut bare = md.clone();
        for tag in ["mark", "p", "pre", "code", "ol", "ul", "li", "em", "strong", "blockquote", "br", "hr"] {
            bare = bare.replace(&format!("<{tag}>"), "").replace(&format!("</{tag}>"), "");
        }
        while let Some(i) = bare.find("<code class=\"language-") {
            let close = bare[i..].find("\">").map_or(bare.len(), |j| i + j + 2);
            bare.replace_range(i..close, "");
        }
        prop_assert!(!bare.contains('<') && !bare.contains('>'), "unescaped markup in {:?}", md);
        for (a, b) in ranges(&text, &terms) {
            prop_assert!(text.is_char_boundary(a) && text.is_char_boundary(b) && a < b);
        }
    }
}
