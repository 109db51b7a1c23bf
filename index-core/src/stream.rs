//! The names of the events docshelf streams as server-sent events: the
//! streamed search (`POST /api/search/stream`, [`SearchEvent`]), Ask
//! (`POST /api/ask`, [`crate::ask::AskEvent`]) and an upload job's progress
//! (`GET /api/jobs/{id}/events`, [`JobEvent`]).
//!
//! The server names its events from here and clients match on the same
//! names, so an event cannot be renamed on one side only. Both streams end
//! the same way: [`DONE`] with the whole answer, or [`ERROR`] with the error
//! body and its HTTP status (`{"code","error","status"}`).

use crate::job::JobStatus;
use crate::search::Stage;

/// The last event of a stream that succeeded; its data is the whole answer.
pub const DONE: &str = "done";

/// The last event of a stream that failed; its data is the error body and
/// the status a request that does not stream would have been answered with.
pub const ERROR: &str = "error";

/// What the streamed search sends, in order: one event per [`Stage`] as its
/// results are ready, then [`SearchEvent::Done`] with the whole response or
/// [`SearchEvent::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchEvent {
    /// A stage's results (named as [`Stage::name`] says).
    Stage(Stage),
    /// The whole response.
    Done,
    /// The search failed.
    Error,
}

impl SearchEvent {
    /// The event's name on the wire (the SSE `event:` field).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Stage(stage) => stage.name(),
            Self::Done => DONE,
            Self::Error => ERROR,
        }
    }
}

/// What a job's event stream sends: its status after every change
/// ([`JobEvent::Progress`]), then its last status once it has ended
/// ([`JobEvent::Done`]), whether done, interrupted or cancelled: the
/// status's `state` says which. Each event's data is the whole [`JobStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEvent {
    Progress,
    Done,
}

impl JobEvent {
    /// The event a status is sent as.
    pub fn of(status: &JobStatus) -> Self {
        if status.state.is_finished() {
            Self::Done
        } else {
            Self::Progress
        }
    }

    /// The event's name on the wire (the SSE `event:` field).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Progress => "progress",
            Self::Done => DONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobState;

    #[test]
    fn search_events_are_named_by_stage_then_done_or_error() {
        let names: Vec<_> = [
            SearchEvent::Stage(Stage::Keyword),
            SearchEvent::Stage(Stage::Fused),
            SearchEvent::Stage(Stage::Expanded),
            SearchEvent::Done,
            SearchEvent::Error,
        ]
        .into_iter()
        .map(SearchEvent::name)
        .collect();
        assert_eq!(names, ["keyword", "fused", "expanded", "done", "error"]);
    }

    #[test]
    fn a_job_streams_progress_until_it_is_done() {
        let mut status = JobStatus {
            id: "j".into(),
            library: "l".into(),
            version: "1".into(),
            state: JobState::Indexing,
            files: Vec::new(),
            error: None,
            notes: Vec::new(),
            expected: None,
            eta_secs: None,
        };
        assert_eq!(JobEvent::of(&status).name(), "progress");
        status.state = JobState::Done;
        assert_eq!(JobEvent::of(&status).name(), "done");
    }
}
