//! `docshelf eval`: retrieval quality on a judged corpus, through the real
//! pipeline.
//!
//! The corpus is uploaded into a store (a fresh temporary one unless told
//! otherwise) exactly as a user's upload would be: extracted, chunked,
//! embedded and indexed. Then every query runs in each mode, the hits are
//! reduced to documents (a document's rank is that of its best chunk), and
//! nDCG@k and Recall@k are averaged over the queries.
//!
//! Queries are JSON lines `{"id","text"}`; judgements are JSON lines
//! `{"query_id","file","relevance"}` where `file` is the document's path
//! inside the corpus folder.
//!
//! Results are pages (one per document, as every face returns them by
//! default), so the first `k` results are scored directly. Several sets run
//! in one call, each as a library of its own in one store, and print as one
//! table: quality is never judged on one documentation family.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use index_core::eval::{ndcg_at, recall_at};
use index_core::job::Upload;
use index_core::search::{FusionMethod, Mode, SearchParams};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;

#[derive(Debug, Deserialize)]
struct Query {
    id: String,
    text: String,
}

#[derive(Debug, Deserialize)]
struct Judgement {
    query_id: String,
    file: String,
    relevance: u32,
}

/// One way of searching that the eval compares.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    pub name: &'static str,
    pub mode: Mode,
    pub fusion: FusionMethod,
    /// Whether the second stage runs.
    pub rerank: bool,
}

/// Every mode (default settings), hybrid with RRF instead of DBSF, and the
/// default without its second stage, to show what that stage adds.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "dense",
        mode: Mode::Dense,
        fusion: FusionMethod::Dbsf,
        rerank: true,
    },
    Variant {
        name: "keyword",
        mode: Mode::Keyword,
        fusion: FusionMethod::Dbsf,
        rerank: true,
    },
    Variant {
        name: "hybrid",
        mode: Mode::Hybrid,
        fusion: FusionMethod::Dbsf,
        rerank: true,
    },
    Variant {
        name: "hybrid, rrf",
        mode: Mode::Hybrid,
        fusion: FusionMethod::Rrf,
        rerank: true,
    },
    Variant {
        name: "hybrid, 1st stage",
        mode: Mode::Hybrid,
        fusion: FusionMethod::Dbsf,
        rerank: false,
    },
];

/// The figures of one variant.
#[derive(Debug, Clone, Serialize)]
pub struct VariantScore {
    pub variant: String,
    pub ndcg: f64,
    pub recall: f64,
    pub queries: usize,
    pub mean_ms: f64,
}

/// The report of one set.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub set: String,
    pub k: usize,
    pub documents: usize,
    pub chunks: u64,
    pub ingest_secs: Option<f64>,
    pub scores: Vec<VariantScore>,
}

/// What to evaluate: one set, uploaded as library `library`.
#[derive(Debug, Clone)]
pub struct EvalSpec {
    pub set: String,
    pub corpus: PathBuf,
    pub queries: PathBuf,
    pub qrels: PathBuf,
    pub library: String,
    pub version: String,
    pub k: usize,
}

/// Uploads the corpus (unless the store already holds the library) and
/// scores every variant.
pub async fn run(engine: &Engine, spec: &EvalSpec, uploads: Vec<Upload>) -> anyhow::Result<Report> {
    let queries: Vec<Query> = read_jsonl(&spec.queries)?;
    let judgements: Vec<Judgement> = read_jsonl(&spec.qrels)?;
    let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
    for j in judgements {
        qrels
            .entry(j.query_id)
            .or_default()
            .insert(j.file, j.relevance);
    }
    anyhow::ensure!(
        !queries.is_empty(),
        "{} holds no queries",
        spec.queries.display()
    );

    let present = engine
        .libraries(&crate::access::local())
        .await?
        .into_iter()
        .any(|l| l.name == spec.library && l.versions.iter().any(|v| v.version == spec.version));
    let ingest_secs = if present {
        eprintln!(
            "the store already holds {} {}: reusing it",
            spec.library, spec.version
        );
        engine.store().refresh_indexes().await?;
        None
    } else {
        let files = uploads.len();
        eprintln!("uploading {files} file(s) from {}", spec.corpus.display());
        let started = Instant::now();
        let mut progress = None;
        let status = engine
            .ingest_watched(&spec.library, &spec.version, uploads, |rx| {
                progress = Some(tokio::spawn(report_progress(rx, files)));
            })
            .await?;
        if let Some(progress) = progress {
            progress.await.ok();
        }
        if let Some(err) = status.error {
            anyhow::bail!("the upload failed: {err}");
        }
        let (stored, failed) = status.tally();
        eprintln!("stored {stored} document(s), {failed} failed");
        Some(started.elapsed().as_secs_f64())
    };
    let documents = engine
        .documents(&crate::access::local(), &spec.library, Some(&spec.version))
        .await?;
    // Every query answered the same way, from the in-memory copy (unless
    // the store is larger than it may hold), not some from disk while the
    // copy is read in the background.
    engine.store().reload_resident().await?;

    let mut scores = Vec::new();
    for variant in VARIANTS {
        let (mut ndcg, mut recall, mut ms, mut n) = (0.0, 0.0, 0.0, 0usize);
        for q in &queries {
            let Some(rels) = qrels.get(&q.id) else {
                continue;
            };
            let started = Instant::now();
            let response = engine
                .search(
                    &crate::access::local(),
                    SearchParams {
                        query: q.text.clone(),
                        k: Some(spec.k as i64),
                        library: Some(spec.library.clone()),
                        version: Some(spec.version.clone()),
                        mode: Some(variant.mode.name().into()),
                        fusion: Some(variant.fusion.name().to_owned()),
                        rerank: Some(variant.rerank),
                        ..SearchParams::default()
                    },
                )
                .await
                .with_context(|| format!("query {} failed", q.id))?;
            ms += started.elapsed().as_secs_f64() * 1e3;
            let ranked: Vec<&str> = response
                .results
                .iter()
                .map(|h| h.file_path.as_str())
                .collect();
            ndcg += ndcg_at(&ranked, rels, spec.k);
            recall += recall_at(&ranked, rels, spec.k);
            n += 1;
        }
        anyhow::ensure!(n > 0, "no query has judgements in {}", spec.qrels.display());
        scores.push(VariantScore {
            variant: variant.name.to_owned(),
            ndcg: ndcg / n as f64,
            recall: recall / n as f64,
            queries: n,
            mean_ms: ms / n as f64,
        });
    }
    Ok(Report {
        set: spec.set.clone(),
        k: spec.k,
        documents: documents.len(),
        chunks: documents.iter().map(|d| d.chunks).sum(),
        ingest_secs,
        scores,
    })
}

/// Prints the reports as one table: a row per variant, nDCG and recall
/// per set side by side.
pub fn print(reports: &[Report]) {
    let Some(first) = reports.first() else {
        return;
    };
    for r in reports {
        println!(
            "{}: {} documents, {} chunks, {} queries{}",
            r.set,
            r.documents,
            r.chunks,
            r.scores.first().map_or(0, |s| s.queries),
            r.ingest_secs
                .map(|s| format!(", uploaded in {s:.1} s"))
                .unwrap_or_default()
        );
    }
    let k = first.k;
    let mut header = format!("{:<18}", "mode");
    for r in reports {
        header.push_str(&format!(" | {:^24}", r.set));
    }
    println!("{header}");
    let mut sub = format!("{:<18}", "");
    for _ in reports {
        sub.push_str(&format!(
            " | {:>8} {:>9} {:>5}",
            format!("nDCG@{k}"),
            format!("Recall@{k}"),
            "ms"
        ));
    }
    println!("{sub}");
    for (i, variant) in first.scores.iter().enumerate() {
        let mut row = format!("{:<18}", variant.variant);
        for r in reports {
            match r.scores.get(i) {
                Some(s) => row.push_str(&format!(
                    " | {:>8.4} {:>9.4} {:>5.0}",
                    s.ndcg, s.recall, s.mean_ms
                )),
                None => row.push_str(&format!(" | {:>24}", "")),
            }
        }
        println!("{row}");
    }
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| {
                format!("{} line {}: not the expected JSON", path.display(), i + 1)
            })
        })
        .collect()
}

/// One line per tenth of the files stored, so long uploads show progress.
async fn report_progress(
    mut rx: tokio::sync::watch::Receiver<index_core::job::JobStatus>,
    files: usize,
) {
    let step = (files / 10).max(1);
    let mut shown = 0;
    loop {
        let done = rx
            .borrow_and_update()
            .files
            .iter()
            .filter(|f| f.state.is_final())
            .count();
        if done >= shown + step || (done == files && done > shown) {
            eprintln!("  {done}/{files} files");
            shown = done;
        }
        if rx.changed().await.is_err() {
            break;
        }
    }
}
