//! Embedding throughput and latency, per backend, beside sentence-transformers.
//!
//! `make bench-embed` (or `cargo bench --profile dev -p docshelf-server --bench embed`).
//! The dev profile already optimises burn's kernels and the tokenizer (see
//! the workspace Cargo.toml), and reuses the test build instead of compiling
//! the whole tree again in release.
//!
//! Prints, on the same texts: chunks/s at batch 32 over ~200-token chunks cut
//! from the git manual, and single-query latency p50/p99, for each available
//! backend and, on the CPU, each precision (`--embed-precision`; with each
//! reduced one's cosine to fp32 over the chunks and queries), then the same
//! for the peers when a Python with them is found (`DOCSHELF_ST_PYTHON`,
//! default the peers venv of `scripts/peers-venv.sh` where it exists, else
//! `python3`): sentence-transformers on PyTorch, and ONNX Runtime at fp32
//! and int8 on a graph `scripts/bench-onnx.py` builds from the same weights.
//! Last, each figure's ratio to the best peer's.
//!
//! A GPU needs more work than the CPU default to be measured at all, so the
//! sizes are settings: `DOCSHELF_BENCH_CHUNKS` (256), `DOCSHELF_BENCH_BATCHES`
//! (a list, `32`), `DOCSHELF_BENCH_CORPUS` (the git manual in `../shared`),
//! `DOCSHELF_ST_DEVICE` (`cpu`; `cuda` for PyTorch on an NVIDIA card) and
//! `DOCSHELF_BENCH_PRECISIONS` (`fp32,bf16,int8`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use docshelf_server::embed::{Backend, DeviceChoice, EmbedError, Embedder, Precision};

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
    let precisions = Precision::parse_list(
        &std::env::var("DOCSHELF_BENCH_PRECISIONS").unwrap_or_else(|_| "fp32,bf16,int8".into()),
    )
    .unwrap_or_else(|e| panic!("DOCSHELF_BENCH_PRECISIONS: {e}"));
    let mut figures = Vec::new();
    for (name, choice) in [("cpu", DeviceChoice::Cpu), ("gpu", DeviceChoice::Gpu)] {
        if !wanted.split(',').any(|w| w.trim() == name) {
            continue;
        }
        // A GPU runs f32 only.
        let precisions = match choice {
            DeviceChoice::Gpu => &[Precision::Fp32][..],
            _ => &precisions[..],
        };
        let mut reference: Option<Vec<Vec<f32>>> = None;
        for &precision in precisions {
            let embedder = match Embedder::load_with(&model_dir, choice, precision) {
                Ok(embedder) => embedder,
                Err(EmbedError::NoGpu(reason)) => {
                    println!("wgpu: no adapter ({reason})");
                    break;
                }
                Err(err) => panic!("cannot load the model: {err}"),
            };
            let (measured, vectors) = run(&embedder, &chunks, &queries, &batches);
            figures.push(measured);
            match (&reference, precision) {
                (None, Precision::Fp32) => reference = Some(vectors),
                (Some(fp32), _) => {
                    let cosines: Vec<f64> = fp32
                        .iter()
                        .zip(&vectors)
                        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum())
                        .collect();
                    let mean = cosines.iter().sum::<f64>() / cosines.len().max(1) as f64;
                    let min = cosines.iter().copied().fold(f64::INFINITY, f64::min);
                    println!(
                        "{}: cosine to fp32 over {} chunks and queries: mean {mean:.6}, min {min:.6}",
                        figures.last().map_or("?", |f: &Figures| &f.label),
                        cosines.len()
                    );
                }
                _ => {}
            }
        }
    }
    let python = peers_python();
    let mut peers = Vec::new();
    for (script, name) in [
        ("bench-sentence-transformers.py", "sentence-transformers"),
        ("bench-onnx.py", "ONNX Runtime"),
    ] {
        peers.extend(peer(
            &python, script, name, &model_dir, &chunks, &queries, &batches,
        ));
    }
    ratios(&figures, &peers);
}

/// One embedder's (or peer's) figures, for the ratios printed last.
struct Figures {
    label: String,
    /// `fp32`, `bf16`, `int8`, or a peer's variant of one (`int8 per-channel`).
    precision: String,
    /// Chunks/s at the first batch size.
    per_sec: f64,
    query_p50_ms: f64,
}

/// Each docshelf figure against the best peer's: throughput (higher is
/// better) and query p50 (lower is better), as a ratio above 1 when
/// docshelf leads.
fn ratios(ours: &[Figures], peers: &[Figures]) {
    let best_rate = peers.iter().max_by(|a, b| a.per_sec.total_cmp(&b.per_sec));
    let best_p50 = peers
        .iter()
        .min_by(|a, b| a.query_p50_ms.total_cmp(&b.query_p50_ms));
    let (Some(rate), Some(p50)) = (best_rate, best_p50) else {
        return;
    };
    println!(
        "best peer: {:.1} chunks/s ({}), query p50 {:.2} ms ({})",
        rate.per_sec, rate.label, p50.query_p50_ms, p50.label
    );
    for f in ours {
        println!(
            "{}: throughput x{:.2} the best peer's, query p50 x{:.2} faster",
            f.label,
            f.per_sec / rate.per_sec,
            p50.query_p50_ms / f.query_p50_ms
        );
        // And against each peer at the same precision.
        for peer in peers
            .iter()
            .filter(|p| p.precision.starts_with(&f.precision))
        {
            println!(
                "  vs {}: throughput x{:.2}, query p50 x{:.2} faster",
                peer.label,
                f.per_sec / peer.per_sec,
                peer.query_p50_ms / f.query_p50_ms
            );
        }
    }
}

/// The Python the peers run on: `DOCSHELF_ST_PYTHON`, else the peers venv
/// where `scripts/peers-venv.sh` left one, else `python3`.
fn peers_python() -> String {
    if let Ok(python) = std::env::var("DOCSHELF_ST_PYTHON") {
        return python;
    }
    let venv = std::env::var_os("DOCSHELF_PEERS_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/docshelf/peers-venv"))
        })
        .map(|v| v.join("bin/python"));
    match venv {
        Some(python) if python.is_file() => python.display().to_string(),
        _ => "python3".into(),
    }
}

fn setting(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Measures `embedder`; returns its figures and its vectors of the chunks
/// (from the first batch size's pass) and of the queries.
fn run(
    embedder: &Embedder,
    chunks: &[String],
    queries: &[String],
    batches: &[usize],
) -> (Figures, Vec<Vec<f32>>) {
    let backend = format!("{}, {}", embedder.backend(), embedder.precision());
    // First calls compile kernels (wgpu) and fault in weights: not measured.
    embedder
        .embed(&chunks[..32.min(chunks.len())])
        .expect("warm-up");
    embedder.embed(&queries[..1]).expect("warm-up");

    // Software Vulkan runs the GPU code path on the CPU: prove it, don't wait on it.
    let (chunks, queries) = match embedder.backend() {
        Backend::Wgpu { software: true, .. } => (&chunks[..64], &queries[..20]),
        _ => (chunks, queries),
    };
    let mut vectors = Vec::new();
    let mut first_rate = None;
    for &batch in batches {
        let start = Instant::now();
        let embedded = embedder.embed_with_batch(chunks, batch).expect("embeds");
        let per_sec = chunks.len() as f64 / start.elapsed().as_secs_f64();
        if first_rate.is_none() {
            first_rate = Some(per_sec);
            vectors = embedded;
        }
        println!(
            "{backend}: {per_sec:.1} chunks/s (batch {batch}, {} chunks)",
            chunks.len()
        );
    }

    let mut latencies: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            let vector = embedder.embed(&[q]).expect("embeds");
            let elapsed = t.elapsed().as_secs_f64() * 1000.0;
            vectors.extend(vector);
            elapsed
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    let p50 = percentile(&latencies, 0.50);
    println!(
        "{backend}: query p50 {p50:.2} ms, p99 {:.2} ms ({} queries, batch 1)",
        percentile(&latencies, 0.99),
        queries.len()
    );
    let figures = Figures {
        label: format!("docshelf {backend}"),
        precision: embedder.precision().to_string(),
        per_sec: first_rate.unwrap_or(f64::NAN),
        query_p50_ms: p50,
    };
    (figures, vectors)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Runs one peer's script (`scripts/<script>`: the same CLI and the same
/// texts) and prints its figures; nothing when its Python lacks the peer.
fn peer(
    python: &str,
    script: &str,
    name: &str,
    model_dir: &Path,
    chunks: &[String],
    queries: &[String],
    batches: &[usize],
) -> Vec<Figures> {
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
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(script);
    let output = Command::new(python)
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
        .stderr(std::process::Stdio::inherit())
        .output();
    let v: serde_json::Value = match output {
        Ok(out) if out.status.success() => {
            serde_json::from_slice(&out.stdout).expect("a peer script prints JSON")
        }
        _ => {
            println!("{name}: not measured with {python} (run scripts/peers-venv.sh, or set DOCSHELF_ST_PYTHON to a Python with it)");
            return Vec::new();
        }
    };
    // sentence-transformers prints one run; ONNX Runtime one per precision.
    let runs: Vec<(String, String, &serde_json::Value)> = match v["precisions"].as_array() {
        Some(precisions) => precisions
            .iter()
            .map(|p| {
                let precision = p["precision"].as_str().unwrap_or("?").to_owned();
                let label = format!(
                    "{name} {} {precision}, {} threads",
                    v["onnxruntime"].as_str().unwrap_or("?"),
                    v["threads"]
                );
                (label, precision, p)
            })
            .collect(),
        None => vec![(
            format!(
                "{name} (PyTorch {} {}, {} threads)",
                v["torch"].as_str().unwrap_or("?"),
                v["device"].as_str().unwrap_or("?"),
                v["threads"],
            ),
            "fp32".to_owned(),
            &v,
        )],
    };
    let mut figures = Vec::new();
    for (label, precision, run) in runs {
        for b in run["batches"].as_array().into_iter().flatten() {
            println!(
                "{label}: {:.1} chunks/s (batch {}, {} chunks)",
                b["chunks_per_sec"].as_f64().unwrap_or(f64::NAN),
                b["batch"],
                chunks.len(),
            );
        }
        let p50 = run["p50_ms"].as_f64().unwrap_or(f64::NAN);
        println!(
            "{label}: query p50 {p50:.2} ms, p99 {:.2} ms ({} queries, batch 1)",
            run["p99_ms"].as_f64().unwrap_or(f64::NAN),
            queries.len(),
        );
        if let (Some(mean), Some(min)) = (
            run["cosine_to_fp32_mean"].as_f64(),
            run["cosine_to_fp32_min"].as_f64(),
        ) {
            println!("{label}: cosine to its fp32 over the chunks: mean {mean:.6}, min {min:.6}");
        }
        figures.push(Figures {
            label,
            precision,
            per_sec: run["batches"][0]["chunks_per_sec"]
                .as_f64()
                .unwrap_or(f64::NAN),
            query_p50_ms: p50,
        });
    }
    figures
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
