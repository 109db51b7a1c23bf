//! Cutting extracted text into chunks for embedding and search.
//!
//! Text is read as Markdown blocks (headings, paragraphs, fenced and indented
//! code). Blocks are merged up to [`ChunkConfig::target`] bytes; each chunk
//! after the first starts with up to [`ChunkConfig::overlap`] bytes of the
//! previous one's closing prose, cut on a sentence or line boundary, so a
//! sentence near a border is whole in at least one chunk. A code block is
//! never split, and never used as overlap, unless it alone exceeds
//! [`ChunkConfig::hard_max`]; then it is cut between lines.
//!
//! Spans are byte offsets into the text, so `&text[c.start..c.end] == c.text`.
//!
//! **Why 700 bytes.** The embedding model reads the first 256 word pieces of
//! a chunk's context and text and nothing after. At the earlier 1,500 bytes
//! (the size the seed systems use) most chunks of the evaluation sets ran
//! past that, and the dense leg never saw the last part of most of them; at
//! 700 bytes few are cut (mostly single code blocks). On stores built afresh
//! at each size (`make eval`, hybrid nDCG@10), 700 was the best of 500 to
//! 1,500 on the mean of the tuning sets, the held-out sets agree, and both
//! legs gain on every set. The cost: a page makes about twice as many chunks
//! (more rows to store, scan and hold in memory) and takes longer to ingest,
//! since nothing is cut away unread any more (docs/benchmarks.md, "Chunk
//! size").

use crate::extract::Extracted;

/// Sizes, in bytes of UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Chunks are merged up to this size.
    pub target: usize,
    /// Text repeated from the end of the previous chunk, at most.
    pub overlap: usize,
    /// No chunk is ever larger; a code block larger than this is split.
    pub hard_max: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self {
            target: 700,
            overlap: 100,
            hard_max: 6000,
        }
    }
}

impl ChunkConfig {
    /// The same sizes, made consistent: `overlap < target <= hard_max`.
    fn normalised(self) -> Self {
        let target = self.target.max(16);
        Self {
            target,
            overlap: self.overlap.min(target / 2),
            hard_max: self.hard_max.max(target),
        }
    }
}

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Position in the document, from 0.
    pub index: usize,
    /// Byte span in the extracted text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The headings this chunk sits under, outermost first.
    pub heading_path: Vec<String>,
    /// For PDFs, the page the chunk starts on.
    pub page: Option<u32>,
}

impl Chunk {
    /// The heading path as people read it: `Routing > Dynamic routes`.
    pub fn heading_path_display(&self) -> String {
        heading_path(self.heading_path.iter().map(String::as_str))
    }
}

/// What separates the headings of a heading path, as people read it and
/// as it is stored.
pub const HEADING_SEPARATOR: &str = " > ";

/// Headings, outermost first, as one heading path (`Routing > Dynamic
/// routes`): how chunks, sections and contexts name where text sits, so a
/// path one gives finds what another named.
pub fn heading_path<'a>(headings: impl IntoIterator<Item = &'a str>) -> String {
    headings
        .into_iter()
        .collect::<Vec<_>>()
        .join(HEADING_SEPARATOR)
}

/// Chunks an extracted document, with pages for PDFs.
pub fn chunk_document(doc: &Extracted, config: &ChunkConfig) -> Vec<Chunk> {
    let mut chunks = chunk_text(&doc.text, config);
    if !doc.pages.is_empty() {
        for c in &mut chunks {
            c.page = doc.page_at(c.start);
        }
    }
    chunks
}

/// Chunks text (see the module docs).
pub fn chunk_text(text: &str, config: &ChunkConfig) -> Vec<Chunk> {
    let config = config.normalised();
    let units = units(text, &config);
    let mut chunks = Vec::new();

    // Where the last stored chunk ends. A chunk that does not start with
    // overlap starts here, so whitespace that fitted in no chunk before it
    // (the blank tail of a cut block after a full chunk) opens the next one
    // instead of leaving a hole in the text.
    let mut covered = 0;
    let mut current: Option<Open> = None;
    for unit in units {
        // Whitespace alone is never a chunk's reason to exist: it goes with
        // the chunk before it while that stays under the hard maximum, and
        // otherwise with the next one (through `covered`).
        if text[unit.start..unit.end].trim().is_empty() {
            if let Some(open) = current
                .as_mut()
                .filter(|open| open.end - open.start + unit.len() <= config.hard_max)
            {
                open.end = unit.end;
            }
            continue;
        }
        if let Some(open) = current.as_mut() {
            if unit.end - open.start > config.target {
                if open.has_new_text {
                    // Repeat the previous chunk's closing prose, if the
                    // unit still fits after it.
                    let overlap = open
                        .prose_from
                        .and_then(|from| {
                            overlap_start(text, from.max(open.start + 1), open.end, config.overlap)
                        })
                        .filter(|&start| unit.end - start <= config.target);
                    covered = push(&mut chunks, text, open);
                    current = overlap.map(|start| Open {
                        start,
                        end: unit.start,
                        heading_path: unit.heading_path.clone(),
                        prose_from: Some(start),
                        has_new_text: false,
                    });
                } else {
                    // Only repeated text so far: drop it rather than store a
                    // chunk of nothing new; the unit starts a chunk of its own.
                    current = None;
                }
            }
        }
        let open = current.get_or_insert_with(|| Open {
            start: covered,
            end: unit.start,
            heading_path: unit.heading_path.clone(),
            prose_from: None,
            has_new_text: false,
        });
        open.end = unit.end;
        open.has_new_text = true;
        open.prose_from = match unit.kind {
            Kind::Code => None,
            Kind::Prose | Kind::Heading => open.prose_from.or(Some(unit.start)),
        };
    }
    if let Some(open) = current.filter(|o| o.has_new_text) {
        covered = push(&mut chunks, text, &open);
    }
    // Whitespace after the last chunk that fitted nowhere goes with it, a
    // few blank bytes past the maximum, rather than be lost to reassembly.
    if let Some(last) = chunks.last_mut().filter(|_| covered < text.len()) {
        last.end = text.len();
        last.text = text[last.start..].to_owned();
    }
    chunks
}

/// A chunk being filled.
struct Open {
    start: usize,
    end: usize,
    heading_path: Vec<String>,
    /// Where the run of prose at the chunk's end begins (overlap comes from there only).
    prose_from: Option<usize>,
    /// Whether anything beyond the overlap has been added.
    has_new_text: bool,
}

/// Stores the open chunk; returns where it ends. Only a chunk with new,
/// non-blank text is ever opened, so none is empty.
fn push(chunks: &mut Vec<Chunk>, text: &str, open: &Open) -> usize {
    chunks.push(Chunk {
        index: chunks.len(),
        start: open.start,
        end: open.end,
        text: text[open.start..open.end].to_owned(),
        heading_path: open.heading_path.clone(),
        page: None,
    });
    open.end
}

/// The earliest sentence or line boundary in the last `overlap` bytes of
/// `[from, end)`, so the overlap is as long as allowed and starts cleanly.
fn overlap_start(text: &str, from: usize, end: usize, overlap: usize) -> Option<usize> {
    if overlap == 0 || from >= end {
        return None;
    }
    let window_start = ceil_char_boundary(text, end.saturating_sub(overlap).max(from));
    (window_start..end).find(|&i| is_boundary(text, i))
}

/// Whether a chunk may start at byte `i`: after a newline, or after a
/// sentence's final punctuation and its space.
fn is_boundary(text: &str, i: usize) -> bool {
    let bytes = text.as_bytes();
    if i == 0 || i >= bytes.len() {
        return false;
    }
    match bytes[i - 1] {
        b'\n' => true,
        b' ' => i >= 2 && matches!(bytes[i - 2], b'.' | b'!' | b'?'),
        _ => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prose,
    Code,
    Heading,
}

/// A piece of text that is never split further: a block, or a cut of an
/// oversized block.
struct Unit {
    start: usize,
    end: usize,
    kind: Kind,
    heading_path: Vec<String>,
}

impl Unit {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The text's headings, in order: where each starts, its level and its
/// title, read as the chunker reads them (never inside a code block), so
/// that a section named by a chunk's heading path is found by it.
pub(crate) fn headings(text: &str) -> Vec<(usize, usize, String)> {
    blocks(text)
        .iter()
        .filter(|b| matches!(b.kind, Kind::Heading))
        .map(|b| {
            let line = text[b.start..].lines().next().unwrap_or("");
            let level = line.chars().take_while(|&c| c == '#').count();
            let title = line[level..].trim().trim_end_matches('#').trim().to_owned();
            (b.start, level, title)
        })
        .collect()
}

/// Where each of the text's blocks starts, ascending: the places a text
/// may be cut without splitting a paragraph or a code block.
pub fn block_starts(text: &str) -> Vec<usize> {
    blocks(text).iter().map(|b| b.start).collect()
}

/// The text's blocks, tiling it from 0 to its end, oversized ones cut.
fn units(text: &str, config: &ChunkConfig) -> Vec<Unit> {
    let blocks = blocks(text);
    let mut out = Vec::with_capacity(blocks.len());
    let mut headings: Vec<(usize, String)> = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let start = if i == 0 { 0 } else { block.start };
        let end = blocks.get(i + 1).map_or(text.len(), |next| next.start);
        if let Kind::Heading = block.kind {
            let line = text[block.start..end].lines().next().unwrap_or("");
            let level = line.chars().take_while(|&c| c == '#').count();
            let title = line[level..].trim().trim_end_matches('#').trim().to_owned();
            headings.retain(|(l, _)| *l < level);
            headings.push((level, title));
        }
        let path: Vec<String> = headings.iter().map(|(_, t)| t.clone()).collect();
        let limit = match block.kind {
            Kind::Code => config.hard_max,
            // Leave room for the overlap the next chunk starts with.
            Kind::Prose | Kind::Heading => config.target - config.overlap,
        };
        for (s, e) in cut(text, start, end, limit, block.kind) {
            out.push(Unit {
                start: s,
                end: e,
                kind: block.kind,
                heading_path: path.clone(),
            });
        }
    }
    out
}

/// Cuts `[start, end)` into pieces of at most `limit` bytes: code between
/// lines, prose between sentences or lines; a piece with no such boundary is
/// cut at a character boundary.
fn cut(text: &str, start: usize, end: usize, limit: usize, kind: Kind) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut s = start;
    while end - s > limit {
        let hard = floor_char_boundary(text, s + limit);
        let boundary = (s + 1..=hard).rev().find(|&i| match kind {
            Kind::Code => i > 0 && text.as_bytes()[i - 1] == b'\n',
            Kind::Prose | Kind::Heading => is_boundary(text, i),
        });
        let cut_at = boundary
            .unwrap_or(hard)
            .max(ceil_char_boundary(text, s + 1));
        pieces.push((s, cut_at));
        s = cut_at;
    }
    pieces.push((s, end));
    pieces
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Where each Markdown block starts, and its kind.
struct Block {
    start: usize,
    kind: Kind,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        lines.push((offset, line));
        offset += line.len();
    }

    let mut blocks = Vec::new();
    let mut i = 0;
    let mut previous_blank = true;
    while i < lines.len() {
        let (start, line) = lines[i];
        if line.trim().is_empty() {
            previous_blank = true;
            i += 1;
            continue;
        }
        if let Some(fence) = fence_of(line) {
            i += 1;
            while i < lines.len() && !closes(lines[i].1, fence) {
                i += 1;
            }
            i += 1; // the closing fence (or the end of the text)
            blocks.push(Block {
                start,
                kind: Kind::Code,
            });
            previous_blank = false;
            continue;
        }
        if is_heading(line) {
            blocks.push(Block {
                start,
                kind: Kind::Heading,
            });
            i += 1;
            previous_blank = false;
            continue;
        }
        if previous_blank && is_indented(line) {
            i += 1;
            while i < lines.len() && (is_indented(lines[i].1) || lines[i].1.trim().is_empty()) {
                i += 1;
            }
            blocks.push(Block {
                start,
                kind: Kind::Code,
            });
            previous_blank = false;
            continue;
        }
        // A paragraph: up to a blank line, a fence or a heading.
        i += 1;
        while i < lines.len() {
            let l = lines[i].1;
            if l.trim().is_empty() || fence_of(l).is_some() || is_heading(l) {
                break;
            }
            i += 1;
        }
        blocks.push(Block {
            start,
            kind: Kind::Prose,
        });
        previous_blank = false;
    }
    blocks
}

/// A fence opener: up to three spaces, then three or more backticks or tildes.
fn fence_of(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let count = trimmed.bytes().take_while(|&b| b == first).count();
    (count >= 3).then_some((first, count))
}

fn closes(line: &str, (ch, count): (u8, usize)) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= count && trimmed.bytes().all(|b| b == ch)
}

fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes)
        && line[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t' || c == '\n')
}

fn is_indented(line: &str) -> bool {
    line.starts_with("    ") || line.starts_with('\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(target: usize, overlap: usize, hard_max: usize) -> ChunkConfig {
        ChunkConfig {
            target,
            overlap,
            hard_max,
        }
    }

    #[test]
    fn short_text_is_one_chunk_with_its_heading_path() {
        let text = "# Routing\n\n## Dynamic routes\n\nUse brackets.\n";
        let chunks = chunk_text(text, &ChunkConfig::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, text);
        assert_eq!(chunks[0].heading_path_display(), "Routing");
    }

    #[test]
    fn heading_paths_follow_the_section_each_chunk_starts_in() {
        let para = "Sentence one is here. ".repeat(10);
        let text =
            format!("# Routing\n\n{para}\n\n## Dynamic routes\n\n{para}\n\n# API\n\n{para}\n");
        let chunks = chunk_text(&text, &config(300, 50, 1000));
        let paths: Vec<String> = chunks.iter().map(Chunk::heading_path_display).collect();
        assert!(
            paths.contains(&"Routing > Dynamic routes".to_owned()),
            "{paths:?}"
        );
        assert_eq!(paths.last().map(String::as_str), Some("API"));
    }

    #[test]
    fn code_blocks_are_never_split_or_used_as_overlap() {
        let code = format!(
            "```rust\n{}```\n",
            "let x = 1; // a line of code\n".repeat(30)
        );
        let prose = "Some words in a sentence. ".repeat(20);
        let text = format!("{prose}\n\n{code}\n{prose}\n");
        let chunks = chunk_text(&text, &config(600, 100, 2000));
        let with_code: Vec<&Chunk> = chunks.iter().filter(|c| c.text.contains("```")).collect();
        assert_eq!(with_code.len(), 1, "{chunks:#?}");
        assert_eq!(with_code[0].text.matches("```").count(), 2);
    }

    #[test]
    fn an_oversized_code_block_is_cut_between_lines() {
        let code = format!("```\n{}```\n", "0123456789 abcdefghij\n".repeat(100));
        let chunks = chunk_text(&code, &config(200, 20, 500));
        assert!(chunks.len() > 1);
        for c in &chunks {
            assert!(c.text.len() <= 500);
            assert!(c.end == code.len() || code.as_bytes()[c.end - 1] == b'\n');
        }
    }

    #[test]
    fn overlap_starts_on_a_sentence_boundary() {
        let text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. ".repeat(12);
        let chunks = chunk_text(&text, &config(200, 60, 400));
        assert!(chunks.len() > 2);
        for pair in chunks.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(b.start < a.end, "consecutive chunks should overlap");
            assert!(a.end - b.start <= 60);
            assert!(
                b.text.starts_with(|c: char| c.is_uppercase()),
                "{:?}",
                b.text
            );
        }
    }

    #[test]
    fn the_blank_tail_of_a_cut_paragraph_stays_in_the_text() {
        // The paragraph and its first line break fill a chunk exactly, so
        // the second line break is cut off as a unit of its own; the code
        // block after it is too big to share a chunk with it.
        let paragraph = "One two three four. ".repeat(11);
        let paragraph = paragraph.trim_end();
        let code = "let a = 1;\n".repeat(30);
        let text = format!("{paragraph}\n\n```rust\n{code}```\n");
        let chunks = chunk_text(&text, &config(paragraph.len() + 1, 0, 2000));
        assert_covers(&text, &chunks, 2000);
    }

    #[test]
    fn a_blank_line_after_a_full_code_chunk_starts_the_next_chunk() {
        // The first fence plus its line break is exactly the hard maximum,
        // so the blank line after it fits neither it nor a chunk of its own;
        // the next block alone is past the target.
        let code = "let a = 1;\n".repeat(20);
        let fence = format!("```rust\n{code}```\n");
        let more = "let b = 2;\n".repeat(15);
        let text = format!("{fence}\n```rust\n{more}```\n");
        let chunks = chunk_text(&text, &config(100, 0, fence.len()));
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert_eq!(chunks[0].end, fence.len());
        assert_eq!(chunks[1].start, fence.len());
        assert_eq!(chunks[1].end, text.len());
        assert!(chunks.iter().all(|c| c.text.len() <= fence.len()));
    }

    #[test]
    fn a_blank_tail_that_fits_no_chunk_is_still_kept() {
        // Two paragraphs share a chunk; the second is cut (it leaves no room
        // for overlap), and its blank tail fits neither that chunk nor,
        // before the next 70-byte piece, a chunk under the target. It must
        // open the next chunk (which it fits under the hard maximum).
        let first = format!("{}.\n\n", "A".repeat(22));
        let second = format!("{}.\n{}", "B".repeat(68), "\n".repeat(40));
        let third = format!("{}.\n", "C".repeat(93));
        let text = format!("{first}{second}{third}");
        let chunks = chunk_text(&text, &config(100, 30, 120));
        assert_covers(&text, &chunks, 120);
    }

    /// The chunks run over the whole text without a gap, none longer than
    /// `hard_max`.
    fn assert_covers(text: &str, chunks: &[Chunk], hard_max: usize) {
        let mut covered = 0;
        for c in chunks {
            assert!(
                c.start <= covered,
                "a gap before chunk {}: {chunks:?}",
                c.index
            );
            assert!(c.text.len() <= hard_max, "{chunks:?}");
            covered = covered.max(c.end);
        }
        assert_eq!(covered, text.len(), "{chunks:?}");
    }

    #[test]
    fn empty_and_blank_text_give_no_chunks() {
        assert!(chunk_text("", &ChunkConfig::default()).is_empty());
        assert!(chunk_text("  \n\n ", &ChunkConfig::default()).is_empty());
    }

    #[test]
    fn multibyte_text_without_boundaries_is_cut_on_char_boundaries() {
        let text = "配置在启动时从环境变量读取".repeat(100);
        let chunks = chunk_text(&text, &config(100, 10, 200));
        for c in &chunks {
            assert!(c.text.len() <= 200);
        }
        assert_eq!(chunks.last().map(|c| c.end), Some(text.len()));
    }
}
