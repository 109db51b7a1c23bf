//! The sources: every site, repository or package fetched into a library
//! version (`GET /api/sources`), how its last refresh went, a button that
//! fetches it again (`POST /api/sources/{id}/refresh`) and follows the job,
//! and one that deletes it with its version (`DELETE /api/sources/{id}`).
//! While a refresh runs, the list reads itself again until it ends.

use index_core::job::JobState;
use index_core::source::{RefreshSummary, SourceInfo, SourceList};
use index_core::ErrorKind;
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use super::job::follow;
use super::job::{JobProgress, Progress};
use crate::components::ErrorNotice;
use crate::error::AppError;

/// How many of a refresh's failed pages the list shows.
const FAILURES_SHOWN: usize = 10;

/// How often the list is read again while it shows a refresh running.
#[cfg(feature = "hydrate")]
const RUNNING_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// How many failed reads in a row the list goes on polling through (a
/// server restarting, a dropped connection) before it waits for a click.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const FAILED_READS_POLLED: u32 = 15;

/// Whether the list is read again, from what its reads found: while the
/// last list read showed a refresh running, and a failed read since then
/// is one that passes (busy, unavailable: the server restarting, a dropped
/// connection), [`FAILED_READS_POLLED`] times at most. A refusal (a token
/// gone, a bad answer) stops it at once: reading again would not help.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
struct Poll {
    running: bool,
    failed_in_a_row: u32,
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
impl Poll {
    /// After a read that found whether a refresh is running, or failed
    /// with this kind of error.
    fn after(last: Option<Self>, read: Result<bool, ErrorKind>) -> Self {
        let last = last.unwrap_or_default();
        match read {
            Ok(running) => Self {
                running,
                failed_in_a_row: 0,
            },
            Err(kind) => {
                let passes = kind == ErrorKind::Unavailable || kind.retry_after_secs().is_some();
                Self {
                    running: last.running && passes,
                    failed_in_a_row: last.failed_in_a_row.saturating_add(1),
                }
            }
        }
    }

    fn again(self) -> bool {
        self.running && self.failed_in_a_row <= FAILED_READS_POLLED
    }
}

/// The sources, as the server lists them (in the browser; the server
/// renders the list empty, and the page loads it).
pub(super) async fn load_sources() -> Result<SourceList, AppError> {
    #[cfg(feature = "hydrate")]
    {
        use index_core::ErrorCode;

        let request = crate::client::get("/api/sources")
            .build()
            .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
        let response = crate::client::send(request).await?;
        response.json().await.map_err(|e| {
            AppError::new(
                ErrorCode::Internal,
                format!("docshelf's list of sources does not read: {e}"),
            )
        })
    }
    #[cfg(not(feature = "hydrate"))]
    Ok(SourceList::default())
}

/// A refresh to start, or a running one to follow.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
struct Refresh {
    source_id: String,
    /// The library and version, as the page names the job.
    title: String,
    /// The job refreshing it now, started elsewhere: followed, not started.
    running_job: Option<String>,
}

/// The "Sources" panel. One refresh at a time is followed here, below the
/// list, so reloading the list does not lose its progress.
#[component]
pub(super) fn Sources(sources: LocalResource<Result<SourceList, AppError>>) -> impl IntoView {
    let progress = RwSignal::new(Progress::Idle);
    // The library and version the followed job refreshes.
    let following = RwSignal::new(String::new());
    let start = Callback::new(move |asked: Refresh| {
        following.set(asked.title.clone());
        progress.set(Progress::Sending);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Err(message) = refresh(asked, progress).await {
                progress.set(Progress::Failed(message));
            }
            sources.refetch();
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = asked;
    });
    let busy = Signal::derive(move || progress.with(Progress::busy));
    // A refresh this page did not start (another tab, the CLI, the refresh
    // schedule, a tracked release) ends without the page being told: while
    // the list shows one running, it is read again every few seconds, so
    // its end shows without a reload. The timer goes with the list it was
    // set for, and with the page. Through a failed read that may pass, it
    // goes on for a while ([`Poll`]).
    #[cfg(feature = "hydrate")]
    Effect::new(move |last: Option<Poll>| {
        let read = sources.with(|loaded| {
            loaded.as_ref().map(|read| match read {
                Ok(list) => Ok(list.sources.iter().any(|s| s.running_job.is_some())),
                Err(err) => Err(err.kind()),
            })
        });
        let Some(poll) = read.map(|read| Poll::after(last, read)) else {
            return last.unwrap_or_default();
        };
        if poll.again() {
            if let Ok(timer) = set_timeout_with_handle(move || sources.refetch(), RUNNING_POLL) {
                on_cleanup(move || timer.clear());
            }
        }
        poll
    });
    // What the last delete did, or why it failed.
    let deleted = RwSignal::new(None::<Result<String, String>>);
    let remove = Callback::new(move |(source_id, title): (String, String)| {
        #[cfg(feature = "hydrate")]
        {
            if !crate::client::confirm(&format!(
                "Delete the source of {title} and the version it fills? This cannot be undone."
            )) {
                return;
            }
            leptos::task::spawn_local(async move {
                deleted.set(Some(delete_source(&source_id, &title).await));
                sources.refetch();
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (source_id, title, deleted);
    });
    view! {
        <section class="panel" aria-labelledby="sources-heading">
            <div class="library-head">
                <h2 class="panel-title" id="sources-heading">"Sources"</h2>
                <button type="button" class="small" on:click=move |_| sources.refetch()>"Reload"</button>
            </div>
            <Transition fallback=|| view! { <p class="muted" role="status">"Loading…"</p> }>
                {move || match sources.get() {
                    None => view! { <p class="muted" role="status">"Loading…"</p> }.into_any(),
                    Some(Err(err)) => view! { <ErrorNotice message=err.to_string()/> }.into_any(),
                    Some(Ok(list)) if list.sources.is_empty() => view! {
                        <p class="muted">"No sources yet: add a site or a package above."</p>
                    }
                    .into_any(),
                    Some(Ok(list)) => view! {
                        <ul class="source-list">
                            {list
                                .sources
                                .into_iter()
                                .map(|info| view! { <SourceItem info start remove busy/> })
                                .collect_view()}
                        </ul>
                    }
                    .into_any(),
                }}
            </Transition>
            {move || deleted.get().map(|outcome| match outcome {
                Ok(message) => view! { <p class="notice" role="status">{message}</p> }.into_any(),
                Err(message) => view! { <ErrorNotice message/> }.into_any(),
            })}
            {move || {
                let title = following.get();
                (!title.is_empty()).then(|| view! { <h3 class="following">{format!("Refreshing {title}")}</h3> })
            }}
            <JobProgress progress sending="Asking docshelf to refresh it…"/>
        </section>
    }
}

/// One source: where it comes from, its version, its last refresh.
#[component]
fn SourceItem(
    info: SourceInfo,
    /// Starts a refresh, or follows the running one.
    start: Callback<Refresh>,
    /// Deletes a source (its id and title).
    remove: Callback<(String, String)>,
    busy: Signal<bool>,
) -> impl IntoView {
    let SourceInfo {
        source_id,
        request,
        kind,
        library,
        version,
        last_refresh,
        running_job,
    } = info;
    let title = format!("{library} {version}");
    let viewer = crate::viewer::use_viewer();
    let writable = {
        let library = library.clone();
        move || viewer.may(index_core::access::Role::Write, &library)
    };
    let origin = if request.url.starts_with("http://") || request.url.starts_with("https://") {
        view! { <a href=request.url.clone() rel="noopener noreferrer" target="_blank">{request.url.clone()}</a> }
            .into_any()
    } else {
        view! { <code>{request.url.clone()}</code> }.into_any()
    };
    let refresh_label = format!("Refresh {title} from its source");
    let delete_label = format!("Delete the source of {title}");
    let doomed = (source_id.clone(), title.clone());
    let asked = Refresh {
        source_id,
        title: title.clone(),
        running_job: None,
    };
    let running = running_job.clone().map(|job| {
        let follow_label = format!("Follow the refresh of {title}");
        let asked = Refresh {
            running_job: Some(job.clone()),
            ..asked.clone()
        };
        view! {
            <p class="notice" role="status">
                "Being refreshed now (job " <code>{job.clone()}</code> "). "
                <button
                    type="button"
                    class="small"
                    aria-label=follow_label
                    disabled=move || busy.get()
                    on:click=move |_| start.run(asked.clone())
                >
                    "Follow"
                </button>
            </p>
        }
    });
    let is_running = running_job.is_some();
    view! {
        <li class="source-card">
            <div class="library-head">
                <h3>{origin}</h3>
                <span class="muted">{kind}</span>
                <span>{title}</span>
                <button
                    type="button"
                    class="small"
                    aria-label=refresh_label
                    hidden={
                        let writable = writable.clone();
                        move || !writable()
                    }
                    disabled=move || busy.get() || is_running
                    on:click=move |_| start.run(asked.clone())
                >
                    "Refresh"
                </button>
                <button
                    type="button"
                    class="small danger"
                    aria-label=delete_label
                    hidden=move || !writable()
                    disabled=move || busy.get()
                    on:click=move |_| remove.run(doomed.clone())
                >
                    "Delete"
                </button>
            </div>
            {running}
            {match last_refresh {
                Some(summary) => view! { <LastRefresh summary/> }.into_any(),
                None => view! { <p class="muted">"Not fetched yet."</p> }.into_any(),
            }}
        </li>
    }
}

/// How a source's last refresh went: when, how it ended, its counts, its
/// notes and the first of its failed pages.
#[component]
fn LastRefresh(summary: RefreshSummary) -> impl IntoView {
    let state = summary.state;
    let failures_shown = summary.failures.len().min(FAILURES_SHOWN);
    let more = summary.failed.saturating_sub(failures_shown);
    let failures = (!summary.failures.is_empty()).then(|| {
        view! {
            <details class="failures">
                <summary>{format!("{} failed page(s)", summary.failed)}</summary>
                <ul>
                    {summary
                        .failures
                        .into_iter()
                        .take(FAILURES_SHOWN)
                        .map(|f| view! { <li><code>{f.url}</code> ": " {f.reason}</li> })
                        .collect_view()}
                    {(more > 0).then(|| view! { <li class="muted">{format!("and {more} more")}</li> })}
                </ul>
            </details>
        }
    });
    view! {
        <p>
            "Last refreshed "
            <time datetime=summary.finished_at.clone()>{shown_time(&summary.finished_at)}</time>
            ": "
            <span class=format!("state {}", state.name())>{state_text(state)}</span>
        </p>
        <dl class="counts">
            <div><dt>"Pages"</dt><dd>{summary.pages}</dd></div>
            <div><dt>"Changed"</dt><dd>{summary.changed}</dd></div>
            <div><dt>"Unchanged"</dt><dd>{summary.unchanged}</dd></div>
            <div><dt>"Removed"</dt><dd>{summary.removed}</dd></div>
            <div><dt>"Failed"</dt><dd>{summary.failed}</dd></div>
        </dl>
        {(!summary.notes.is_empty()).then(|| view! {
            <ul class="notes muted">
                {summary.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
            </ul>
        })}
        {failures}
    }
}

fn state_text(state: JobState) -> &'static str {
    match state {
        JobState::Done => "done",
        JobState::Failed => "failed: nothing was published",
        JobState::Interrupted => "interrupted: nothing was published",
        JobState::Cancelled => "cancelled",
        other => other.name(),
    }
}

/// An RFC 3339 time as a date and minute (`2026-05-01 12:34 UTC`); any
/// other text as it is.
fn shown_time(rfc3339: &str) -> String {
    let (Some(date), Some(clock)) = (rfc3339.get(..10), rfc3339.get(11..16)) else {
        return rfc3339.to_owned();
    };
    if !matches!(rfc3339.as_bytes()[10], b'T' | b't' | b' ') {
        return rfc3339.to_owned();
    }
    let utc = rfc3339.ends_with('Z') || rfc3339.ends_with('z') || rfc3339.ends_with("+00:00");
    if utc {
        format!("{date} {clock} UTC")
    } else {
        format!("{date} {clock}")
    }
}

/// Starts a refresh (or, given a running job, only follows it) and follows
/// the job until it ends.
#[cfg(feature = "hydrate")]
async fn refresh(asked: Refresh, progress: RwSignal<Progress>) -> Result<(), String> {
    use index_core::source::SourceAccepted;

    use crate::client;

    if let Some(job) = asked.running_job {
        // Started elsewhere: no watch token here, so the access token
        // (the bearer header) is what admits this page.
        return follow(&job, None, progress).await;
    }
    let url = format!("/api/sources/{}/refresh", client::encode(&asked.source_id));
    let request = client::post(&url).build().map_err(|e| e.to_string())?;
    let response = client::send(request).await.map_err(|e| e.to_string())?;
    let accepted: SourceAccepted = response
        .json()
        .await
        .map_err(|e| format!("the server's answer names no job: {e}"))?;
    follow(&accepted.job_id, Some(&accepted.watch_token), progress).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_polls_through_failed_reads_that_pass_and_only_those() {
        let first = Poll::after(None, Ok(true));
        assert!(first.again());
        assert!(!Poll::after(None, Ok(false)).again());
        // A dropped connection is polled through while a job was running...
        let mut poll = first;
        for _ in 0..FAILED_READS_POLLED {
            poll = Poll::after(Some(poll), Err(ErrorKind::Unavailable));
            assert!(poll.again());
        }
        // ...for a while,
        assert!(!Poll::after(Some(poll), Err(ErrorKind::Unavailable)).again());
        // and a read that succeeds starts the count again.
        assert_eq!(Poll::after(Some(poll), Ok(true)), first);
        assert!(Poll::after(Some(first), Err(ErrorKind::Busy)).again());
        // A refusal stops it, and nothing is polled that was not running.
        for refused in [
            ErrorKind::Unauthorized,
            ErrorKind::BadInput,
            ErrorKind::Internal,
        ] {
            assert!(
                !Poll::after(Some(first), Err(refused)).again(),
                "{refused:?}"
            );
        }
        let idle = Poll::after(None, Ok(false));
        assert!(!Poll::after(Some(idle), Err(ErrorKind::Unavailable)).again());
    }

    #[test]
    fn times_show_to_the_minute() {
        assert_eq!(
            shown_time("2026-05-01T12:34:56.789Z"),
            "2026-05-01 12:34 UTC"
        );
        assert_eq!(shown_time("2026-05-01T12:34:56+02:00"), "2026-05-01 12:34");
        assert_eq!(shown_time("yesterday"), "yesterday");
        assert_eq!(shown_time(""), "");
    }
}

/// Deletes a source and the version it fills; says what went with it.
#[cfg(feature = "hydrate")]
async fn delete_source(source_id: &str, title: &str) -> Result<String, String> {
    use index_core::catalog::Deleted;

    let url = format!("/api/sources/{}", crate::client::encode(source_id));
    let request = crate::client::delete(&url)
        .build()
        .map_err(|e| e.to_string())?;
    let response = crate::client::send(request)
        .await
        .map_err(|e| e.to_string())?;
    let deleted: Deleted = response.json().await.map_err(|e| e.to_string())?;
    Ok(format!(
        "Deleted the source of {title}: {} document(s), {} chunk(s).",
        deleted.documents, deleted.chunks
    ))
}
