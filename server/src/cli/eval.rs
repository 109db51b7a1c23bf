//! `docshelf eval`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::config::{EngineConfig, ModelConfig};
use crate::engine::Engine;
use crate::eval::{self, EvalSpec};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Folder of documents to upload (every supported file, recursively).
    #[arg(long)]
    pub corpus: PathBuf,

    /// Queries, JSON lines `{"id","text"}`.
    #[arg(long)]
    pub queries: PathBuf,

    /// Judgements, JSON lines `{"query_id","file","relevance"}`.
    #[arg(long)]
    pub qrels: PathBuf,

    /// Cut-off for nDCG and recall.
    #[arg(short, default_value_t = 10)]
    pub k: usize,

    /// Library and version the corpus is uploaded as.
    #[arg(long, default_value = "eval")]
    pub library: String,
    #[arg(long, default_value = "1")]
    pub version: String,

    /// Keep the store in this folder (reused if it already holds the
    /// corpus). Default: a temporary folder, removed afterwards.
    #[arg(long)]
    pub store: Option<PathBuf>,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub model: ModelConfig,
}

pub async fn eval(args: EvalArgs) -> anyhow::Result<()> {
    anyhow::ensure!((1..=50).contains(&args.k), "-k must be 1..50");
    let uploads = super::collect_uploads(std::slice::from_ref(&args.corpus))?;
    anyhow::ensure!(
        !uploads.is_empty(),
        "{} holds no .md, .txt, .html, .pdf or .zip files",
        args.corpus.display()
    );
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
        data: store.to_string_lossy().into_owned(),
        model: args.model.clone(),
        max_files: 100_000,
        max_expanded_mib: 4096,
    };
    let engine = Engine::open(&config).await?;
    engine.embedder()?;
    let spec = EvalSpec {
        corpus: args.corpus,
        queries: args.queries,
        qrels: args.qrels,
        library: args.library,
        version: args.version,
        k: args.k,
    };
    let report = eval::run(&engine, &spec, uploads).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        eval::print(&report);
    }
    Ok(())
}
