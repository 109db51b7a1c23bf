//! Synthetic embeddings for the vector-index test and bench: unit vectors
//! clustered around random centres (real embeddings cluster by topic the
//! same way), from a small deterministic generator so every run stores the
//! same data. Included by path from both, since a bench cannot use a test's
//! modules.

use docshelf_server::embed::DIM;
use docshelf_server::store::{ChunkRow, DocumentChunks};
use ingest_core::chunk::Chunk;

/// xorshift64*: deterministic, fast, and enough for test data.
pub struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Self(0x9E37_79B9_7F4A_7C15)
    }
}

impl Rng {
    /// Uniform in [-0.5, 0.5).
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    /// `count` random cluster centres.
    pub fn centres(&mut self, count: usize) -> Vec<Vec<f32>> {
        (0..count)
            .map(|_| (0..DIM).map(|_| self.next()).collect())
            .collect()
    }

    /// A unit vector near `centre`.
    pub fn near(&mut self, centre: &[f32], spread: f32) -> Vec<f32> {
        let v: Vec<f32> = centre.iter().map(|c| c + spread * self.next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }
}

/// A document of one chunk per vector, chunk `i` with id `{id_prefix}{i}`.
pub fn document(
    library: &str,
    file_path: String,
    id_prefix: &str,
    vectors: Vec<Vec<f32>>,
) -> DocumentChunks {
    let chunks = vectors
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let text = format!("{file_path} chunk {i}");
            let chunk = Chunk {
                index: i,
                start: 0,
                end: text.len(),
                text,
                heading_path: Vec::new(),
                page: None,
            };
            ChunkRow {
                id: format!("{id_prefix}{i}"),
                chunk,
                context: String::new(),
                vector: v,
            }
        })
        .collect();
    DocumentChunks {
        library: library.into(),
        version: "1".into(),
        file_path,
        title: None,
        created_at_micros: 0,
        chunks,
    }
}
