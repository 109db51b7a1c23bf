//! Pieces of view every page uses, so a page imports them from here rather
//! than from another page.

use leptos::prelude::*;

use index_core::search::Sticky;

use crate::api::{clear_sticky, list_libraries};
use crate::client;

/// A failure, announced to screen readers as it appears.
#[component]
pub fn ErrorNotice(#[prop(into)] message: String) -> impl IntoView {
    view! { <p class="error" role="alert">{message}</p> }
}

/// The stored library names as a `<datalist>`, so library fields suggest them.
#[component]
pub fn LibraryNames(id: &'static str) -> impl IntoView {
    let libraries = LocalResource::new(|| list_libraries(client::token()));
    view! {
        <datalist id=id>
            <Suspense>
                {move || {
                    libraries
                        .get()
                        .and_then(Result::ok)
                        .map(|libs| {
                            libs.into_iter()
                                .map(|l| view! { <option value=l.name></option> })
                                .collect_view()
                        })
                }}
            </Suspense>
        </datalist>
    }
}

/// The library filter: a field that suggests the stored names.
#[component]
pub fn LibraryField(value: RwSignal<String>, list_id: &'static str) -> impl IntoView {
    view! {
        <label>
            "Library"
            <input
                list=list_id
                name="library"
                placeholder="any"
                prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev))
            />
        </label>
        <LibraryNames id=list_id/>
    }
}

/// The session's sticky library as a chip whose × forgets it (and empties
/// the page's library field).
#[component]
pub fn StickyChip(sticky: RwSignal<Option<Sticky>>, library: RwSignal<String>) -> impl IntoView {
    let clear = move |_| {
        if let Some(id) = client::session_id() {
            leptos::task::spawn_local(async move {
                if clear_sticky(id, client::token()).await.is_ok() {
                    sticky.set(None);
                }
            });
        }
        library.set(String::new());
    };
    move || {
        sticky.get().map(|s| {
            let label = match &s.version {
                Some(v) => format!("{} {v}", s.library),
                None => s.library.clone(),
            };
            view! {
                <span class="chip" role="status" aria-label="Sticky library">
                    "Sticky: " <strong>{label}</strong>
                    <button
                        type="button"
                        class="chip-clear"
                        aria-label=format!("Clear sticky library {}", s.library)
                        on:click=clear
                    >
                        "×"
                    </button>
                </span>
            }
        })
    }
}
