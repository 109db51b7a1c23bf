//! Markdown and plain text: decoding, and front matter.

use super::{ExtractError, Extracted};

/// Decodes bytes to text: UTF-8 (with or without BOM), UTF-16 with a BOM,
/// else the legacy encoding `chardetng` recognises with confidence.
pub fn decode(bytes: &[u8]) -> Result<String, ExtractError> {
    if let Some((encoding, _)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_with_bom_removal(bytes);
        return if had_errors {
            Err(ExtractError::UnknownEncoding)
        } else {
            Ok(text.into_owned())
        };
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_owned());
    }
    // Control bytes other than whitespace mean binary data, not text in some
    // legacy encoding.
    let controls = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C))
        .count();
    if controls > 0 {
        return Err(ExtractError::UnknownEncoding);
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(ExtractError::UnknownEncoding);
    }
    Ok(text.into_owned())
}

/// A Markdown file: front matter (YAML between `---` lines) gives the title
/// and description and is left out of the body. (MDX is first written as
/// the Markdown it reads as, by `mdx.rs`.)
pub fn markdown(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let text = normalise_newlines(&decode(bytes)?);
    let (front, body) = split_front_matter(&text);
    let title = front
        .and_then(|f| front_matter_field(f, "title"))
        .or_else(|| first_heading(body));
    let description = front.and_then(|f| front_matter_field(f, "description"));
    Ok(Extracted {
        file_path: String::new(),
        title,
        description,
        text: body.to_owned(),
        pages: Vec::new(),
        warnings: Vec::new(),
    })
}

/// A plain text file, as it is.
pub fn plain(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    Ok(Extracted {
        file_path: String::new(),
        title: None,
        description: None,
        text: normalise_newlines(&decode(bytes)?),
        pages: Vec::new(),
        warnings: Vec::new(),
    })
}

fn normalise_newlines(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_owned()
    }
}

/// Splits `---\n…\n---\n` front matter from the body.
pub(super) fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" || line.trim_end() == "..." {
            let front = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return (Some(front), body.trim_start_matches('\n'));
        }
        offset += line.len();
    }
    (None, text)
}

/// A top-level `key:` of YAML front matter: a plain or quoted scalar, or a
/// folded/literal block (`key: >-` followed by indented lines), joined into
/// one line.
fn front_matter_field(front: &str, key: &str) -> Option<String> {
    let mut lines = front.lines();
    while let Some(line) = lines.next() {
        let Some(value) = line.strip_prefix(key).and_then(|v| v.strip_prefix(':')) else {
            continue;
        };
        let value = value.trim();
        let value = if value.starts_with('>') || value.starts_with('|') {
            lines
                .by_ref()
                .take_while(|l| l.starts_with(' ') || l.starts_with('\t') || l.is_empty())
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value)
                .to_owned()
        };
        return (!value.is_empty()).then_some(value);
    }
    None
}

/// The first level-1 heading's words, as a reader sees them: link text
/// kept, images left out (a README's title line is often the name and a
/// row of badges), entities decoded (`&emsp;`, `&#8212;`), spaces
/// collapsed. A heading with no words (badges alone) is passed over; one
/// inside a code block is no heading.
fn first_heading(body: &str) -> Option<String> {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
    let mut words: Option<String> = None;
    let mut images = 0usize;
    for event in Parser::new(body) {
        match (&mut words, event) {
            (
                None,
                Event::Start(Tag::Heading {
                    level: HeadingLevel::H1,
                    ..
                }),
            ) => {
                words = Some(String::new());
            }
            (Some(text), Event::End(TagEnd::Heading(HeadingLevel::H1))) => {
                let title = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if !title.is_empty() {
                    return Some(title);
                }
                words = None;
            }
            (Some(_), Event::Start(Tag::Image { .. })) => images += 1,
            (Some(_), Event::End(TagEnd::Image)) => images = images.saturating_sub(1),
            (Some(text), Event::Text(t) | Event::Code(t)) if images == 0 => text.push_str(&t),
            (Some(text), Event::SoftBreak | Event::HardBreak) => text.push(' '),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_becomes_the_title_not_body() {
        let doc =
            markdown(b"---\ntitle: \"Routing\"\ndescription: How URLs map to pages.\nweight: 3\n---\n\n# Intro\n\nBody.\n").unwrap();
        assert_eq!(doc.title.as_deref(), Some("Routing"));
        assert_eq!(doc.description.as_deref(), Some("How URLs map to pages."));
        let folded =
            markdown(b"---\ndescription: >-\n  Two lines\n  folded.\ntitle: T\n---\nBody\n")
                .unwrap();
        assert_eq!(folded.description.as_deref(), Some("Two lines folded."));
        assert_eq!(folded.title.as_deref(), Some("T"));
        assert_eq!(doc.text, "# Intro\n\nBody.\n");
    }

    #[test]
    fn a_title_is_the_headings_words_without_badges_or_entities() {
        // Serde's README, as crates.io ships it.
        let readme =
            b"# Serde &emsp; [![Build Status]][actions] [![Latest Version]][crates.io]\n\n\
            [Build Status]: https://img.shields.io/ci.svg\n\
            [actions]: https://github.com/serde-rs/serde/actions\n\
            [Latest Version]: https://img.shields.io/crates/v/serde.svg\n\
            [crates.io]: https://crates.io/crates/serde\n\n\
            **Serde is a framework for serializing.**\n";
        assert_eq!(markdown(readme).unwrap().title.as_deref(), Some("Serde"));
        let entities = markdown(b"# Formsets &#8212; Django `3.2` docs\n\nText.\n").unwrap();
        assert_eq!(
            entities.title.as_deref(),
            Some("Formsets \u{2014} Django 3.2 docs")
        );
        // Badges alone are passed over; a `#` line in a code block is code.
        let later = markdown(
            b"# [![CI](https://x/ci.svg)](https://x)\n\n```sh\n# not a title\n```\n\n# [The guide](guide.md)\n",
        )
        .unwrap();
        assert_eq!(later.title.as_deref(), Some("The guide"));
    }

    #[test]
    fn without_front_matter_the_first_heading_is_the_title() {
        let doc = markdown(b"# Getting started\n\nText ---\n").unwrap();
        assert_eq!(doc.title.as_deref(), Some("Getting started"));
        assert!(doc.text.starts_with("# Getting started"));
    }

    #[test]
    fn utf8_bom_and_crlf_are_normalised() {
        let doc = plain(b"\xEF\xBB\xBFline one\r\nline two\r\n").unwrap();
        assert_eq!(doc.text, "line one\nline two\n");
    }

    #[test]
    fn utf16_with_bom_decodes() {
        let mut bytes = vec![0xFF, 0xFE];
        for unit in "héllo wörld".encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        assert_eq!(plain(&bytes).unwrap().text, "héllo wörld");
    }

    #[test]
    fn legacy_latin1_text_is_detected() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1252
            .encode("Les élèves étudient la configuration du serveur à l'école pendant l'été.");
        let doc = plain(&bytes).unwrap();
        assert!(doc.text.contains("élèves"), "{}", doc.text);
    }

    #[test]
    fn binary_data_is_rejected_with_a_clear_error() {
        let err = plain(&[0x00, 0xFF, 0x10, 0x80, 0x00, 0x9F]).unwrap_err();
        assert_eq!(err, ExtractError::UnknownEncoding);
    }
}
