//! The `docshelf` binary: parses the command line and hands off to the
//! library crate, where every command lives.

use std::process::ExitCode;

use clap::Parser;
use docshelf_server::cli::{Cli, Outcome};

fn main() -> ExitCode {
    // Before any thread exists: the environment is only written here.
    docshelf_server::embed::device::quiet_gpu_probe();
    let cli = Cli::parse();
    docshelf_server::telemetry::init(cli.verbose);
    match docshelf_server::cli::run(cli) {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::NothingFound) => ExitCode::from(1),
        Err(err) => {
            // `{:#}` prints the whole context chain on one line, which is what
            // a shell user wants to read.
            eprintln!("error: {err:#}");
            ExitCode::from(docshelf_server::cli::exit_status(&err))
        }
    }
}
