//! Documents read by agents: whole or one section (by the heading path a
//! search result gives), within a token budget, cut where a block starts.

use index_core::access::Caller;
use index_core::budget::{self, DocumentPart, MAX_TOKENS, MIN_TOKENS};
use index_core::search::SearchError;
use ingest_core::chunk::block_starts;
use ingest_core::sections;

use super::{Engine, EngineError};
use crate::search::tokens;

impl Engine {
    /// Reads a document, or its section `section`, within `max_tokens`
    /// (o200k_base) when given. A section not found is refused with the
    /// document's heading paths, so the agent can pick one.
    #[tracing::instrument(skip(self, caller), fields(caller = %caller.name))]
    pub async fn read_document(
        &self,
        caller: &Caller,
        library: &str,
        version: &str,
        file_path: &str,
        section: Option<&str>,
        max_tokens: Option<i64>,
    ) -> Result<DocumentPart, EngineError> {
        let max_tokens = match max_tokens {
            None => None,
            Some(n) if (MIN_TOKENS as i64..=MAX_TOKENS as i64).contains(&n) => Some(n as usize),
            Some(_) => return Err(SearchError::BudgetOutOfRange.into()),
        };
        let doc = self.document(caller, library, version, file_path).await?;
        let section = section.map(str::trim).filter(|s| !s.is_empty());
        let (heading_path, text) = match section {
            None => (None, doc.text.as_str()),
            Some(wanted) => {
                let found = sections::find(&doc.text, wanted).ok_or_else(|| {
                    EngineError::UnknownSection {
                        file_path: doc.file_path.clone(),
                        section: wanted.to_owned(),
                        sections: sections::outline(&doc.text),
                    }
                })?;
                (Some(found.heading_path), &doc.text[found.start..found.end])
            }
        };
        let (text, tokens, cut) = match max_tokens {
            None => (text, None, false),
            Some(max) => {
                let count = tokens::counter().map_err(|e| EngineError::NoModel(e.to_owned()))?;
                let (kept, used) = budget::fit(text, &block_starts(text), max, count);
                (kept, Some(used), kept.len() < text.len())
            }
        };
        Ok(DocumentPart {
            library: doc.library.clone(),
            version: doc.version.clone(),
            file_path: doc.file_path.clone(),
            title: doc.title.clone(),
            section: heading_path,
            text: text.to_owned(),
            tokens,
            max_tokens,
            cut,
        })
    }
}
