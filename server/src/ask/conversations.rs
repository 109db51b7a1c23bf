//! Each Ask session's last few questions and answers, sent with its next
//! question so follow-ups ("and for tags?") make sense.
//!
//! In memory, bounded in sessions, turns and age, like the sticky-library
//! sessions (the same session id names both): a restart forgets the
//! conversation, and nothing of it is written to the store.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;

use super::prompt::Turn;

/// Exchanges kept per session: enough for follow-ups, small enough that a
/// small model's context still has room for the passages.
pub const MAX_TURNS: usize = 4;

/// Conversations idle this long are forgotten.
const IDLE_LIMIT: Duration = Duration::from_secs(3600);

/// At most this many conversations are kept; the least recently used go first.
const MAX_CONVERSATIONS: u64 = 10_000;

pub struct Conversations {
    inner: Cache<String, Arc<Vec<Turn>>>,
}

impl Default for Conversations {
    fn default() -> Self {
        Self {
            inner: crate::search::sessions::session_cache(MAX_CONVERSATIONS, IDLE_LIMIT),
        }
    }
}

impl Conversations {
    /// The session's earlier exchanges, oldest first.
    pub fn history(&self, session: &str) -> Arc<Vec<Turn>> {
        self.inner.get(session).unwrap_or_default()
    }

    /// Adds an exchange, dropping the oldest past [`MAX_TURNS`].
    pub fn push(&self, session: &str, turn: Turn) {
        let mut turns = (*self.history(session)).clone();
        turns.push(turn);
        let excess = turns.len().saturating_sub(MAX_TURNS);
        turns.drain(..excess);
        self.inner.insert(session.to_owned(), Arc::new(turns));
    }

    /// Starts the session's conversation over.
    pub fn clear(&self, session: &str) {
        self.inner.invalidate(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_turns_per_session_and_clears() {
        let c = Conversations::default();
        for n in 0..6 {
            c.push(
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
        c.clear("s");
        assert!(c.history("s").is_empty());
    }
}
