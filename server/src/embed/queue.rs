//! Coalesces concurrent embedding requests into batches.
//!
//! A forward pass over 16 short queries costs little more than over one, so
//! rather than queueing requests one by one, a single worker thread owns the
//! model, takes every request waiting when it wakes (up to a batch), and
//! answers them all from one pass. Async callers never block the runtime.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use tokio::sync::{mpsc, oneshot};

use super::{Backend, EmbedError, Embedder, Embedding, DEFAULT_BATCH};

struct Request {
    texts: Vec<String>,
    reply: oneshot::Sender<Result<Vec<Embedding>, Arc<EmbedError>>>,
}

/// A handle to the embedding worker; cheap to clone.
#[derive(Clone)]
pub struct EmbedQueue {
    tx: mpsc::Sender<Request>,
    backend: Backend,
    counters: Arc<Counters>,
}

/// What the worker has done so far (for metrics, and to see coalescing work).
#[derive(Debug, Default)]
struct Counters {
    passes: AtomicU64,
    requests: AtomicU64,
    texts: AtomicU64,
}

/// A snapshot of the worker's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    /// Worker wake-ups, each serving every request then waiting.
    pub passes: u64,
    /// Requests answered.
    pub requests: u64,
    /// Texts embedded.
    pub texts: u64,
}

impl EmbedQueue {
    /// Moves `embedder` onto a dedicated worker thread.
    pub fn start(embedder: Embedder) -> std::io::Result<Self> {
        let backend = embedder.backend().clone();
        let (tx, rx) = mpsc::channel::<Request>(1024);
        let counters = Arc::new(Counters::default());
        let worker_counters = counters.clone();
        thread::Builder::new()
            .name("embed".into())
            .spawn(move || worker(embedder, rx, &worker_counters))?;
        Ok(Self {
            tx,
            backend,
            counters,
        })
    }

    /// What the worker has done so far.
    pub fn stats(&self) -> QueueStats {
        QueueStats {
            passes: self.counters.passes.load(Ordering::Relaxed),
            requests: self.counters.requests.load(Ordering::Relaxed),
            texts: self.counters.texts.load(Ordering::Relaxed),
        }
    }

    /// The backend the worker runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Embeds one text (a query), batched with whatever else is waiting.
    pub async fn embed_one(&self, text: impl Into<String>) -> Result<Embedding, Arc<EmbedError>> {
        let mut out = self.embed_many(vec![text.into()]).await?;
        out.pop().ok_or_else(|| Arc::new(EmbedError::WorkerGone))
    }

    /// Embeds many texts (a document's chunks), in order.
    pub async fn embed_many(&self, texts: Vec<String>) -> Result<Vec<Embedding>, Arc<EmbedError>> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request { texts, reply })
            .await
            .map_err(|_| Arc::new(EmbedError::WorkerGone))?;
        answer.await.map_err(|_| Arc::new(EmbedError::WorkerGone))?
    }
}

fn worker(embedder: Embedder, mut rx: mpsc::Receiver<Request>, counters: &Counters) {
    while let Some(first) = rx.blocking_recv() {
        let mut requests = vec![first];
        let mut waiting: usize = requests[0].texts.len();
        while waiting < DEFAULT_BATCH {
            match rx.try_recv() {
                Ok(next) => {
                    waiting += next.texts.len();
                    requests.push(next);
                }
                Err(_) => break,
            }
        }
        let texts: Vec<&str> = requests
            .iter()
            .flat_map(|r| r.texts.iter().map(String::as_str))
            .collect();
        counters.passes.fetch_add(1, Ordering::Relaxed);
        counters
            .requests
            .fetch_add(requests.len() as u64, Ordering::Relaxed);
        counters
            .texts
            .fetch_add(texts.len() as u64, Ordering::Relaxed);
        let span = tracing::debug_span!(
            "embed_batch",
            requests = requests.len(),
            texts = texts.len()
        );
        let _guard = span.enter();
        match embedder.embed(&texts) {
            Ok(vectors) => {
                let mut vectors = vectors.into_iter();
                for request in requests {
                    let mine: Vec<Embedding> = vectors.by_ref().take(request.texts.len()).collect();
                    // The caller may have gone away (a cancelled request): fine.
                    let _ = request.reply.send(Ok(mine));
                }
            }
            Err(err) => {
                tracing::error!(%err, "embedding failed");
                let err = Arc::new(err);
                for request in requests {
                    let _ = request.reply.send(Err(err.clone()));
                }
            }
        }
    }
}
