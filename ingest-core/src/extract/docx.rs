//! Word documents (`.docx`, Office Open XML) to Markdown.
//!
//! A `.docx` is a ZIP of XML parts. It is opened as uploads are
//! (`zip::open_checked`: entry count, paths, ratios and sizes checked
//! before anything inflates, every buffer asked of the memory gauge), and
//! `word/document.xml` is read with quick-xml as a stream:
//!
//! - paragraph styles say what a paragraph is: `Title`, `Heading 1`–`9`
//!   (by the style's name in `word/styles.xml`, which Word keeps English
//!   whatever the style's id, e.g. `berschrift1`; else its outline level;
//!   else the style it is based on), quotes, and code (a style named like
//!   code, or a monospaced font, or every run monospaced);
//! - numbered and bulleted paragraphs (`w:numPr`, on the paragraph or its
//!   style) become list items, nested by their level, ordered unless
//!   `word/numbering.xml` says the level is a bullet;
//! - tables become Markdown tables (first row the header);
//! - runs keep bold, italic and monospaced (inline code); hyperlinks keep
//!   their address. Deleted text, field codes, and the fallback copies of
//!   drawings are left out.
//!
//! The title is the `Title` paragraph's text, else the first heading's,
//! else `docProps/core.xml`'s `dc:title`.

use std::collections::HashMap;
use std::io::Cursor;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::archive::{read_entry, too_large, Budget};
use super::markdown_out::{code_span, fence, one_line, table_markdown, wrap};
use super::zip::open_checked;
use super::{ArchiveLimits, ExtractError, MemoryGauge};

/// A Word document as Markdown, with the title it gives itself.
pub struct Converted {
    pub markdown: String,
    pub title: Option<String>,
}

pub fn to_markdown(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Converted, ExtractError> {
    let mut budget = Budget::new(limits, memory);
    // What the parts read hold, given back however reading ends.
    let mut held = 0;
    let converted = read_package(path, bytes, &mut budget, &mut held);
    budget.memory.shrink(held);
    converted
}

type Package<'b> = ::zip::ZipArchive<Cursor<&'b [u8]>>;

fn read_package(
    path: &str,
    bytes: &[u8],
    budget: &mut Budget<'_>,
    held: &mut u64,
) -> Result<Converted, ExtractError> {
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        // An OLE compound file: what Word writes for a document with a
        // password, and the old binary `.doc`.
        return Err(ExtractError::Docx(
            "it is encrypted with a password, or is an old .doc renamed; save it as .docx without a password".into(),
        ));
    }
    let mut archive = open_checked(path, bytes, budget).map_err(|e| match e {
        ExtractError::CorruptZip(why) => {
            ExtractError::Docx(format!("it is not a ZIP package ({why})"))
        }
        other => other,
    })?;
    let package = part(&mut archive, "_rels/.rels", budget, held)?
        .map(|xml| relationships(&xml))
        .unwrap_or_default();
    let main = package
        .iter()
        .find(|r| r.kind.ends_with("/officeDocument"))
        .map(|r| r.target.trim_start_matches('/').to_owned())
        .unwrap_or_else(|| "word/document.xml".to_owned());
    let core = package
        .iter()
        .find(|r| r.kind.ends_with("/core-properties"))
        .map(|r| r.target.trim_start_matches('/').to_owned())
        .unwrap_or_else(|| "docProps/core.xml".to_owned());
    let (folder, file) = main.rsplit_once('/').unwrap_or(("", main.as_str()));
    let resolve = |target: &str| {
        if let Some(absolute) = target.strip_prefix('/') {
            absolute.to_owned()
        } else if folder.is_empty() {
            target.to_owned()
        } else {
            format!("{folder}/{target}")
        }
    };
    let rels = part(
        &mut archive,
        &resolve(&format!("_rels/{file}.rels")),
        budget,
        held,
    )?
    .map(|xml| relationships(&xml))
    .unwrap_or_default();
    let target_of = |suffix: &str, default: &str| {
        rels.iter()
            .find(|r| r.kind.ends_with(suffix))
            .map_or_else(|| resolve(default), |r| resolve(&r.target))
    };
    let styles = part(
        &mut archive,
        &target_of("/styles", "styles.xml"),
        budget,
        held,
    )?
    .map(|xml| read_styles(&xml))
    .unwrap_or_default();
    let numbering = part(
        &mut archive,
        &target_of("/numbering", "numbering.xml"),
        budget,
        held,
    )?
    .map(|xml| read_numbering(&xml))
    .unwrap_or_default();
    let links: HashMap<String, String> = rels
        .iter()
        .filter(|r| r.kind.ends_with("/hyperlink") && r.external)
        .map(|r| (r.id.clone(), r.target.clone()))
        .collect();
    let core_title = part(&mut archive, &core, budget, held)?.and_then(|xml| core_title(&xml));
    let Some(document) = part(&mut archive, &main, budget, held)? else {
        return Err(ExtractError::Docx(format!(
            "it has no {main}; is it a Word document?"
        )));
    };
    let context = Context {
        styles,
        numbering,
        links,
    };
    let blocks = read_document(&document, &context)?;
    Ok(write(blocks, core_title))
}

/// The part `name` as text, or `None` when the package has none. Its bytes
/// are asked of the gauge as they inflate (`held` counts them) and count
/// against the upload's limits.
fn part(
    archive: &mut Package<'_>,
    name: &str,
    budget: &mut Budget<'_>,
    held: &mut u64,
) -> Result<Option<String>, ExtractError> {
    let limits = budget.limits;
    let mut entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(::zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(ExtractError::Docx(format!("{name}: {e}"))),
    };
    let allowed = limits.max_total_bytes.saturating_sub(budget.bytes);
    let declared = entry.size();
    let (data, asked) = read_entry(name, &mut entry, declared, allowed, budget.memory)?;
    *held += asked;
    budget.bytes += data.len() as u64;
    if budget.bytes > limits.max_total_bytes {
        return Err(too_large(limits));
    }
    match String::from_utf8(data) {
        Ok(text) => Ok(Some(text)),
        Err(e) => super::text::decode(e.as_bytes())
            .map(Some)
            .map_err(|_| ExtractError::Docx(format!("{name} is not text"))),
    }
}

/// One relationship of a part: `Id`, `Type`, `Target`.
struct Relationship {
    id: String,
    kind: String,
    target: String,
    external: bool,
}

fn relationships(xml: &str) -> Vec<Relationship> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(e) | Event::Empty(e) if local(&e) == b"Relationship" => {
                out.push(Relationship {
                    id: attr(&e, b"Id").unwrap_or_default(),
                    kind: attr(&e, b"Type").unwrap_or_default(),
                    target: attr(&e, b"Target").unwrap_or_default(),
                    external: attr(&e, b"TargetMode").is_some_and(|m| m == "External"),
                });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// `dc:title` of the core properties.
fn core_title(xml: &str) -> Option<String> {
    let mut reader = Reader::from_str(xml);
    let mut inside = false;
    let mut title = String::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) if e.name().as_ref() == b"dc:title" => inside = true,
            Event::End(e) if e.name().as_ref() == b"dc:title" => break,
            Event::Text(t) if inside => title.push_str(&t.decode().ok()?),
            Event::GeneralRef(r) if inside => title.push_str(&entity(&r)?),
            Event::Eof => break,
            _ => {}
        }
    }
    let title = one_line(&title);
    (!title.is_empty()).then_some(title)
}

/// A paragraph or character style, as far as it matters here.
#[derive(Default, Clone)]
struct Style {
    name: String,
    based_on: Option<String>,
    outline: Option<u8>,
    num_id: Option<String>,
    ilvl: Option<u8>,
    mono: bool,
}

/// Styles by id.
type Styles = HashMap<String, Style>;

fn read_styles(xml: &str) -> Styles {
    let mut reader = Reader::from_str(xml);
    let mut styles = Styles::new();
    let mut current: Option<(String, Style)> = None;
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(e) if is_w(&e, b"style") => {
                current = Some((attr(&e, b"styleId").unwrap_or_default(), Style::default()));
            }
            Event::End(e) if e.local_name().as_ref() == b"style" => {
                if let Some((id, style)) = current.take() {
                    styles.insert(id, style);
                }
            }
            Event::Start(e) | Event::Empty(e) => {
                let Some((_, style)) = current.as_mut() else {
                    continue;
                };
                let val = || attr(&e, b"val");
                match local(&e) {
                    b"name" => style.name = val().unwrap_or_default().to_ascii_lowercase(),
                    b"basedOn" => style.based_on = val(),
                    b"outlineLvl" => style.outline = val().and_then(|v| v.parse().ok()),
                    b"numId" => style.num_id = val(),
                    b"ilvl" => style.ilvl = val().and_then(|v| v.parse().ok()),
                    b"rFonts" => {
                        style.mono |= ["ascii", "hAnsi"]
                            .iter()
                            .filter_map(|a| attr(&e, a.as_bytes()))
                            .any(|f| is_mono_font(&f));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    styles
}

/// What a paragraph style makes of its paragraphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Title,
    Subtitle,
    Heading(u8),
    Code,
    Quote,
    /// A table of contents' entries: the headings again, with page numbers.
    Contents,
    Body,
}

/// The kind of the style `id`, through the styles it is based on.
fn style_kind(styles: &Styles, id: &str) -> Kind {
    let mut id = id;
    for _ in 0..16 {
        let Some(style) = styles.get(id) else {
            return kind_of_name(&id.to_ascii_lowercase()).unwrap_or(Kind::Body);
        };
        if let Some(kind) = kind_of_name(&style.name) {
            return kind;
        }
        if let Some(level) = style.outline.filter(|l| *l < 9) {
            return Kind::Heading(level + 1);
        }
        if style.mono {
            return Kind::Code;
        }
        match &style.based_on {
            Some(parent) => id = parent,
            None => return Kind::Body,
        }
    }
    Kind::Body
}

/// A style's kind by its name (or, where styles.xml is missing, its id).
fn kind_of_name(name: &str) -> Option<Kind> {
    let compact: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    if compact == "title" {
        return Some(Kind::Title);
    }
    if compact == "subtitle" {
        return Some(Kind::Subtitle);
    }
    if let Some(level) = compact.strip_prefix("heading") {
        if let Ok(level @ 1..=9) = level.parse::<u8>() {
            return Some(Kind::Heading(level));
        }
    }
    if compact
        .strip_prefix("toc")
        .is_some_and(|n| n.parse::<u8>().is_ok_and(|n| (1..=9).contains(&n)))
    {
        return Some(Kind::Contents);
    }
    if ["quote", "intensequote", "blocktext"].contains(&compact.as_str()) {
        return Some(Kind::Quote);
    }
    if is_code_name(&compact) {
        return Some(Kind::Code);
    }
    None
}

/// Style names that mean code (`Source Code`, `Code`, `HTML Preformatted`,
/// `Macro Text`, `Verbatim Char`, `HTML Code`, `Plain Text`).
fn is_code_name(compact: &str) -> bool {
    compact.contains("code")
        || compact.contains("verbatim")
        || compact.contains("preformatted")
        || compact == "macrotext"
        || compact == "plaintext"
        || compact == "listing"
}

fn is_mono_font(font: &str) -> bool {
    let font = font.to_ascii_lowercase();
    [
        "courier",
        "consolas",
        "menlo",
        "monaco",
        "mono",
        "lucida console",
        "source code",
        "fira code",
        "inconsolata",
    ]
    .iter()
    .any(|m| font.contains(m))
}

/// `numId` → (`ilvl` → ordered), from numbering.xml.
type Numbering = HashMap<String, HashMap<u8, bool>>;

fn read_numbering(xml: &str) -> Numbering {
    let mut reader = Reader::from_str(xml);
    // abstractNumId → levels' ordered-ness.
    let mut abstracts: HashMap<String, HashMap<u8, bool>> = HashMap::new();
    let mut nums: Vec<(String, String)> = Vec::new();
    let mut in_abstract: Option<String> = None;
    let mut level: Option<u8> = None;
    let mut in_num: Option<String> = None;
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(e) | Event::Empty(e) => match local(&e) {
                b"abstractNum" => in_abstract = attr(&e, b"abstractNumId"),
                b"lvl" => level = attr(&e, b"ilvl").and_then(|v| v.parse().ok()),
                b"numFmt" => {
                    if let (Some(id), Some(level)) = (&in_abstract, level) {
                        let ordered =
                            !matches!(attr(&e, b"val").as_deref(), Some("bullet" | "none"));
                        abstracts
                            .entry(id.clone())
                            .or_default()
                            .insert(level, ordered);
                    }
                }
                b"num" => in_num = attr(&e, b"numId"),
                b"abstractNumId" => {
                    if let (Some(num), Some(abs)) = (&in_num, attr(&e, b"val")) {
                        nums.push((num.clone(), abs));
                    }
                }
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"abstractNum" => in_abstract = None,
                b"lvl" => level = None,
                b"num" => in_num = None,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    nums.into_iter()
        .filter_map(|(num, abs)| Some((num, abstracts.get(&abs)?.clone())))
        .collect()
}

struct Context {
    styles: Styles,
    numbering: Numbering,
    links: HashMap<String, String>,
}

/// What the document is made of, in order.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    Title(String),
    Heading(u8, String),
    Paragraph(String),
    Quote(String),
    Code(String),
    Item {
        ordered: bool,
        list: String,
        level: u8,
        text: String,
    },
    Table(Vec<Vec<String>>),
}

/// A stretch of a run's text with one formatting.
#[derive(Debug, Clone, Default)]
struct Span {
    text: String,
    bold: bool,
    italic: bool,
    code: bool,
    /// Already Markdown (a link): written as it is.
    raw: bool,
}

#[derive(Default)]
struct Paragraph {
    style: Option<String>,
    num_id: Option<String>,
    ilvl: Option<u8>,
    outline: Option<u8>,
    spans: Vec<Span>,
    /// Open hyperlinks: where their text starts in `spans`, and the address.
    links: Vec<(usize, Option<String>)>,
}

#[derive(Default, Clone, Copy)]
struct RunFormat {
    bold: bool,
    italic: bool,
    code: bool,
    hidden: bool,
}

/// A table being read: its rows of cells; each cell its paragraphs' text.
#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: Option<Vec<String>>,
}

fn read_document(xml: &str, context: &Context) -> Result<Vec<Block>, ExtractError> {
    let mut reader = Reader::from_str(xml);
    let mut blocks = Vec::new();
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    let mut tables: Vec<Table> = Vec::new();
    let mut run = RunFormat::default();
    let (mut in_ppr, mut in_rpr, mut in_text) = (false, false, false);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| ExtractError::Docx(format!("word/document.xml: {e}")))?;
        match event {
            Event::Start(e) if local(&e) == b"Fallback" => {
                // The copy of a drawing for readers that do not know its
                // markup; the chosen copy was read.
                reader
                    .read_to_end(e.name())
                    .map_err(|e| ExtractError::Docx(format!("word/document.xml: {e}")))?;
            }
            Event::Start(e) if is_w(&e, b"p") => paragraphs.push(Paragraph::default()),
            Event::Empty(e) if is_w(&e, b"p") => {
                // An empty paragraph ends a code block or a list.
                push_paragraph(Paragraph::default(), context, &mut blocks, &mut tables);
            }
            Event::End(e) if e.local_name().as_ref() == b"p" && is_w_name(e.name().as_ref()) => {
                if let Some(p) = paragraphs.pop() {
                    push_paragraph(p, context, &mut blocks, &mut tables);
                }
                in_ppr = false;
            }
            Event::Start(e) if is_w(&e, b"pPr") => in_ppr = true,
            Event::End(e) if e.name().as_ref() == b"w:pPr" => in_ppr = false,
            Event::Start(e) if is_w(&e, b"rPr") => in_rpr = !in_ppr,
            Event::End(e) if e.name().as_ref() == b"w:rPr" => in_rpr = false,
            Event::Start(e) if is_w(&e, b"r") => run = RunFormat::default(),
            Event::Start(e) if is_w(&e, b"t") => in_text = true,
            Event::End(e) if e.name().as_ref() == b"w:t" => in_text = false,
            Event::Start(e) if is_w(&e, b"tbl") => tables.push(Table::default()),
            Event::End(e) if e.name().as_ref() == b"w:tbl" => {
                let Some(table) = tables.pop() else { continue };
                if let Some(outer) = tables.last_mut().and_then(|t| t.cell.as_mut()) {
                    // A table in a cell: its text, in reading order.
                    let text: Vec<String> = table.rows.into_iter().flatten().collect();
                    outer.push(text.join(" "));
                } else if table.rows.iter().flatten().any(|cell| !cell.is_empty()) {
                    let escape = |row: Vec<String>| row.into_iter().map(|c| c.replace('|', "\\|"));
                    blocks.push(Block::Table(
                        table
                            .rows
                            .into_iter()
                            .map(|row| escape(row).collect())
                            .collect(),
                    ));
                }
            }
            Event::Start(e) if is_w(&e, b"tr") => {
                if let Some(table) = tables.last_mut() {
                    table.rows.push(Vec::new());
                }
            }
            Event::Start(e) if is_w(&e, b"tc") => {
                if let Some(table) = tables.last_mut() {
                    table.cell = Some(Vec::new());
                }
            }
            Event::End(e) if e.name().as_ref() == b"w:tc" => {
                if let Some(table) = tables.last_mut() {
                    let cell = table.cell.take().unwrap_or_default();
                    let text = one_line(&cell.join(" "));
                    match table.rows.last_mut() {
                        Some(row) => row.push(text),
                        None => table.rows.push(vec![text]),
                    }
                }
            }
            Event::Start(e) if is_w(&e, b"hyperlink") => {
                if let Some(p) = paragraphs.last_mut() {
                    let url = attr_exact(&e, b"r:id")
                        .and_then(|id| context.links.get(&id).cloned())
                        .map(|url| match attr(&e, b"anchor") {
                            Some(anchor) if !url.contains('#') => format!("{url}#{anchor}"),
                            _ => url,
                        });
                    p.links.push((p.spans.len(), url));
                    // A mark no text joins, so the link's text starts a span.
                    p.spans.push(Span {
                        raw: true,
                        ..Span::default()
                    });
                }
            }
            Event::End(e) if e.name().as_ref() == b"w:hyperlink" => {
                if let Some(p) = paragraphs.last_mut() {
                    close_link(p);
                }
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref().starts_with(b"w:") => {
                let Some(p) = paragraphs.last_mut() else {
                    continue;
                };
                let val = || attr(&e, b"val");
                match local(&e) {
                    b"pStyle" if in_ppr => p.style = val(),
                    b"numId" if in_ppr => p.num_id = val(),
                    b"ilvl" if in_ppr => p.ilvl = val().and_then(|v| v.parse().ok()),
                    b"outlineLvl" if in_ppr => p.outline = val().and_then(|v| v.parse().ok()),
                    b"b" if in_rpr => run.bold = on(val()),
                    b"i" if in_rpr => run.italic = on(val()),
                    b"vanish" if in_rpr => run.hidden = on(val()),
                    b"rStyle" if in_rpr => {
                        if let Some(id) = val() {
                            let style = context.styles.get(&id);
                            run.code |= style
                                .is_some_and(|s| s.mono || is_code_name(&compact(&s.name)))
                                || is_code_name(&compact(&id));
                        }
                    }
                    b"rFonts" if in_rpr => {
                        run.code |= ["ascii", "hAnsi"]
                            .iter()
                            .filter_map(|a| attr(&e, a.as_bytes()))
                            .any(|f| is_mono_font(&f));
                    }
                    b"tab" if !in_ppr => push_text(p, run, "\t"),
                    // Page and column breaks are layout, not line breaks.
                    b"br"
                        if !in_ppr
                            && !matches!(attr(&e, b"type").as_deref(), Some("page" | "column")) =>
                    {
                        push_text(p, run, "\n");
                    }
                    b"cr" => push_text(p, run, "\n"),
                    b"noBreakHyphen" => push_text(p, run, "-"),
                    _ => {}
                }
            }
            Event::Text(t) if in_text => {
                if let Some(p) = paragraphs.last_mut() {
                    let text = t
                        .decode()
                        .map_err(|e| ExtractError::Docx(format!("word/document.xml: {e}")))?;
                    push_text(p, run, &text);
                }
            }
            Event::GeneralRef(r) if in_text => {
                if let (Some(p), Some(text)) = (paragraphs.last_mut(), entity(&r)) {
                    push_text(p, run, &text);
                }
            }
            Event::CData(t) if in_text => {
                if let Some(p) = paragraphs.last_mut() {
                    push_text(p, run, &String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(blocks)
}

fn push_text(p: &mut Paragraph, run: RunFormat, text: &str) {
    if run.hidden || text.is_empty() {
        return;
    }
    match p.spans.last_mut() {
        Some(last)
            if !last.raw
                && last.bold == run.bold
                && last.italic == run.italic
                && last.code == run.code =>
        {
            last.text.push_str(text);
        }
        _ => p.spans.push(Span {
            text: text.to_owned(),
            bold: run.bold,
            italic: run.italic,
            code: run.code,
            raw: false,
        }),
    }
}

/// Turns the spans of the innermost open hyperlink into one `[text](url)`.
fn close_link(p: &mut Paragraph) {
    let Some((start, url)) = p.links.pop() else {
        return;
    };
    let Some(url) = url else { return };
    let start = start.min(p.spans.len());
    let text = render_spans(&p.spans[start..]);
    if text.trim().is_empty() {
        return;
    }
    p.spans.truncate(start);
    p.spans.push(Span {
        text: format!("[{}]({url})", text.trim()),
        raw: true,
        ..Span::default()
    });
}

/// A `w:b`/`w:i` toggle: on unless its value says off.
fn on(val: Option<String>) -> bool {
    !matches!(val.as_deref(), Some("0" | "false" | "off"))
}

fn compact(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Spans as Markdown: bold, italic, inline code.
fn render_spans(spans: &[Span]) -> String {
    let mut out = String::new();
    for span in spans {
        let text = span.text.replace('\t', " ");
        if span.raw {
            out.push_str(&text);
        } else if span.code && !text.trim().is_empty() {
            let lead = &text[..text.len() - text.trim_start().len()];
            let trail = &text[text.trim_end().len()..];
            out.push_str(lead);
            out.push_str(&code_span(text.trim()));
            out.push_str(trail);
        } else {
            let mut styled = String::new();
            match (span.bold, span.italic) {
                (true, true) => wrap(&mut styled, "***", &text),
                (true, false) => wrap(&mut styled, "**", &text),
                (false, true) => wrap(&mut styled, "*", &text),
                (false, false) => styled = text,
            }
            out.push_str(&styled);
        }
    }
    out
}

fn plain(spans: &[Span]) -> String {
    spans.iter().map(|s| s.text.as_str()).collect()
}

fn push_paragraph(p: Paragraph, context: &Context, blocks: &mut Vec<Block>, tables: &mut [Table]) {
    if let Some(cell) = tables.last_mut().and_then(|t| t.cell.as_mut()) {
        let text = render_spans(&p.spans);
        if !text.trim().is_empty() {
            cell.push(text.trim().to_owned());
        }
        return;
    }
    let style = p.style.as_deref();
    let mut kind = style.map_or(Kind::Body, |s| style_kind(&context.styles, s));
    if let Some(level) = p.outline.filter(|l| *l < 9) {
        if !matches!(kind, Kind::Title | Kind::Subtitle) {
            kind = Kind::Heading(level + 1);
        }
    }
    if kind == Kind::Contents {
        return;
    }
    let text = plain(&p.spans);
    let every_run_code = p.spans.iter().any(|s| !s.text.trim().is_empty())
        && p.spans.iter().all(|s| s.code || s.text.trim().is_empty());
    if kind == Kind::Code || (kind == Kind::Body && every_run_code && p.num_id.is_none()) {
        blocks.push(Block::Code(text.trim_end().to_owned()));
        return;
    }
    if text.trim().is_empty() {
        // Empty paragraphs end lists and code blocks.
        blocks.push(Block::Paragraph(String::new()));
        return;
    }
    match kind {
        Kind::Title => return blocks.push(Block::Title(one_line(&text))),
        Kind::Heading(level) => return blocks.push(Block::Heading(level, one_line(&text))),
        _ => {}
    }
    let rendered = render_spans(&p.spans).trim().to_owned();
    // A list item: numbering on the paragraph, else on its style.
    let style_num = style.and_then(|s| style_numbering(&context.styles, s));
    let num_id = p
        .num_id
        .clone()
        .or_else(|| style_num.as_ref().map(|n| n.0.clone()));
    if let Some(num_id) = num_id.filter(|n| n != "0") {
        let level = p
            .ilvl
            .or_else(|| style_num.as_ref().and_then(|n| n.1))
            .unwrap_or(0)
            .max(style.map_or(0, |s| style_level(&context.styles, s)));
        let ordered = context
            .numbering
            .get(&num_id)
            .and_then(|levels| levels.get(&level).or_else(|| levels.get(&0)))
            .copied()
            .unwrap_or_else(|| {
                style.is_some_and(|s| {
                    context
                        .styles
                        .get(s)
                        .is_some_and(|st| st.name.contains("number"))
                })
            });
        blocks.push(Block::Item {
            ordered,
            list: num_id,
            level,
            text: rendered,
        });
        return;
    }
    match kind {
        Kind::Quote => blocks.push(Block::Quote(rendered)),
        Kind::Subtitle => blocks.push(Block::Paragraph(format!("*{}*", one_line(&text)))),
        _ => blocks.push(Block::Paragraph(rendered)),
    }
}

/// The numbering a paragraph style carries (`List Bullet` has its own):
/// its `numId` and level, through the styles it is based on.
fn style_numbering(styles: &Styles, id: &str) -> Option<(String, Option<u8>)> {
    let mut id = id;
    for _ in 0..16 {
        let style = styles.get(id)?;
        if let Some(num) = &style.num_id {
            return Some((num.clone(), style.ilvl));
        }
        id = style.based_on.as_deref()?;
    }
    None
}

/// The level a list style's name implies: `List Bullet 2` is the second.
fn style_level(styles: &Styles, id: &str) -> u8 {
    let Some(style) = styles.get(id) else {
        return 0;
    };
    let name = &style.name;
    if !name.starts_with("list") {
        return 0;
    }
    name.rsplit(' ')
        .next()
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|n| (2..=9).contains(n))
        .map_or(0, |n| n - 1)
}

/// The blocks as Markdown, and the title.
fn write(blocks: Vec<Block>, core_title: Option<String>) -> Converted {
    let mut title: Option<String> = None;
    let mut first_heading: Option<String> = None;
    let mut out: Vec<String> = Vec::new();
    // Word numbers a list on across what interrupts it.
    let mut counters: HashMap<String, Vec<u32>> = HashMap::new();
    let mut i = 0;
    while i < blocks.len() {
        match &blocks[i] {
            Block::Title(text) => {
                if title.is_none() && !text.is_empty() {
                    title = Some(text.clone());
                } else if !text.is_empty() {
                    out.push(text.clone());
                }
            }
            Block::Heading(level, text) => {
                if first_heading.is_none() {
                    first_heading = Some(text.clone());
                }
                let text = text.trim_start_matches('#').trim();
                out.push(format!(
                    "{} {text}",
                    "#".repeat((*level).clamp(1, 6) as usize)
                ));
            }
            Block::Paragraph(text) => {
                if !text.is_empty() {
                    out.push(escape_start(text));
                }
            }
            Block::Quote(text) => out.push(
                text.lines()
                    .map(|l| format!("> {l}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Block::Code(_) => {
                let mut lines = Vec::new();
                while let Some(Block::Code(line)) = blocks.get(i) {
                    lines.push(line.as_str());
                    i += 1;
                }
                while lines.last().is_some_and(|l| l.trim().is_empty()) {
                    lines.pop();
                }
                let first = lines
                    .iter()
                    .position(|l| !l.trim().is_empty())
                    .unwrap_or(lines.len());
                if first < lines.len() {
                    out.push(fence("", &lines[first..].join("\n")));
                }
                continue;
            }
            Block::Item { .. } => {
                let mut items = Vec::new();
                let mut previous: Option<u8> = None;
                while let Some(Block::Item {
                    ordered,
                    list,
                    level,
                    text,
                }) = blocks.get(i)
                {
                    // Markdown nests one level at a time.
                    let level = previous.map_or(0, |p| (*level).min(p.saturating_add(1)));
                    previous = Some(level);
                    // This list's counters, one per level: deeper ones
                    // start again after a shallower item.
                    let levels = counters.entry(list.clone()).or_default();
                    levels.resize(usize::from(level) + 1, 0);
                    let number = &mut levels[usize::from(level)];
                    *number += 1;
                    let marker = if *ordered {
                        format!("{number}. ")
                    } else {
                        "- ".to_owned()
                    };
                    let indent = "    ".repeat(level as usize);
                    let continuation = format!("{indent}{}", " ".repeat(marker.len()));
                    let body = text.replace('\n', &format!("\n{continuation}"));
                    items.push(format!("{indent}{marker}{body}"));
                    i += 1;
                }
                out.push(items.join("\n"));
                continue;
            }
            Block::Table(rows) => {
                if let Some(table) = table_markdown(rows) {
                    out.push(table);
                }
            }
        }
        i += 1;
    }
    let mut markdown = out.join("\n\n");
    markdown.push('\n');
    Converted {
        markdown,
        title: title.or(first_heading).or(core_title),
    }
}

/// A paragraph whose text would read as Markdown structure (`# `, `> `)
/// keeps it as text.
fn escape_start(text: &str) -> String {
    // A heading, a quote, a rule, or a fence that would swallow the rest.
    if ["#", ">", "---", "```", "~~~"]
        .iter()
        .any(|opening| text.starts_with(opening))
    {
        format!("\\{text}")
    } else {
        text.to_owned()
    }
}

/// An element's local name (`w:p` → `p`).
fn local<'a>(e: &'a BytesStart<'_>) -> &'a [u8] {
    let name = e.name().into_inner();
    match name.iter().position(|&b| b == b':') {
        Some(colon) => &name[colon + 1..],
        None => name,
    }
}

/// Whether `e` is WordprocessingML's `name` (`w:name`).
fn is_w(e: &BytesStart<'_>, name: &[u8]) -> bool {
    let qname = e.name().into_inner();
    qname.len() == name.len() + 2 && qname.starts_with(b"w:") && &qname[2..] == name
}

fn is_w_name(qname: &[u8]) -> bool {
    qname.starts_with(b"w:")
}

/// An attribute by its local name (`w:val` → `val`), unescaped.
fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        let key = a.key.into_inner();
        let local = key.rsplit(|&b| b == b':').next().unwrap_or(key);
        (local == name)
            .then(|| a.normalized_value(XmlVersion::Implicit1_0).ok())
            .flatten()
            .map(|v| v.into_owned())
    })
}

/// An attribute by its full name (`r:id`).
fn attr_exact(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.into_inner() == name)
            .then(|| a.normalized_value(XmlVersion::Implicit1_0).ok())
            .flatten()
            .map(|v| v.into_owned())
    })
}

/// The text of `&amp;`, `&#x41;` and the like.
fn entity(r: &quick_xml::events::BytesRef<'_>) -> Option<String> {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return Some(c.to_string());
    }
    let name = r.decode().ok()?;
    quick_xml::escape::resolve_predefined_entity(&name).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    const W: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";

    fn docx(parts: &[(&str, String)]) -> Vec<u8> {
        let mut out = ::zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = ::zip::write::SimpleFileOptions::default()
            .compression_method(::zip::CompressionMethod::Deflated);
        for (name, data) in parts {
            out.start_file(*name, options).unwrap();
            out.write_all(data.as_bytes()).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    fn body(paragraphs: &str) -> String {
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document {W}><w:body>{paragraphs}<w:sectPr/></w:body></w:document>")
    }

    fn p(style: &str, text: &str) -> String {
        let ppr = if style.is_empty() {
            String::new()
        } else {
            format!("<w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr>")
        };
        format!("<w:p>{ppr}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
    }

    fn convert(parts: &[(&str, String)]) -> Converted {
        to_markdown(
            "a.docx",
            &docx(parts),
            &ArchiveLimits::default(),
            &mut super::super::Unmetered,
        )
        .unwrap()
    }

    #[test]
    fn headings_come_from_style_names_not_ids() {
        // A German Word names its heading styles' ids in German.
        let styles = format!("<w:styles {W}><w:style w:type=\"paragraph\" w:styleId=\"berschrift1\"><w:name w:val=\"heading 1\"/></w:style><w:style w:type=\"paragraph\" w:styleId=\"Mein\"><w:name w:val=\"Meine Überschrift\"/><w:basedOn w:val=\"berschrift2\"/></w:style><w:style w:type=\"paragraph\" w:styleId=\"berschrift2\"><w:name w:val=\"heading 2\"/></w:style><w:style w:type=\"paragraph\" w:styleId=\"Titel\"><w:name w:val=\"Title\"/></w:style></w:styles>");
        let doc = body(
            &[
                p("Titel", "Handbuch"),
                p("berschrift1", "Einleitung"),
                p("", "Text &amp; mehr &#x263A;"),
                p("Mein", "Details"),
            ]
            .concat(),
        );
        let out = convert(&[("word/document.xml", doc), ("word/styles.xml", styles)]);
        assert_eq!(out.title.as_deref(), Some("Handbuch"));
        assert_eq!(
            out.markdown,
            "# Einleitung\n\nText & mehr ☺\n\n## Details\n"
        );
    }

    #[test]
    fn without_styles_ids_and_outline_levels_still_say_heading() {
        let doc = body(
            &[
                p("Heading2", "Setup"),
                "<w:p><w:pPr><w:outlineLvl w:val=\"2\"/></w:pPr><w:r><w:t>Deep</w:t></w:r></w:p>"
                    .into(),
            ]
            .concat(),
        );
        let core = "<cp:coreProperties xmlns:cp=\"x\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>From core</dc:title></cp:coreProperties>".to_owned();
        let out = convert(&[("word/document.xml", doc), ("docProps/core.xml", core)]);
        assert_eq!(out.markdown, "## Setup\n\n### Deep\n");
        assert_eq!(out.title.as_deref(), Some("Setup"));
        let out = convert(&[
            ("word/document.xml", body(&p("", "Just text"))),
            (
                "docProps/core.xml",
                "<c xmlns:dc=\"d\"><dc:title> From   core </dc:title></c>".into(),
            ),
        ]);
        assert_eq!(out.title.as_deref(), Some("From core"));
    }

    #[test]
    fn runs_keep_emphasis_code_and_links_but_not_deletions_or_fields() {
        let para = "<w:p><w:r><w:t xml:space=\"preserve\">Run </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r><w:r><w:rPr><w:b w:val=\"0\"/><w:i/></w:rPr><w:t xml:space=\"preserve\"> italic </w:t></w:r><w:r><w:rPr><w:rFonts w:ascii=\"Consolas\" w:hAnsi=\"Consolas\"/></w:rPr><w:t>cfg.load()</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r><w:r><w:t xml:space=\"preserve\"> see </w:t></w:r><w:hyperlink r:id=\"rId9\"><w:r><w:t>the docs</w:t></w:r></w:hyperlink><w:r><w:tab/><w:t>end</w:t></w:r></w:p>"
            .to_owned();
        let rels = "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId9\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" Target=\"https://example.org/a?b=1&amp;c=2\" TargetMode=\"External\"/></Relationships>".to_owned();
        let out = convert(&[
            ("word/document.xml", body(&para)),
            ("word/_rels/document.xml.rels", rels),
        ]);
        assert_eq!(
            out.markdown,
            "Run **bold** *italic* `cfg.load()` see [the docs](https://example.org/a?b=1&c=2) end\n"
        );
    }

    #[test]
    fn lists_nest_by_level_and_numbering_says_ordered() {
        let numbering = format!("<w:numbering {W}><w:abstractNum w:abstractNumId=\"0\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"decimal\"/></w:lvl><w:lvl w:ilvl=\"1\"><w:numFmt w:val=\"bullet\"/></w:lvl></w:abstractNum><w:num w:numId=\"3\"><w:abstractNumId w:val=\"0\"/></w:num></w:numbering>");
        let item = |level: u8, text: &str| {
            format!("<w:p><w:pPr><w:numPr><w:ilvl w:val=\"{level}\"/><w:numId w:val=\"3\"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>")
        };
        let doc = body(
            &[
                p("", "Steps:"),
                item(0, "Install"),
                item(1, "on Linux"),
                item(1, "on macOS"),
                item(0, "Run"),
                item(2, "too deep jumps one level"),
                p("", "After."),
            ]
            .concat(),
        );
        let out = convert(&[
            ("word/document.xml", doc),
            ("word/numbering.xml", numbering),
        ]);
        assert_eq!(
            out.markdown,
            "Steps:\n\n1. Install\n    - on Linux\n    - on macOS\n2. Run\n    1. too deep jumps one level\n\nAfter.\n"
        );
    }

    #[test]
    fn tables_become_markdown_tables_and_code_paragraphs_one_block() {
        let cell = |text: &str| format!("<w:tc><w:tcPr/>{}</w:tc>", p("", text));
        let row = |cells: &[&str]| {
            format!(
                "<w:tr>{}</w:tr>",
                cells.iter().map(|c| cell(c)).collect::<String>()
            )
        };
        let styles = format!("<w:styles {W}><w:style w:styleId=\"Code\"><w:name w:val=\"Code\"/></w:style></w:styles>");
        let doc = body(
            &[
                format!(
                    "<w:tbl>{}{}</w:tbl>",
                    row(&["Option", "Default"]),
                    row(&["a|b", "none"])
                ),
                p("Code", "fn main() {"),
                p("Code", "    run();"),
                p("Code", "}"),
                p("TOC1", "Options\t3"),
                p("", "# not a heading"),
            ]
            .concat(),
        );
        let out = convert(&[("word/document.xml", doc), ("word/styles.xml", styles)]);
        assert_eq!(
            out.markdown,
            "| Option | Default |\n| --- | --- |\n| a\\|b | none |\n\n```\nfn main() {\n    run();\n}\n```\n\n\\# not a heading\n"
        );
    }

    #[test]
    fn what_is_not_a_word_document_is_refused_clearly() {
        let none = ArchiveLimits::default();
        let err = to_markdown("a.docx", b"not a zip", &none, &mut super::super::Unmetered)
            .err()
            .unwrap();
        assert!(matches!(err, ExtractError::Docx(_)), "{err}");
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0];
        let err = to_markdown("a.docx", &ole, &none, &mut super::super::Unmetered)
            .err()
            .unwrap();
        assert!(err.to_string().contains("password"), "{err}");
        let err = to_markdown(
            "a.docx",
            &docx(&[("other.xml", "<x/>".into())]),
            &none,
            &mut super::super::Unmetered,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("word/document.xml"), "{err}");
        let err = to_markdown(
            "a.docx",
            &docx(&[(
                "word/document.xml",
                "<w:document><w:body><w:p></w:body>".into(),
            )]),
            &none,
            &mut super::super::Unmetered,
        );
        assert!(err.is_err());
    }

    #[test]
    fn a_bomb_is_refused_before_it_inflates() {
        let big = format!(
            "<w:document {W}><w:body><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:body></w:document>",
            "a".repeat(8 << 20)
        );
        let err = to_markdown(
            "a.docx",
            &docx(&[("word/document.xml", big)]),
            &ArchiveLimits::default(),
            &mut super::super::Unmetered,
        )
        .err()
        .unwrap();
        assert!(matches!(err, ExtractError::HostileZip(_)), "{err}");
    }

    /// Body text that Markdown would read as structure is escaped: a fence
    /// would swallow the rest of the document and its headings.
    #[test]
    fn paragraphs_that_read_as_markdown_structure_are_escaped() {
        for text in [
            "# not a heading",
            "> not a quote",
            "--- not a rule",
            "``` not code",
            "~~~ nor this",
        ] {
            assert_eq!(escape_start(text), format!("\\{text}"));
        }
        assert_eq!(escape_start("plain `code` text"), "plain `code` text");
    }
}
