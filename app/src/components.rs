//! Pieces of view every page uses, so a page imports them from here rather
//! than from another page.

use leptos::prelude::*;

use index_core::search::Sticky;

use crate::api::{clear_sticky, get_sticky, list_libraries};
use crate::client;

/// A failure, announced to screen readers as it appears.
#[component]
pub fn ErrorNotice(#[prop(into)] message: String) -> impl IntoView {
    view! { <p class="error" role="alert">{message}</p> }
}

/// The stored library names as a `<datalist>`, so library fields suggest them.
#[component]
pub fn LibraryNames(id: &'static str) -> impl IntoView {
    let libraries = LocalResource::new(list_libraries);
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

/// The session's sticky library, as the server remembers it: the library
/// a search or a question settled on, which later ones keep to until it is
/// cleared. The search and Ask pages share the session, so they share this
/// too; see [`use_sticky`].
#[derive(Clone, Copy)]
pub struct StickyLibrary(RwSignal<Option<Sticky>>);

/// The session's sticky library, loaded when the page opens (in the
/// browser: the session is the browser's).
pub fn use_sticky() -> StickyLibrary {
    let sticky = StickyLibrary(RwSignal::new(None));
    Effect::new(move |_| sticky.reload());
    sticky
}

impl StickyLibrary {
    pub fn get(self) -> Option<Sticky> {
        self.0.get()
    }

    /// What an answer says the sticky library now is.
    pub fn set(self, sticky: Option<Sticky>) {
        self.0.set(sticky);
    }

    /// Asks the server again (after something that may have changed it).
    pub fn reload(self) {
        if let Some(id) = client::session_id() {
            leptos::task::spawn_local(async move {
                if let Ok(sticky) = get_sticky(id).await {
                    self.set(sticky);
                }
            });
        }
    }

    /// Forgets it, on the server and here.
    pub fn clear(self) {
        if let Some(id) = client::session_id() {
            leptos::task::spawn_local(async move {
                if clear_sticky(id).await.is_ok() {
                    self.set(None);
                }
            });
        }
    }
}

/// The session's sticky library as a chip whose × forgets it (and empties
/// the page's library field).
#[component]
pub fn StickyChip(sticky: StickyLibrary, library: RwSignal<String>) -> impl IntoView {
    let clear = move |_| {
        sticky.clear();
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
