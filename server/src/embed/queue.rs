//! Coalesces concurrent embedding requests into batches, searches first.
//!
//! A forward pass over 16 short queries costs little more than over one, so
//! rather than answering requests one by one, a worker takes every query
//! waiting when it wakes (up to a batch) and answers them all from one
//! pass. Async callers never block the runtime.
//!
//! Two lanes with a worker each, sharing one model, because a search must
//! not wait for an upload:
//! - A document's chunks were first embedded in one pass, and while 190
//!   pages were ingested searches waited behind them (`make bench-load`:
//!   seconds, against tens of milliseconds idle).
//! - One worker serving both lanes, bulk work [`BULK_SLICE`] texts a pass,
//!   still made a query wait for the slice under way: about half a pass,
//!   most of a search's time during an upload (docs/benchmarks.md, "Search
//!   while uploading").
//! - Now queries ([`EmbedQueue::embed_one`]) have a worker of their own on
//!   rayon's global pool, and bulk work ([`EmbedQueue::embed_many`]) runs
//!   beside it on a pool whose threads yield the CPU to searches
//!   (`crate::background`). A query starts at once and gets the larger
//!   share of the cores.
//!
//! On a GPU the two lanes want different things: a single query runs
//! several times faster on the CPU than through wgpu, while bulk work wants
//! large passes (docs/benchmarks.md, "The embedder on a GPU"). So with a
//! hardware GPU, queries get a CPU copy of the model
//! ([`EmbedQueue::start_split`]), and bulk work gathers the pages waiting
//! into passes of the GPU's batch
//! instead of slices of [`BULK_SLICE`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use tokio::sync::{mpsc, oneshot};

use super::{Backend, EmbedError, Embedder, Embedding, Precision};

/// Texts of bulk work (a document's chunks) embedded per pass: each core
/// still gets a slice of several texts, and a cancelled upload stops within
/// a pass. (When queries shared the bulk worker, this bounded their wait:
/// 8 halved search p99 during a 190-page upload for slightly slower
/// ingestion; docs/benchmarks.md, "Search while uploading".)
pub const BULK_SLICE: usize = 8;

type Reply = oneshot::Sender<Result<Vec<Embedding>, Arc<EmbedError>>>;

/// Which lane a request travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// A search's query: never waits for bulk work.
    Query,
    /// A document's chunks: embedded a slice at a time.
    Bulk,
}

struct Request {
    texts: Vec<String>,
    reply: Reply,
}

/// A handle to the embedding worker; cheap to clone.
#[derive(Clone)]
pub struct EmbedQueue {
    queries: mpsc::Sender<Request>,
    bulk: mpsc::Sender<Request>,
    backend: Backend,
    query_backend: Backend,
    precision: Precision,
    query_precision: Precision,
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
    /// Moves `embedder` onto dedicated worker threads, one a lane.
    pub fn start(embedder: Embedder) -> std::io::Result<Self> {
        let embedder = Arc::new(embedder);
        Self::start_split(embedder.clone(), embedder)
    }

    /// Like [`Self::start`], with queries answered by `queries` (a CPU copy
    /// of the model beside a GPU's: see the module's doc) and bulk work by
    /// `bulk`.
    pub fn start_split(queries: Arc<Embedder>, bulk: Arc<Embedder>) -> std::io::Result<Self> {
        let backend = bulk.backend().clone();
        let query_backend = queries.backend().clone();
        let (precision, query_precision) = (bulk.precision(), queries.precision());
        let query_embedder = queries;
        let embedder = bulk;
        let counters = Arc::new(Counters::default());
        let (queries, query_rx) = mpsc::channel::<Request>(1024);
        let (bulk, bulk_rx) = mpsc::channel::<Request>(1024);
        // Bulk passes run on threads of their own below normal priority
        // (see `crate::background`), queries on rayon's global pool. New
        // threads take the priority of the thread that starts them: the
        // engine loads the model from its own runtime, never an upload's.
        let bulk_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("embed-bulk-{i}"))
            .start_handler(|_| crate::background::lower_this_thread())
            .build()
            .map_err(std::io::Error::other)?;
        {
            let counters = counters.clone();
            thread::Builder::new()
                .name("embed-query".into())
                .spawn(move || query_worker(&query_embedder, query_rx, &counters))?;
        }
        {
            let counters = counters.clone();
            thread::Builder::new()
                .name("embed-bulk".into())
                .spawn(move || bulk_worker(&embedder, &bulk_pool, bulk_rx, &counters))?;
        }
        Ok(Self {
            queries,
            bulk,
            backend,
            query_backend,
            precision,
            query_precision,
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

    /// The backend bulk work (uploads) runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The backend queries run on: the CPU beside a hardware GPU, else the
    /// same as [`Self::backend`].
    pub fn query_backend(&self) -> &Backend {
        &self.query_backend
    }

    /// What bulk work's projections compute in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// What queries' projections compute in.
    pub fn query_precision(&self) -> Precision {
        self.query_precision
    }

    /// Embeds one text (a query), beside any bulk work and batched with
    /// the other queries waiting.
    pub async fn embed_one(&self, text: impl Into<String>) -> Result<Embedding, Arc<EmbedError>> {
        let mut out = self.request(Lane::Query, vec![text.into()]).await?;
        out.pop().ok_or_else(|| Arc::new(EmbedError::WorkerGone))
    }

    /// Embeds many texts (a document's chunks), in order, a slice at a time,
    /// below searches' priority.
    pub async fn embed_many(&self, texts: Vec<String>) -> Result<Vec<Embedding>, Arc<EmbedError>> {
        self.request(Lane::Bulk, texts).await
    }

    async fn request(
        &self,
        lane: Lane,
        texts: Vec<String>,
    ) -> Result<Vec<Embedding>, Arc<EmbedError>> {
        let (reply, answer) = oneshot::channel();
        let tx = match lane {
            Lane::Query => &self.queries,
            Lane::Bulk => &self.bulk,
        };
        tx.send(Request { texts, reply })
            .await
            .map_err(|_| Arc::new(EmbedError::WorkerGone))?;
        answer.await.map_err(|_| Arc::new(EmbedError::WorkerGone))?
    }
}

/// Answers queries: every one waiting, up to a batch, in one pass.
fn query_worker(embedder: &Embedder, mut rx: mpsc::Receiver<Request>, counters: &Counters) {
    while let Some(first) = rx.blocking_recv() {
        let batch = gather(first, &mut rx, embedder.batch());
        counters
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        let texts: Vec<&str> = batch
            .iter()
            .flat_map(|r| r.texts.iter().map(String::as_str))
            .collect();
        let result = pass(embedder, &texts, counters, Lane::Query);
        reply_all(batch, result);
    }
}

/// Works through bulk requests in order on `pool`, dropping the work of
/// callers that went away (a cancelled upload).
///
/// On the CPU each request is run [`BULK_SLICE`] texts a pass. On a GPU the
/// requests waiting (one page's chunks each) are gathered up to the GPU's
/// batch and run together, since a pass of a few texts leaves the card idle.
fn bulk_worker(
    embedder: &Embedder,
    pool: &rayon::ThreadPool,
    mut rx: mpsc::Receiver<Request>,
    counters: &Counters,
) {
    let (slice, gather) = match embedder.backend() {
        Backend::Cpu => (BULK_SLICE, false),
        Backend::Wgpu { .. } => (embedder.batch(), true),
    };
    while let Some(first) = rx.blocking_recv() {
        let group = if gather {
            self::gather(first, &mut rx, slice)
        } else {
            vec![first]
        };
        counters
            .requests
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        let texts: Vec<&str> = group
            .iter()
            .flat_map(|r| r.texts.iter().map(String::as_str))
            .collect();
        let mut done: Vec<Embedding> = Vec::with_capacity(texts.len());
        let mut failed = None;
        for some in texts.chunks(slice) {
            if group.iter().all(|r| r.reply.is_closed()) {
                break; // every upload in the group was cancelled
            }
            match pool.install(|| pass(embedder, some, counters, Lane::Bulk)) {
                Ok(vectors) => done.extend(vectors),
                Err(err) => {
                    failed = Some(err);
                    break;
                }
            }
        }
        reply_all(group, failed.map_or(Ok(done), Err));
    }
}

/// Hands each request of `group` its share of `result` (the vectors of
/// all their texts, in order), or the error.
fn reply_all(group: Vec<Request>, result: Result<Vec<Embedding>, Arc<EmbedError>>) {
    let (done, failed) = match result {
        Ok(done) => (done, None),
        Err(err) => (Vec::new(), Some(err)),
    };
    let mut done = done.into_iter();
    for request in group {
        let mine: Vec<Embedding> = done.by_ref().take(request.texts.len()).collect();
        let answer = match &failed {
            Some(err) => Err(err.clone()),
            None if mine.len() == request.texts.len() => Ok(mine),
            // Cut short because it was cancelled: nobody is listening.
            None => Err(Arc::new(EmbedError::WorkerGone)),
        };
        // The caller may have gone away (a cancelled search or upload): fine.
        let _ = request.reply.send(answer);
    }
}

/// `first` and the requests already waiting behind it, until they hold
/// `texts` texts or none is left waiting.
fn gather(first: Request, rx: &mut mpsc::Receiver<Request>, texts: usize) -> Vec<Request> {
    let mut waiting = first.texts.len();
    let mut group = vec![first];
    while waiting < texts {
        match rx.try_recv() {
            Ok(r) => {
                waiting += r.texts.len();
                group.push(r);
            }
            Err(_) => break,
        }
    }
    group
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
