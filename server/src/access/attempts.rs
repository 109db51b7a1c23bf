//! Failed token attempts, counted per client address: past
//! [`MAX_FAILURES`] in a [`WINDOW`], the client's requests with a token are
//! refused (429) until the window ends, so a token cannot be guessed at
//! the speed of the network. A right token does not clear the count: an
//! attacker holding one token cannot use it to keep guessing others.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use moka::sync::Cache;

/// Failed attempts allowed per client in one window.
pub const MAX_FAILURES: u32 = 20;

/// How long a window lasts, from a client's first failure in it.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Clients remembered at most (the least recently seen go first): bounds
/// the memory a flood of addresses can take.
const MAX_CLIENTS: u64 = 100_000;

/// Failures per client address in the current window.
pub struct FailedAttempts {
    clients: Cache<IpAddr, (u32, Instant)>,
    max_failures: u32,
}

impl Default for FailedAttempts {
    fn default() -> Self {
        Self::new(MAX_FAILURES)
    }
}

impl FailedAttempts {
    pub fn new(max_failures: u32) -> Self {
        Self {
            clients: Cache::builder()
                .max_capacity(MAX_CLIENTS)
                .time_to_live(WINDOW)
                .build(),
            max_failures,
        }
    }

    /// `Err(seconds to wait)` if `client` has failed too often lately.
    pub fn check(&self, client: IpAddr) -> Result<(), u64> {
        match self.clients.get(&client) {
            // The window counts from the first failure: once it has
            // passed, the client starts afresh (the entry itself may live
            // on, each upsert restarting its time to live).
            Some((failures, since))
                if failures >= self.max_failures && since.elapsed() < WINDOW =>
            {
                let left = WINDOW.saturating_sub(since.elapsed());
                Err(left.as_secs().max(1))
            }
            _ => Ok(()),
        }
    }

    /// Counts a failure of `client`.
    pub fn failed(&self, client: IpAddr) {
        let now = Instant::now();
        self.clients
            .entry(client)
            .and_upsert_with(|entry| match entry.map(|e| e.into_value()) {
                Some((n, since)) if since.elapsed() < WINDOW => (n.saturating_add(1), since),
                _ => (1, now),
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_refused_after_too_many_failures_and_others_are_not() {
        let attempts = FailedAttempts::new(3);
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        for _ in 0..3 {
            assert_eq!(attempts.check(a), Ok(()));
            attempts.failed(a);
        }
        let wait = attempts.check(a).expect_err("refused");
        assert!((1..=60).contains(&wait), "{wait}");
        assert_eq!(attempts.check(b), Ok(()));
    }
}
