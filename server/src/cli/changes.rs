//! `docshelf changes LIB FROM TO`: what changed in a library between two
//! versions, on the store here or on a running server (`--server`).

use std::io::Write;

use clap::Args;
use index_core::changes::{ChangesRequest, DocumentChangeKind, SectionChangeKind, VersionChanges};

use super::remote::{encode, Remote, RemoteArgs};
use crate::config::EngineConfig;
use crate::engine::Engine;

#[derive(Debug, Args)]
pub struct ChangesArgs {
    pub library: String,
    /// The older version (or `latest`).
    pub from: String,
    /// The newer version (or `latest`).
    pub to: String,

    /// Only documents whose path starts with this.
    #[arg(long)]
    pub file_path: Option<String>,

    /// The answer's sections within this many tokens (50..100000).
    #[arg(long)]
    pub max_tokens: Option<usize>,

    /// Print as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub(super) async fn changes(args: ChangesArgs) -> anyhow::Result<()> {
    let request = ChangesRequest {
        from: args.from.clone(),
        to: args.to.clone(),
        file_path: args.file_path.clone(),
        max_tokens: args.max_tokens,
    };
    let changes: VersionChanges = match Remote::named(&args.remote)? {
        Some(remote) => {
            let mut path = format!(
                "api/libraries/{}/changes?from={}&to={}",
                encode(&args.library),
                encode(&request.from),
                encode(&request.to)
            );
            if let Some(prefix) = &request.file_path {
                path.push_str(&format!("&file_path={}", encode(prefix)));
            }
            if let Some(max) = request.max_tokens {
                path.push_str(&format!("&max_tokens={max}"));
            }
            remote.get(&path).await?
        }
        None => {
            Engine::open(&args.engine)
                .await?
                .compare_versions(&crate::access::local(), &args.library, &request)
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &changes)?;
        writeln!(out)?;
        return Ok(());
    }
    print(&mut out, &changes)?;
    Ok(())
}

/// The changes as text: a line per document, its sections below it.
fn print(out: &mut impl Write, changes: &VersionChanges) -> std::io::Result<()> {
    let t = &changes.totals;
    writeln!(
        out,
        "{} {} → {}: {} documents changed, {} added, {} removed, {} moved, {} unchanged",
        changes.library,
        changes.from,
        changes.to,
        t.documents_changed,
        t.documents_added,
        t.documents_removed,
        t.documents_moved,
        t.documents_unchanged
    )?;
    if !changes.release_notes.is_empty() {
        writeln!(
            out,
            "release notes in {}: {}",
            changes.to,
            changes.release_notes.join(", ")
        )?;
    }
    for document in &changes.documents {
        let kind = match document.change {
            DocumentChangeKind::Changed => "changed",
            DocumentChangeKind::Added => "added",
            DocumentChangeKind::Removed => "removed",
            DocumentChangeKind::Moved => "moved",
        };
        match &document.previous_path {
            Some(was) => writeln!(out, "\n{kind} {} (was {was})", document.file_path)?,
            None => writeln!(out, "\n{kind} {}", document.file_path)?,
        }
        for section in &document.sections {
            let mark = match section.change {
                SectionChangeKind::Added => '+',
                SectionChangeKind::Removed => '-',
                SectionChangeKind::Changed => '~',
            };
            let heading = if section.heading_path.is_empty() {
                "(before the first heading)"
            } else {
                section.heading_path.as_str()
            };
            match &section.renamed_from {
                Some(was) => writeln!(out, "  {mark} {heading} (was {was})")?,
                None => writeln!(out, "  {mark} {heading}")?,
            }
            if let Some(diff) = &section.diff {
                writeln!(out, "    {diff}")?;
            }
        }
        if document.sections_left_out > 0 {
            writeln!(
                out,
                "  … {} more sections past the budget",
                document.sections_left_out
            )?;
        }
    }
    if changes.cut {
        writeln!(out, "\n(cut to the budget: the totals count everything)")?;
    }
    Ok(())
}
