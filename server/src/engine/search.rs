//! Searches: admission, the session's scope, the search itself and the
//! answer's notices.

use std::time::{Duration, Instant};

use index_core::access::Caller;
use index_core::library::Resolution;
use index_core::phrase;
use index_core::search::{Mode, Search, SearchError, SearchParams, SearchResponse, MAX_K};
use index_core::version::LATEST;

use super::scope::{self, SearchScope};
use super::{Engine, EngineError};
use crate::search::{self, budget, tokens, OnStage, RunError};
use crate::store::StoreError;

/// Searches running at once, at most. Past it a search is refused at once
/// (503 with `Retry-After`) rather than queued: 200 concurrent searches
/// were reported to queue without bound, and a client told "busy" can
/// retry or go elsewhere. 64 searches in flight are already seconds of
/// work on a small machine (docs/benchmarks.md).
pub const MAX_CONCURRENT_SEARCHES: usize = 64;

/// The longest one search may run before it is stopped (503).
pub const SEARCH_BUDGET: Duration = Duration::from_secs(10);

impl Engine {
    /// Searches, with the session's sticky library and loose library names
    /// resolved (see [`Self::search_staged`]).
    ///
    /// The caller sees only the libraries it may read: they are the
    /// search's scope, applied as the legs' filter before anything is
    /// ranked.
    pub async fn search(
        &self,
        caller: &Caller,
        params: SearchParams,
    ) -> Result<SearchResponse, EngineError> {
        self.search_checked(caller, params.validate()?, None).await
    }

    /// Searches, calling `on_stage` with the hits of each stage as soon as
    /// they are ready (the streaming API forwards these).
    ///
    /// The library filter comes from, in order: the request (resolved
    /// loosely, and then sticky for the session), or the session's sticky
    /// library. With neither, every library is searched and, when strong
    /// hits come from several, the answer takes turns between them.
    ///
    /// A search is refused at once when [`MAX_CONCURRENT_SEARCHES`] are
    /// running ([`EngineError::Busy`]) and stopped past its time budget
    /// ([`EngineError::TimedOut`]).
    pub async fn search_staged(
        &self,
        caller: &Caller,
        search: Search,
        on_stage: &mut OnStage<'_>,
    ) -> Result<SearchResponse, EngineError> {
        self.search_checked(caller, search, Some(on_stage)).await
    }

    /// [`Self::search_staged`], with the stages seen only when `on_stage`
    /// is given: a caller that wants just the answer spares the search the
    /// hits of the stages before it.
    async fn search_checked(
        &self,
        caller: &Caller,
        search: Search,
        on_stage: Option<&mut OnStage<'_>>,
    ) -> Result<SearchResponse, EngineError> {
        let Ok(_permit) = self.searches.try_acquire() else {
            return Err(EngineError::Busy(self.search_limit));
        };
        let result = match tokio::time::timeout(
            self.search_budget,
            self.search_admitted(caller, search, on_stage),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(EngineError::TimedOut(self.search_budget.as_secs().max(1))),
        };
        match result {
            // A store that failed or ran out of time may be an object store
            // that is down: then that is the answer, not an internal fault
            // or a slow query.
            Err(
                EngineError::TimedOut(_)
                | EngineError::Store(_)
                | EngineError::Search(RunError::Store(_)),
            ) if self.store.object_store_down().await => Err(EngineError::StoreUnavailable),
            other => other,
        }
    }

    #[tracing::instrument(skip_all, fields(mode = search.mode.name(), caller = %caller.name))]
    async fn search_admitted(
        &self,
        caller: &Caller,
        search: Search,
        on_stage: Option<&mut OnStage<'_>>,
    ) -> Result<SearchResponse, EngineError> {
        let started = Instant::now();
        let session = self
            .open_session(caller, search.session_id.as_deref())
            .await;
        if search.clear_sticky {
            self.sessions.set_sticky(&session.key, None);
        }
        let libraries = self.visible_libraries(caller).await?;
        let restricted = !caller.permissions.reads_everything();
        let resolved = scope::for_search(
            &libraries,
            &search,
            self.sessions.sticky(&session.key),
            restricted,
        )?;
        self.sessions
            .change_sticky(&session.key, resolved.sticky.clone());
        let SearchScope {
            scope,
            library: target,
            version: version_used,
            resolution,
            sticky_applied,
            sticky: _,
        } = resolved;

        // A keyword search never needs the model, nor one by the client's
        // own query vector, so neither loads it.
        let embedder = match search.mode {
            _ if search.embedding.is_some() => Err(String::new()),
            Mode::Keyword => Err(String::new()),
            Mode::Hybrid | Mode::Dense => self.model().await.map_err(str::to_owned),
        };
        // Only what changed since a version: the comparison's sections,
        // from a wider ranking, filtered before anything is built on it.
        let changed = match (&search.changed_since, target.as_deref()) {
            (None, _) => None,
            (Some(_), None) => return Err(SearchError::ChangedSinceNeedsLibrary.into()),
            (Some(since), Some(library)) => {
                let to = version_used.as_deref().unwrap_or(LATEST);
                Some(self.changed_sections(caller, library, since, to).await?)
            }
        };
        let ranked = match changed {
            Some(_) => Search {
                k: MAX_K,
                ..search.clone()
            },
            None => search.clone(),
        };
        let mut outcome = search::run(
            &self.store,
            embedder,
            self.second_stage.as_ref(),
            &ranked,
            &scope,
            target.is_none(),
            on_stage,
        )
        .await?;
        if let Some(changed) = &changed {
            changed.keep_in(&mut outcome.hits, search.k);
        }

        self.metrics.search(search.mode.name(), started.elapsed());
        self.close_session(&session).await;

        let notice = notices(
            resolution.as_ref(),
            sticky_applied.then_some(target.as_deref()).flatten(),
            &outcome.libraries_found,
        );
        let (results, context, budget) = match search.max_tokens {
            None => (outcome.hits, None, None),
            Some(max) => {
                let count = tokens::counter().map_err(|e| EngineError::NoModel(e.to_owned()))?;
                let chunks = budget::sections::read(&self.store, &outcome.hits, max).await?;
                let hits = outcome.hits;
                // Finding a large budget's sections and counting them holds
                // a CPU for a while (docs/benchmarks.md, "Whole sections in
                // budgeted answers"): off the workers that serve requests.
                let filled = tokio::task::spawn_blocking(move || {
                    let sections = budget::sections::of(&hits, &chunks);
                    let hits = hits.into_iter().zip(sections).collect();
                    budget::fill(hits, max, tokens::TOKENIZER, count)
                })
                .await
                .map_err(|e| StoreError::TaskStopped(format!("filling a token budget: {e}")))?;
                (filled.results, Some(filled.context), Some(filled.budget))
            }
        };
        Ok(SearchResponse {
            query: search.query.clone(),
            k: search.k,
            mode: search.mode,
            fusion: search.fusion.method(),
            rrf_k: search.fusion.rrf_k(),
            weights: search.weights.into(),
            total_results: results.len(),
            results,
            library: target,
            version: version_used,
            resolution,
            sticky_library: self
                .sessions
                .sticky(&session.key)
                .filter(|s| Self::may_read(caller, &s.library)),
            session_id: Some(session.key.id().to_owned()),
            sticky_applied,
            libraries_found: outcome.libraries_found,
            notice,
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            context,
            budget,
        })
    }
}

/// What a person should know about how the search was read: a loosely
/// named library resolved, the session's library applied, or hits from
/// several libraries.
fn notices(
    resolution: Option<&Resolution>,
    sticky_library: Option<&str>,
    libraries_found: &[String],
) -> Option<String> {
    let mut notice = Vec::new();
    if let Some(Resolution::Resolved { given, library, .. }) = resolution {
        notice.push(format!("Library \"{given}\" is {library}."));
    }
    if let Some(name) = sticky_library {
        notice.push(format!(
            "Searched {name} only, as in your last search; clear the library to search everything."
        ));
    }
    if libraries_found.len() >= 2 {
        notice.push(format!("Found in {}.", phrase::all_of(libraries_found)));
    }
    (!notice.is_empty()).then(|| notice.join(" "))
}
