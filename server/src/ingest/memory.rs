//! The memory budget for extraction, shared by every running job.
//!
//! Archive limits bound one upload, not many at once: a nested ZIP that was
//! refused in the end still held its text while it was examined, and a few
//! at once took the server up by gigabytes (docs/benchmarks.md, 2026-11-26,
//! "Memory under hostile uploads"; `make bench-hostile`). So every byte an
//! extraction holds (uploads waiting to be read, entries as they inflate,
//! nested archives, the documents' text until the job is done with them) is
//! reserved from one [`MemoryBudget`] first:
//!
//! - an upload reserves its own size when it is accepted, and is refused
//!   with `busy` (503, `Retry-After`) when that is not free at once;
//! - each file reserves what its headers declare before it is extracted,
//!   waiting at most [`RESERVE_WAIT`] for it, and holding nothing while it
//!   waits: a file that needs most of the budget must not shut every
//!   other upload out while it waits for the rest;
//! - a file that needs more than the whole budget could ever give it is
//!   refused at once (413 when it is uploaded), never after a wait;
//! - past that, extraction asks as it inflates (`ingest_core::extract::
//!   MemoryGauge`), without waiting: a file that would need more than is
//!   free fails with a reason that says so, and holds nothing more.
//!
//! The budget counts KiB in a tokio semaphore, taken whole or not at all
//! (a waiter tries again each time memory is given back), and a
//! reservation gives its part back when dropped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

/// How long a file waits for the memory its extraction declares before it
/// fails: long enough for another upload's extraction to end, short enough
/// that a job never hangs on a server flooded with archives.
pub const RESERVE_WAIT: Duration = Duration::from_secs(60);

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// Why memory could not be reserved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// More than the whole budget: waiting would not help.
    #[error("it needs {needed} MiB of memory to extract, more than the server's extraction budget of {budget} MiB (--extract-memory-mib); upload it in smaller parts")]
    TooLarge { needed: u64, budget: u64 },
    /// Not free now: other uploads hold it.
    #[error("the server's memory for extraction ({budget} MiB, --extract-memory-mib) is in use by other uploads; {needed} MiB more were needed; try again in a moment")]
    Busy { needed: u64, budget: u64 },
}

/// The memory every extraction draws on, in KiB.
#[derive(Debug, Clone)]
pub struct MemoryBudget {
    permits: Arc<Semaphore>,
    /// Woken whenever memory is given back, for reservations waiting.
    released: Arc<Notify>,
    total_kib: u64,
}

impl MemoryBudget {
    /// A budget of `bytes` (at least 1 MiB).
    pub fn new(bytes: u64) -> Self {
        let total_kib = (bytes / KIB).clamp(1024, Semaphore::MAX_PERMITS as u64);
        Self {
            permits: Arc::new(Semaphore::new(total_kib as usize)),
            released: Arc::new(Notify::new()),
            total_kib,
        }
    }

    /// The whole budget, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.total_kib * KIB
    }

    /// What is free now, in bytes.
    pub fn free_bytes(&self) -> u64 {
        self.permits.available_permits() as u64 * KIB
    }

    /// Reserves `bytes` if they are free now.
    pub fn try_reserve(&self, bytes: u64) -> Result<Reservation, MemoryError> {
        let kib = self.kib_of(bytes)?;
        match self.permits.clone().try_acquire_many_owned(kib) {
            Ok(permit) => Ok(self.held(permit)),
            Err(_) => Err(self.busy(bytes)),
        }
    }

    /// Reserves `bytes`, waiting up to `wait` for them to be free. Nothing
    /// is held while it waits (a semaphore's waiter would collect permits
    /// as they come back, and keep every smaller upload out meanwhile):
    /// it takes all of them at once, when they are free, or none.
    pub async fn reserve(&self, bytes: u64, wait: Duration) -> Result<Reservation, MemoryError> {
        let kib = self.kib_of(bytes)?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Listening before trying, so a release between the two wakes it.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if let Ok(permit) = self.permits.clone().try_acquire_many_owned(kib) {
                return Ok(self.held(permit));
            }
            if tokio::time::timeout_at(deadline, released).await.is_err() {
                return Err(self.busy(bytes));
            }
        }
    }

    /// Whether `bytes` can ever be reserved while `held` of the budget
    /// stays taken by the same caller (an upload's own bytes, held until
    /// its job ends): if not, waiting would never help.
    pub fn fits_beside(&self, bytes: u64, held: u64) -> Result<(), MemoryError> {
        let needed = bytes.saturating_add(held);
        if needed > self.total_bytes() {
            return Err(MemoryError::TooLarge {
                needed: needed.div_ceil(MIB),
                budget: self.total_kib / 1024,
            });
        }
        Ok(())
    }

    /// Gives `kib` back to the budget and wakes the reservations waiting.
    fn give_back(&self, kib: u64) {
        if kib > 0 {
            self.permits.add_permits(kib as usize);
            self.released.notify_waiters();
        }
    }

    fn kib_of(&self, bytes: u64) -> Result<u32, MemoryError> {
        let kib = bytes.div_ceil(KIB);
        if kib > self.total_kib {
            return Err(MemoryError::TooLarge {
                needed: bytes.div_ceil(MIB),
                budget: self.total_kib / 1024,
            });
        }
        // The whole budget fits a u32 of KiB unless it is over 4 TiB.
        Ok(u32::try_from(kib).unwrap_or(u32::MAX))
    }

    fn busy(&self, bytes: u64) -> MemoryError {
        MemoryError::Busy {
            needed: bytes.div_ceil(MIB),
            budget: self.total_kib / 1024,
        }
    }

    /// What was reserved is a pool the extraction's gauge draws on first:
    /// nothing of it is in use yet.
    fn held(&self, permit: tokio::sync::OwnedSemaphorePermit) -> Reservation {
        let kib = permit.num_permits() as u64;
        // Counted by hand from here, so it can grow and shrink by any amount.
        permit.forget();
        Reservation {
            budget: self.clone(),
            held_kib: kib,
            floor_kib: kib,
            used: 0,
        }
    }
}

/// Memory reserved from a [`MemoryBudget`], given back when dropped.
///
/// It is the extraction's `MemoryGauge`: it grants from what it holds,
/// takes more from the budget without waiting, and gives back what it no
/// longer needs beyond what it first reserved.
#[derive(Debug)]
pub struct Reservation {
    budget: MemoryBudget,
    held_kib: u64,
    /// What was reserved at first: kept until the reservation is dropped,
    /// so an extraction that shrinks and grows again does not race others.
    floor_kib: u64,
    /// Bytes in use, out of what is held.
    used: u64,
}

impl Reservation {
    /// Bytes held from the budget.
    pub fn held_bytes(&self) -> u64 {
        self.held_kib * KIB
    }

    /// Keeps only `bytes` (what the extraction's result still holds, its
    /// text), giving the rest back now rather than when the job moves on.
    pub fn shrink_to(&mut self, bytes: u64) {
        self.used = bytes;
        self.floor_kib = 0;
        self.release_surplus();
    }

    fn release_surplus(&mut self) {
        let keep = self.used.div_ceil(KIB).max(self.floor_kib);
        if self.held_kib > keep {
            let surplus = self.held_kib - keep;
            self.held_kib = keep;
            self.budget.give_back(surplus);
        }
    }
}

impl ingest_core::extract::MemoryGauge for Reservation {
    fn grow(&mut self, bytes: u64) -> Result<(), String> {
        let used = self.used.saturating_add(bytes);
        let need_kib = used.div_ceil(KIB);
        if need_kib > self.held_kib {
            let more = need_kib - self.held_kib;
            let permits =
                u32::try_from(more).map_err(|_| self.budget.busy(more * KIB).to_string())?;
            let taken = self
                .budget
                .permits
                .clone()
                .try_acquire_many_owned(permits)
                .map_err(|_| {
                    if need_kib > self.budget.total_kib {
                        MemoryError::TooLarge {
                            needed: used.div_ceil(MIB),
                            budget: self.budget.total_kib / 1024,
                        }
                    } else {
                        self.budget.busy(more * KIB)
                    }
                    .to_string()
                })?;
            taken.forget();
            self.held_kib = need_kib;
        }
        self.used = used;
        Ok(())
    }

    fn shrink(&mut self, bytes: u64) {
        self.used = self.used.saturating_sub(bytes);
        self.release_surplus();
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.give_back(self.held_kib);
    }
}

/// The default budget: an eighth of the machine's memory, between 256 MiB
/// and 2 GiB. An eighth leaves the rest to the store's in-memory copy, the
/// model and searches; 2 GiB is several of the largest uploads the other
/// limits allow (an archive keeps at most 256 MiB of text), so a larger
/// machine gains nothing from more, and a small one keeps its memory.
pub fn default_budget_mib() -> u64 {
    let total = crate::machine::memory_bytes().unwrap_or(8 * 1024 * MIB);
    (total / 8 / MIB).clamp(256, 2048)
}

#[cfg(test)]
mod tests {
    use ingest_core::extract::MemoryGauge;

    use super::*;

    #[tokio::test]
    async fn reservations_share_one_budget_and_give_it_back() {
        let budget = MemoryBudget::new(4 * MIB);
        let a = budget.try_reserve(3 * MIB).expect("free");
        assert_eq!(budget.free_bytes(), MIB);
        let err = budget.try_reserve(2 * MIB).unwrap_err();
        assert!(
            matches!(
                err,
                MemoryError::Busy {
                    needed: 2,
                    budget: 4
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("try again"));
        drop(a);
        assert_eq!(budget.free_bytes(), 4 * MIB);
        assert!(budget.try_reserve(2 * MIB).is_ok());
    }

    #[tokio::test]
    async fn more_than_the_whole_budget_is_refused_without_waiting() {
        let budget = MemoryBudget::new(4 * MIB);
        let err = budget
            .reserve(5 * MIB, Duration::from_secs(3600))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            MemoryError::TooLarge {
                needed: 5,
                budget: 4
            }
        );
    }

    #[tokio::test]
    async fn a_waiting_reservation_gets_what_another_gives_back() {
        let budget = MemoryBudget::new(4 * MIB);
        let first = budget.try_reserve(4 * MIB).expect("free");
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.reserve(2 * MIB, Duration::from_secs(3600)).await })
        };
        tokio::task::yield_now().await;
        drop(first);
        let second = waiting.await.expect("joined").expect("reserved once freed");
        assert_eq!(second.held_bytes(), 2 * MIB);
    }

    #[tokio::test]
    async fn a_waiting_reservation_holds_nothing_while_it_waits() {
        let budget = MemoryBudget::new(4 * MIB);
        let first = budget.try_reserve(MIB).expect("free");
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.reserve(4 * MIB, Duration::from_secs(3600)).await })
        };
        tokio::task::yield_now().await;
        // The large one waits for all of the budget; smaller uploads still
        // get what is free meanwhile.
        let small = budget.try_reserve(2 * MIB).expect("free beside a waiter");
        assert_eq!(budget.free_bytes(), MIB);
        drop(small);
        assert!(!waiting.is_finished());
        drop(first);
        let all = waiting
            .await
            .expect("joined")
            .expect("reserved once all is free");
        assert_eq!(all.held_bytes(), 4 * MIB);
    }

    #[test]
    fn a_need_past_what_the_budget_can_ever_give_is_too_large() {
        let budget = MemoryBudget::new(4 * MIB);
        assert!(budget.fits_beside(3 * MIB, MIB).is_ok());
        let err = budget.fits_beside(4 * MIB, MIB).unwrap_err();
        assert_eq!(
            err,
            MemoryError::TooLarge {
                needed: 5,
                budget: 4
            }
        );
    }

    #[tokio::test]
    async fn a_wait_is_bounded() {
        let budget = MemoryBudget::new(4 * MIB);
        let _all = budget.try_reserve(4 * MIB).expect("free");
        // Nothing gives memory back: the wait ends with a refusal.
        let err = budget
            .reserve(MIB, Duration::from_millis(10))
            .await
            .unwrap_err();
        assert!(matches!(err, MemoryError::Busy { .. }));
    }

    #[tokio::test]
    async fn a_gauge_grows_from_the_budget_and_shrinks_back_to_its_floor() {
        let budget = MemoryBudget::new(8 * MIB);
        let mut gauge = budget.try_reserve(2 * MIB).expect("free");
        gauge.shrink(2 * MIB);
        // Within what it holds: nothing more is taken.
        gauge.grow(2 * MIB).expect("held");
        assert_eq!(budget.free_bytes(), 6 * MIB);
        gauge.grow(3 * MIB).expect("free in the budget");
        assert_eq!(budget.free_bytes(), 3 * MIB);
        let other = budget.try_reserve(3 * MIB).expect("free");
        let err = gauge.grow(MIB).unwrap_err();
        assert!(err.contains("in use by other uploads"), "{err}");
        drop(other);
        // What it no longer uses goes back, down to what it reserved first.
        gauge.shrink(4 * MIB);
        assert_eq!(budget.free_bytes(), 6 * MIB);
        gauge.shrink_to(MIB / 2);
        assert_eq!(budget.free_bytes(), 8 * MIB - MIB / 2);
        drop(gauge);
        assert_eq!(budget.free_bytes(), 8 * MIB);
        assert!(default_budget_mib() >= 256);
    }
}
