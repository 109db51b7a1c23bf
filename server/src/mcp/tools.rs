//! The tools agents call, thin over the [`Engine`], and the server that
//! offers them to one MCP connection.

use std::sync::Arc;

use index_core::access::Caller;
use index_core::changes::ChangesRequest;
use index_core::library::Resolution;
use index_core::reading::{DocumentRead, ReadError};
use index_core::search::SearchParams;
use index_core::validate;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig,
};
use rmcp::ErrorData;
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;

use index_core::source::SourceRequest;
use rmcp::service::RequestContext;
use rmcp::service::RoleServer;

use super::arguments::Arguments;
use super::resources;
use super::results::{document_part, error_result, search_result, structured, tool_error};
use crate::engine::Engine;

/// `get_document` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetDocument {
    /// The library, exactly as listed by list_libraries.
    pub library: String,
    /// The version, or "latest".
    pub version: String,
    /// The document's path, as search results give it (`file_path`).
    pub file_path: String,
    /// Only this section: the heading path a search result gives
    /// (`heading_path`, "Guide > Install"), or its last part.
    #[serde(default)]
    pub section: Option<String>,
    /// At most this many tokens (o200k_base, 50..100000): the text is cut
    /// where a paragraph, code block or heading starts (inside the first
    /// block of text when only headings would fit).
    #[serde(default)]
    pub max_tokens: Option<i64>,
}

/// `compare_versions` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompareVersions {
    /// The library, exactly as listed by list_libraries.
    pub library: String,
    #[serde(flatten)]
    pub changes: ChangesRequest,
}

impl GetDocument {
    /// The read asked for, every part checked before any lookup.
    fn read(&self) -> Result<DocumentRead, ReadError> {
        DocumentRead::new(
            &self.library,
            &self.version,
            &self.file_path,
            self.section.as_deref(),
            self.max_tokens,
        )
    }
}

/// `resolve_library` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResolveLibrary {
    /// A library name as a person would write it ("Next.js", "react router").
    pub name: String,
}

/// Whom the tools act for.
#[derive(Clone, Copy)]
enum Callers {
    /// A process the user started on their store (`docshelf mcp`): it may
    /// do anything, as the CLI may.
    Local,
    /// Clients over HTTP: each call acts as the caller the HTTP face found
    /// for its request (`http::auth`), whose token may differ from the
    /// connection's first request's.
    PerRequest,
}

/// One MCP connection's server.
#[derive(Clone)]
pub struct DocshelfMcp {
    engine: Arc<Engine>,
    callers: Callers,
    /// This connection's search session (sticky library).
    session_id: String,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl DocshelfMcp {
    /// The server of a local process (stdio): its tools may do anything.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self::with_callers(engine, Callers::Local)
    }

    /// The server of an HTTP connection: each call acts as its request's caller.
    pub fn over_http(engine: Arc<Engine>) -> Self {
        Self::with_callers(engine, Callers::PerRequest)
    }

    fn with_callers(engine: Arc<Engine>, callers: Callers) -> Self {
        Self {
            engine,
            callers,
            session_id: uuid::Uuid::new_v4().to_string(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Search the documentation stored in docshelf. Returns one result per \
        page: its best matching passage with library, version, file path, heading path and \
        chunk index, and the page's other matching sections (use get_document with these to \
        read the whole file). With max_tokens, the answer is sized to that many tokens \
        (o200k_base): compact Markdown passages, best first, each the whole section where \
        that fits, the same text given once. \
        The library named \
        in one search stays in effect for later searches in this session; when no library \
        is given and the best hits come from several libraries, the answer names them and \
        takes results from each."
    )]
    async fn search_docs(
        &self,
        Parameters(params): Parameters<Arguments<SearchParams>>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let mut params = match params.decoded("search_docs") {
            Ok(params) => params,
            Err(body) => return error_result(&body),
        };
        let caller = self.caller(&context);
        // Clients without MCP sessions keep stickiness by passing back the
        // session id of an earlier answer; others get the connection's.
        if params.session_id.is_none() {
            params.session_id = Some(self.session_id.clone());
        }
        match self.engine.search(&caller, params).await {
            Ok(response) => search_result(&response),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "Read one whole stored document (all its chunks in order, overlaps \
        removed), by library, version (or \"latest\") and file path; or only one section \
        (section: the heading path a search result gives), within max_tokens when given."
    )]
    async fn get_document(
        &self,
        Parameters(args): Parameters<Arguments<GetDocument>>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args = match args.decoded("get_document") {
            Ok(args) => args,
            Err(body) => return error_result(&body),
        };
        let caller = self.caller(&context);
        let read = match args.read() {
            Ok(read) => read,
            Err(err) => return tool_error(&err.into()),
        };
        if read.is_whole() {
            return match self
                .engine
                .document(&caller, &read.library, &read.version, &read.file_path)
                .await
            {
                Ok(doc) => structured(&doc),
                Err(err) => tool_error(&err),
            };
        }
        match self.engine.read_document(&caller, &read).await {
            Ok(part) => document_part(part),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "List every library in docshelf with its versions (newest first) \
        and document and chunk counts."
    )]
    async fn list_libraries(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        match self.engine.libraries(&self.caller(&context)).await {
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
        Parameters(args): Parameters<Arguments<ResolveLibrary>>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args = match args.decoded("resolve_library") {
            Ok(args) => args,
            Err(body) => return error_result(&body),
        };
        if let Err(err) = validate::required("name", &args.name) {
            return tool_error(&err.into());
        }
        match self
            .engine
            .resolve_library(&self.caller(&context), &args.name)
            .await
        {
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
        \"https://…\", stored as `version`), a Git repository's docs folder (url \
        \"git+https://…\", \"…/name.git\" or \"https://github.com/owner/name\"; `ref` a tag, \
        branch or commit, which names the version by default; `docs_path` found when not given; \
        `credential` for a private repository or site: the name of a credential the server's \
        operator declared for its host, never a secret), or a package from its registry \
        (\"pypi:NAME[==VER]\", \
        \"npm:NAME[@VER]\", \"crates:NAME[@VER]\", its version by default). Starts a job and \
        returns its id at once; the pages become searchable together when it ends (a few \
        seconds to minutes). Adding the same library and version again refreshes it: only \
        changed pages are embedded again."
    )]
    async fn add_docs(
        &self,
        Parameters(request): Parameters<Arguments<SourceRequest>>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let request = match request.decoded("add_docs") {
            Ok(request) => request,
            Err(body) => return error_result(&body),
        };
        match self
            .engine
            .add_source(&self.caller(&context), request)
            .await
        {
            Ok(accepted) => structured(&accepted),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "What changed in a library between two of its versions (from, to; \
        either may be \"latest\"), for upgrades: documents changed, added, removed and moved, \
        and each changed document's sections, added and removed ones with their text, changed \
        ones as a word diff ([-removed-]{+added+}). Narrow it with file_path (a path prefix) \
        and size it with max_tokens (50..100000); totals always count everything."
    )]
    async fn compare_versions(
        &self,
        Parameters(args): Parameters<Arguments<CompareVersions>>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args = match args.decoded("compare_versions") {
            Ok(args) => args,
            Err(body) => return error_result(&body),
        };
        match self
            .engine
            .compare_versions(&self.caller(&context), &args.library, &args.changes)
            .await
        {
            Ok(changes) => structured(&changes),
            Err(err) => tool_error(&err),
        }
    }

    #[tool(
        description = "List the credentials the server's operator declared: the names a \
        private repository or site may give as add_docs' `credential`, the hosts each is \
        sent to and the libraries it is for; never a secret. Admin tokens only."
    )]
    async fn list_credentials(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        match self.engine.credentials(&self.caller(&context)) {
            Ok(listed) => structured(&listed),
            Err(err) => tool_error(&err),
        }
    }
}

impl DocshelfMcp {
    /// The caller a tool call acts as: the local user, or the caller the
    /// HTTP face left in the request's extensions; a request without one
    /// (none should come) may do nothing.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        match self.callers {
            Callers::Local => crate::access::local(),
            Callers::PerRequest => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .unwrap_or_else(Caller::nobody),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DocshelfMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("docshelf", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "docshelf searches documentation that people uploaded (libraries with \
                 versions). Use search_docs to find passages (max_tokens sizes the answer), \
                 get_document to read a whole file or one section of it, list_libraries to \
                 see what exists and resolve_library to turn a loose name into a stored one. \
                 Stored documents are also resources: docshelf://LIBRARY/VERSION/PATH, with \
                 ?section=HEADING%20PATH and &max_tokens=N; so is what changed between two \
                 versions (compare_versions' answer): docshelf-changes://LIBRARY/FROM/TO, with \
                 ?file_path=PREFIX and &max_tokens=N.",
            )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list(&self.engine, &self.caller(&context), cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.engine, &self.caller(&context), &request.uri)
            .await
            .map(ReadResourceResponse::from)
    }
}
