//! Ask: the engine lends [`crate::ask::answer`] its searches and its
//! sessions' history, and nothing else.

use index_core::access::Caller;
use index_core::ask::{Answer, Ask, AskEvent};
use index_core::search::{SearchParams, SearchResponse};

use super::{Engine, EngineError};
use crate::ask::Searcher;
use crate::llm::{Llm, LlmError};

impl Engine {
    /// Ask's model, or why Ask is off.
    pub fn llm(&self) -> Result<&Llm, EngineError> {
        self.llm
            .as_ref()
            .ok_or(EngineError::Llm(LlmError::NotConfigured))
    }

    /// Answers a question from the documents (see [`crate::ask`]), sending
    /// sources and text through `emit` as they come.
    ///
    /// Its searches run as the caller's, so its sources come only from
    /// the libraries the caller may read, and the history it is given is
    /// the caller's own in that session.
    pub async fn ask(
        &self,
        caller: &Caller,
        ask: Ask,
        emit: &mut (dyn FnMut(AskEvent) + Send),
    ) -> Result<Answer, EngineError> {
        let llm = self.llm()?;
        let searcher = AsCaller {
            engine: self,
            caller,
        };
        // The caller's conversation only: the session id alone is a name
        // any client can bring (see `engine::sessions`).
        let history = self.sessions.conversations().of(caller);
        crate::ask::answer(&searcher, &history, llm, ask, emit).await
    }
}

/// The engine searching as one caller.
struct AsCaller<'a> {
    engine: &'a Engine,
    caller: &'a Caller,
}

impl Searcher for AsCaller<'_> {
    async fn search(&self, params: SearchParams) -> Result<SearchResponse, EngineError> {
        self.engine.search(self.caller, params).await
    }
}
