//! Tesseract's hOCR (its XHTML with each line's box and font size), read
//! as Markdown: what OCR gives back for one page of a scan. A reader like
//! the others here, so OCR's output gets headings and paragraphs the way a
//! born-digital document does; running the tools is the server's.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// One line as Tesseract read it.
#[derive(Debug, Default)]
struct Line {
    words: Vec<String>,
    /// Tesseract's `x_size` (the line's font size, in pixels), or the
    /// height of its box when it gives none.
    size: f32,
    /// Whether Tesseract classed it as a heading (`ocr_header`).
    header: bool,
}

/// Turns Tesseract's hOCR for one page into Markdown: its paragraphs in
/// Tesseract's reading order, lines set clearly larger than the page's
/// text (its median line size, by words) as headings (`#` at twice that
/// size, `##` at 1.4 times), words hyphenated across lines joined, and
/// marks with no letter or digit that Tesseract is unsure of (specks,
/// rules, the edges of figures) dropped.
pub fn hocr_to_markdown(hocr: &str) -> Result<String, String> {
    let paragraphs = parse_hocr(hocr)?;
    let mut sizes: Vec<(f32, usize)> = paragraphs
        .iter()
        .flatten()
        .filter(|l| l.size > 0.0 && !l.words.is_empty())
        .map(|l| (l.size, l.words.len()))
        .collect();
    let median = weighted_median(&mut sizes);

    let mut blocks: Vec<String> = Vec::new();
    for lines in &paragraphs {
        // Consecutive lines of one kind (heading or not) make one block.
        let mut current: Option<(Option<u8>, Vec<&Line>)> = None;
        for line in lines.iter().filter(|l| !l.words.is_empty()) {
            let level = heading_level(line, median);
            match current.as_mut() {
                Some((l, group)) if *l == level => group.push(line),
                _ => {
                    if let Some((l, group)) = current.take() {
                        blocks.push(block(l, &group));
                    }
                    current = Some((level, vec![line]));
                }
            }
        }
        if let Some((l, group)) = current {
            blocks.push(block(l, &group));
        }
    }
    Ok(blocks
        .into_iter()
        .filter(|b| !b.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n"))
}

/// A line's heading level, if it is a heading: short, and set clearly
/// larger than the page's text.
fn heading_level(line: &Line, median: Option<f32>) -> Option<u8> {
    let median = median?;
    if line.words.len() > 15 || line.size <= 0.0 {
        return None;
    }
    let ratio = line.size / median;
    if ratio >= 2.0 {
        Some(1)
    } else if ratio >= 1.4 || (line.header && ratio >= 1.15) {
        Some(2)
    } else {
        None
    }
}

/// One Markdown block from consecutive lines.
fn block(level: Option<u8>, lines: &[&Line]) -> String {
    let mut text = String::new();
    for line in lines {
        let joined = line.words.join(" ");
        if text.is_empty() {
            text = joined;
            continue;
        }
        let hyphenated = text.ends_with('-')
            && text[..text.len() - 1]
                .chars()
                .last()
                .is_some_and(char::is_alphabetic)
            && joined.starts_with(char::is_lowercase);
        if hyphenated {
            text.pop();
        } else {
            text.push(if level.is_some() { ' ' } else { '\n' });
        }
        text.push_str(&joined);
    }
    match level {
        Some(level) => format!("{} {text}", "#".repeat(usize::from(level))),
        // Text that Markdown would read as markup of its own is escaped.
        None if text.starts_with(['#', '>'])
            || text.starts_with("```")
            || text.starts_with("~~~") =>
        {
            format!("\\{text}")
        }
        None => text,
    }
}

/// The median of `(value, weight)` pairs.
fn weighted_median(values: &mut [(f32, usize)]) -> Option<f32> {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    for &(value, weight) in values.iter() {
        seen += weight;
        if seen * 2 >= total {
            return Some(value);
        }
    }
    None
}

/// The element an hOCR tag opens, by its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Paragraph,
    Line,
    Word,
    Other,
}

/// hOCR's paragraphs, each a list of lines, in document order.
fn parse_hocr(hocr: &str) -> Result<Vec<Vec<Line>>, String> {
    let mut reader = Reader::from_str(hocr);
    reader.config_mut().trim_text(false);
    let mut paragraphs: Vec<Vec<Line>> = Vec::new();
    let mut open: Vec<Part> = Vec::new();
    // The word being read, and its confidence.
    let mut word: Option<(String, f32)> = None;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(tag) => {
                let (class, title) = class_and_title(&tag);
                let part = match class.as_str() {
                    "ocr_par" => Part::Paragraph,
                    "ocr_line" | "ocr_header" | "ocr_caption" | "ocr_textfloat" => Part::Line,
                    "ocrx_word" => Part::Word,
                    _ => Part::Other,
                };
                match part {
                    Part::Paragraph => paragraphs.push(Vec::new()),
                    Part::Line => {
                        if paragraphs.is_empty() {
                            paragraphs.push(Vec::new());
                        }
                        if let Some(lines) = paragraphs.last_mut() {
                            lines.push(Line {
                                words: Vec::new(),
                                size: line_size(&title),
                                header: class == "ocr_header",
                            });
                        }
                    }
                    Part::Word => {
                        word = Some((String::new(), property(&title, "x_wconf").unwrap_or(100.0)))
                    }
                    Part::Other => {}
                }
                open.push(part);
            }
            Event::End(_) => {
                let closes_word = open.pop() == Some(Part::Word);
                if let Some((text, confidence)) = word.take_if(|_| closes_word) {
                    let text = text.trim();
                    let unsure_mark = confidence < 60.0 && !text.chars().any(char::is_alphanumeric);
                    let line = paragraphs.last_mut().and_then(|p| p.last_mut());
                    if let (false, false, Some(line)) = (text.is_empty(), unsure_mark, line) {
                        line.words.push(text.to_owned());
                    }
                }
            }
            Event::Text(text) => {
                if let Some((word, _)) = word.as_mut() {
                    word.push_str(&text.decode().map_err(|e| e.to_string())?);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some((word, _)) = word.as_mut() {
                    if let Ok(Some(c)) = reference.resolve_char_ref() {
                        word.push(c);
                    } else if let Some(s) = reference
                        .decode()
                        .ok()
                        .and_then(|name| quick_xml::escape::resolve_predefined_entity(&name))
                    {
                        word.push_str(s);
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(paragraphs)
}

/// A tag's `class` and `title` attributes.
fn class_and_title(tag: &BytesStart<'_>) -> (String, String) {
    let mut class = String::new();
    let mut title = String::new();
    for attribute in tag.attributes().flatten() {
        let value = String::from_utf8_lossy(&attribute.value).into_owned();
        match attribute.key.as_ref() {
            b"class" => class = value,
            b"title" => title = value,
            _ => {}
        }
    }
    (class, title)
}

/// A line's size: `x_size`, else its box's height.
fn line_size(title: &str) -> f32 {
    property(title, "x_size").unwrap_or_else(|| {
        let bbox: Vec<f32> = title
            .split(';')
            .find_map(|p| p.trim().strip_prefix("bbox "))
            .map(|b| {
                b.split_whitespace()
                    .filter_map(|n| n.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        match bbox[..] {
            [_, top, _, bottom] => bottom - top,
            _ => 0.0,
        }
    })
}

/// A number property of an hOCR `title` (`x_size 54; x_wconf 96`).
fn property(title: &str, name: &str) -> Option<f32> {
    title.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once(' ')?;
        (key == name).then(|| value.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(title: &str, words: &[(&str, u32)]) -> String {
        let words: String = words
            .iter()
            .map(|(w, conf)| {
                format!("<span class='ocrx_word' title='bbox 0 0 1 1; x_wconf {conf}'>{w}</span>")
            })
            .collect();
        format!("<span class='ocr_line' title=\"{title}\">{words}</span>")
    }

    fn page(paragraphs: &[Vec<String>]) -> String {
        let body: String = paragraphs
            .iter()
            .map(|lines| format!("<p class='ocr_par'>{}</p>", lines.concat()))
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title></title><meta name='ocr-system' content='tesseract 5.3.0' /></head><body><div class='ocr_page' title='bbox 0 0 2550 3300'><div class='ocr_carea'>{body}</div></div></body></html>"
        )
    }

    #[test]
    fn large_lines_become_headings_and_paragraphs_keep_their_order() {
        let hocr = page(&[
            vec![
                line(
                    "bbox 0 0 9 9; x_size 54",
                    &[("The", 96), ("Crazy", 96), ("Ones", 96)],
                ),
                line("x_size 34", &[("October", 96), ("14,", 96), ("1998", 96)]),
            ],
            vec![
                line(
                    "x_size 34",
                    &[("Here&#39;s", 95), ("to", 96), ("the", 96), ("well-", 90)],
                ),
                line(
                    "x_size 33",
                    &[("known", 96), ("crazy", 96), ("ones", 96), ("&amp;", 80)],
                ),
                line("x_size 35", &[("misfits", 96), ("|", 20), ("—", 95)]),
            ],
            vec![line("x_size 70", &[("Big", 96), ("Title", 96)])],
            vec![line("x_size 34", &[("#1", 96), ("rebel", 96)])],
        ]);
        let markdown = hocr_to_markdown(&hocr).expect("parses");
        assert_eq!(
            markdown,
            "## The Crazy Ones\n\nOctober 14, 1998\n\nHere's to the wellknown crazy ones &\nmisfits —\n\n# Big Title\n\n\\#1 rebel"
        );
    }

    #[test]
    fn words_hyphenated_across_lines_are_joined() {
        let hocr = page(&[vec![
            line("x_size 30", &[("the", 96), ("recog-", 96)]),
            line("x_size 30", &[("nition", 96), ("works", 96)]),
        ]]);
        assert_eq!(hocr_to_markdown(&hocr).unwrap(), "the recognition works");
    }

    #[test]
    fn an_empty_page_is_empty_text_and_broken_markup_an_error() {
        assert_eq!(hocr_to_markdown(&page(&[])).unwrap(), "");
        assert!(hocr_to_markdown("<html><body><p class='ocr_par'><span a='1>").is_err());
    }
}
