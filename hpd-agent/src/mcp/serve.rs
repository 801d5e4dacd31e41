//! The `rmcp` side of [`McpServer`](super::McpServer): one handler per MCP session, serving a
//! [`SessionTools`] over stdio or streamable HTTP.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::http_server::{self, Guard};
use crate::ToolSession;
use crate::chat::ToolDefinition;

/// Who the server says it is in the handshake.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
}

/// The `rmcp` handler of one MCP session: its own [`ToolSession`], so expansions are per
/// session.
pub(crate) struct SessionHandler {
    tools: Arc<ToolSession>,
    identity: Arc<Identity>,
    calls: AtomicU64,
}

impl SessionHandler {
    pub(crate) fn new(tools: ToolSession, identity: Arc<Identity>) -> Self {
        SessionHandler {
            tools: Arc::new(tools),
            identity,
            calls: AtomicU64::new(0),
        }
    }
}

/// An agent tool as an MCP tool. Schemas are JSON objects by construction; anything else
/// is listed with an empty object schema rather than failing the list.
fn mcp_tool(definition: &ToolDefinition) -> McpTool {
    let schema = match definition.parameters.as_ref() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    McpTool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(schema),
    )
}

/// The text appended to a call result that made tools visible: each new tool with its
/// description and parameter schema, for clients that do not list the tools again after
/// `notifications/tools/list_changed`.
pub(crate) fn members_text(new_tools: &[Arc<ToolDefinition>]) -> String {
    let mut text = String::from("Functions now available (call them by name):");
    for tool in new_tools {
        text.push_str(&format!(
            "\n- {}: {} Parameters (JSON schema): {}",
            tool.name,
            tool.description.trim(),
            tool.parameters
        ));
    }
    text
}

impl ServerHandler for SessionHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.identity.name.clone(),
            self.identity.version.clone(),
        ));
        if let Some(instructions) = &self.identity.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    /// Collapsing keeps state per session, which protocol revisions without sessions
    /// (2026-07-28 and later) do not have; clients negotiate an earlier revision.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.tools.refresh().await;
        let tools = self.tools.visible_tools();
        Ok(ListToolsResult::with_all_items(
            tools.iter().map(|tool| mcp_tool(tool)).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let refreshed = self.tools.refresh().await;
        let arguments = request
            .arguments
            .map_or_else(|| "{}".to_owned(), |map| Value::Object(map).to_string());
        let call_id = format!("mcp-{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1);
        let before = self.tools.visible_tools();
        let outcome = self.tools.call(&request.name, &arguments, &call_id).await;
        // In the fixed layout an expansion changes no listed tool: no list_changed then, so the
        // host's tool list (and its own prompt cache) stays as it is.
        let (mut text, is_error, expanded) = match outcome {
            Ok(outcome) => (
                outcome.result.text,
                outcome.result.is_error,
                outcome.tools_changed,
            ),
            Err(error) => (format!("Error: {error}"), true, false),
        };
        if expanded {
            let new_tools: Vec<_> = self
                .tools
                .visible_tools()
                .into_iter()
                .filter(|tool| !before.iter().any(|old| old.name == tool.name))
                .collect();
            if !new_tools.is_empty() {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&members_text(&new_tools));
            }
        }
        if (expanded || refreshed)
            && let Err(error) = context.peer.notify_tool_list_changed().await
        {
            tracing::debug!(target: "hpd_agent::mcp", %error, "sending tools/list_changed failed");
        }
        let content = vec![ContentBlock::text(text)];
        Ok(CallToolResponse::Complete(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }))
    }
}

/// Serves one session on this process's stdin and stdout until the client disconnects.
pub(crate) async fn serve_stdio(
    tools: ToolSession,
    identity: Arc<Identity>,
) -> Result<(), McpError> {
    let running = SessionHandler::new(tools, identity)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| McpError::Serve(format!("the stdio session could not start: {error}")))?;
    running
        .waiting()
        .await
        .map_err(|error| McpError::Serve(format!("the stdio session failed: {error}")))?;
    Ok(())
}

/// A bound streamable HTTP server; see [`serve_http`].
#[derive(Debug)]
pub(crate) struct HttpServing {
    pub(crate) local_addr: SocketAddr,
    pub(crate) shutdown: CancellationToken,
    pub(crate) task: Option<tokio::task::JoinHandle<()>>,
}

/// Binds `addr` and serves MCP sessions (on every path), each with the tool session
/// `make_tools` creates for it.
pub(crate) async fn serve_http<F>(
    addr: SocketAddr,
    make_tools: F,
    identity: Arc<Identity>,
    guard: Guard,
    allowed_hosts: Option<Vec<String>>,
    shutdown: CancellationToken,
) -> Result<HttpServing, McpError>
where
    F: Fn() -> ToolSession + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| McpError::Serve(format!("could not bind {addr}: {error}")))?;
    let local_addr = listener
        .local_addr()
        .map_err(|error| McpError::Serve(format!("could not read the bound address: {error}")))?;
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    let service = StreamableHttpService::new(
        move || Ok(SessionHandler::new(make_tools(), identity.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let task = tokio::spawn(http_server::serve(
        listener,
        service,
        Arc::new(guard),
        shutdown.clone(),
    ));
    Ok(HttpServing {
        local_addr,
        shutdown,
        task: Some(task),
    })
}
