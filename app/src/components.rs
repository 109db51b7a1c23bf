//! Pieces of view every page uses, so a page imports them from here rather
//! than from another page.

use leptos::prelude::*;

use crate::api::list_libraries;
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
