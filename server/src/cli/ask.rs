//! `docshelf ask`: a question answered from the store by a language model,
//! streamed to the terminal, with its sources after it.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use index_core::ask::{AskEvent, AskParams, Source};

use crate::config::EngineConfig;
use crate::engine::{Engine, EngineError};
use crate::llm::{Llm, LlmConfig};

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question.
    pub question: String,

    /// Only this library (loose names resolve).
    #[arg(long, short = 'l')]
    pub library: Option<String>,

    /// Only this version (or `latest`).
    #[arg(long)]
    pub version: Option<String>,

    /// Print the answer and its sources as JSON when done, instead of streaming text.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub llm: LlmConfig,

    #[command(flatten)]
    pub engine: EngineConfig,
}

pub async fn ask(args: AskArgs) -> anyhow::Result<()> {
    let llm = Llm::from_config(&args.llm)
        .map_err(EngineError::Llm)?
        .ok_or(EngineError::Llm(crate::llm::LlmError::NotConfigured))?;
    let engine = Engine::open(&args.engine).await?.with_llm(Some(llm));
    let ask = AskParams {
        question: args.question,
        library: args.library,
        version: args.version,
        ..AskParams::default()
    }
    .validate()
    .map_err(EngineError::from)?;
    let json = args.json;
    let mut all_sources: Vec<Source> = Vec::new();
    let mut emit = |event: AskEvent| {
        let mut out = std::io::stdout().lock();
        match event {
            AskEvent::Sources(found) => all_sources.extend(found.sources),
            AskEvent::Search(more) => {
                if !json {
                    eprintln!("(searching again: {:?})", more.query);
                }
                all_sources.extend(more.sources);
            }
            AskEvent::Token(token) if !json => {
                let _ = write!(out, "{}", token.text);
                let _ = out.flush();
            }
            _ => {}
        }
    };
    let answer = engine.ask(&crate::access::local(), ask, &mut emit).await?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &answer).context("cannot write the answer")?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out)?;
    let (heading, listed) = if answer.cited.is_empty() {
        ("Sources searched (none cited):", &all_sources)
    } else {
        ("Sources:", &answer.cited)
    };
    writeln!(out, "\n{heading}")?;
    for source in listed {
        let mut line = format!(
            "[{}] {} {} {}",
            source.n, source.library, source.version, source.file_path
        );
        if !source.heading_path.is_empty() {
            line.push_str(&format!(" › {}", source.heading_path));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
