//! `POST /api/ask`: a question answered by the language model from the
//! documents, streamed as server-sent events.

use std::convert::Infallible;

use axum::extract::State;
use axum::response::sse::{Event, Sse};
use futures::Stream;
use index_core::ask::{AskEvent, AskParams};

use super::auth::Who;
use super::error::{ApiError, ApiJson};
use super::openapi::ErrorBody;
use super::search::StreamError;
use super::AppState;
use crate::engine::EngineError;

/// Answers a question from the stored documents with the configured
/// language model. Server-sent events, in order: `sources` (the passages
/// found for the question, numbered), any number of `search` (the model
/// searched again; more numbered sources) and `token` (more of the answer),
/// then `done` (the whole answer, the sources it cites, the session id) or
/// `error` (`{"code","error","status"}`). Closing the stream stops the
/// model's generation.
#[utoipa::path(
    post,
    path = "/ask",
    tag = "search",
    request_body = AskParams,
    responses(
        (status = 200, description = "Server-sent events: sources, search, token, then done or error", content_type = "text/event-stream"),
        (status = 400, description = "Bad input (empty or overlong question, a name over its limits)", body = ErrorBody),
        (status = 404, description = "Unknown library or version", body = ErrorBody),
        (status = 413, description = "The body is larger than the server accepts", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
        (status = 503, description = "Ask is off (no language model configured; the message says how to turn it on), busy, or the model is unreachable", body = ErrorBody),
    )
)]
pub async fn ask(
    State(state): State<AppState>,
    Who(caller): Who,
    ApiJson(params): ApiJson<AskParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Refuse what cannot start with a status, before the stream.
    let ask = params.validate().map_err(EngineError::from)?;
    state.engine.llm()?;
    let engine = state.engine.clone();
    let stream = super::events::checked_stream(move |tx| async move {
        let events = tx.clone();
        let mut started = false;
        let mut emit = |event: AskEvent| {
            if let Some(event) = sse_event(&event) {
                started = true;
                let _ = events.send(Ok(event));
            }
        };
        let last = match engine.ask(&caller, ask, &mut emit).await {
            Ok(answer) => AskEvent::Done(answer),
            // Nothing streamed yet (the search failed: an unknown library,
            // busy): the request itself is refused with its status.
            Err(err) if !started => {
                let _ = tx.send(Err(err.body()));
                return;
            }
            Err(err) => AskEvent::Error(err.body()),
        };
        if let Some(event) = sse_event(&last) {
            let _ = tx.send(Ok(event));
        }
    })
    .await?;
    Ok(stream)
}

/// An event as sent on the wire.
fn sse_event(event: &AskEvent) -> Option<Event> {
    let named = Event::default().event(event.name());
    let sent = match event {
        AskEvent::Sources(found) => named.json_data(found),
        AskEvent::Search(more) => named.json_data(more),
        AskEvent::Token(token) => named.json_data(token),
        AskEvent::Done(answer) => named.json_data(answer),
        AskEvent::Error(body) => named.json_data(StreamError {
            status: body.kind.http_status(),
            body: body.clone(),
        }),
    };
    sent.ok()
}
