//! docshelf's dashboard.
//!
//! The same components render on the server (`ssr`, inside `docshelf serve`)
//! and hydrate in the browser (`hydrate`, the wasm bundle). Data reaches the
//! page only through `#[server]` functions ([`api`]); on the server those call
//! the engine through the [`backend::Backend`] trait, which the `server`
//! crate implements. That keeps the dependency arrow pointing one way:
//! `server → app → index-core`.

#![recursion_limit = "256"]

mod account;
pub mod api;
#[cfg(feature = "ssr")]
pub mod backend;
mod client;
mod components;
pub mod error;
mod pages;
mod viewer;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes, A},
    StaticSegment,
};

/// The name the browser bundle is built under: `/pkg/app.js`,
/// `/pkg/app_bg.wasm`, `/pkg/app.css`. Trunk names the script and the
/// module after the crate, and the stylesheet after its file
/// (`style/app.css`), so this is the crate's name.
pub const OUTPUT_NAME: &str = "app";

/// The HTML document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The dashboard's root component.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    // Effects run only in the browser, so this flips once hydration has
    // attached event handlers. Tests (and impatient users' scripts) wait on it
    // instead of sleeping.
    let (hydrated, set_hydrated) = signal(false);
    let viewer = viewer::Viewer::provide();
    Effect::new(move |_| set_hydrated.set(true));

    view! {
        <Stylesheet id="leptos" href=format!("/pkg/{OUTPUT_NAME}.css")/>
        <Title text="docshelf"/>
        <div
            class="app"
            data-hydrated=move || hydrated.get().to_string()
            data-viewer=move || viewer.known().to_string()
        >
            <Router>
                <header class="topbar">
                    <a class="brand" href="/">"docshelf"</a>
                    <nav aria-label="Main">
                        <A href="/">"Search"</A>
                        <A href="/ask">"Ask"</A>
                        <Show when=move || viewer.writes_any()>
                            <A href="/upload">"Upload"</A>
                        </Show>
                        <A href="/libraries">"Libraries"</A>
                        <A href="/status">"Status"</A>
                        <Show when=move || viewer.is_admin() && viewer.caller().is_some_and(|c| c.tokens_required)>
                            <A href="/settings">"Settings"</A>
                        </Show>
                    </nav>
                    <account::Account/>
                </header>
                <main class="content">
                    <Routes fallback=pages::NotFound>
                        <Route path=StaticSegment("") view=pages::SearchPage/>
                        <Route path=StaticSegment("ask") view=pages::AskPage/>
                        <Route path=StaticSegment("upload") view=pages::UploadPage/>
                        <Route path=StaticSegment("libraries") view=pages::LibrariesPage/>
                        <Route path=StaticSegment("doc") view=pages::DocumentPage/>
                        <Route path=StaticSegment("status") view=pages::StatusPage/>
                        <Route path=StaticSegment("settings") view=pages::SettingsPage/>
                    </Routes>
                </main>
            </Router>
        </div>
    }
}

/// Entry point of the browser bundle: attaches to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
