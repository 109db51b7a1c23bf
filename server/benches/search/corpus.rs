//! The bench corpus at 100k and 1M chunks, made from real chunks.
//!
//! Embedding 100k chunks on this project's 2-core machine takes over an
//! hour, so the large corpora are grown from a real one instead:
//! - **Seeds**: the git manual's 190 pages, uploaded through the engine
//!   once (real extraction, chunking and embeddings: ~5,000 chunks of
//!   700 bytes, a few minutes) and kept in the cache.
//! - **Rows**: each synthetic chunk copies a seed chunk. Its vector is the
//!   seed's plus noise, renormalised (about 0.9 cosine to the seed, computed
//!   from the noise level, not measured), so vectors
//!   cluster by topic as real ones do and the vector index has real work.
//!   Its text keeps the seed's words but swaps about a third of them for
//!   words drawn from a Zipf law over the seeds' vocabulary, ranked by
//!   frequency and extended with made-up rare words, so posting lists have
//!   the long-tailed lengths of real text and BM25 does real work.
//! - **Documents** of 12 consecutive seed chunks, spread over
//!   [`libraries`] libraries (`DOCSHELF_BENCH_LIBRARIES`, default 10, so a
//!   library filter selects a tenth), each at version `1.0`.
//!
//! The generator is deterministic: the same row count gives the same
//! corpus. It is cached under `~/.cache/docshelf/bench/` (outside the
//! repository) and rebuilt only when missing or when [`GENERATOR`] changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use docshelf_server::cli::collect_uploads;
use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;
use docshelf_server::engine::Engine;
use docshelf_server::store::{ChunkRow, DocumentChunks, Store, StoredChunk};
use ingest_core::chunk::{Chunk, HEADING_SEPARATOR};

/// Bump when the corpus a row count gives changes: cached ones (and the
/// seeds) are rebuilt. v2: the seeds are cut by the 700-byte chunker.
const GENERATOR: &str = "v2";
/// Libraries the rows are spread over by default; the bench filters on
/// one of them.
const LIBRARIES: usize = 10;
/// The library the bench's filtered searches ask for (it exists for any
/// count of libraries above 3).
pub const FILTER_LIBRARY: &str = "lib03";
const DOC_CHUNKS: usize = 12;
/// Rows written per commit.
const COMMIT_ROWS: usize = 50_000;
/// Share of a seed's words replaced by Zipf draws.
const SWAP_SHARE: f32 = 0.35;
/// Words in the Zipf law: the seeds' vocabulary, then made-up rare words.
const ZIPF_WORDS: usize = 300_000;
/// Uniform noise per dimension around a seed vector (×[-0.5, 0.5)): a noise
/// vector of norm ≈ 0.5 against a unit seed.
const SPREAD: f32 = 0.09;

/// Where bench corpora are cached.
pub fn cache_root() -> PathBuf {
    std::env::var_os("DOCSHELF_BENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
            PathBuf::from(home).join(".cache/docshelf/bench")
        })
}

/// The engine's settings for a store at `data`.
pub fn engine_config(root: &Path, data: &Path) -> EngineConfig {
    let device = match std::env::var("DOCSHELF_DEVICE").as_deref() {
        Ok("gpu") => DeviceChoice::Gpu,
        Ok("auto") => DeviceChoice::Auto,
        _ => DeviceChoice::Cpu,
    };
    EngineConfig::new(
        data.display().to_string(),
        ModelConfig::new(root.join("models/all-MiniLM-L6-v2"), device),
    )
}

/// How many libraries the rows are spread over: `DOCSHELF_BENCH_LIBRARIES`,
/// else [`LIBRARIES`].
pub fn libraries() -> usize {
    super::env_usize("DOCSHELF_BENCH_LIBRARIES")
        .unwrap_or(LIBRARIES)
        .max(4)
}

/// A library's name in the corpus.
pub fn library(n: usize) -> String {
    format!("lib{n:02}")
}

/// The store directory holding a `rows`-chunk corpus, made if missing.
pub async fn ensure(root: &Path, rows: usize) -> PathBuf {
    let libraries = libraries();
    let name = match libraries {
        LIBRARIES => format!("search-{rows}-{GENERATOR}"),
        n => format!("search-{rows}x{n}-{GENERATOR}"),
    };
    let dir = cache_root().join(name);
    let done = dir.join(".complete");
    if done.exists() {
        println!("corpus: reusing {}", dir.display());
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let seeds = seeds(root).await;
    println!(
        "corpus: growing {rows} chunks from {} seed chunks into {}",
        seeds.len(),
        dir.display()
    );
    std::fs::create_dir_all(&dir).expect("corpus dir");
    let store = Store::open(&dir.display().to_string())
        .await
        .expect("corpus store");
    let started = Instant::now();
    let mut grower = Grower::new(&seeds, libraries);
    let mut written = 0;
    while written < rows {
        let batch = COMMIT_ROWS.min(rows - written);
        let docs = grower.documents(written, batch);
        store.append_documents(&docs).await.expect("append");
        written += batch;
        println!(
            "  {written} rows ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
    }
    let indexing = Instant::now();
    store.refresh_indexes().await.expect("indexes");
    println!(
        "corpus: {rows} rows written in {:.0} s, indexed in {:.0} s",
        (indexing - started).as_secs_f64(),
        indexing.elapsed().as_secs_f64()
    );
    std::fs::write(&done, GENERATOR).expect("marker");
    dir
}

/// `rows` more rows as documents of one library version (another draw
/// than the corpus's): what the benches publish beside a corpus.
pub fn version(
    seeds: &[(StoredChunk, Vec<f32>)],
    library: &str,
    version: &str,
    rows: usize,
    draw: u64,
) -> Vec<DocumentChunks> {
    let mut grower = Grower::new(seeds, 1);
    grower.rng = Rng(0x9E37_79B9_7F4A_7C15 ^ draw.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let mut docs = grower.documents(0, rows);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    for doc in &mut docs {
        doc.library = library.to_owned();
        doc.version = version.to_owned();
        doc.created_at_micros = now;
        for row in &mut doc.chunks {
            row.id = format!("{library}-{version}-{}", row.id);
        }
    }
    docs
}

/// The git manual's chunks with their real embeddings.
pub async fn seeds(root: &Path) -> Vec<(StoredChunk, Vec<f32>)> {
    let dir = cache_root().join(format!("seed-git-{GENERATOR}"));
    let done = dir.join(".complete");
    let engine = Engine::open(&engine_config(root, &dir))
        .await
        .expect("seed engine");
    if !done.exists() {
        let corpus = root.join("../shared/data/eval/git-docs/corpus");
        let uploads =
            collect_uploads(&[corpus]).expect("the git-docs corpus (../shared/data/eval/git-docs)");
        let started = Instant::now();
        println!("seeds: embedding the git manual's pages (once)");
        let status = engine
            .ingest("git", "2.39", uploads)
            .await
            .expect("a valid library");
        println!(
            "seeds: {} pages in {:.0} s",
            status.files.len(),
            started.elapsed().as_secs_f64()
        );
        std::fs::write(&done, "").expect("marker");
    }
    let mut seeds = engine
        .store()
        .chunks_with_vectors()
        .await
        .expect("seed chunks");
    // Page order, so consecutive seeds are one page's consecutive chunks.
    seeds.sort_by(|a, b| (&a.0.file_path, a.0.chunk_index).cmp(&(&b.0.file_path, b.0.chunk_index)));
    seeds
}

/// Makes synthetic documents from the seeds, deterministically.
struct Grower<'a> {
    seeds: &'a [(StoredChunk, Vec<f32>)],
    /// The seeds' words, most frequent first.
    vocabulary: Vec<String>,
    libraries: usize,
    rng: Rng,
}

impl<'a> Grower<'a> {
    fn new(seeds: &'a [(StoredChunk, Vec<f32>)], libraries: usize) -> Self {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (chunk, _) in seeds {
            for word in chunk.text.split_whitespace() {
                *counts.entry(word).or_default() += 1;
            }
        }
        let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        Self {
            seeds,
            vocabulary: ranked.into_iter().map(|(w, _)| w.to_owned()).collect(),
            libraries,
            rng: Rng::default(),
        }
    }

    /// Rows `first..first + rows` as documents of [`DOC_CHUNKS`] chunks.
    fn documents(&mut self, first: usize, rows: usize) -> Vec<DocumentChunks> {
        // The seeds outlive `self`: borrow them apart from the generator.
        let seeds = self.seeds;
        let mut docs = Vec::new();
        let mut row = first;
        while row < first + rows {
            let n = DOC_CHUNKS.min(first + rows - row);
            let d = row / DOC_CHUNKS;
            let start = self.rng.below(seeds.len());
            let mut chunks = Vec::with_capacity(n);
            let mut offset = 0;
            for (i, r) in (row..row + n).enumerate() {
                let (seed, vector) = &seeds[(start + i) % seeds.len()];
                let text = self.words(&seed.text);
                let chunk = Chunk {
                    index: i,
                    start: offset,
                    end: offset + text.len(),
                    text,
                    heading_path: seed
                        .heading_path
                        .split(HEADING_SEPARATOR)
                        .filter(|h| !h.is_empty())
                        .map(str::to_owned)
                        .collect(),
                    page: None,
                };
                offset = chunk.end;
                chunks.push(ChunkRow {
                    id: format!("bench-{r:08}"),
                    chunk,
                    context: seed.context.clone(),
                    vector: self.rng.near(vector, SPREAD),
                });
            }
            let title = seeds[start].0.title.clone();
            docs.push(DocumentChunks {
                library: library(d % self.libraries),
                version: "1.0".into(),
                file_path: format!("docs/page-{d:07}.md"),
                title,
                created_at_micros: 1_700_000_000_000_000 + d as i64 * 1_000_000,
                chunks,
            });
            row += n;
        }
        docs
    }

    /// The seed's text with a share of its words swapped for Zipf draws.
    fn words(&mut self, seed: &str) -> String {
        let mut out = String::with_capacity(seed.len() + 16);
        for word in seed.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            if self.rng.unit() < SWAP_SHARE {
                // Zipf with exponent 1: P(rank ≤ r) ≈ ln r / ln N.
                let rank = ((ZIPF_WORDS as f64).powf(self.rng.unit() as f64) as usize).max(1);
                match self.vocabulary.get(rank - 1) {
                    Some(w) => out.push_str(w),
                    None => {
                        out.push_str("zw");
                        out.push_str(&rank.to_string());
                    }
                }
            } else {
                out.push_str(word);
            }
        }
        out
    }
}

/// xorshift64*: deterministic and fast enough for bench data.
struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Self(0x9E37_79B9_7F4A_7C15)
    }
}

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A unit vector near `centre`.
    fn near(&mut self, centre: &[f32], spread: f32) -> Vec<f32> {
        let v: Vec<f32> = centre
            .iter()
            .map(|c| c + spread * (self.unit() - 0.5))
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }
}
