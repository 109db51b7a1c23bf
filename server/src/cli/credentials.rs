//! `docshelf credentials`: the credentials private sources may name, as
//! the operator declared them (here, from the same flags and variables
//! `docshelf serve` reads) or as a running server has them (`--server`,
//! with an admin token). Names and places only: never a secret, nor where
//! the server keeps it.

use std::io::Write;

use clap::Args;
use index_core::source::{CredentialInfo, CredentialList};

use super::remote::{Remote, RemoteArgs};
use crate::config::SourceConfig;

#[derive(Debug, Args)]
pub struct CredentialsArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub sources: SourceConfig,
}

pub(super) async fn list(args: CredentialsArgs) -> anyhow::Result<()> {
    let listed: CredentialList = match &args.remote.server {
        Some(server) => {
            Remote::new(server.clone(), args.remote.token.clone())?
                .get("api/credentials")
                .await?
        }
        None => CredentialList {
            credentials: args
                .sources
                .credentials()
                .map_err(|e| anyhow::anyhow!("--credential: {e}"))?
                .list(),
        },
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &listed)?;
        writeln!(out)?;
        return Ok(());
    }
    if listed.credentials.is_empty() {
        eprintln!(
            "no credentials declared: declare one with --credential NAME=env:VARIABLE@HOST \
             (or DOCSHELF_CREDENTIALS) where docshelf serves"
        );
    }
    for CredentialInfo {
        name,
        sent_to,
        libraries,
    } in &listed.credentials
    {
        let libraries = if libraries.is_empty() {
            "every library".to_owned()
        } else {
            libraries.join(" ")
        };
        writeln!(
            out,
            "{name:<24} sent to {}  for {libraries}",
            sent_to.join(" ")
        )?;
    }
    Ok(())
}
