//! `docshelf serve` and `docshelf mcp`: the long-running faces.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::McpArgs;
use crate::config::EngineConfig;
use crate::engine::Engine;
use crate::http::{self, RouterConfig};

/// Settings of `docshelf serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address to listen on. Port 0 picks a free port (the chosen address is logged).
    #[arg(long = "addr", env = "DOCSHELF_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Directory with the built dashboard (`pkg/app.js`, `pkg/app_bg.wasm`, …).
    #[arg(long = "site-dir", env = "DOCSHELF_SITE_DIR", default_value = "dist")]
    pub site_dir: PathBuf,

    /// Largest request body accepted, in MiB (uploads included).
    #[arg(
        long = "max-body-mib",
        env = "DOCSHELF_MAX_BODY_MIB",
        default_value_t = 512
    )]
    pub max_body_mib: usize,

    /// The admin token: it may do anything, tokens included. With it set,
    /// writes (and with --auth-reads, reads) need a token, this one or one
    /// made with `docshelf token create`, as `Authorization: Bearer
    /// <token>`. Without one, docshelf listens on loopback only.
    #[arg(long = "token", env = "DOCSHELF_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Require a token for reads too (search, documents, MCP, metrics).
    /// Needed for libraries that some tokens may not read to stay private
    /// from requests without a token.
    #[arg(long = "auth-reads", env = "DOCSHELF_AUTH_READS", value_parser = crate::config::switch())]
    pub auth_reads: bool,

    /// Wrong tokens one client address may send in a minute; past it, its
    /// requests with a token get 429 until the minute ends.
    #[arg(
        long = "max-token-failures",
        env = "DOCSHELF_MAX_TOKEN_FAILURES",
        default_value_t = crate::access::attempts::MAX_FAILURES
    )]
    pub max_token_failures: u32,

    /// Seconds a connection may take to send a request's headers, or sit
    /// idle between requests, before it is closed.
    #[arg(
        long = "header-timeout-secs",
        env = "DOCSHELF_HEADER_TIMEOUT_SECS",
        default_value_t = crate::http::serve::HEADER_TIMEOUT.as_secs()
    )]
    pub header_timeout_secs: u64,

    /// Browser origins allowed to call the API (CORS), comma-separated,
    /// e.g. `https://docs.example.com`. Default: none.
    #[arg(
        long = "cors-origins",
        env = "DOCSHELF_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<String>,

    /// Host names this server answers to besides loopback names and IP
    /// addresses (comma-separated, e.g. `docs.example.com`): the name a
    /// reverse proxy or DNS points at it. Requests naming any other host
    /// are refused, which stops DNS-rebinding pages from reading the API.
    #[arg(
        long = "allowed-hosts",
        env = "DOCSHELF_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    #[command(flatten)]
    pub llm: crate::llm::LlmConfig,

    #[command(flatten)]
    pub engine: EngineConfig,
}

impl ServeConfig {
    /// The body limit in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_mib.saturating_mul(1024 * 1024)
    }
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
    } else if !config.auth_reads {
        tracing::info!(
            "reads are open to requests without a token (--auth-reads is off): a token's read scope narrows what it sees, but keeps nothing private"
        );
    }
    let llm = crate::llm::Llm::from_config(&config.llm).context("Ask's language model")?;
    match &llm {
        Some(llm) => tracing::info!(endpoint = llm.endpoint(), "Ask is on"),
        None => tracing::info!("Ask is off (no --llm-url)"),
    }
    let engine = Arc::new(Engine::open(&config.engine).await?.with_llm(llm));
    if let Some(every) = config.engine.sources.refresh_every {
        engine.schedule_refreshes(every);
    }
    engine.schedule_searched_writes();
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
                max_failures: Some(config.max_token_failures),
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
pub(super) async fn mcp_stdio(args: McpArgs) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let engine = Arc::new(Engine::open(&args.engine).await?);
    engine.warm().await;
    // rmcp reads and writes through pipes; `mcp::stdio::filter` stands
    // between them and the process's stdin and stdout, answering lines
    // that are not JSON-RPC messages (rmcp would ignore them silently).
    let (server_in, to_server) = tokio::io::duplex(1 << 16);
    let (from_server, server_out) = tokio::io::duplex(1 << 16);
    let filter = tokio::spawn(crate::mcp::stdio::filter(
        tokio::io::stdin(),
        to_server,
        from_server,
        tokio::io::stdout(),
    ));
    let service = crate::mcp::DocshelfMcp::new(engine)
        .serve((server_in, server_out))
        .await
        .context("the MCP client did not initialise")?;
    service.waiting().await.context("the MCP session failed")?;
    filter
        .await
        .context("the MCP stdio filter stopped")?
        .context("stdin or stdout failed")?;
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
