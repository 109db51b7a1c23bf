//! Snippets of Markdown as safe HTML for the dashboard.
//!
//! Chunks are Markdown (HTML pages are converted to it), so a snippet shown
//! as plain escaped text showed raw fences, `**` and list markers. Here the
//! snippet's window is parsed as Markdown (pulldown-cmark) and written back
//! as a small, fixed set of tags: paragraphs, code blocks, inline code,
//! emphasis and lists. Everything else becomes text: links keep their words
//! but lose their address, images and raw HTML in the document are shown
//! escaped or dropped, so a hostile page cannot put markup into the
//! dashboard. Query terms are wrapped in `<mark>` inside text and code.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::highlight::{escape_into, ranges, window_of};

/// A window of about `max_chars` characters of the Markdown `text` around
/// the densest run of query terms, rendered as restricted HTML with the
/// terms in `<mark>`. A window that starts inside a fenced code block is
/// rendered as code.
pub fn markdown_snippet(text: &str, terms: &[String], max_chars: usize) -> String {
    let text = text.trim();
    let (start, end) = window_of(text, terms, max_chars);
    let mut source = String::with_capacity(end - start + 8);
    if inside_fence(&text[..start]) {
        source.push_str("```\n");
    }
    source.push_str(&text[start..end]);
    let mut html = String::with_capacity(source.len() + 64);
    if start > 0 {
        html.push('…');
    }
    render(&source, terms, &mut html);
    if end < text.len() {
        html.push('…');
    }
    html
}

/// An Ask answer (Markdown, as models write) rendered whole as the same
/// restricted HTML, with every citation mark (`[2]`, `[1, 3]`) turned into
/// links: `href(n)` gives source n's address, or `None` to leave the number
/// as text. Marks are swapped for private-use placeholders before parsing,
/// because Markdown would read brackets as the start of a link.
pub fn markdown_answer(text: &str, href: impl Fn(u32) -> Option<String>) -> String {
    const OPEN: char = '\u{E000}';
    const CLOSE: char = '\u{E001}';
    let mut source = String::with_capacity(text.len());
    let mut at = 0;
    for mark in crate::ask::marks(text) {
        source.push_str(&text[at..mark.start]);
        for n in mark.numbers {
            source.push(OPEN);
            source.push_str(&n.to_string());
            source.push(CLOSE);
        }
        at = mark.end;
    }
    source.push_str(&text[at..]);
    let mut rendered = String::with_capacity(source.len() + 64);
    render(&source, &[], &mut rendered);

    let mut html = String::with_capacity(rendered.len() + 64);
    let mut rest = rendered.as_str();
    while let Some(open) = rest.find(OPEN) {
        html.push_str(&rest[..open]);
        let after = &rest[open + OPEN.len_utf8()..];
        let Some(close) = after.find(CLOSE) else {
            rest = after;
            continue;
        };
        let number = &after[..close];
        match number.parse::<u32>().ok().and_then(&href) {
            Some(address) => {
                html.push_str("<a class=\"cite\" href=\"");
                escape_into(&mut html, &address);
                html.push_str("\">[");
                html.push_str(number);
                html.push_str("]</a>");
            }
            None => {
                html.push('[');
                html.push_str(number);
                html.push(']');
            }
        }
        rest = &after[close + CLOSE.len_utf8()..];
    }
    html.push_str(rest);
    html
}

/// Whether `before` leaves a fenced code block open.
fn inside_fence(before: &str) -> bool {
    before
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("```") || l.starts_with("~~~")
        })
        .count()
        % 2
        == 1
}

fn render(source: &str, terms: &[String], out: &mut String) {
    for event in Parser::new_ext(
        source,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    ) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph => out.push_str("<p>"),
                Tag::Heading { .. } => out.push_str("<p><strong>"),
                Tag::CodeBlock(kind) => {
                    out.push_str("<pre><code");
                    if let CodeBlockKind::Fenced(lang) = kind {
                        let lang: String = lang
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                            .collect();
                        if !lang.is_empty() {
                            out.push_str(" class=\"language-");
                            out.push_str(&lang);
                            out.push('"');
                        }
                    }
                    out.push('>');
                }
                Tag::List(Some(_)) => out.push_str("<ol>"),
                Tag::List(None) => out.push_str("<ul>"),
                Tag::Item => out.push_str("<li>"),
                Tag::Emphasis => out.push_str("<em>"),
                Tag::Strong => out.push_str("<strong>"),
                Tag::BlockQuote(_) => out.push_str("<blockquote>"),
                Tag::TableRow | Tag::TableHead => out.push_str("<p>"),
                Tag::TableCell => out.push(' '),
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph | TagEnd::TableRow | TagEnd::TableHead => out.push_str("</p>"),
                TagEnd::Heading(_) => out.push_str("</strong></p>"),
                TagEnd::CodeBlock => out.push_str("</code></pre>"),
                TagEnd::List(true) => out.push_str("</ol>"),
                TagEnd::List(false) => out.push_str("</ul>"),
                TagEnd::Item => out.push_str("</li>"),
                TagEnd::Emphasis => out.push_str("</em>"),
                TagEnd::Strong => out.push_str("</strong>"),
                TagEnd::BlockQuote(_) => out.push_str("</blockquote>"),
                _ => {}
            },
            Event::Text(t) => marked(&t, terms, out),
            Event::Code(t) => {
                out.push_str("<code>");
                marked(&t, terms, out);
                out.push_str("</code>");
            }
            // The document's own HTML is shown as text, never as markup.
            Event::Html(t) | Event::InlineHtml(t) => marked(&t, terms, out),
            Event::SoftBreak => out.push(' '),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            _ => {}
        }
    }
}

/// `text` escaped, with the query terms in `<mark>`.
fn marked(text: &str, terms: &[String], out: &mut String) {
    let mut at = 0;
    for (s, e) in ranges(text, terms) {
        escape_into(out, &text[at..s]);
        out.push_str("<mark>");
        escape_into(out, &text[s..e]);
        out.push_str("</mark>");
        at = e;
    }
    escape_into(out, &text[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::highlight::query_terms;

    #[test]
    fn answers_render_markdown_with_citations_as_links() {
        let answer = "Use **rebase** [1].\n\n```sh\ngit rebase -i HEAD~3\n```\n\nSee also [2, 9] and <b>x</b>.";
        let html = markdown_answer(answer, |n| (n <= 2).then(|| format!("/doc?chunk={n}&a=\"")));
        assert!(html.contains("<strong>rebase</strong>"), "{html}");
        assert!(
            html.contains("<a class=\"cite\" href=\"/doc?chunk=1&amp;a=&quot;\">[1]</a>"),
            "{html}"
        );
        assert!(
            html.contains("<a class=\"cite\" href=\"/doc?chunk=2&amp;a=&quot;\">[2]</a>[9]"),
            "{html}"
        );
        assert!(
            html.contains("<pre><code class=\"language-sh\">git rebase -i HEAD~3\n</code></pre>"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"), "{html}");
        assert!(!html.contains('\u{E000}'));
    }

    #[test]
    fn code_blocks_are_formatted_and_markers_are_gone() {
        let md = "Pick a range:\n\n```sh\ngit cherry-pick A..B\n```\n\nSee **<1>** below.";
        let html = markdown_snippet(md, &query_terms("cherry"), 280);
        assert!(
            html.contains(
                "<pre><code class=\"language-sh\">git <mark>cherry</mark>-pick A..B\n</code></pre>"
            ),
            "{html}"
        );
        assert!(html.contains("<strong>&lt;1&gt;</strong>"), "{html}");
        assert!(!html.contains("```") && !html.contains("**"), "{html}");
    }

    #[test]
    fn document_html_and_links_are_text_not_markup() {
        let md = "Click [here](javascript:alert(1)) <img src=x onerror=alert(1)>";
        let html = markdown_snippet(md, &[], 280);
        assert!(!html.contains("<img") && !html.contains("href"), "{html}");
        assert!(html.contains("here") && html.contains("&lt;img"), "{html}");
    }

    #[test]
    fn a_window_inside_a_fence_renders_as_code() {
        let md = format!("```\n{}\nneedle();\n```\nafter", "filler line\n".repeat(60));
        let html = markdown_snippet(&md, &query_terms("needle"), 80);
        assert!(html.contains("<pre><code>"), "{html}");
        assert!(html.contains("<mark>needle</mark>"), "{html}");
    }
}
