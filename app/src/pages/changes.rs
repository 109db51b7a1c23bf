//! What changed between two versions of a library, on the libraries page:
//! two versions picked (the two newest at first) and their comparison as
//! every face gives it (`compare_versions`, the REST route's request and
//! answer): documents changed, added, removed and moved, each changed
//! document's sections, and the newer version's release notes. A changed
//! section shows its word diff inline, and opens side by side: the older
//! text with what it lost marked, beside the newer with what it gained.
//! Both sides are read back from the diff the answer carries
//! ([`diff_parts`]): the page asks for nothing more.

use index_core::changes::{
    diff_parts, ChangesRequest, DiffPart, DocumentChange, DocumentChangeKind, SectionChange,
    SectionChangeKind, VersionChanges,
};
use leptos::prelude::*;

use crate::api::compare_versions;
use crate::client;
use crate::components::ErrorNotice;

/// The picker and the comparison of `library`, whose `versions` are
/// newest first (as the catalog lists them). Nothing is compared until it
/// is opened: a comparison reads both versions whole, which a page that
/// lists every library must not pay for each of them.
#[component]
pub fn Changes(library: String, versions: Vec<String>) -> impl IntoView {
    let open = RwSignal::new(false);
    let from = RwSignal::new(versions.get(1).cloned().unwrap_or_default());
    let to = RwSignal::new(versions.first().cloned().unwrap_or_default());
    let lib = library.clone();
    let changes = LocalResource::new(move || {
        let (library, from, to, open) = (lib.clone(), from.get(), to.get(), open.get());
        async move {
            if !open {
                return None;
            }
            let request = ChangesRequest {
                from,
                to,
                file_path: None,
                max_tokens: None,
            };
            Some(compare_versions(library, request).await)
        }
    });
    let options = move |picked: RwSignal<String>| {
        versions
            .iter()
            .map(|v| {
                let selected = picked.get_untracked() == *v;
                view! { <option value=v.clone() selected=selected>{v.clone()}</option> }
            })
            .collect_view()
    };
    let (from_options, to_options) = (options(from), options(to));
    view! {
        <div class="changes">
            <button
                type="button"
                aria-expanded=move || open.get().to_string()
                aria-label=format!("Compare versions of {library}")
                on:click=move |_| open.update(|o| *o = !*o)
            >
                "Compare versions"
            </button>
            <div class="changes-body" hidden=move || !open.get()>
                <div class="filters changes-picker">
                    <label>
                        "From version"
                        <select on:change=move |ev| from.set(event_target_value(&ev))>
                            {from_options}
                        </select>
                    </label>
                    <label>
                        "To version"
                        <select on:change=move |ev| to.set(event_target_value(&ev))>
                            {to_options}
                        </select>
                    </label>
                </div>
                <Suspense>
                    {move || match changes.get().flatten() {
                        None if open.get() => view! { <p class="muted" role="status">"Comparing…"</p> }.into_any(),
                        None => ().into_any(),
                        Some(Err(err)) => view! { <ErrorNotice message=err.to_string()/> }.into_any(),
                        Some(Ok(changes)) => view! { <Comparison changes/> }.into_any(),
                    }}
                </Suspense>
            </div>
        </div>
    }
}

/// One comparison: its totals, release notes and documents.
#[component]
fn Comparison(changes: VersionChanges) -> impl IntoView {
    let t = changes.totals;
    let summary = format!(
        "From {} to {}: {} documents changed, {} added, {} removed, {} moved, {} unchanged; \
         sections {} added, {} removed, {} changed.",
        changes.from,
        changes.to,
        t.documents_changed,
        t.documents_added,
        t.documents_removed,
        t.documents_moved,
        t.documents_unchanged,
        t.sections_added,
        t.sections_removed,
        t.sections_changed,
    );
    let VersionChanges {
        library,
        from,
        to,
        documents,
        release_notes,
        ..
    } = changes;
    let notes = (!release_notes.is_empty()).then(|| {
        let links = release_notes
            .into_iter()
            .map(|path| {
                let href = href(&library, &to, &path);
                view! { <li><a href=href>{path}</a></li> }
            })
            .collect_view();
        view! {
            <p class="release-notes">"Release notes of " {to.clone()} ":"</p>
            <ul class="notes" aria-label="Release notes">{links}</ul>
        }
    });
    let listed = match documents.is_empty() {
        true => view! { <p class="muted">"No differences."</p> }.into_any(),
        false => {
            let label = format!("What changed in {library} from {from} to {to}");
            let items = documents
                .into_iter()
                .map(|document| {
                    view! {
                        <ChangedDocument
                            library=library.clone()
                            from=from.clone()
                            to=to.clone()
                            document
                        />
                    }
                })
                .collect_view();
            view! { <ul class="changed-documents" aria-label=label>{items}</ul> }.into_any()
        }
    };
    view! {
        <p class="muted" role="status">{summary}</p>
        {notes}
        {listed}
    }
}

/// The document page of one version's document.
fn href(library: &str, version: &str, file_path: &str) -> String {
    format!(
        "/doc?library={}&version={}&file_path={}",
        client::encode(library),
        client::encode(version),
        client::encode(file_path)
    )
}

/// A kind of change, as a badge.
fn badge(kind: &'static str) -> impl IntoView {
    view! { <span class=format!("change-kind {kind}")>{kind}</span> }
}

/// One document that differs, linked in the version that has it. A
/// document added or removed whole lists its sections by heading only:
/// its link reads the whole text.
#[component]
fn ChangedDocument(
    library: String,
    from: String,
    to: String,
    document: DocumentChange,
) -> impl IntoView {
    let (kind, whole) = match document.change {
        DocumentChangeKind::Changed => ("changed", false),
        DocumentChangeKind::Added => ("added", true),
        DocumentChangeKind::Removed => ("removed", true),
        DocumentChangeKind::Moved => ("moved", false),
    };
    let version = match document.change {
        DocumentChangeKind::Removed => &from,
        _ => &to,
    };
    let link = href(&library, version, &document.file_path);
    let moved = document
        .previous_path
        .clone()
        .map(|was| view! { <span class="muted">" (was " {was} ")"</span> });
    let title = document
        .title
        .clone()
        .map(|t| view! { <span class="muted">" · " {t}</span> });
    let left_out = (document.sections_left_out > 0).then(|| {
        view! {
            <p class="muted">{format!("{} more sections left out.", document.sections_left_out)}</p>
        }
    });
    let label = format!("Sections of {}", document.file_path);
    let sections = document
        .sections
        .into_iter()
        .map(|section| {
            view! { <ChangedSection section whole from=from.clone() to=to.clone()/> }
        })
        .collect_view();
    view! {
        <li class="changed-document">
            <h3>{badge(kind)} " " <a href=link>{document.file_path.clone()}</a> {moved} {title}</h3>
            <ul class="changed-sections" aria-label=label>{sections}</ul>
            {left_out}
        </li>
    }
}

/// One section that differs: an added or removed one with its text (but
/// for a document added or removed whole), a changed one as its diff,
/// which opens side by side.
#[component]
fn ChangedSection(section: SectionChange, whole: bool, from: String, to: String) -> impl IntoView {
    let kind = match section.change {
        SectionChangeKind::Added => "added",
        SectionChangeKind::Removed => "removed",
        SectionChangeKind::Changed => "changed",
    };
    let heading = match section.heading_path.as_str() {
        "" => "(before the first heading)".to_owned(),
        h => h.to_owned(),
    };
    let renamed = section
        .renamed_from
        .clone()
        .map(|was| view! { <span class="muted">" (renamed from " {was} ")"</span> });
    let body = match (section.diff, section.text) {
        (Some(diff), _) => view! { <Diff diff heading=heading.clone() from to/> }.into_any(),
        (None, Some(text)) if !whole => view! { <pre class="section-text">{text}</pre> }.into_any(),
        _ => ().into_any(),
    };
    view! {
        <li class="changed-section">
            <p class="section-head">{badge(kind)} " " <strong>{heading}</strong> {renamed}</p>
            {body}
        </li>
    }
}

/// A changed section's word diff inline, and on demand its two sides.
#[component]
fn Diff(diff: String, heading: String, from: String, to: String) -> impl IntoView {
    let open = RwSignal::new(false);
    let inline = inline(&diff);
    let older = side(&diff, false);
    let newer = side(&diff, true);
    let label = format!("{heading}: {from} and {to} side by side");
    let (before, after) = (format!("Before ({from})"), format!("After ({to})"));
    let (before_label, after_label) = (before.clone(), after.clone());
    view! {
        <p class="word-diff">{inline}</p>
        <button
            type="button"
            class="small"
            aria-expanded=move || open.get().to_string()
            aria-label=format!("Show {heading} side by side")
            on:click=move |_| open.update(|o| *o = !*o)
        >
            "Side by side"
        </button>
        <div class="side-by-side" role="group" aria-label=label hidden=move || !open.get()>
            <div class="side" role="group" aria-label=before_label>
                <h4>{before}</h4>
                <p class="word-diff">{older}</p>
            </div>
            <div class="side" role="group" aria-label=after_label>
                <h4>{after}</h4>
                <p class="word-diff">{newer}</p>
            </div>
        </div>
    }
}

/// One run of a diff, removed words struck, added ones marked.
fn marked(part: DiffPart<'_>) -> AnyView {
    match part {
        DiffPart::Same(words) => words.to_owned().into_any(),
        DiffPart::Removed(words) => view! { <del>{words.to_owned()}</del> }.into_any(),
        DiffPart::Added(words) => view! { <ins>{words.to_owned()}</ins> }.into_any(),
    }
}

/// A diff on one line: each run marked, a removal and the addition that
/// replaces it set apart by the space [`diff_parts`] leaves out.
fn inline(diff: &str) -> Vec<AnyView> {
    let parts = diff_parts(diff);
    let mut views = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let replacing = i > 0
            && matches!(part, DiffPart::Added(_))
            && matches!(parts[i - 1], DiffPart::Removed(_));
        if replacing {
            views.push(" ".into_any());
        }
        views.push(marked(*part));
    }
    views
}

/// One side of a diff: the older (what both have, and what it lost) or
/// the newer (what both have, and what it gained).
fn side(diff: &str, newer: bool) -> Vec<AnyView> {
    diff_parts(diff)
        .into_iter()
        .filter(|part| match part {
            DiffPart::Same(_) => true,
            DiffPart::Removed(_) => !newer,
            DiffPart::Added(_) => newer,
        })
        .map(marked)
        .collect()
}
