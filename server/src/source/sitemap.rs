//! `sitemap.xml`: the pages a site lists, which a crawl takes besides the
//! ones it finds by links (sites with client-side navigation link little).

use quick_xml::events::Event;
use quick_xml::Reader;

/// What one sitemap document lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// `<url><loc>`: pages.
    pub pages: Vec<String>,
    /// `<sitemap><loc>` of a sitemap index: more sitemaps.
    pub sitemaps: Vec<String>,
}

/// The most `<loc>`s read from one sitemap (the protocol's own limit).
pub const MAX_LOCS: usize = 50_000;

/// Reads a sitemap or sitemap index. Malformed XML ends the reading where
/// it breaks; what was read before stands.
pub fn parse(xml: &[u8]) -> Sitemap {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut sitemap = Sitemap::default();
    // The text of the `<loc>` being read: entity references (`&amp;`)
    // arrive as events of their own between pieces of text.
    let mut loc: Option<String> = None;
    let mut in_index_entry = false;
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.local_name().as_ref() {
                b"loc" => loc = Some(String::new()),
                b"sitemap" => in_index_entry = true,
                _ => {}
            },
            Ok(Event::Text(t)) => {
                if let (Some(loc), Ok(text)) = (loc.as_mut(), t.decode()) {
                    loc.push_str(&text);
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some(loc) = loc.as_mut() {
                    if let Ok(Some(c)) = r.resolve_char_ref() {
                        loc.push(c);
                    } else if let Some(s) = r
                        .decode()
                        .ok()
                        .and_then(|name| quick_xml::escape::resolve_predefined_entity(&name))
                    {
                        loc.push_str(s);
                    }
                }
            }
            Ok(Event::End(e)) => match e.local_name().as_ref() {
                b"loc" => {
                    let text = loc.take().unwrap_or_default();
                    let text = text.trim();
                    if !text.is_empty() {
                        let list = if in_index_entry {
                            &mut sitemap.sitemaps
                        } else {
                            &mut sitemap.pages
                        };
                        list.push(text.to_owned());
                    }
                    if sitemap.pages.len() + sitemap.sitemaps.len() >= MAX_LOCS {
                        break;
                    }
                }
                b"sitemap" => in_index_entry = false,
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
        buf.clear();
    }
    sitemap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_nested_sitemaps_are_told_apart() {
        let urlset = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://x.io/docs/a.html</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc> https://x.io/docs/b.html?x=1&amp;y=2 </loc></url>
</urlset>"#;
        assert_eq!(
            parse(urlset).pages,
            [
                "https://x.io/docs/a.html",
                "https://x.io/docs/b.html?x=1&y=2"
            ]
        );
        let index = br#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://x.io/sitemap-docs.xml</loc></sitemap></sitemapindex>"#;
        let read = parse(index);
        assert_eq!(read.sitemaps, ["https://x.io/sitemap-docs.xml"]);
        assert!(read.pages.is_empty());
    }

    #[test]
    fn broken_xml_keeps_what_came_before() {
        let read =
            parse(b"<urlset><url><loc>https://x.io/a</loc></url><url><loc>https://x.io/b</lo");
        assert_eq!(read.pages, ["https://x.io/a"]);
    }
}
