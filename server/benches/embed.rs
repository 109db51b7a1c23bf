//! Embedding throughput and latency, per backend, beside sentence-transformers.
//!
//! `make bench-embed` (or `cargo bench --profile dev -p docshelf-server --bench embed`).
//! The dev profile already optimises burn's kernels and the tokenizer (see
//! the workspace Cargo.toml), and reuses the test build instead of compiling
//! the whole tree again in release.
//!
//! Prints, on the same texts: chunks/s at batch 32 over ~200-token chunks cut
//! from the git manual, and single-query latency p50/p99, for each available
//! backend, then the same for sentence-transformers on PyTorch CPU when a
//! Python with it is found (`DOCSHELF_ST_PYTHON`, default `python3`).
//!
//! A GPU needs more work than the CPU default to be measured at all, so the
//! sizes are settings: `DOCSHELF_BENCH_CHUNKS` (256), `DOCSHELF_BENCH_BATCHES`
//! (a list, `32`), `DOCSHELF_BENCH_CORPUS` (the git manual in `../shared`),
//! and `DOCSHELF_ST_DEVICE` (`cpu`; `cuda` for PyTorch on an NVIDIA card).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use docshelf_server::embed::{Backend, DeviceChoice, EmbedError, Embedder};

const CHUNKS: usize = 256;
const BATCH: usize = 32;
const QUERIES: usize = 500;
const WORDS_PER_CHUNK: usize = 150; // ≈ 200 WordPiece tokens of technical English

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let model_dir = std::env::var_os("DOCSHELF_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("models/all-MiniLM-L6-v2"));
    let model_dir = if model_dir.is_relative() {
        root.join(model_dir)
    } else {
        model_dir
    };
    let corpus = std::env::var_os("DOCSHELF_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data/eval/git-docs/corpus"));
    let chunks = chunks_from(&corpus, setting("DOCSHELF_BENCH_CHUNKS").unwrap_or(CHUNKS));
    let batches: Vec<usize> = std::env::var("DOCSHELF_BENCH_BATCHES")
        .ok()
        .map(|list| {
            list.split(',')
                .filter_map(|b| b.trim().parse().ok())
                .collect()
        })
        .filter(|list: &Vec<usize>| !list.is_empty())
        .unwrap_or_else(|| vec![BATCH]);
    let queries: Vec<String> = (0..QUERIES)
        .map(|i| QUERY_STEMS[i % QUERY_STEMS.len()].replace("{}", &i.to_string()))
        .collect();
    println!(
        "embedding bench: {} chunks (~{WORDS_PER_CHUNK} words each) from {}, {} queries",
        chunks.len(),
        corpus.display(),
        queries.len()
    );

    // DOCSHELF_BENCH_BACKENDS=cpu (or gpu) measures one backend only.
    let wanted = std::env::var("DOCSHELF_BENCH_BACKENDS").unwrap_or_else(|_| "cpu,gpu".into());
    for (name, choice) in [("cpu", DeviceChoice::Cpu), ("gpu", DeviceChoice::Gpu)] {
        if !wanted.split(',').any(|w| w.trim() == name) {
            continue;
        }
        match Embedder::load(&model_dir, choice) {
            Ok(embedder) => run(&embedder, &chunks, &queries, &batches),
            Err(EmbedError::NoGpu(reason)) => println!("wgpu: no adapter ({reason})"),
            Err(err) => panic!("cannot load the model: {err}"),
        }
    }
    reference(&model_dir, &chunks, &queries, &batches);
}

fn setting(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn run(embedder: &Embedder, chunks: &[String], queries: &[String], batches: &[usize]) {
    let backend = embedder.backend().clone();
    // First calls compile kernels (wgpu) and fault in weights: not measured.
    embedder
        .embed(&chunks[..32.min(chunks.len())])
        .expect("warm-up");
    embedder.embed(&queries[..1]).expect("warm-up");

    // Software Vulkan runs the GPU code path on the CPU: prove it, don't wait on it.
    let (chunks, queries) = match backend {
        Backend::Wgpu { software: true, .. } => (&chunks[..64], &queries[..20]),
        _ => (chunks, queries),
    };
    for &batch in batches {
        let start = Instant::now();
        embedder.embed_with_batch(chunks, batch).expect("embeds");
        let per_sec = chunks.len() as f64 / start.elapsed().as_secs_f64();
        println!(
            "{backend}: {per_sec:.1} chunks/s (batch {batch}, {} chunks)",
            chunks.len()
        );
    }

    let mut latencies: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            embedder.embed(&[q]).expect("embeds");
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    println!(
        "{backend}: query p50 {:.2} ms, p99 {:.2} ms ({} queries, batch 1)",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        queries.len()
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn reference(model_dir: &Path, chunks: &[String], queries: &[String], batches: &[usize]) {
    let python = std::env::var("DOCSHELF_ST_PYTHON").unwrap_or_else(|_| "python3".into());
    let device = std::env::var("DOCSHELF_ST_DEVICE").unwrap_or_else(|_| "cpu".into());
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, texts: &[String]| {
        let path = dir.path().join(name);
        let mut f = std::fs::File::create(&path).expect("temp file");
        for t in texts {
            serde_json::to_writer(&mut f, t).expect("write");
            f.write_all(b"\n").expect("write");
        }
        path
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench-sentence-transformers.py");
    let output = Command::new(&python)
        .arg(script)
        .arg(model_dir)
        .arg(write("chunks.jsonl", chunks))
        .arg(write("queries.jsonl", queries))
        .arg(&device)
        .arg(
            batches
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
        )
        .output();
    match output {
        Ok(out) if out.status.success() => {
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("the reference script prints JSON");
            let label = format!(
                "sentence-transformers (PyTorch {} {}, {} threads)",
                v["torch"].as_str().unwrap_or("?"),
                v["device"].as_str().unwrap_or("?"),
                v["threads"],
            );
            for run in v["batches"].as_array().into_iter().flatten() {
                println!(
                    "{label}: {:.1} chunks/s (batch {}, {} chunks)",
                    run["chunks_per_sec"].as_f64().unwrap_or(f64::NAN),
                    run["batch"],
                    chunks.len(),
                );
            }
            println!(
                "{label}: query p50 {:.2} ms, p99 {:.2} ms ({} queries, batch 1)",
                v["p50_ms"].as_f64().unwrap_or(f64::NAN),
                v["p99_ms"].as_f64().unwrap_or(f64::NAN),
                queries.len(),
            );
        }
        _ => println!(
            "sentence-transformers: not installed for {python} (set DOCSHELF_ST_PYTHON to a Python with it)"
        ),
    }
}

/// ~200-token chunks of real documentation: the git manual's HTML, tags
/// stripped, cut into fixed word windows. A GPU run asks for more chunks
/// than the manual holds: the windows then start again, shifted by a third
/// of a window, so no two chunks are the same text.
fn chunks_from(corpus: &Path, wanted: usize) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", corpus.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let texts: Vec<Vec<String>> = files
        .iter()
        .map(|file| {
            strip_tags(&std::fs::read_to_string(file).unwrap_or_default())
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    let mut chunks = Vec::with_capacity(wanted);
    for shift in [0, WORDS_PER_CHUNK / 3, 2 * WORDS_PER_CHUNK / 3] {
        for words in &texts {
            let words = words.get(shift..).unwrap_or_default();
            for window in words.chunks_exact(WORDS_PER_CHUNK).skip(1) {
                chunks.push(window.join(" "));
                if chunks.len() == wanted {
                    return chunks;
                }
            }
        }
    }
    chunks
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

const QUERY_STEMS: [&str; 8] = [
    "how do I undo commit {}",
    "rebase onto another branch",
    "show the log of a file",
    "configure a remote named origin{}",
    "what does git stash pop do",
    "resolve merge conflict in file {}",
    "list tags matching a pattern",
    "cherry-pick a range of commits",
];
