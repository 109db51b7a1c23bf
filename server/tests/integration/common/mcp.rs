//! An MCP client over streamable HTTP, as an agent is one: initialize,
//! initialized, then requests in the session the server opened.

use reqwest::{Client, RequestBuilder};
use serde_json::{json, Value};

/// One MCP session over streamable HTTP, as `token`.
pub struct Mcp {
    url: String,
    token: String,
    session: Option<String>,
    next_id: u64,
}

impl Mcp {
    pub async fn open(base: &str, token: &str) -> Self {
        let mut mcp = Self {
            url: format!("{base}/mcp"),
            token: token.to_owned(),
            session: None,
            next_id: 0,
        };
        let ready = mcp
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "docshelf-tests", "version": "1"},
                }),
            )
            .await;
        assert!(ready["result"]["serverInfo"].is_object(), "{ready}");
        let res = mcp
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .expect("initialized");
        assert!(res.status().is_success(), "{}", res.status());
        mcp
    }

    fn post(&self, message: Value) -> RequestBuilder {
        let request = Client::new()
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        match &self.session {
            Some(session) => request.header("mcp-session-id", session),
            None => request,
        }
    }

    /// Sends a request and returns its answer (a JSON body, or the event
    /// of a stream that carries it).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let res = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .expect("an answer");
        if let Some(session) = res.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().expect("ASCII").to_owned());
        }
        let text = res.text().await.expect("body");
        std::iter::once(text.as_str())
            .chain(text.lines().filter_map(|l| l.strip_prefix("data:")))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {text}"))
    }
}
