//! [`ToolSession`]: an agent's tools driven without a model, with collapsing, e.g. to serve
//! them over MCP.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::approval::{
    ApprovalDecision, ApprovalRecord, Approver, PendingApproval, denied_text, no_approver_text,
};
use crate::chat::ToolDefinition;
use crate::collapse::{Delivered, Expansion, Toolset, Unwrapped};
use crate::error::RunError;
use crate::events::{AgentEvent, Emitter, EventSink};
use crate::middleware::pipeline::{
    CallScope, ScopedPipeline, announce_decision, approval_required, unless_cancelled,
};
use crate::tool::ToolResult;

use super::{Agent, call};

/// What one [`ToolSession::call`] did.
///
/// ```
/// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// let tools = agent.tool_session();
/// let opened = tools.call_tool("c1", "Net", "{}").await?;
/// assert!(opened.expanded);
/// assert_eq!(opened.revealed[0].name, "ping");
/// let pong = tools.call_tool("c2", "ping", "{}").await?;
/// assert_eq!((pong.result.text.as_str(), pong.expanded), ("pong", false));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallOutcome {
    /// The result the caller gets.
    pub result: ToolResult,
    /// Whether the call expanded a container.
    pub expanded: bool,
    /// Whether the visible tools changed: an expansion in the `hide` and `append` layouts (an
    /// MCP server sends `notifications/tools/list_changed` then). Never in `fixed`, whose
    /// tool list stays the same for the whole session.
    pub tools_changed: bool,
    /// For a call of a container, or of a hidden member it recovered: the definitions of that
    /// harness's members (also when it was expanded already), for callers that show them
    /// right away instead of waiting for the client to list the tools again. Empty otherwise.
    pub revealed: Vec<Arc<ToolDefinition>>,
}

struct State {
    /// The agent's toolset this session was prepared from.
    base: Arc<Toolset>,
    /// `base`, its flat form, or its served form.
    tools: Arc<Toolset>,
    expansion: Expansion,
    /// Whether the pipelines of harnesses visible without expansion exist.
    started: bool,
}

/// An agent's tools, driven without a model: list what a model would see, call tools by name.
///
/// A tool session keeps its own expansion state, as a [`Session`](crate::Session) does during
/// a turn, and calls go exactly the way a model's calls go: a container call expands the
/// container and answers with its member list, a hidden member's name (bare or qualified) is
/// recovered, unknown names get the not-found result, and functions run through the agent's
/// global middleware and their harness's scoped pipeline (`before_function`,
/// `wrap_function_call`, `on_error`, `after_function`). There are no turns, so the turn,
/// iteration and batch hooks do not run and expansions last until
/// [`collapse_all`](Self::collapse_all). Calls emit the agent's tool-call and expansion
/// [`AgentEvent`]s.
///
/// A *flat* session ([`Agent::flat_tool_session`]) lists every function as if collapsing were
/// off.
///
/// The agent's [`Limits`](crate::config::Limits) apply: oversized arguments are answered with an error
/// result, long results are cut, and at most `max_parallel_calls` calls run at once (the others
/// wait for a slot).
///
/// `call` takes `&self`: one session may run calls concurrently. The session takes the
/// agent's tool lists when it is created; [`refresh`](Self::refresh) picks up changed lists.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// #[derive(Default)]
/// struct Arithmetic;
///
/// #[collapse("Math operations")]
/// impl Arithmetic {
///     /// Adds two integers.
///     #[ai_function]
///     fn add(&self, a: i64, b: i64) -> i64 { a + b }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new()
///     .with_tool_harness::<Arithmetic>()
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// let tools = agent.tool_session();
/// // The default `fixed` layout: containers and the call tool, the same list on every call.
/// assert_eq!(tools.visible_tool_names(), ["Arithmetic", "call_function"]);
///
/// let opened = tools.call_tool("c1", "Arithmetic", "{}").await?;
/// assert!(opened.expanded);
/// assert!(opened.result.text.starts_with("Arithmetic expanded. Available functions: add\n\nCall them through call_function"));
/// assert_eq!(tools.visible_tool_names(), ["Arithmetic", "call_function"]);
///
/// let sum = tools.call_tool("c2", "call_function", r#"{"name": "add", "arguments": {"a": 2, "b": 3}}"#).await?;
/// assert_eq!((sum.result.text.as_str(), sum.expanded), ("5", false));
///
/// let flat = agent.flat_tool_session();
/// assert_eq!(flat.visible_tool_names(), ["add"]);
/// # Ok(())
/// # }
/// ```
pub struct ToolSession {
    agent: Agent,
    flat: bool,
    /// Prepared as an MCP server serves it (`native` is `fixed`).
    served: bool,
    cancellation: CancellationToken,
    /// One permit per call that may run at once (`Limits::max_parallel_calls`).
    permits: Semaphore,
    state: Mutex<State>,
    /// Asked about calls that need approval.
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for ToolSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSession")
            .field("flat", &self.flat)
            .field("expanded", &self.expanded())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// A [`ToolSession`] over this agent's tools, with collapsing as the agent has it.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.tool_session().visible_tool_names(), ["Net", "call_function"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn tool_session(&self) -> ToolSession {
        ToolSession::new(self.clone(), false, false)
    }

    /// A [`ToolSession`] that lists every registered function, with no containers.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let flat = agent.flat_tool_session();
    /// assert!(flat.is_flat());
    /// assert_eq!(flat.visible_tool_names(), ["ping"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn flat_tool_session(&self) -> ToolSession {
        ToolSession::new(self.clone(), true, false)
    }

    /// A [`ToolSession`] as an MCP server serves it: MCP has no deferred loading, so the
    /// `native` layout is `fixed` there.
    ///
    /// `prepared` keeps the served form of the agent's toolset between sessions: a server of the
    /// stateless revision prepares a session for every request, and the flat form is a new
    /// index of the whole catalog.
    #[cfg(feature = "mcp")]
    pub(crate) fn served_tool_session(&self, flat: bool, prepared: &PreparedTools) -> ToolSession {
        let base = self.inner.tools.current();
        let tools = prepared.get(&base, || ToolSession::prepare(&base, flat, true));
        ToolSession::with_tools(self.clone(), flat, true, base, tools)
    }
}

/// The toolset a server's sessions are prepared with, kept for as long as the agent's toolset
/// is the same (by pointer): a harness built at run time that gets a new tool list makes the
/// next session prepare it again.
#[cfg(feature = "mcp")]
#[derive(Default)]
pub(crate) struct PreparedTools {
    /// The agent's toolset and its prepared form.
    last: Mutex<Option<(Arc<Toolset>, Arc<Toolset>)>>,
}

#[cfg(feature = "mcp")]
impl PreparedTools {
    fn get(&self, base: &Arc<Toolset>, prepare: impl FnOnce() -> Arc<Toolset>) -> Arc<Toolset> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        match &*last {
            Some((seen, tools)) if Arc::ptr_eq(seen, base) => Arc::clone(tools),
            _ => {
                let tools = prepare();
                *last = Some((Arc::clone(base), Arc::clone(&tools)));
                tools
            }
        }
    }
}

/// Who calls through [`ToolSession::call_reporting`] when it is not the agent itself (an MCP
/// server's client): where the call's progress and log messages also go (`reporter`), who is
/// asked about a call that needs approval instead of the session's approver (`approver`), who
/// answers the function's asks instead of the agent's handlers (`asker`), and whether the call
/// keeps away from the session's expansion state (`stateless`, a request of the stateless MCP
/// revision), and the token that cancels this call alone instead of the session's
/// (`cancellation`, an MCP task's). The default is the agent's own call: none of these.
#[derive(Default)]
pub(crate) struct Caller<'a> {
    pub(crate) reporter: Option<Arc<dyn EventSink>>,
    pub(crate) approver: Option<&'a dyn Approver>,
    pub(crate) stateless: bool,
    pub(crate) asker: Option<Arc<dyn crate::tool::Asker>>,
    pub(crate) cancellation: Option<CancellationToken>,
}

impl ToolSession {
    fn new(agent: Agent, flat: bool, served: bool) -> Self {
        let base = agent.inner.tools.current();
        let tools = Self::prepare(&base, flat, served);
        Self::with_tools(agent, flat, served, base, tools)
    }

    /// A session over `tools`, prepared from the agent's toolset `base`.
    fn with_tools(
        agent: Agent,
        flat: bool,
        served: bool,
        base: Arc<Toolset>,
        tools: Arc<Toolset>,
    ) -> Self {
        let permits = Semaphore::new(agent.inner.limits.max_parallel_calls);
        ToolSession {
            agent,
            flat,
            served,
            cancellation: CancellationToken::new(),
            permits,
            state: Mutex::new(State {
                base,
                tools,
                expansion: Expansion::default(),
                started: false,
            }),
            approver: None,
        }
    }

    /// Asks `approver` about calls that need approval (see [`approval`](crate::approval)). A
    /// tool session has no run to pause: without an approver such calls are refused with the
    /// error result `Function '{name}' needs approval, and there is nobody to ask here`.
    /// Decisions reach middleware ([`Middleware::on_approval`](crate::Middleware::on_approval))
    /// and events as in a run.
    ///
    /// ```
    /// use hpd_agent::approval::{ApprovalDecision, Approver, PendingApproval};
    /// use hpd_agent::{async_trait, AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// struct Console;
    ///
    /// #[async_trait]
    /// impl Approver for Console {
    ///     async fn decide(&self, call: &PendingApproval) -> Result<ApprovalDecision, String> {
    ///         // A real one would ask a person, e.g. on a terminal.
    ///         Ok(ApprovalDecision::deny(format!("{call} is not allowed today")))
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let drop_table = Tool::new("drop_table", "Drops a table", json!({"type": "object"}), |_, _| async { ToolResult::ok("dropped") })
    ///     .with_approval_required();
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Db").with_tool(drop_table).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let refused = agent.tool_session().call_tool("c1", "drop_table", "{}").await?;
    /// assert_eq!(refused.result.text, "Function 'drop_table' needs approval, and there is nobody to ask here");
    /// let asked = agent.tool_session().with_approver(Console).call_tool("c2", "drop_table", "{}").await?;
    /// assert_eq!(asked.result.text, "Function 'drop_table' was denied by the user: Db.drop_table({}) is not allowed today");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    fn prepare(base: &Arc<Toolset>, flat: bool, served: bool) -> Arc<Toolset> {
        if flat {
            Arc::new(base.flat())
        } else if served {
            base.served()
        } else {
            Arc::clone(base)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels running calls when `token` is cancelled (their bodies see it through
    /// [`FunctionContext`](crate::FunctionContext)); such calls fail with
    /// [`RunError::Cancelled`].
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, CancellationToken, HarnessBuilder, RunError, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let wait = Tool::new("wait", "Waits", json!({"type": "object"}), |_, ctx| async move {
    ///     ctx.cancellation_token().cancelled().await;
    ///     ToolResult::ok("stopped")
    /// });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Slow").with_tool(wait).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let token = CancellationToken::new();
    /// let tools = agent.tool_session().with_cancellation(token.clone());
    /// token.cancel();
    /// assert!(matches!(tools.call_tool("c1", "wait", "{}").await, Err(RunError::Cancelled)));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// The agent whose tools this session drives.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_name("served").with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.tool_session().agent().name(), "served");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Whether every function is listed (no containers).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert!(!agent.tool_session().is_flat());
    /// assert!(agent.flat_tool_session().is_flat());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn is_flat(&self) -> bool {
        self.flat
    }

    /// Whether calls can be served without the session's expansion state (see
    /// [`call_reporting`](Self::call_reporting)): collapsing is off or flat, or the layout keeps
    /// the tool list fixed (`fixed`; `native` as MCP serves it).
    #[cfg(feature = "mcp")]
    pub(crate) fn needs_no_expansion_state(&self) -> bool {
        self.lock().tools.needs_no_expansion_state()
    }

    /// The name of the function a call of `name` with `arguments` reaches: the inner call's
    /// name for a call of the layout's call tool, `name` otherwise (also when the call is
    /// invalid; running it answers that).
    #[cfg(feature = "mcp")]
    pub(crate) fn called_function<'n>(&self, name: &'n str, arguments: &str) -> Cow<'n, str> {
        let limits = &self.agent.inner.limits;
        match call::admit(|| Arc::clone(&self.lock().tools), limits, name, arguments) {
            Unwrapped::Inner { name, .. } => Cow::Owned(name),
            Unwrapped::Direct | Unwrapped::Invalid(_) => Cow::Borrowed(name),
        }
    }

    /// The agent's toolset with its current tool lists (no hooks run); a new one, by pointer,
    /// whenever a harness built at run time got a new list.
    #[cfg(feature = "mcp")]
    pub(crate) fn agent_toolset(&self) -> Arc<Toolset> {
        self.agent.inner.tools.current()
    }

    /// The tool definitions a model would see now, in the order it would see them.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network checks").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session().visible_tools();
    /// assert_eq!(tools[0].name, "Net");
    /// assert_eq!(tools[0].description, "Network checks (functions: ping)");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn visible_tools(&self) -> Vec<Arc<ToolDefinition>> {
        let state = self.lock();
        state.tools.visible(&state.expansion.expanded)
    }

    /// The names of [`visible_tools`](Self::visible_tools).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// assert_eq!(tools.visible_tool_names(), ["Net", "call_function"]);
    /// tools.call_tool("c1", "Net", "{}").await?;
    /// // The default `fixed` layout keeps the list; `hide` replaces the container by its tools.
    /// assert_eq!(tools.visible_tool_names(), ["Net", "call_function"]);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn visible_tool_names(&self) -> Vec<String> {
        self.visible_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// The expanded containers, in expansion order.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// tools.call_tool("c1", "Net.ping", "{}").await?; // a qualified hidden member: recovery expands `Net`
    /// assert_eq!(tools.expanded(), ["Net"]);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn expanded(&self) -> Vec<String> {
        self.lock().expansion.expanded.clone()
    }

    /// Collapses every container and drops the scoped pipelines, as a turn end does.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// tools.call_tool("c1", "Net", "{}").await?;
    /// tools.collapse_all();
    /// assert!(tools.expanded().is_empty());
    /// assert_eq!(tools.visible_tool_names(), ["Net", "call_function"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn collapse_all(&self) {
        let mut state = self.lock();
        state.expansion = Expansion::default();
        state.started = false;
    }

    /// Runs the `before_turn` hooks of harnesses built at run time and takes the agent's
    /// current tool lists. Expansions of harnesses that are still registered stay. Returns
    /// whether the visible tools changed.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let tool = |name: &str| Tool::new(name, "A tool", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let live = HarnessBuilder::new("Live").with_tool(tool("one")).build()?;
    /// let updater = live.updater();
    /// let agent = AgentBuilder::new().with_harness(live).with_chat_client(ScriptedChatClient::new()).build()?;
    /// let tools = agent.tool_session();
    /// assert!(!tools.refresh().await); // nothing changed
    /// updater.replace(vec![tool("one"), tool("two")])?;
    /// assert!(tools.refresh().await);
    /// assert_eq!(tools.visible_tool_names(), ["one", "two"]);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn refresh(&self) -> bool {
        let base = self.agent.inner.tools.for_turn().await;
        let mut state = self.lock();
        if Arc::ptr_eq(&base, &state.base) {
            return false;
        }
        let fresh = Self::prepare(&base, self.flat, self.served);
        state.base = base;
        let before = state.tools.visible(&state.expansion.expanded);
        let expansion = std::mem::take(&mut state.expansion);
        state.expansion = expansion.persisting(&fresh);
        // Pipelines of harnesses visible without expansion are created again for the new set.
        state.expansion.pipelines.clear();
        state.started = false;
        state.tools = fresh;
        let after = state.tools.visible(&state.expansion.expanded);
        before.len() != after.len()
            || before
                .iter()
                .zip(&after)
                .any(|(a, b)| a.name != b.name || a.description != b.description)
    }

    /// Calls a tool by the name a model would use, with the arguments text a model would send.
    /// The parts come in the order of a [`ToolCall`](crate::ToolCall): the call's id, the tool's
    /// name, the arguments.
    ///
    /// # Errors
    ///
    /// A middleware hook (or creating a scoped middleware) failed, or the session was
    /// cancelled. Everything the model could cause (unknown names, bad arguments, failing or
    /// panicking bodies) is a result, not an error.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let echo = Tool::new(
    ///     "echo",
    ///     "Echoes a text",
    ///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    ///     |args, _| async move { ToolResult::ok(args["text"].as_str().unwrap_or_default().to_owned()) },
    /// );
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Echo").with_tool(echo).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// assert_eq!(tools.call_tool("c1", "echo", r#"{"text": "hi"}"#).await?.result.text, "hi");
    /// // What the model could get wrong is a result, not an error.
    /// let unknown = tools.call_tool("c2", "ech", "{}").await?;
    /// assert!(unknown.result.is_error && unknown.result.text.starts_with("Function 'ech' not found"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> Result<ToolCallOutcome, RunError> {
        self.call_reporting(call_id, name, arguments, Caller::default())
            .await
    }

    /// [`call_tool`](Self::call_tool) with the parts in another order: name, arguments, id.
    ///
    /// # Errors
    ///
    /// As [`call_tool`](Self::call_tool).
    #[deprecated(
        since = "0.1.0",
        note = "use `call_tool(call_id, name, arguments)`: the parts in the order of a `ToolCall`"
    )]
    pub async fn call(
        &self,
        name: &str,
        arguments: &str,
        call_id: &str,
    ) -> Result<ToolCallOutcome, RunError> {
        self.call_tool(call_id, name, arguments).await
    }

    /// [`call_tool`](Self::call_tool) for a caller other than the agent (see [`Caller`]).
    ///
    /// A `stateless` call (a request of the stateless MCP revision) neither reads nor changes
    /// the session's expansion state: it is routed on an expansion state of its own, with
    /// [`Delivered::unseen`], so in the `fixed` layout a collapsed member runs whether or not
    /// its container was called (its harness expands for this call alone, which creates its
    /// scoped pipeline for it), and a container call answers with the complete member schemas
    /// and instructions. A member's result carries no instructions: the member counts as
    /// loaded, as if the conversation held its container's result, which carries them.
    pub(crate) async fn call_reporting(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
        mut caller: Caller<'_>,
    ) -> Result<ToolCallOutcome, RunError> {
        let mut emitter = Emitter::new(self.agent.inner.handlers.clone());
        if let Some(reporter) = caller.reporter.take() {
            emitter = emitter.also_to(reporter);
        }
        let limits = &self.agent.inner.limits;
        // As in a turn, a call of the layout's own tool stands for the call it names from here
        // on: events, middleware and results see that call.
        // The lock is taken only for a name that can be the layout's tool.
        let admitted = call::admit(|| Arc::clone(&self.lock().tools), limits, name, arguments);
        let (name, arguments, answer) = match admitted {
            Unwrapped::Direct => (Cow::Borrowed(name), Cow::Borrowed(arguments), None),
            Unwrapped::Inner { name, arguments } => (Cow::Owned(name), Cow::Owned(arguments), None),
            Unwrapped::Invalid(result) => {
                (Cow::Borrowed(name), Cow::Borrowed(arguments), Some(result))
            }
        };
        // Nobody listening: no event is built (no copies of the name, arguments and result).
        let started = call::started(&emitter, call_id, &name, &arguments);
        let outcome = match answer {
            Some(result) => Ok(ToolCallOutcome {
                result,
                expanded: false,
                tools_changed: false,
                revealed: Vec::new(),
            }),
            None => {
                self.dispatch(&name, &arguments, call_id, &emitter, caller)
                    .await
            }
        };
        let duration = started.map(|at| at.elapsed());
        match outcome {
            Ok(mut outcome) => {
                outcome.result =
                    call::finish(&emitter, limits, call_id, &name, outcome.result, duration);
                Ok(outcome)
            }
            Err(e) => {
                if let Some(duration) = duration {
                    call::finished(&emitter, call_id, &name, &e.to_string(), true, duration);
                }
                Err(e)
            }
        }
    }

    /// Routes an admitted call under the session's lock and runs it without the lock (so calls
    /// may overlap), asking for approval when it needs it. A `stateless` call is routed on an
    /// expansion state of its own (see [`call_reporting`](Self::call_reporting)).
    async fn dispatch(
        &self,
        name: &str,
        arguments: &str,
        call_id: &str,
        emitter: &Emitter,
        caller: Caller<'_>,
    ) -> Result<ToolCallOutcome, RunError> {
        let Caller {
            approver,
            stateless,
            asker,
            cancellation,
            ..
        } = caller;
        let cancellation = cancellation.as_ref().unwrap_or(&self.cancellation);
        let answered = |result, expanded, tools_changed, revealed| {
            Ok(ToolCallOutcome {
                result,
                expanded,
                tools_changed,
                revealed,
            })
        };
        // Route under the lock; run without it, so calls may overlap.
        let (tools, target, pipeline, expanded, tools_changed, revealed) = {
            let mut state = self.lock();
            let State {
                tools,
                expansion: session,
                started,
                ..
            } = &mut *state;
            // A stateless call's expansions are its own and end with it.
            let mut own = Expansion::default();
            let (expansion, delivered) = if stateless {
                (&mut own, Delivered::unseen())
            } else {
                if !*started {
                    session.start(tools)?;
                    *started = true;
                }
                // A tool session keeps no conversation: every container result is complete.
                (session, Delivered::default())
            };
            let seen = expansion.expanded.clone();
            let (resolved, opened) =
                call::route(expansion, tools, name, &seen, &delivered, emitter)?;
            let expanded = !opened.harnesses.is_empty();
            let tools_changed = expanded && !tools.layout().is_fixed_list();
            let revealed: Vec<Arc<ToolDefinition>> = opened
                .container
                .map(|h| {
                    tools.groups()[h]
                        .members
                        .iter()
                        .map(|f| Arc::clone(f.definition()))
                        .collect()
                })
                .unwrap_or_default();
            match resolved {
                call::Resolved::Answered(answer) => {
                    return answered(answer.result, expanded, tools_changed, revealed);
                }
                call::Resolved::Run(target) => {
                    // A stateless call creates only the pipeline of the harness that runs.
                    if stateless && let Some(h) = tools.owner(target) {
                        expansion.ensure_pipeline(tools, h)?;
                    }
                    let pipeline = expansion.pipeline(tools, target).cloned();
                    (
                        Arc::clone(tools),
                        target,
                        pipeline,
                        expanded,
                        tools_changed,
                        revealed,
                    )
                }
            }
        };
        let scope = CallScope {
            cancellation,
            // A tool session has no turns.
            turn_id: None,
            // Sub-agents forward their events through it, and functions report progress and
            // log through it (also to the MCP client of a served call).
            events: emitter.call_sink(),
            asker: Some(asker.unwrap_or_else(|| {
                Arc::clone(&self.agent.inner.asks) as Arc<dyn crate::tool::Asker>
            })),
        };
        let function = tools.function(target);
        let global = &self.agent.inner.middleware;
        let decision = match self
            .ask_approval(
                global,
                pipeline.as_deref(),
                function,
                call_id,
                arguments,
                emitter,
                approver,
                cancellation,
            )
            .await?
        {
            Ok(decision) => decision,
            Err(refused) => return answered(refused, expanded, tools_changed, revealed),
        };
        let run_arguments = decision
            .as_ref()
            .map_or(arguments, |d| d.arguments_for(arguments));
        // A free slot is taken at once (the cancellation is checked before the call starts);
        // otherwise wait for one unless cancelled. Boxed: the wait is large, and only calls
        // that find every slot taken need it.
        let _permit = match self.permits.try_acquire() {
            Ok(permit) => Ok(permit),
            Err(_) => Box::pin(unless_cancelled(cancellation, self.permits.acquire()))
                .await
                .ok_or(RunError::Cancelled)?,
        };
        let result = call::run(
            global,
            pipeline.as_deref(),
            function,
            call_id,
            run_arguments,
            &scope,
            decision.as_ref(),
        )
        .await?;
        answered(result, expanded, tools_changed, revealed)
    }

    /// For a call that needs approval, asks the approver: `Ok(Ok(None))` when the call needs
    /// none, `Ok(Ok(Some(decision)))` for an approval, `Ok(Err(result))` for a denial or when
    /// nobody can be asked.
    #[expect(clippy::too_many_arguments, reason = "one call's parts")]
    async fn ask_approval(
        &self,
        global: &[Arc<dyn crate::Middleware>],
        pipeline: Option<&ScopedPipeline>,
        function: &crate::tool::Function,
        call_id: &str,
        arguments: &str,
        emitter: &Emitter,
        approver: Option<&dyn Approver>,
        cancellation: &CancellationToken,
    ) -> Result<Result<Option<ApprovalDecision>, ToolResult>, RunError> {
        if !approval_required(global, pipeline, function, call_id, arguments, None).await? {
            return Ok(Ok(None));
        }
        let pending = PendingApproval {
            call_id: call_id.to_owned(),
            function: function.name().to_owned(),
            harness: function.harness_name().to_owned(),
            arguments: arguments.to_owned(),
        };
        emitter.emit(&AgentEvent::ApprovalRequested {
            call_id: pending.call_id.clone(),
            name: pending.function.clone(),
            harness: pending.harness.clone(),
            arguments: pending.arguments.clone(),
        });
        let Some(approver) = approver.or(self.approver.as_deref()) else {
            return Ok(Err(ToolResult::error(no_approver_text(function.name()))));
        };
        let decision = match unless_cancelled(cancellation, approver.decide(&pending))
            .await
            .ok_or(RunError::Cancelled)?
        {
            Ok(decision) => decision,
            Err(refused) => return Ok(Err(ToolResult::error(refused))),
        };
        announce_decision(
            global, pipeline, function, call_id, arguments, None, &decision,
        )
        .await?;
        emitter.emit(&AgentEvent::ApprovalDecided {
            record: ApprovalRecord {
                call_id: pending.call_id,
                function: pending.function,
                harness: pending.harness,
                requested_arguments: pending.arguments,
                decision: decision.clone(),
            },
        });
        match decision {
            ApprovalDecision::Deny { reason } => Ok(Err(ToolResult::error(denied_text(
                function.name(),
                reason.as_deref(),
            )))),
            approved => Ok(Ok(Some(approved))),
        }
    }
}
