//! `docshelf backup DEST` and `docshelf restore SRC`: a whole store (local
//! or on an object store, `--data`) copied into a folder while servers use
//! it, and restored into an empty store (see `store::backup`).

use std::path::PathBuf;

use clap::Args;

use crate::config::EngineConfig;
use crate::engine::{Engine, MODEL_NAME};

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// A new or empty folder to write the backup into.
    pub dest: PathBuf,

    #[command(flatten)]
    pub engine: EngineConfig,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A folder `docshelf backup` wrote.
    pub src: PathBuf,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub(super) async fn backup(args: BackupArgs) -> anyhow::Result<()> {
    let engine = Engine::open(&args.engine).await?;
    let manifest = engine.store().backup(&args.dest, MODEL_NAME).await?;
    for table in &manifest.tables {
        println!("{:<12} {:>9} rows  {}", table.table, table.rows, table.file);
    }
    println!(
        "backed up {} into {}",
        args.engine.data,
        args.dest.display()
    );
    Ok(())
}

pub(super) async fn restore(args: RestoreArgs) -> anyhow::Result<()> {
    let engine = Engine::open(&args.engine).await?;
    let manifest = engine.store().restore(&args.src, MODEL_NAME).await?;
    let rows: u64 = manifest.tables.iter().map(|t| t.rows).sum();
    println!(
        "restored {} ({} tables, {rows} rows) into {}",
        args.src.display(),
        manifest.tables.len(),
        args.engine.data
    );
    Ok(())
}
