//! [`AgentEvent`]s: what a run reports while it goes, to callbacks, streams and `tracing`;
//! the [`EventSink`] a call reports through, and the run's [`Emitter`].
//!
//! Below `tool` in the module graph: a function body's [`FunctionContext`](crate::FunctionContext)
//! holds the sink of its call, typed, and a sub-agent forwards its child's events through it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::chat::{FinishReason, Usage};

/// Something that happened during a run.
///
/// Events go to the callbacks registered with
/// [`AgentBuilder::on_event`](crate::AgentBuilder::on_event) and
/// [`AgentRunConfig::on_event`](crate::AgentRunConfig::on_event), to the stream of
/// [`Session::run_streamed`](crate::Session::run_streamed), and to `tracing` (target
/// `hpd_agent`).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use hpd_agent::{AgentBuilder, AgentEvent, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
/// let model = ScriptedChatClient::with_replies([
///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "ping", "{}")]),
///     ChatResponse::text("pong it is"),
/// ]);
/// let events = Arc::new(Mutex::new(Vec::new()));
/// let log = events.clone();
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Net").with_tool(ping).build()?)
///     .with_chat_client(model)
///     .on_event(move |event| {
///         let line = match event {
///             AgentEvent::IterationStarted { iteration, .. } => format!("request {iteration}"),
///             AgentEvent::ToolCallFinished { name, result, .. } => format!("{name} -> {result}"),
///             AgentEvent::TurnFinished { failed, .. } => format!("done (failed: {failed})"),
///             _ => return,
///         };
///         log.lock().unwrap().push(line);
///     })
///     .build()?;
/// agent.run("Ping").await?;
/// assert_eq!(*events.lock().unwrap(), ["request 1", "ping -> pong", "request 2", "done (failed: false)"]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A model request is about to be sent.
    IterationStarted {
        /// 1 for the first request of the turn.
        iteration: usize,
        /// The names of the visible tools, in order.
        visible_tools: Vec<String>,
    },
    /// Text arrived from the model.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A model reply ended before it was complete: cut off at the output token limit
    /// ([`FinishReason::Length`]), stopped by the provider's content filter, or for a reason this
    /// crate does not map. Replies that end normally (`Stop`, `ToolCalls`) send no event. A
    /// final reply that was cut off still ends the run; [`RunOutput::finish_reason`](crate::RunOutput::finish_reason)
    /// says so too.
    ResponseIncomplete {
        /// The request the reply answers (1 for the first of the turn).
        iteration: usize,
        /// Why the reply ended.
        finish_reason: FinishReason,
        /// Whether the reply carries tool calls (whose arguments may be cut off as well).
        has_tool_calls: bool,
    },
    /// A tool call is about to be handled.
    ToolCallStarted {
        /// The model's call id.
        call_id: String,
        /// The name as the model sent it; for a call of the fixed layout's call tool
        /// ([`CALL_TOOL`](crate::config::CALL_TOOL)), the name it calls.
        name: String,
        /// The arguments text as the model sent it; for a call of the call tool, the
        /// arguments it passes on.
        arguments: String,
    },
    /// A tool call got its result.
    ToolCallFinished {
        /// The model's call id.
        call_id: String,
        /// The name as [`ToolCallStarted`](AgentEvent::ToolCallStarted) gave it.
        name: String,
        /// The result text the model gets.
        result: String,
        /// How long handling it took.
        duration: Duration,
        /// Whether the result reports an error.
        is_error: bool,
    },
    /// A running function reported how far it is
    /// ([`FunctionContext::report_progress`](crate::FunctionContext::report_progress)).
    ToolProgress {
        /// The model's call id.
        call_id: String,
        /// The function's name.
        name: String,
        /// The progress so far.
        progress: f64,
        /// The total, when the function knows it.
        total: Option<f64>,
        /// What the function said about it.
        message: Option<String>,
    },
    /// A running function logged a message ([`FunctionContext::log`](crate::FunctionContext::log)).
    ToolLog {
        /// The model's call id.
        call_id: String,
        /// The function's name.
        name: String,
        /// The message's severity.
        level: LogLevel,
        /// The message.
        message: String,
    },
    /// A call needs a person's approval: the run stops before it runs (after the other calls
    /// of the response ran) and returns it in
    /// [`RunOutput::pending_approvals`](crate::RunOutput::pending_approvals).
    ApprovalRequested {
        /// The id of the model's tool call.
        call_id: String,
        /// The function's canonical name.
        name: String,
        /// Its harness.
        harness: String,
        /// The arguments the model sent.
        arguments: String,
    },
    /// A call's function asked its user something and the elicitation handler deferred the
    /// question ([`AskError::Deferred`](crate::tool::AskError::Deferred)): the run pauses and
    /// returns it in [`RunOutput::pending_elicitations`](crate::RunOutput::pending_elicitations),
    /// and the call goes on once [`Session::decide`](crate::Session::decide) gets the answer.
    QuestionDeferred {
        /// The id of the model's tool call.
        call_id: String,
        /// The function's canonical name.
        name: String,
        /// Its harness.
        harness: String,
        /// The question, with its key set.
        question: crate::ask::Elicitation,
    },
    /// A person decided on a waiting call ([`Session::decide`](crate::Session::decide), or the
    /// [`Approver`](crate::approval::Approver) of a tool session).
    ApprovalDecided {
        /// What was decided, on which call.
        record: crate::approval::ApprovalRecord,
    },
    /// A container expanded.
    ContainerExpanded {
        /// The harness name.
        harness: String,
        /// Whether a call of a hidden member (recovery) expanded it.
        recovery: bool,
    },
    /// An event of a sub-agent's run (nested sub-agents nest these).
    SubAgent {
        /// The sub-agent's tool name.
        name: String,
        /// 1 for a sub-agent of the top-level agent, 2 for one of its sub-agents, ...
        depth: usize,
        /// The child's event.
        event: Box<AgentEvent>,
    },
    /// The agent was built with a collapsing layout its chat client cannot carry, and uses
    /// another one (sent once, when the agent is built, to the handlers registered on the
    /// builder; also logged).
    LayoutFallback {
        /// The layout asked for.
        requested: crate::config::CollapsingLayout,
        /// The layout used instead.
        used: crate::config::CollapsingLayout,
        /// Why.
        reason: String,
    },
    /// The final answer of a typed run did not match its schema (see
    /// [`output`](crate::output)).
    OutputRejected {
        /// The request whose reply was rejected.
        iteration: usize,
        /// The JSON pointer of the first mismatch (`""`: the whole answer).
        path: String,
        /// What is wrong there.
        message: String,
        /// Whether the model is asked again (a retry is left), or the run fails.
        retrying: bool,
    },
    /// The turn ended.
    TurnFinished {
        /// Token usage of the whole turn.
        usage: Usage,
        /// Whether the run failed.
        failed: bool,
    },
}

/// The severity of a message a function logs with [`FunctionContext::log`](crate::FunctionContext::log): the levels of
/// syslog (RFC 5424), as MCP's logging uses them, least severe first.
///
/// ```
/// use hpd_agent::tool::LogLevel;
///
/// assert!(LogLevel::Warning > LogLevel::Info);
/// assert_eq!(LogLevel::Warning.as_str(), "warning");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may need attention.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's name in lower case, as MCP writes it (`"debug"`, ..., `"emergency"`).
    ///
    /// ```
    /// assert_eq!(hpd_agent::tool::LogLevel::Emergency.as_str(), "emergency");
    /// ```
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the events of a run, or of one call, go: the run's [`Emitter`], which a function
/// body reaches through its [`FunctionContext`](crate::FunctionContext) (progress, log
/// messages, and the events of a sub-agent's run).
pub(crate) trait EventSink: Send + Sync {
    /// Delivers one event.
    fn emit(&self, event: &AgentEvent);
    /// Whether an event emitted now would reach anyone; when not, callers skip building it.
    fn wants_events(&self) -> bool;
}

/// A shared event callback.
pub(crate) type EventHandler = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sends events to every handler, to `tracing`, and to one more sink when a call has one (the
/// MCP client of a served call).
#[derive(Clone, Default)]
pub(crate) struct Emitter {
    handlers: Vec<EventHandler>,
    also: Option<Arc<dyn EventSink>>,
}

impl Emitter {
    pub(crate) fn new(handlers: Vec<EventHandler>) -> Self {
        Emitter {
            handlers,
            also: None,
        }
    }

    /// The same emitter, which also sends every event to `sink`.
    pub(crate) fn also_to(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.also = Some(sink);
        self
    }

    /// The sink a call reports through, or `None` when nobody would see anything of it (the
    /// call's context then builds no event).
    pub(crate) fn call_sink(&self) -> Option<Arc<dyn EventSink>> {
        self.wants_events()
            .then(|| Arc::new(self.clone()) as Arc<dyn EventSink>)
    }

    pub(crate) fn emit(&self, event: &AgentEvent) {
        match event {
            AgentEvent::IterationStarted {
                iteration,
                visible_tools,
            } => tracing::debug!(
                target: "hpd_agent",
                iteration,
                visible_tools = %visible_tools.join(", "),
                "iteration started"
            ),
            AgentEvent::TextDelta { .. } => {}
            AgentEvent::ResponseIncomplete {
                iteration,
                finish_reason,
                has_tool_calls,
            } => tracing::warn!(
                target: "hpd_agent",
                iteration,
                %finish_reason,
                has_tool_calls,
                "the model's reply is incomplete"
            ),
            AgentEvent::ToolCallStarted { call_id, name, .. } => {
                tracing::debug!(target: "hpd_agent", call_id, name, "tool call started");
            }
            AgentEvent::ToolCallFinished {
                call_id,
                name,
                duration,
                is_error,
                ..
            } => tracing::debug!(
                target: "hpd_agent",
                call_id,
                name,
                duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                is_error,
                "tool call finished"
            ),
            AgentEvent::ToolProgress {
                call_id,
                name,
                progress,
                total,
                ..
            } => {
                tracing::debug!(target: "hpd_agent", call_id, name, progress, total, "tool progress")
            }
            AgentEvent::ToolLog {
                call_id,
                name,
                level,
                message,
            } => tracing::debug!(
                target: "hpd_agent",
                call_id,
                name,
                level = level.as_str(),
                message = message.as_str(),
                "tool log"
            ),
            AgentEvent::ContainerExpanded { harness, recovery } => {
                tracing::debug!(target: "hpd_agent", harness, recovery, "container expanded");
            }
            AgentEvent::SubAgent { .. } => {}
            AgentEvent::ApprovalRequested { call_id, name, .. } => {
                tracing::debug!(target: "hpd_agent", %call_id, %name, "call waits for approval");
            }
            AgentEvent::QuestionDeferred {
                call_id,
                name,
                question,
                ..
            } => tracing::debug!(
                target: "hpd_agent",
                %call_id,
                %name,
                key = question.key.as_deref().unwrap_or("elicitation"),
                "call waits for an answer to its question"
            ),
            AgentEvent::ApprovalDecided { record } => tracing::debug!(
                target: "hpd_agent",
                call_id = %record.call_id,
                name = %record.function,
                approved = record.decision.is_approved(),
                edited = record.edited(),
                "approval decided"
            ),
            AgentEvent::LayoutFallback {
                requested,
                used,
                reason,
            } => tracing::debug!(
                target: "hpd_agent",
                %requested,
                %used,
                reason = reason.as_str(),
                "collapsing layout fallback"
            ),
            AgentEvent::OutputRejected {
                iteration,
                path,
                message,
                retrying,
            } => tracing::debug!(
                target: "hpd_agent",
                iteration,
                path = path.as_str(),
                message = message.as_str(),
                retrying,
                "answer does not match the output schema"
            ),
            AgentEvent::TurnFinished { usage, failed } => tracing::debug!(
                target: "hpd_agent",
                input_tokens = usage.input_tokens,
                cached_input_tokens = usage.cached_input_tokens,
                output_tokens = usage.output_tokens,
                failed,
                "turn finished"
            ),
        }
        if let Some(sink) = &self.also {
            sink.emit(event);
        }
        for handler in &self.handlers {
            // A panicking subscriber must not tear a run apart half-way (the history would lose
            // tool results); it is reported and the run goes on.
            let delivered =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(event)));
            if delivered.is_err() {
                tracing::error!(target: "hpd_agent", "an event handler panicked; the run goes on");
            }
        }
    }

    pub(crate) fn is_listening(&self) -> bool {
        !self.handlers.is_empty()
    }

    /// Whether anyone would see a tool-call event: a handler, or a `tracing` subscriber that
    /// takes this crate's debug events. When nobody does, callers may skip building them.
    pub(crate) fn sees_tool_calls(&self) -> bool {
        self.is_listening() || tracing::enabled!(target: "hpd_agent", tracing::Level::DEBUG)
    }
}

impl EventSink for Emitter {
    fn emit(&self, event: &AgentEvent) {
        Emitter::emit(self, event);
    }

    fn wants_events(&self) -> bool {
        self.also.is_some() || self.sees_tool_calls()
    }
}
