//! A whole document, reassembled from its chunks, scrolled to the chunk a
//! search hit came from, with that chunk highlighted.

use index_core::catalog::Document;
use index_core::version;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::api::get_document;
use crate::client;
use crate::components::ErrorNotice;

#[component]
pub fn DocumentPage() -> impl IntoView {
    let url = use_query_map();
    let doc = LocalResource::new(move || {
        let map = url.get();
        let (l, v, p) = (
            map.get("library").unwrap_or_default(),
            map.get("version").unwrap_or_else(|| version::LATEST.into()),
            map.get("file_path").unwrap_or_default(),
        );
        async move { get_document(l, v, p).await }
    });
    let chunk = move || url.get().get("chunk").and_then(|c| c.parse::<u32>().ok());
    view! {
        <section class="panel">
            <Suspense fallback=|| view! { <p class="muted" role="status">"Loading the document…"</p> }>
                {move || match doc.get() {
                    None => view! { <p class="muted" role="status">"Loading the document…"</p> }.into_any(),
                    Some(Err(err)) => view! { <ErrorNotice message=err.to_string()/> }.into_any(),
                    Some(Ok(d)) => view! { <DocumentView doc=d hit=chunk()/> }.into_any(),
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn DocumentView(doc: Document, hit: Option<u32>) -> impl IntoView {
    let span = hit.and_then(|i| doc.chunks.iter().find(|c| c.chunk_index == i).copied());
    let text = doc.text.clone();
    let (before, marked, after) = match span {
        Some(s)
            if s.end <= text.len()
                && text.is_char_boundary(s.start)
                && text.is_char_boundary(s.end) =>
        {
            (
                text[..s.start].to_owned(),
                Some(text[s.start..s.end].to_owned()),
                text[s.end..].to_owned(),
            )
        }
        _ => (text, None, String::new()),
    };
    if marked.is_some() {
        Effect::new(move |_| client::scroll_to("hit"));
    }
    view! {
        <h1>{doc.title.clone().unwrap_or_else(|| doc.file_path.clone())}</h1>
        <p class="source muted">{format!("{} {} · {}", doc.library, doc.version, doc.file_path)}</p>
        <pre class="document" aria-label="Document text">
            {before}
            {marked.map(|m| view! { <mark id="hit" class="hit-chunk">{m}</mark> })}
            {after}
        </pre>
    }
}
