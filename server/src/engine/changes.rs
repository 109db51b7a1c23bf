//! What changed between two versions of a library: the stored documents
//! of both put back together and compared section by section
//! ([`ingest_core::compare`]), the answer cut to a token budget.

use std::collections::BTreeMap;

use index_core::access::Caller;
use index_core::changes::{ChangeTotals, ChangesRequest, VersionChanges};
use index_core::document::{reassemble, Piece};
use ingest_core::compare::{compare, Doc};

use super::{Engine, EngineError};
use crate::search::tokens;
use crate::store::{StoreError, StoredChunk};

/// One version's document, put back together.
struct Whole {
    path: String,
    title: Option<String>,
    text: String,
}

impl Engine {
    /// What changed in `library` from `request.from` to `request.to`
    /// (either may be `latest`): documents changed, added, removed and
    /// moved, and each changed one's sections, within `max_tokens` when
    /// given. Computed from the stored chunks alone: nothing is fetched.
    #[tracing::instrument(skip_all, fields(caller = %caller.name, library, from = %request.from, to = %request.to))]
    pub async fn compare_versions(
        &self,
        caller: &Caller,
        library: &str,
        request: &ChangesRequest,
    ) -> Result<VersionChanges, EngineError> {
        request.check(library)?;
        let count = match request.max_tokens {
            Some(_) => Some(tokens::counter().map_err(|e| EngineError::NoModel(e.to_owned()))?),
            None => None,
        };
        let from = self.version_of(caller, library, &request.from).await?;
        let to = self.version_of(caller, library, &request.to).await?;
        let prefix = request.file_path.as_deref().filter(|p| !p.is_empty());
        let (before, after) = tokio::try_join!(
            self.store.version_chunks(library, &from, prefix),
            self.store.version_chunks(library, &to, prefix),
        )?;
        let (library, max_tokens) = (library.to_owned(), request.max_tokens);
        // Putting documents together and diffing them holds a CPU: off
        // the workers that serve requests.
        let changes = tokio::task::spawn_blocking(move || {
            let (before, after) = (documents(&before), documents(&after));
            let (mut documents, unchanged) = compare(&docs(&before), &docs(&after));
            let totals = ChangeTotals::of(&documents, unchanged);
            let (cut, tokens) = match (max_tokens, count) {
                (Some(max), Some(count)) => {
                    let (cut, used) = fit(&mut documents, max, count);
                    (cut, Some(used))
                }
                _ => (false, None),
            };
            VersionChanges {
                library,
                from,
                to,
                documents,
                totals,
                cut,
                tokens,
            }
        })
        .await
        .map_err(|e| StoreError::TaskStopped(format!("comparing versions: {e}")))?;
        Ok(changes)
    }
}

/// A version's chunks as whole documents, by path.
fn documents(chunks: &[StoredChunk]) -> Vec<Whole> {
    let mut by_path: BTreeMap<&str, Vec<&StoredChunk>> = BTreeMap::new();
    for chunk in chunks {
        by_path.entry(&chunk.file_path).or_default().push(chunk);
    }
    by_path
        .into_iter()
        .map(|(path, chunks)| {
            let pieces: Vec<Piece> = chunks.iter().map(|c| c.piece()).collect();
            Whole {
                path: path.to_owned(),
                title: chunks.iter().find_map(|c| c.title.clone()),
                text: reassemble(pieces).text,
            }
        })
        .collect()
}

fn docs(wholes: &[Whole]) -> Vec<Doc<'_>> {
    wholes
        .iter()
        .map(|w| Doc {
            path: &w.path,
            title: w.title.as_deref(),
            text: &w.text,
        })
        .collect()
}

/// Keeps the documents' sections, in order, while their text fits
/// `max_tokens`; a document past the budget keeps its entry (path and
/// kind, a few tokens) while those fit, its sections counted as left out.
/// Whether anything was left out, and the tokens kept.
fn fit(
    documents: &mut Vec<index_core::changes::DocumentChange>,
    max_tokens: usize,
    count: impl Fn(&str) -> usize,
) -> (bool, usize) {
    let mut used = 0;
    let mut cut = false;
    let mut kept_documents = 0;
    for document in documents.iter_mut() {
        let entry = count(&document.file_path) + 4;
        if used + entry > max_tokens {
            cut = true;
            break;
        }
        used += entry;
        kept_documents += 1;
        let mut kept = 0;
        for section in &document.sections {
            let body = section.diff.as_deref().or(section.text.as_deref()).unwrap_or("");
            let cost = count(&section.heading_path) + count(body) + 4;
            if cut || used + cost > max_tokens {
                cut = true;
                break;
            }
            used += cost;
            kept += 1;
        }
        document.sections_left_out = document.sections.len() - kept;
        document.sections.truncate(kept);
    }
    documents.truncate(kept_documents);
    (cut, used)
}
