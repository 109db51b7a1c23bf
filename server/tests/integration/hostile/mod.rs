//! Probes a hostile client would send, kept so that the next change to
//! sources, tokens, sessions or the audit log is checked against them
//! (issue #61: what one hostile run against the server found). Each file
//! owns one kind of attack; each test fails on the code the run attacked.
//!
//! - [`credentials`]: a client's `credential` naming the server's own
//!   secrets, and a credential sent to a host it is not bound to.
//! - [`sessions`]: another caller's session id.
//! - [`names`]: names and grants that forge log lines or never match.
//! - [`git`]: repositories built to exhaust memory or hide their files.
//! - [`leaks`]: what a scoped token learns from metrics, timings and errors.

mod credentials;
mod git;
mod leaks;
mod names;
mod sessions;
