//! Sessions: what each session carries between requests, in one place.
//!
//! - Its **sticky library**: the library (and version) its user last
//!   searched explicitly, so follow-up searches stay there. Held in memory,
//!   bounded in number and age; written to the store when it changes and
//!   read from there for a session id this process does not hold (another
//!   replica made it, or this process restarted): see
//!   [`crate::store::session_log`].
//! - Its **Ask history**: the last few questions and answers, sent with
//!   the next question so follow-ups make sense. In memory only: a restart
//!   forgets the conversation.
//!
//! One session id names both. Which library a search covers is decided by
//! [`super::scope`], purely; this file applies the change it asks for.

use std::sync::Arc;
use std::time::{Duration, Instant};

use index_core::search::Sticky;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

use super::scope::StickyChange;
use super::Engine;
use crate::ask::{History, Turn};

/// Sessions idle this long are forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// At most this many sessions are kept; the least recently used go first.
const MAX_SESSIONS: u64 = 10_000;

/// Longest session id a client may bring.
const MAX_ID_LEN: usize = 128;

/// Ask's exchanges kept per session: enough for follow-ups, small enough
/// that a small model's context still has room for the passages.
pub const MAX_TURNS: usize = 4;

/// Conversations idle this long are forgotten.
const CONVERSATION_IDLE_LIMIT: Duration = Duration::from_secs(3600);

/// At most this many conversations are kept; the least recently used go first.
const MAX_CONVERSATIONS: u64 = 10_000;

/// A per-session cache: at most `capacity` sessions, the least recently
/// used evicted first, each forgotten after `idle` unused.
fn session_cache<V>(capacity: u64, idle: Duration) -> Cache<String, V>
where
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(idle)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

/// Every live session: its sticky library, if any, and its Ask history.
///
/// Each is a bounded cache (moka) with least-recently-used eviction and an idle
/// limit: each call is O(1), where the map this replaced scanned every
/// session when full. LRU rather than moka's default admission policy,
/// which may refuse a new entry when full: a new session must always be
/// able to stick.
pub struct Sessions {
    inner: Cache<String, Entry>,
    conversations: Conversations,
    /// How long a session held here is trusted before it is read from the
    /// store again (the store's read-consistency interval).
    refresh: Duration,
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

/// A session a request runs in.
pub struct Session {
    pub id: String,
    /// Whether the client named it: only such a session is shared through
    /// the store. A request without one would otherwise write a session row
    /// (a commit) whenever it names a library; the id it gets back is
    /// written the first time the client brings it.
    shared: bool,
}

impl Sessions {
    /// Sessions held here, each trusted for `refresh` before it is read
    /// from the store again.
    pub fn new(refresh: Duration) -> Self {
        Self::with_capacity(MAX_SESSIONS, refresh)
    }

    fn with_capacity(capacity: u64, refresh: Duration) -> Self {
        Self {
            inner: session_cache(capacity, IDLE_LIMIT),
            conversations: Conversations {
                inner: session_cache(MAX_CONVERSATIONS, CONVERSATION_IDLE_LIMIT),
            },
            refresh,
        }
    }

    /// Each session's Ask history.
    pub fn conversations(&self) -> &Conversations {
        &self.conversations
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

    /// Applies what a search's scope decided for the session.
    pub fn change_sticky(&self, id: &str, change: StickyChange) {
        match change {
            StickyChange::Keep => {}
            StickyChange::Set(sticky) => self.set_sticky(id, Some(sticky)),
            StickyChange::Forget => self.set_sticky(id, None),
        }
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

/// Each session's last few Ask exchanges, oldest first.
pub struct Conversations {
    inner: Cache<String, Arc<Vec<Turn>>>,
}

impl History for Conversations {
    fn history(&self, session: &str) -> Arc<Vec<Turn>> {
        self.inner.get(session).unwrap_or_default()
    }

    /// Adds an exchange, dropping the oldest past [`MAX_TURNS`].
    fn remember(&self, session: &str, turn: Turn) {
        let mut turns = (*self.history(session)).clone();
        turns.push(turn);
        let excess = turns.len().saturating_sub(MAX_TURNS);
        turns.drain(..excess);
        self.inner.insert(session.to_owned(), Arc::new(turns));
    }

    fn forget(&self, session: &str) {
        self.inner.invalidate(session);
    }
}

impl Engine {
    /// The session's sticky library, if any and if the caller may read it.
    pub async fn sticky(
        &self,
        caller: &index_core::access::Caller,
        session_id: &str,
    ) -> Option<Sticky> {
        self.load_session(session_id).await;
        self.sessions
            .sticky(session_id)
            .filter(|s| Self::may_read(caller, &s.library))
    }

    /// Forgets the session's sticky library.
    pub async fn clear_sticky(&self, session_id: &str) {
        self.load_session(session_id).await;
        self.sessions.set_sticky(session_id, None);
        if !self.sessions.stored(session_id) {
            self.save_session(session_id, None).await;
        }
    }

    /// The session a request runs in: the client's, brought in from the
    /// store when another process may have changed it, or a new one.
    pub(super) async fn open_session(&self, given: Option<&str>) -> Session {
        let id = self.sessions.id_for(given);
        let shared = given == Some(id.as_str());
        if shared {
            self.load_session(&id).await;
        }
        Session { id, shared }
    }

    /// Writes what the request changed of a shared session to the store.
    pub(super) async fn close_session(&self, session: &Session) {
        if session.shared && !self.sessions.stored(&session.id) {
            let sticky = self.sessions.sticky(&session.id);
            self.save_session(&session.id, sticky).await;
        }
    }

    /// Brings a session this process does not hold in from the store, if
    /// another process (or this one before a restart) wrote it. A store
    /// that cannot be read leaves the session new here: a sticky library
    /// lost is a filter to type again, not a failed search.
    ///
    /// A session held here is trusted for the store's read-consistency
    /// interval, like everything else other processes write, then read
    /// again: a client whose searches alternate between replicas sees the
    /// library it set on one in the next search on the other.
    async fn load_session(&self, session_id: &str) {
        if self.sessions.fresh(session_id, self.sessions.refresh) {
            return;
        }
        match self.store.stored_sticky(session_id).await {
            Ok(Some(sticky)) => self.sessions.set_stored(session_id, sticky),
            Ok(None) => self.sessions.checked(session_id),
            Err(err) => tracing::warn!(%err, "cannot read the session from the store"),
        }
    }

    /// Writes a session's changed sticky library to the store (see
    /// [`crate::store::session_log`]); a failure is logged, as in
    /// [`Self::load_session`].
    async fn save_session(&self, session_id: &str, sticky: Option<Sticky>) {
        match self.store.save_sticky(session_id, sticky.as_ref()).await {
            Ok(()) => self.sessions.set_stored(session_id, sticky),
            Err(err) => {
                tracing::warn!(%err, "cannot write the session's sticky library to the store")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_when_sane_and_made_otherwise() {
        let s = Sessions::new(Duration::from_secs(2));
        assert_eq!(s.id_for(Some("abc-123")), "abc-123");
        assert_ne!(s.id_for(Some("bad id; drop")), "bad id; drop");
        assert_eq!(s.id_for(None).len(), 36);
    }

    #[test]
    fn sticky_is_set_read_and_cleared() {
        let s = Sessions::new(Duration::from_secs(2));
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
        let s = Sessions::with_capacity(100, Duration::from_secs(2));
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

    #[test]
    fn keeps_the_last_turns_per_session_and_forgets() {
        let s = Sessions::new(Duration::from_secs(2));
        let c = s.conversations();
        for n in 0..6 {
            c.remember(
                "s",
                Turn {
                    question: format!("q{n}"),
                    answer: format!("a{n}"),
                },
            );
        }
        let kept: Vec<_> = c.history("s").iter().map(|t| t.question.clone()).collect();
        assert_eq!(kept, ["q2", "q3", "q4", "q5"]);
        assert!(c.history("other").is_empty());
        c.forget("s");
        assert!(c.history("s").is_empty());
    }
}
