//! Ask: the engine lends [`crate::ask::answer`] its searches and its
//! sessions' history, and nothing else.

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
    pub async fn ask(
        &self,
        ask: Ask,
        emit: &mut (dyn FnMut(AskEvent) + Send),
    ) -> Result<Answer, EngineError> {
        let llm = self.llm()?;
        crate::ask::answer(self, self.sessions.conversations(), llm, ask, emit).await
    }
}

impl Searcher for Engine {
    async fn search(&self, params: SearchParams) -> Result<SearchResponse, EngineError> {
        Engine::search(self, params).await
    }
}
