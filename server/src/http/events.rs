//! Server-sent event streams fed by a task: the streamed search and Ask.
//!
//! The work runs in its own task and sends events through a channel; the
//! response streams them out. When the client goes away the response is
//! dropped, and with it the task: a search stops searching, and an answer
//! stops, which closes its connection to the model, which stops generating.

use std::convert::Infallible;
use std::future::Future;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use index_core::ErrorBody;
use tokio::sync::mpsc::UnboundedSender;

/// What a checked stream's work sends: an event, or, as its first message
/// only, a refusal of the whole request.
pub type Sent = Result<Event, ErrorBody>;

/// Runs `work` with a sender, and streams the events it sends until it
/// ends; dropping the stream aborts it. The response waits for the work's
/// first message: a
/// refusal sent before any event (an unknown library, Ask's search
/// failing) is answered as the request's own error status, because a
/// client reads a 200 as "the request was good", whatever event follows.
/// The engine decides what is refused exactly as for the plain request;
/// nothing is checked twice.
pub async fn checked_stream<F>(
    work: impl FnOnce(UnboundedSender<Sent>) -> F,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ErrorBody>
where
    F: Future<Output = ()> + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Sent>();
    let guard = AbortOnDrop(tokio::spawn(work(tx)).abort_handle());
    let first = match rx.recv().await {
        Some(Ok(event)) => event,
        Some(Err(refused)) => return Err(refused),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            tracing::error!(correlation_id = %id, "a stream's work ended before sending anything");
            return Err(ErrorBody::internal(id));
        }
    };
    let rest = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        // A refusal after the first event cannot change the status; the
        // work sends its error as an event then, so this ends the stream.
        match rx.recv().await {
            Some(Ok(event)) => Some((Ok(event), (rx, guard))),
            Some(Err(_)) | None => None,
        }
    });
    let events = futures::stream::once(async move { Ok(first) }).chain(rest);
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
