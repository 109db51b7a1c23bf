//! What only the browser has: local storage, dialogs, scrolling, and the
//! requests the page sends itself ([`fetch`]: error bodies and server-sent
//! events). On
//! the server these are no-ops, so components can call them unconditionally
//! from event handlers and effects (which never run on the server anyway).

mod fetch;
// Read in the browser; unit-tested everywhere.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
mod sse;

#[cfg(feature = "hydrate")]
pub use fetch::{delete, get, post, read_events, send};
#[cfg(feature = "hydrate")]
pub use sse::Frame;

/// Key under which the search session id is kept.
#[cfg(feature = "hydrate")]
const SESSION_KEY: &str = "docshelf-session";

#[cfg(feature = "hydrate")]
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// This browser's search session id, made on first use. It carries the
/// sticky library across queries and page reloads.
pub fn session_id() -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let storage = storage()?;
        if let Ok(Some(id)) = storage.get_item(SESSION_KEY) {
            return Some(id);
        }
        let id = web_sys::window()?.crypto().ok()?.random_uuid();
        let _ = storage.set_item(SESSION_KEY, &id);
        Some(id)
    }
    #[cfg(not(feature = "hydrate"))]
    None
}

/// Asks the user to confirm something destructive.
pub fn confirm(message: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.confirm_with_message(message).ok())
            .unwrap_or(false)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = message;
        false
    }
}

/// Scrolls the element with this id to the middle of the view.
pub fn scroll_to(id: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Center);
        el.scroll_into_view_with_scroll_into_view_options(&options);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = id;
}

/// RFC 3986's unreserved characters stay as they are; everything else is
/// percent-encoded.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a query-string value.
pub fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// The document page, opened at one chunk.
pub fn doc_href(library: &str, version: &str, file_path: &str, chunk_index: u32) -> String {
    format!(
        "/doc?library={}&version={}&file_path={}&chunk={chunk_index}",
        encode(library),
        encode(version),
        encode(file_path),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_values_keep_unreserved_characters_and_encode_the_rest() {
        assert_eq!(super::encode("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(super::encode("a b/é&x=1"), "a%20b%2F%C3%A9%26x%3D1");
    }
}
