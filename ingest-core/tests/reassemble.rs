//! Chunks put back together give the document they came from: chunking
//! (here) and reassembly (`index_core::document`, which the dashboard's
//! document view reads) agree on spans and overlap.

use index_core::document::{reassemble, Piece};
use ingest_core::chunk::{chunk_text, ChunkConfig};

#[test]
fn overlapping_chunks_give_back_the_source() {
    let source: String = (0..60)
        .map(|i| format!("Sentence number {i} talks about rebasing. "))
        .collect::<Vec<_>>()
        .chunks(5)
        .map(|p| p.concat())
        .collect::<Vec<_>>()
        .join("\n\n");
    let config = ChunkConfig {
        target: 300,
        overlap: 80,
        hard_max: 1000,
    };
    let chunks = chunk_text(&source, &config);
    assert!(chunks.len() > 3);
    assert!(
        chunks.windows(2).any(|w| w[1].start < w[0].end),
        "no overlap to remove"
    );
    // Shuffled on purpose: the store returns rows in any order.
    let mut pieces: Vec<Piece> = chunks
        .iter()
        .map(|c| Piece {
            index: c.index as u32,
            start: c.start,
            end: c.end,
            text: &c.text,
        })
        .collect();
    pieces.reverse();
    let doc = reassemble(pieces);
    let normalise = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(normalise(&doc.text), normalise(source.trim()));
    for (span, chunk) in doc.spans.iter().zip(&chunks) {
        assert!(chunk.text.ends_with(&doc.text[span.start..span.end]));
    }
}
