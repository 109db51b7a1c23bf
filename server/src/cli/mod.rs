//! The `docshelf` command line: one binary for the server and the tools.
//!
//! - [`serve`]: `serve` (HTTP) and `mcp` (stdio).
//! - [`ingest`]: `ingest`, files, folders, a site or a package into a library version.
//! - [`query`]: `search`, `libraries`, `get`, `delete` against the store.
//! - [`eval`]: `eval`, retrieval quality on a judged corpus.
//! - [`ask`]: `ask`, a question answered by a language model from the store.
//! - [`token`]: `token` and `audit`, tokens and the audit log, here or on a
//!   server; [`remote`]: the CLI against a running server (`--server`).
//!
//! Exit codes: 0 success, 1 a search found nothing, 2 an error (bad usage
//! included), as grep and ripgrep do; an engine error picks 3 (not found),
//! 4 (busy or unavailable) or 5 (internal) from its kind ([`exit_status`]).

mod ask;
mod backup;
mod changes;
mod credentials;
mod eval;
mod ingest;
mod query;
mod remote;
mod serve;
mod token;
mod transfer;

use std::io::{BufRead, Write};

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use index_core::ErrorKind;

use crate::config::{EngineConfig, ModelConfig};
use crate::embed::Embedder;
use crate::engine::EngineError;

pub use ingest::{collect_uploads, IngestArgs};
pub use serve::{serve, ServeConfig};

/// Self-hosted documentation search.
#[derive(Debug, Parser)]
#[command(name = "docshelf", version, about)]
pub struct Cli {
    /// More logging (-v, -vv). `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the dashboard, the REST API and MCP over HTTP.
    Serve(ServeConfig),
    /// Add documents to a library version: files, folders and archives, a site to crawl, or a registry package.
    Ingest(IngestArgs),
    /// Print the embedding of each text as a JSON array of 384 floats, one per line.
    Embed(EmbedArgs),
    /// Search the stored documents.
    Search(query::SearchArgs),
    /// List libraries with their versions and counts.
    Libraries(query::LibrariesArgs),
    /// Answer a question from the stored documents with a language model, citing sources.
    Ask(ask::AskArgs),
    /// Print a whole stored document.
    Get(query::GetArgs),
    /// What changed in a library between two versions, section by section.
    Changes(changes::ChangesArgs),
    /// Delete a library, one version of it, or one document.
    Delete(query::DeleteArgs),
    /// Write a library version, its vectors included, to a file another server imports.
    Export(transfer::ExportArgs),
    /// Take in a file `docshelf export` wrote: the version as it was, nothing embedded again.
    Import(transfer::ImportArgs),
    /// Copy the whole store (`--data`) into a folder, while servers use it.
    Backup(backup::BackupArgs),
    /// Restore a folder `docshelf backup` wrote into an empty store (`--data`).
    Restore(backup::RestoreArgs),
    /// Measure retrieval quality (nDCG, recall) on a judged corpus.
    Eval(eval::EvalArgs),
    /// Serve MCP (Model Context Protocol) on standard input and output, for coding agents.
    Mcp(McpArgs),
    /// Make, list and revoke access tokens (roles per library pattern).
    Token(token::TokenArgs),
    /// Show the audit log: writes and token changes, newest first.
    Audit(token::AuditArgs),
    /// List the credentials private sources may name (never their secrets).
    Credentials(credentials::CredentialsArgs),
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub engine: EngineConfig,
}

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// A search that found nothing.
    NothingFound,
}

/// The exit status of a failed command: 1 is "found nothing" (see
/// [`Outcome`]); an engine error's kind picks the rest from the same table
/// every face uses, so a script can tell a typo from a reason to retry.
pub fn exit_status(err: &anyhow::Error) -> u8 {
    let kind = err.chain().find_map(|e| {
        e.downcast_ref::<EngineError>()
            .map(EngineError::kind)
            .or_else(|| e.downcast_ref::<remote::Refused>().map(|r| r.0.kind))
    });
    match kind {
        Some(ErrorKind::NotFound) => 3,
        Some(
            ErrorKind::Busy
            | ErrorKind::Unavailable
            | ErrorKind::Conflict
            | ErrorKind::TooManyRequests,
        ) => 4,
        Some(ErrorKind::Internal) => 5,
        // Bad input, and whatever failed before reaching the engine
        // (flags, files, the store's path).
        _ => 2,
    }
}

#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// Texts to embed; without any, each line of standard input is one text.
    pub texts: Vec<String>,

    #[command(flatten)]
    pub model: ModelConfig,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let done = |r: anyhow::Result<()>| r.map(|()| Outcome::Done);
    match cli.command {
        Command::Serve(config) => done(runtime()?.block_on(serve(config))),
        Command::Ingest(args) => done(runtime()?.block_on(ingest::ingest(args))),
        Command::Embed(args) => done(embed(args)),
        Command::Search(args) => runtime()?.block_on(query::search(args)),
        Command::Libraries(args) => done(runtime()?.block_on(query::libraries(args))),
        Command::Ask(args) => done(runtime()?.block_on(ask::ask(args))),
        Command::Get(args) => done(runtime()?.block_on(query::get(args))),
        Command::Changes(args) => done(runtime()?.block_on(changes::changes(args))),
        Command::Delete(args) => done(runtime()?.block_on(query::delete(args))),
        Command::Export(args) => done(runtime()?.block_on(transfer::export(args))),
        Command::Import(args) => done(runtime()?.block_on(transfer::import(args))),
        Command::Backup(args) => done(runtime()?.block_on(backup::backup(args))),
        Command::Restore(args) => done(runtime()?.block_on(backup::restore(args))),
        Command::Eval(args) => done(runtime()?.block_on(eval::eval(args))),
        Command::Mcp(args) => done(runtime()?.block_on(serve::mcp_stdio(args))),
        Command::Token(args) => done(runtime()?.block_on(token::token(args))),
        Command::Audit(args) => done(runtime()?.block_on(token::audit(args))),
        Command::Credentials(args) => done(runtime()?.block_on(credentials::list(args))),
    }
}

/// The async runtime, for the commands that need one.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `docshelf embed`: one JSON array per text on stdout, in input order.
fn embed(args: EmbedArgs) -> anyhow::Result<()> {
    let texts = if args.texts.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .collect::<Result<Vec<_>, _>>()
            .context("cannot read texts from standard input")?
    } else {
        args.texts
    };
    let embedder = Embedder::load_with(
        &args.model.model_dir,
        args.model.device,
        args.model.precision,
    )?;
    tracing::info!(backend = %embedder.backend(), texts = texts.len(), "embedding");
    let vectors = embedder.embed(&texts)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for v in vectors {
        serde_json::to_writer(&mut out, &v).context("cannot write to standard output")?;
        out.write_all(b"\n")
            .context("cannot write to standard output")?;
    }
    out.flush().context("cannot write to standard output")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's flags, flattened settings included, are checked
    /// together, as clap checks them only when that command is parsed:
    /// two settings of one name broke `ingest` at its first run.
    #[test]
    fn every_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn the_exit_status_follows_the_error_kind_through_context() {
        let not_found = anyhow::Error::from(EngineError::UnknownChunk("c".into()));
        assert_eq!(exit_status(&not_found), 3);
        let busy = anyhow::Error::from(EngineError::Busy(64)).context("searching");
        assert_eq!(exit_status(&busy), 4);
        assert_eq!(exit_status(&anyhow::anyhow!("no such file")), 2);
    }
}
