//! Ask's conversations: each session's last few questions and answers,
//! sent with the next question so follow-ups make sense. In memory only: a
//! restart forgets them, and another replica does not have them.
//!
//! A conversation is its caller's ([`SessionKey`]): Ask names a session by
//! the id alone, and is handed the history of the caller it answers
//! ([`Conversations::of`]), so a question in another caller's session id
//! starts a conversation of its own and is told nothing of the first.

use std::sync::Arc;
use std::time::Duration;

use index_core::access::Caller;
use moka::sync::Cache;

use super::session_key::{session_cache, SessionKey};
use crate::ask::{History, Turn};

/// Ask's exchanges kept per session: enough for follow-ups, small enough
/// that a small model's context still has room for the passages.
pub const MAX_TURNS: usize = 4;

/// Conversations idle this long are forgotten.
const CONVERSATION_IDLE_LIMIT: Duration = Duration::from_secs(3600);

/// At most this many conversations are kept; the least recently used go first.
const MAX_CONVERSATIONS: u64 = 10_000;

/// Each session's last few Ask exchanges, oldest first.
pub struct Conversations {
    inner: Cache<SessionKey, Arc<Vec<Turn>>>,
}

impl Conversations {
    pub(super) fn new() -> Self {
        Self {
            inner: session_cache(MAX_CONVERSATIONS, CONVERSATION_IDLE_LIMIT),
        }
    }

    /// The conversations of `caller`'s sessions, as Ask reads and writes
    /// them: Ask names a session by the id alone, and finds only the
    /// caller's.
    pub fn of<'a>(&'a self, caller: &'a Caller) -> CallerConversations<'a> {
        CallerConversations {
            conversations: self,
            owner: &caller.id,
        }
    }
}

/// One caller's conversations: the [`History`] an answer for that caller
/// is given.
pub struct CallerConversations<'a> {
    conversations: &'a Conversations,
    owner: &'a str,
}

impl CallerConversations<'_> {
    fn key(&self, session: &str) -> SessionKey {
        SessionKey::owned_by(self.owner, session)
    }
}

impl History for CallerConversations<'_> {
    fn history(&self, session: &str) -> Arc<Vec<Turn>> {
        self.conversations
            .inner
            .get(&self.key(session))
            .unwrap_or_default()
    }

    /// Adds an exchange, dropping the oldest past [`MAX_TURNS`].
    fn remember(&self, session: &str, turn: Turn) {
        let mut turns = (*self.history(session)).clone();
        turns.push(turn);
        let excess = turns.len().saturating_sub(MAX_TURNS);
        turns.drain(..excess);
        self.conversations
            .inner
            .insert(self.key(session), Arc::new(turns));
    }

    fn forget(&self, session: &str) {
        self.conversations.inner.invalidate(&self.key(session));
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

    fn turn(n: usize) -> Turn {
        Turn {
            question: format!("q{n}"),
            answer: format!("a{n}"),
        }
    }

    #[test]
    fn keeps_the_last_turns_per_session_and_forgets() {
        let conversations = Conversations::new();
        let owner = caller("owner");
        let c = conversations.of(&owner);
        for n in 0..6 {
            c.remember("s", turn(n));
        }
        let kept: Vec<_> = c.history("s").iter().map(|t| t.question.clone()).collect();
        assert_eq!(kept, ["q2", "q3", "q4", "q5"]);
        assert!(c.history("other").is_empty());
        c.forget("s");
        assert!(c.history("s").is_empty());
    }

    #[test]
    fn a_conversation_is_replayed_to_its_own_caller_only() {
        let conversations = Conversations::new();
        let (admin, reader) = (caller("admin"), caller("0123abcd"));
        conversations.of(&admin).remember("shared-id", turn(1));
        let intruder = conversations.of(&reader);
        assert!(intruder.history("shared-id").is_empty());
        // Neither its questions nor its "start over" reach the first one's.
        intruder.remember("shared-id", turn(2));
        intruder.forget("shared-id");
        let kept: Vec<_> = conversations
            .of(&admin)
            .history("shared-id")
            .iter()
            .map(|t| t.question.clone())
            .collect();
        assert_eq!(kept, ["q1"]);
    }
}
