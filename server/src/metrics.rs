//! Prometheus metrics: HTTP requests by route, searches, what is held in
//! memory, and ingestion.
//!
//! One set per engine; `GET /metrics` renders it in the text format, in one
//! of two [`View`]s. The process's own figures (requests by route and
//! status, searches by mode, their latencies) say how busy the server is.
//! The store's (files ingested, chunks stored, vectors embedded or reused)
//! count what was written into every library, so they are shown only to a
//! caller who may read every library: a token scoped to some libraries
//! would otherwise watch uploads into the others come and go.

use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Which metrics a rendering holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Every metric, the store's counts included.
    Everything,
    /// The process's own: HTTP requests and searches, with their latencies.
    Process,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    /// The route pattern (`/api/jobs/{id}`), never the raw path, so label
    /// values stay few.
    pub route: String,
    pub status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ModeLabels {
    pub mode: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds, 1 ms to about 33 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// Every metric docshelf keeps.
pub struct Metrics {
    /// Every metric, for [`View::Everything`].
    everything: Mutex<Registry>,
    /// The process's own, for [`View::Process`]: the same counters, also
    /// registered here.
    process: Mutex<Registry>,
    http_requests: Family<RouteLabels, Counter>,
    http_seconds: Histograms<RouteLabels>,
    searches: Family<ModeLabels, Counter>,
    search_seconds: Histograms<ModeLabels>,
    files: Family<OutcomeLabels, Counter>,
    chunks_stored: Counter,
    chunks_embedded: Family<SourceLabels, Counter>,
    memory: MemoryMetrics,
}

/// The in-memory segments' figures (see `store::resident`), mirrored from
/// the store's own counts each time metrics are rendered.
#[derive(Default)]
struct MemoryMetrics {
    budget_bytes: Gauge,
    held_bytes: Gauge,
    versions_held: Gauge,
    /// Searches by where they were answered (`memory`, `store`).
    searches: Family<AnsweredLabels, Counter>,
    loads: Counter,
    evictions: Counter,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AnsweredLabels {
    /// `memory` or `store`.
    pub from: &'static str,
}

/// Where an uploaded chunk's vector came from.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceLabels {
    /// `model` (embedded now) or `reused` (the same text's stored vector).
    pub source: &'static str,
}

impl Default for Metrics {
    fn default() -> Self {
        let metrics = Self {
            everything: Mutex::new(Registry::with_prefix("docshelf")),
            process: Mutex::new(Registry::with_prefix("docshelf")),
            http_requests: Family::default(),
            http_seconds: Family::new_with_constructor(latency_histogram),
            searches: Family::default(),
            search_seconds: Family::new_with_constructor(latency_histogram),
            files: Family::default(),
            chunks_stored: Counter::default(),
            chunks_embedded: Family::default(),
            memory: MemoryMetrics::default(),
        };
        {
            let (mut everything, mut process) = (lock(&metrics.everything), lock(&metrics.process));
            for r in [&mut *everything, &mut *process] {
                r.register(
                    "http_requests",
                    "HTTP requests by method, route and status",
                    metrics.http_requests.clone(),
                );
                r.register(
                    "http_request_duration_seconds",
                    "HTTP request latency by method, route and status",
                    metrics.http_seconds.clone(),
                );
                r.register(
                    "searches",
                    "Searches run, by mode",
                    metrics.searches.clone(),
                );
                r.register(
                    "search_duration_seconds",
                    "Search latency by mode",
                    metrics.search_seconds.clone(),
                );
                let memory = &metrics.memory;
                r.register(
                    "memory_budget_bytes",
                    "Memory allowed for library versions held in memory (--resident-mib)",
                    memory.budget_bytes.clone(),
                );
                r.register(
                    "memory_held_bytes",
                    "Memory the library versions held take",
                    memory.held_bytes.clone(),
                );
                r.register(
                    "memory_versions_held",
                    "Library versions held in memory",
                    memory.versions_held.clone(),
                );
                r.register(
                    "memory_searches",
                    "Search legs by where they were answered: memory, or the store (a version not held)",
                    memory.searches.clone(),
                );
                r.register(
                    "memory_loads",
                    "Library versions read into memory",
                    memory.loads.clone(),
                );
                r.register(
                    "memory_evictions",
                    "Library versions dropped from memory to make room",
                    memory.evictions.clone(),
                );
            }
            everything.register(
                "ingested_files",
                "Uploaded files by outcome (stored, failed, skipped)",
                metrics.files.clone(),
            );
            everything.register(
                "stored_chunks",
                "Chunks written to the store",
                metrics.chunks_stored.clone(),
            );
            everything.register(
                "upload_vectors",
                "Uploaded chunks' vectors by source: embedded by the model, or reused from the same text stored before",
                metrics.chunks_embedded.clone(),
            );
        }
        metrics
    }
}

fn lock(registry: &Mutex<Registry>) -> std::sync::MutexGuard<'_, Registry> {
    registry.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    pub fn http_request(&self, labels: RouteLabels, took: Duration) {
        self.http_requests.get_or_create(&labels).inc();
        self.http_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    pub fn search(&self, mode: &str, took: Duration) {
        let labels = ModeLabels {
            mode: mode.to_owned(),
        };
        self.searches.get_or_create(&labels).inc();
        self.search_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    pub fn file(&self, outcome: &str) {
        self.files
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    pub fn chunks_stored(&self, n: u64) {
        self.chunks_stored.inc_by(n);
    }

    /// Counts an upload's vectors: `embedded` by the model, `reused`.
    pub fn chunks_embedded(&self, embedded: u64, reused: u64) {
        for (source, n) in [("model", embedded), ("reused", reused)] {
            self.chunks_embedded
                .get_or_create(&SourceLabels { source })
                .inc_by(n);
        }
    }

    /// Uploaded chunks' vectors so far: (embedded by the model, reused).
    pub fn vectors(&self) -> (u64, u64) {
        let count = |source| {
            self.chunks_embedded
                .get_or_create(&SourceLabels { source })
                .get()
        };
        (count("model"), count("reused"))
    }

    /// Mirrors the in-memory segments' figures as `/api/status` reports
    /// them (counts since start-up).
    pub fn memory(&self, stats: &index_core::status::MemoryStatus) {
        let m = &self.memory;
        let gauge = |g: &Gauge, v: u64| {
            g.set(i64::try_from(v).unwrap_or(i64::MAX));
        };
        gauge(&m.budget_bytes, stats.budget_bytes);
        gauge(&m.held_bytes, stats.held_bytes);
        gauge(&m.versions_held, stats.versions_held);
        // Counters only rise: add what was counted since the last render.
        let catch_up = |c: &Counter, total: u64| {
            c.inc_by(total.saturating_sub(c.get()));
        };
        catch_up(
            &m.searches.get_or_create(&AnsweredLabels { from: "memory" }),
            stats.hits,
        );
        catch_up(
            &m.searches.get_or_create(&AnsweredLabels { from: "store" }),
            stats.misses,
        );
        catch_up(&m.loads, stats.loads);
        catch_up(&m.evictions, stats.evictions);
    }

    /// The Prometheus text exposition of `view`.
    pub fn render(&self, view: View) -> String {
        let registry = match view {
            View::Everything => &self.everything,
            View::Process => &self.process,
        };
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &lock(registry));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_view_leaves_the_stores_counts_out() {
        let metrics = Metrics::default();
        metrics.search("hybrid", Duration::from_millis(5));
        metrics.file("stored");
        metrics.chunks_stored(7);
        metrics.chunks_embedded(5, 2);
        let everything = metrics.render(View::Everything);
        let process = metrics.render(View::Process);
        for store_wide in [
            "docshelf_ingested_files",
            "docshelf_stored_chunks",
            "docshelf_upload_vectors",
        ] {
            assert!(everything.contains(store_wide), "{everything}");
            assert!(!process.contains(store_wide), "{process}");
        }
        for own in [
            "docshelf_searches_total{mode=\"hybrid\"} 1",
            "docshelf_search_duration_seconds",
        ] {
            assert!(everything.contains(own), "{everything}");
            assert!(process.contains(own), "{process}");
        }
    }
}
