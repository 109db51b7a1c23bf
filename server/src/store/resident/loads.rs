//! The loads behind the in-memory segments: reading a queued version,
//! refusing one that can never fit, making room by dropping the least
//! recently searched, and dropping deleted versions' segments.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use lancedb::Table;

use super::published::{PublishedVersion, PublishedVersions, Stamp};
use super::{Entry, Inner, Resident, Segment, LEAST_ROW_BYTES};
use crate::store::StoreError;

/// Versions waiting to be loaded, in order, and the set of them.
pub(super) type Queue = (VecDeque<Wanted>, HashSet<(String, String)>);

/// A version to load, as the catalog last saw it.
pub(super) struct Wanted {
    pub(super) library: String,
    pub(super) version: String,
    pub(super) chunks: usize,
    pub(super) stamp: Stamp,
    /// Whether older segments may be dropped to make room for it: yes for
    /// a version a search asked for, no for warming at start-up, which
    /// fills the budget and stops (warming in order would otherwise drop
    /// the first versions, the most wanted, for the last).
    pub(super) make_room: bool,
}

impl Wanted {
    pub(super) fn of(p: &PublishedVersion, make_room: bool) -> Self {
        Self {
            library: p.library.clone(),
            version: p.version.clone(),
            chunks: p.chunks,
            stamp: p.stamp,
            make_room,
        }
    }
}

impl Resident {
    /// Queues `wanted` to load and starts the loader unless it runs. A
    /// search's versions (`make_room`) go before those warming the budget,
    /// and a version queued to warm becomes a search's when one asks.
    pub(super) fn request(&self, table: &Table, wanted: impl IntoIterator<Item = Wanted>) {
        {
            let mut queue = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
            let (order, queued) = &mut *queue;
            let mut front = 0;
            for w in wanted {
                let key = (w.library.clone(), w.version.clone());
                if queued.insert(key) {
                    if w.make_room {
                        order.insert(front, w);
                        front += 1;
                    } else {
                        order.push_back(w);
                    }
                } else if w.make_room {
                    let at = order
                        .iter()
                        .position(|q| q.library == w.library && q.version == w.version);
                    if let Some(mut queued) = at.and_then(|at| order.remove(at)) {
                        queued.make_room = true;
                        queued.stamp = w.stamp;
                        order.insert(front.min(order.len()), queued);
                        front += 1;
                    }
                }
            }
        }
        if self.inner.loading.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.inner.loading.store(false, Ordering::Release);
            return;
        };
        let (inner, table) = (Arc::clone(&self.inner), table.clone());
        runtime.spawn(async move { inner.load_queued(&table).await });
    }
}

impl Inner {
    /// Drops the segments of versions no longer published, once per table
    /// version: a deleted version's segment would otherwise hold its
    /// memory until evicted.
    pub(super) fn sweep(&self, published: &PublishedVersions) {
        if self.swept.swap(published.table_version, Ordering::Relaxed) == published.table_version {
            return;
        }
        let mut gone: Vec<Entry> = Vec::new();
        {
            let mut held = self.write_held();
            for (library, versions) in held.iter_mut() {
                let deleted: Vec<String> = versions
                    .keys()
                    .filter(|version| published.get(library, version).is_none())
                    .cloned()
                    .collect();
                gone.extend(deleted.iter().filter_map(|v| versions.remove(v)));
            }
            held.retain(|_, versions| !versions.is_empty());
            let freed: usize = gone.iter().map(|e| e.segment.bytes()).sum();
            self.held_bytes.fetch_sub(freed, Ordering::Relaxed);
        }
        // Freed outside the lock, which every search takes.
        if !gone.is_empty() {
            drop(gone);
            release_freed_memory();
        }
    }

    /// Loads queued versions until none is left.
    pub(super) async fn load_queued(self: Arc<Self>, table: &Table) {
        // Should the task end any other way (a panic, its runtime shut
        // down), the flag is cleared, so that the next request starts a
        // loader again instead of waiting for one that is gone.
        struct Running<'a>(&'a AtomicBool);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let running = Running(&self.loading);
        loop {
            let next = {
                let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                let next = queue.0.pop_front();
                if let Some(w) = &next {
                    queue.1.remove(&(w.library.clone(), w.version.clone()));
                }
                next
            };
            let Some(wanted) = next else {
                self.loading.store(false, Ordering::Release);
                // A request queued between the pop and the store found the
                // loader still running: take it up.
                let queued = !self
                    .queue
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .0
                    .is_empty();
                if queued && !self.loading.swap(true, Ordering::AcqRel) {
                    continue;
                }
                // Another loader runs now (or none is needed): this one
                // must not clear its flag on the way out.
                std::mem::forget(running);
                return;
            };
            let (library, version) = (wanted.library.clone(), wanted.version.clone());
            if let Err(err) = self.load(table, wanted).await {
                tracing::warn!(%err, library, version, "cannot read a library version into memory; searching it on disk");
            }
        }
    }

    /// Reads `wanted` into a segment unless it is held at its stamp or
    /// cannot fit, then makes room for it.
    pub(super) async fn load(&self, table: &Table, wanted: Wanted) -> Result<(), StoreError> {
        let _one_at_a_time = self.reading.lock().await;
        let key = (wanted.library.clone(), wanted.version.clone());
        let current = self
            .read_held()
            .get(&wanted.library)
            .and_then(|v| v.get(&wanted.version))
            .is_some_and(|e| e.segment.stamp() == wanted.stamp);
        if current {
            return Ok(());
        }
        let refused = self
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            == Some(&wanted.stamp);
        if refused {
            return Ok(());
        }
        let least = wanted.chunks.saturating_mul(LEAST_ROW_BYTES);
        if least > self.budget {
            self.refuse(key, wanted.stamp, least);
            return Ok(());
        }
        let free = || {
            self.budget
                .saturating_sub(self.held_bytes.load(Ordering::Relaxed))
        };
        // Warming stops short of reading what would then not fit.
        if !wanted.make_room && wanted.chunks.saturating_mul(self.row_bytes()) > free() {
            return Ok(());
        }
        let started = Instant::now();
        let segment = Segment::read(table, &wanted.library, &wanted.version).await?;
        let bytes = segment.bytes();
        let first = self.loads.fetch_add(1, Ordering::Relaxed) == 0;
        if !segment.is_empty() {
            let this = bytes / segment.len();
            let mean = match first {
                true => this,
                false => (self.row_bytes() * 3 + this) / 4,
            };
            self.row_bytes.store(mean, Ordering::Relaxed);
        }
        if bytes > self.budget {
            self.refuse(key, segment.stamp(), bytes);
            return Ok(());
        }
        if !wanted.make_room && bytes > free() {
            return Ok(());
        }
        tracing::info!(
            library = wanted.library,
            version = wanted.version,
            rows = segment.len(),
            kib = bytes >> 10,
            ms = started.elapsed().as_millis() as u64,
            "read a library version into memory"
        );
        self.insert(segment);
        Ok(())
    }

    fn refuse(&self, key: (String, String), stamp: Stamp, bytes: usize) {
        tracing::info!(
            library = key.0,
            version = key.1,
            mib = bytes >> 20,
            budget_mib = self.budget >> 20,
            "a library version is larger than --resident-mib: searching it on disk"
        );
        self.too_large.fetch_add(1, Ordering::Relaxed);
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, stamp);
    }

    /// Holds `segment` in place of its version's old one, then drops the
    /// least recently used others until the budget holds.
    fn insert(&self, segment: Segment) {
        let bytes = segment.bytes();
        let (library, version) = (segment.library().to_owned(), segment.version().to_owned());
        let now = self.clock.load(Ordering::Relaxed);
        let mut held = self.write_held();
        let old = held.entry(library.clone()).or_default().insert(
            version.clone(),
            Entry {
                segment: Arc::new(segment),
                used: AtomicU64::new(now),
            },
        );
        let mut total = self.held_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if let Some(old) = old {
            total -= old.segment.bytes();
            self.held_bytes
                .fetch_sub(old.segment.bytes(), Ordering::Relaxed);
        }
        let mut evicted = false;
        while total > self.budget {
            let oldest = held
                .iter()
                .flat_map(|(l, vs)| vs.iter().map(move |(v, e)| (l, v, e)))
                .filter(|(l, v, _)| **l != library || **v != version)
                .min_by_key(|(_, _, e)| e.used.load(Ordering::Relaxed))
                .map(|(l, v, _)| (l.clone(), v.clone()));
            let Some((l, v)) = oldest else { break };
            if let Some(entry) = held.get_mut(&l).and_then(|vs| vs.remove(&v)) {
                let freed = entry.segment.bytes();
                total -= freed;
                self.held_bytes.fetch_sub(freed, Ordering::Relaxed);
                self.evictions.fetch_add(1, Ordering::Relaxed);
                evicted = true;
                tracing::debug!(
                    library = l,
                    version = v,
                    "dropped a library version from memory"
                );
            }
            held.retain(|_, vs| !vs.is_empty());
        }
        drop(held);
        // The version may have been deleted while it was read, after the
        // last sweep: the next search sweeps again.
        self.swept.store(u64::MAX, Ordering::Relaxed);
        if evicted {
            release_freed_memory();
        }
    }
}

/// Hands memory the allocator holds free back to the system. Reading a
/// segment allocates its size again in many pieces (Arrow batches, their
/// compacted columns), and glibc keeps much of what is freed: over ten
/// reloads in a row of the 100k bench table, the bench process's resident
/// memory stayed about a third lower with this (docs/benchmarks.md,
/// "Searches answer from memory").
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's heap to the
    // system; it takes no pointers and is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
