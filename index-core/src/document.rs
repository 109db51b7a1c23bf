//! Putting a document back together from its chunks.
//!
//! Consecutive chunks overlap (each repeats the end of the previous one, see
//! [`crate::chunk`]), and every chunk knows its byte span in the extracted
//! text. Reassembly uses the spans: each chunk contributes only the bytes past
//! the end of what is already written, so overlaps appear once and the result
//! is the extracted text again, whatever the overlap size was.

use serde::{Deserialize, Serialize};

/// A stored chunk as reassembly needs it.
#[derive(Debug, Clone, Copy)]
pub struct Piece<'a> {
    pub index: u32,
    /// Byte span in the extracted text.
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

/// Where one chunk sits in the reassembled text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChunkSpan {
    pub chunk_index: u32,
    /// Byte offsets into the reassembled text.
    pub start: usize,
    pub end: usize,
}

/// A reassembled document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled {
    pub text: String,
    /// Every chunk's place in `text`, in chunk order.
    pub spans: Vec<ChunkSpan>,
}

/// Rebuilds a document's text from its chunks (any order; sorted here).
///
/// Where two chunks are not adjacent in the source (blank lines between
/// blocks are not part of any chunk), a paragraph break stands in for the gap.
pub fn reassemble(mut pieces: Vec<Piece<'_>>) -> Reassembled {
    pieces.sort_by_key(|p| p.index);
    let mut text = String::new();
    let mut spans = Vec::with_capacity(pieces.len());
    // End of the source text written so far.
    let mut written_to: Option<usize> = None;
    for piece in pieces {
        let skip = match written_to {
            Some(end) if piece.start < end => end - piece.start,
            Some(end) => {
                if piece.start > end {
                    text.push_str("\n\n");
                }
                0
            }
            None => 0,
        };
        // Spans are byte offsets into one text, so `skip` falls on a char
        // boundary of the chunk; a chunk that does not fit its span (which
        // ingestion never writes) is kept whole rather than cut mid-character.
        let fresh = piece
            .text
            .get(skip.min(piece.text.len())..)
            .unwrap_or(piece.text);
        let chunk_start = text.len().saturating_sub(piece.text.len() - fresh.len());
        text.push_str(fresh);
        spans.push(ChunkSpan {
            chunk_index: piece.index,
            start: chunk_start,
            end: text.len(),
        });
        written_to = Some(written_to.map_or(piece.end, |w| w.max(piece.end)));
    }
    Reassembled { text, spans }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_document_is_empty() {
        assert_eq!(reassemble(Vec::new()).text, "");
    }
}
