//! `POST /api/search` and its streaming twin `POST /api/search/stream`.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use index_core::search::{SearchHit, SearchParams, SearchResponse};
use serde::Serialize;

use super::auth::Who;
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
    Who(caller): Who,
    ApiJson(params): ApiJson<SearchParams>,
) -> Result<SearchJson, ApiError> {
    Ok(SearchJson(state.engine.search(&caller, params).await?))
}

/// A search's answer as its JSON body, the same bytes and content type
/// `Json` would give, but encoded by [`SearchResponse::to_json`] in the
/// optimised domain crate rather than in this unoptimised one.
pub struct SearchJson(SearchResponse);

impl IntoResponse for SearchJson {
    fn into_response(self) -> Response {
        match self.0.to_json() {
            Ok(body) => {
                let mut response = Body::from(body).into_response();
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
            Err(_) => ApiError::from(unencodable("a search answer")).into_response(),
        }
    }
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
    Who(caller): Who,
    ApiJson(params): ApiJson<SearchParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Refuse bad requests with a status before the stream starts; the
    // engine takes the checked search as it is.
    let search = params.validate().map_err(EngineError::from)?;
    let engine = state.engine.clone();
    // A budgeted answer is its context, within the budget: the stages'
    // whole hits would be past it, so only the answer is sent.
    let budgeted = search.max_tokens.is_some();
    let stream = super::events::checked_stream(move |tx| async move {
        let stages = tx.clone();
        let mut started = false;
        let mut on_stage = |stage: Stage, results: &[SearchHit]| {
            if budgeted {
                return;
            }
            if let Ok(event) = Event::default()
                .event(SearchEvent::Stage(stage).name())
                .json_data(StageEvent { stage, results })
            {
                started = true;
                // A client that went away just stops receiving.
                let _ = stages.send(Ok(event));
            }
        };
        let result = engine.search_staged(&caller, search, &mut on_stage).await;
        let sent = match result {
            Ok(response) => Event::default()
                .event(SearchEvent::Done.name())
                .json_data(&response)
                .map_err(|_| unencodable("a search event")),
            // Nothing streamed yet: the request itself is refused.
            Err(err) if !started => Err(err.body()),
            Err(err) => {
                let body = err.body();
                Event::default()
                    .event(SearchEvent::Error.name())
                    .json_data(StreamError {
                        status: body.kind.http_status(),
                        body,
                    })
                    .map_err(|_| unencodable("a search event"))
            }
        };
        let _ = tx.send(sent);
    })
    .await?;
    Ok(stream)
}

/// An answer or event that could not be encoded (never expected: the
/// types are plain data); logged under a correlation id.
fn unencodable(what: &str) -> ErrorBody {
    let id = uuid::Uuid::new_v4().to_string();
    tracing::error!(correlation_id = %id, "{what} could not be encoded");
    ErrorBody::internal(id)
}
