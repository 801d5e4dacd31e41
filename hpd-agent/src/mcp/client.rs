//! [`McpHarness`]: an MCP server as a [`DynamicHarness`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde_json::{Map, Value};

use super::McpError;
use super::connection::{CallFailure, Connection, Endpoint, RemoteTool};
use super::content::result_text;
use super::names::{is_valid_tool_name, qualified_name};
use crate::{
    DynamicHarness, FunctionContext, HarnessBuilder, McpServerConfig, McpTransportConfig, Tool,
    ToolListUpdater, ToolResult,
};

/// The call timeout when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest result text passed on to the model when no other limit is given.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;

/// How long a server that let a call time out gets to answer a ping before it counts as
/// stopped.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects an MCP server and offers its tools as a harness, collapsed by default.
///
/// [`stdio`](Self::stdio) starts the server as a child process speaking MCP on its standard
/// streams; [`http`](Self::http) reaches a streamable HTTP endpoint. [`connect`](Self::connect)
/// runs the handshake, lists the tools and returns a [`DynamicHarness`] to register like any
/// other harness.
///
/// ```no_run
/// use hpd_agent::mcp::McpHarness;
/// use std::time::Duration;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let files = McpHarness::stdio(
///     "Filesystem",
///     "npx",
///     ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
/// )
/// .description("Read and write files")
/// .functions(["read_text_file", "list_directory"])
/// .timeout(Duration::from_secs(30))
/// .connect()
/// .await?;
/// let search = McpHarness::http("Search", "http://127.0.0.1:3000/mcp")
///     .header("Authorization", "Bearer my-token")
///     .collapse(false)
///     .connect()
///     .await?;
/// let agent = hpd_agent::AgentBuilder::new()
///     .with_harness(files)
///     .with_harness(search)
///     .with_openai("gpt-4o-mini")
///     .build()?;
/// # drop(agent);
/// # Ok(())
/// # }
/// # fn main() { let _ = demo(); }
/// ```
///
/// # Behaviour
///
/// - **Names.** Tools keep the server's names and schemas. A name that is not a valid tool
///   name (`[A-Za-z0-9_-]{1,64}`), or that another tool of the server already took after
///   sanitising, is exposed as `{harness}_{tool}` with every other character replaced by `_`
///   and cut to 64 characters; calls are sent with the server's name. Two tools that still
///   collide are an error naming both. A schema without `"type"` gets `"type": "object"`; a
///   tool whose schema is not an object schema is left out with a warning in the log.
/// - **Results.** Text content is joined with newlines, `structuredContent` is added as JSON
///   (unless a text block already repeats it), images, audio and resources are described in
///   a short placeholder, and `isError: true` makes an error result. A result longer than
///   [`max_result_chars`](Self::max_result_chars) becomes an error result saying so.
/// - **Tool list changes.** When the server sends `notifications/tools/list_changed`, the
///   tools are listed again when the next turn starts, so a turn always sees one stable list.
/// - **Failures never abort a run.** A call that gets no answer within the timeout is an error
///   result naming the server; when the server then does not answer a ping either, or when it
///   exits or closes the connection, it counts as down: its calls get error results naming
///   it, and it is started (or reconnected) again once at the start of each following turn
///   until that succeeds.
/// - **Lifetime.** The harness owns the connection: when the last clone of the harness (and
///   of the agents holding it) is dropped, the session ends and a stdio server's process is
///   stopped (its stdin closed, then terminated if it lingers). Dropping needs a Tokio
///   runtime to finish that work in the background.
/// - Events and `tracing` output are those of any harness; the connection logs under the
///   target `hpd_agent::mcp`, including the server's stderr lines at debug level.
#[derive(Debug, Clone)]
#[must_use]
pub struct McpHarness {
    name: String,
    endpoint: Endpoint,
    description: Option<String>,
    functions: Option<Vec<String>>,
    timeout: Duration,
    collapse: bool,
    max_result_chars: usize,
    reserved: Vec<String>,
    misplaced: Option<&'static str>,
}

impl McpHarness {
    /// A server started as `command` with `args`, speaking MCP on its stdin and stdout.
    pub fn stdio<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpHarness::new(
            name.into(),
            Endpoint::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
            },
        )
    }

    /// A server at a streamable HTTP endpoint such as `http://127.0.0.1:3000/mcp`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpHarness::new(
            name.into(),
            Endpoint::Http {
                url: url.into(),
                headers: Vec::new(),
            },
        )
    }

    fn new(name: String, endpoint: Endpoint) -> Self {
        McpHarness {
            name,
            endpoint,
            description: None,
            functions: None,
            timeout: DEFAULT_TIMEOUT,
            collapse: true,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            reserved: Vec::new(),
            misplaced: None,
        }
    }

    /// The container's description. Default: the server's `instructions`, else a text naming
    /// the server.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Offers only these tools (by the server's names). [`connect`](Self::connect) fails for a
    /// name the server does not have; a later tool list without one of them just leaves it out.
    pub fn functions<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.functions = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// How long a call, the handshake or a tool listing may take (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `false` offers the tools directly instead of behind a container.
    pub fn collapse(mut self, collapse: bool) -> Self {
        self.collapse = collapse;
        self
    }

    /// Results longer than this many characters become an error result (default 100,000).
    pub fn max_result_chars(mut self, max: usize) -> Self {
        self.max_result_chars = max;
        self
    }

    /// Adds an HTTP header sent with every request, e.g. `Authorization`. Only for
    /// [`http`](Self::http) servers.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.endpoint {
            Endpoint::Http { headers, .. } => headers.push((name.into(), value.into())),
            Endpoint::Stdio { .. } => self.misplaced = Some("header() is only for HTTP servers"),
        }
        self
    }

    /// Sets an environment variable of the server process. Only for [`stdio`](Self::stdio)
    /// servers.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.endpoint {
            Endpoint::Stdio { env, .. } => {
                env.insert(key.into(), value.into());
            }
            Endpoint::Http { .. } => self.misplaced = Some("env() is only for stdio servers"),
        }
        self
    }

    /// Names other tools of the agent already use: a server tool of one of these names is
    /// exposed as `{harness}_{tool}` instead.
    pub(crate) fn reserve_names(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.reserved.extend(names);
        self
    }

    /// The harness name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts or reaches the server, runs the handshake and lists its tools.
    ///
    /// # Errors
    ///
    /// [`McpError::Spawn`] when the command cannot be started, [`McpError::Handshake`] or
    /// [`McpError::Timeout`] when the server does not complete the handshake,
    /// [`McpError::ListTools`] when its tool list cannot be read, and [`McpError::Invalid`]
    /// for an invalid harness name, header, URL, an allowlisted function the server does not
    /// offer, or two tools whose exposed names collide.
    pub async fn connect(self) -> Result<DynamicHarness, McpError> {
        if let Some(message) = self.misplaced {
            return Err(McpError::Invalid {
                server: self.name,
                message: message.to_owned(),
            });
        }
        if !is_valid_tool_name(&self.name) {
            return Err(McpError::Invalid {
                server: self.name.clone(),
                message: format!(
                    "'{}' is not a valid harness name: names must match [A-Za-z0-9_-]{{1,64}}",
                    self.name
                ),
            });
        }
        let connection = Connection::connect(&self.name, &self.endpoint, self.timeout).await?;
        let remote = connection.list_tools(self.timeout).await?;
        if let Some(functions) = &self.functions {
            for function in functions {
                if !remote.iter().any(|tool| &tool.name == function) {
                    let available: Vec<&str> = remote.iter().map(|t| t.name.as_str()).collect();
                    return Err(McpError::Invalid {
                        server: self.name.clone(),
                        message: format!(
                            "it has no tool '{function}'; its tools: {}",
                            available.join(", ")
                        ),
                    });
                }
            }
        }
        let description = self
            .description
            .clone()
            .or_else(|| connection.instructions())
            .unwrap_or_else(|| format!("Tools of the MCP server '{}'", self.name));
        let source = Arc::new(Source {
            name: self.name.clone(),
            endpoint: self.endpoint.clone(),
            timeout: self.timeout,
            max_result_chars: self.max_result_chars,
            functions: self.functions.clone(),
            reserved: self.reserved.clone(),
            state: Mutex::new(State {
                connection: Some(Arc::new(connection)),
                down: None,
            }),
            refresh: tokio::sync::Mutex::new(()),
            updater: OnceLock::new(),
        });
        let tools = source.tools(&remote, true)?;
        let mut builder = HarnessBuilder::new(self.name.clone()).tools(tools);
        if self.collapse {
            builder = builder.collapse(description);
        }
        // The turn hook owns the source; the tools only point to it, since the source's
        // updater holds the tool list: the harness owns the hook, so the source (and the
        // connection) lives exactly as long as the harness.
        let owner = Arc::clone(&source);
        builder = builder.before_turn(move || Arc::clone(&owner).before_turn());
        let harness = builder.build().map_err(|error| McpError::Invalid {
            server: self.name.clone(),
            message: error.to_string(),
        })?;
        let _ = source.updater.set(harness.updater());
        Ok(harness)
    }
}

impl From<&McpServerConfig> for McpHarness {
    /// The builder an `mcp_servers` entry describes.
    fn from(config: &McpServerConfig) -> Self {
        let mut harness = match &config.transport {
            McpTransportConfig::Stdio { command, args, env } => {
                let mut harness = McpHarness::stdio(&config.name, command, args.iter().cloned());
                for (key, value) in env {
                    harness = harness.env(key, value);
                }
                harness
            }
            McpTransportConfig::Http { url, headers } => {
                let mut harness = McpHarness::http(&config.name, url);
                for (name, value) in headers {
                    harness = harness.header(name, value);
                }
                harness
            }
        };
        if let Some(description) = &config.description {
            harness = harness.description(description);
        }
        if let Some(functions) = &config.functions {
            harness = harness.functions(functions.iter().cloned());
        }
        if let Some(timeout_ms) = config.timeout_ms {
            harness = harness.timeout(Duration::from_millis(timeout_ms));
        }
        harness.collapse(config.collapse)
    }
}

/// Whether the server can take calls, and its live connection.
struct State {
    connection: Option<Arc<Connection>>,
    /// Why the server counts as down; `None` while it is up.
    down: Option<String>,
}

/// Everything a harness needs to talk to its server, shared by its tools and its turn hook.
struct Source {
    name: String,
    endpoint: Endpoint,
    timeout: Duration,
    max_result_chars: usize,
    functions: Option<Vec<String>>,
    reserved: Vec<String>,
    state: Mutex<State>,
    /// Serialises turn hooks of concurrent turns.
    refresh: tokio::sync::Mutex<()>,
    updater: OnceLock<ToolListUpdater>,
}

impl Source {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn mark_down(&self, reason: String) {
        tracing::warn!(target: "hpd_agent::mcp", server = %self.name, %reason, "MCP server is down");
        let mut state = self.lock();
        state.down = Some(reason);
        state.connection = None;
    }

    /// The harness tools for a listed tool set: allowlist applied, names exposed, schemas
    /// checked. `strict` (when connecting) makes a name collision an error; later lists leave
    /// the colliding tool out with a warning.
    fn tools(self: &Arc<Self>, remote: &[RemoteTool], strict: bool) -> Result<Vec<Tool>, McpError> {
        let offered: Vec<&RemoteTool> = remote
            .iter()
            .filter(|tool| {
                self.functions
                    .as_ref()
                    .is_none_or(|functions| functions.contains(&tool.name))
            })
            .collect();
        let mut exposed: Vec<(String, &RemoteTool)> = Vec::with_capacity(offered.len());
        let mut pending: Vec<&RemoteTool> = Vec::new();
        for &tool in &offered {
            let taken = self.reserved.contains(&tool.name)
                || exposed.iter().any(|(name, _)| name == &tool.name);
            if is_valid_tool_name(&tool.name) && !taken {
                exposed.push((tool.name.clone(), tool));
            } else {
                pending.push(tool);
            }
        }
        for tool in pending {
            let name = qualified_name(&self.name, &tool.name);
            let clash = exposed
                .iter()
                .find(|(other, _)| other == &name)
                .map(|(_, other)| {
                    format!("its tools '{}' and '{}' both need the name '{name}'", tool.name, other.name)
                })
                .or_else(|| {
                    self.reserved.contains(&name).then(|| {
                        format!(
                            "its tool '{}' needs the name '{name}', which another tool of the agent already uses",
                            tool.name
                        )
                    })
                });
            if let Some(message) = clash {
                if strict {
                    return Err(McpError::Invalid {
                        server: self.name.clone(),
                        message,
                    });
                }
                tracing::warn!(target: "hpd_agent::mcp", server = %self.name, %message, "tool left out");
                continue;
            }
            tracing::debug!(target: "hpd_agent::mcp", server = %self.name, tool = %tool.name, exposed = %name, "tool renamed");
            exposed.push((name, tool));
        }
        // Keep the server's order.
        exposed.sort_by_key(|(_, tool)| offered.iter().position(|t| std::ptr::eq(*t, *tool)));
        let mut tools = Vec::with_capacity(exposed.len());
        for (name, tool) in exposed {
            let Some(schema) = usable_schema(&tool.input_schema) else {
                tracing::warn!(target: "hpd_agent::mcp", server = %self.name, tool = %tool.name, "tool left out: its input schema is not a JSON object schema");
                continue;
            };
            let source: Weak<Source> = Arc::downgrade(self);
            let server_name: Arc<str> = Arc::from(tool.name.as_str());
            let harness: Arc<str> = Arc::from(self.name.as_str());
            tools.push(Tool::new(
                name,
                tool.description.clone(),
                schema,
                move |arguments: Value, ctx: FunctionContext| {
                    let source = source.upgrade();
                    let server_name = Arc::clone(&server_name);
                    let harness = Arc::clone(&harness);
                    async move {
                        match source {
                            Some(source) => source.call(&server_name, arguments, &ctx).await,
                            None => ToolResult::error(format!(
                                "Error: MCP server '{harness}' is no longer connected (its harness was dropped)"
                            )),
                        }
                    }
                },
            ));
        }
        Ok(tools)
    }

    /// Runs one call on the server.
    async fn call(&self, tool: &str, arguments: Value, ctx: &FunctionContext) -> ToolResult {
        let connection = {
            let state = self.lock();
            match (&state.connection, &state.down) {
                (Some(connection), None) => Arc::clone(connection),
                (_, reason) => {
                    let reason = reason.as_deref().unwrap_or("not connected");
                    return ToolResult::error(format!(
                        "Error: MCP server '{}' is unavailable ({reason}); it will be restarted at the next turn",
                        self.name
                    ));
                }
            }
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let outcome = tokio::select! {
            outcome = connection.call(tool, arguments, self.timeout) => outcome,
            () = ctx.cancellation_token().cancelled() => {
                return ToolResult::error("Error: run cancelled");
            }
        };
        match outcome {
            Ok(result) => {
                let (text, is_error) = result_text(&result);
                let length = text.chars().count();
                if length > self.max_result_chars {
                    return ToolResult::error(format!(
                        "Error: the result of '{tool}' from MCP server '{}' has {length} characters, more than the limit of {}; it was not passed on",
                        self.name, self.max_result_chars
                    ));
                }
                if is_error {
                    ToolResult::error(text)
                } else {
                    ToolResult::ok(text)
                }
            }
            Err(CallFailure::Closed(detail)) => {
                self.mark_down(detail.clone());
                ToolResult::error(format!(
                    "Error: MCP server '{}' stopped during '{tool}' ({detail}); it will be restarted at the next turn",
                    self.name
                ))
            }
            Err(CallFailure::TimedOut(timeout)) => {
                let alive = connection.ping(PING_TIMEOUT.min(self.timeout)).await;
                let next = if alive {
                    String::new()
                } else {
                    self.mark_down("it stopped answering".to_owned());
                    "; it stopped answering and will be restarted at the next turn".to_owned()
                };
                ToolResult::error(format!(
                    "Error: MCP server '{}' did not answer '{tool}' within {} ms{next}",
                    self.name,
                    timeout.as_millis()
                ))
            }
            Err(CallFailure::Protocol(detail)) => ToolResult::error(format!(
                "Error: MCP server '{}' answered '{tool}' with an error: {detail}",
                self.name
            )),
        }
    }

    /// At the start of a turn: restart a server that is down (one attempt), or list the tools
    /// again after `list_changed`, and hand a new list to the harness.
    async fn before_turn(self: Arc<Self>) {
        let _serial = self.refresh.lock().await;
        let (connection, down) = {
            let state = self.lock();
            (state.connection.clone(), state.down.clone())
        };
        let connection = match (connection, down) {
            (Some(connection), None) if connection.is_closed() => {
                self.mark_down("the connection closed".to_owned());
                None
            }
            (Some(connection), None) => Some(connection),
            _ => None,
        };
        let (connection, relist) = match connection {
            Some(connection) => {
                let changed = connection.take_tools_changed();
                (connection, changed)
            }
            None => match Connection::connect(&self.name, &self.endpoint, self.timeout).await {
                Ok(connection) => {
                    tracing::info!(target: "hpd_agent::mcp", server = %self.name, "MCP server restarted");
                    let connection = Arc::new(connection);
                    self.lock().connection = Some(Arc::clone(&connection));
                    (connection, true)
                }
                Err(error) => {
                    self.mark_down(format!("restarting it failed: {error}"));
                    return;
                }
            },
        };
        if !relist {
            return;
        }
        let listed = match connection.list_tools(self.timeout).await {
            Ok(listed) => listed,
            Err(error) => {
                self.mark_down(error.to_string());
                return;
            }
        };
        let tools = match self.tools(&listed, false) {
            Ok(tools) => tools,
            Err(error) => {
                self.mark_down(error.to_string());
                return;
            }
        };
        if let Some(updater) = self.updater.get()
            && let Err(error) = updater.replace(tools)
        {
            self.mark_down(format!("its new tool list was rejected: {error}"));
            return;
        }
        self.lock().down = None;
    }
}

/// The schema as a harness tool takes it: a JSON object, `"type": "object"` added when
/// missing; `None` for anything that is no object schema.
fn usable_schema(schema: &Value) -> Option<Value> {
    let Value::Object(map) = schema else {
        return None;
    };
    let mut map = map.clone();
    match map.get("type") {
        None => {
            map.insert("type".to_owned(), Value::String("object".to_owned()));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(_) => return None,
    }
    if map.get("properties").is_some_and(|p| !p.is_object()) {
        return None;
    }
    if map.get("required").is_some_and(|r| {
        !r.as_array()
            .is_some_and(|items| items.iter().all(Value::is_string))
    }) {
        return None;
    }
    Some(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_are_made_usable_or_refused() {
        assert_eq!(
            usable_schema(&json!({"properties": {}})),
            Some(json!({"type": "object", "properties": {}}))
        );
        assert_eq!(
            usable_schema(&json!({"type": "object"})),
            Some(json!({"type": "object"}))
        );
        assert_eq!(usable_schema(&json!({"type": "string"})), None);
        assert_eq!(usable_schema(&json!([])), None);
        assert_eq!(
            usable_schema(&json!({"type": "object", "properties": 3})),
            None
        );
        assert_eq!(
            usable_schema(&json!({"type": "object", "required": [1]})),
            None
        );
    }
}
