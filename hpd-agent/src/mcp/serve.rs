//! The `rmcp` side of [`McpServer`](super::McpServer): one handler per MCP session, serving a
//! [`SessionTools`] over stdio or streamable HTTP.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, SubscriptionFilter, TASKS_EXTENSION_ID, Tool as McpTool,
    ToolAnnotations, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};

use crate::approval::{ApprovalDecision, Approver, PendingApproval};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::asking::{RoundAsker, RoundEnd, SessionAsker};
use super::catalog::{ServedCatalog, Subscriptions};
use super::http_server::{self, Guard};
use super::tasks::{Ending, SwitchingAsker, TaskAsker, TaskReporter, TaskStore, TaskSupport};
use crate::agent::Caller;
use crate::chat::ToolDefinition;
use crate::error::RunError;
use crate::events::{AgentEvent, EventSink};
use crate::tool::{Answer, AskError, Asker, ElicitAction, Elicitation, Input};
use crate::{ToolResult, agent::ToolSession, tool::LogLevel};

/// How often a `subscriptions/listen` stream looks for changed tool lists.
const LISTEN_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// Who the server says it is in the handshake.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// Seals the `requestState` of 2026-07-28 `input_required` rounds (one key per server,
    /// so every session and request of it can open what another sealed).
    pub(crate) request_state: Arc<rmcp::model::RequestStateCodec>,
}

/// The `rmcp` handler of one MCP session: its own [`ToolSession`], so expansions are per
/// session.
pub(crate) struct SessionHandler {
    tools: Arc<ToolSession>,
    identity: Arc<Identity>,
    /// Resources, templates and prompts, shared by all sessions.
    catalog: Arc<ServedCatalog>,
    /// The server's tasks, shared by all sessions and stateless requests.
    tasks: Arc<TaskStore>,
    /// This session's `resources/subscribe` URIs.
    subscriptions: Subscriptions,
    calls: AtomicU64,
    /// The least severe level of the function log messages the client gets
    /// (`logging/setLevel`).
    log_level: Arc<Mutex<LogLevel>>,
    /// Where the `subscriptions/listen` streams accepted but not yet serving start from.
    listen_starts: Mutex<HandlerListenStarts>,
}

/// The starting points of `subscriptions/listen` streams, taken when a stream is accepted:
/// rmcp sends the acknowledgment between [`accepted_subscription_filter`] and [`listen`], and a
/// change made right after the acknowledgment must still be announced.
///
/// rmcp gives the two calls nothing that pairs them, so the starts are shared: while any
/// accepted stream has not begun serving, each stream that begins compares the tool list with
/// the oldest list taken, which was taken before its own acknowledgment went out. Streams that
/// overlap may therefore announce a change one of them saw already; an extra
/// `notifications/tools/list_changed` costs the client one `tools/list`, a missed one leaves it
/// with a stale list. Resource updates start from a receiver taken at acceptance, in order.
/// (Over HTTP, each 2026-07-28 request has a handler of its own, so nothing overlaps there.)
///
/// [`accepted_subscription_filter`]: ServerHandler::accepted_subscription_filter
/// [`listen`]: ServerHandler::listen
struct ListenStarts<List, Updates> {
    /// Accepted streams that have not begun serving.
    waiting: usize,
    /// The tool list when the oldest of them was accepted.
    tools: Option<List>,
    /// The resource updates since each was accepted, oldest first.
    updates: std::collections::VecDeque<Updates>,
}

impl<List, Updates> Default for ListenStarts<List, Updates> {
    fn default() -> Self {
        ListenStarts {
            waiting: 0,
            tools: None,
            updates: std::collections::VecDeque::new(),
        }
    }
}

impl<List: Clone, Updates> ListenStarts<List, Updates> {
    /// A stream accepted now, with the tool list as it is and its resource updates from now.
    fn accept(&mut self, current: impl FnOnce() -> List, updates: Option<Updates>) {
        self.waiting += 1;
        if self.tools.is_none() {
            self.tools = Some(current());
        }
        self.updates.extend(updates);
    }

    /// A stream that begins serving now: the tool list to compare with, and the resource
    /// updates to read (the oldest taken).
    fn begin(&mut self, current: impl FnOnce() -> List) -> (List, Option<Updates>) {
        let tools = self.tools.clone().unwrap_or_else(current);
        let updates = self.updates.pop_front();
        self.waiting = self.waiting.saturating_sub(1);
        if self.waiting == 0 {
            self.tools = None;
            self.updates.clear();
        }
        (tools, updates)
    }
}

/// The starts of one handler's streams.
type HandlerListenStarts =
    ListenStarts<Arc<crate::collapse::Toolset>, tokio::sync::broadcast::Receiver<String>>;

/// A request's arguments as the text the tool session takes (and a request state is bound
/// to): `{}` when there are none.
fn arguments_text(arguments: Option<&rmcp::model::JsonObject>) -> String {
    // A map with string keys always serializes.
    arguments.map_or_else(
        || "{}".to_owned(),
        |map| serde_json::to_string(map).unwrap_or_else(|_| "{}".to_owned()),
    )
}

impl SessionHandler {
    pub(crate) fn new(
        tools: ToolSession,
        identity: Arc<Identity>,
        catalog: Arc<ServedCatalog>,
        tasks: Arc<TaskStore>,
    ) -> Self {
        SessionHandler {
            tools: Arc::new(tools),
            identity,
            catalog,
            tasks,
            subscriptions: Subscriptions::default(),
            calls: AtomicU64::new(0),
            log_level: Arc::new(Mutex::new(LogLevel::Info)),
            listen_starts: Mutex::default(),
        }
    }

    /// Records where a stream accepted now starts (see [`ListenStarts`]).
    fn accept_listen(&self) {
        let updates = self.catalog.has_resources().then(|| self.catalog.updates());
        self.listen_starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .accept(|| self.tools.agent_toolset(), updates);
    }

    /// Where a stream that begins serving now starts (see [`ListenStarts`]).
    fn begin_listen(
        &self,
    ) -> (
        Arc<crate::collapse::Toolset>,
        Option<tokio::sync::broadcast::Receiver<String>>,
    ) {
        self.listen_starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .begin(|| self.tools.agent_toolset())
    }
}

/// A report of a running function, on its way to the client.
enum Report {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        message: String,
    },
}

/// Turns a served call's progress reports and log messages into MCP notifications.
///
/// A function reports synchronously; the reports are queued and sent in order by one task per
/// call, started with the first report (most calls report nothing, and then cost no task),
/// which [`finish`](Self::finish) waits for, so every notification precedes the call's result.
struct NotifyingReporter {
    queue: Mutex<Queue>,
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    log_level: Arc<Mutex<LogLevel>>,
    /// The runtime the call runs on: a report may come from a thread of the function's own.
    runtime: tokio::runtime::Handle,
}

/// Where a call's reports stand.
enum Queue {
    /// Nothing reported yet.
    Idle,
    /// Reports are being sent by `task`.
    Sending {
        sender: tokio::sync::mpsc::UnboundedSender<Report>,
        task: tokio::task::JoinHandle<()>,
    },
    /// The call ended: later reports are dropped.
    Closed,
}

impl NotifyingReporter {
    fn new(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        log_level: Arc<Mutex<LogLevel>>,
    ) -> Arc<Self> {
        Arc::new(NotifyingReporter {
            queue: Mutex::new(Queue::Idle),
            peer,
            progress_token,
            log_level,
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// Sends the reports of `receiver` to the client, in order.
    // MCP logging is deprecated in rmcp (see `log_message`).
    #[allow(deprecated)]
    async fn sending(
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        mut receiver: tokio::sync::mpsc::UnboundedReceiver<Report>,
    ) {
        while let Some(report) = receiver.recv().await {
            let sent = match report {
                Report::Progress {
                    progress,
                    total,
                    message,
                } => {
                    let Some(token) = token.clone() else { continue };
                    let mut param = ProgressNotificationParam::new(token, progress);
                    param.total = total;
                    param.message = message;
                    peer.notify_progress(param).await
                }
                Report::Log { level, message } => {
                    peer.notify_logging_message(log_message(level, message))
                        .await
                }
            };
            if let Err(error) = sent {
                tracing::debug!(target: "hpd_agent::mcp", %error, "sending a notification failed");
            }
        }
    }

    fn send(&self, report: Report) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*queue, Queue::Idle) {
            let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
            let task = self.runtime.spawn(Self::sending(
                self.peer.clone(),
                self.progress_token.clone(),
                receiver,
            ));
            *queue = Queue::Sending { sender, task };
        }
        if let Queue::Sending { sender, .. } = &*queue {
            let _ = sender.send(report);
        }
    }

    /// Ends the queue (reports after the call are dropped) and waits until it is sent.
    async fn finish(&self) {
        let queue = std::mem::replace(
            &mut *self.queue.lock().unwrap_or_else(PoisonError::into_inner),
            Queue::Closed,
        );
        if let Queue::Sending { sender, task } = queue {
            drop(sender);
            let _ = task.await;
        }
    }
}

/// The sink of one served call: its own progress and log events become notifications (a
/// sub-agent's, which arrive inside [`AgentEvent::SubAgent`], do not).
impl EventSink for NotifyingReporter {
    fn emit(&self, event: &AgentEvent) {
        match event {
            // Progress goes only to a request that asked for it.
            AgentEvent::ToolProgress {
                progress,
                total,
                message,
                ..
            } if self.progress_token.is_some() => self.send(Report::Progress {
                progress: *progress,
                total: *total,
                message: message.clone(),
            }),
            AgentEvent::ToolLog { level, message, .. } => {
                let least = *self
                    .log_level
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if *level >= least {
                    self.send(Report::Log {
                        level: *level,
                        message: message.clone(),
                    });
                }
            }
            _ => {}
        }
    }

    fn wants_events(&self) -> bool {
        true
    }
}

// MCP logging is deprecated in rmcp (SEP-2577, from the 2026-07-28 revision on), but the
// revisions this server offers have it.
#[allow(deprecated)]
fn log_message(level: LogLevel, message: String) -> rmcp::model::LoggingMessageNotificationParam {
    use rmcp::model::LoggingLevel;
    let level = match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    };
    rmcp::model::LoggingMessageNotificationParam::new(level, Value::String(message))
}

#[allow(deprecated)]
fn log_level(level: rmcp::model::LoggingLevel) -> LogLevel {
    use rmcp::model::LoggingLevel;
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// An agent tool as an MCP tool. Schemas are JSON objects by construction; anything else
/// is listed with an empty object schema rather than failing the list.
fn mcp_tool(definition: &ToolDefinition) -> McpTool {
    let schema = match definition.parameters.as_ref() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut tool = McpTool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(schema),
    );
    let said = definition.annotations;
    if !said.is_empty() {
        tool = tool.with_annotations(ToolAnnotations::from_raw(
            None,
            said.read_only,
            said.destructive,
            said.idempotent,
            said.open_world,
        ));
    }
    match super::content::output_schema(definition.output_schema.as_deref()) {
        Some(output) => tool.with_raw_output_schema(Arc::new(output)),
        None => tool,
    }
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
        // Logging: functions log through `FunctionContext::log`.
        #[allow(deprecated)]
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        // What the application registered: resources (with subscriptions; the lists are fixed,
        // so no list_changed), prompts, and completion for their arguments.
        if self.catalog.has_resources() {
            let mut resources = rmcp::model::ResourcesCapability::default();
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        if self.catalog.has_prompts() {
            capabilities.prompts = Some(rmcp::model::PromptsCapability::default());
        }
        if self.catalog.has_completions() {
            capabilities.completions = Some(Map::new());
        }
        // Functions that run as tasks: the tasks extension (2026-07-28 requests only).
        if self.tasks.offered() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), Map::new());
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.identity.name.clone(),
            self.identity.version.clone(),
        ));
        if let Some(instructions) = &self.identity.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    /// The `hide` and `append` layouts keep their expansions per session, which protocol
    /// revisions without sessions (2026-07-28 and later) do not have: such a server offers
    /// revisions up to 2025-11-25, and clients negotiate one of them. A
    /// [flat](super::McpServer::without_collapse) server, and one in the `fixed` layout (also
    /// `native`, served as `fixed`), need no state between requests, so they also offer the
    /// stateless 2026-07-28 (rmcp then serves each request of that revision over HTTP on a
    /// handler of its own; [`call_tool`](Self::call_tool) routes such a request without the
    /// session's expansions on any transport).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        let newest = if self.tools.needs_no_expansion_state() {
            &ProtocolVersion::V_2026_07_28
        } else {
            &ProtocolVersion::V_2025_11_25
        };
        Cow::Borrowed(ProtocolVersion::known_up_to(newest))
    }

    /// `subscriptions/listen` (2026-07-28, whose requests have no session to notify): a stream
    /// may carry `notifications/tools/list_changed`, and `notifications/resources/updated` for
    /// the requested resources this server has; nothing else.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::builder().tools_list_changed().build();
        if self.catalog.has_resources() {
            accepted.resource_subscriptions =
                requested.resource_subscriptions.as_ref().map(|uris| {
                    uris.iter()
                        .filter(|uri| self.catalog.knows(uri))
                        .cloned()
                        .collect()
                });
        }
        self.accept_listen();
        Some(accepted)
    }

    /// Serves a `subscriptions/listen` stream until the client cancels it: changed tool lists
    /// (see `announce_tool_list_changes`) and updates of the accepted resources, as the
    /// [`ResourceNotifier`](super::ResourceNotifier) announces them.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // Boxed: rmcp keeps every request's future in a task of its own, sized by the largest
        // method's future; unboxed, this one's 3.5 KB were copied for every tool call.
        let (tools, updates) = self.begin_listen();
        Box::pin(async {
            tokio::join!(
                self.announce_tool_list_changes(&context, tools),
                super::catalog::listen(&self.catalog, &context, updates),
            )
        })
        .await;
        Ok(())
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        self.require_resources("resources/list")?;
        Ok(self.catalog.list_resources(has_cache_hints(&context)))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        self.require_resources("resources/templates/list")?;
        Ok(self.catalog.list_templates(has_cache_hints(&context)))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        self.require_resources("resources/read")?;
        self.catalog
            .read(&request.uri, has_cache_hints(&context))
            .await
            .map(Into::into)
    }

    // `resources/subscribe` is the subscription of the revisions with sessions; rmcp answers it
    // only on those.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.require_resources("resources/subscribe")?;
        if !self.catalog.knows(&request.uri) {
            return Err(ErrorData::resource_not_found(
                format!("Resource not found: {}", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
            ));
        }
        self.subscriptions
            .subscribe(request.uri, &self.catalog, context.peer);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.require_resources("resources/unsubscribe")?;
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        self.require_prompts("prompts/list")?;
        Ok(self.catalog.list_prompts(has_cache_hints(&context)))
    }

    /// A prompt's asks go to the client as a function's do: requests on the session
    /// revisions, `input_required` rounds on 2026-07-28 (see
    /// [`PromptRequest`](super::PromptRequest#asking-the-client)).
    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        self.require_prompts("prompts/get")?;
        if !is_stateless(&context) {
            let asker = Arc::new(SessionAsker {
                peer: context.peer.clone(),
            });
            return self
                .catalog
                .get_prompt(&request.name, request.arguments.as_ref(), Some(asker))
                .await
                .map(Into::into);
        }
        let arguments = arguments_text(request.arguments.as_ref());
        let codec = &self.identity.request_state;
        let rounds = Arc::new(RoundAsker::open(
            codec,
            "prompts/get",
            &request.name,
            &arguments,
            request.request_state.as_deref(),
            request.input_responses,
            context.client_capabilities(),
        )?);
        let get = self.catalog.get_prompt(
            &request.name,
            request.arguments.as_ref(),
            Some(rounds.clone()),
        );
        let binding = ("prompts/get", request.name.as_str(), arguments.as_str());
        match rounds.drive(codec, binding, get).await {
            Ok(Ok(result)) => Ok(result.into()),
            // A prompt that failed after asking what the client did not declare needed it.
            Ok(Err(error)) => Err(rounds.undeclared_error(&error.message).unwrap_or(error)),
            Err(RoundEnd::InputRequired(result)) => Ok(result.into()),
            Err(RoundEnd::Invalid(error)) => Err(error),
        }
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        if !self.catalog.has_completions() {
            return Err(method_not_found("completion/complete"));
        }
        self.catalog.complete(request).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = log_level(request.level);
        Ok(())
    }

    /// `tasks/get` (2026-07-28, tasks extension): the task's status, with its outstanding
    /// asks or its result.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        require_stateless(&context, "tasks/get")?;
        self.tasks.get(&request.task_id).map(GetTaskResult::new)
    }

    /// `tasks/update`: answers of the task's outstanding asks.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        require_stateless(&context, "tasks/update")?;
        self.tasks.update(&request.task_id, request.input_responses)
    }

    /// `tasks/cancel`: cancels the task's call.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        require_stateless(&context, "tasks/cancel")?;
        self.tasks.cancel(&request.task_id)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use tracing::Instrument as _;
        let meta = request
            .meta
            .as_ref()
            .map_or(&context.meta.0.0, |meta| &meta.0.0);
        let span = crate::telemetry::mcp_server_span(&request.name, &context.id, meta);
        // Boxed: the call's state is large, and rmcp moves the future of every request into a
        // task of its own.
        let response = Box::pin(self.serve_call(request, context))
            .instrument(span.clone())
            .await;
        crate::telemetry::record_mcp_call(
            &span,
            match &response {
                Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                    Some(("tool_error", "the tool call failed"))
                }
                Ok(_) => None,
                Err(_) => Some(("protocol", "the request was refused")),
            },
        );
        response
    }
}

impl SessionHandler {
    /// The tool-list half of [`listen`](ServerHandler::listen): sends
    /// `notifications/tools/list_changed` whenever the agent's tool lists change (a harness
    /// built at run time got a new list), until the client cancels the stream. A changed list
    /// announces itself to no one, so this looks every [`LISTEN_INTERVAL`], comparing with
    /// the list `seen` when the stream was accepted (see [`ListenStarts`]).
    async fn announce_tool_list_changes(
        &self,
        context: &SubscriptionContext,
        mut seen: Arc<crate::collapse::Toolset>,
    ) {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return;
        }
        let mut ticks = tokio::time::interval(LISTEN_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = context.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let current = self.tools.agent_toolset();
            if Arc::ptr_eq(&current, &seen) {
                continue;
            }
            seen = current;
            if let Err(error) = context.sink().notify_tool_list_changed().await {
                tracing::debug!(target: "hpd_agent::mcp", %error, "a subscription stream ended");
                return;
            }
        }
    }

    /// [`ServerHandler::call_tool`], inside its span.
    async fn serve_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let refreshed = self.tools.refresh().await;
        let arguments = arguments_text(request.arguments.as_ref());
        let call_id = format!("mcp-{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1);
        // A request of a revision without `initialize` has no session: nothing it does may
        // depend on, or change, what earlier requests expanded. Those revisions also forbid
        // requests to the client: a function's asks end the call with an `input_required`
        // result instead, and it runs again with the answers.
        let stateless = is_stateless(&context);
        // A function that runs as a task: only on 2026-07-28, for a client that declares the
        // tasks extension on this request.
        let tasks = self
            .tasks
            .support(&self.tools.called_function(&request.name, &arguments));
        if tasks.support != TaskSupport::Forbidden {
            let declared = stateless
                && context
                    .client_capabilities()
                    .is_some_and(|capabilities| capabilities.supports_tasks());
            if declared {
                let call = TaskCall {
                    call_id,
                    name: request.name.to_string(),
                    arguments,
                    capabilities: context.client_capabilities(),
                };
                return if tasks.after_input {
                    self.serve_input_then_task(
                        call,
                        request.request_state.as_deref(),
                        request.input_responses,
                    )
                    .await
                } else {
                    self.start_task(call)
                };
            }
            if tasks.support == TaskSupport::Required {
                return Err(task_required(&request.name));
            }
        }
        // What the client saw before the call, for the members an expansion adds; only where an
        // expansion changes the list (`hide` and `append`).
        let before = (!self.tools.needs_no_expansion_state()).then(|| self.tools.visible_tools());
        let reporter = NotifyingReporter::new(
            context.peer.clone(),
            context.meta.get_progress_token(),
            self.log_level.clone(),
        );
        let codec = &self.identity.request_state;
        let rounds = if stateless {
            let opened = RoundAsker::open(
                codec,
                "tools/call",
                &request.name,
                &arguments,
                request.request_state.as_deref(),
                request.input_responses,
                context.client_capabilities(),
            );
            match opened {
                Ok(asker) => Some(Arc::new(asker)),
                Err(error) => {
                    reporter.finish().await;
                    return Err(error);
                }
            }
        } else {
            None
        };
        let asker: Arc<dyn Asker> = match &rounds {
            Some(rounds) => rounds.clone(),
            None => Arc::new(SessionAsker {
                peer: context.peer.clone(),
            }),
        };
        let approver = ElicitingApprover {
            asker: asker.clone(),
        };
        let call = self.tools.call_reporting(
            &call_id,
            &request.name,
            &arguments,
            Caller {
                reporter: Some(reporter.clone() as Arc<dyn EventSink>),
                approver: Some(&approver),
                stateless,
                asker: Some(asker),
                cancellation: None,
            },
        );
        let outcome = match &rounds {
            None => call.await,
            Some(rounds) => {
                let binding = ("tools/call", request.name.as_ref(), arguments.as_str());
                match rounds.drive(codec, binding, call).await {
                    Ok(outcome) => outcome,
                    Err(end) => {
                        reporter.finish().await;
                        return match end {
                            RoundEnd::InputRequired(result) => {
                                Ok(CallToolResponse::InputRequired(result))
                            }
                            RoundEnd::Invalid(error) => Err(error),
                        };
                    }
                }
            }
        };
        reporter.finish().await;
        if let (Some(rounds), Ok(outcome)) = (&rounds, &outcome)
            && let Some(error) = rounds.missing_capabilities(&outcome.result)
        {
            return Err(error);
        }
        // In the fixed layout an expansion changes no listed tool: no list_changed then, so the
        // host's tool list (and its own prompt cache) stays as it is.
        let (result, expanded) = match outcome {
            Ok(outcome) => (outcome.result, outcome.tools_changed),
            Err(error) => (ToolResult::error(format!("Error: {error}")), false),
        };
        let mut extra = None;
        if expanded && let Some(before) = &before {
            let new_tools: Vec<_> = self
                .tools
                .visible_tools()
                .into_iter()
                .filter(|tool| !before.iter().any(|old| old.name == tool.name))
                .collect();
            if !new_tools.is_empty() {
                extra = Some(members_text(&new_tools));
            }
        }
        if (expanded || refreshed)
            && let Err(error) = context.peer.notify_tool_list_changed().await
        {
            tracing::debug!(target: "hpd_agent::mcp", %error, "sending tools/list_changed failed");
        }
        Ok(CallToolResponse::Complete(super::content::to_mcp(
            &result, extra,
        )))
    }
}

impl SessionHandler {
    /// Starts a call as a task: the task is stored before this returns, and the call runs in
    /// the background (see [`drive_task`]).
    fn start_task(&self, call: TaskCall) -> Result<CallToolResponse, ErrorData> {
        let cancel = self.tasks.shutdown().child_token();
        let (task, expires) = self.tasks.create(&cancel)?;
        let id = task.task_id.clone();
        let asker = Arc::new(TaskAsker {
            store: Arc::clone(&self.tasks),
            id: id.clone(),
            capabilities: call.capabilities.clone(),
            undeclared: Mutex::default(),
        });
        let reporter = Arc::new(TaskReporter {
            store: Arc::clone(&self.tasks),
            id: id.clone().into(),
        });
        let name = call.name.clone();
        let running = owned_call(
            Arc::clone(&self.tools),
            call,
            asker.clone(),
            reporter,
            cancel.clone(),
        );
        tokio::spawn(drive_task(
            TaskRun {
                store: Arc::clone(&self.tasks),
                id,
                name,
                cancel,
                expires,
            },
            running,
            Box::new(move |result| asker.missing_capabilities(result)),
        ));
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// A call that gathers its input before it becomes a task
    /// ([`McpServer::with_task_after_input`](super::McpServer::with_task_after_input)): it
    /// runs as a stateless call, whose asks end the request with `input_required` rounds,
    /// until the function calls `continue_as_task`; then the request is answered with a task,
    /// and the call goes on as that task. A call that ends before is answered with its result.
    async fn serve_input_then_task(
        &self,
        call: TaskCall,
        state: Option<&str>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Result<CallToolResponse, ErrorData> {
        let codec = &self.identity.request_state;
        let rounds = Arc::new(RoundAsker::open(
            codec,
            "tools/call",
            &call.name,
            &call.arguments,
            state,
            responses,
            call.capabilities.clone(),
        )?);
        let switch = Arc::new(SwitchingAsker::new(Arc::clone(&rounds)));
        let reporter = Arc::new(TaskReporter {
            store: Arc::clone(&self.tasks),
            id: OnceLock::new(),
        });
        let cancel = self.tasks.shutdown().child_token();
        let (name, arguments, capabilities) = (
            call.name.clone(),
            call.arguments.clone(),
            call.capabilities.clone(),
        );
        let mut running = owned_call(
            Arc::clone(&self.tools),
            call,
            switch.clone(),
            reporter.clone(),
            cancel.clone(),
        );
        loop {
            tokio::select! {
                biased;
                outcome = &mut running => {
                    let result = match outcome {
                        Ok(outcome) => outcome.result,
                        Err(error) => ToolResult::error(format!("Error: {error}")),
                    };
                    if let Some(error) = rounds.missing_capabilities(&result) {
                        return Err(error);
                    }
                    return Ok(CallToolResponse::Complete(super::content::to_mcp(&result, None)));
                }
                () = rounds.wants_to_end() => match rounds.end(codec, "tools/call", &name, &arguments) {
                    None => {}
                    Some(RoundEnd::InputRequired(result)) => {
                        return Ok(CallToolResponse::InputRequired(result));
                    }
                    Some(RoundEnd::Invalid(error)) => return Err(error),
                },
                () = switch.wants_task() => break,
            }
        }
        let (task, expires) = self.tasks.create(&cancel)?;
        let id = task.task_id.clone();
        let asker = Arc::new(TaskAsker {
            store: Arc::clone(&self.tasks),
            id: id.clone(),
            capabilities,
            undeclared: Mutex::default(),
        });
        switch.become_task(Arc::clone(&asker));
        let _ = reporter.id.set(id.clone());
        tokio::spawn(drive_task(
            TaskRun {
                store: Arc::clone(&self.tasks),
                id,
                name,
                cancel,
                expires,
            },
            running,
            Box::new(move |result| {
                asker
                    .missing_capabilities(result)
                    .or_else(|| rounds.missing_capabilities(result))
            }),
        ));
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// `-32601` for the `resources/*` methods of a server without resources.
    fn require_resources(&self, method: &'static str) -> Result<(), ErrorData> {
        if self.catalog.has_resources() {
            Ok(())
        } else {
            Err(method_not_found(method))
        }
    }

    /// `-32601` for the `prompts/*` methods of a server without prompts.
    fn require_prompts(&self, method: &'static str) -> Result<(), ErrorData> {
        if self.catalog.has_prompts() {
            Ok(())
        } else {
            Err(method_not_found(method))
        }
    }
}

/// The parts of a call that may run as a task.
struct TaskCall {
    call_id: String,
    name: String,
    arguments: String,
    /// The capabilities of the request.
    capabilities: Option<ClientCapabilities>,
}

/// A call that owns what it runs with, so it can go on in the background: its asks go to
/// `asker` (which also asks for approval), its events to `reporter`, and `cancel` cancels
/// it.
fn owned_call(
    tools: Arc<ToolSession>,
    call: TaskCall,
    asker: Arc<dyn Asker>,
    reporter: Arc<TaskReporter>,
    cancel: CancellationToken,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<crate::agent::ToolCallOutcome, RunError>> + Send>,
> {
    Box::pin(async move {
        let approver = ElicitingApprover {
            asker: Arc::clone(&asker),
        };
        tools
            .call_reporting(
                &call.call_id,
                &call.name,
                &call.arguments,
                Caller {
                    reporter: Some(reporter as Arc<dyn EventSink>),
                    approver: Some(&approver),
                    stateless: true,
                    asker: Some(asker),
                    cancellation: Some(cancel),
                },
            )
            .await
    })
}

/// The task a call runs as.
struct TaskRun {
    store: Arc<TaskStore>,
    id: String,
    /// The function's name, for the error of a failed task.
    name: String,
    cancel: CancellationToken,
    expires: tokio::time::Instant,
}

/// Turns a failed call's result into the `-32021` error of what it could not ask.
type MissingCapabilities = Box<dyn Fn(&ToolResult) -> Option<ErrorData> + Send>;

/// Runs a task's call to its end: `completed` with its result (an error result too),
/// `failed` with a JSON-RPC error (the call failed outside the function, or the function
/// needed what the client did not declare), `cancelled` when `tasks/cancel` (or the server's
/// shutdown) stopped it. The task keeps its ending until it expires, and is removed then.
async fn drive_task(
    run: TaskRun,
    call: impl std::future::Future<Output = Result<crate::agent::ToolCallOutcome, RunError>>,
    missing: MissingCapabilities,
) {
    let TaskRun {
        store,
        id,
        name,
        cancel,
        expires,
    } = run;
    let ending = tokio::select! {
        biased;
        outcome = call => match outcome {
            Ok(outcome) => match missing(&outcome.result) {
                Some(error) => Ending::Failed(error),
                None => Ending::Completed(super::content::to_mcp(&outcome.result, None)),
            },
            Err(RunError::Cancelled) => Ending::Cancelled,
            Err(error) => Ending::Failed(ErrorData::internal_error(
                format!("the call of '{name}' failed: {error}"),
                None,
            )),
        },
        () = cancel.cancelled() => Ending::Cancelled,
    };
    drop(missing);
    store.finish(&id, ending);
    tokio::select! {
        () = tokio::time::sleep_until(expires) => {}
        () = store.shutdown().cancelled() => {}
    }
    store.remove(&id);
}

/// `-32021` for a call of a function that runs only as a task, from a client that did not
/// declare the tasks extension on the request.
fn task_required(name: &str) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    );
    error.message = format!(
        "{}: '{name}' runs only as a task, which needs the {TASKS_EXTENSION_ID} extension on a 2026-07-28 request",
        error.message
    )
    .into();
    error
}

/// Whether the request is of a revision without `initialize` (2026-07-28 on): no session, and
/// asks of the client become `input_required` rounds.
fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// The `tasks/*` methods exist on 2026-07-28 requests only (the tasks extension is not
/// defined for the revisions with sessions): `-32601` on those.
fn require_stateless(
    context: &RequestContext<RoleServer>,
    method: &'static str,
) -> Result<(), ErrorData> {
    if is_stateless(context) {
        Ok(())
    } else {
        Err(method_not_found(method))
    }
}

/// The JSON-RPC error for a method this server does not offer.
fn method_not_found(method: &'static str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

/// Whether the request's revision has caching hints (2026-07-28 and later).
fn has_cache_hints(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Asks the MCP client's user, through elicitation, whether a call that needs approval may
/// run: a form with `approve` (a boolean, default `true`) and an optional `reason`, asked as
/// any function asks (a request on the session revisions, an `input_required` round with the
/// key `approval` on 2026-07-28). Accepting with `approve` true approves; accepting with
/// `approve` false, declining or cancelling denies (with the reason given, or one that says
/// what the user did). A client that did not declare form elicitation is not asked: the call
/// is refused with an error result that says so, as it is when asking fails.
struct ElicitingApprover {
    asker: Arc<dyn Asker>,
}

/// What the approval form returns.
#[derive(serde::Deserialize)]
struct ApprovalForm {
    #[serde(default = "yes")]
    approve: bool,
    #[serde(default)]
    reason: Option<String>,
}

fn yes() -> bool {
    true
}

#[async_trait::async_trait]
impl Approver for ElicitingApprover {
    async fn decide(&self, call: &PendingApproval) -> Result<ApprovalDecision, String> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "approve": {"type": "boolean", "description": "Run the call", "default": true},
                "reason": {"type": "string", "description": "Why not (the model reads it)"},
            },
            "required": ["approve"],
        });
        let message = format!(
            "The assistant wants to call {} of {} with {}. Approve?",
            call.function, call.harness, call.arguments
        );
        let form = Elicitation::form(message, schema).with_key("approval");
        let answer = match self.asker.ask(Input::Elicitation(form)).await {
            Ok(Answer::Elicitation(answer)) => answer,
            Ok(_) => {
                return Err(format!(
                    "Function '{}' needs approval, and the MCP client's answer is not the approval form",
                    call.function
                ));
            }
            Err(AskError::NotDeclared { .. }) => {
                return Err(format!(
                    "Function '{}' needs approval, and this MCP client cannot be asked: it does not support elicitation",
                    call.function
                ));
            }
            Err(e) => {
                return Err(format!(
                    "Function '{}' needs approval, and asking the MCP client failed: {e}",
                    call.function
                ));
            }
        };
        Ok(match answer.action {
            ElicitAction::Accept => {
                let form: ApprovalForm = answer
                    .content
                    .map(|content| serde_json::from_value(Value::Object(content)))
                    .transpose()
                    .map_err(|e| {
                        format!(
                            "Function '{}' needs approval, and the MCP client's answer is not the approval form: {e}",
                            call.function
                        )
                    })?
                    .unwrap_or(ApprovalForm {
                        approve: true,
                        reason: None,
                    });
                if form.approve {
                    ApprovalDecision::Approve
                } else {
                    ApprovalDecision::Deny {
                        reason: form.reason,
                    }
                }
            }
            ElicitAction::Decline => ApprovalDecision::deny("declined in the MCP client"),
            _ => ApprovalDecision::deny("the approval request was dismissed in the MCP client"),
        })
    }
}

/// Serves one session on this process's stdin and stdout until the client disconnects.
pub(crate) async fn serve_stdio(
    tools: ToolSession,
    identity: Arc<Identity>,
    catalog: Arc<ServedCatalog>,
    tasks: Arc<TaskStore>,
) -> Result<(), McpError> {
    // The session's tasks end with it.
    let _stop_tasks = tasks.shutdown().clone().drop_guard();
    let running = SessionHandler::new(tools, identity, catalog, tasks)
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

/// How the HTTP front guards and bounds what reaches the MCP transport.
pub(crate) struct HttpFront {
    /// What a request must show.
    pub(crate) guard: Guard,
    /// Timeouts and the connection cap.
    pub(crate) limits: http_server::ConnectionLimits,
    /// OAuth, bound to the endpoint once the address is known.
    pub(crate) oauth: Option<super::ProtectedResource>,
    /// The hosts the `Host` header may name (rmcp's default: loopback ones).
    pub(crate) allowed_hosts: Option<Vec<String>>,
}

/// Binds `addr` and serves MCP sessions (on every path), each with the tool session
/// `make_tools` creates for it.
pub(crate) async fn serve_http<F>(
    addr: SocketAddr,
    make_tools: F,
    identity: Arc<Identity>,
    catalog: Arc<ServedCatalog>,
    tasks: Arc<TaskStore>,
    front: HttpFront,
    shutdown: CancellationToken,
) -> Result<HttpServing, McpError>
where
    F: Fn() -> ToolSession + Send + Sync + 'static,
{
    let HttpFront {
        mut guard,
        limits,
        oauth,
        allowed_hosts,
    } = front;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| McpError::Serve(format!("could not bind {addr}: {error}")))?;
    let local_addr = listener
        .local_addr()
        .map_err(|error| McpError::Serve(format!("could not read the bound address: {error}")))?;
    // The resource URL defaults to the endpoint, known only now (port 0).
    guard.oauth = oauth.map(|config| {
        super::resource_server::BoundResource::new(config, &format!("http://{local_addr}/mcp"))
    });
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    let service = StreamableHttpService::new(
        move || {
            Ok(SessionHandler::new(
                make_tools(),
                identity.clone(),
                catalog.clone(),
                tasks.clone(),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let front = Arc::new(http_server::Front::new(service, guard));
    let task = tokio::spawn(http_server::serve(
        listener,
        front,
        limits,
        shutdown.clone(),
    ));
    Ok(HttpServing {
        local_addr,
        shutdown,
        task: Some(task),
    })
}

#[cfg(test)]
mod tests {
    use super::ListenStarts;

    #[test]
    fn a_stream_compares_with_the_tool_list_it_was_accepted_with() {
        let mut starts = ListenStarts::<u32, &str>::default();
        starts.accept(|| 1, Some("updates since 1"));
        // The list changes after the acknowledgment, before the stream begins serving.
        assert_eq!(starts.begin(|| 2), (1, Some("updates since 1")));
        // Nothing waits any more: the next stream starts afresh.
        starts.accept(|| 3, None);
        assert_eq!(starts.begin(|| 4), (3, None));
        // A stream that was never accepted here compares with the list as it is.
        assert_eq!(starts.begin(|| 5), (5, None));
    }

    #[test]
    fn overlapping_streams_compare_with_the_oldest_list_taken() {
        let mut starts = ListenStarts::<u32, &str>::default();
        starts.accept(|| 1, Some("a"));
        starts.accept(|| 2, Some("b"));
        // Whichever begins first, neither compares with a list taken after its acknowledgment.
        assert_eq!(starts.begin(|| 3), (1, Some("a")));
        assert_eq!(starts.begin(|| 3), (1, Some("b")));
        starts.accept(|| 4, None);
        assert_eq!(starts.begin(|| 5), (4, None));
    }
}
