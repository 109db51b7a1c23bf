//! What names a session: the caller that made it and the id its client
//! brings ([`SessionKey`]), and the bounded cache each per-session table is
//! kept in. Shared by the sticky libraries (`sessions`) and Ask's
//! conversations (`conversations`).
//!
//! The owner is part of the key, not a check made after a lookup: another
//! caller's session of the same id is simply not there for this one, so no
//! path through the code can tell the two apart or hand one to the other.

use std::time::Duration;

use index_core::access::Caller;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

/// A session as its owner names it. Two callers bringing one id are in
/// two sessions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey {
    /// The [`Caller::id`] of the caller that made it.
    owner: String,
    /// The id the client brings back.
    id: String,
}

impl SessionKey {
    /// `caller`'s session `id`.
    pub fn new(caller: &Caller, id: &str) -> Self {
        Self::owned_by(&caller.id, id)
    }

    /// The session `id` of the caller whose [`Caller::id`] is `owner`.
    pub(super) fn owned_by(owner: &str, id: &str) -> Self {
        Self {
            owner: owner.to_owned(),
            id: id.to_owned(),
        }
    }

    /// The id the client brings back.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The [`Caller::id`] of the caller that made it.
    pub fn owner(&self) -> &str {
        &self.owner
    }
}

/// A per-session cache: at most `capacity` sessions, the least recently
/// used evicted first, each forgotten after `idle` unused.
pub(super) fn session_cache<V>(capacity: u64, idle: Duration) -> Cache<SessionKey, V>
where
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(idle)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}
