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
        (status = 400, description = "Bad input (empty query, k out of range, unknown mode, a name over its limits)", body = ErrorBody),
        (status = 404, description = "Unknown library or version; the message lists what exists", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 503, description = "Busy, out of time, or the embedding model is not available", body = ErrorBody),
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
/// body and its HTTP status (`{"code","error","status"}`) when the search
/// fails after its first stage. A search refused before any stage (bad
/// input, an unknown library or version, busy) is answered with its status
/// and a JSON error, as `POST /api/search` would.
#[utoipa::path(
    post,
    path = "/search/stream",
    tag = "search",
    request_body = SearchParams,
    responses(
        (status = 200, description = "Server-sent events: keyword, fused, expanded, then done or error", content_type = "text/event-stream"),
        (status = 400, description = "Bad input", body = ErrorBody),
        (status = 404, description = "Unknown library or version; the message lists what exists", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 503, description = "Busy, out of time, or the embedding model is not available", body = ErrorBody),
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
    let stream = super::events::checked_stream(move |tx| async move {
        let stages = tx.clone();
        let mut started = false;
        let mut on_stage = |stage: Stage, results: &[SearchHit]| {
            if let Ok(event) = Event::default()
                .event(SearchEvent::Stage(stage).name())
                .json_data(StageEvent { stage, results })
            {
                started = true;
                // A client that went away just stops receiving.
                let _ = stages.send(Ok(event));
            }
        };
        let result = engine.search_staged(search, &mut on_stage).await;
        let sent = match result {
            Ok(response) => Event::default()
                .event(SearchEvent::Done.name())
                .json_data(&response)
                .map_err(|_| unencodable_event()),
            // Nothing streamed yet: the request itself is refused.
            Err(err) if !started => Err(err.body()),
            Err(err) => {
                let body = err.body();
                Event::default()
                    .event(SearchEvent::Error.name())
                    .json_data(StreamError {
                        status: body.code.http_status(),
                        body,
                    })
                    .map_err(|_| unencodable_event())
            }
        };
        let _ = tx.send(sent);
    })
    .await?;
    Ok(stream)
}

/// An event that could not be encoded (never expected: the types are
/// plain data); logged under a correlation id.
fn unencodable_event() -> ErrorBody {
    let id = uuid::Uuid::new_v4().to_string();
    tracing::error!(correlation_id = %id, "a search event could not be encoded");
    ErrorBody::internal(id)
}
