//! The upload page: pick or drop files, name the library and version, and
//! watch each file go through extraction, embedding and storage.
//!
//! The files go straight to `POST /api/upload` (a multipart stream a server
//! function cannot carry), and progress comes back over the job's
//! server-sent events. Below: documentation added from a URL or a package
//! ([`super::add_source`]), and the sources added so ([`super::sources`]).

use index_core::format::Format;
use leptos::prelude::*;

use super::add_source::AddSource;
#[cfg(feature = "hydrate")]
use super::job::follow;
use super::job::{JobProgress, Progress};
use super::sources::{load_sources, Sources};
#[cfg(feature = "hydrate")]
use crate::client;
use crate::components::LibraryNames;

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

    let busy = move || progress.with(Progress::busy);
    // The sources a URL adds, listed below the forms; adding one reloads them.
    let sources = LocalResource::new(load_sources);
    let added = Callback::new(move |()| sources.refetch());

    let viewer = crate::viewer::use_viewer();
    view! {
        <Show when=move || viewer.known() && !viewer.writes_any()>
            <p class="notice" role="status">
                "Signed in as a token that may only read: adding documents needs a token that may write."
            </p>
        </Show>
        <section class="panel" aria-labelledby="upload-heading" hidden=move || !viewer.writes_any()>
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
                    <span>"Drop files here, or choose them: Markdown, text, HTML, PDF, Word, Jupyter notebooks, ZIP"</span>
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
            <JobProgress progress sending="Sending files…"/>
        </section>
        <div hidden=move || !viewer.writes_any()>
            <AddSource added/>
            <Sources sources/>
        </div>
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
    use index_core::job::UploadAccepted;

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

    follow(&accepted.job_id, Some(&accepted.watch_token), progress).await
}
