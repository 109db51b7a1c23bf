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
//!   forgets the conversation ([`super::conversations`]).
//!
//! One session id names both. Which library a search covers is decided by
//! [`super::scope`], purely; this file applies the change it asks for.
//!
//! A session belongs to the caller that made it ([`SessionKey`]: the
//! caller's [`Caller::id`] and the id the client brought). Another caller
//! that brings the same id is in a session of its own, new to it: it
//! neither sees nor changes the first caller's sticky library or
//! conversation, and nothing in its answers differs from those for an id
//! never used. A session id is a name a client picks or is handed, not a
//! secret; who may read what it holds is the caller's identity, decided
//! once per request ([`Caller`]).

use std::time::{Duration, Instant};

use index_core::access::Caller;
use index_core::search::Sticky;
use moka::sync::Cache;

use super::conversations::Conversations;
use super::scope::StickyChange;
use super::session_key::{session_cache, SessionKey};
use super::Engine;

/// Sessions idle this long are forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// At most this many sessions are kept; the least recently used go first.
const MAX_SESSIONS: u64 = 10_000;

/// Longest session id a client may bring.
const MAX_ID_LEN: usize = 128;

/// Every live session: its sticky library, if any, and its Ask history.
///
/// Each is a bounded cache (moka) with least-recently-used eviction and an idle
/// limit: each call is O(1), where the map this replaced scanned every
/// session when full. LRU rather than moka's default admission policy,
/// which may refuse a new entry when full: a new session must always be
/// able to stick.
pub struct Sessions {
    inner: Cache<SessionKey, Entry>,
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
    pub key: SessionKey,
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
            conversations: Conversations::new(),
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
    pub fn fresh(&self, key: &SessionKey, max_age: Duration) -> bool {
        self.inner
            .get(key)
            .is_some_and(|entry| entry.checked.elapsed() < max_age)
    }

    /// Notes that the session was just checked against the store and found
    /// unchanged (or never written), keeping what this process holds.
    pub fn checked(&self, key: &SessionKey) {
        let entry = self.inner.get(key);
        self.inner.insert(
            key.clone(),
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
    pub fn stored(&self, key: &SessionKey) -> bool {
        self.inner.get(key).is_none_or(|e| e.stored)
    }

    /// Sets the session's sticky library as read from, or just written
    /// to, the store.
    pub fn set_stored(&self, key: &SessionKey, sticky: Option<Sticky>) {
        self.inner.insert(
            key.clone(),
            Entry {
                sticky,
                checked: Instant::now(),
                stored: true,
            },
        );
    }

    /// The session's sticky library, if any (reading it keeps the session).
    pub fn sticky(&self, key: &SessionKey) -> Option<Sticky> {
        self.inner.get(key).and_then(|entry| entry.sticky)
    }

    /// Applies what a search's scope decided for the session.
    pub fn change_sticky(&self, key: &SessionKey, change: StickyChange) {
        match change {
            StickyChange::Keep => {}
            StickyChange::Set(sticky) => self.set_sticky(key, Some(sticky)),
            StickyChange::Forget => self.set_sticky(key, None),
        }
    }

    /// Sets (or with `None`, clears) the session's sticky library.
    pub fn set_sticky(&self, key: &SessionKey, sticky: Option<Sticky>) {
        let stored = match self.inner.get(key) {
            Some(e) => e.stored && e.sticky == sticky,
            None => sticky.is_none(),
        };
        self.inner.insert(
            key.clone(),
            Entry {
                sticky,
                checked: Instant::now(),
                stored,
            },
        );
    }
}

impl Engine {
    /// The caller's session's sticky library, if any and if the caller
    /// may read it.
    pub async fn sticky(&self, caller: &Caller, session_id: &str) -> Option<Sticky> {
        let key = SessionKey::new(caller, session_id);
        self.load_session(&key).await;
        self.sessions
            .sticky(&key)
            .filter(|s| Self::may_read(caller, &s.library))
    }

    /// Forgets the caller's session's sticky library.
    pub async fn clear_sticky(&self, caller: &Caller, session_id: &str) {
        let key = SessionKey::new(caller, session_id);
        self.load_session(&key).await;
        self.sessions.set_sticky(&key, None);
        if !self.sessions.stored(&key) {
            self.save_session(&key, None).await;
        }
    }

    /// The caller's session a request runs in: the client's, brought in
    /// from the store when another process may have changed it, or a new
    /// one.
    pub(super) async fn open_session(&self, caller: &Caller, given: Option<&str>) -> Session {
        let id = self.sessions.id_for(given);
        let shared = given == Some(id.as_str());
        let key = SessionKey::new(caller, &id);
        if shared {
            self.load_session(&key).await;
        }
        Session { key, shared }
    }

    /// Writes what the request changed of a shared session to the store.
    pub(super) async fn close_session(&self, session: &Session) {
        if session.shared && !self.sessions.stored(&session.key) {
            let sticky = self.sessions.sticky(&session.key);
            self.save_session(&session.key, sticky).await;
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
    async fn load_session(&self, key: &SessionKey) {
        if self.sessions.fresh(key, self.sessions.refresh) {
            return;
        }
        match self.store.stored_sticky(key.owner(), key.id()).await {
            Ok(Some(sticky)) => self.sessions.set_stored(key, sticky),
            Ok(None) => self.sessions.checked(key),
            Err(err) => tracing::warn!(%err, "cannot read the session from the store"),
        }
    }

    /// Writes a session's changed sticky library to the store (see
    /// [`crate::store::session_log`]); a failure is logged, as in
    /// [`Self::load_session`].
    async fn save_session(&self, key: &SessionKey, sticky: Option<Sticky>) {
        match self
            .store
            .save_sticky(key.owner(), key.id(), sticky.as_ref())
            .await
        {
            Ok(()) => self.sessions.set_stored(key, sticky),
            Err(err) => {
                tracing::warn!(%err, "cannot write the session's sticky library to the store")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use index_core::access::Permissions;

    use super::*;

    fn caller(id: &str) -> Caller {
        Caller {
            name: "reader".into(),
            id: id.into(),
            permissions: Permissions::read_all(),
            signed_in: true,
            tokens_required: true,
        }
    }

    fn key(id: &str) -> SessionKey {
        SessionKey::new(&caller("owner"), id)
    }

    fn sticky(library: &str) -> Option<Sticky> {
        Some(Sticky {
            library: library.into(),
            version: None,
        })
    }

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
        assert_eq!(s.sticky(&key("a")), None);
        s.set_sticky(&key("a"), sticky("react"));
        assert_eq!(s.sticky(&key("a")), sticky("react"));
        assert_eq!(s.sticky(&key("b")), None);
        s.set_sticky(&key("a"), None);
        assert_eq!(s.sticky(&key("a")), None);
    }

    #[test]
    fn another_callers_session_of_the_same_id_is_a_session_of_its_own() {
        let s = Sessions::new(Duration::from_secs(2));
        let (admin, reader) = (caller("admin"), caller("0123abcd"));
        let theirs = SessionKey::new(&admin, "shared-id");
        let mine = SessionKey::new(&reader, "shared-id");
        s.set_sticky(&theirs, sticky("hidden"));
        assert_eq!(s.sticky(&mine), None);
        assert!(!s.fresh(&mine, Duration::from_secs(60)));
        // What the second caller sets stays its own, both ways.
        s.set_sticky(&mine, sticky("alpha"));
        assert_eq!(s.sticky(&theirs), sticky("hidden"));
        s.set_sticky(&mine, None);
        assert_eq!(s.sticky(&theirs), sticky("hidden"));
    }

    #[test]
    fn a_full_table_forgets_the_least_recently_used_and_keeps_new_ones() {
        let s = Sessions::with_capacity(100, Duration::from_secs(2));
        let library = |n: usize| sticky(&format!("lib{n}"));
        for n in 0..1000 {
            s.set_sticky(&key(&format!("s{n}")), library(n));
            // The newest session always sticks.
            assert_eq!(s.sticky(&key(&format!("s{n}"))), library(n));
        }
        s.inner.run_pending_tasks();
        assert!(s.inner.entry_count() <= 100, "{}", s.inner.entry_count());
        assert_eq!(s.sticky(&key("s0")), None);
    }
}
