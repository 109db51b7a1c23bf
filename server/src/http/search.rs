//! `POST /api/search` and its streaming twin `POST /api/search/stream`.

use std::convert::Infallible;

use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::Json;
use futures::Stream;
use index_core::search::{SearchHit, SearchParams, SearchResponse};
use serde::Serialize;

use super::error::{ApiError, ApiJson};
use super::openapi::ErrorBody;
use super::AppState;
use crate::engine::EngineError;
use index_core::search::Stage;
use index_core::stream::SearchEvent;

/// Searches the stored documents.
#[utoipa::path(
    post,
    path = "/search",
    tag = "search",
    request_body = SearchParams,
    responses(
        (status = 200, description = "The results, best first", body = SearchResponse),
        (status = 400, description = "Bad input (empty query, k out of range, unknown mode)", body = ErrorBody),
        (status = 404, description = "Unknown library or version; the message lists what exists", body = ErrorBody),
        (status = 503, description = "The embedding model is not available", body = ErrorBody),
    )
)]
pub async fn search(
    State(state): State<AppState>,
    ApiJson(params): ApiJson<SearchParams>,
) -> Result<Json<SearchResponse>, ApiError> {
    Ok(Json(state.engine.search(params).await?))
}

/// The `error` event: what a non-streaming request would have answered.
#[derive(Serialize)]
pub(super) struct StreamError {
    #[serde(flatten)]
    pub body: ErrorBody,
    pub status: u16,
}

/// Hits of one stage, as streamed.
#[derive(Serialize)]
struct StageEvent<'a> {
    stage: Stage,
    results: &'a [SearchHit],
}

/// Searches, streaming results as server-sent events as each stage has
/// them: `keyword` (the keyword leg's hits, before the slower dense leg is
/// in), `fused` (the answer), `expanded` (with neighbours, when `expand` is
/// set), then `done` with the whole response, or `error` with the error
/// body and its HTTP status (`{"code","error","status"}`).
#[utoipa::path(
    post,
    path = "/search/stream",
    tag = "search",
    request_body = SearchParams,
    responses(
        (status = 200, description = "Server-sent events: keyword, fused, expanded, then done or error", content_type = "text/event-stream"),
        (status = 400, description = "Bad input", body = ErrorBody),
    )
)]
pub async fn search_stream(
    State(state): State<AppState>,
    ApiJson(params): ApiJson<SearchParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Refuse bad requests with a status before the stream starts; the
    // engine takes the checked search as it is.
    let search = params.validate().map_err(EngineError::from)?;
    let engine = state.engine.clone();
    Ok(super::events::stream(move |tx| async move {
        let stages = tx.clone();
        let mut on_stage = move |stage: Stage, results: &[SearchHit]| {
            if let Ok(event) = Event::default()
                .event(SearchEvent::Stage(stage).name())
                .json_data(StageEvent { stage, results })
            {
                // A client that went away just stops receiving.
                let _ = stages.send(event);
            }
        };
        let event = match engine.search_staged(search, &mut on_stage).await {
            Ok(response) => Event::default()
                .event(SearchEvent::Done.name())
                .json_data(&response),
            Err(err) => {
                let body = err.body();
                Event::default()
                    .event(SearchEvent::Error.name())
                    .json_data(StreamError {
                        status: body.code.http_status(),
                        body,
                    })
            }
        };
        if let Ok(event) = event {
            let _ = tx.send(event);
        }
    }))
}
