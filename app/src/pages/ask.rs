//! The Ask page: a conversation with the configured language model about
//! the stored documents. Answers stream in as they are written, rendered
//! from Markdown as restricted HTML (`index_core::markdown`, the same tags
//! as search snippets: a model's output is as untrusted as a document's);
//! `[n]` citations link to the passage in its document; Stop cancels the answer
//! (and the model's generation), Retry asks again, New conversation starts
//! over. The session, and with it the sticky library, is the one the search
//! page uses.
//!
//! The stream is `POST /api/ask` read through `fetch` (`client::read_events`
//! in the browser): server functions answer once, and `EventSource` cannot
//! send a body.

use index_core::ask::{AskParams, Source};
use index_core::markdown::markdown_answer;
use leptos::prelude::*;

use crate::api::get_status;
use crate::client;
use crate::components::{use_sticky, ErrorNotice, LibraryField, StickyChip};

/// Where an answer is (the browser moves it on; the server renders none).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Progress {
    Searching,
    Writing,
    Done,
    Stopped,
    Failed,
}

impl Progress {
    fn label(self) -> &'static str {
        match self {
            Self::Searching => "Searching the documentation…",
            Self::Writing => "Writing…",
            Self::Done => "",
            Self::Stopped => "Stopped.",
            Self::Failed => "",
        }
    }

    /// The state's name, for tests and styles (`data-progress`).
    fn name(self) -> &'static str {
        match self {
            Self::Searching => "searching",
            Self::Writing => "writing",
            Self::Done => "done",
            Self::Stopped => "stopped",
            Self::Failed => "failed",
        }
    }

    fn running(self) -> bool {
        matches!(self, Self::Searching | Self::Writing)
    }
}

/// One question and its answer, as it arrives.
#[derive(Clone, Copy)]
struct Exchange {
    question: StoredValue<String>,
    library: StoredValue<String>,
    answer: RwSignal<String>,
    sources: RwSignal<Vec<Source>>,
    /// Searches the model ran itself.
    searches: RwSignal<Vec<String>>,
    progress: RwSignal<Progress>,
    error: RwSignal<Option<String>>,
}

impl Exchange {
    fn new(question: String, library: String) -> Self {
        Self {
            question: StoredValue::new(question),
            library: StoredValue::new(library),
            answer: RwSignal::new(String::new()),
            sources: RwSignal::new(Vec::new()),
            searches: RwSignal::new(Vec::new()),
            progress: RwSignal::new(Progress::Searching),
            error: RwSignal::new(None),
        }
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn fail(&self, message: String) {
        self.error.set(Some(message));
        self.progress.set(Progress::Failed);
    }
}

#[component]
pub fn AskPage() -> impl IntoView {
    let status = LocalResource::new(get_status);
    let question = RwSignal::new(String::new());
    let library = RwSignal::new(String::new());
    let exchanges: RwSignal<Vec<Exchange>> = RwSignal::new(Vec::new());
    let sticky = use_sticky();
    // The next question starts the conversation over.
    let fresh = RwSignal::new(false);
    let running = move || {
        exchanges
            .get()
            .last()
            .is_some_and(|e| e.progress.get().running())
    };
    let stopper = StoredValue::new_local(None::<Stopper>);

    let start = move |text: String, lib: String| {
        let exchange = Exchange::new(text.clone(), lib.clone());
        exchanges.update(|list| list.push(exchange));
        let params = AskParams {
            question: text,
            library: Some(lib).filter(|l| !l.trim().is_empty()),
            version: None,
            session_id: client::session_id(),
            clear: Some(fresh.get_untracked()),
        };
        fresh.set(false);
        stopper.set_value(Stopper::new());
        let signal = stopper.with_value(|s| s.as_ref().and_then(Stopper::signal));
        leptos::task::spawn_local(async move {
            stream_answer(params, signal, exchange).await;
            // The answer may have settled on a library.
            sticky.reload();
        });
    };

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let text = question.get_untracked();
        if text.trim().is_empty() || running() {
            return;
        }
        question.set(String::new());
        start(text, library.get_untracked());
    };
    let stop = move |_| {
        stopper.with_value(|s| s.as_ref().map(Stopper::stop));
    };
    let retry = move |_| {
        if let Some(last) = exchanges.get_untracked().last() {
            start(last.question.get_value(), last.library.get_value());
        }
    };
    let new_conversation = move |_| {
        exchanges.set(Vec::new());
        fresh.set(true);
        library.set(String::new());
        sticky.clear();
    };

    view! {
        <section class="panel ask" aria-labelledby="ask-heading">
            <h1 id="ask-heading">"Ask"</h1>
            <Suspense>
                {move || {
                    status
                        .get()
                        .and_then(Result::ok)
                        .filter(|s| !s.ask.enabled)
                        .map(|s| {
                            view! {
                                <p class="notice" role="note" data-testid="ask-off">
                                    "Ask is off. " {s.ask.how_to_enable.unwrap_or_default()}
                                </p>
                            }
                        })
                }}
            </Suspense>
            <ol class="conversation" aria-live="polite">
                {move || {
                    exchanges
                        .get()
                        .into_iter()
                        .map(|exchange| view! { <ExchangeView exchange/> })
                        .collect_view()
                }}
            </ol>
            <form class="ask-form" on:submit=submit>
                <div class="query-row">
                    <input
                        type="text"
                        name="question"
                        aria-label="Question"
                        placeholder="Ask a question about your docs…"
                        autocomplete="off"
                        prop:value=move || question.get()
                        on:input=move |ev| question.set(event_target_value(&ev))
                    />
                    <button type="submit" class="primary" disabled=running>"Ask"</button>
                </div>
                <div class="filters">
                    <LibraryField value=library list_id="ask-library-names"/>
                    <StickyChip sticky library/>
                    <button type="button" on:click=stop disabled=move || !running()>"Stop"</button>
                    <button
                        type="button"
                        on:click=retry
                        disabled=move || running() || exchanges.get().is_empty()
                    >
                        "Retry"
                    </button>
                    <button type="button" on:click=new_conversation disabled=running>
                        "New conversation"
                    </button>
                </div>
            </form>
        </section>
    }
}

#[component]
fn ExchangeView(exchange: Exchange) -> impl IntoView {
    let progress = move || exchange.progress.get().label();
    view! {
        <li class="exchange" data-progress=move || exchange.progress.get().name()>
            <p class="question"><strong>"Q: "</strong>{exchange.question.get_value()}</p>
            <div
                class="answer snippet"
                data-testid="answer"
                inner_html=move || {
                    let sources = exchange.sources.get();
                    markdown_answer(
                        &exchange.answer.get(),
                        |n| sources.iter().find(|s| s.n == n).map(source_href),
                    )
                }
            ></div>
            <p class="muted" role="status">{progress}</p>
            {move || exchange.error.get().map(|message| view! { <ErrorNotice message/> })}
            {move || {
                let searches = exchange.searches.get();
                (!searches.is_empty())
                    .then(|| {
                        view! {
                            <p class="muted">"Searched again for: " {searches.join("; ")}</p>
                        }
                    })
            }}
            <SourceList sources=exchange.sources/>
        </li>
    }
}

#[component]
fn SourceList(sources: RwSignal<Vec<Source>>) -> impl IntoView {
    view! {
        {move || {
            let list = sources.get();
            (!list.is_empty())
                .then(|| {
                    view! {
                        <details class="sources">
                            <summary>{format!("Sources ({})", list.len())}</summary>
                            <ol>
                                {list
                                    .into_iter()
                                    .map(|s| {
                                        view! {
                                            <li value=s.n.to_string()>
                                                <a href=source_href(&s)>{source_label(&s)}</a>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ol>
                        </details>
                    }
                })
        }}
    }
}

fn source_href(s: &Source) -> String {
    client::doc_href(&s.library, &s.version, &s.file_path, s.chunk_index)
}

fn source_label(s: &Source) -> String {
    let mut label = format!("{} {} · {}", s.library, s.version, s.file_path);
    if !s.heading_path.is_empty() {
        label.push_str(&format!(" › {}", s.heading_path));
    }
    label
}

/// Cancels the answer being streamed (the browser's `AbortController`).
struct Stopper {
    #[cfg(feature = "hydrate")]
    controller: web_sys::AbortController,
}

impl Stopper {
    fn new() -> Option<Self> {
        #[cfg(feature = "hydrate")]
        {
            web_sys::AbortController::new()
                .ok()
                .map(|controller| Self { controller })
        }
        #[cfg(not(feature = "hydrate"))]
        None
    }

    #[cfg(feature = "hydrate")]
    fn signal(&self) -> Option<web_sys::AbortSignal> {
        Some(self.controller.signal())
    }

    #[cfg(not(feature = "hydrate"))]
    fn signal(&self) -> Option<()> {
        None
    }

    fn stop(&self) {
        #[cfg(feature = "hydrate")]
        self.controller.abort();
    }
}

/// Streams the answer into `exchange`.
#[cfg(feature = "hydrate")]
async fn stream_answer(
    params: AskParams,
    signal: Option<web_sys::AbortSignal>,
    exchange: Exchange,
) {
    let stopped = || signal.as_ref().is_some_and(web_sys::AbortSignal::aborted);
    let request = match client::post("/api/ask")
        .abort_signal(signal.as_ref())
        .json(&params)
    {
        Ok(request) => request,
        Err(e) => return exchange.fail(e.to_string()),
    };
    let read = match client::send(request).await {
        Ok(response) => client::read_events(&response, |frame| apply(&frame, exchange)).await,
        Err(err) => Err(err),
    };
    match read {
        Err(_) if stopped() => exchange.progress.set(Progress::Stopped),
        Err(err) => exchange.fail(err.to_string()),
        Ok(()) if exchange.progress.get_untracked().running() => {
            exchange.fail("the answer ended before it was finished".into());
        }
        Ok(()) => {}
    }
}

#[cfg(not(feature = "hydrate"))]
async fn stream_answer(_params: AskParams, _signal: Option<()>, _exchange: Exchange) {}

/// One streamed event, applied to the exchange. The names are Ask's own
/// ([`AskEvent`](index_core::ask::AskEvent)), as the server sends them.
#[cfg(feature = "hydrate")]
fn apply(frame: &client::Frame, exchange: Exchange) {
    use index_core::ask::{Answer, AskEvent, MoreSources, SourcesFound, Token};
    fn decode<T: serde::de::DeserializeOwned>(data: &str) -> Option<T> {
        serde_json::from_str(data).ok()
    }
    match frame.event.as_str() {
        AskEvent::SOURCES => {
            if let Some(found) = decode::<SourcesFound>(&frame.data) {
                exchange.sources.set(found.sources);
                exchange.progress.set(Progress::Writing);
            }
        }
        AskEvent::SEARCH => {
            if let Some(more) = decode::<MoreSources>(&frame.data) {
                exchange.sources.update(|s| s.extend(more.sources));
                exchange.searches.update(|s| s.push(more.query));
            }
        }
        AskEvent::TOKEN => {
            if let Some(token) = decode::<Token>(&frame.data) {
                exchange.answer.update(|a| a.push_str(&token.text));
            }
        }
        AskEvent::DONE => {
            if let Some(answer) = decode::<Answer>(&frame.data) {
                exchange.answer.set(answer.answer);
                exchange.progress.set(Progress::Done);
            }
        }
        AskEvent::ERROR => {
            let message = decode::<index_core::ErrorBody>(&frame.data)
                .map(|b| b.error)
                .unwrap_or_else(|| "the answer failed".into());
            exchange.fail(message);
        }
        _ => {}
    }
}
