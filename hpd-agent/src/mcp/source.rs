//! The live side of an [`McpHarness`](super::McpHarness): the connection it owns, calls,
//! restarts and tool list changes.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde_json::{Map, Value};

use super::McpError;
use super::connection::{CallFailure, Connection, Endpoint, RemoteTool};
use super::content::from_mcp;
use super::names::{is_valid_tool_name, qualified_name};
use super::resource_tools::{self, LIST_RESOURCES, READ_RESOURCE};
use crate::{FunctionContext, Tool, ToolResult, harness::ToolListUpdater};

/// How long a server that let a call time out gets to answer a ping before it counts as
/// stopped.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the server can take calls, and its live connection.
struct State {
    connection: Option<Arc<Connection>>,
    /// Why the server counts as down; `None` while it is up.
    down: Option<String>,
}

/// What the builder decided about a server.
pub(super) struct Settings {
    pub(super) name: String,
    pub(super) endpoint: Endpoint,
    pub(super) timeout: Duration,
    pub(super) max_result_chars: usize,
    pub(super) functions: Option<Vec<String>>,
    /// Names other tools of the agent use.
    pub(super) reserved: Vec<String>,
    /// Whether the server's resources are offered to the model (when it has any).
    pub(super) resources: bool,
    /// How the server's requests are answered.
    pub(super) answering: Arc<super::answering::Answering>,
}

/// Everything a harness needs to talk to its server, shared by its tools and its turn hook.
pub(super) struct Source {
    name: String,
    endpoint: Endpoint,
    timeout: Duration,
    max_result_chars: usize,
    functions: Option<Vec<String>>,
    reserved: Vec<String>,
    resources: bool,
    /// Whether the server has resources or templates, as last probed.
    has_resources: std::sync::atomic::AtomicBool,
    answering: Arc<super::answering::Answering>,
    state: Mutex<State>,
    /// Serialises turn hooks of concurrent turns.
    refresh: tokio::sync::Mutex<()>,
    updater: OnceLock<ToolListUpdater>,
}

impl Source {
    pub(super) fn new(settings: Settings, connection: Connection) -> Self {
        Source {
            name: settings.name,
            endpoint: settings.endpoint,
            timeout: settings.timeout,
            max_result_chars: settings.max_result_chars,
            functions: settings.functions,
            reserved: settings.reserved,
            resources: settings.resources,
            has_resources: std::sync::atomic::AtomicBool::new(false),
            answering: settings.answering,
            state: Mutex::new(State {
                connection: Some(Arc::new(connection)),
                down: None,
            }),
            refresh: tokio::sync::Mutex::new(()),
            updater: OnceLock::new(),
        }
    }

    /// Hands over the harness's updater, through which later tool lists are applied.
    pub(super) fn set_updater(&self, updater: ToolListUpdater) {
        let _ = self.updater.set(updater);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server's name (the harness name).
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// The longest result text passed on to the model.
    pub(super) fn max_result_chars(&self) -> usize {
        self.max_result_chars
    }

    /// The timeout of every request.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The live connection, if there is one.
    pub(super) fn current_connection(&self) -> Option<Arc<Connection>> {
        self.lock().connection.clone()
    }

    /// The live connection, or an error saying why the server is unavailable.
    pub(super) fn connection(&self, method: &str) -> Result<Arc<Connection>, McpError> {
        let state = self.lock();
        match (&state.connection, &state.down) {
            (Some(connection), None) => Ok(Arc::clone(connection)),
            (_, reason) => Err(McpError::Request {
                server: self.name.clone(),
                method: method.to_owned(),
                message: format!(
                    "the server is unavailable ({}); it is restarted at the start of the next turn",
                    reason.as_deref().unwrap_or("not connected")
                ),
                code: None,
            }),
        }
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
    pub(super) fn tools(
        self: &Arc<Self>,
        remote: &[RemoteTool],
        strict: bool,
    ) -> Result<Vec<Tool>, McpError> {
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
            let built = Tool::new(
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
            );
            // The server's output schema stays with the tool, so serving it again over MCP
            // advertises it too.
            // So do its annotations, which the hints of a collapsed harness read too.
            let built = built.with_annotations(tool.annotations);
            tools.push(match &tool.output_schema {
                Some(output) => built.with_output_schema(output.clone()),
                None => built,
            });
        }
        if self.resources && self.offers_resources() {
            for (function, make) in [
                (
                    LIST_RESOURCES,
                    resource_tools::list as fn(&Arc<Source>, String) -> Tool,
                ),
                (READ_RESOURCE, resource_tools::read_tool),
            ] {
                if self
                    .functions
                    .as_ref()
                    .is_some_and(|functions| !functions.iter().any(|f| f == function))
                {
                    continue;
                }
                let taken = |name: &str| {
                    self.reserved.iter().any(|r| r == name)
                        || tools.iter().any(|t| t.name() == name)
                };
                // Qualified by the server's name: an agent may hold several servers with
                // resources, and tool names are unique across its harnesses.
                let name = qualified_name(&self.name, function);
                if taken(&name) {
                    tracing::warn!(target: "hpd_agent::mcp", server = %self.name, function, "resource function left out: its name is taken by a tool");
                    continue;
                }
                tools.push(make(self, name));
            }
        }
        Ok(tools)
    }

    /// Whether the server had resources when last probed.
    fn offers_resources(&self) -> bool {
        self.has_resources.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Finds out whether the server has any resource or template (the first page of each
    /// listing), so that a server that declares the capability but has nothing to read (as
    /// servers built with some SDKs do) adds no functions. A listing that fails counts as none.
    pub(super) async fn probe_resources(&self, connection: &Connection) {
        let declared = self.resources
            && connection
                .capabilities()
                .is_some_and(|capabilities| capabilities.resources.is_some());
        let mut found = false;
        if declared {
            let resources = connection
                .request("resources/list", self.timeout, |peer| async move {
                    peer.list_resources(None).await
                })
                .await;
            found = resources
                .as_ref()
                .is_ok_and(|page| !page.resources.is_empty());
            if !found {
                let templates = connection
                    .request(
                        "resources/templates/list",
                        self.timeout,
                        |peer| async move { peer.list_resource_templates(None).await },
                    )
                    .await;
                found = templates
                    .as_ref()
                    .is_ok_and(|page| !page.resource_templates.is_empty());
            }
            if let Err(error) = resources {
                tracing::debug!(target: "hpd_agent::mcp", server = %self.name, %error, "listing the resources failed");
            }
        }
        self.has_resources
            .store(found, std::sync::atomic::Ordering::SeqCst);
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
            outcome = connection.call(tool, arguments, self.timeout, ctx.asker().cloned()) => outcome,
            () = ctx.cancellation_token().cancelled() => {
                return ToolResult::error("Error: run cancelled");
            }
        };
        match outcome {
            Ok(result) => {
                let converted = from_mcp(&result);
                let length = converted.text.chars().count();
                if length > self.max_result_chars {
                    return ToolResult::error(format!(
                        "Error: the result of '{tool}' from MCP server '{}' has {length} characters, more than the limit of {}; it was not passed on",
                        self.name, self.max_result_chars
                    ));
                }
                converted
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
            Err(CallFailure::Unanswered { what, error }) => {
                ToolResult::error(unanswered_text(&self.name, tool, what, &error))
            }
        }
    }

    /// At the start of a turn: restart a server that is down (one attempt), or list the tools
    /// again after `list_changed`, and hand a new list to the harness.
    pub(super) async fn before_turn(self: Arc<Self>) {
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
            None => match Connection::connect(
                &self.name,
                &self.endpoint,
                self.timeout,
                self.answering.clone(),
            )
            .await
            {
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
        self.probe_resources(&connection).await;
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

/// The result text of a call whose server asked this client for input (a 2026-07-28
/// `input_required` round) that it could not give: the server is not at fault, and the text
/// says what the application can do.
fn unanswered_text(server: &str, tool: &str, what: &str, error: &crate::tool::AskError) -> String {
    use crate::tool::AskError;
    let asked =
        format!("Error: MCP server '{server}' asked this client for {what} during '{tool}'");
    match (error, what) {
        (AskError::NoHandler { .. }, "elicitation") => format!(
            "{asked}, and this agent has no elicitation handler to ask its user; register one with AgentBuilder::with_elicitation_handler or McpHarness::with_elicitation_handler"
        ),
        (AskError::NoHandler { .. }, "sampling") => format!(
            "{asked}, and this agent has no sampling handler; register one with AgentBuilder::with_sampling_handler"
        ),
        (AskError::NoHandler { .. }, _) => {
            format!("{asked}, and this harness has no roots; give them with McpHarness::with_roots")
        }
        (AskError::Deferred, _) => format!(
            "{asked}; the elicitation handler deferred the question, and this call cannot wait for the answer (only a top-level agent's run can pause for it)"
        ),
        (error, _) => format!("{asked}, and it could not be answered here: {error}"),
    }
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
