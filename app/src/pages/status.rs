use index_core::ServerStatus;
use leptos::prelude::*;

use crate::api::get_status;

/// What the server is and what it holds.
#[component]
pub fn StatusPage() -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="status-heading">
            <h1 id="status-heading">"Server status"</h1>
            <StatusPanel/>
        </section>
    }
}

/// Asks the server for its status on demand and shows the answer.
#[component]
fn StatusPanel() -> impl IntoView {
    let check = Action::new(|_: &()| get_status());
    let pending = check.pending();

    view! {
        <button
            type="button"
            class="primary"
            on:click=move |_| {
                check.dispatch(());
            }
            disabled=move || pending.get()
        >
            {move || if pending.get() { "Checking…" } else { "Check server" }}
        </button>
        <div class="status-result" role="status" aria-live="polite">
            {move || match check.value().get() {
                None => view! { <p class="muted">"Not checked yet."</p> }.into_any(),
                Some(Err(err)) => {
                    view! { <p class="error">"The server did not answer: " {err.to_string()}</p> }
                        .into_any()
                }
                Some(Ok(status)) => view! { <StatusTable status/> }.into_any(),
            }}
        </div>
    }
}

#[component]
fn StatusTable(status: ServerStatus) -> impl IntoView {
    let embedding = &status.embedding;
    let backend = match (&embedding.backend, &embedding.error) {
        (Some(backend), _) => backend.clone(),
        (None, Some(err)) => format!("not loaded: {err}"),
        (None, None) => "not loaded".to_owned(),
    };
    let counts = match &status.store.counts {
        Some(c) => format!(
            "{} libraries, {} documents, {} chunks",
            c.libraries, c.documents, c.chunks
        ),
        None => "store not opened".to_owned(),
    };
    let table_version = status
        .store
        .table_version
        .map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    let ask = match (&status.ask.model, &status.ask.how_to_enable) {
        (Some(model), _) if status.ask.enabled => format!("on ({model})"),
        (_, Some(how)) => format!("off: {how}"),
        _ => "off".to_owned(),
    };
    let ocr = match (&status.ocr.languages, &status.ocr.why_off) {
        (Some(languages), _) if status.ocr.enabled => format!("on ({languages})"),
        (_, Some(why)) => format!("off: {why}"),
        _ => "off".to_owned(),
    };
    view! {
        <dl class="status-table" aria-label="Server status">
            <dt>"Version"</dt>
            <dd data-field="version">{status.version.clone()}</dd>
            <dt>"Store"</dt>
            <dd data-field="store">{status.store.location.clone()}</dd>
            <dt>"Contents"</dt>
            <dd data-field="counts">{counts}</dd>
            <dt>"Table version"</dt>
            <dd data-field="table-version">{table_version}</dd>
            <dt>"Searches read"</dt>
            <dd data-field="in-memory">
                {if status.store.in_memory {
                    "memory, for every library"
                } else if status.store.memory.versions_held > 0 {
                    "memory for the versions held, the store for the others"
                } else {
                    "the store on disk"
                }}
            </dd>
            <dt>"Held in memory"</dt>
            <dd data-field="memory">{memory_line(&status.store.memory)}</dd>
            <dt>"Model"</dt>
            <dd data-field="model">{embedding.model.clone()} " (" {embedding.model_dir.clone()} ")"</dd>
            <dt>"Embedding backend"</dt>
            <dd data-field="backend">{backend}</dd>
            <dt>"Reranker"</dt>
            <dd data-field="reranker">{status.reranker.clone()}</dd>
            <dt>"Ask"</dt>
            <dd data-field="ask">{ask}</dd>
            <dt>"OCR of scanned PDFs"</dt>
            <dd data-field="ocr">{ocr}</dd>
            <dt>"Uptime"</dt>
            <dd data-field="uptime">{format!("{} s", status.uptime_secs)}</dd>
        </dl>
    }
}

/// What the server holds in memory, in one line: versions, bytes against
/// the budget, and how searches were answered.
fn memory_line(memory: &index_core::status::MemoryStatus) -> String {
    if memory.budget_bytes == 0 {
        return "nothing (--resident-mib 0)".to_owned();
    }
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    format!(
        "{} of {} versions ({} chunks), {:.1} of {:.0} MiB; searches from memory {}, from the store {}; {} read, {} dropped{}",
        memory.versions_held,
        memory.versions_published,
        memory.chunks_held,
        mib(memory.held_bytes),
        mib(memory.budget_bytes),
        memory.hits,
        memory.misses,
        memory.loads,
        memory.evictions,
        if memory.too_large > 0 {
            format!(", {} too large for the budget", memory.too_large)
        } else {
            String::new()
        }
    )
}
