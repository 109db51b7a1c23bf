//! Waiting for what another task or process does (a replica catching up,
//! a copy reloading, a server starting): the test polls the state it waits
//! for, never sleeps a fixed time in its place. The bound is only there so
//! that a test that would hang fails instead, saying what it last saw; it
//! is far above the time the wait takes.

use std::future::Future;
use std::time::{Duration, Instant};

/// Calls `poll` every `every` until it gives `Ok`, and returns that value.
/// Past `limit` without it, fails with the message `timed_out` makes of
/// the last `Err` (what was seen instead).
pub async fn wait_until<T, E, Fut>(
    limit: Duration,
    every: Duration,
    mut poll: impl FnMut() -> Fut,
    timed_out: impl FnOnce(E) -> String,
) -> T
where
    Fut: Future<Output = Result<T, E>>,
{
    let started = Instant::now();
    loop {
        let seen = match poll().await {
            Ok(done) => return done,
            Err(seen) => seen,
        };
        if started.elapsed() >= limit {
            panic!("{}", timed_out(seen));
        }
        tokio::time::sleep(every).await;
    }
}

/// As [`wait_until`], for a condition: polls `holds` every `every` until
/// it is true; past `limit`, fails saying `what`.
pub async fn wait_for<Fut>(
    limit: Duration,
    every: Duration,
    what: &str,
    mut holds: impl FnMut() -> Fut,
) where
    Fut: Future<Output = bool>,
{
    wait_until(
        limit,
        every,
        || {
            let holds = holds();
            async move { holds.await.then_some(()).ok_or(()) }
        },
        |()| what.to_owned(),
    )
    .await;
}
