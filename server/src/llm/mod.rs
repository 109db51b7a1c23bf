//! The language model Ask writes answers with: any server that speaks
//! OpenAI's chat-completions API (llama.cpp's llama-server, Ollama, vLLM,
//! a hosted API), streamed, with function tools.
//!
//! - [`wire`]: the request and stream formats.
//!
//! Every wait is bounded ([`LlmConfig::timeout_secs`]): connecting, the
//! first byte, and each gap between streamed pieces. A model that stops
//! answering turns into a clear error, never a stuck request. Dropping a
//! [`ChatStream`] closes the connection, which is how llama-server and the
//! others learn to stop generating.

pub mod wire;

use std::pin::Pin;
use std::time::Duration;

use clap::Args;
use futures::{Stream, StreamExt};
use sse_stream::{Sse, SseStream};

use self::wire::{ChatRequest, Chunk, Message, Tool, ToolCall};

/// Where the model is and how long to wait for it.
#[derive(Debug, Clone, Args)]
pub struct LlmConfig {
    /// OpenAI-compatible server that Ask writes answers with, e.g.
    /// `http://127.0.0.1:8081` (llama.cpp's llama-server), `http://127.0.0.1:11434`
    /// (Ollama) or `https://api.openai.com`. `/v1/chat/completions` is added
    /// unless the URL already ends in `/v1` or names the endpoint. Without
    /// it, Ask is off.
    #[arg(long = "llm-url", env = "DOCSHELF_LLM_URL")]
    pub url: Option<String>,

    /// The model name sent with each request (llama-server ignores it).
    #[arg(
        long = "llm-model",
        env = "DOCSHELF_LLM_MODEL",
        default_value = "default"
    )]
    pub model: String,

    /// API key, sent as `Authorization: Bearer <key>`.
    #[arg(long = "llm-key", env = "DOCSHELF_LLM_KEY", hide_env_values = true)]
    pub key: Option<String>,

    /// Seconds to wait for the model to connect, to start answering, and
    /// between two streamed pieces, before the answer fails.
    #[arg(
        long = "llm-timeout-secs",
        env = "DOCSHELF_LLM_TIMEOUT_SECS",
        default_value_t = 60
    )]
    pub timeout_secs: u64,

    /// Most tokens one answer may take.
    #[arg(
        long = "llm-max-tokens",
        env = "DOCSHELF_LLM_MAX_TOKENS",
        default_value_t = 800
    )]
    pub max_tokens: u32,
}

/// What tells a user how to turn Ask on.
pub const HOW_TO_ENABLE: &str = "Ask needs a language model: start docshelf with \
     --llm-url pointing at an OpenAI-compatible server (llama.cpp's llama-server, Ollama, \
     vLLM or a hosted API), or set DOCSHELF_LLM_URL; --llm-model and --llm-key as that server needs";

/// Why the model did not answer.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{HOW_TO_ENABLE}")]
    NotConfigured,
    #[error("the language model's URL {url:?} is not usable: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("the language model at {url} cannot be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the language model at {url} answered {status}: {message}")]
    Refused {
        url: String,
        status: u16,
        message: String,
    },
    #[error("the language model at {url} did not answer within {secs} s")]
    TimedOut { url: String, secs: u64 },
    #[error("the language model at {url} sent something that is not a chat completion: {reason}")]
    Garbled { url: String, reason: String },
}

/// A client for one model server.
#[derive(Debug, Clone)]
pub struct Llm {
    http: reqwest::Client,
    endpoint: String,
    model: String,
    key: Option<String>,
    timeout: Duration,
    max_tokens: u32,
}

/// The chat-completions endpoint a configured URL names.
fn endpoint(url: &str) -> Result<String, LlmError> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|e| LlmError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(LlmError::BadUrl {
            url: url.to_owned(),
            reason: "use an http:// or https:// URL".into(),
        });
    }
    Ok(if trimmed.ends_with("/chat/completions") {
        trimmed.to_owned()
    } else if trimmed.ends_with("/v1") {
        format!("{trimmed}/chat/completions")
    } else {
        format!("{trimmed}/v1/chat/completions")
    })
}

impl Llm {
    /// The client the settings describe, or `None` when Ask is off.
    pub fn from_config(config: &LlmConfig) -> Result<Option<Self>, LlmError> {
        let Some(url) = config.url.as_deref().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let timeout = Duration::from_secs(config.timeout_secs.max(1));
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .build()
            .map_err(|e| LlmError::BadUrl {
                url: url.to_owned(),
                reason: e.to_string(),
            })?;
        Ok(Some(Self {
            http,
            endpoint: endpoint(url)?,
            model: config.model.clone(),
            key: config.key.clone().filter(|k| !k.is_empty()),
            timeout,
            max_tokens: config.max_tokens.max(1),
        }))
    }

    /// The model name sent with requests.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Starts a streamed completion of `messages`, offering `tools`.
    pub async fn chat(&self, messages: &[Message], tools: &[Tool]) -> Result<ChatStream, LlmError> {
        let request = ChatRequest {
            model: &self.model,
            messages,
            tools,
            stream: true,
            max_tokens: self.max_tokens,
            temperature: 0.2,
        };
        let mut builder = self.http.post(&self.endpoint).json(&request);
        if let Some(key) = &self.key {
            builder = builder.bearer_auth(key);
        }
        let url = self.endpoint.clone();
        let response = match tokio::time::timeout(self.timeout, builder.send()).await {
            Err(_) => return Err(self.timed_out()),
            Ok(Err(e)) => {
                return Err(LlmError::Unreachable {
                    url,
                    reason: reason(&e),
                })
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let body = tokio::time::timeout(self.timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(LlmError::Refused {
                url,
                status: status.as_u16(),
                message: upstream_message(&body),
            });
        }
        Ok(ChatStream {
            events: Box::pin(SseStream::from_bytes_stream(response.bytes_stream())),
            url,
            timeout: self.timeout,
            calls: Vec::new(),
            finished: false,
        })
    }

    fn timed_out(&self) -> LlmError {
        LlmError::TimedOut {
            url: self.endpoint.clone(),
            secs: self.timeout.as_secs(),
        }
    }
}

/// The most useful words of an error, innermost cause included (reqwest's
/// own message is just "error sending request").
fn reason(error: &(dyn std::error::Error + 'static)) -> String {
    crate::error_chain::causes(error)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// An error body's message (`{"error":{"message":…}}` or plain text), cut short.
fn upstream_message(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .and_then(|m| m.as_str().map(str::to_owned))
        });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    if text.is_empty() {
        "no message".into()
    } else {
        index_core::validate::cut(&text, 300)
    }
}

/// What a streamed completion yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// More of the answer's text.
    Text(String),
    /// The end: the tool calls the model made, if any, whole.
    End { tool_calls: Vec<ToolCall> },
}

type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// A completion being streamed. Dropping it closes the connection.
pub struct ChatStream {
    events: Events,
    url: String,
    timeout: Duration,
    /// Tool calls as their pieces arrive, by index.
    calls: Vec<ToolCall>,
    finished: bool,
}

impl ChatStream {
    /// The next piece, `Delta::End` once, then `None`.
    pub async fn next(&mut self) -> Result<Option<Delta>, LlmError> {
        loop {
            if self.finished {
                return Ok(None);
            }
            let event = match tokio::time::timeout(self.timeout, self.events.next()).await {
                Err(_) => {
                    return Err(LlmError::TimedOut {
                        url: self.url.clone(),
                        secs: self.timeout.as_secs(),
                    })
                }
                Ok(None) => return Ok(Some(self.end())),
                Ok(Some(Err(e))) => return Err(self.garbled(reason(&e))),
                Ok(Some(Ok(event))) => event,
            };
            let Some(data) = event.data else { continue };
            let data = data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                return Ok(Some(self.end()));
            }
            let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
                self.garbled(format!("{e} in {:?}", index_core::validate::cut(data, 120)))
            })?;
            if let Some(error) = chunk.error {
                return Err(LlmError::Refused {
                    url: self.url.clone(),
                    status: 200,
                    message: upstream_message(&serde_json::json!({ "error": error }).to_string()),
                });
            }
            let mut text = String::new();
            for choice in chunk.choices {
                if let Some(piece) = choice.delta.content {
                    text.push_str(&piece);
                }
                for call in choice.delta.tool_calls {
                    self.add_call_piece(call);
                }
            }
            if !text.is_empty() {
                return Ok(Some(Delta::Text(text)));
            }
        }
    }

    fn end(&mut self) -> Delta {
        self.finished = true;
        let tool_calls = std::mem::take(&mut self.calls)
            .into_iter()
            .filter(|c| !c.function.name.is_empty())
            .collect();
        Delta::End { tool_calls }
    }

    fn add_call_piece(&mut self, piece: wire::ToolCallDelta) {
        // Indices are small and dense; a model sending index 10,000 would
        // otherwise make us allocate for it.
        let index = piece.index.min(15);
        while self.calls.len() <= index {
            let n = self.calls.len();
            self.calls.push(ToolCall {
                id: format!("call_{n}"),
                kind: "function".into(),
                function: wire::FunctionCall {
                    name: String::new(),
                    arguments: String::new(),
                },
            });
        }
        let call = &mut self.calls[index];
        if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = piece.function {
            if let Some(name) = function.name {
                call.function.name.push_str(&name);
            }
            if let Some(arguments) = function.arguments {
                call.function.arguments.push_str(&arguments);
            }
        }
    }

    fn garbled(&self, reason: String) -> LlmError {
        LlmError::Garbled {
            url: self.url.clone(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_completed_from_a_base_url() {
        let ep = |u: &str| endpoint(u).unwrap();
        assert_eq!(
            ep("http://127.0.0.1:8081"),
            "http://127.0.0.1:8081/v1/chat/completions"
        );
        assert_eq!(ep("http://h:1/v1/"), "http://h:1/v1/chat/completions");
        assert_eq!(
            ep("https://h/x/v1/chat/completions"),
            "https://h/x/v1/chat/completions"
        );
        assert!(matches!(endpoint("ftp://h"), Err(LlmError::BadUrl { .. })));
        assert!(matches!(
            endpoint("not a url"),
            Err(LlmError::BadUrl { .. })
        ));
    }

    #[test]
    fn off_without_a_url() {
        let config = LlmConfig {
            url: Some("  ".into()),
            model: "m".into(),
            key: None,
            timeout_secs: 5,
            max_tokens: 10,
        };
        assert!(Llm::from_config(&config).unwrap().is_none());
    }

    #[test]
    fn upstream_messages_are_read_from_json_or_text_and_cut() {
        assert_eq!(
            upstream_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(upstream_message(r#"{"error":"overloaded"}"#), "overloaded");
        assert_eq!(upstream_message("  gateway down "), "gateway down");
        assert_eq!(upstream_message(""), "no message");
        assert_eq!(
            upstream_message(&"x".repeat(1000)),
            format!("{}…", "x".repeat(300))
        );
    }

    /// A completion streamed from `body`, as a server would send it.
    fn stream_of(body: &'static str) -> ChatStream {
        let bytes = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(body))]);
        ChatStream {
            events: Box::pin(SseStream::from_bytes_stream(bytes)),
            url: "u".into(),
            timeout: Duration::from_secs(5),
            calls: Vec::new(),
            finished: false,
        }
    }

    #[tokio::test]
    async fn tool_calls_are_assembled_from_their_pieces() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Let me \"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c7\",\"function\":{\"name\":\"search_docs\",\"arguments\":\"{\\\"query\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"rebase\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        let mut stream = stream_of(body);
        assert_eq!(
            stream.next().await.unwrap(),
            Some(Delta::Text("Let me ".into()))
        );
        let Some(Delta::End { tool_calls }) = stream.next().await.unwrap() else {
            panic!("no end");
        };
        assert_eq!(tool_calls.len(), 1);
        assert_eq!(tool_calls[0].id, "c7");
        assert_eq!(tool_calls[0].function.name, "search_docs");
        assert_eq!(tool_calls[0].function.arguments, "{\"query\":\"rebase\"}");
        assert_eq!(stream.next().await.unwrap(), None);
    }

    #[tokio::test]
    async fn garbage_is_an_error_not_a_hang() {
        let mut stream = stream_of("data: <html>oops</html>\n\n");
        assert!(matches!(stream.next().await, Err(LlmError::Garbled { .. })));
    }
}
