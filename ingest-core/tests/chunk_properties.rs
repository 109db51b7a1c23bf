//! Properties every chunking must have, over generated Markdown.

use ingest_core::chunk::{chunk_text, ChunkConfig};
use proptest::prelude::*;

/// Markdown built from paragraphs, headings, fenced code and indented code.
fn markdown() -> impl Strategy<Value = String> {
    let sentence = "[A-Z][a-z]{1,9}( [a-zé中]{1,8}){0,12}[.!?]";
    let paragraph = prop::collection::vec(sentence, 1..12).prop_map(|s| s.join(" "));
    let heading =
        (1usize..4, "[A-Z][a-z]{2,10}").prop_map(|(l, t)| format!("{} {t}", "#".repeat(l)));
    let code_line = "[a-z_]{1,8} = [0-9]{1,4};( // [a-z ]{0,20})?";
    let fenced = prop::collection::vec(code_line, 1..60)
        .prop_map(|lines| format!("```rust\n{}\n```", lines.join("\n")));
    let block = prop_oneof![4 => paragraph, 1 => heading, 2 => fenced];
    // Mostly one blank line between blocks, sometimes a run of them (a run
    // longer than the overlap is what leaves a blank piece on its own).
    let gap = prop_oneof![6 => Just(2usize), 1 => 3usize..80].prop_map(|n| "\n".repeat(n));
    prop::collection::vec((block, gap), 0..30).prop_map(|blocks| {
        blocks
            .into_iter()
            .map(|(b, gap)| b + &gap)
            .collect::<String>()
    })
}

fn configs() -> impl Strategy<Value = ChunkConfig> {
    (200usize..1600, 0usize..200, 0usize..3000).prop_map(|(target, overlap, extra)| ChunkConfig {
        target,
        overlap: overlap.min(target / 2),
        hard_max: target + extra,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn chunks_cover_the_text_stay_small_and_keep_code_whole(text in markdown(), config in configs()) {
        let chunks = chunk_text(&text, &config);

        // Spans are exact and in order; every byte is in some chunk.
        let mut covered_to = 0;
        for (i, c) in chunks.iter().enumerate() {
            prop_assert_eq!(c.index, i);
            prop_assert_eq!(&text[c.start..c.end], c.text.as_str());
            prop_assert!(c.start <= covered_to, "gap before chunk {}", i);
            prop_assert!(c.end > covered_to);
            covered_to = c.end;
            // Never above the hard maximum, but for blank lines that fit no
            // chunk (between two full ones, or after the last) and are kept
            // rather than lost to reassembly.
            prop_assert!(c.text.trim().len() <= config.hard_max, "chunk {} has {} bytes", i, c.text.len());
        }
        if text.trim().is_empty() {
            prop_assert!(chunks.is_empty());
        } else {
            prop_assert_eq!(covered_to, text.len());
        }

        // Overlaps are bounded.
        for pair in chunks.windows(2) {
            prop_assert!(pair[0].end.saturating_sub(pair[1].start) <= config.overlap);
        }

        // A fence opened in a chunk closes in it, unless its block was too big to keep whole.
        // A block's size is what the chunker measures: the fence with the
        // line break and blank line that end it (`+ 12` is the two fence
        // lines, `+ 2` the "\n\n" before the next block).
        let biggest_fence = text
            .split("```rust\n")
            .skip(1)
            .filter_map(|rest| rest.find("\n```").map(|end| end + 12 + 2))
            .max()
            .unwrap_or(0);
        if biggest_fence <= config.hard_max {
            for c in &chunks {
                let fences = c.text.lines().filter(|l| l.starts_with("```")).count();
                prop_assert!(fences % 2 == 0, "chunk {} splits a code block:\n{}", c.index, c.text);
            }
        }
    }
}
