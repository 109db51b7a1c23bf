//! The search page: one query box, filters, the sticky library chip, and
//! results with their sources, scores and feedback buttons.
//!
//! The query and filters live in the URL (`/?q=…&library=…`), so a search
//! can be shared and reloaded; the page runs the search whenever the URL
//! changes. Searches run from the browser (after hydration), because the
//! session that carries the sticky library is the browser's.

use index_core::access::Role;
use index_core::feedback::Vote;
use index_core::search::{Fusion, Mode, SearchHit, SearchParams, SearchResponse};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};
use leptos_router::NavigateOptions;
use serde::{Deserialize, Serialize};

use crate::api::{search, send_feedback};
use crate::client;
use crate::components::{use_sticky, ErrorNotice, LibraryField, StickyChip};

/// Filters and options, as they appear in the URL. The field names are
/// the URL's keys: reading and writing the URL go through serde, so a new
/// field is added here and in the form, nowhere else.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Query {
    q: String,
    library: String,
    version: String,
    mode: String,
    fusion: String,
    w_rec: String,
    w_sig: String,
}

impl Query {
    /// The query from the URL's keys and values; unknown keys are ignored.
    fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let fields: serde_json::Map<String, serde_json::Value> = pairs
            .into_iter()
            .map(|(k, v)| {
                let value = serde_json::Value::String(v.as_ref().to_owned());
                (k.as_ref().to_owned(), value)
            })
            .collect();
        serde_json::from_value(serde_json::Value::Object(fields)).unwrap_or_default()
    }

    /// The URL of this query: the fields given, in key order.
    fn to_url(&self) -> String {
        let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(self) else {
            return "/".to_owned();
        };
        let mut parts: Vec<String> = fields
            .iter()
            .filter_map(|(key, value)| {
                let value = value.as_str()?.trim();
                (!value.is_empty()).then(|| format!("{key}={}", client::encode(value)))
            })
            .collect();
        // serde_json's map keeps declaration order only when some crate in
        // the build turns on `preserve_order`: sort, so every build agrees.
        parts.sort();
        format!("/?{}", parts.join("&"))
    }

    fn params(&self, session_id: Option<String>) -> SearchParams {
        let opt = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        SearchParams {
            query: self.q.clone(),
            library: opt(&self.library),
            version: opt(&self.version),
            mode: opt(&self.mode),
            fusion: opt(&self.fusion),
            w_rec: self.w_rec.parse().ok().filter(|w: &f32| *w > 0.0),
            w_sig: self.w_sig.parse().ok().filter(|w: &f32| *w > 0.0),
            session_id,
            ..SearchParams::default()
        }
    }
}

#[component]
pub fn SearchPage() -> impl IntoView {
    let url = use_query_map();
    let from_url = move || Query::from_pairs(url.get().latest_values());
    // The form's fields, filled from the URL on load.
    let initial = from_url();
    let q = RwSignal::new(initial.q.clone());
    let library = RwSignal::new(initial.library.clone());
    let version = RwSignal::new(initial.version.clone());
    let mode = RwSignal::new(initial.mode.clone());
    let fusion = RwSignal::new(initial.fusion.clone());
    let w_rec = RwSignal::new(initial.w_rec.clone());
    let w_sig = RwSignal::new(initial.w_sig.clone());

    let sticky = use_sticky();

    // Run the search whenever the URL's query changes.
    let results = LocalResource::new(move || {
        let query = from_url();
        async move {
            if query.q.trim().is_empty() {
                return None;
            }
            let response = search(query.params(client::session_id())).await;
            if let Ok(r) = &response {
                sticky.set(r.sticky_library.clone());
            }
            Some(response)
        }
    });

    let navigate = use_navigate();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let query = Query {
            q: q.get_untracked(),
            library: library.get_untracked(),
            version: version.get_untracked(),
            mode: mode.get_untracked(),
            fusion: fusion.get_untracked(),
            w_rec: w_rec.get_untracked(),
            w_sig: w_sig.get_untracked(),
        };
        navigate(&query.to_url(), NavigateOptions::default());
    };

    view! {
        <section class="panel search" aria-labelledby="search-heading">
            <h1 id="search-heading">"Search"</h1>
            <form role="search" class="search-form" on:submit=submit>
                <div class="query-row">
                    <input
                        type="search"
                        name="q"
                        aria-label="Query"
                        placeholder="Ask about your docs…"
                        autofocus
                        prop:value=move || q.get()
                        on:input=move |ev| q.set(event_target_value(&ev))
                    />
                    <button type="submit" class="primary">"Search"</button>
                </div>
                <div class="filters">
                    <LibraryField value=library list_id="library-names"/>
                    <label>
                        "Version"
                        <input
                            name="version"
                            placeholder="any, or latest"
                            prop:value=move || version.get()
                            on:input=move |ev| version.set(event_target_value(&ev))
                        />
                    </label>
                    <StickyChip sticky library/>
                </div>
                <details class="advanced">
                    <summary>"Advanced"</summary>
                    <div class="filters">
                        <label>
                            "Mode"
                            <select name="mode" on:change=move |ev| mode.set(event_target_value(&ev))>
                                {Mode::ALL
                                    .into_iter()
                                    .map(|m| {
                                        // The default travels as no value, so URLs stay short.
                                        let value = if m == Mode::default() { "" } else { m.name() };
                                        view! {
                                            <option value=value selected=move || mode.get() == value title=m.describe()>
                                                {m.name()}
                                            </option>
                                        }
                                    })
                                    .collect_view()}
                            </select>
                        </label>
                        <label>
                            "Fusion"
                            <select name="fusion" on:change=move |ev| fusion.set(event_target_value(&ev))>
                                {Fusion::NAMES
                                    .into_iter()
                                    .map(|name| {
                                        let value = if name == Fusion::default().name() { "" } else { name };
                                        view! {
                                            <option value=value selected=move || fusion.get() == value>{name}</option>
                                        }
                                    })
                                    .collect_view()}
                            </select>
                        </label>
                        <WeightSlider label="Recency weight" name="w_rec" value=w_rec/>
                        <WeightSlider label="Feedback weight" name="w_sig" value=w_sig/>
                    </div>
                </details>
            </form>
            <div class="results" aria-live="polite">
                <Suspense fallback=|| view! { <p class="muted" role="status">"Searching…"</p> }>
                    {move || match results.get() {
                        None => view! { <p class="muted" role="status">"Searching…"</p> }.into_any(),
                        Some(None) => {
                            view! { <p class="muted">"Type a question or some keywords, then press Enter."</p> }
                                .into_any()
                        }
                        Some(Some(Err(err))) => {
                            view! { <ErrorNotice message=err.to_string()/> }.into_any()
                        }
                        Some(Some(Ok(response))) => view! { <Results response/> }.into_any(),
                    }}
                </Suspense>
            </div>
        </section>
    }
}

/// A 0–1 blending weight as a slider; an empty value (the URL's "not set")
/// shows as 0.
#[component]
fn WeightSlider(label: &'static str, name: &'static str, value: RwSignal<String>) -> impl IntoView {
    let number = move || value.get().parse::<f32>().unwrap_or(0.0);
    view! {
        <label>
            {label} " " {move || format!("{:.2}", number())}
            <input
                type="range" min="0" max="1" step="0.05" name=name
                prop:value=move || if value.get().is_empty() { "0".to_owned() } else { value.get() }
                on:input=move |ev| value.set(event_target_value(&ev))
            />
        </label>
    }
}

#[component]
fn Results(response: SearchResponse) -> impl IntoView {
    if response.results.is_empty() {
        return view! { <p class="muted">"No results. Try other words, or clear the library filter."</p> }
            .into_any();
    }
    let summary = format!(
        "{} result{} in {:.0} ms",
        response.total_results,
        if response.total_results == 1 { "" } else { "s" },
        response.took_ms
    );
    let notice = response.notice.clone();
    let groups: Vec<(Option<String>, Vec<SearchHit>)> = if response.libraries_found.len() >= 2 {
        response
            .libraries_found
            .iter()
            .map(|lib| {
                let hits = response
                    .results
                    .iter()
                    .filter(|h| &h.library == lib)
                    .cloned()
                    .collect();
                (Some(lib.clone()), hits)
            })
            .collect()
    } else {
        vec![(None, response.results.clone())]
    };
    view! {
        <p class="muted summary">{summary}</p>
        {notice.map(|n| view! { <p class="notice" role="note">{n}</p> })}
        {groups
            .into_iter()
            .map(|(library, hits)| {
                let list = view! {
                    <ol class="hits">
                        {hits.into_iter().map(|hit| view! { <Hit hit/> }).collect_view()}
                    </ol>
                };
                match library {
                    Some(lib) => view! {
                        <section class="group" aria-label=format!("Results from {lib}")>
                            <h2>{lib.clone()}</h2>
                            {list}
                        </section>
                    }
                    .into_any(),
                    None => list.into_any(),
                }
            })
            .collect_view()}
    }
    .into_any()
}

/// One of a page's other matching sections, as its card lists it.
struct SectionLink {
    href: String,
    label: String,
    snippet: String,
}

#[component]
fn Hit(hit: SearchHit) -> impl IntoView {
    let title = hit.title.clone().unwrap_or_else(|| hit.file_path.clone());
    let mut source = format!("{} {} · {}", hit.library, hit.version, hit.file_path);
    if !hit.heading_path.is_empty() {
        source.push_str(&format!(" › {}", hit.heading_path));
    }
    if let Some(page) = hit.page {
        source.push_str(&format!(" · page {page}"));
    }
    let open = client::doc_href(&hit.library, &hit.version, &hit.file_path, hit.chunk_index);
    let sections: Vec<SectionLink> = hit
        .sections
        .iter()
        .map(|s| SectionLink {
            href: client::doc_href(&hit.library, &hit.version, &hit.file_path, s.chunk_index),
            label: match s.heading_path.as_str() {
                "" => format!("Chunk {}", s.chunk_index + 1),
                h => h.to_owned(),
            },
            snippet: s.snippet.clone(),
        })
        .collect();
    let mut parts = Vec::new();
    if let Some(d) = hit.parts.dense {
        parts.push(format!("dense {d:.3}"));
    }
    if let Some(k) = hit.parts.keyword {
        parts.push(format!("keyword {k:.2}"));
    }
    parts.push(format!("fused {:.3}", hit.parts.fused));
    if let Some(r) = hit.parts.recency {
        parts.push(format!("recency {r:.2}"));
    }
    if let Some(s) = hit.parts.signal {
        parts.push(format!("signal {s:.2}"));
    }
    if let Some(r) = hit.parts.rerank {
        parts.push(format!("rerank +{r:.3}"));
    }
    if let Some(share) = hit.parts.repeated {
        parts.push(format!("repeated ×{share:.1}"));
    }
    let voted: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    let vote = move |v: Vote, chunk_id: String| {
        leptos::task::spawn_local(async move {
            let result = send_feedback(chunk_id, v).await;
            voted.set(Some(match result {
                Ok(votes) => Ok(format!(
                    "Thanks! {} like(s), {} dislike(s) so far.",
                    votes.likes, votes.dislikes
                )),
                Err(err) => Err(err.to_string()),
            }));
        });
    };
    let (like_id, dislike_id) = (hit.chunk_id.clone(), hit.chunk_id.clone());
    let viewer = crate::viewer::use_viewer();
    let (vote_library, vote_library2) = (hit.library.clone(), hit.library.clone());
    view! {
        <li class="hit" data-chunk-id=hit.chunk_id.clone()>
            <h3><a href=open.clone()>{title}</a></h3>
            <p class="source">{source}</p>
            // The server renders the snippet's Markdown to a fixed set of
            // tags and escapes everything else (index_core::markdown).
            <div class="snippet" inner_html=hit.snippet.clone()></div>
            {(!sections.is_empty())
                .then(|| {
                    view! {
                        <ul class="sections" aria-label="Other matches in this page">
                            {sections.into_iter().map(|s| view! {
                                <li>
                                    <a href=s.href>{s.label}</a>
                                    <div class="snippet" inner_html=s.snippet></div>
                                </li>
                            }).collect_view()}
                        </ul>
                    }
                })}
            <p class="score">
                <span>{format!("score {:.3}", hit.score)}</span>
                " "
                <span class="muted">{format!("({})", parts.join(", "))}</span>
            </p>
            <div class="actions">
                <a class="button" href=open>"Open"</a>
                // A vote changes ranking: only a token that may write to
                // the library may cast one.
                <button
                    type="button"
                    aria-label="Like this result"
                    hidden=move || !viewer.may(Role::Write, &vote_library)
                    on:click=move |_| vote(Vote::Like, like_id.clone())
                >
                    "Like"
                </button>
                <button
                    type="button"
                    aria-label="Dislike this result"
                    hidden=move || !viewer.may(Role::Write, &vote_library2)
                    on:click=move |_| vote(Vote::Dislike, dislike_id.clone())
                >
                    "Dislike"
                </button>
                {move || match voted.get() {
                    None => ().into_any(),
                    Some(Ok(m)) => view! { <span class="muted" role="status">{m}</span> }.into_any(),
                    Some(Err(m)) => view! { <span class="error" role="alert">{m}</span> }.into_any(),
                }}
            </div>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_query_round_trips_through_its_fields() {
        let query = Query::from_pairs([("q", "prune roses"), ("library", "garden"), ("utm", "x")]);
        assert_eq!(query.q, "prune roses");
        assert_eq!(query.library, "garden");
        assert_eq!(query.mode, "");
        assert_eq!(query.to_url(), "/?library=garden&q=prune%20roses");
        assert_eq!(Query::default().to_url(), "/?");
    }
}
