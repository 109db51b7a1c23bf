//! PDF text, page by page.

use std::cell::Cell;
use std::io::Read;

use pdf_extract::{Document, LoadOptions, Object, ObjectId, PlainTextOutput, Stream};

use super::{ExtractError, Extracted, MemoryGauge, PageSpan, TextLayer};

/// Extracts each page's text; pages are separated by a blank line and their
/// spans recorded so every chunk can name its page. A page without usable
/// text is marked so ([`TextLayer`]); [`require_text`] refuses a file with
/// no text at all, unless its caller reads such pages itself (OCR).
///
/// Encrypted files open when their user password is empty (common for
/// "protected" PDFs); any other password is an error that says so.
///
/// Before the reader decodes anything, the compressed streams are inflated
/// into a counter, never into memory: past `max_inflated` bytes in all the
/// file is refused as a decompression bomb. Object streams, which the
/// reader unpacks while it loads the file, are counted as it meets them.
/// What they inflate to in all (and the loaded file, about its size) is
/// then asked of `memory`, since the reader decodes them page by page.
pub fn extract(
    bytes: &[u8],
    max_inflated: u64,
    memory: &mut dyn MemoryGauge,
) -> Result<Extracted, ExtractError> {
    let (loaded, left) = with_object_stream_budget(max_inflated, || {
        super::guard("the PDF reader failed on this file", || {
            Document::load_mem_with_options(
                bytes,
                LoadOptions {
                    filter: Some(count_object_stream),
                    ..LoadOptions::default()
                },
            )
        })
    });
    let left = left.ok_or(ExtractError::PdfBomb(max_inflated))?;
    let mut doc = loaded
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(ExtractError::CorruptPdf)?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(ExtractError::EncryptedPdf);
    }
    let left = check_inflated_size(&doc, left, max_inflated)?;
    let held = (max_inflated - left).saturating_add(bytes.len() as u64);
    memory.grow(held).map_err(ExtractError::OutOfMemory)?;
    let extracted = pages_of(doc);
    memory.shrink(held);
    extracted
}

/// Every page's text, and the title.
fn pages_of(doc: Document) -> Result<Extracted, ExtractError> {
    let title = title_of(&doc);
    let page_count = doc.get_pages().len() as u32;
    if page_count == 0 {
        return Err(ExtractError::CorruptPdf("it has no pages".into()));
    }

    let mut text = String::new();
    let mut pages = Vec::with_capacity(page_count as usize);
    let mut warnings = Vec::new();
    for page in 1..=page_count {
        let extracted = super::guard("the PDF reader failed on this file", || {
            let mut out = String::new();
            let mut sink = PlainTextOutput::new(&mut out);
            pdf_extract::output_doc_page(&doc, &mut sink, page).map(|()| out)
        });
        let page_text = match extracted {
            Ok(Ok(t)) => tidy(&t),
            Ok(Err(e)) => {
                warnings.push(format!("page {page}: text could not be read ({e})"));
                String::new()
            }
            Err(e) => {
                warnings.push(format!("page {page}: text could not be read ({e})"));
                String::new()
            }
        };
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        let start = text.len();
        text.push_str(&page_text);
        let layer = if page_text.trim().is_empty() {
            TextLayer::Missing
        } else if is_garbage(&page_text) {
            TextLayer::Garbage
        } else {
            TextLayer::Usable
        };
        pages.push(PageSpan {
            page,
            start,
            end: text.len(),
            layer,
        });
    }
    Ok(Extracted {
        file_path: String::new(),
        title,
        description: None,
        text,
        pages,
        warnings,
    })
}

/// Refuses a PDF whose pages hold no text at all (scans, drawings):
/// storing it would make a document nobody can find.
pub(super) fn require_text(doc: Extracted) -> Result<Extracted, ExtractError> {
    if doc.text.trim().is_empty() {
        return Err(ExtractError::NoTextInPdf);
    }
    Ok(doc)
}

/// Whether a page's text is not text: at least 30% of its visible
/// characters are ones no font maps to a letter on purpose (U+FFFD,
/// control characters, private-use codes), as a font without a Unicode map
/// gives. Such a page is better read from its image.
fn is_garbage(page: &str) -> bool {
    let (mut seen, mut bad) = (0usize, 0usize);
    for c in page.chars().filter(|c| !c.is_whitespace()) {
        seen += 1;
        let private = matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..);
        if c == '\u{FFFD}' || c.is_control() || private {
            bad += 1;
        }
    }
    seen > 0 && bad * 10 >= seen * 3
}

thread_local! {
    /// What the PDF being loaded on this thread may still inflate in object
    /// streams; `None` once it went past. The reader's filter is a plain
    /// `fn`, so the budget cannot be captured; the reader (built without its
    /// `rayon` feature) calls it on the loading thread.
    static OBJECT_STREAM_BUDGET: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `load` with `budget` bytes for object streams; returns what it gave
/// and what is left of the budget (`None`: it went past).
fn with_object_stream_budget<T>(budget: u64, load: impl FnOnce() -> T) -> (T, Option<u64>) {
    OBJECT_STREAM_BUDGET.set(Some(budget));
    let loaded = load();
    (loaded, OBJECT_STREAM_BUDGET.take())
}

/// The reader's load filter: counts what each Flate object stream inflates
/// to before the reader unpacks it, and drops it, unread, past the budget.
///
/// The reader goes on with the object it passed, and reads the returned one
/// only for the objects it took out of an object stream (never streams).
/// So streams answer `Null`, sparing a copy of their content, and other
/// objects answer themselves.
fn count_object_stream(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let Object::Stream(stream) = object else {
        return Some((id, object.clone()));
    };
    if stream.dict.has_type(b"ObjStm") && is_flate(stream) {
        let left = OBJECT_STREAM_BUDGET.get()?;
        let inflated = inflated_len(&stream.content, left.saturating_add(1));
        let rest = left.checked_sub(inflated);
        OBJECT_STREAM_BUDGET.set(rest);
        rest?;
    }
    Some((id, Object::Null))
}

/// Refuses a PDF whose Flate streams would inflate past `left` bytes in
/// all (`max` is the whole bound, for the message). Image streams are left
/// out: the text reader never decodes them, and a scanned book's images may
/// well inflate past any sensible text bound.
/// Returns what is left of the bound.
fn check_inflated_size(doc: &Document, mut left: u64, max: u64) -> Result<u64, ExtractError> {
    for object in doc.objects.values() {
        let Object::Stream(stream) = object else {
            continue;
        };
        if is_image(stream) || !is_flate(stream) {
            continue;
        }
        let inflated = inflated_len(&stream.content, left.saturating_add(1));
        left = left
            .checked_sub(inflated)
            .ok_or(ExtractError::PdfBomb(max))?;
    }
    Ok(left)
}

/// How many bytes `compressed` inflates to, counting at most `cap`. A
/// damaged stream counts what inflated before the damage: the reader
/// reports damage itself.
fn inflated_len(compressed: &[u8], cap: u64) -> u64 {
    let mut decoder = flate2::read::ZlibDecoder::new(compressed).take(cap);
    let mut buf = [0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(n @ 1..) = decoder.read(&mut buf) {
        total += n as u64;
    }
    total
}

/// Whether a stream's first filter is Flate (the decoder the reader runs first).
fn is_flate(stream: &Stream) -> bool {
    match stream.dict.get(b"Filter") {
        Ok(Object::Name(name)) => name == b"FlateDecode",
        Ok(Object::Array(filters)) => {
            matches!(filters.first(), Some(Object::Name(name)) if name == b"FlateDecode")
        }
        _ => false,
    }
}

fn is_image(stream: &Stream) -> bool {
    matches!(stream.dict.get(b"Subtype"), Ok(Object::Name(name)) if name == b"Image")
}

/// Collapses the extractor's runs of blank lines and trailing spaces, spells
/// out typographic ligatures (`ﬁ` → `fi`) and joins words hyphenated across
/// a line break (`them-` / `selves` → `themselves`), so words match queries.
fn tidy(page: &str) -> String {
    let page = expand_ligatures(page);
    let mut out = String::with_capacity(page.len());
    let mut blank_run = 0;
    for line in page.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run == 1 && !out.is_empty() {
                out.push('\n');
            }
            continue;
        }
        blank_run = 0;
        let starts_lower = line.trim_start().starts_with(|c: char| c.is_lowercase());
        if starts_lower && ends_with_broken_word(&out) {
            out.truncate(out.len() - "-\n".len());
            out.push_str(line.trim_start());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// Whether `text` ends with a letter, a hyphen and a newline.
fn ends_with_broken_word(text: &str) -> bool {
    let Some(rest) = text.strip_suffix("-\n") else {
        return false;
    };
    rest.chars().last().is_some_and(char::is_alphabetic)
}

fn expand_ligatures(text: &str) -> std::borrow::Cow<'_, str> {
    const LIGATURES: [(char, &str); 7] = [
        ('\u{FB00}', "ff"),
        ('\u{FB01}', "fi"),
        ('\u{FB02}', "fl"),
        ('\u{FB03}', "ffi"),
        ('\u{FB04}', "ffl"),
        ('\u{FB05}', "st"),
        ('\u{FB06}', "st"),
    ];
    if !text.chars().any(|c| ('\u{FB00}'..='\u{FB06}').contains(&c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match LIGATURES.iter().find(|(l, _)| *l == c) {
            Some((_, spelled)) => out.push_str(spelled),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

fn title_of(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = doc.dereference(info).ok()?.1.as_dict().ok()?;
    let title = pdf_extract::decode_text_string(info.get(b"Title").ok()?).ok()?;
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_unmapped_glyphs_is_garbage_and_real_text_is_not() {
        assert!(is_garbage("\u{E001}\u{E002}\u{E003} \u{E004}\u{E005}"));
        assert!(is_garbage("\u{FFFD}\u{FFFD}\u{FFFD} ok"));
        assert!(is_garbage("\u{1}\u{2}\u{3}\u{4} abc"));
        assert!(!is_garbage("Plain words, with numbers 1 2 3 and § signs."));
        assert!(!is_garbage("Futbolcularda sürat egzersizinin nitrik oksit"));
        assert!(!is_garbage("Überschrift ∑ αβγ 漢字 — one \u{FFFD} slip"));
        assert!(!is_garbage(""));
    }
}
