//! The `docshelf` command line: one binary for the server and the tools.
//!
//! - [`query`]: `search`, `libraries`, `get`, `delete` against the store.
//! - [`eval`]: `eval`, retrieval quality on a judged corpus.
//! - [`ask`]: `ask`, a question answered by a language model from the store.
//!
//! Exit codes: 0 success, 1 a search found nothing, 2 an error (bad usage
//! included), as grep and ripgrep do.

mod ask;
mod eval;
mod query;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use index_core::format::Format;
use index_core::job::{FileState, Upload};
use index_core::validate;
use index_core::ErrorKind;

use crate::config::{EngineConfig, ModelConfig, ServeConfig};
use crate::embed::Embedder;
use crate::engine::{Engine, EngineError};
use crate::http::{self, RouterConfig};

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
    /// Upload files, folders and ZIP archives into a library version.
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
    /// Delete a library, one version of it, or one document.
    Delete(query::DeleteArgs),
    /// Measure retrieval quality (nDCG, recall) on a judged corpus.
    Eval(eval::EvalArgs),
    /// Serve MCP (Model Context Protocol) on standard input and output, for coding agents.
    Mcp(McpArgs),
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
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<EngineError>())
        .map(EngineError::kind);
    match kind {
        Some(ErrorKind::NotFound) => 3,
        Some(ErrorKind::Busy | ErrorKind::Unavailable) => 4,
        Some(ErrorKind::Internal) => 5,
        // Bad input, and whatever failed before reaching the engine
        // (flags, files, the store's path).
        _ => 2,
    }
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Library to add the documents to (e.g. `react`).
    #[arg(long)]
    pub library: String,

    /// Version of the library (e.g. `18.2`).
    #[arg(long)]
    pub version: String,

    /// Files, folders (read recursively) and ZIP archives.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub engine: EngineConfig,
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
        Command::Ingest(args) => done(runtime()?.block_on(ingest(args))),
        Command::Embed(args) => done(embed(args)),
        Command::Search(args) => runtime()?.block_on(query::search(args)),
        Command::Libraries(args) => done(runtime()?.block_on(query::libraries(args))),
        Command::Ask(args) => done(runtime()?.block_on(ask::ask(args))),
        Command::Get(args) => done(runtime()?.block_on(query::get(args))),
        Command::Delete(args) => done(runtime()?.block_on(query::delete(args))),
        Command::Eval(args) => done(runtime()?.block_on(eval::eval(args))),
        Command::Mcp(args) => done(runtime()?.block_on(mcp_stdio(args))),
    }
}

/// The async runtime, for the commands that need one.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `docshelf serve`: listens until Ctrl-C or SIGTERM.
pub async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    let token = config.token.clone().filter(|t| !t.trim().is_empty());
    let mut addr = config.addr;
    if token.is_none() && !addr.ip().is_loopback() {
        let loopback = match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        };
        tracing::warn!(
            requested = %addr,
            "no token set (DOCSHELF_TOKEN): listening on loopback only, so other hosts cannot reach this server"
        );
        addr.set_ip(loopback);
    }
    if token.is_none() {
        tracing::info!("no token set: uploads and deletes are open to local users");
    }
    let llm = crate::llm::Llm::from_config(&config.llm).context("Ask's language model")?;
    match &llm {
        Some(llm) => tracing::info!(endpoint = llm.endpoint(), "Ask is on"),
        None => tracing::info!("Ask is off (no --llm-url)"),
    }
    let engine = Arc::new(Engine::open(&config.engine).await?.with_llm(llm));
    // Load the model before listening: the first search is not slow, and
    // the status says at once whether the model works.
    engine.warm().await;
    let app = http::router(
        engine,
        &RouterConfig {
            site_dir: config.site_dir.clone(),
            max_body_bytes: config.max_body_bytes(),
            access: http::Access {
                token,
                auth_reads: config.auth_reads,
            },
            cors_origins: config.cors_origins.clone(),
            allowed_hosts: config.allowed_hosts.clone(),
        },
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    tracing::info!(store = %config.engine.data, "docshelf listening on http://{addr}");
    http::serve::serve(
        listener,
        app,
        Duration::from_secs(config.header_timeout_secs.max(1)),
        shutdown_signal(),
    )
    .await;
    tracing::info!("docshelf stopped");
    Ok(())
}

/// `docshelf mcp`: one MCP session on stdin/stdout until the client leaves.
/// Logs go to stderr, so they never mix with the protocol.
async fn mcp_stdio(args: McpArgs) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let engine = Arc::new(Engine::open(&args.engine).await?);
    engine.warm().await;
    let service = crate::mcp::DocshelfMcp::new(engine)
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not initialise")?;
    service.waiting().await.context("the MCP session failed")?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM so in-flight requests can finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::warn!(%err, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(err) => {
                tracing::warn!(%err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
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
    let embedder = Embedder::load(&args.model.model_dir, args.model.device)?;
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

/// `docshelf ingest`: runs one upload job, printing each file as it finishes.
async fn ingest(args: IngestArgs) -> anyhow::Result<()> {
    let library = validate::library(&args.library)?;
    let version = validate::version(&args.version)?;
    let uploads = collect_uploads(&args.paths)?;
    if uploads.is_empty() {
        anyhow::bail!("no {} files found in the given paths", Format::summary());
    }
    let engine = Engine::open(&args.engine).await?;
    engine.embedder().await?;
    eprintln!(
        "ingesting {} file(s) into {library} {version}",
        uploads.len()
    );

    let mut printer = None;
    let status = engine
        .ingest_watched(&library, &version, uploads, |rx| {
            printer = Some(tokio::spawn(print_progress(rx)));
        })
        .await?;
    // The printer ends when the job's sender is dropped; it has seen the last state.
    if let Some(printer) = printer {
        printer.await.context("the progress printer failed")?;
    }

    let (stored, failed) = status.tally();
    eprintln!("done: {stored} stored, {failed} failed");
    if let Some(error) = status.error {
        anyhow::bail!(error);
    }
    if failed > 0 {
        anyhow::bail!("{failed} file(s) failed");
    }
    Ok(())
}

/// Shows the job's progress: on a terminal, a live line per file with a
/// spinner while it works and its outcome when done; otherwise (logs, pipes)
/// one plain line per file as it finishes.
async fn print_progress(rx: tokio::sync::watch::Receiver<index_core::job::JobStatus>) {
    if std::io::stderr().is_terminal() {
        progress_bars(rx).await;
    } else {
        progress_lines(rx).await;
    }
}

async fn progress_bars(mut rx: tokio::sync::watch::Receiver<index_core::job::JobStatus>) {
    use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
    let multi = MultiProgress::new();
    let working = ProgressStyle::with_template("{spinner:.cyan} {prefix:.bold} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let finished = ProgressStyle::with_template("  {prefix:.bold} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let mut bars: Vec<ProgressBar> = Vec::new();
    loop {
        let files = rx.borrow_and_update().files.clone();
        for (i, f) in files.iter().enumerate() {
            if i == bars.len() {
                let bar = multi.add(ProgressBar::new_spinner().with_style(working.clone()));
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                bars.push(bar);
            }
            let bar = &bars[i];
            // An archive's slot is taken over by its first entry: follow names.
            bar.set_prefix(f.file_path.clone());
            if f.state.is_final() {
                bar.set_style(finished.clone());
                bar.finish_with_message(f.state.to_string());
            } else {
                bar.set_message(f.state.to_string());
            }
        }
        if rx.changed().await.is_err() {
            break;
        }
    }
    for bar in &bars {
        if !bar.is_finished() {
            bar.finish();
        }
    }
}

async fn progress_lines(mut rx: tokio::sync::watch::Receiver<index_core::job::JobStatus>) {
    let mut printed = BTreeSet::new();
    loop {
        let files = rx.borrow_and_update().files.clone();
        for f in files {
            if f.state.is_final() && printed.insert(f.file_path.clone()) {
                eprintln!("{:<8} {}", f.state.name(), line(&f));
                for w in &f.warnings {
                    eprintln!("         warning: {w}");
                }
            }
        }
        if rx.changed().await.is_err() {
            break;
        }
    }
}

/// The file and, when it did not simply get stored, why.
fn line(f: &index_core::job::FileProgress) -> String {
    match &f.state {
        FileState::Stored { chunks, new_chunks } => {
            format!("{} ({chunks} chunks, {new_chunks} new)", f.file_path)
        }
        FileState::Failed { reason } | FileState::Skipped { reason } => {
            format!("{}: {reason}", f.file_path)
        }
        _ => f.file_path.clone(),
    }
}

/// Reads the files to upload: files as given, folders walked in name order
/// (only supported types), each named by its path inside the folder.
pub fn collect_uploads(paths: &[PathBuf]) -> anyhow::Result<Vec<Upload>> {
    let mut uploads = Vec::new();
    for path in paths {
        let meta =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if meta.is_dir() {
            let mut stack = vec![path.clone()];
            let mut files = Vec::new();
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir)
                    .with_context(|| format!("cannot list {}", dir.display()))?
                {
                    let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
                    let p = entry.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if Format::from_path(&p.to_string_lossy()).is_some() {
                        files.push(p);
                    }
                }
            }
            files.sort();
            for file in files {
                let name = file
                    .strip_prefix(path)
                    .unwrap_or(&file)
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = std::fs::read(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                uploads.push(Upload { name, bytes });
            }
        } else {
            let name = path.file_name().map_or_else(
                || path.to_string_lossy().into_owned(),
                |n| n.to_string_lossy().into_owned(),
            );
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            uploads.push(Upload { name, bytes });
        }
    }
    Ok(uploads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_status_follows_the_error_kind_through_context() {
        let not_found = anyhow::Error::from(EngineError::UnknownChunk("c".into()));
        assert_eq!(exit_status(&not_found), 3);
        let busy = anyhow::Error::from(EngineError::Busy(64)).context("searching");
        assert_eq!(exit_status(&busy), 4);
        assert_eq!(exit_status(&anyhow::anyhow!("no such file")), 2);
    }
}
