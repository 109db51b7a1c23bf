//! The `docshelf` command line: one binary for the server and the tools.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use crate::config::ServeConfig;
use crate::embed::{DeviceChoice, Embedder};
use crate::engine;
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
    /// Print the embedding of each text as a JSON array of 384 floats, one per line.
    Embed(EmbedArgs),
}

#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// Texts to embed; without any, each line of standard input is one text.
    pub texts: Vec<String>,

    /// Directory holding the embedding model.
    #[arg(
        long = "model-dir",
        env = "DOCSHELF_MODEL_DIR",
        default_value = "./models/all-MiniLM-L6-v2"
    )]
    pub model_dir: PathBuf,

    /// Where the model runs.
    #[arg(long = "device", env = "DOCSHELF_DEVICE", value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(config) => runtime()?.block_on(serve(config)),
        Command::Embed(args) => embed(args),
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
    let engine = engine::open_shared(config.engine.clone()).await?;
    let app = http::router(
        engine,
        &RouterConfig {
            site_dir: config.site_dir.clone(),
            max_body_bytes: config.max_body_bytes(),
        },
    );
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    tracing::info!(store = %config.engine.data, "docshelf listening on http://{addr}");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("the HTTP server failed")?;
    tracing::info!("docshelf stopped");
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
    let embedder = Embedder::load(&args.model_dir, args.device)?;
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
