//! The top bar's account: who is signed in, sign-in with a token, and
//! sign-out. Signing in sends the token once to `/api/session`, which
//! keeps it in an `HttpOnly` cookie: the page's scripts never hold it
//! again, and every request of the page carries it from then on.

use leptos::prelude::*;

use crate::viewer::use_viewer;

#[component]
pub fn Account() -> impl IntoView {
    let viewer = use_viewer();
    let token = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let sign_in = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let given = token.get_untracked();
        leptos::task::spawn_local(async move {
            match session(Some(given.trim())).await {
                Ok(()) => {
                    token.set(String::new());
                    error.set(None);
                    reload_page();
                }
                Err(message) => error.set(Some(message)),
            }
        });
    };
    let sign_out = move |_| {
        leptos::task::spawn_local(async move {
            match session(None).await {
                Ok(()) => reload_page(),
                Err(message) => error.set(Some(message)),
            }
        });
    };
    view! {
        <div class="account">
            {move || match viewer.caller() {
                Some(caller) if caller.signed_in => view! {
                    <span class="signed-in" data-testid="signed-in">{caller.name.clone()}</span>
                    <button type="button" class="link" on:click=sign_out>"Sign out"</button>
                }
                .into_any(),
                Some(caller) if caller.tokens_required => view! {
                    <form class="sign-in" on:submit=sign_in>
                        <input
                            type="password"
                            aria-label="Token"
                            placeholder="token"
                            autocomplete="off"
                            prop:value=move || token.get()
                            on:input=move |ev| token.set(event_target_value(&ev))
                        />
                        <button type="submit">"Sign in"</button>
                    </form>
                }
                .into_any(),
                _ => ().into_any(),
            }}
            {move || error.get().map(|m| view! { <span class="error" role="alert">{m}</span> })}
        </div>
    }
}

/// Signs in with `token`, or out with none.
async fn session(token: Option<&str>) -> Result<(), String> {
    #[cfg(feature = "hydrate")]
    {
        let request = match token {
            Some(token) => crate::client::post("/api/session")
                .json(&serde_json::json!({ "token": token }))
                .map_err(|e| e.to_string())?,
            None => crate::client::delete("/api/session")
                .build()
                .map_err(|e| e.to_string())?,
        };
        crate::client::send(request)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = token;
        Err("signing in needs the browser".to_owned())
    }
}

/// Loads the page again, so everything on it is fetched as the new caller.
fn reload_page() {
    #[cfg(feature = "hydrate")]
    if let Some(window) = web_sys::window() {
        let _ = window.location().reload();
    }
}
