//! What changed between two versions of a library: the stored documents
//! of both put back together and compared section by section
//! ([`ingest_core::compare`]), the answer cut to a token budget.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use index_core::access::Caller;
use index_core::changes::{ChangeTotals, ChangesRequest, SectionChangeKind, VersionChanges};
use index_core::document::{reassemble, ChunkSpan, Piece};
use index_core::search::SearchHit;
use ingest_core::compare::{compare, release_notes, Doc};
use ingest_core::sections;
use moka::sync::Cache;

use super::{Engine, EngineError};
use crate::search::tokens;
use crate::store::{StoreError, StoredChunk};

/// One version's document, put back together, with its chunks' places.
struct Whole {
    path: String,
    title: Option<String>,
    text: String,
    spans: Vec<ChunkSpan>,
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
        let (mut changes, _) = self.compared(caller, library, request).await?;
        if let (Some(max), Some(count)) = (request.max_tokens, count) {
            // Counting every section's tokens holds a CPU.
            changes = tokio::task::spawn_blocking(move || {
                let (cut, used) = fit(&mut changes.documents, max, count);
                changes.cut = cut;
                changes.tokens = Some(used);
                changes
            })
            .await
            .map_err(|e| StoreError::TaskStopped(format!("fitting changes to a budget: {e}")))?;
        }
        Ok(changes)
    }

    /// The comparison, whole, and the newer version's documents.
    async fn compared(
        &self,
        caller: &Caller,
        library: &str,
        request: &ChangesRequest,
    ) -> Result<(VersionChanges, Vec<Whole>), EngineError> {
        let from = self.version_of(caller, library, &request.from).await?;
        let to = self.version_of(caller, library, &request.to).await?;
        let prefix = request.file_path.as_deref().filter(|p| !p.is_empty());
        let (before, after) = tokio::try_join!(
            self.store.version_chunks(library, &from, prefix),
            self.store.version_chunks(library, &to, prefix),
        )?;
        let library = library.to_owned();
        // Putting documents together and diffing them holds a CPU: off
        // the workers that serve requests.
        tokio::task::spawn_blocking(move || {
            let (before, after) = (documents(&before), documents(&after));
            let (documents, unchanged) = compare(&docs(&before), &docs(&after));
            let totals = ChangeTotals::of(&documents, unchanged);
            let release_notes = release_notes(after.iter().map(|w| w.path.as_str()));
            let changes = VersionChanges {
                library,
                from,
                to,
                documents,
                totals,
                cut: false,
                tokens: None,
                release_notes,
            };
            (changes, after)
        })
        .await
        .map_err(|e| StoreError::TaskStopped(format!("comparing versions: {e}")).into())
    }
}

/// The chunks of one version in sections added or changed since an older
/// one: what a search with `changed_since` keeps. By chunk, not by a
/// chunk's heading path: a chunk that starts in one section may hold the
/// next, changed, one.
pub struct ChangedSections {
    /// The newer version, the one whose hits are kept.
    version: String,
    /// By file path, the indexes of its chunks in a section added or
    /// changed.
    chunks: HashMap<String, HashSet<u32>>,
}

impl ChangedSections {
    fn new(changes: &VersionChanges, after: &[Whole]) -> Self {
        let by_path: HashMap<&str, &Whole> = after.iter().map(|w| (w.path.as_str(), w)).collect();
        let mut chunks: HashMap<String, HashSet<u32>> = HashMap::new();
        for document in &changes.documents {
            let Some(whole) = by_path.get(document.file_path.as_str()) else {
                continue;
            };
            let wanted: HashSet<&str> = document
                .sections
                .iter()
                .filter(|s| s.change != SectionChangeKind::Removed)
                .map(|s| s.heading_path.as_str())
                .collect();
            let ranges: Vec<(usize, usize)> = sections::own(&whole.text)
                .into_iter()
                .filter(|s| wanted.contains(s.heading_path.as_str()))
                .map(|s| (s.start, s.end))
                .collect();
            for span in &whole.spans {
                if ranges
                    .iter()
                    .any(|&range| holds(range, (span.start, span.end)))
                {
                    chunks
                        .entry(document.file_path.clone())
                        .or_default()
                        .insert(span.chunk_index);
                }
            }
        }
        Self {
            version: changes.to.clone(),
            chunks,
        }
    }

    fn has(&self, file_path: &str, chunk_index: u32) -> bool {
        self.chunks
            .get(file_path)
            .is_some_and(|held| held.contains(&chunk_index))
    }

    /// Keeps the hits of the newer version in a changed section (a page
    /// whose best chunk is elsewhere is kept for its changed sections,
    /// and lists only those), the best `k`.
    pub fn keep_in(&self, hits: &mut Vec<SearchHit>, k: usize) {
        hits.retain_mut(|hit| {
            if hit.version != self.version {
                return false;
            }
            let path = hit.file_path.as_str();
            hit.sections.retain(|s| self.has(path, s.chunk_index));
            self.has(path, hit.chunk_index) || !hit.sections.is_empty()
        });
        hits.truncate(k);
    }
}

/// Whether a section's bytes `section` hold a real part of the chunk at
/// `chunk`: a third of the chunk, or half the section. Chunks overlap
/// their neighbours, so a chunk that only repeats a section's last line
/// is not in it.
fn holds(section: (usize, usize), chunk: (usize, usize)) -> bool {
    let shared = section
        .1
        .min(chunk.1)
        .saturating_sub(section.0.max(chunk.0));
    shared > 0 && (shared * 3 >= chunk.1 - chunk.0 || shared * 2 >= section.1 - section.0)
}

/// Comparisons a `changed_since` search keeps, by (library, older version,
/// newer version, chunk table version): comparing two versions reads both
/// whole, which a search must not pay each time. Any commit moves the
/// table's version, so an entry never outlives what it was read from.
pub(super) type ChangedCache = Cache<(String, String, String, u64), Arc<ChangedSections>>;

/// Comparisons kept for `changed_since` searches.
pub(super) const CHANGED_KEPT: u64 = 32;

impl Engine {
    /// The chunks of `library` at `to` in sections added or changed since
    /// `since`: from the cache while the table is unchanged, else compared
    /// (the caller's right to read both versions checked first, always).
    pub(super) async fn changed_sections(
        &self,
        caller: &Caller,
        library: &str,
        since: &str,
        to: &str,
    ) -> Result<Arc<ChangedSections>, EngineError> {
        let request = ChangesRequest {
            from: since.to_owned(),
            to: to.to_owned(),
            file_path: None,
            max_tokens: None,
        };
        request.check(library)?;
        let from = self.version_of(caller, library, since).await?;
        let to = self.version_of(caller, library, to).await?;
        let key = (
            library.to_owned(),
            from.clone(),
            to.clone(),
            self.store.table_version().await?,
        );
        if let Some(kept) = self.changed.get(&key) {
            return Ok(kept);
        }
        let request = ChangesRequest {
            from,
            to,
            ..request
        };
        let (changes, after) = self.compared(caller, library, &request).await?;
        let changed = Arc::new(ChangedSections::new(&changes, &after));
        self.changed.insert(key, changed.clone());
        Ok(changed)
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
            let whole = reassemble(pieces);
            Whole {
                path: path.to_owned(),
                title: chunks.iter().find_map(|c| c.title.clone()),
                text: whole.text,
                spans: whole.spans,
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
            let body = section
                .diff
                .as_deref()
                .or(section.text.as_deref())
                .unwrap_or("");
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
