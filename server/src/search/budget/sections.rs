//! The whole section a hit sits in: its heading and everything under it,
//! subsections included, up to the next heading of its level or above.
//!
//! Why: a chunk is cut at a size, not where the author's thought ends; an
//! agent given the best chunk of "Configure a proxy" may get the first
//! half of the steps. Where the budget allows, it gets the section whole.
//!
//! A section is found in the document as its chunks reassemble it, by the
//! hit's heading path (where its chunk starts). Chunks are cut at a size,
//! so a chunk may start before its section's heading (its overlap) or run
//! on into the next section: the passage is the section and the chunk
//! together, so nothing the ranking matched is lost. The chunker never
//! splits a code block, and sections end at headings, so code comes whole.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use index_core::document::{reassemble, Reassembled};
use index_core::search::SearchHit;
use ingest_core::chunk::HEADING_SEPARATOR;
use ingest_core::sections;

use crate::store::{DocumentRange, Store, StoreError, StoredChunk};

/// How far a hit's section reaches beyond its chunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Section {
    /// Not known: the document or the section was not found.
    #[default]
    Unknown,
    /// The chunk holds its whole section.
    Chunk,
    /// The section spans these chunks of the document; its text, from its
    /// heading on, overlaps removed.
    Chunks {
        range: RangeInclusive<u32>,
        text: String,
    },
}

impl Section {
    /// The chunks it covers, given the hit's own chunk.
    pub fn covers(&self, chunk_index: u32) -> RangeInclusive<u32> {
        match self {
            Self::Unknown | Self::Chunk => chunk_index..=chunk_index,
            Self::Chunks { range, .. } => range.clone(),
        }
    }
}

/// The chunks around the hits ([`window`]) that their sections are found
/// in ([`of`]): one read of the store for every document the hits come
/// from.
pub async fn read(
    store: &Store,
    hits: &[SearchHit],
    max_tokens: usize,
) -> Result<Vec<StoredChunk>, StoreError> {
    let reach = window(max_tokens);
    let mut ranges: HashMap<(&str, &str, &str), (u32, u32)> = HashMap::new();
    for hit in hits {
        let (from, to) = (
            hit.chunk_index.saturating_sub(reach),
            hit.chunk_index.saturating_add(reach),
        );
        ranges
            .entry(document_of(hit))
            .and_modify(|(lo, hi)| (*lo, *hi) = ((*lo).min(from), (*hi).max(to)))
            .or_insert((from, to));
    }
    let documents: Vec<DocumentRange<'_>> = ranges
        .iter()
        .map(
            |(&(library, version, file_path), &(from, to))| DocumentRange {
                library,
                version,
                file_path,
                chunks: from..=to,
            },
        )
        .collect();
    store.documents_chunks(&documents).await
}

/// Per hit, in order, the section its chunk sits in, from the chunks
/// [`read`] gave: each document reassembled and its sections found once,
/// however many hits it holds. CPU work: the caller runs it off the async
/// workers, with the fill.
pub fn of(hits: &[SearchHit], chunks: &[StoredChunk]) -> Vec<Section> {
    let mut by_document: HashMap<(&str, &str, &str), Vec<&StoredChunk>> = HashMap::new();
    for chunk in chunks {
        by_document
            .entry((&chunk.library, &chunk.version, &chunk.file_path))
            .or_default()
            .push(chunk);
    }
    let windows: HashMap<(&str, &str, &str), Window<'_>> = by_document
        .into_iter()
        .map(|(key, chunks)| (key, Window::of(chunks)))
        .collect();
    hits.iter()
        .map(|hit| {
            windows
                .get(&document_of(hit))
                .map_or(Section::Unknown, |window| {
                    around(window, hit.chunk_index, &hit.heading_path)
                })
        })
        .collect()
}

/// The chunks read of one document, in order, reassembled, and the
/// sections of that text.
struct Window<'a> {
    chunks: Vec<&'a StoredChunk>,
    document: Reassembled,
    sections: Vec<sections::Section>,
}

impl<'a> Window<'a> {
    fn of(mut chunks: Vec<&'a StoredChunk>) -> Self {
        chunks.sort_unstable_by_key(|c| c.chunk_index);
        let document = reassemble(chunks.iter().map(|c| c.piece()).collect());
        let sections = sections::all(&document.text);
        Self {
            chunks,
            document,
            sections,
        }
    }
}

/// Chunks read on each side of a hit: a section that may be given takes at
/// most half the budget, and a chunk (cut at 700 bytes unless it ends its
/// document) holds well over [`FEWEST_TOKENS_PER_CHUNK`] tokens, so such a
/// section lies within this many chunks of its hit. One that reaches past
/// the chunks read is not taken for whole ([`around`]).
pub fn window(max_tokens: usize) -> u32 {
    u32::try_from(max_tokens / 2 / FEWEST_TOKENS_PER_CHUNK + 1).unwrap_or(u32::MAX)
}

/// See [`window`].
const FEWEST_TOKENS_PER_CHUNK: usize = 50;

fn document_of(hit: &SearchHit) -> (&str, &str, &str) {
    (&hit.library, &hit.version, &hit.file_path)
}

/// The section around chunk `at` of a document's chunks read, named
/// `heading_path`, joined with the chunk's own text.
fn around(window: &Window<'_>, at: u32, heading_path: &str) -> Section {
    let (chunks, document) = (&window.chunks, &window.document);
    let Some(span) = document.spans.iter().find(|s| s.chunk_index == at) else {
        return Section::Unknown;
    };
    // Headings above the chunks read are not among them, so a section's
    // path as read here is the end of its whole path.
    let named: Vec<&sections::Section> = window
        .sections
        .iter()
        .filter(|s| path_ends_with(heading_path, &s.heading_path))
        .filter(|s| s.start < span.end && span.start < s.end)
        .collect();
    let holding_start = named
        .iter()
        .position(|s| s.start <= span.start && span.start < s.end);
    let Some(section) = holding_start
        .or((!named.is_empty()).then_some(0))
        .map(|i| named[i])
    else {
        return Section::Unknown;
    };
    let (start, end) = (section.start.min(span.start), section.end.max(span.end));
    // A section that reaches an edge of the chunks read may go on past it.
    let (first, last) = (chunks[0], chunks[chunks.len() - 1]);
    let cut_before = start == 0 && first.chunk_index > 0;
    let cut_after = end == document.text.len() && last.chunk_index + 1 < last.doc_chunks;
    if cut_before || cut_after {
        return Section::Unknown;
    }
    if (start, end) == (span.start, span.end) {
        return Section::Chunk;
    }
    let covered = document
        .spans
        .iter()
        .filter(|s| s.start < end && start < s.end)
        .map(|s| s.chunk_index);
    let (first, last) = (covered.clone().min(), covered.max());
    Section::Chunks {
        range: first.unwrap_or(at)..=last.unwrap_or(at),
        text: document.text[start..end].to_owned(),
    }
}

/// Whether the heading path `full` ends with the path `tail`, part by part
/// (`Guide > Install` ends with `Install`, not with `stall`); the empty path
/// (text before the first heading) only with itself.
fn path_ends_with(full: &str, tail: &str) -> bool {
    full == tail
        || (!tail.is_empty()
            && full
                .strip_suffix(tail)
                .is_some_and(|head| head.ends_with(HEADING_SEPARATOR)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around_in(chunks: &[&StoredChunk], at: u32, heading_path: &str) -> Section {
        around(&Window::of(chunks.to_vec()), at, heading_path)
    }

    fn chunk(index: u32, heading_path: &str, start: u32, text: &str) -> StoredChunk {
        StoredChunk {
            chunk_id: format!("c{index}"),
            library: "lib".into(),
            version: "1".into(),
            file_path: "guide.md".into(),
            title: None,
            chunk_index: index,
            doc_chunks: 6,
            heading_path: heading_path.into(),
            context: String::new(),
            page: None,
            span_start: start,
            span_end: start + text.len() as u32,
            text: text.into(),
            created_at_micros: 0,
        }
    }

    /// A document's chunks as the chunker cuts them.
    fn chunked(text: &str, target: usize) -> Vec<StoredChunk> {
        let config = ingest_core::chunk::ChunkConfig {
            target,
            overlap: 20,
            hard_max: 1_000,
        };
        let chunks = ingest_core::chunk::chunk_text(text, &config);
        let count = chunks.len() as u32;
        chunks
            .into_iter()
            .map(|c| {
                let mut stored = chunk(
                    c.index as u32,
                    &c.heading_path_display(),
                    c.start as u32,
                    &c.text,
                );
                stored.doc_chunks = count;
                stored
            })
            .collect()
    }

    const GUIDE: &str = "# Guide\n\nIntro words here. A second sentence about the guide.\n\nA third one, to fill a chunk.\n\n## Install\n\nStep one of several. Then step two follows it.\n\n```sh\nmake install\n```\n\nStep three ends it.\n\n### Linux\n\nUse apt on Debian.\n\n## Use\n\nCall it when ready.\n";

    #[test]
    fn a_passage_is_the_whole_section_its_chunk_starts_in() {
        let chunks = chunked(GUIDE, 60);
        let chunks: Vec<&StoredChunk> = chunks.iter().collect();
        let (at, path) = chunks
            .iter()
            .find(|c| c.text.contains("make install"))
            .map(|c| (c.chunk_index, c.heading_path.clone()))
            .expect("the code block's chunk");
        assert_eq!(path, "Guide > Install");
        let section = around_in(&chunks, at, &path);
        let Section::Chunks { text, range } = &section else {
            panic!("the section is several chunks: {section:?}");
        };
        assert!(text.starts_with("## Install"), "{text}");
        assert!(text.contains("Use apt on Debian."), "{text}");
        assert!(!text.contains("Call it when ready."), "{text}");
        assert!(range.contains(&at) && range.start() < range.end());

        // Read from the code block's chunk on, the section's start is not
        // among the chunks: it may not be given for whole.
        let from_here: Vec<&StoredChunk> = chunks
            .iter()
            .copied()
            .filter(|c| c.chunk_index >= at)
            .collect();
        assert!(from_here[0].chunk_index > 0 && !from_here[0].text.contains("## Install"));
        assert_eq!(around_in(&from_here, at, &path), Section::Unknown);
        // Read from a chunk after the guide's heading on, its path is found
        // by its end ("Install" for "Guide > Install").
        let install_on: Vec<&StoredChunk> = chunks
            .iter()
            .copied()
            .skip_while(|c| !c.text.contains("## Install"))
            .collect();
        assert!(install_on[0].chunk_index > 0 && !install_on[0].text.contains("# Guide\n"));
        assert!(matches!(
            around_in(&install_on, at, &path),
            Section::Chunks { .. }
        ));
        assert!(path_ends_with("Guide > Install", "Install"));
        assert!(!path_ends_with("Guide > Install", "stall"));
        assert!(!path_ends_with("Guide", ""));
        // Nor when the chunks read stop inside it.
        let to_here: Vec<&StoredChunk> = chunks
            .iter()
            .copied()
            .filter(|c| c.chunk_index <= at)
            .collect();
        if !to_here
            .last()
            .is_some_and(|c| c.text.contains("Use apt on Debian."))
        {
            assert_eq!(around_in(&to_here, at, &path), Section::Unknown);
        }
    }

    #[test]
    fn a_chunk_that_holds_its_section_stays_a_chunk() {
        let chunks = chunked(GUIDE, 700);
        let chunks: Vec<&StoredChunk> = chunks.iter().collect();
        assert_eq!(chunks.len(), 1);
        assert_eq!(around_in(&chunks, 0, "Guide"), Section::Chunk);
        assert_eq!(around_in(&chunks, 0, "Elsewhere"), Section::Unknown);
        assert_eq!(around_in(&chunks, 7, "Guide"), Section::Unknown);
    }
}
