//! The `docshelf` command line: one binary for the server and the tools.

use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::config::ServeConfig;
use crate::engine::Engine;
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
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match cli.command {
        Command::Serve(config) => runtime.block_on(serve(config)),
    }
}

/// `docshelf serve`: listens until Ctrl-C or SIGTERM.
pub async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    let engine = Arc::new(Engine::open(&config.paths)?);
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
    tracing::info!(store = %config.paths.data, "docshelf listening on http://{addr}");
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
