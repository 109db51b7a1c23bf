//! Documents read by agents: whole or one section (by the heading path a
//! search result gives), within a token budget ([`budget::fit`]: cut where
//! a block starts).

use index_core::access::Caller;
use index_core::budget;
use index_core::reading::{DocumentPart, DocumentRead};
use ingest_core::chunk::block_starts;
use ingest_core::sections;

use super::{Engine, EngineError};
use crate::search::tokens;
use crate::store::StoreError;

impl Engine {
    /// Reads the document, or the section, `read` names, within its budget
    /// when it has one. A section not found is refused with the document's
    /// heading paths, so the agent can pick one.
    #[tracing::instrument(skip_all, fields(caller = %caller.name, library = %read.library, file_path = %read.file_path))]
    pub async fn read_document(
        &self,
        caller: &Caller,
        read: &DocumentRead,
    ) -> Result<DocumentPart, EngineError> {
        let count = match read.max_tokens {
            Some(_) => Some(tokens::counter().map_err(|e| EngineError::NoModel(e.to_owned()))?),
            None => None,
        };
        let doc = self
            .document(caller, &read.library, &read.version, &read.file_path)
            .await?;
        let (section, max_tokens) = (read.section.clone(), read.max_tokens);
        // Finding a section and counting a long document's prefixes holds
        // a CPU: off the workers that serve requests.
        tokio::task::spawn_blocking(move || {
            let (heading_path, text) = match section {
                None => (None, doc.text.as_str()),
                Some(wanted) => {
                    let found = sections::find(&doc.text, &wanted).ok_or_else(|| {
                        EngineError::UnknownSection {
                            file_path: doc.file_path.clone(),
                            section: wanted.clone(),
                            sections: sections::outline(&doc.text),
                        }
                    })?;
                    (Some(found.heading_path), &doc.text[found.start..found.end])
                }
            };
            let (kept, tokens) = match (max_tokens, count) {
                (Some(max), Some(count)) => {
                    let (kept, used) = budget::fit(text, &block_starts(text), max, count);
                    (kept, Some(used))
                }
                _ => (text, None),
            };
            Ok(DocumentPart {
                cut: kept.len() < text.len(),
                text: kept.to_owned(),
                library: doc.library,
                version: doc.version,
                file_path: doc.file_path,
                title: doc.title,
                section: heading_path,
                tokens,
                max_tokens,
            })
        })
        .await
        .map_err(|e| StoreError::TaskStopped(format!("reading a document: {e}")))?
    }
}
