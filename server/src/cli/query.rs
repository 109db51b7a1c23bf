//! `docshelf search | libraries | get | delete`: the store from a shell.
//!
//! These open the store directly (no server needed); a running server on the
//! same store sees the changes within its `--read-consistency-secs`. With
//! `--server URL` (and `--token`) they ask that server instead, through
//! its REST API and its access check.

use std::io::{IsTerminal, Write};

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use index_core::highlight;
use index_core::search::{Fusion, FusionMethod, Mode, SearchHit, SearchParams};

use super::remote::{encode, Remote, RemoteArgs};
use super::Outcome;
use crate::config::EngineConfig;
use crate::engine::Engine;
use index_core::catalog::{Deleted, Document, LibraryInfo, Target};
use index_core::search::SearchResponse;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,

    /// Only this library (loose names resolve: `NextJS`, `next`).
    #[arg(long, short = 'l')]
    pub library: Option<String>,

    /// Only this version (or `latest`).
    #[arg(long)]
    pub version: Option<String>,

    /// Only files whose path starts with this.
    #[arg(long)]
    pub file_path: Option<String>,

    /// Only sections added or changed since this version of the library
    /// (needs --library).
    #[arg(long, value_name = "VERSION")]
    pub changed_since: Option<String>,

    /// Results to show (1..50; default 10; with --max-tokens, the results
    /// ranked to fill it, default one per 100 tokens).
    #[arg(short)]
    pub k: Option<i64>,

    /// What to search by.
    #[arg(
        long,
        default_value = Mode::default().name(),
        value_parser = PossibleValuesParser::new(Mode::ALL.map(Mode::name))
            .try_map(|name| Mode::parse(&name).ok_or("unknown mode")),
    )]
    pub mode: Mode,

    /// How hybrid search merges its two rankings.
    #[arg(
        long,
        default_value = FusionMethod::default().name(),
        value_parser = PossibleValuesParser::new(Fusion::NAMES)
            .try_map(|name| FusionMethod::parse(&name).ok_or("unknown fusion")),
    )]
    pub fusion: FusionMethod,

    /// Merge this many neighbouring chunks into each hit.
    #[arg(long)]
    pub expand: Option<u32>,

    /// Show raw chunks, several per page, instead of one result per page.
    #[arg(long)]
    pub duplicates: bool,

    /// Size the answer by tokens (o200k_base, 50..100000) instead of -k:
    /// prints the passages an agent would read, best first, within the
    /// budget; -k is then the results ranked to fill it from.
    #[arg(long, value_name = "TOKENS")]
    pub max_tokens: Option<i64>,

    /// Print the full response as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub async fn search(args: SearchArgs) -> anyhow::Result<Outcome> {
    let terms = highlight::query_terms(&args.query);
    let params = SearchParams {
        query: args.query,
        k: args.k,
        library: args.library,
        version: args.version,
        file_path: args.file_path,
        mode: Some(args.mode.name().to_owned()),
        fusion: Some(args.fusion.name().to_owned()),
        expand: args.expand,
        duplicates: Some(args.duplicates),
        max_tokens: args.max_tokens,
        changed_since: args.changed_since,
        ..SearchParams::default()
    };
    let response: SearchResponse = match Remote::named(&args.remote)? {
        Some(remote) => remote.post("api/search", &params).await?,
        None => {
            Engine::open(&args.engine)
                .await?
                .search(&crate::access::local(), params)
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &response)?;
        writeln!(out)?;
    } else if let (Some(context), Some(budget)) = (&response.context, &response.budget) {
        if let Some(notice) = &response.notice {
            eprintln!("{notice}");
        }
        write!(out, "{context}")?;
        eprintln!(
            "{} passages ({} whole sections), {} of {} tokens ({}); {} left out, {} repeated",
            budget.passages,
            budget.sections.len(),
            budget.tokens,
            budget.max_tokens,
            budget.tokenizer,
            budget.left_out,
            budget.repeats.len()
        );
    } else {
        if let Some(notice) = &response.notice {
            eprintln!("{notice}");
        }
        for (i, hit) in response.results.iter().enumerate() {
            print_hit(&mut out, i + 1, hit, &terms)?;
        }
    }
    if response.results.is_empty() {
        eprintln!("no results");
        return Ok(Outcome::NothingFound);
    }
    Ok(Outcome::Done)
}

fn print_hit(
    out: &mut impl Write,
    rank: usize,
    hit: &SearchHit,
    terms: &[String],
) -> std::io::Result<()> {
    let mut source = format!("{} {} {}", hit.library, hit.version, hit.file_path);
    if !hit.heading_path.is_empty() {
        source.push_str(&format!(" › {}", hit.heading_path));
    }
    if let Some(page) = hit.page {
        source.push_str(&format!(" (page {page})"));
    }
    let mut parts = Vec::new();
    if let Some(d) = hit.parts.dense {
        parts.push(format!("dense {d:.3}"));
    }
    if let Some(k) = hit.parts.keyword {
        parts.push(format!("keyword {k:.2}"));
    }
    writeln!(out, "{rank:>2}. {source}")?;
    writeln!(out, "    score {:.3} ({})", hit.score, parts.join(", "))?;
    let text = hit.expanded.as_ref().map_or_else(
        || highlight::plain_snippet(&hit.text, terms, highlight::SNIPPET_CHARS),
        |e| e.text.clone(),
    );
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        writeln!(out, "    {line}")?;
    }
    for section in &hit.sections {
        let heading = match section.heading_path.as_str() {
            "" => String::new(),
            h => format!(" › {h}"),
        };
        writeln!(
            out,
            "    also{heading} (chunk {}, score {:.3})",
            section.chunk_index, section.score
        )?;
    }
    writeln!(out)
}

#[derive(Debug, Args)]
pub struct LibrariesArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub async fn libraries(args: LibrariesArgs) -> anyhow::Result<()> {
    let libraries: Vec<LibraryInfo> = match Remote::named(&args.remote)? {
        Some(remote) => remote.get("api/libraries").await?,
        None => {
            Engine::open(&args.engine)
                .await?
                .libraries(&crate::access::local())
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &libraries)?;
        writeln!(out)?;
        return Ok(());
    }
    if libraries.is_empty() {
        eprintln!("no libraries yet: add some with `docshelf ingest`");
    }
    for lib in &libraries {
        writeln!(
            out,
            "{}  ({} documents, {} chunks)",
            lib.name, lib.documents, lib.chunks
        )?;
        for v in &lib.versions {
            writeln!(
                out,
                "  {:<12} {:>6} documents {:>8} chunks",
                v.version, v.documents, v.chunks
            )?;
        }
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct GetArgs {
    pub library: String,
    /// A version, or `latest`.
    pub version: String,
    pub file_path: String,

    /// Print as JSON (with each chunk's place in the text).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub async fn get(args: GetArgs) -> anyhow::Result<()> {
    let doc: Document = match Remote::named(&args.remote)? {
        Some(remote) => {
            let path = format!(
                "api/documents?library={}&version={}&file_path={}",
                encode(&args.library),
                encode(&args.version),
                encode(&args.file_path)
            );
            remote.get(&path).await?
        }
        None => {
            Engine::open(&args.engine)
                .await?
                .document(
                    &crate::access::local(),
                    &args.library,
                    &args.version,
                    &args.file_path,
                )
                .await?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &doc)?;
    } else {
        out.write_all(doc.text.as_bytes())?;
    }
    writeln!(out)?;
    Ok(())
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    pub library: String,
    /// Only this version.
    pub version: Option<String>,
    /// Only this document of the version.
    pub file_path: Option<String>,

    /// Do not ask for confirmation (required when not on a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub async fn delete(args: DeleteArgs) -> anyhow::Result<()> {
    let target = Target::from_parts(
        &args.library,
        args.version.as_deref(),
        args.file_path.as_deref(),
    );
    let what = target.to_string();
    if !args.yes {
        anyhow::ensure!(
            std::io::stdin().is_terminal(),
            "refusing to delete {what} without --yes"
        );
        eprint!("delete {what}? [y/N] ");
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .context("cannot read the answer")?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            anyhow::bail!("not deleted");
        }
    }
    let deleted: Deleted = match Remote::named(&args.remote)? {
        Some(remote) => {
            let path = match target {
                Target::Library(l) => format!("api/libraries/{}", encode(l)),
                Target::Version(l, v) => {
                    format!("api/libraries/{}/versions/{}", encode(l), encode(v))
                }
                Target::Document(l, v, p) => format!(
                    "api/documents?library={}&version={}&file_path={}",
                    encode(l),
                    encode(v),
                    encode(p)
                ),
            };
            remote.delete(&path).await?
        }
        None => {
            Engine::open(&args.engine)
                .await?
                .delete(&crate::access::local(), target)
                .await?
        }
    };
    eprintln!(
        "deleted {what}: {} document(s), {} chunk(s)",
        deleted.documents, deleted.chunks
    );
    Ok(())
}
