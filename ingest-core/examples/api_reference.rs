//! Prints the API reference docshelf reads from a package archive, to see
//! what a package's `api/` documents will hold before adding it:
//!
//! `cargo run -p ingest-core --example api_reference -- pypi click 8.1.7 click-8.1.7.tar.gz [OUT_DIR]`
//!
//! With OUT_DIR, each page is written there under its path; else a summary
//! of the pages is printed.

use std::process::ExitCode;

use ingest_core::api_reference;
use ingest_core::extract::{ArchiveLimits, Unmetered};
use ingest_core::package::Registry;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [registry, name, version, file, rest @ ..] = args.as_slice() else {
        eprintln!("usage: api_reference pypi|npm NAME VERSION ARCHIVE [OUT_DIR]");
        return ExitCode::FAILURE;
    };
    let registry = match registry.as_str() {
        "pypi" => Registry::PyPi,
        "npm" => Registry::Npm,
        other => {
            eprintln!("no API reference is read for {other} packages");
            return ExitCode::FAILURE;
        }
    };
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("{file}: {err}");
            return ExitCode::FAILURE;
        }
    };
    let started = std::time::Instant::now();
    let read = api_reference::read(
        registry,
        name,
        version,
        file,
        &bytes,
        &ArchiveLimits::default(),
        &mut Unmetered,
    );
    let reference = match read {
        Ok(Some(reference)) => reference,
        Ok(None) => {
            println!("{file}: no API reference (no code declares one)");
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!("{file}: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{file}: {} pages, {} symbols from {} {} in {:.2} s",
        reference.documents.len(),
        reference.symbols,
        reference.files,
        reference.read_from,
        started.elapsed().as_secs_f64()
    );
    for doc in &reference.documents {
        match rest.first() {
            Some(out) => {
                let path = std::path::Path::new(out).join(&doc.path);
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                if let Err(err) = std::fs::write(&path, &doc.markdown) {
                    eprintln!("{}: {err}", path.display());
                    return ExitCode::FAILURE;
                }
            }
            None => println!("  {} ({} bytes)", doc.path, doc.markdown.len()),
        }
    }
    ExitCode::SUCCESS
}
