//! `docshelf ingest`: files, folders and archives into a library version,
//! or a site or package fetched from where it lives, with the job's
//! progress on the terminal.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use index_core::format::Format;
use index_core::job::{FileState, Upload};
use index_core::validate;

use crate::config::EngineConfig;
use crate::engine::Engine;

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Library to add the documents to (e.g. `react`).
    #[arg(long)]
    pub library: String,

    /// Version of the library (e.g. `18.2`); a package's own version by
    /// default.
    #[arg(long)]
    pub version: Option<String>,

    /// Files, folders (read recursively) and archives; or one site to
    /// crawl (`https://…`), Git repository (`git+https://…`, `…/name.git`,
    /// `https://github.com/owner/name`) or package (`pypi:NAME[==VER]`,
    /// `npm:NAME[@VER]`, `crates:NAME[@VER]`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    /// A crawl takes at most this many pages (default 1,000).
    #[arg(long)]
    pub max_pages: Option<usize>,

    /// A crawl follows links at most this deep (default 10).
    #[arg(long)]
    pub max_depth: Option<usize>,

    /// A crawl takes only URLs whose path matches one of these globs.
    #[arg(long)]
    pub include: Vec<String>,

    /// A crawl leaves out URLs whose path matches one of these globs.
    #[arg(long)]
    pub exclude: Vec<String>,

    /// Which links a crawl follows: prefix (default), origin or domain.
    #[arg(long, value_parser = ["prefix", "origin", "domain"])]
    pub scope: Option<String>,

    /// Read the site's llms-full.txt / llms.txt where it offers one.
    #[arg(long)]
    pub llms_txt: bool,

    /// A Git repository's tag, branch or commit (default: its default branch).
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,

    /// A Git repository's docs folder (default: found; docs/, doc/, website/docs/, …).
    #[arg(long)]
    pub docs_path: Option<String>,

    /// A private repository's or site's credential, by the name it was
    /// declared with (`--credential NAME=env:VARIABLE@HOST`, or
    /// DOCSHELF_CREDENTIALS). For a site, its secret is a header
    /// (`Cookie: …`) or a bearer token.
    #[arg(long = "use-credential", value_name = "NAME")]
    pub use_credential: Option<String>,

    /// Follow releases: a Git repository's tags, or a package's registry
    /// releases, matching PATTERN (`v*`, `2.*`) become versions, newest
    /// first; give no --ref, --version or package release.
    #[arg(long, value_name = "PATTERN")]
    pub track: Option<String>,

    /// With --track: how many of the newest releases to keep (default 3).
    #[arg(long, requires = "track")]
    pub keep: Option<usize>,

    /// A package's docs from: repo (its Git repository at the release's
    /// tag), site (the documentation site its metadata names; docs.rs for
    /// a crate) or package (its archive); by default the repository when
    /// its tag is found, else the site when it answers, else the archive.
    #[arg(long, value_parser = ["repo", "site", "package"])]
    pub from: Option<String>,

    #[command(flatten)]
    pub engine: EngineConfig,
}

/// `docshelf ingest`: runs one upload job, printing each file as it finishes.
pub(super) async fn ingest(args: IngestArgs) -> anyhow::Result<()> {
    if let [one] = args.paths.as_slice() {
        let raw = one.to_string_lossy();
        match crate::source::Origin::parse(&raw) {
            Ok(_) => return ingest_source(&args, &raw).await,
            // Written as a source (`pypi:…`, `https://…`) and no file of
            // that name: the source's own reason, as the REST API gives it,
            // not a complaint about files.
            Err(err) if looks_like_source(&raw) && !one.exists() => {
                return Err(crate::engine::EngineError::from(err).into());
            }
            Err(_) => {}
        }
    }
    let library = validate::library(&args.library)?;
    let version = validate::version(
        args.version
            .as_deref()
            .context("--version is needed for files")?,
    )?;
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

    ended(&status)
}

/// Whether `raw` is written as a source rather than a path: a registry
/// prefix or an http(s) scheme.
fn looks_like_source(raw: &str) -> bool {
    let lower = raw.trim().to_ascii_lowercase();
    ["pypi:", "npm:", "crates:", "http://", "https://", "git+"]
        .iter()
        .any(|prefix| lower.starts_with(prefix))
}

/// Says how a job ended; an error if anything failed.
fn ended(status: &index_core::job::JobStatus) -> anyhow::Result<()> {
    let (stored, failed) = status.tally();
    let unchanged = status
        .files
        .iter()
        .filter(|f| f.state == FileState::Unchanged)
        .count();
    for note in &status.notes {
        eprintln!("note: {note}");
    }
    eprintln!(
        "{}: {stored} stored, {unchanged} unchanged, {failed} failed",
        status.state.name()
    );
    if let Some(error) = &status.error {
        anyhow::bail!(error.clone());
    }
    if failed > 0 {
        anyhow::bail!("{failed} file(s) failed");
    }
    Ok(())
}

/// `docshelf ingest URL` / `docshelf ingest pypi:NAME`: one source's
/// fetch, run here.
async fn ingest_source(args: &IngestArgs, url: &str) -> anyhow::Result<()> {
    let scope = match args.scope.as_deref() {
        Some("origin") => Some(index_core::source::CrawlScope::Origin),
        Some("domain") => Some(index_core::source::CrawlScope::Domain),
        Some(_) => Some(index_core::source::CrawlScope::Prefix),
        None => None,
    };
    let request = index_core::source::SourceRequest {
        url: url.to_owned(),
        library: args.library.clone(),
        version: args.version.clone(),
        max_pages: args.max_pages,
        max_depth: args.max_depth,
        include: args.include.clone(),
        exclude: args.exclude.clone(),
        scope,
        llms_txt: args.llms_txt,
        git_ref: args.git_ref.clone(),
        docs_path: args.docs_path.clone(),
        credential: args.use_credential.clone(),
        track: args.track.clone(),
        keep: args.keep,
        from: args.from.as_deref().and_then(|name| {
            index_core::source::DocsFrom::ALL
                .into_iter()
                .find(|f| f.name() == name)
        }),
    };
    let engine = Engine::open(&args.engine).await?;
    eprintln!("fetching {url} into {}", args.library);
    let mut printer = None;
    let status = engine
        .ingest_source(request, |rx| {
            printer = Some(tokio::spawn(print_progress(rx)));
        })
        .await?;
    if let Some(printer) = printer {
        printer.await.context("the progress printer failed")?;
    }
    ended(&status)
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
            // Each file's staging and its end, once each: a file is
            // staged as it is embedded, stored when the job publishes.
            let worth_a_line = f.state.is_final() || matches!(f.state, FileState::Staged { .. });
            if worth_a_line && printed.insert((f.file_path.clone(), f.state.name())) {
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
