//! The settings page, for admins: tokens made (the secret shown once),
//! listed and revoked, the credentials the operator declared for private
//! sources, and the audit log of writes and token changes. Everything here
//! goes through the REST API (`/api/tokens`, `/api/credentials`,
//! `/api/audit`), which refuses anyone but an admin whatever the page shows.

use index_core::access::{AuditEntry, CreatedToken, Grant, NewToken, TokenInfo};
use index_core::source::CredentialList;
use leptos::prelude::*;

use crate::components::ErrorNotice;
use crate::viewer::use_viewer;

#[component]
pub fn SettingsPage() -> impl IntoView {
    let viewer = use_viewer();
    let tokens = LocalResource::new(load_tokens);
    let audit = LocalResource::new(load_audit);
    let credentials = LocalResource::new(load_credentials);
    let created = RwSignal::new(None::<Result<CreatedToken, String>>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let reload = move || {
        tokens.refetch();
        audit.refetch();
    };
    view! {
        <Show when=move || viewer.known() && !viewer.is_admin()>
            <p class="notice" role="status">"Tokens and the audit log are for admins."</p>
        </Show>
        <section class="panel" aria-labelledby="tokens-heading" hidden=move || !viewer.is_admin()>
            <h1 id="tokens-heading">"Tokens"</h1>
            <NewTokenForm created reload=Callback::new(move |()| reload())/>
            {move || created.get().map(|outcome| match outcome {
                Ok(made) => view! {
                    <div class="notice" role="status">
                        <p>{format!("Token {} made. Copy it now: it is not shown again.", made.info.name)}</p>
                        <code class="secret" data-testid="new-token">{made.token}</code>
                    </div>
                }
                .into_any(),
                Err(m) => view! { <ErrorNotice message=m/> }.into_any(),
            })}
            {move || match message.get() {
                Some(Ok(m)) => view! { <p class="notice" role="status">{m}</p> }.into_any(),
                Some(Err(m)) => view! { <ErrorNotice message=m/> }.into_any(),
                None => ().into_any(),
            }}
            <Suspense>
                {move || match tokens.get() {
                    None => view! { <p class="muted" role="status">"Loading…"</p> }.into_any(),
                    Some(Err(m)) => view! { <ErrorNotice message=m/> }.into_any(),
                    Some(Ok(list)) if list.is_empty() => {
                        view! { <p class="muted">"No tokens yet."</p> }.into_any()
                    }
                    Some(Ok(list)) => view! {
                        <table class="tokens" aria-label="Tokens">
                            <thead>
                                <tr><th>"Name"</th><th>"Grants"</th><th>"Starts"</th><th>"State"</th><th></th></tr>
                            </thead>
                            <tbody>
                                {list
                                    .into_iter()
                                    .map(|t| view! { <TokenRow token=t message reload=Callback::new(move |()| reload())/> })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any(),
                }}
            </Suspense>
        </section>
        <section class="panel" aria-labelledby="credentials-heading" hidden=move || !viewer.is_admin()>
            <h2 id="credentials-heading">"Credentials"</h2>
            <p class="muted">
                "What a private repository or site may name as its credential. The server's operator declares them (--credential NAME=env:VARIABLE@HOST), each sent to its own hosts alone; their secrets never leave the server."
            </p>
            <Suspense>
                {move || match credentials.get() {
                    None => ().into_any(),
                    Some(Err(m)) => view! { <ErrorNotice message=m/> }.into_any(),
                    Some(Ok(listed)) if listed.credentials.is_empty() => {
                        view! { <p class="muted">"None declared."</p> }.into_any()
                    }
                    Some(Ok(listed)) => view! {
                        <table class="credentials" aria-label="Credentials">
                            <thead>
                                <tr><th>"Name"</th><th>"Sent to"</th><th>"Libraries"</th></tr>
                            </thead>
                            <tbody>
                                {listed
                                    .credentials
                                    .into_iter()
                                    .map(|c| view! {
                                        <tr>
                                            <td><code>{c.name}</code></td>
                                            <td>{c.sent_to.join(", ")}</td>
                                            <td>
                                                {if c.libraries.is_empty() {
                                                    "every library".to_owned()
                                                } else {
                                                    c.libraries.join(", ")
                                                }}
                                            </td>
                                        </tr>
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any(),
                }}
            </Suspense>
        </section>
        <section class="panel" aria-labelledby="audit-heading" hidden=move || !viewer.is_admin()>
            <h2 id="audit-heading">"Audit log"</h2>
            <Suspense>
                {move || match audit.get() {
                    None => ().into_any(),
                    Some(Err(m)) => view! { <ErrorNotice message=m/> }.into_any(),
                    Some(Ok(entries)) => view! {
                        <table class="audit" aria-label="Audit log">
                            <thead>
                                <tr><th>"When"</th><th>"Token"</th><th>"Action"</th><th>"Target"</th><th>"Outcome"</th></tr>
                            </thead>
                            <tbody>
                                {entries
                                    .into_iter()
                                    .map(|e| view! {
                                        <tr>
                                            <td>{super::libraries::when(e.at_micros / 1_000_000)}</td>
                                            <td>{e.token}</td>
                                            <td>{e.action}</td>
                                            <td>{e.target}</td>
                                            <td>{e.outcome}</td>
                                        </tr>
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any(),
                }}
            </Suspense>
        </section>
    }
}

/// The form that makes a token.
#[component]
fn NewTokenForm(
    created: RwSignal<Option<Result<CreatedToken, String>>>,
    reload: Callback<()>,
) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let grants = RwSignal::new(String::from("read:*"));
    let days = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let request = match read_request(
            &name.get_untracked(),
            &grants.get_untracked(),
            &days.get_untracked(),
        ) {
            Ok(request) => request,
            Err(m) => return created.set(Some(Err(m))),
        };
        leptos::task::spawn_local(async move {
            created.set(Some(create(request).await));
            reload.run(());
        });
    };
    view! {
        <form class="filters" on:submit=submit>
            <label>
                "Name"
                <input
                    name="token-name"
                    placeholder="ci-react"
                    prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))
                />
            </label>
            <label>
                "Grants"
                <input
                    name="grants"
                    placeholder="read:* write:team-*"
                    prop:value=move || grants.get()
                    on:input=move |ev| grants.set(event_target_value(&ev))
                />
            </label>
            <label>
                "Expires in days"
                <input
                    name="expires"
                    inputmode="numeric"
                    placeholder="never"
                    prop:value=move || days.get()
                    on:input=move |ev| days.set(event_target_value(&ev))
                />
            </label>
            <button type="submit">"Make token"</button>
        </form>
    }
}

/// The form's fields as a token request: grants separated by spaces or
/// commas, in the command line's form (`read:team-*`, `admin`).
fn read_request(name: &str, grants: &str, days: &str) -> Result<NewToken, String> {
    let grants = grants
        .split([' ', ','])
        .filter(|g| !g.trim().is_empty())
        .map(|g| g.parse::<Grant>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let expires_in_days = match days.trim() {
        "" => None,
        d => Some(
            d.parse::<u32>()
                .map_err(|_| "the expiry is a number of days".to_owned())?,
        ),
    };
    let request = NewToken {
        name: name.trim().to_owned(),
        grants,
        expires_in_days,
    };
    request.check().map_err(|e| e.to_string())?;
    Ok(request)
}

#[component]
fn TokenRow(
    token: TokenInfo,
    message: RwSignal<Option<Result<String, String>>>,
    reload: Callback<()>,
) -> impl IntoView {
    let grants: Vec<String> = token.grants.iter().map(ToString::to_string).collect();
    let state = match (token.revoked_at, token.expires_at) {
        (Some(_), _) => "revoked".to_owned(),
        (None, Some(at)) => format!("expires {}", super::libraries::when(at)),
        (None, None) => "active".to_owned(),
    };
    let revoked = token.revoked_at.is_some();
    let (id, name) = (token.id.clone(), token.name.clone());
    let revoke = move |_| {
        let (id, name) = (id.clone(), name.clone());
        if !crate::client::confirm(&format!(
            "Revoke the token {name}? Its holders lose access at once."
        )) {
            return;
        }
        leptos::task::spawn_local(async move {
            message.set(Some(
                revoke(&id).await.map(|_| format!("Token {name} revoked.")),
            ));
            reload.run(());
        });
    };
    view! {
        <tr>
            <td>{token.name.clone()}</td>
            <td>{grants.join(" ")}</td>
            <td><code>{token.prefix.clone()}</code></td>
            <td>{state}</td>
            <td>
                <button
                    type="button"
                    class="small danger"
                    aria-label=format!("Revoke token {}", token.name)
                    hidden=revoked
                    on:click=revoke
                >
                    "Revoke"
                </button>
            </td>
        </tr>
    }
}

async fn load_tokens() -> Result<Vec<TokenInfo>, String> {
    send_json(Call::Get("/api/tokens".to_owned())).await
}

async fn load_audit() -> Result<Vec<AuditEntry>, String> {
    send_json(Call::Get("/api/audit?limit=50".to_owned())).await
}

async fn load_credentials() -> Result<CredentialList, String> {
    send_json(Call::Get("/api/credentials".to_owned())).await
}

async fn create(request: NewToken) -> Result<CreatedToken, String> {
    send_json(Call::Post("/api/tokens", request)).await
}

async fn revoke(id: &str) -> Result<TokenInfo, String> {
    send_json(Call::Delete(format!(
        "/api/tokens/{}",
        crate::client::encode(id)
    )))
    .await
}

/// A call to the REST API this page makes (read in the browser only).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Call {
    Get(String),
    Post(&'static str, NewToken),
    Delete(String),
}

/// Sends `call` (in the browser; on the server there is nothing to ask)
/// and reads its JSON answer, or the error body's words.
async fn send_json<T: serde::de::DeserializeOwned>(call: Call) -> Result<T, String> {
    #[cfg(feature = "hydrate")]
    {
        use crate::client;
        let request = match call {
            Call::Get(url) => client::get(&url).build(),
            Call::Post(url, body) => client::post(url).json(&body),
            Call::Delete(url) => client::delete(&url).build(),
        }
        .map_err(|e| e.to_string())?;
        let response = client::send(request).await.map_err(|e| e.to_string())?;
        response.json().await.map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = call;
        Err("read in the browser".to_owned())
    }
}
