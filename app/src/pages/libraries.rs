//! The libraries page: every library with its versions, counts and last
//! update; the documents of a version; what changed between two versions
//! ([`super::changes`]); deletes, with a confirmation.

use index_core::catalog::{LibraryInfo, VersionInfo};
use leptos::prelude::*;

use super::changes::Changes;
use crate::api::{delete, list_documents, list_libraries};
use crate::client;
use crate::components::ErrorNotice;
use crate::viewer::use_viewer;
use index_core::access::Role;

#[component]
pub fn LibrariesPage() -> impl IntoView {
    let libraries = LocalResource::new(list_libraries);
    let message: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    // Deleting calls this to reload the list.
    let reload = Callback::new(move |m: Result<String, String>| {
        message.set(Some(m));
        libraries.refetch();
    });
    view! {
        <section class="panel" aria-labelledby="libraries-heading">
            <h1 id="libraries-heading">"Libraries"</h1>
            {move || match message.get() {
                Some(Ok(m)) => view! { <p class="notice" role="status">{m}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorNotice message=m/> }.into_any(),
                None => ().into_any(),
            }}
            <Suspense fallback=|| view! { <p class="muted" role="status">"Loading…"</p> }>
                {move || match libraries.get() {
                    None => view! { <p class="muted" role="status">"Loading…"</p> }.into_any(),
                    Some(Err(err)) => view! { <ErrorNotice message=err.to_string()/> }.into_any(),
                    Some(Ok(libs)) if libs.is_empty() => view! {
                        <p class="muted">"No libraries yet. " <a href="/upload">"Upload some documents"</a> " to start."</p>
                    }
                    .into_any(),
                    Some(Ok(libs)) => libs
                        .into_iter()
                        .map(|library| view! { <Library library reload/> })
                        .collect_view()
                        .into_any(),
                }}
            </Suspense>
        </section>
    }
}

/// Seconds since the epoch as a date and time (UTC).
pub(crate) fn when(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn delete_with(
    what: String,
    library: String,
    version: Option<String>,
    file_path: Option<String>,
    reload: Callback<Result<String, String>>,
) {
    if !client::confirm(&format!("Delete {what}? This cannot be undone.")) {
        return;
    }
    leptos::task::spawn_local(async move {
        let result = delete(library, version, file_path).await;
        reload.run(match result {
            Ok(d) if d.cancelled_jobs > 0 => Ok(format!(
                "Deleted {what}: {} document(s), {} chunk(s); {} running upload(s) into it cancelled.",
                d.documents, d.chunks, d.cancelled_jobs
            )),
            Ok(d) => Ok(format!(
                "Deleted {what}: {} document(s), {} chunk(s).",
                d.documents, d.chunks
            )),
            Err(err) => Err(err.to_string()),
        });
    });
}

#[component]
fn Library(library: LibraryInfo, reload: Callback<Result<String, String>>) -> impl IntoView {
    let viewer = use_viewer();
    let name = library.name.clone();
    let heading_id = format!("library-{}", client::encode(&name));
    let versions: Vec<String> = library.versions.iter().map(|v| v.version.clone()).collect();
    let compared =
        (versions.len() >= 2).then(|| view! { <Changes library=name.clone() versions/> });
    let labelled_by = heading_id.clone();
    view! {
        <article class="library" aria-labelledby=labelled_by>
            <header class="library-head">
                <h2 id=heading_id>{name.clone()}</h2>
                <span class="muted">
                    {format!(
                        "{} documents · {} chunks · updated {}",
                        library.documents,
                        library.chunks,
                        when(library.updated_at)
                    )}
                </span>
                <button
                    type="button"
                    class="danger"
                    aria-label=format!("Delete library {name}")
                    hidden={
                        let name = name.clone();
                        move || !viewer.may(Role::Write, &name)
                    }
                    on:click={
                        let name = name.clone();
                        move |_| delete_with(format!("library {name}"), name.clone(), None, None, reload)
                    }
                >
                    "Delete library"
                </button>
            </header>
            <ul class="versions">
                {library
                    .versions
                    .into_iter()
                    .map(|version| view! { <Version library=name.clone() version reload/> })
                    .collect_view()}
            </ul>
            {compared}
        </article>
    }
}

#[component]
fn Version(
    library: String,
    version: VersionInfo,
    reload: Callback<Result<String, String>>,
) -> impl IntoView {
    let viewer = use_viewer();
    let open = RwSignal::new(false);
    let (lib, ver) = (library.clone(), version.version.clone());
    let documents = LocalResource::new(move || {
        let (lib, ver, open) = (lib.clone(), ver.clone(), open.get());
        async move {
            if open {
                Some(list_documents(lib, ver).await)
            } else {
                None
            }
        }
    });
    let v = version.version.clone();
    view! {
        <li class="version">
            <div class="version-head">
                <button
                    type="button"
                    aria-expanded=move || open.get().to_string()
                    on:click=move |_| open.update(|o| *o = !*o)
                >
                    {format!("{} {}", library, v)}
                </button>
                <span class="muted">
                    {format!(
                        "{} documents · {} chunks · updated {}",
                        version.documents,
                        version.chunks,
                        when(version.updated_at)
                    )}
                </span>
                <button
                    type="button"
                    class="danger"
                    aria-label=format!("Delete version {} {}", library, v)
                    hidden={
                        let library = library.clone();
                        move || !viewer.may(Role::Write, &library)
                    }
                    on:click={
                        let (library, v) = (library.clone(), v.clone());
                        move |_| delete_with(format!("{library} {v}"), library.clone(), Some(v.clone()), None, reload)
                    }
                >
                    "Delete version"
                </button>
            </div>
            <Suspense>
                {move || match documents.get().flatten() {
                    None => ().into_any(),
                    Some(Err(err)) => view! { <ErrorNotice message=err.to_string()/> }.into_any(),
                    Some(Ok(docs)) => view! {
                        <ul class="documents" aria-label=format!("Documents of {} {}", library, v)>
                            {docs
                                .into_iter()
                                .map(|d| {
                                    let href = format!(
                                        "/doc?library={}&version={}&file_path={}",
                                        client::encode(&d.library),
                                        client::encode(&d.version),
                                        client::encode(&d.file_path)
                                    );
                                    let label = format!("Delete document {}", d.file_path);
                                    let (l, v, p) = (d.library.clone(), d.version.clone(), d.file_path.clone());
                                    let library = d.library.clone();
                                    let writable = move || viewer.may(Role::Write, &library);
                                    view! {
                                        <li>
                                            <a href=href>{d.file_path.clone()}</a>
                                            <span class="muted">{format!(" {} chunks", d.chunks)}</span>
                                            <button
                                                hidden=move || !writable()
                                                type="button"
                                                class="danger small"
                                                aria-label=label
                                                on:click=move |_| delete_with(
                                                    p.clone(),
                                                    l.clone(),
                                                    Some(v.clone()),
                                                    Some(p.clone()),
                                                    reload,
                                                )
                                            >
                                                "Delete"
                                            </button>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                    .into_any(),
                }}
            </Suspense>
        </li>
    }
}
