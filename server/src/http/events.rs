//! Server-sent event streams fed by a task: the streamed search and Ask.
//!
//! The work runs in its own task and sends events through a channel; the
//! response streams them out. When the client goes away the response is
//! dropped, and with it the task: a search stops searching, and an answer
//! stops, which closes its connection to the model, which stops generating.

use std::convert::Infallible;
use std::future::Future;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use tokio::sync::mpsc::UnboundedSender;

/// Runs `work` with a sender of events, and streams what it sends until it
/// ends; dropping the stream aborts it.
pub fn stream<F>(
    work: impl FnOnce(UnboundedSender<Event>) -> F,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>>
where
    F: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let guard = AbortOnDrop(tokio::spawn(work(tx)).abort_handle());
    let events = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        rx.recv().await.map(|event| (Ok(event), (rx, guard)))
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
