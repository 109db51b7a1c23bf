//! `docshelf export LIB[@VERSION]` and `docshelf import FILE`: a library
//! version moved between servers with its vectors, nothing embedded again;
//! on the store here, or through a running server (`--server`, with an
//! admin token).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use index_core::transfer::ImportedVersion;

use super::remote::{encode, Remote, RemoteArgs};
use crate::config::EngineConfig;
use crate::engine::Engine;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// `LIBRARY` (its latest version) or `LIBRARY@VERSION`.
    pub target: String,

    /// Write the export here (default: standard output, unless it is a
    /// terminal).
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// An export written by `docshelf export` (or the REST API's).
    pub file: PathBuf,

    /// Print the answer as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub(super) async fn export(args: ExportArgs) -> anyhow::Result<()> {
    let (library, version) = match args.target.split_once('@') {
        Some((library, version)) => (library, version),
        None => (args.target.as_str(), "latest"),
    };
    if args.output.is_none() && std::io::stdout().is_terminal() {
        anyhow::bail!("an export is binary: give a file with -o, or redirect standard output");
    }
    let bytes = match Remote::named(&args.remote)? {
        Some(remote) => remote
            .get_bytes(&format!(
                "api/libraries/{}/versions/{}/export",
                encode(library),
                encode(version)
            ))
            .await?
            .to_vec(),
        None => {
            Engine::open(&args.engine)
                .await?
                .export_version(&crate::access::local(), library, version)
                .await?
                .1
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, &bytes)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(())
}

pub(super) async fn import(args: ImportArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let imported: ImportedVersion = match Remote::named(&args.remote)? {
        Some(remote) => remote.post_bytes("api/import", bytes).await?,
        None => {
            Engine::open(&args.engine)
                .await?
                .import_version(&crate::access::local(), &bytes)
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &imported)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "imported {}@{}: {} documents, {} chunks ({} new, {} removed), nothing embedded",
            imported.library,
            imported.version,
            imported.documents,
            imported.chunks,
            imported.inserted,
            imported.deleted
        )?;
    }
    Ok(())
}
