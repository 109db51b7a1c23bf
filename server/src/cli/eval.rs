//! `docshelf eval`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use index_core::format::Format;

use crate::config::{EngineConfig, ModelConfig};
use crate::engine::Engine;
use crate::eval::{self, EvalSpec};
use crate::search::rerank::LeadPrior;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// An evaluation set, `NAME=DIR` or `NAME=DIR:CORPUS`: DIR holds
    /// `queries.jsonl` and `qrels.jsonl`, and the documents are in CORPUS
    /// (default `DIR/corpus`). Repeat for several sets; each is uploaded as
    /// library NAME, and the report is one table.
    #[arg(long = "set", value_name = "NAME=DIR[:CORPUS]")]
    pub sets: Vec<String>,

    /// One set given file by file (instead of --set): the folder of
    /// documents to upload (every supported file, recursively).
    #[arg(long, conflicts_with = "sets", requires_all = ["queries", "qrels"])]
    pub corpus: Option<PathBuf>,

    /// Queries, JSON lines `{"id","text"}` (with --corpus).
    #[arg(long)]
    pub queries: Option<PathBuf>,

    /// Judgements, JSON lines `{"query_id","file","relevance"}` (with --corpus).
    #[arg(long)]
    pub qrels: Option<PathBuf>,

    /// Cut-off for nDCG and recall.
    #[arg(short, default_value_t = 10)]
    pub k: usize,

    /// Library and version the --corpus set is uploaded as.
    #[arg(long, default_value = "eval")]
    pub library: String,
    #[arg(long, default_value = "1")]
    pub version: String,

    /// Keep the store in this folder (reused if it already holds the
    /// corpus). Default: a temporary folder, removed afterwards.
    #[arg(long)]
    pub store: Option<PathBuf>,

    /// Tuning: the second stage's lead prior, `STRENGTH,DECAY_CHUNKS`
    /// (default: the built-in one).
    #[arg(long, value_name = "S,D")]
    pub lead_prior: Option<String>,

    /// Memory for the library versions searched from memory, in MiB (0:
    /// every search on disk, to compare the two).
    #[arg(long, default_value_t = crate::store::resident::default_budget_mib())]
    pub resident_mib: u64,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub model: ModelConfig,
}

pub async fn eval(args: EvalArgs) -> anyhow::Result<()> {
    anyhow::ensure!((1..=50).contains(&args.k), "-k must be 1..50");
    let specs = specs(&args)?;
    let temp;
    let store = match &args.store {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("docshelf-eval-")
                .tempdir()
                .context("cannot create a temporary store folder")?;
            temp.path().to_owned()
        }
    };
    let config = EngineConfig {
        max_files: 100_000,
        max_expanded_mib: 4096,
        resident_mib: args.resident_mib,
        ..EngineConfig::new(store.to_string_lossy(), args.model.clone())
    };
    let mut engine = Engine::open(&config).await?;
    if let Some(prior) = &args.lead_prior {
        engine = engine.with_second_stage(Box::new(parse_prior(prior)?));
    }
    engine.embedder().await?;
    let mut reports = Vec::new();
    for spec in &specs {
        let uploads = super::collect_uploads(std::slice::from_ref(&spec.corpus))?;
        anyhow::ensure!(
            !uploads.is_empty(),
            "{} holds no {} files",
            spec.corpus.display(),
            Format::summary()
        );
        reports.push(eval::run(&engine, spec, uploads).await?);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        eval::print(&reports);
    }
    Ok(())
}

/// The sets to run, from `--set` or `--corpus`/`--queries`/`--qrels`.
fn specs(args: &EvalArgs) -> anyhow::Result<Vec<EvalSpec>> {
    if let (Some(corpus), Some(queries), Some(qrels)) = (&args.corpus, &args.queries, &args.qrels) {
        return Ok(vec![EvalSpec {
            set: args.library.clone(),
            corpus: corpus.clone(),
            queries: queries.clone(),
            qrels: qrels.clone(),
            library: args.library.clone(),
            version: args.version.clone(),
            k: args.k,
        }]);
    }
    anyhow::ensure!(
        !args.sets.is_empty(),
        "name at least one set (--set NAME=DIR) or a --corpus with --queries and --qrels"
    );
    args.sets
        .iter()
        .map(|set| {
            let (name, rest) = set
                .split_once('=')
                .with_context(|| format!("--set {set:?}: expected NAME=DIR[:CORPUS]"))?;
            let (dir, corpus) = match rest.split_once(':') {
                Some((dir, corpus)) => (PathBuf::from(dir), PathBuf::from(corpus)),
                None => (PathBuf::from(rest), PathBuf::from(rest).join("corpus")),
            };
            index_core::validate::library(name)
                .with_context(|| format!("--set {set:?}: {name:?} is not a library name"))?;
            Ok(EvalSpec {
                set: name.to_owned(),
                corpus,
                queries: dir.join("queries.jsonl"),
                qrels: dir.join("qrels.jsonl"),
                library: name.to_owned(),
                version: args.version.clone(),
                k: args.k,
            })
        })
        .collect()
}

fn parse_prior(text: &str) -> anyhow::Result<LeadPrior> {
    let numbers: Vec<f32> = text
        .split(',')
        .map(|x| x.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--lead-prior {text:?}: expected two numbers"))?;
    let [strength, decay_chunks] = numbers[..] else {
        anyhow::bail!("--lead-prior {text:?}: expected two numbers S,D");
    };
    anyhow::ensure!(
        strength >= 0.0 && decay_chunks > 0.0,
        "--lead-prior {text:?}: the strength must be at least 0 and the decay positive"
    );
    Ok(LeadPrior {
        strength,
        decay_chunks,
    })
}
