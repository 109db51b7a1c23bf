//! How a tool's answer is written: a search's summary and its structured
//! response, a document part, any value as structured content, and the
//! engine's errors as tool errors carrying the error body every face uses.

use index_core::reading::DocumentPart;
use index_core::search::SearchResponse;
use index_core::ErrorBody;
use rmcp::model::{CallToolResult, ContentBlock};

use crate::engine::EngineError;

/// A search answer: a readable summary first (agents read text), then the
/// full response as structured content. A budgeted answer is its context
/// alone as text, within the budget, and as structured content where each
/// passage is from and how the budget was filled, without the text again.
pub(super) fn search_result(response: &SearchResponse) -> CallToolResult {
    if let (Some(context), Some(budget)) = (&response.context, &response.budget) {
        let located: Vec<serde_json::Value> = response
            .results
            .iter()
            .map(|hit| {
                serde_json::json!({
                    "library": hit.library,
                    "version": hit.version,
                    "file_path": hit.file_path,
                    "heading_path": hit.heading_path,
                    "chunk_index": hit.chunk_index,
                })
            })
            .collect();
        let text = match context.is_empty() {
            true => "No results within the budget.\n".to_owned(),
            false => context.clone(),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(serde_json::json!({
            "budget": budget,
            "passages": located,
            "notice": response.notice,
            "session_id": response.session_id,
        }));
        return result;
    }
    let mut text = String::new();
    if let Some(notice) = &response.notice {
        text.push_str(notice);
        text.push_str("\n\n");
    }
    if response.results.is_empty() {
        text.push_str("No results.\n");
    }
    for (i, hit) in response.results.iter().enumerate() {
        let heading = if hit.heading_path.is_empty() {
            String::new()
        } else {
            format!(" › {}", hit.heading_path)
        };
        text.push_str(&format!(
            "{}. {} {} {}{} (chunk {}, score {:.3})\n{}\n\n",
            i + 1,
            hit.library,
            hit.version,
            hit.file_path,
            heading,
            hit.chunk_index,
            hit.score,
            hit.expanded
                .as_ref()
                .map_or(hit.text.as_str(), |e| e.text.as_str()),
        ));
        if !hit.sections.is_empty() {
            let also: Vec<String> = hit
                .sections
                .iter()
                .map(|s| match s.heading_path.as_str() {
                    "" => format!("chunk {}", s.chunk_index),
                    h => format!("{h} (chunk {})", s.chunk_index),
                })
                .collect();
            text.push_str(&format!(
                "   Also matches in this page: {}\n\n",
                also.join("; ")
            ));
        }
    }
    let value = serde_json::to_value(response).unwrap_or_default();
    // `structured` also carries the JSON as text, for clients without
    // structured content; the summary goes first.
    let mut result = CallToolResult::structured(value);
    result.content.insert(0, ContentBlock::text(text));
    result
}

/// A section or a budgeted document: its text for the model, and as
/// structured content what it is, without the text again.
pub(super) fn document_part(part: DocumentPart) -> CallToolResult {
    let mut about = serde_json::to_value(&part).unwrap_or_default();
    if let Some(fields) = about.as_object_mut() {
        fields.remove("text");
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(part.text)]);
    result.structured_content = Some(about);
    result
}

pub(super) fn structured<T: serde::Serialize>(value: &T) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(v) => CallToolResult::structured(v),
        Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
            "cannot encode the answer: {err}"
        ))]),
    }
}

/// Engine errors as tool errors, with the words every face uses
/// ([`EngineError::body`]: internal faults are logged and reported by
/// correlation id only). The text is the message; the structured content is
/// the error body, whose `code` tells a typo (`bad_input`, `not_found`)
/// from a reason to retry (`busy`).
pub(super) fn tool_error(err: &EngineError) -> CallToolResult {
    error_result(&err.body())
}

/// An error body as a tool error.
pub(super) fn error_result(body: &ErrorBody) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(body.error.clone())]);
    result.structured_content = serde_json::to_value(body).ok();
    result
}
