//! The upload page: pick or drop files, name the library and version, and
//! watch each file go through extraction, embedding and storage.
//!
//! The files go straight to `POST /api/upload` (a multipart stream a server
//! function cannot carry), and progress comes back over the job's
//! server-sent events.

use index_core::format::Format;
use index_core::job::{JobState, JobStatus};
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use crate::client;
use crate::components::{ErrorNotice, LibraryNames};

/// Where an upload stands, as the page shows it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Progress {
    Idle,
    Sending,
    Job(JobStatus),
    Failed(String),
}

#[component]
pub fn UploadPage() -> impl IntoView {
    let library = RwSignal::new(String::new());
    let version = RwSignal::new(String::new());
    let chosen: RwSignal<Vec<String>> = RwSignal::new(Vec::new());
    let progress = RwSignal::new(Progress::Idle);
    let dragging = RwSignal::new(false);
    let input: NodeRef<leptos::html::Input> = NodeRef::new();
    #[cfg(feature = "hydrate")]
    let dropped: StoredValue<Vec<web_sys::File>, LocalStorage> = StoredValue::new_local(Vec::new());

    let on_change = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(el) = input.get() {
            let files = el.files().map(file_list).unwrap_or_default();
            chosen.set(files.iter().map(web_sys::File::name).collect());
            dropped.set_value(files);
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        #[cfg(feature = "hydrate")]
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            let files = file_list(files);
            chosen.set(files.iter().map(web_sys::File::name).collect());
            dropped.set_value(files);
        }
    };

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (lib, ver) = (library.get_untracked(), version.get_untracked());
        if lib.trim().is_empty() || ver.trim().is_empty() {
            progress.set(Progress::Failed(
                "Give the library and the version a name.".into(),
            ));
            return;
        }
        #[cfg(feature = "hydrate")]
        {
            let files = dropped.get_value();
            if files.is_empty() {
                progress.set(Progress::Failed("Choose at least one file.".into()));
                return;
            }
            progress.set(Progress::Sending);
            leptos::task::spawn_local(async move {
                if let Err(message) = send(&lib, &ver, &files, progress).await {
                    progress.set(Progress::Failed(message));
                }
            });
        }
        let _ = input;
    };

    let busy = move || {
        matches!(progress.get(), Progress::Sending)
            || matches!(progress.get(), Progress::Job(ref j) if !j.state.is_finished())
    };

    view! {
        <section class="panel" aria-labelledby="upload-heading">
            <h1 id="upload-heading">"Upload documents"</h1>
            <form class="upload-form" on:submit=submit>
                <div class="filters">
                    <label>
                        "Library"
                        <input
                            name="library"
                            list="upload-libraries"
                            required
                            placeholder="e.g. react"
                            prop:value=move || library.get()
                            on:input=move |ev| library.set(event_target_value(&ev))
                        />
                    </label>
                    <LibraryNames id="upload-libraries"/>
                    <label>
                        "Version"
                        <input
                            name="version"
                            required
                            placeholder="e.g. 18.2"
                            prop:value=move || version.get()
                            on:input=move |ev| version.set(event_target_value(&ev))
                        />
                    </label>
                </div>
                <label
                    class="dropzone"
                    class:dragging=move || dragging.get()
                    on:dragover=move |ev: leptos::ev::DragEvent| {
                        ev.prevent_default();
                        dragging.set(true);
                    }
                    on:dragleave=move |_| dragging.set(false)
                    on:drop=on_drop
                >
                    <span>"Drop files here, or choose them: Markdown, text, HTML, PDF, Jupyter notebooks, ZIP"</span>
                    <input
                        node_ref=input
                        type="file"
                        name="files"
                        aria-label="Files"
                        multiple
                        accept=Format::accept()
                        on:change=on_change
                    />
                </label>
                {move || {
                    let names = chosen.get();
                    (!names.is_empty())
                        .then(|| view! { <p class="muted">{format!("{} file(s): {}", names.len(), names.join(", "))}</p> })
                }}
                <button type="submit" class="primary" disabled=busy>
                    {move || if busy() { "Uploading…" } else { "Upload" }}
                </button>
            </form>
            <div class="job" aria-live="polite">
                {move || match progress.get() {
                    Progress::Idle => ().into_any(),
                    Progress::Sending => view! { <p class="muted" role="status">"Sending files…"</p> }.into_any(),
                    Progress::Failed(message) => view! { <ErrorNotice message=message/> }.into_any(),
                    Progress::Job(job) => view! { <JobView job/> }.into_any(),
                }}
            </div>
        </section>
    }
}

#[component]
fn JobView(job: JobStatus) -> impl IntoView {
    let (stored, failed) = job.tally();
    let summary = match job.state {
        JobState::Running => "Working…".to_owned(),
        JobState::Publishing => "Publishing the version…".to_owned(),
        JobState::Indexing => "Published; updating the search index…".to_owned(),
        JobState::Done => format!("Done: {stored} stored, {failed} failed."),
        JobState::Interrupted => "Interrupted: nothing of this upload was published.".to_owned(),
        JobState::Cancelled => {
            "Cancelled: the version was deleted; nothing was published.".to_owned()
        }
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

#[cfg(feature = "hydrate")]
fn file_list(list: web_sys::FileList) -> Vec<web_sys::File> {
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// Posts the files, then follows the job's events until it is done.
#[cfg(feature = "hydrate")]
async fn send(
    library: &str,
    version: &str,
    files: &[web_sys::File],
    progress: RwSignal<Progress>,
) -> Result<(), String> {
    use futures::StreamExt;
    use gloo_net::eventsource::futures::EventSource;
    use index_core::job::UploadAccepted;
    use index_core::stream::JobEvent;

    let form =
        web_sys::FormData::new().map_err(|_| "the browser cannot build a form".to_owned())?;
    let _ = form.append_with_str("library", library);
    let _ = form.append_with_str("version", version);
    for f in files {
        let _ = form.append_with_blob_and_filename("file", f, &f.name());
    }
    let request = client::post("/api/upload")
        .body(form)
        .map_err(|e| e.to_string())?;
    let response = client::send(request).await.map_err(|e| e.to_string())?;
    let accepted: UploadAccepted = response
        .json()
        .await
        .map_err(|e| format!("the server's answer names no job: {e}"))?;

    // The job's watch token rather than the access token: an EventSource
    // cannot send headers, and the access token does not belong in a URL.
    let mut events = EventSource::new(&format!(
        "/api/jobs/{}/events?token={}",
        accepted.job_id, accepted.watch_token
    ))
    .map_err(|e| format!("cannot follow the job: {e}"))?;
    let mut stream = events
        .subscribe(JobEvent::Progress.name())
        .map_err(|e| e.to_string())?;
    let mut done = events
        .subscribe(JobEvent::Done.name())
        .map_err(|e| e.to_string())?;
    loop {
        let next = futures::future::select(stream.next(), done.next()).await;
        let (message, finished) = match next {
            futures::future::Either::Left((Some(Ok((_, m))), _)) => (m, false),
            futures::future::Either::Right((Some(Ok((_, m))), _)) => (m, true),
            _ => break,
        };
        if let Some(text) = message.data().as_string() {
            if let Ok(job) = serde_json::from_str::<JobStatus>(&text) {
                progress.set(Progress::Job(job));
            }
        }
        if finished {
            break;
        }
    }
    events.close();
    Ok(())
}
