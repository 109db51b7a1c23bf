//! Coalesces concurrent embedding requests into batches, searches first.
//!
//! A forward pass over 16 short queries costs little more than over one, so
//! rather than queueing requests one by one, a single worker thread owns the
//! model, takes every query waiting when it wakes (up to a batch), and
//! answers them all from one pass. Async callers never block the runtime.
//!
//! Two lanes, because a search must not wait for an upload: a document's
//! chunks were embedded in one pass, and while 190 pages were ingested
//! searches waited behind them (`make bench-load`: p50 1.0 s, p99 3.4 s,
//! against 38 / 45 ms idle). Queries ([`EmbedQueue::embed_one`]) now always go first, and bulk
//! work ([`EmbedQueue::embed_many`]) is embedded [`BULK_SLICE`] texts per
//! pass, so a query waits for at most one slice.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use tokio::sync::{mpsc, oneshot};

use super::{Backend, EmbedError, Embedder, Embedding, DEFAULT_BATCH};

/// Texts of bulk work (a document's chunks) embedded per pass. Small enough
/// that a query arriving mid-pass waits a fraction of a second on a 2-core
/// CPU, large enough that each core still gets a slice of several texts.
/// Measured with `make bench-load` (190-page upload): 8 took search p99
/// during the upload from 3.4 s to 1.7 s for 4% slower ingestion; 4 gave
/// 1.5 s for 14% slower, as the rest of the wait is the two cores being
/// busy, not the queue.
pub const BULK_SLICE: usize = 8;

type Reply = oneshot::Sender<Result<Vec<Embedding>, Arc<EmbedError>>>;

/// Which lane a request travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// A search's query: answered before any bulk work.
    Query,
    /// A document's chunks: embedded a slice at a time.
    Bulk,
}

struct Request {
    lane: Lane,
    texts: Vec<String>,
    reply: Reply,
}

/// Bulk work under way: its texts, and the vectors of those done so far.
struct InFlight {
    texts: Vec<String>,
    done: Vec<Embedding>,
    reply: Reply,
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
    query_passes: AtomicU64,
    requests: AtomicU64,
    texts: AtomicU64,
}

/// A snapshot of the worker's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    /// Worker wake-ups, each serving every request then waiting.
    pub passes: u64,
    /// Of those, passes over queries.
    pub query_passes: u64,
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
            query_passes: self.counters.query_passes.load(Ordering::Relaxed),
            requests: self.counters.requests.load(Ordering::Relaxed),
            texts: self.counters.texts.load(Ordering::Relaxed),
        }
    }

    /// The backend the worker runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Embeds one text (a query), ahead of any bulk work and batched with
    /// the other queries waiting.
    pub async fn embed_one(&self, text: impl Into<String>) -> Result<Embedding, Arc<EmbedError>> {
        let mut out = self.request(Lane::Query, vec![text.into()]).await?;
        out.pop().ok_or_else(|| Arc::new(EmbedError::WorkerGone))
    }

    /// Embeds many texts (a document's chunks), in order, a slice at a time
    /// between queries.
    pub async fn embed_many(&self, texts: Vec<String>) -> Result<Vec<Embedding>, Arc<EmbedError>> {
        self.request(Lane::Bulk, texts).await
    }

    async fn request(
        &self,
        lane: Lane,
        texts: Vec<String>,
    ) -> Result<Vec<Embedding>, Arc<EmbedError>> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request { lane, texts, reply })
            .await
            .map_err(|_| Arc::new(EmbedError::WorkerGone))?;
        answer.await.map_err(|_| Arc::new(EmbedError::WorkerGone))?
    }
}

fn worker(embedder: Embedder, mut rx: mpsc::Receiver<Request>, counters: &Counters) {
    let mut queries: VecDeque<Request> = VecDeque::new();
    let mut bulk: VecDeque<InFlight> = VecDeque::new();
    let route = |r: Request, queries: &mut VecDeque<Request>, bulk: &mut VecDeque<InFlight>| {
        counters.requests.fetch_add(1, Ordering::Relaxed);
        match r.lane {
            Lane::Query => queries.push_back(r),
            Lane::Bulk => bulk.push_back(InFlight {
                done: Vec::with_capacity(r.texts.len()),
                texts: r.texts,
                reply: r.reply,
            }),
        }
    };
    loop {
        if queries.is_empty() && bulk.is_empty() {
            match rx.blocking_recv() {
                Some(r) => route(r, &mut queries, &mut bulk),
                None => return,
            }
        }
        while let Ok(r) = rx.try_recv() {
            route(r, &mut queries, &mut bulk);
        }
        if !queries.is_empty() {
            // Every waiting query, up to a batch, in one pass.
            let mut batch = Vec::new();
            let mut waiting = 0;
            while let Some(q) = queries.front() {
                if waiting > 0 && waiting + q.texts.len() > DEFAULT_BATCH {
                    break;
                }
                waiting += q.texts.len();
                batch.extend(queries.pop_front());
            }
            let texts: Vec<&str> = batch
                .iter()
                .flat_map(|r| r.texts.iter().map(String::as_str))
                .collect();
            match pass(&embedder, &texts, counters, Lane::Query) {
                Ok(vectors) => {
                    let mut vectors = vectors.into_iter();
                    for request in batch {
                        let mine: Vec<Embedding> =
                            vectors.by_ref().take(request.texts.len()).collect();
                        // The caller may have gone away (a cancelled search): fine.
                        let _ = request.reply.send(Ok(mine));
                    }
                }
                Err(err) => {
                    for request in batch {
                        let _ = request.reply.send(Err(err.clone()));
                    }
                }
            }
            continue;
        }
        let Some(work) = bulk.front_mut() else {
            continue;
        };
        if work.reply.is_closed() {
            // The upload was cancelled: drop the rest of its work.
            bulk.pop_front();
            continue;
        }
        let from = work.done.len();
        let to = (from + BULK_SLICE).min(work.texts.len());
        let texts: Vec<&str> = work.texts[from..to].iter().map(String::as_str).collect();
        match pass(&embedder, &texts, counters, Lane::Bulk) {
            Ok(vectors) => work.done.extend(vectors),
            Err(err) => {
                if let Some(work) = bulk.pop_front() {
                    let _ = work.reply.send(Err(err));
                }
                continue;
            }
        }
        if work.done.len() == work.texts.len() {
            if let Some(work) = bulk.pop_front() {
                let _ = work.reply.send(Ok(work.done));
            }
        }
    }
}

/// One forward pass, counted and traced.
fn pass(
    embedder: &Embedder,
    texts: &[&str],
    counters: &Counters,
    lane: Lane,
) -> Result<Vec<Embedding>, Arc<EmbedError>> {
    counters.passes.fetch_add(1, Ordering::Relaxed);
    if lane == Lane::Query {
        counters.query_passes.fetch_add(1, Ordering::Relaxed);
    }
    counters
        .texts
        .fetch_add(texts.len() as u64, Ordering::Relaxed);
    let span = tracing::debug_span!("embed_batch", ?lane, texts = texts.len());
    let _guard = span.enter();
    embedder.embed(texts).map_err(|err| {
        tracing::error!(%err, "embedding failed");
        Arc::new(err)
    })
}
