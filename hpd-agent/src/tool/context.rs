//! [`FunctionContext`]: what a function body can learn about the call that runs it.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

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

    /// The same context reporting through `events`.
    pub(crate) fn set_events(&mut self, events: Option<Arc<dyn EventSink>>) {
        self.events = events;
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
fn arguments_digest(arguments: &str) -> u64 {
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
