//! A package's API reference as pages of its source: read from the code of
//! the release's archive ([`ingest_core::api_reference`]) beside the
//! documentation its route found, each page under `api/`. Pages are met
//! as a repository's files are: a page whose text is unchanged since the
//! last fetch is kept without being read again, and a refresh of the same
//! archive keeps them all.

use std::time::Duration;

use index_core::format::Format;
use ingest_core::api_reference::{self, ApiReference};
use ingest_core::ids::content_hash;
use ingest_core::package::Registry;

use super::crawl::{Found, PageRecord};
use super::package_route::PackageRoute;
use super::registry::Release;
use super::tally::Tally;
use super::SourceState;
use crate::ingest::pipeline::JobRun;
use crate::ingest::{JobHandle, MemoryBudget};

/// How long reading the code waits for memory to be free.
const MEMORY_WAIT: Duration = Duration::from_secs(60);

/// What reading a release's API reference gave.
pub(super) enum Reference {
    Read(ApiReference),
    /// The release has none (a crate, or no code to read it from): pages
    /// an earlier fetch stored are gone with it.
    None,
    /// Reading it failed (no memory in time, a reader error or crash): the
    /// pages an earlier fetch stored are kept, as a page that fails to
    /// read again is.
    Failed,
}

/// The reference read from `bytes`, the release's archive, with the reason
/// in the tally's notes when there is none (a registry without one says
/// nothing).
pub(super) async fn read(
    tally: &mut Tally,
    memory: &MemoryBudget,
    release: &Release,
    route: &PackageRoute,
    bytes: &[u8],
) -> Reference {
    let notes = &mut tally.notes;
    if route.registry == Registry::Crates {
        return Reference::None;
    }
    let limits = route.limits;
    let needed = ingest_core::extract::memory_estimate(&release.file_name, bytes, &limits);
    let mut reservation = match memory.reserve(needed, MEMORY_WAIT).await {
        Ok(reservation) => reservation,
        Err(err) => {
            notes.push(format!(
                "the API reference was not read from the code: {err}"
            ));
            return Reference::Failed;
        }
    };
    let (registry, name, version, file) = (
        route.registry,
        route.name.clone(),
        release.version.clone(),
        release.file_name.clone(),
    );
    let bytes = bytes.to_vec();
    let span = tracing::info_span!("api_reference", package = %name, version = %version);
    let read = tokio::task::spawn_blocking(move || {
        let _entered = span.enter();
        api_reference::read(
            registry,
            &name,
            &version,
            &file,
            &bytes,
            &limits,
            &mut reservation,
        )
    })
    .await;
    match read {
        Ok(Ok(Some(reference))) => Reference::Read(reference),
        Ok(Ok(None)) => {
            let code = match registry {
                Registry::Npm => "TypeScript declarations (.d.ts) or documented JavaScript",
                _ => "Python modules",
            };
            notes.push(format!(
                "no API reference: the {} archive holds no {code} to read it from",
                release.registry
            ));
            Reference::None
        }
        Ok(Err(err)) => {
            notes.push(format!(
                "the API reference was not read from the code: {err}"
            ));
            Reference::Failed
        }
        Err(err) => {
            tracing::error!(%err, "reading a package's API reference crashed");
            notes.push("the API reference was not read from the code: the reader crashed".into());
            Reference::Failed
        }
    }
}

/// Meets the reference's pages as pages of the source, after the
/// documentation's: new or changed ones are read, the rest kept.
pub(super) async fn meet(
    tally: &mut Tally,
    run: &mut JobRun<'_, '_>,
    job: &JobHandle,
    reference: Reference,
    previous: &SourceState,
) {
    let reference = match reference {
        Reference::Read(reference) => reference,
        Reference::None => return,
        Reference::Failed => {
            for (path, record) in previous
                .pages
                .iter()
                .filter(|(p, _)| p.starts_with(api_reference::PREFIX))
            {
                tally.keep.insert(path.clone());
                tally.pages.insert(path.clone(), record.clone());
            }
            return;
        }
    };
    let mut clashes = Vec::new();
    let pages = reference.documents.len();
    let listed = job.status().files.len();
    job.expect(listed + pages);
    for document in reference.documents {
        // A documentation file already stored under the same path wins:
        // it is what the project wrote.
        if tally.pages.contains_key(&document.path) {
            clashes.push(document.path);
            continue;
        }
        let bytes = document.markdown.into_bytes();
        let record = PageRecord {
            hash: content_hash(&bytes),
            ..PageRecord::default()
        };
        let unchanged = previous
            .pages
            .get(&document.path)
            .is_some_and(|r| r.hash == record.hash);
        let found = if unchanged {
            Found::Unchanged {
                address: document.path,
                record,
            }
        } else {
            Found::Page {
                address: document.path,
                format: Format::Markdown,
                bytes,
                record,
            }
        };
        tally.found(run, job, previous, found).await;
    }
    let mut note = format!(
        "API reference read from the code: {pages} pages under api/, {} symbols from {} {}",
        reference.symbols, reference.files, reference.read_from
    );
    if reference.past_limit > 0 {
        note.push_str(&format!(
            " ({} more files past the archive's entry limit not read)",
            reference.past_limit
        ));
    }
    if !clashes.is_empty() {
        note.push_str(&format!(
            "; {} pages left out because a documentation file has the same path ({})",
            clashes.len(),
            clashes
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    tally.notes.push(note);
}
