//! HTML to Markdown, without the page chrome.

use super::{text::decode, ExtractError, Extracted};

/// Elements that are never documentation content: scripts, styles, and the
/// navigation chrome around an article.
const CHROME: [&str; 12] = [
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "button", "iframe", "svg",
];

/// Converts an HTML page to Markdown, keeping headings, lists, tables and
/// code blocks, and takes `<title>` as the title.
pub fn to_markdown(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let html = decode(bytes)?;
    let title = title_of(&html);
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(CHROME.to_vec())
        .build();
    let markdown = converter
        .convert(&html)
        .map_err(|e| ExtractError::Html(e.to_string()))?;
    // The converter keeps <head>'s title as a line of text; it is metadata.
    let mut text = markdown.trim().to_owned();
    if let Some(t) = &title {
        if let Some(rest) = text.strip_prefix(t.as_str()) {
            text = rest.trim_start().to_owned();
        }
    }
    text.push('\n');
    Ok(Extracted {
        file_path: String::new(),
        title,
        text,
        pages: Vec::new(),
        warnings: Vec::new(),
    })
}

fn title_of(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title>")?;
    let title = html[open_end..close]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!title.is_empty()).then(|| decode_entities(&title))
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
}
