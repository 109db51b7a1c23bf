//! A job's progress, as the pages that start one show it: an upload, a
//! source added from a URL, a source's refresh. Each follows the job's
//! server-sent events (`GET /api/jobs/{id}/events`) and shows every file
//! or page as it goes through.

use index_core::job::{FileState, JobState, JobStatus};
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use crate::client;
use crate::components::ErrorNotice;

/// Where a job a page started stands, as the page shows it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) enum Progress {
    Idle,
    /// The request that starts the job is on its way.
    Sending,
    Job(JobStatus),
    Failed(String),
}

impl Progress {
    /// Whether a job is being started or is still running.
    pub(super) fn busy(&self) -> bool {
        match self {
            Self::Sending => true,
            Self::Job(job) => !job.state.is_finished(),
            Self::Idle | Self::Failed(_) => false,
        }
    }
}

/// The progress region: what is being sent, the job, or why it failed,
/// announced politely as it changes.
#[component]
pub(super) fn JobProgress(
    progress: RwSignal<Progress>,
    /// What the page says while the starting request is on its way.
    sending: &'static str,
) -> impl IntoView {
    view! {
        <div class="job" aria-live="polite">
            {move || match progress.get() {
                Progress::Idle => ().into_any(),
                Progress::Sending => view! { <p class="muted" role="status">{sending}</p> }.into_any(),
                Progress::Failed(message) => view! { <ErrorNotice message=message/> }.into_any(),
                Progress::Job(job) => view! { <JobView job/> }.into_any(),
            }}
        </div>
    }
}

/// Seconds as a person reads them: "40 s", "3 min", "2 h 5 min".
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// A job's summary and the state of each of its files (or pages).
#[component]
pub(super) fn JobView(job: JobStatus) -> impl IntoView {
    let (stored, failed) = job.tally();
    let count =
        |wanted: fn(&FileState) -> bool| job.files.iter().filter(|f| wanted(&f.state)).count();
    let unchanged = count(|s| matches!(s, FileState::Unchanged));
    let removed = count(|s| matches!(s, FileState::Removed { .. }));
    let summary = match job.state {
        JobState::Running => match (job.expected, job.eta_secs) {
            (Some(total), Some(left)) => format!(
                "Working… {} of {total}, about {} left.",
                job.through(),
                duration(left)
            ),
            (Some(total), None) => format!("Working… {} of {total}.", job.through()),
            _ => "Working…".to_owned(),
        },
        JobState::Publishing => "Publishing the version…".to_owned(),
        JobState::Indexing => "Published; updating the search index…".to_owned(),
        JobState::Done => {
            let mut parts = vec![format!("{stored} stored")];
            if unchanged > 0 {
                parts.push(format!("{unchanged} unchanged"));
            }
            if removed > 0 {
                parts.push(format!("{removed} removed"));
            }
            parts.push(format!("{failed} failed"));
            format!("Done: {}.", parts.join(", "))
        }
        JobState::Interrupted => "Interrupted: nothing of this upload was published.".to_owned(),
        JobState::Cancelled => {
            "Cancelled: the version was deleted; nothing was published.".to_owned()
        }
        JobState::Failed => format!("Failed: {failed} failed; nothing was published."),
    };
    view! {
        <p role="status" class=if job.state.is_finished() { "summary done" } else { "summary" }>
            {summary}
        </p>
        {job.error.map(|e| view! { <ErrorNotice message=e/> })}
        <table class="files" aria-label="Files">
            <thead>
                <tr><th scope="col">"File"</th><th scope="col">"State"</th></tr>
            </thead>
            <tbody>
                {job
                    .files
                    .into_iter()
                    .map(|f| {
                        let (class, text) = (f.state.name(), f.state.to_string());
                        view! {
                            <tr data-state=class>
                                <td>{f.file_path}</td>
                                <td class=class>{text}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// Follows a job's events into `progress` until the job ends. With the
/// job's watch token (the page started the job) the request goes with that
/// alone, in the URL, where the access token does not belong; without one
/// (a job started elsewhere) the bearer header admits it.
#[cfg(feature = "hydrate")]
pub(super) async fn follow(
    job_id: &str,
    watch_token: Option<&str>,
    progress: RwSignal<Progress>,
) -> Result<(), String> {
    let url = format!("/api/jobs/{}/events", client::encode(job_id));
    let request = match watch_token {
        Some(token) => {
            gloo_net::http::Request::get(&format!("{url}?watch={}", client::encode(token)))
        }
        None => client::get(&url),
    };
    let request = request.build().map_err(|e| e.to_string())?;
    let response = client::send(request)
        .await
        .map_err(|e| format!("cannot follow the job: {e}"))?;
    let mut finished = false;
    let read = client::read_events(&response, |frame| {
        if let Ok(job) = serde_json::from_str::<JobStatus>(&frame.data) {
            finished = job.state.is_finished();
            progress.set(Progress::Job(job));
        }
    })
    .await;
    match read {
        Err(e) if !finished => Err(format!(
            "{e}; the job goes on without this page: reload to see how it ended"
        )),
        _ => Ok(()),
    }
}
