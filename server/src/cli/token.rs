//! `docshelf token create|list|revoke` and `docshelf audit`: tokens and the
//! audit log, on the store here (as its owner, like every local command)
//! or on a running server with an admin token (`--server`).

use std::io::Write;

use clap::{Args, Subcommand};
use index_core::access::{AuditEntry, CreatedToken, Grant, NewToken, TokenInfo};

use super::remote::{encode, Remote, RemoteArgs};
use crate::config::EngineConfig;
use crate::engine::Engine;

#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token; its secret is printed once and kept only as a hash.
    Create(CreateArgs),
    /// List tokens (never their secrets).
    List(ListArgs),
    /// Revoke a token by its id.
    Revoke(RevokeArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// A name for people and the audit log (`ci-react`, `agents`).
    pub name: String,
    /// What it may do, repeatable: `read:PATTERN`, `write:PATTERN` or
    /// `admin` (`*` in a pattern is any run of characters: `team-*`).
    #[arg(long = "grant", required = true)]
    pub grants: Vec<Grant>,
    /// Days until it stops working (default: until revoked).
    #[arg(long = "expires-in-days")]
    pub expires_in_days: Option<u32>,
    /// Print the token and its record as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub at: Where,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub at: Where,
}

#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// The token's id, from `docshelf token list`.
    pub id: String,
    #[command(flatten)]
    pub at: Where,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Newest entries shown, at most.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub at: Where,
}

/// The server to ask, or the store to open here.
#[derive(Debug, Args)]
pub struct Where {
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub engine: EngineConfig,
}

/// Runs a command on `--server`, or on the store here as its owner.
enum Target {
    Remote(Remote),
    Local(Box<Engine>),
}

impl Target {
    async fn open(at: &Where) -> anyhow::Result<Self> {
        Ok(match &at.remote.server {
            Some(server) => Self::Remote(Remote::new(server.clone(), at.remote.token.clone())?),
            None => Self::Local(Box::new(Engine::open(&at.engine).await?)),
        })
    }
}

pub async fn token(args: TokenArgs) -> anyhow::Result<()> {
    match args.command {
        TokenCommand::Create(args) => create(args).await,
        TokenCommand::List(args) => list(args).await,
        TokenCommand::Revoke(args) => revoke(args).await,
    }
}

async fn create(args: CreateArgs) -> anyhow::Result<()> {
    let request = NewToken {
        name: args.name,
        grants: args.grants,
        expires_in_days: args.expires_in_days,
    };
    let created: CreatedToken = match Target::open(&args.at).await? {
        Target::Remote(remote) => remote.post("api/tokens", &request).await?,
        Target::Local(engine) => {
            engine
                .create_token(&crate::access::local(), request)
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &created)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{}", created.token)?;
    eprintln!(
        "token {:?} ({}) made: this is the only time it is shown; docshelf keeps its hash.",
        created.info.name, created.info.id
    );
    Ok(())
}

async fn list(args: ListArgs) -> anyhow::Result<()> {
    let tokens: Vec<TokenInfo> = match Target::open(&args.at).await? {
        Target::Remote(remote) => remote.get("api/tokens").await?,
        Target::Local(engine) => engine.list_tokens(&crate::access::local()).await?,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &tokens)?;
        writeln!(out)?;
        return Ok(());
    }
    if tokens.is_empty() {
        eprintln!("no tokens yet: make one with `docshelf token create NAME --grant read:*`");
    }
    for token in &tokens {
        let grants: Vec<String> = token.grants.iter().map(ToString::to_string).collect();
        let state = match (token.revoked_at, token.expires_at) {
            (Some(_), _) => "revoked".to_owned(),
            (None, Some(at)) => format!("expires {}", day(at)),
            (None, None) => "active".to_owned(),
        };
        writeln!(
            out,
            "{}  {:<20} {:<9} {:<24} {}",
            token.id,
            token.name,
            token.prefix,
            state,
            grants.join(" ")
        )?;
    }
    Ok(())
}

async fn revoke(args: RevokeArgs) -> anyhow::Result<()> {
    let info: TokenInfo = match Target::open(&args.at).await? {
        Target::Remote(remote) => {
            remote
                .delete(&format!("api/tokens/{}", encode(&args.id)))
                .await?
        }
        Target::Local(engine) => {
            engine
                .revoke_token(&crate::access::local(), &args.id)
                .await?
        }
    };
    eprintln!("token {:?} ({}) revoked", info.name, info.id);
    Ok(())
}

pub async fn audit(args: AuditArgs) -> anyhow::Result<()> {
    let entries: Vec<AuditEntry> = match Target::open(&args.at).await? {
        Target::Remote(remote) => {
            remote
                .get(&format!("api/audit?limit={}", args.limit))
                .await?
        }
        Target::Local(engine) => {
            engine
                .audit_log(&crate::access::local(), args.limit)
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &entries)?;
        writeln!(out)?;
        return Ok(());
    }
    // Escaped here too: an older server's answer may not be.
    for e in entries.into_iter().map(AuditEntry::one_line) {
        writeln!(
            out,
            "{}  {:<20} {:<15} {:<10} {}",
            day(e.at_micros / 1_000_000),
            e.token,
            e.action,
            e.outcome,
            e.target
        )?;
    }
    Ok(())
}

/// Seconds since the epoch as an RFC 3339 time (UTC).
fn day(secs: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0).unsigned_abs());
    humantime::format_rfc3339_seconds(time).to_string()
}
