//! JSON-RPC's own errors, for what never reaches a tool: a message that
//! is not JSON (`-32700`), JSON that is not an MCP message (`-32600`), a
//! transport failure. Decided by what the input *is* (it parses, or it
//! does not), never by an error's wording, and carrying docshelf's error
//! body as `data`, so an MCP client reads the same `code` as a REST client.
//! Both transports read messages through [`refusal`] first.

use index_core::{ErrorBody, ErrorCode};
use rmcp::model::ClientJsonRpcMessage;

/// A JSON-RPC error response carrying docshelf's error body as its `data`,
/// so an MCP client reads the same `code` (`mcp_parse_error`,
/// `unknown_library`, …) as a REST client does; the JSON-RPC code is the
/// table's too ([`ErrorCode::rpc_code`]). `id` is the request's when it
/// could be read, else `null`, as JSON-RPC says for a request that could
/// not be parsed.
pub fn error(id: serde_json::Value, body: &ErrorBody) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": body.code.rpc_code(),
            "message": body.error,
            "data": body,
        }
    })
}

/// A parse error (-32700) saying `why`, with our error body.
pub fn parse_error(why: String) -> serde_json::Value {
    let body = ErrorBody::new(ErrorCode::McpParseError, why);
    error(serde_json::Value::Null, &body)
}

/// What to answer a message (a stdio line, an HTTP request's body), if it
/// is not one rmcp can read: `None` when it is.
pub fn refusal(message: &str) -> Option<serde_json::Value> {
    let value: serde_json::Value = match serde_json::from_str(message) {
        Ok(value) => value,
        Err(err) => {
            return Some(parse_error(format!(
                "Parse error: the message is not JSON ({err})"
            )))
        }
    };
    let err = serde_json::from_value::<ClientJsonRpcMessage>(value.clone()).err()?;
    let id = match value.get("id") {
        Some(id @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => id.clone(),
        _ => serde_json::Value::Null,
    };
    let body = ErrorBody::new(
        ErrorCode::InvalidMcpMessage,
        format!(
            "Invalid Request: not a JSON-RPC message MCP knows ({})",
            index_core::validate::cut(&err.to_string(), 200)
        ),
    );
    Some(error(id, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_json_gets_a_parse_error_with_our_code() {
        let answer = refusal("{ not json").expect("refused");
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["id"], serde_json::Value::Null);
        assert_eq!(answer["error"]["code"], index_core::error::RPC_PARSE_ERROR);
        assert_eq!(answer["error"]["data"]["code"], "mcp_parse_error");
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request_with_its_id() {
        let answer = refusal(r#"{"jsonrpc":"2.0","id":"a","nonsense":1}"#).expect("refused");
        assert_eq!(
            answer["error"]["code"],
            index_core::error::RPC_INVALID_REQUEST
        );
        assert_eq!(answer["error"]["data"]["code"], "invalid_mcp_message");
        assert_eq!(answer["id"], "a");
    }

    #[test]
    fn a_message_passes_through() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(refusal(ping).is_none());
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(refusal(note).is_none());
    }
}
