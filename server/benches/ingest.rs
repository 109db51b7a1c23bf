//! Ingestion throughput on the git manual (190 HTML pages).
//!
//! `make bench-ingest` (or `cargo bench --profile dev -p docshelf-server --bench ingest`).
//! Prints files/s, chunks/s and MB/s for extraction + chunking alone (all
//! pages), then for the full pipeline with embedding and storage (the first
//! `DOCSHELF_BENCH_FILES` pages, default 20: CPU embedding dominates), then
//! for embedding alone the very texts that pipeline embedded (each chunk with
//! its context), through the same engine, and the ratio of the two: the
//! pipeline's overhead over its embedding, measured on identical inputs
//! rather than against `bench-embed`'s synthetic chunks of another length.
//! The pipeline and its embedding run once per precision in
//! `DOCSHELF_BENCH_PRECISIONS` (`--embed-precision`; default `fp32,int8`),
//! each into a fresh store.
//!
//! Then storage alone, on all 190 pages' real chunks with stand-in vectors
//! (no model): one commit per document, as jobs stored before versions were
//! published whole, beside staging every document and publishing once, as
//! jobs do now; each into a fresh store, in the same run.

use std::path::PathBuf;
use std::time::Instant;

use docshelf_server::cli::collect_uploads;
use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::{DeviceChoice, Precision};
use docshelf_server::engine::Engine;
use index_core::job::FileState;
use index_core::job::Upload;
use ingest_core::chunk::{chunk_document, Chunk, ChunkConfig};
use ingest_core::context;
use ingest_core::extract::{extract, ArchiveLimits, Extracted};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = std::env::var_os("DOCSHELF_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data/eval/git-docs/corpus"));
    let uploads = collect_uploads(std::slice::from_ref(&corpus))
        .unwrap_or_else(|e| panic!("cannot read {}: {e:#}", corpus.display()));

    // Extraction and chunking alone.
    let start = Instant::now();
    let mut chunks = 0;
    let mut bytes = 0;
    for u in &uploads {
        bytes += u.bytes.len();
        for doc in extract(&u.name, &u.bytes, &ArchiveLimits::default())
            .expect("extracts")
            .documents
        {
            chunks += chunk_document(&doc, &ChunkConfig::default()).len();
        }
    }
    report(
        "extract + chunk",
        uploads.len(),
        chunks,
        bytes,
        start.elapsed().as_secs_f64(),
    );

    storage_alone(&uploads);

    // The full pipeline into a fresh store.
    let limit: usize = std::env::var("DOCSHELF_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let subset: Vec<Upload> = uploads.into_iter().take(limit).collect();
    let bytes: usize = subset.iter().map(|u| u.bytes.len()).sum();
    let inputs = embedding_inputs(&subset);
    let model_dir = std::env::var_os("DOCSHELF_MODEL_DIR")
        .map(PathBuf::from)
        .map_or_else(
            || root.join("models/all-MiniLM-L6-v2"),
            |p| if p.is_relative() { root.join(p) } else { p },
        );
    let precisions = Precision::parse_list(
        &std::env::var("DOCSHELF_BENCH_PRECISIONS").unwrap_or_else(|_| "fp32,int8".into()),
    )
    .unwrap_or_else(|e| panic!("DOCSHELF_BENCH_PRECISIONS: {e}"));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for precision in precisions {
        pipeline(
            &runtime,
            &model_dir,
            precision,
            subset.clone(),
            &inputs,
            bytes,
        );
    }
}

/// The full pipeline into a fresh store at `precision`, then embedding alone
/// the same texts through the same engine.
fn pipeline(
    runtime: &tokio::runtime::Runtime,
    model_dir: &std::path::Path,
    precision: Precision,
    subset: Vec<Upload>,
    inputs: &[Vec<String>],
    bytes: usize,
) {
    let store = tempfile::tempdir().expect("temp dir");
    let mut model = ModelConfig::new(model_dir, DeviceChoice::Auto);
    model.precision = precision;
    let config = EngineConfig::new(store.path().display().to_string(), model);
    runtime.block_on(async {
        let engine = Engine::open(&config).await.expect("engine");
        let backend = engine
            .embedder()
            .await
            .map(|e| format!("{}, {}", e.backend(), e.precision()))
            .unwrap_or_default();
        // The model's first pass pays one-time costs; neither timing below should.
        let embedder = engine.embedder().await.expect("the model loads");
        embedder
            .embed_many(vec!["warm-up".to_owned()])
            .await
            .expect("embeds");
        let files = subset.len();
        let start = Instant::now();
        let status = engine
            .ingest("git", "2.39", subset)
            .await
            .expect("a valid library");
        let pipeline_secs = start.elapsed().as_secs_f64();
        let chunks: usize = status
            .files
            .iter()
            .map(|f| match f.state {
                FileState::Stored { chunks, .. } => chunks,
                _ => 0,
            })
            .sum();
        report(
            &format!("full pipeline ({backend})"),
            files,
            chunks,
            bytes,
            pipeline_secs,
        );
        assert_eq!(
            chunks,
            inputs.iter().map(Vec::len).sum::<usize>(),
            "the pipeline stored every chunk"
        );

        // The same texts, embedded alone, in the pipeline's batches (one
        // document's chunks per call).
        let start = Instant::now();
        for document in inputs {
            embedder.embed_many(document.clone()).await.expect("embeds");
        }
        let embed_secs = start.elapsed().as_secs_f64();
        report(
            &format!("embedding alone, same texts ({backend})"),
            files,
            chunks,
            bytes,
            embed_secs,
        );
        println!(
            "pipeline throughput / embedding-alone throughput: {:.0}%",
            100.0 * embed_secs / pipeline_secs
        );
    });
}

/// Stores every page's chunks (stand-in vectors) twice, each time into a
/// fresh store: one commit per document, then staged and published once.
fn storage_alone(uploads: &[Upload]) {
    use docshelf_server::embed::DIM;
    use docshelf_server::store::{ChunkRow, DocumentChunks, Store};

    let mut documents: Vec<DocumentChunks> = Vec::new();
    for (doc, chunks, contexts) in chunked(uploads) {
        let rows = chunks
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(i, (chunk, context))| {
                // A unit vector per chunk: storage cost, not meaning.
                let mut vector = vec![0.0f32; DIM];
                vector[(documents.len() * 31 + i) % DIM] = 1.0;
                ChunkRow {
                    id: format!("{}#{i}", doc.file_path),
                    chunk,
                    context,
                    vector,
                }
            })
            .collect();
        documents.push(DocumentChunks {
            library: "git".into(),
            version: "2.39".into(),
            file_path: doc.file_path,
            title: doc.title,
            created_at_micros: 0,
            chunks: rows,
        });
    }
    let chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
    let bytes: usize = uploads.iter().map(|u| u.bytes.len()).sum();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().display().to_string())
            .await
            .expect("store");
        let start = Instant::now();
        for doc in &documents {
            store.replace_document(doc).await.expect("stored");
        }
        store.refresh_indexes().await.expect("indexed");
        let per_document = start.elapsed().as_secs_f64();
        report(
            "storage alone, one commit per document",
            documents.len(),
            chunks,
            bytes,
            per_document,
        );

        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().display().to_string())
            .await
            .expect("store");
        let start = Instant::now();
        for doc in &documents {
            store.stage_document("bench", doc).await.expect("staged");
        }
        let staged = start.elapsed().as_secs_f64();
        store
            .publish(
                "bench",
                "git",
                "2.39",
                chunks,
                &docshelf_server::store::Replace::Documents,
            )
            .await
            .expect("published");
        store.drop_staged_after_publish("bench").await;
        store.refresh_indexes().await.expect("indexed");
        let published = start.elapsed().as_secs_f64();
        report(
            "storage alone, staged then published once",
            documents.len(),
            chunks,
            bytes,
            published,
        );
        println!(
            "  of which staging {staged:.2} s, publishing and indexing {:.2} s; \
             time against one commit per document: {:.0}%",
            published - staged,
            100.0 * published / per_document
        );
    });
}

/// What the pipeline embeds for these uploads, one list per document (its
/// chunks, each with its context), as the pipeline batches them.
fn embedding_inputs(uploads: &[Upload]) -> Vec<Vec<String>> {
    chunked(uploads)
        .into_iter()
        .map(|(_, chunks, contexts)| context::embedding_inputs(&chunks, &contexts))
        .collect()
}

/// Every document of these uploads, chunked, with each chunk's context,
/// as the pipeline makes them.
fn chunked(uploads: &[Upload]) -> Vec<(Extracted, Vec<Chunk>, Vec<String>)> {
    let mut documents = Vec::new();
    for u in uploads {
        for doc in extract(&u.name, &u.bytes, &ArchiveLimits::default())
            .expect("extracts")
            .documents
        {
            let chunks = chunk_document(&doc, &ChunkConfig::default());
            let contexts =
                context::chunk_contexts(doc.title.as_deref(), doc.description.as_deref(), &chunks);
            documents.push((doc, chunks, contexts));
        }
    }
    documents
}

fn report(what: &str, files: usize, chunks: usize, bytes: usize, secs: f64) {
    println!(
        "{what}: {files} files, {chunks} chunks, {:.1} MB in {secs:.2} s = {:.1} files/s, {:.1} chunks/s, {:.2} MB/s",
        bytes as f64 / 1e6,
        files as f64 / secs,
        chunks as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
}
