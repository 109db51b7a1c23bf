use leptos::prelude::*;

/// Shown for any path the dashboard does not know.
#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <section class="panel">
            <h1>"Page not found"</h1>
            <p>
                "There is nothing at this address. "
                <a href="/">"Back to the dashboard"</a>
            </p>
        </section>
    }
}
