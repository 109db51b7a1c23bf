//! Sticky library context: each session remembers the library (and version)
//! its user last searched explicitly, so follow-up questions stay there.
//!
//! Sessions live in memory, bounded in number and age: losing them on a
//! restart costs a user one re-typed filter, and keeping them out of the
//! store keeps searches read-only.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use index_core::search::Sticky;

/// Sessions idle this long are forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// At most this many sessions are kept; the least recently used go first.
const MAX_SESSIONS: usize = 10_000;

/// Longest session id a client may bring.
const MAX_ID_LEN: usize = 128;

#[derive(Debug)]
struct Session {
    sticky: Option<Sticky>,
    seen: Instant,
}

/// Every live session.
#[derive(Debug, Default)]
pub struct Sessions {
    inner: Mutex<HashMap<String, Session>>,
}

impl Sessions {
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

    /// The session's sticky library, if any.
    pub fn sticky(&self, id: &str) -> Option<Sticky> {
        let mut map = self.lock();
        let session = map.get_mut(id)?;
        if session.seen.elapsed() > IDLE_LIMIT {
            map.remove(id);
            return None;
        }
        session.seen = Instant::now();
        session.sticky.clone()
    }

    /// Sets (or with `None`, clears) the session's sticky library.
    pub fn set_sticky(&self, id: &str, sticky: Option<Sticky>) {
        let mut map = self.lock();
        if map.len() >= MAX_SESSIONS && !map.contains_key(id) {
            map.retain(|_, s| s.seen.elapsed() <= IDLE_LIMIT);
            if map.len() >= MAX_SESSIONS {
                if let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, s)| s.seen)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&oldest);
                }
            }
        }
        map.insert(
            id.to_owned(),
            Session {
                sticky,
                seen: Instant::now(),
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock leaves a map that is still valid.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
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
}
