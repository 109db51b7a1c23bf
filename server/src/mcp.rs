//! The MCP server: docshelf's search for coding agents, over stdio
//! (`docshelf mcp`) and streamable HTTP (`/mcp` on a running server).
//!
//! Five tools, thin over the [`Engine`] so that agents, the REST API and the
//! dashboard get the same answers and the same error messages:
//! `search_docs`, `get_document`, `list_libraries`, `resolve_library`, and
//! `add_docs` (a site or a package fetched into a library), a write: over
//! HTTP it needs the write token, as `POST /api/sources` does.
//! `search_docs` takes the REST API's [`SearchParams`] as they are, its
//! schema derived from that type, so a parameter added to search reaches
//! agents without a copy kept here.
//!
//! Sticky library: each MCP connection (a stdio process, or an HTTP session
//! under protocols that have sessions) carries one docshelf search session.
//! Stateless HTTP clients keep the stickiness by passing back the
//! `session_id` that every search returns.

use std::sync::Arc;

use index_core::library::Resolution;
use index_core::search::{SearchParams, SearchResponse};
use index_core::validate::{self, NameError};
use index_core::ErrorBody;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;

use index_core::source::SourceRequest;
use rmcp::service::RequestContext;
use rmcp::service::RoleServer;

use crate::engine::{Engine, EngineError};

/// `get_document` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetDocument {
    /// The library, exactly as listed by list_libraries.
    pub library: String,
    /// The version, or "latest".
    pub version: String,
    /// The document's path, as search results give it (`file_path`).
    pub file_path: String,
}

impl GetDocument {
    /// Every part within its limits ([`validate`]), before any lookup.
    fn check(&self) -> Result<(), NameError> {
        validate::lookup("library", &self.library)?;
        validate::lookup("version", &self.version)?;
        validate::path_lookup("file_path", &self.file_path)?;
        Ok(())
    }
}

/// `resolve_library` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResolveLibrary {
    /// A library name as a person would write it ("Next.js", "react router").
    pub name: String,
}

/// Decides whether an HTTP request's headers grant a write: the HTTP face
/// hands in its own rule (the bearer token of `POST /api/sources`), so
/// that MCP answers as the REST API does without knowing how tokens work.
pub type WriteGuard = Arc<dyn Fn(&http::HeaderMap) -> Result<(), ErrorBody> + Send + Sync>;

/// Who may call the tools that write.
#[derive(Clone)]
enum Writes {
    /// A process the user started on their store (`docshelf mcp`), as the
    /// CLI is.
    Local,
    /// A client over HTTP: the guard decides from the request's headers.
    Guarded(WriteGuard),
}

/// One MCP connection's server.
#[derive(Clone)]
pub struct DocshelfMcp {
    engine: Arc<Engine>,
    writes: Writes,
    /// This connection's search session (sticky library).
    session_id: String,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl DocshelfMcp {
    /// The server of a local process (stdio): its tools may write.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self::with_writes(engine, Writes::Local)
    }

    /// The server of an HTTP connection: `guard` admits its writes.
    pub fn over_http(engine: Arc<Engine>, guard: WriteGuard) -> Self {
        Self::with_writes(engine, Writes::Guarded(guard))
    }

    fn with_writes(engine: Arc<Engine>, writes: Writes) -> Self {
        Self {
            engine,
            writes,
            session_id: uuid::Uuid::new_v4().to_string(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Search the documentation stored in docshelf. Returns one result per \
        page: its best matching passage with library, version, file path, heading path and \
        chunk index, and the page's other matching sections (use get_document with these to \
        read the whole file). The library named \
        in one search stays in effect for later searches in this session; when no library \
        is given and the best hits come from several libraries, the answer names them and \
        takes results from each."
    )]
    async fn search_docs(
        &self,
        Parameters(mut params): Parameters<SearchParams>,
    ) -> CallToolResult {
        // Clients without MCP sessions keep stickiness by passing back the
        // session id of an earlier answer; others get the connection's.
        if params.session_id.is_none() {
            params.session_id = Some(self.session_id.clone());
        }
        match self.engine.search(params).await {
            Ok(response) => search_result(&response),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "Read one whole stored document (all its chunks in order, overlaps \
        removed), by library, version (or \"latest\") and file path."
    )]
    async fn get_document(&self, Parameters(args): Parameters<GetDocument>) -> CallToolResult {
        if let Err(err) = args.check() {
            return tool_error(&err.into());
        }
        match self
            .engine
            .document(&args.library, &args.version, &args.file_path)
            .await
        {
            Ok(doc) => structured(&doc),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "List every library in docshelf with its versions (newest first) \
        and document and chunk counts."
    )]
    async fn list_libraries(&self) -> CallToolResult {
        match self.engine.libraries().await {
            Ok(libraries) => structured(&serde_json::json!({ "libraries": libraries })),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "Find the stored library a loosely written name refers to \
        (\"NextJS\", \"next\", a typo). Returns the library, or the closest candidates."
    )]
    async fn resolve_library(
        &self,
        Parameters(args): Parameters<ResolveLibrary>,
    ) -> CallToolResult {
        if let Err(err) = validate::required("name", &args.name) {
            return tool_error(&err.into());
        }
        match self.engine.resolve_library(&args.name).await {
            Ok(resolution) => {
                let failed = matches!(resolution, Resolution::Unknown { .. });
                let mut result = structured(&resolution);
                result.is_error = Some(failed);
                result
            }
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "Add documentation from where it lives: a site to crawl (url \
        \"https://…\", stored as `version`) or a package from its registry (\"pypi:NAME[==VER]\", \
        \"npm:NAME[@VER]\", \"crates:NAME[@VER]\", its version by default). Starts a job and \
        returns its id at once; the pages become searchable together when it ends (a few \
        seconds to minutes). Adding the same library and version again refreshes it: only \
        changed pages are embedded again."
    )]
    async fn add_docs(
        &self,
        Parameters(request): Parameters<SourceRequest>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if let Writes::Guarded(guard) = &self.writes {
            let parts = context.extensions.get::<http::request::Parts>();
            let verdict = match parts {
                Some(parts) => guard(&parts.headers),
                None => Err(ErrorBody::new(
                    index_core::ErrorKind::Unauthorized,
                    "this request needs a token",
                )),
            };
            if let Err(body) = verdict {
                return error_result(&body);
            }
        }
        match self.engine.add_source(request).await {
            Ok(accepted) => structured(&accepted),
            Err(err) => tool_error(&err),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DocshelfMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("docshelf", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "docshelf searches documentation that people uploaded (libraries with \
                 versions). Use search_docs to find passages, get_document to read a whole \
                 file, list_libraries to see what exists and resolve_library to turn a \
                 loose name into a stored one.",
            )
    }
}

/// A search answer: a readable summary first (agents read text), then the
/// full response as structured content.
fn search_result(response: &SearchResponse) -> CallToolResult {
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

fn structured<T: serde::Serialize>(value: &T) -> CallToolResult {
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
fn tool_error(err: &EngineError) -> CallToolResult {
    error_result(&err.body())
}

/// An error body as a tool error.
fn error_result(body: &ErrorBody) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(body.error.clone())]);
    result.structured_content = serde_json::to_value(body).ok();
    result
}

/// JSON-RPC's code for a message that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a server-side failure.
pub const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC error response carrying docshelf's error body as its `data`,
/// so an MCP client reads the same `code` (`bad_input`, `not_found`, …) as
/// a REST client does. `id` is the request's when it could be read, else
/// `null`, as JSON-RPC says for a request that could not be parsed.
pub fn jsonrpc_error(id: serde_json::Value, rpc_code: i64, body: &ErrorBody) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": rpc_code,
            "message": body.error,
            "data": body,
        }
    })
}

/// MCP over stdio: one JSON-RPC message a line. rmcp drops a line that is
/// not a message without answering, so a client that sent a malformed one
/// waited forever; JSON-RPC says such a line gets a `-32700` parse error
/// (`-32600` for JSON that is not a message). This sits between the
/// process's stdin/stdout and rmcp: well-formed lines pass through to
/// `to_server`, malformed ones are answered on `to_client`, and rmcp's own
/// output (`from_server`) is copied out line by line, so the two never
/// interleave inside a line.
pub mod stdio {
    use index_core::{ErrorBody, ErrorKind};
    use rmcp::model::ClientJsonRpcMessage;
    use tokio::io::{
        AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
    };
    use tokio::sync::mpsc;

    /// The longest line read as one message: a client that never sends a
    /// newline must not make the server hold its whole output.
    pub const MAX_LINE: usize = 16 << 20;

    /// A parse error (-32700) saying `why`, with our error body.
    fn parse_error(why: String) -> serde_json::Value {
        let body = ErrorBody::new(ErrorKind::BadInput, why);
        super::jsonrpc_error(serde_json::Value::Null, super::PARSE_ERROR, &body)
    }

    /// What to answer a line, if it is not a message rmcp can read.
    pub fn refusal(line: &str) -> Option<serde_json::Value> {
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(err) => {
                return Some(parse_error(format!(
                    "Parse error: the line is not JSON ({err})"
                )))
            }
        };
        let err = serde_json::from_value::<ClientJsonRpcMessage>(value.clone()).err()?;
        let id = match value.get("id") {
            Some(id @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => id.clone(),
            _ => serde_json::Value::Null,
        };
        let body = ErrorBody::new(
            ErrorKind::BadInput,
            format!(
                "Invalid Request: not a JSON-RPC message MCP knows ({})",
                index_core::validate::cut(&err.to_string(), 200)
            ),
        );
        Some(super::jsonrpc_error(id, super::INVALID_REQUEST, &body))
    }

    /// Copies `input` to `to_server` and `from_server` to `output`,
    /// answering malformed lines itself, until `input` ends and rmcp's
    /// output is closed.
    pub async fn filter(
        input: impl AsyncRead + Unpin + Send + 'static,
        mut to_server: impl AsyncWrite + Unpin + Send + 'static,
        from_server: impl AsyncRead + Unpin + Send + 'static,
        mut output: impl AsyncWrite + Unpin,
    ) -> std::io::Result<()> {
        let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
        let answers = lines_tx.clone();
        let reader = tokio::spawn(async move {
            let mut input = BufReader::new(input);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                let limit = MAX_LINE as u64 + 1;
                if (&mut input).take(limit).read_until(b'\n', &mut buf).await? == 0 {
                    break;
                }
                if buf.len() > MAX_LINE {
                    // Answered once, and the rest of the line skipped.
                    let why = format!("Parse error: a line is longer than {MAX_LINE} bytes");
                    let _ = answers.send(parse_error(why).to_string());
                    while !buf.ends_with(b"\n") {
                        buf.clear();
                        if (&mut input).take(limit).read_until(b'\n', &mut buf).await? == 0 {
                            break;
                        }
                    }
                    continue;
                }
                let Ok(line) = std::str::from_utf8(&buf) else {
                    let why = "Parse error: the line is not UTF-8 text".to_owned();
                    let _ = answers.send(parse_error(why).to_string());
                    continue;
                };
                let line = line.trim_end_matches(['\r', '\n']);
                if line.trim().is_empty() {
                    continue;
                }
                match refusal(line) {
                    Some(answer) => {
                        let _ = answers.send(answer.to_string());
                    }
                    None => {
                        to_server.write_all(line.as_bytes()).await?;
                        to_server.write_all(b"\n").await?;
                        to_server.flush().await?;
                    }
                }
            }
            // The client is gone: closing rmcp's input ends the session.
            to_server.shutdown().await
        });
        let copier = tokio::spawn(async move {
            let mut lines = BufReader::new(from_server).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        while let Some(line) = lines_rx.recv().await {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await?;
        }
        let _ = copier.await;
        reader.await.map_err(std::io::Error::other)?
    }
}

#[cfg(test)]
mod tests {
    use super::stdio::refusal;

    #[test]
    fn a_line_that_is_not_json_gets_a_parse_error_with_our_code() {
        let answer = refusal("{ not json").expect("refused");
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["id"], serde_json::Value::Null);
        assert_eq!(answer["error"]["code"], super::PARSE_ERROR);
        assert_eq!(answer["error"]["data"]["code"], "bad_input");
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request_with_its_id() {
        let answer = refusal(r#"{"jsonrpc":"2.0","id":"a","nonsense":1}"#).expect("refused");
        assert_eq!(answer["error"]["code"], super::INVALID_REQUEST);
        assert_eq!(answer["id"], "a");
    }

    #[test]
    fn a_message_passes_through() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(refusal(ping).is_none());
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(refusal(note).is_none());
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_answered_and_the_session_goes_on() {
        use tokio::io::AsyncReadExt;
        let input: &'static [u8] =
            b"{\"x\":\"\xff\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let (to_server, mut server_input) = tokio::io::duplex(1 << 16);
        let (server_output, from_server) = tokio::io::duplex(1 << 16);
        drop(server_output);
        let mut output = Vec::new();
        super::stdio::filter(input, to_server, from_server, &mut output)
            .await
            .expect("the filter ends when its input does");
        let answer: serde_json::Value =
            serde_json::from_slice(output.split(|b| *b == b'\n').next().expect("a line"))
                .expect("json");
        assert_eq!(answer["error"]["code"], super::PARSE_ERROR);
        let mut forwarded = String::new();
        server_input
            .read_to_string(&mut forwarded)
            .await
            .expect("read");
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
    }
}
