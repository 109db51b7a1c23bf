//! One writer at a time on an object store: a lease held in one object.
//!
//! Replicas on one bucket need what a local store gets from its lock file
//! (see [`super::writers`]): a writer replacing a document must merge
//! against what the previous writer committed, or two replacements of the
//! same document leave both versions' chunks. Object stores have no file
//! locks, but they have conditional writes, which Lance's own commits rely
//! on already: create an object only if it is absent (`If-None-Match: *`),
//! replace it only if its ETag is the one read (`If-Match`). The lease is
//! one small JSON object beside the tables, taken and handed back by those
//! two writes only, so exactly one replica holds it at a time.
//!
//! A holder renews the lease every quarter of its time to live, which
//! changes the object's ETag. A replica waiting for it treats the lease as
//! abandoned once it has seen the same ETag for a whole time to live by
//! its own clock: no two replicas' clocks are compared, so clock skew
//! cannot hand the lease to two writers. A holder killed mid-write delays
//! the others by at most that time (30 s by default); Lance's commit
//! protocol guarantees the dead writer's half-done commit never appears.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde::{Deserialize, Serialize};

/// How long a silent holder keeps the lease: several renewals must fail in
/// a row before another replica takes over.
pub const TIME_TO_LIVE: Duration = Duration::from_secs(30);

/// How often a waiting writer looks at the lease again. Each look is one
/// conditional PUT and one GET; a commit takes far longer.
const POLL: Duration = Duration::from_millis(50);

/// The lease object's content. Every write changes it (`beat`), so every
/// write changes its ETag.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// The process (store handle) holding or last holding it.
    owner: String,
    /// The one acquisition holding it: a process's next writer must not be
    /// released by its previous writer's late hand-back.
    holder: String,
    held: bool,
    beat: u64,
}

/// A writers' lease in `store` at `path`, for one process.
#[derive(Debug)]
pub struct Lease {
    store: Arc<dyn ObjectStore>,
    path: Path,
    owner: String,
    ttl: Duration,
}

/// Why the lease could not be taken: the object store failed.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("the object store failed on the writers' lease {path}: {source}")]
    Store {
        path: String,
        source: object_store::Error,
    },
    #[error("the object store returned no ETag for the writers' lease {0}: it cannot be held safely on this store")]
    NoETag(String),
}

/// The held lease. Dropping it stops the renewals and hands the lease back
/// in the background.
pub struct Held {
    lease: Arc<Lease>,
    holder: String,
    etag: Arc<Mutex<String>>,
    renewals: tokio::task::JoinHandle<()>,
}

impl Lease {
    /// A lease at `path` in `store`, owned by a new process identity.
    pub fn new(store: Arc<dyn ObjectStore>, path: Path) -> Self {
        Self {
            store,
            path,
            owner: uuid::Uuid::new_v4().to_string(),
            ttl: TIME_TO_LIVE,
        }
    }

    /// Where the lease lives in its store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same lease with another time to live (tests).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Waits until this process holds the lease. Call it with the
    /// process's own writers already serialised (one acquisition at a
    /// time per `Lease`).
    pub async fn acquire(self: &Arc<Self>) -> Result<Held, LeaseError> {
        let holder = uuid::Uuid::new_v4().to_string();
        // The ETag last seen on someone else's lease and since when.
        let mut seen: Option<(String, Instant)> = None;
        loop {
            match self.write(&holder, true, 0, PutMode::Create).await {
                Ok(etag) => return Ok(self.held(holder, etag)),
                Err(object_store::Error::AlreadyExists { .. }) => {}
                Err(source) => return Err(self.failed(source)),
            }
            let current = match self.store.get(&self.path).await {
                Ok(current) => current,
                // Lease objects are never deleted; one removed by hand is
                // simply created again.
                Err(object_store::Error::NotFound { .. }) => continue,
                Err(source) => return Err(self.failed(source)),
            };
            let etag = current.meta.e_tag.clone();
            let bytes = current.bytes().await.map_err(|e| self.failed(e))?;
            let record: Option<Record> = serde_json::from_slice(&bytes).ok();
            let Some(etag) = etag else {
                return Err(LeaseError::NoETag(self.path.to_string()));
            };
            let abandoned = match &seen {
                Some((last, since)) if *last == etag => since.elapsed() >= self.ttl,
                _ => {
                    seen = Some((etag.clone(), Instant::now()));
                    false
                }
            };
            // Free, or left by this process's previous writer (whose
            // hand-back may still be on its way), or abandoned.
            let free = record
                .as_ref()
                .is_some_and(|r| !r.held || r.owner == self.owner);
            if free || abandoned {
                let beat = record.as_ref().map_or(0, |r| r.beat + 1);
                match self.write(&holder, true, beat, update(etag)).await {
                    Ok(etag) => {
                        if abandoned && !free {
                            tracing::warn!(
                                path = %self.path,
                                previous = record.as_ref().map(|r| r.owner.as_str()),
                                "took over the writers' lease: its holder stopped renewing it"
                            );
                        }
                        return Ok(self.held(holder, etag));
                    }
                    // Another replica took it first.
                    Err(object_store::Error::Precondition { .. }) => {
                        seen = None;
                        continue;
                    }
                    Err(source) => return Err(self.failed(source)),
                }
            }
            tokio::time::sleep(POLL).await;
        }
    }

    fn held(self: &Arc<Self>, holder: String, etag: String) -> Held {
        let etag = Arc::new(Mutex::new(etag));
        let renewals = tokio::spawn(renew(self.clone(), holder.clone(), etag.clone()));
        Held {
            lease: self.clone(),
            holder,
            etag,
            renewals,
        }
    }

    /// Writes the record in `mode` and returns the new ETag.
    async fn write(
        &self,
        holder: &str,
        held: bool,
        beat: u64,
        mode: PutMode,
    ) -> Result<String, object_store::Error> {
        let record = Record {
            owner: self.owner.clone(),
            holder: holder.to_owned(),
            held,
            beat,
        };
        let body = serde_json::to_vec(&record).map_err(|err| object_store::Error::Generic {
            store: "lease",
            source: Box::new(err),
        })?;
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let written = self
            .store
            .put_opts(&self.path, PutPayload::from(body), options)
            .await?;
        written.e_tag.ok_or_else(|| object_store::Error::Generic {
            store: "lease",
            source: "the store returned no ETag".into(),
        })
    }

    fn failed(&self, source: object_store::Error) -> LeaseError {
        LeaseError::Store {
            path: self.path.to_string(),
            source,
        }
    }
}

fn update(etag: String) -> PutMode {
    PutMode::Update(UpdateVersion {
        e_tag: Some(etag),
        version: None,
    })
}

/// Renews the lease every quarter of its time to live until aborted. A
/// renewal that finds the lease changed under it stops: another replica
/// decided this one had stopped (it was stalled for a whole time to live).
async fn renew(lease: Arc<Lease>, holder: String, etag: Arc<Mutex<String>>) {
    let mut beat = 1;
    loop {
        tokio::time::sleep(lease.ttl / 4).await;
        let current = lock(&etag).clone();
        match lease.write(&holder, true, beat, update(current)).await {
            Ok(next) => *lock(&etag) = next,
            Err(object_store::Error::Precondition { .. }) => {
                tracing::error!(path = %lease.path, "lost the writers' lease: another replica took it while this one was writing");
                return;
            }
            Err(err) => {
                tracing::warn!(path = %lease.path, %err, "could not renew the writers' lease; trying again")
            }
        }
        beat += 1;
    }
}

fn lock(etag: &Mutex<String>) -> std::sync::MutexGuard<'_, String> {
    etag.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Held {
    /// Hands the lease back: marks it free, if it is still this holder's.
    async fn release(lease: Arc<Lease>, holder: String, etag: String) {
        let mut etag = etag;
        // Twice at most: a renewal cut short by the abort may have been
        // applied, changing the ETag under this hand-back.
        for _ in 0..2 {
            match lease.write(&holder, false, 0, update(etag.clone())).await {
                Ok(_) => return,
                Err(object_store::Error::Precondition { .. }) => {}
                Err(err) => {
                    tracing::warn!(path = %lease.path, %err, "could not hand the writers' lease back; others take it once it goes stale");
                    return;
                }
            }
            let Ok(current) = lease.store.get(&lease.path).await else {
                return;
            };
            let Some(next) = current.meta.e_tag.clone() else {
                return;
            };
            let Ok(bytes) = current.bytes().await else {
                return;
            };
            match serde_json::from_slice::<Record>(&bytes) {
                Ok(record) if record.held && record.holder == holder => etag = next,
                // Taken by someone else (or this process's next writer).
                _ => return,
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.renewals.abort();
        let etag = lock(&self.etag).clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(Self::release(
                    self.lease.clone(),
                    std::mem::take(&mut self.holder),
                    etag,
                ));
            }
            Err(_) => tracing::warn!(
                path = %self.lease.path,
                "no runtime to hand the writers' lease back: others take it once it goes stale"
            ),
        }
    }
}
