//! [`FunctionContext`]: what a function body can learn about the call that runs it.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::ask::{
    AskError, Asker, Asking, Elicitation, ElicitationAnswer, Root, RootsRequest, SamplingReply,
    SamplingRequest,
};
use crate::events::{AgentEvent, EventSink, LogLevel};

/// What a function body can learn about the call that runs it.
///
/// A macro harness method declares a parameter of type `&FunctionContext` to receive it (it is
/// left out of the schema); the handler of a [`Tool`](crate::Tool) built at run time gets it as
/// its second argument.
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// struct Clock;
///
/// #[tool_harness]
/// impl Clock {
///     /// Tells which call this is.
///     #[ai_function]
///     fn whoami(&self, ctx: &FunctionContext) -> String {
///         format!("{} in {} ({})", ctx.function_name(), ctx.harness_name(), ctx.call_id())
///     }
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct FunctionContext {
    function: Arc<str>,
    harness: Arc<str>,
    call_id: Arc<str>,
    cancellation: CancellationToken,
    /// The turn's id, and the digest of the call's arguments (see `idempotency_key`).
    turn: Option<(Arc<str>, u64)>,
    /// Where the call's events go (its progress, its log, a sub-agent's events); `None` when
    /// nobody would see them.
    events: Option<Arc<dyn EventSink>>,
    /// Who answers the call's asks (sampling, elicitation, roots; nobody outside a run), and
    /// how many it made.
    asking: Asking,
}

impl fmt::Debug for FunctionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionContext")
            .field("function", &self.function)
            .field("harness", &self.harness)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl FunctionContext {
    /// A context for a call of `function` in `harness`.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("forecast", "Weather", "call-1", CancellationToken::new());
    /// assert_eq!((ctx.function_name(), ctx.harness_name()), ("forecast", "Weather"));
    /// ```
    #[must_use]
    pub fn new(
        function: impl Into<Arc<str>>,
        harness: impl Into<Arc<str>>,
        call_id: impl Into<Arc<str>>,
        cancellation: CancellationToken,
    ) -> Self {
        FunctionContext {
            function: function.into(),
            harness: harness.into(),
            call_id: call_id.into(),
            cancellation,
            turn: None,
            events: None,
            asking: Asking::default(),
        }
    }

    /// The same context inside turn `turn_id`, for a call with these arguments (the text the
    /// model sent).
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("book", "Travel", "c1", CancellationToken::new())
    ///     .with_turn("turn-1", r#"{"city": "Oslo"}"#);
    /// assert_eq!(ctx.turn_id(), Some("turn-1"));
    /// ```
    #[must_use]
    pub fn with_turn(mut self, turn_id: impl Into<Arc<str>>, arguments: &str) -> Self {
        self.set_turn(turn_id.into(), arguments);
        self
    }

    pub(crate) fn set_turn(&mut self, turn_id: Arc<str>, arguments: &str) {
        self.turn = Some((turn_id, arguments_digest(arguments)));
    }

    /// The id of the turn this call belongs to: the id given with
    /// [`AgentRunConfig::with_turn_id`](crate::AgentRunConfig::with_turn_id), else a random
    /// one per turn. `None` outside a turn (a [`ToolSession`](crate::agent::ToolSession) call).
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("book", "Travel", "c1", CancellationToken::new());
    /// assert_eq!(ctx.turn_id(), None);
    /// ```
    #[must_use]
    pub fn turn_id(&self) -> Option<&str> {
        self.turn.as_ref().map(|(id, _)| &**id)
    }

    /// A key that names this action for idempotency: `{turn id}/{function}/{digest}`, where the
    /// digest (16 hex digits, FNV-1a) is of the arguments with object keys sorted, so it does
    /// not depend on key order or spacing. It stays the same when the same turn runs again
    /// with the same turn id (after a save conflict,
    /// see [After a conflict](crate::store#after-a-conflict)) and the model asks for the same
    /// call; the model's [`call_id`](Self::call_id) does not. Two identical calls in one turn
    /// share it (fold the call id in when they are different actions). Outside a turn:
    /// `call/{call_id}`.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let first = FunctionContext::new("book", "Travel", "c1", CancellationToken::new())
    ///     .with_turn("turn-1", r#"{"city": "Oslo", "nights": 2}"#);
    /// // The same turn run again: another call id, the same arguments in another order.
    /// let again = FunctionContext::new("book", "Travel", "c9", CancellationToken::new())
    ///     .with_turn("turn-1", r#"{"nights":2,"city":"Oslo"}"#);
    /// assert_eq!(first.idempotency_key(), again.idempotency_key());
    /// assert!(first.idempotency_key().starts_with("turn-1/book/"));
    /// ```
    #[must_use]
    pub fn idempotency_key(&self) -> String {
        match &self.turn {
            Some((turn_id, digest)) => format!("{turn_id}/{}/{digest:016x}", self.function),
            None => format!("call/{}", self.call_id),
        }
    }

    /// The canonical function name.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("get_weather", "Weather", "call_1", CancellationToken::new());
    /// assert_eq!(ctx.function_name(), "get_weather");
    /// ```
    #[must_use]
    pub fn function_name(&self) -> &str {
        &self.function
    }

    /// The name of the harness the function belongs to.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("get_weather", "Weather", "call_1", CancellationToken::new());
    /// assert_eq!(ctx.harness_name(), "Weather");
    /// ```
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The model's id of this call.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Tracker;
    ///
    /// #[tool_harness]
    /// impl Tracker {
    ///     /// Records the call.
    ///     #[ai_function]
    ///     fn track(&self, ctx: &FunctionContext) -> String {
    ///         format!("call {} of {}", ctx.call_id(), ctx.function_name())
    ///     }
    /// }
    /// # let _ = Tracker;
    /// ```
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The run's cancellation token. Long bodies should watch it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Poller;
    ///
    /// #[tool_harness]
    /// impl Poller {
    ///     /// Polls until ready or cancelled.
    ///     #[ai_function]
    ///     async fn poll(&self, ctx: &FunctionContext) -> Result<String, String> {
    ///         tokio::select! {
    ///             _ = ctx.cancellation_token().cancelled() => Err("cancelled".into()),
    ///             _ = tokio::time::sleep(Duration::from_millis(1)) => Ok("ready".into()),
    ///         }
    ///     }
    /// }
    /// # let _ = Poller;
    /// ```
    #[must_use]
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether the run was cancelled.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let token = CancellationToken::new();
    /// let ctx = FunctionContext::new("export", "Reports", "c1", token.clone());
    /// assert!(!ctx.is_cancelled());
    /// token.cancel();
    /// assert!(ctx.is_cancelled()); // check it between steps of long work
    /// ```
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Marks the point from which a call served over MCP continues as a task, for a function
    /// the server runs as a task after its input
    /// ([`McpServer::with_task_after_input`](crate::mcp::McpServer::with_task_after_input)):
    /// until here the call is an ordinary 2026-07-28 call whose asks are answered in
    /// `input_required` rounds of the request; here the server answers the request with a
    /// task, and the function goes on as that task (later asks wait for `tasks/update`).
    /// Everywhere else (an agent's own run, a call of another function, a call that already
    /// is a task, a client without the tasks extension) it does nothing.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("deploy", "Ops", "c1", CancellationToken::new());
    /// // Outside a served call it does nothing: the function simply goes on.
    /// ctx.continue_as_task();
    /// ```
    pub fn continue_as_task(&self) {
        if let Some(asker) = self.asking.asker() {
            asker.continue_as_task();
        }
    }

    /// The same context reporting through `events`.
    pub(crate) fn set_events(&mut self, events: Option<Arc<dyn EventSink>>) {
        self.events = events;
    }

    /// The same context with its asks answered by `asker`.
    pub(crate) fn set_asker(&mut self, asker: Option<Arc<dyn Asker>>) {
        self.asking.set_asker(asker);
    }

    /// Who answers the call's asks, when anyone does (an MCP harness hands it on to its
    /// server's requests).
    #[cfg(feature = "mcp")]
    pub(crate) fn asker(&self) -> Option<&Arc<dyn Asker>> {
        self.asking.asker()
    }

    /// Asks the caller's model for a completion (MCP sampling).
    ///
    /// In an agent's run the agent's sampling handler answers (its own model by default, see
    /// [`AgentBuilder::with_sampling_handler`](crate::AgentBuilder::with_sampling_handler));
    /// served over MCP the client's model does (see [asking the caller](crate::tool#asking-the-caller)).
    ///
    /// # Errors
    ///
    /// An [`AskError`]: nobody answers sampling here, the MCP client did not declare it, the
    /// handler refused or failed.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::tool::SamplingRequest;
    ///
    /// #[derive(Default)]
    /// pub struct Poet;
    ///
    /// #[tool_harness]
    /// impl Poet {
    ///     /// Writes a haiku about a topic with the caller's model.
    ///     #[ai_function]
    ///     async fn haiku(&self, topic: String, ctx: &FunctionContext) -> Result<String, String> {
    ///         let reply = ctx
    ///             .sample(SamplingRequest::new(format!("A haiku about {topic}"), 60))
    ///             .await
    ///             .map_err(|e| e.to_string())?;
    ///         Ok(reply.text)
    ///     }
    /// }
    /// # let _ = Poet;
    /// ```
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingReply, AskError> {
        self.asking.sample(request).await
    }

    /// Asks the caller's user for input: a form (checked against its schema before the
    /// function sees it) or a URL to visit (MCP elicitation).
    ///
    /// In an agent's run the agent's elicitation handler answers
    /// ([`AgentBuilder::with_elicitation_handler`](crate::AgentBuilder::with_elicitation_handler));
    /// served over MCP the client's user does.
    ///
    /// # Errors
    ///
    /// An [`AskError`]: nobody answers elicitation here, the MCP client did not declare the
    /// mode, the handler refused or failed, accepted content that does not fit the schema.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::tool::{ElicitAction, Elicitation};
    /// use serde_json::json;
    ///
    /// #[derive(Default)]
    /// pub struct Booking;
    ///
    /// #[tool_harness]
    /// impl Booking {
    ///     /// Books a table, asking the user how many people come.
    ///     #[ai_function]
    ///     async fn book(&self, ctx: &FunctionContext) -> Result<String, String> {
    ///         let form = Elicitation::form(
    ///             "How many people?",
    ///             json!({"type": "object", "properties": {"people": {"type": "integer"}}, "required": ["people"]}),
    ///         );
    ///         let answer = ctx.elicit(form).await.map_err(|e| e.to_string())?;
    ///         match answer.action {
    ///             ElicitAction::Accept => Ok(format!("booked for {}", answer.field("people").unwrap_or(&json!(0)))),
    ///             _ => Ok("not booked".to_owned()),
    ///         }
    ///     }
    /// }
    /// # let _ = Booking;
    /// ```
    pub async fn elicit(&self, request: Elicitation) -> Result<ElicitationAnswer, AskError> {
        self.asking.elicit(request).await
    }

    /// Asks the caller for its roots (MCP roots): the directories or URIs it lets functions
    /// work in.
    ///
    /// In an agent's run they are the agent's
    /// ([`AgentBuilder::with_roots`](crate::AgentBuilder::with_roots)); served over MCP the
    /// client's.
    ///
    /// # Errors
    ///
    /// An [`AskError`]: no roots are set, the MCP client did not declare roots, asking failed.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    /// use hpd_agent::tool::{AskError, RootsRequest};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Outside a run nobody answers.
    /// let ctx = FunctionContext::new("scan", "Files", "c1", CancellationToken::new());
    /// assert_eq!(ctx.roots(RootsRequest::new()).await, Err(AskError::NoHandler { what: "roots" }));
    /// # }
    /// ```
    pub async fn roots(&self, request: RootsRequest) -> Result<Vec<Root>, AskError> {
        self.asking.roots(request).await
    }

    /// Where the call's events go, when anyone sees them (a sub-agent forwards its child's
    /// events there).
    pub(crate) fn events(&self) -> Option<&Arc<dyn EventSink>> {
        self.events.as_ref()
    }

    /// Reports how far the call is: `progress` so far (it should grow with every report), out
    /// of `total` when that is known, with an optional message.
    ///
    /// In an agent's run it becomes an [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress); served over MCP, a
    /// `notifications/progress` for the client when its request asked for progress (a
    /// `progressToken`). Reporting never fails and costs nothing when nobody listens.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Importer;
    ///
    /// #[tool_harness]
    /// impl Importer {
    ///     /// Imports three files.
    ///     #[ai_function]
    ///     fn import(&self, ctx: &FunctionContext) -> String {
    ///         for done in 1..=3 {
    ///             ctx.report_progress(f64::from(done), Some(3.0), Some("importing"));
    ///         }
    ///         "3 files imported".to_owned()
    ///     }
    /// }
    /// # let _ = Importer;
    /// ```
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(events) = &self.events {
            events.emit(&AgentEvent::ToolProgress {
                call_id: self.call_id.to_string(),
                name: self.function.to_string(),
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Logs a message about the call at `level`.
    ///
    /// In an agent's run it becomes an [`AgentEvent::ToolLog`](crate::AgentEvent::ToolLog); served over MCP, a
    /// `notifications/message` for the client (at or above the level it set with
    /// `logging/setLevel`, `info` until it sets one). Logging never fails and costs nothing
    /// when nobody listens.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::tool::LogLevel;
    ///
    /// #[derive(Default)]
    /// pub struct Backup;
    ///
    /// #[tool_harness]
    /// impl Backup {
    ///     /// Backs the database up.
    ///     #[ai_function]
    ///     fn backup(&self, ctx: &FunctionContext) -> String {
    ///         ctx.log(LogLevel::Info, "backup started");
    ///         ctx.log(LogLevel::Warning, "the disk is 90% full");
    ///         "backed up".to_owned()
    ///     }
    /// }
    /// # let _ = Backup;
    /// ```
    pub fn log(&self, level: LogLevel, message: impl AsRef<str>) {
        if let Some(events) = &self.events {
            events.emit(&AgentEvent::ToolLog {
                call_id: self.call_id.to_string(),
                name: self.function.to_string(),
                level,
                message: message.as_ref().to_owned(),
            });
        }
    }
}

/// The idempotency key of a call, as [`FunctionContext::idempotency_key`] describes it.
pub(crate) fn idempotency_key(
    turn_id: Option<&str>,
    function: &str,
    call_id: &str,
    arguments: &str,
) -> String {
    match turn_id {
        Some(turn_id) => format!("{turn_id}/{function}/{:016x}", arguments_digest(arguments)),
        None => format!("call/{call_id}"),
    }
}

/// FNV-1a (64 bits) of the arguments in a canonical form: JSON with object keys sorted and no
/// spaces (empty, blank and `null` count as `{}`); text that is not JSON is hashed as it is.
pub(crate) fn arguments_digest(arguments: &str) -> u64 {
    let trimmed = arguments.trim();
    let canonical = if trimmed.is_empty() || trimmed == "null" {
        "{}".to_owned()
    } else {
        match serde_json::from_str::<serde_json::Value>(trimmed) {
            Ok(value) => {
                let mut out = String::new();
                write_canonical(&value, &mut out);
                out
            }
            Err(_) => arguments.to_owned(),
        }
    };
    canonical
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
