//! Sticky library context: each session remembers the library (and version)
//! its user last searched explicitly, so follow-up questions stay there.
//!
//! Sessions live in memory, bounded in number and age. The engine also
//! writes a session's sticky library to the store when it changes, and
//! reads it from there for a session id it does not hold (another replica
//! made it, or this process restarted): see `store::session_log`.

use std::time::{Duration, Instant};

use index_core::search::Sticky;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

/// Sessions idle this long are forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// At most this many sessions are kept; the least recently used go first.
const MAX_SESSIONS: u64 = 10_000;

/// Longest session id a client may bring.
const MAX_ID_LEN: usize = 128;

/// A per-session cache: at most `capacity` sessions, the least recently
/// used evicted first, each forgotten after `idle` unused. Shared with
/// Ask's conversations, which the same session id names.
pub(crate) fn session_cache<V>(capacity: u64, idle: Duration) -> Cache<String, V>
where
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(idle)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

/// Every live session: its sticky library, if any.
///
/// A bounded cache (moka) with least-recently-used eviction and an idle
/// limit: each call is O(1), where the map this replaced scanned every
/// session when full. LRU rather than moka's default admission policy,
/// which may refuse a new entry when full: a new session must always be
/// able to stick.
pub struct Sessions {
    inner: Cache<String, Entry>,
}

/// A session as this process knows it.
#[derive(Clone)]
struct Entry {
    sticky: Option<Sticky>,
    /// When it was last set here or read from the store.
    checked: Instant,
    /// Whether the store holds this sticky library.
    stored: bool,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::with_capacity(MAX_SESSIONS)
    }
}

impl Sessions {
    fn with_capacity(capacity: u64) -> Self {
        Self {
            inner: session_cache(capacity, IDLE_LIMIT),
        }
    }

    /// A usable session id: the client's, when it is sensible, else a new one.
    pub fn id_for(&self, given: Option<&str>) -> String {
        match given.map(str::trim) {
            Some(id)
                if !id.is_empty()
                    && id.len() <= MAX_ID_LEN
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) =>
            {
                id.to_owned()
            }
            _ => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// Whether this process set the session, or read it from the store,
    /// less than `max_age` ago: another process's change to it may be
    /// missed for that long.
    pub fn fresh(&self, id: &str, max_age: Duration) -> bool {
        self.inner
            .get(id)
            .is_some_and(|entry| entry.checked.elapsed() < max_age)
    }

    /// Notes that the session was just checked against the store and found
    /// unchanged (or never written), keeping what this process holds.
    pub fn checked(&self, id: &str) {
        let entry = self.inner.get(id);
        self.inner.insert(
            id.to_owned(),
            Entry {
                sticky: entry.as_ref().and_then(|e| e.sticky.clone()),
                checked: Instant::now(),
                // Not held here: nothing to write (no row is no library).
                stored: entry.is_none_or(|e| e.stored),
            },
        );
    }

    /// Whether the session's sticky library is in the store as this
    /// process holds it (a session it does not hold is: it has nothing).
    pub fn stored(&self, id: &str) -> bool {
        self.inner.get(id).is_none_or(|e| e.stored)
    }

    /// Sets the session's sticky library as read from, or just written
    /// to, the store.
    pub fn set_stored(&self, id: &str, sticky: Option<Sticky>) {
        self.inner.insert(
            id.to_owned(),
            Entry {
                sticky,
                checked: Instant::now(),
                stored: true,
            },
        );
    }

    /// The session's sticky library, if any (reading it keeps the session).
    pub fn sticky(&self, id: &str) -> Option<Sticky> {
        self.inner.get(id).and_then(|entry| entry.sticky)
    }

    /// Sets (or with `None`, clears) the session's sticky library.
    pub fn set_sticky(&self, id: &str, sticky: Option<Sticky>) {
        let stored = match self.inner.get(id) {
            Some(e) => e.stored && e.sticky == sticky,
            None => sticky.is_none(),
        };
        self.inner.insert(
            id.to_owned(),
            Entry {
                sticky,
                checked: Instant::now(),
                stored,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_when_sane_and_made_otherwise() {
        let s = Sessions::default();
        assert_eq!(s.id_for(Some("abc-123")), "abc-123");
        assert_ne!(s.id_for(Some("bad id; drop")), "bad id; drop");
        assert_eq!(s.id_for(None).len(), 36);
    }

    #[test]
    fn sticky_is_set_read_and_cleared() {
        let s = Sessions::default();
        assert_eq!(s.sticky("a"), None);
        let react = Sticky {
            library: "react".into(),
            version: None,
        };
        s.set_sticky("a", Some(react.clone()));
        assert_eq!(s.sticky("a"), Some(react));
        assert_eq!(s.sticky("b"), None);
        s.set_sticky("a", None);
        assert_eq!(s.sticky("a"), None);
    }

    #[test]
    fn a_full_table_forgets_the_least_recently_used_and_keeps_new_ones() {
        let s = Sessions::with_capacity(100);
        let sticky = |n: usize| {
            Some(Sticky {
                library: format!("lib{n}"),
                version: None,
            })
        };
        for n in 0..1000 {
            s.set_sticky(&format!("s{n}"), sticky(n));
            // The newest session always sticks.
            assert_eq!(s.sticky(&format!("s{n}")), sticky(n));
        }
        s.inner.run_pending_tasks();
        assert!(s.inner.entry_count() <= 100, "{}", s.inner.entry_count());
        assert_eq!(s.sticky("s0"), None);
    }
}
