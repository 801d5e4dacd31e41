//! Middleware: hooks around turns, iterations and function calls.
//!
//! Every hook of [`Middleware`] has a no-op default, so an implementation overrides only what it
//! needs. *Global* middleware (added with
//! [`AgentBuilder::with_middleware`](crate::AgentBuilder::with_middleware)) sees every call;
//! *scoped* middleware belongs to one harness and sees only that harness's function calls (plus
//! the turn, iteration and batch hooks while its pipeline exists).
//!
//! # Order
//!
//! `before_*` hooks run global middleware in registration order, then scoped pipelines in the
//! order they were created; `after_*` and `on_error` run in reverse. `wrap_function_call`
//! wrappers nest with the first registered global wrapper outermost and scoped wrappers
//! innermost around the function body.
//!
//! For one call: `before_function`, then the wrappers around the body; when the body fails
//! (not for arguments that do not parse, where it never ran), `on_error` runs right there,
//! inside the innermost wrapper, with the [`FunctionFailure`]; then the failure becomes its
//! error result, which the wrappers and `after_function` see. An `on_error` hook that fails
//! ends the run with [`RunError::Middleware`] naming `on_error` (the error passes out through
//! the wrappers' `next.run()`).
//!
//! For the calls of one response: `before_tool_execution`, then for each call that resolved to
//! a function `approval_required` (see [`approval`](crate::approval)), then
//! `before_parallel_batch` for the calls that run now, then each call's function hooks. Calls
//! that wait for approval run when the session is resumed: `on_approval` for every decision,
//! then `before_parallel_batch` and the function hooks of the approved calls, with
//! [`FunctionCall::approval`] set.
//!
//! # Errors and panics
//!
//! A hook that returns an error, or panics, ends the run with [`RunError::Middleware`]; calls
//! still unanswered get the result `Error: run aborted by middleware` and
//! `after_message_turn` still runs.
//!
//! # Scoped middleware declared on a harness
//!
//! `#[collapse("...", middlewares = [Audit])]` creates a fresh `Audit` at each expansion. The
//! type either implements [`ConfigurableMiddleware`] (it gets a config from the harness's
//! `middleware_configs`, parsed from `{}` when none is given) or implements `Default`. When it
//! implements both, the config path is used. Instances added in code
//! ([`HarnessOptions::with_scoped_middleware`](crate::agent::HarnessOptions::with_scoped_middleware),
//! [`HarnessBuilder::with_scoped_middleware`](crate::HarnessBuilder::with_scoped_middleware)) are shared
//! by every expansion; [`HarnessBuilder::with_scoped_middleware_factory`](crate::HarnessBuilder::with_scoped_middleware_factory)
//! creates a fresh one at each expansion, like the attribute.
//!
//! When a harness's functions are visible without expansion (a plain harness, `never_collapse`,
//! collapsing off), its scoped pipeline is created at the start of each turn.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::Middleware;
//! use hpd_agent::middleware::{FunctionCall, MiddlewareError};
//!
//! #[derive(Default)]
//! struct DenyDrops;
//!
//! #[async_trait]
//! impl Middleware for DenyDrops {
//!     async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
//!         if call.arguments().contains("DROP") {
//!             call.block("Error: DROP statements are not allowed");
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let builder = hpd_agent::AgentBuilder::new().with_middleware(DenyDrops);
//! # drop(builder);
//! ```

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;

use crate::chat::{ToolCall, Usage};
use crate::error::RunError;
use crate::tool::{FunctionFailure, ToolResult};

pub(crate) mod pipeline;

/// An error returned by a middleware hook. It ends the run.
///
/// ```
/// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, Middleware, RunError, ScriptedChatClient};
/// use hpd_agent::middleware::MiddlewareError;
/// use hpd_agent::middleware::TurnInfo;
///
/// struct Closed;
///
/// #[async_trait]
/// impl Middleware for Closed {
///     async fn before_message_turn(&self, _turn: &TurnInfo) -> Result<(), MiddlewareError> {
///         Err(MiddlewareError::new("the service is closed on Sundays"))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new()
///     .with_middleware(Closed)
///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
///     .build()?;
/// let error = agent.run("Hello").await.unwrap_err();
/// assert!(matches!(&error, RunError::Middleware { hook: "before_message_turn", .. }));
/// assert!(error.to_string().ends_with("the service is closed on Sundays"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MiddlewareError {
    message: String,
    /// The hook that failed, when it is not the one the error surfaces from (an `on_error`
    /// hook runs inside the wrappers, so its error comes out of `wrap_function_call`).
    hook: Option<&'static str>,
}

impl MiddlewareError {
    /// An error with a message.
    ///
    /// ```
    /// use hpd_agent::middleware::MiddlewareError;
    ///
    /// let error = MiddlewareError::new("quota exceeded");
    /// assert_eq!(error.to_string(), "quota exceeded");
    /// assert_eq!(MiddlewareError::from("quota exceeded"), error);
    /// ```
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        MiddlewareError {
            message: message.into(),
            hook: None,
        }
    }

    /// The error of `hook`, reported as that hook's wherever it surfaces.
    pub(crate) fn of_hook(hook: &'static str, message: String) -> Self {
        MiddlewareError {
            message,
            hook: Some(hook),
        }
    }

    /// The hook that failed, when the error says it.
    pub(crate) fn hook(&self) -> Option<&'static str> {
        self.hook
    }

    /// The message.
    ///
    /// ```
    /// use hpd_agent::middleware::MiddlewareError;
    ///
    /// assert_eq!(MiddlewareError::new("denied").message(), "denied");
    /// ```
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for MiddlewareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MiddlewareError {}

impl From<String> for MiddlewareError {
    fn from(message: String) -> Self {
        MiddlewareError::new(message)
    }
}

impl From<&str> for MiddlewareError {
    fn from(message: &str) -> Self {
        MiddlewareError::new(message)
    }
}

/// What a hook returns.
///
/// ```
/// use hpd_agent::{async_trait, Middleware};
/// use hpd_agent::middleware::HookResult;
/// use hpd_agent::middleware::IterationInfo;
///
/// struct AtMostFive;
///
/// #[async_trait]
/// impl Middleware for AtMostFive {
///     async fn before_iteration(&self, iteration: &IterationInfo) -> HookResult {
///         if iteration.iteration > 5 {
///             return Err("more than five model requests".into());
///         }
///         Ok(())
///     }
/// }
/// # let _ = AtMostFive;
/// ```
pub type HookResult = Result<(), MiddlewareError>;

/// The turn a hook runs in.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, Middleware, ScriptedChatClient};
/// use hpd_agent::middleware::HookResult;
/// use hpd_agent::middleware::TurnInfo;
///
/// struct Greeted(Arc<Mutex<Vec<String>>>);
///
/// #[async_trait]
/// impl Middleware for Greeted {
///     async fn before_message_turn(&self, turn: &TurnInfo) -> HookResult {
///         self.0.lock().unwrap().push(format!("{}: {}", turn.agent_name, turn.user_message));
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let agent = AgentBuilder::new()
///     .with_name("concierge")
///     .with_middleware(Greeted(seen.clone()))
///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
///     .build()?;
/// agent.run("Hello").await?;
/// assert_eq!(*seen.lock().unwrap(), ["concierge: Hello"]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnInfo {
    /// The agent's name (empty when none was set).
    pub agent_name: String,
    /// The user message that started the turn.
    pub user_message: String,
}

impl TurnInfo {
    /// The turn of agent `agent_name` started by `user_message`. Runs make these; tests that
    /// drive a middleware's hooks directly make them too.
    ///
    /// ```
    /// use hpd_agent::middleware::TurnInfo;
    ///
    /// let turn = TurnInfo::new("support", "Where is my order?");
    /// assert_eq!(turn.user_message, "Where is my order?");
    /// ```
    #[must_use]
    pub fn new(agent_name: impl Into<String>, user_message: impl Into<String>) -> Self {
        TurnInfo {
            agent_name: agent_name.into(),
            user_message: user_message.into(),
        }
    }
}

/// How a turn ended, for `after_message_turn`.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, Middleware, ScriptedChatClient};
/// use hpd_agent::middleware::HookResult;
/// use hpd_agent::middleware::{TurnInfo, TurnOutcome};
///
/// struct Outcomes(Arc<Mutex<Vec<String>>>);
///
/// #[async_trait]
/// impl Middleware for Outcomes {
///     async fn after_message_turn(&self, _turn: &TurnInfo, outcome: TurnOutcome<'_>) -> HookResult {
///         let line = match outcome {
///             TurnOutcome::Finished { text, usage } => format!("answered {text:?} ({} tokens out)", usage.output_tokens),
///             TurnOutcome::Failed(error) => format!("failed: {error}"),
///             TurnOutcome::Paused { pending, .. } => format!("{} calls wait for approval", pending.len()),
///             _ => "another outcome".to_owned(), // the enum may grow
///         };
///         self.0.lock().unwrap().push(line);
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let agent = AgentBuilder::new()
///     .with_middleware(Outcomes(lines.clone()))
///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
///     .build()?;
/// agent.run("Hello").await?;
/// let _ = agent.run("Again").await; // the script is used up
/// assert_eq!(lines.lock().unwrap()[0], r#"answered "Hi" (0 tokens out)"#);
/// assert!(lines.lock().unwrap()[1].starts_with("failed: "));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TurnOutcome<'a> {
    /// The model answered with this final text.
    Finished {
        /// The final text.
        text: &'a str,
        /// Token usage of the whole turn.
        usage: Usage,
    },
    /// The run failed.
    Failed(&'a RunError),
    /// The run stopped before calls that need a person's approval ran (see
    /// [`approval`](crate::approval)); the turn goes on when the session is resumed.
    Paused {
        /// The waiting calls, in call order.
        pending: &'a [crate::approval::PendingApproval],
        /// Token usage of the run so far.
        usage: Usage,
    },
}

/// The iteration a hook runs in.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, HarnessBuilder, Middleware};
/// use hpd_agent::middleware::HookResult;
/// use hpd_agent::{ScriptedChatClient, Tool, ToolCall, ToolResult};
/// use hpd_agent::middleware::IterationInfo;
/// use serde_json::json;
///
/// struct ToolsPerRequest(Arc<Mutex<Vec<Vec<String>>>>);
///
/// #[async_trait]
/// impl Middleware for ToolsPerRequest {
///     async fn before_iteration(&self, iteration: &IterationInfo) -> HookResult {
///         self.0.lock().unwrap().push(iteration.visible_tools.clone());
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
///     .with_middleware(ToolsPerRequest(seen.clone()))
///     .with_chat_client(ScriptedChatClient::with_replies([
///         ChatResponse::tool_calls(vec![ToolCall::new("c1", "Net", "{}")]),
///         ChatResponse::text("Open."),
///     ]))
///     .build()?;
/// agent.run("Open the network tools").await?;
/// // The default `fixed` layout: the same list before and after the container call.
/// let list = vec!["Net".to_owned(), "call_function".to_owned()];
/// assert_eq!(*seen.lock().unwrap(), [list.clone(), list]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IterationInfo {
    /// 1 for the first model request of the turn.
    pub iteration: usize,
    /// The names of the tools visible in this iteration's request, in order.
    pub visible_tools: Vec<String>,
}

impl IterationInfo {
    /// Iteration `iteration` (1 for the first model request of a turn) with these visible tools.
    ///
    /// ```
    /// use hpd_agent::middleware::IterationInfo;
    ///
    /// let first = IterationInfo::new(1, vec!["MathTools".to_owned()]);
    /// assert_eq!(first.visible_tools, ["MathTools"]);
    /// ```
    #[must_use]
    pub fn new(iteration: usize, visible_tools: Vec<String>) -> Self {
        IterationInfo {
            iteration,
            visible_tools,
        }
    }
}

/// A call that resolved to a function, as function hooks see it.
///
/// ```
/// use hpd_agent::{async_trait, AgentBuilder, HarnessBuilder, Middleware};
/// use hpd_agent::middleware::{FunctionCall, HookResult};
/// use hpd_agent::{ScriptedChatClient, Tool, ToolResult};
/// use serde_json::json;
///
/// struct OnlyDryRuns;
///
/// #[async_trait]
/// impl Middleware for OnlyDryRuns {
///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
///         if call.harness_name() == "Deploy" && !call.arguments().contains("\"dry_run\":true") {
///             call.block(format!("Error: {} needs \"dry_run\": true", call.function_name()));
///         }
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let deploy = Tool::new("deploy", "Deploys", json!({"type": "object"}), |_, _| async { ToolResult::ok("deployed") });
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Deploy").with_tool(deploy).build()?)
///     .with_middleware(OnlyDryRuns)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// let tools = agent.tool_session();
/// assert_eq!(tools.call_tool("c1", "deploy", r#"{"dry_run":true}"#).await?.result.text, "deployed");
/// assert_eq!(tools.call_tool("c2", "deploy", "{}").await?.result.text, "Error: deploy needs \"dry_run\": true");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FunctionCall {
    call_id: String,
    function: Arc<str>,
    harness: Arc<str>,
    arguments: String,
    blocked: Option<String>,
    /// The id of the turn the call belongs to (`None` in a tool session).
    pub(crate) turn_id: Option<Arc<str>>,
    /// The decision of a person, for a call that waited for approval.
    pub(crate) approval: Option<crate::approval::ApprovalDecision>,
}

impl FunctionCall {
    pub(crate) fn new(
        call_id: String,
        function: impl Into<Arc<str>>,
        harness: impl Into<Arc<str>>,
        arguments: String,
    ) -> Self {
        FunctionCall {
            call_id,
            function: function.into(),
            harness: harness.into(),
            arguments,
            blocked: None,
            turn_id: None,
            approval: None,
        }
    }

    /// The decision of the person who approved the call, when it waited for approval
    /// ([`approval`](crate::approval)); `None` for a call that did not. For an approval with
    /// edited arguments, [`arguments`](Self::arguments) are the edited ones in the function
    /// hooks.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct LogApproved;
    ///
    /// #[async_trait]
    /// impl Middleware for LogApproved {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         if let Some(decision) = call.approval() {
    ///             tracing::info!(function = call.function_name(), ?decision, "running an approved call");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = LogApproved;
    /// ```
    #[must_use]
    pub fn approval(&self) -> Option<&crate::approval::ApprovalDecision> {
        self.approval.as_ref()
    }

    /// The id of the turn the call belongs to, as the function sees it
    /// ([`FunctionContext::turn_id`](crate::FunctionContext::turn_id)); `None` in a
    /// [`ToolSession`](crate::agent::ToolSession).
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct LogTurns;
    ///
    /// #[async_trait]
    /// impl Middleware for LogTurns {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         println!("{} in turn {:?}", call.function_name(), call.turn_id());
    ///         Ok(())
    ///     }
    /// }
    /// # drop(LogTurns);
    /// ```
    #[must_use]
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// The call's idempotency key, the one the function sees
    /// ([`FunctionContext::idempotency_key`](crate::FunctionContext::idempotency_key)): a
    /// middleware can block a side-effecting call whose key it has seen done before, as when a
    /// turn that lost a save race runs again.
    ///
    /// ```
    /// use std::collections::HashSet;
    /// use std::sync::Mutex;
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// #[derive(Default)]
    /// struct OncePerKey(Mutex<HashSet<String>>);
    ///
    /// #[async_trait]
    /// impl Middleware for OncePerKey {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         if !self.0.lock().unwrap().insert(call.idempotency_key()) {
    ///             call.block("Already done in an earlier run of this turn.");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # drop(OncePerKey::default());
    /// ```
    #[must_use]
    pub fn idempotency_key(&self) -> String {
        crate::tool::context::idempotency_key(
            self.turn_id.as_deref(),
            &self.function,
            &self.call_id,
            &self.arguments,
        )
    }

    /// The model's id of the call.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct LogIds;
    ///
    /// #[async_trait]
    /// impl Middleware for LogIds {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         tracing::info!(call_id = call.call_id(), function = call.function_name(), "calling");
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = LogIds;
    /// ```
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The canonical function name (for a sub-agent, its tool name).
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct NoDeletes;
    ///
    /// #[async_trait]
    /// impl Middleware for NoDeletes {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         // The canonical name, also when the model called `Files.delete` or `files:delete`.
    ///         if call.function_name() == "delete" {
    ///             call.block_default();
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = NoDeletes;
    /// ```
    #[must_use]
    pub fn function_name(&self) -> &str {
        &self.function
    }

    /// The harness the function belongs to (for a sub-agent registered on its own, the
    /// sub-agent's name; for a `#[sub_agent]` member, its harness).
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct ReadOnlyDb;
    ///
    /// #[async_trait]
    /// impl Middleware for ReadOnlyDb {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         if call.harness_name() == "Database" && call.function_name() != "query" {
    ///             call.block("Error: the database is read-only");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = ReadOnlyDb;
    /// ```
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The arguments text as the model sent it.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct NoSecretsInArguments;
    ///
    /// #[async_trait]
    /// impl Middleware for NoSecretsInArguments {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         // The text as the model sent it: possibly not even JSON.
    ///         if call.arguments().contains("password") {
    ///             call.block("Error: do not send passwords to tools");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = NoSecretsInArguments;
    /// ```
    #[must_use]
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// Blocks the call (in `before_function`): the body does not run and the model gets `text`
    /// as an error result. The remaining `before_function` hooks and the wrappers are skipped.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct Maintenance;
    ///
    /// #[async_trait]
    /// impl Middleware for Maintenance {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         call.block("Error: tools are down for maintenance; answer without them");
    ///         assert!(call.blocked().is_some());
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = Maintenance;
    /// ```
    pub fn block(&mut self, text: impl Into<String>) {
        self.blocked = Some(text.into());
    }

    /// Blocks the call with the default text `Function '{name}' was blocked`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    /// use serde_json::json;
    ///
    /// struct BlockAll;
    ///
    /// #[async_trait]
    /// impl Middleware for BlockAll {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         call.block_default();
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_tool(ping).build()?)
    ///     .with_middleware(BlockAll)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let outcome = agent.tool_session().call_tool("c1", "ping", "{}").await?;
    /// assert_eq!((outcome.result.text.as_str(), outcome.result.is_error), ("Function 'ping' was blocked", true));
    /// # Ok(())
    /// # }
    /// ```
    pub fn block_default(&mut self) {
        self.blocked = Some(format!("Function '{}' was blocked", self.function));
    }

    /// The block text, when a hook blocked the call.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware, ToolResult};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// // A later hook can tell a blocked call from one that ran.
    /// struct CountBlocked;
    ///
    /// #[async_trait]
    /// impl Middleware for CountBlocked {
    ///     async fn after_function(&self, call: &FunctionCall, _result: &mut ToolResult) -> HookResult {
    ///         if let Some(text) = call.blocked() {
    ///             tracing::warn!(function = call.function_name(), text, "blocked");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = CountBlocked;
    /// ```
    #[must_use]
    pub fn blocked(&self) -> Option<&str> {
        self.blocked.as_deref()
    }
}

/// The rest of the `wrap_function_call` chain; call [`Next::run`] to go on to the function.
///
/// ```
/// use std::time::Instant;
/// use hpd_agent::{async_trait, Middleware, ToolResult};
/// use hpd_agent::middleware::{FunctionCall, MiddlewareError, Next};
///
/// struct Timing;
///
/// #[async_trait]
/// impl Middleware for Timing {
///     async fn wrap_function_call(&self, call: &FunctionCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
///         let started = Instant::now();
///         let result = next.run().await?; // the inner wrappers, then the function
///         tracing::info!(function = call.function_name(), ms = started.elapsed().as_millis() as u64);
///         Ok(result)
///     }
/// }
/// # let _ = Timing;
/// ```
pub struct Next<'a> {
    pub(crate) call: &'a FunctionCall,
    pub(crate) rest: &'a [Arc<dyn Middleware>],
    pub(crate) core:
        &'a (dyn Fn() -> BoxFuture<'a, Result<ToolResult, MiddlewareError>> + Send + Sync),
}

impl fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("call", &self.call)
            .field("wrappers_left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl Next<'_> {
    /// Runs the remaining wrappers and the function; returns its result.
    ///
    /// # Errors
    ///
    /// A wrapper further in returned an error.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool};
    /// use hpd_agent::{async_trait, Middleware, ToolResult};
    /// use hpd_agent::middleware::{FunctionCall, MiddlewareError, Next};
    /// use serde_json::json;
    ///
    /// struct Shout;
    ///
    /// #[async_trait]
    /// impl Middleware for Shout {
    ///     async fn wrap_function_call(&self, _call: &FunctionCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    ///         let mut result = next.run().await?;
    ///         result.text = result.text.to_uppercase();
    ///         Ok(result)
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let hi = Tool::new("hi", "Says hi", json!({"type": "object"}), |_, _| async { ToolResult::ok("hi") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Greet").with_tool(hi).build()?)
    ///     .with_middleware(Shout)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.tool_session().call_tool("c1", "hi", "{}").await?.result.text, "HI");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run(self) -> Result<ToolResult, MiddlewareError> {
        match self.rest.split_first() {
            Some((first, rest)) => {
                first
                    .wrap_function_call(
                        self.call,
                        Next {
                            call: self.call,
                            rest,
                            core: self.core,
                        },
                    )
                    .await
            }
            None => (self.core)().await,
        }
    }
}

/// Hooks around turns, iterations and function calls. Every hook defaults to doing nothing.
///
/// See the [module docs](self) for the order in which hooks run.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use hpd_agent::{async_trait, Middleware, ToolResult};
/// use hpd_agent::middleware::{FunctionCall, HookResult};
/// use hpd_agent::middleware::{IterationInfo, TurnInfo, TurnOutcome};
///
/// #[derive(Default)]
/// struct Stats {
///     requests: AtomicUsize,
///     calls: AtomicUsize,
/// }
///
/// // Override only the hooks you need; the others do nothing.
/// #[async_trait]
/// impl Middleware for Stats {
///     async fn before_iteration(&self, _iteration: &IterationInfo) -> HookResult {
///         self.requests.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
///
///     async fn after_function(&self, _call: &FunctionCall, _result: &mut ToolResult) -> HookResult {
///         self.calls.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
///
///     async fn after_message_turn(&self, turn: &TurnInfo, _outcome: TurnOutcome<'_>) -> HookResult {
///         tracing::info!(
///             agent = %turn.agent_name,
///             requests = self.requests.load(Ordering::Relaxed),
///             calls = self.calls.load(Ordering::Relaxed),
///         );
///         Ok(())
///     }
/// }
/// # let _ = Stats::default();
/// ```
#[async_trait]
pub trait Middleware: Send + Sync + 'static {
    /// At the start of a turn.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::HookResult;
    /// use hpd_agent::middleware::TurnInfo;
    ///
    /// struct MaxLength(usize);
    ///
    /// #[async_trait]
    /// impl Middleware for MaxLength {
    ///     async fn before_message_turn(&self, turn: &TurnInfo) -> HookResult {
    ///         if turn.user_message.len() > self.0 {
    ///             return Err(format!("messages are limited to {} bytes", self.0).into());
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = MaxLength(4096);
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run before the first model request with [`RunError::Middleware`];
    /// `after_message_turn` still runs.
    async fn before_message_turn(&self, turn: &TurnInfo) -> HookResult {
        let _ = turn;
        Ok(())
    }

    /// At the end of a turn, also after a failed run.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::HookResult;
    /// use hpd_agent::middleware::{TurnInfo, TurnOutcome};
    ///
    /// struct Usage;
    ///
    /// #[async_trait]
    /// impl Middleware for Usage {
    ///     async fn after_message_turn(&self, turn: &TurnInfo, outcome: TurnOutcome<'_>) -> HookResult {
    ///         if let TurnOutcome::Finished { usage, .. } = outcome {
    ///             eprintln!("{}: {} tokens in", turn.agent_name, usage.input_tokens);
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = Usage;
    /// ```
    ///
    /// [`TurnOutcome`] has a runnable example.
    ///
    /// # Errors
    ///
    /// An error turns a finished run into [`RunError::Middleware`] (the history keeps the turn).
    async fn after_message_turn(&self, turn: &TurnInfo, outcome: TurnOutcome<'_>) -> HookResult {
        let _ = (turn, outcome);
        Ok(())
    }

    /// Before each model request.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::HookResult;
    /// use hpd_agent::middleware::IterationInfo;
    ///
    /// struct Trace;
    ///
    /// #[async_trait]
    /// impl Middleware for Trace {
    ///     async fn before_iteration(&self, iteration: &IterationInfo) -> HookResult {
    ///         eprintln!("request {} with tools {:?}", iteration.iteration, iteration.visible_tools);
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = Trace;
    /// ```
    ///
    /// [`IterationInfo`] has a runnable example.
    ///
    /// # Errors
    ///
    /// An error ends the run before the request is sent, with [`RunError::Middleware`].
    async fn before_iteration(&self, iteration: &IterationInfo) -> HookResult {
        let _ = iteration;
        Ok(())
    }

    /// After the calls of an iteration ran (or after a final answer).
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::HookResult;
    /// use hpd_agent::middleware::IterationInfo;
    ///
    /// struct Progress;
    ///
    /// #[async_trait]
    /// impl Middleware for Progress {
    ///     async fn after_iteration(&self, iteration: &IterationInfo) -> HookResult {
    ///         eprintln!("request {} done", iteration.iteration);
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = Progress;
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; the calls of the iteration have their
    /// results already.
    async fn after_iteration(&self, iteration: &IterationInfo) -> HookResult {
        let _ = iteration;
        Ok(())
    }

    /// When a response has tool calls, with every call of the response, before resolution.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware, ToolCall};
    /// use hpd_agent::middleware::HookResult;
    /// use hpd_agent::middleware::IterationInfo;
    ///
    /// struct AtMostTenCalls;
    ///
    /// #[async_trait]
    /// impl Middleware for AtMostTenCalls {
    ///     async fn before_tool_execution(&self, _iteration: &IterationInfo, calls: &[ToolCall]) -> HookResult {
    ///         if calls.len() > 10 {
    ///             return Err(format!("the model made {} calls in one reply", calls.len()).into());
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = AtMostTenCalls;
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; every call of the response is answered
    /// `Error: run aborted by middleware`.
    async fn before_tool_execution(
        &self,
        iteration: &IterationInfo,
        calls: &[ToolCall],
    ) -> HookResult {
        let _ = (iteration, calls);
        Ok(())
    }

    /// When two or more calls of a response resolved to functions.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    /// use hpd_agent::middleware::IterationInfo;
    ///
    /// struct BatchLog;
    ///
    /// #[async_trait]
    /// impl Middleware for BatchLog {
    ///     async fn before_parallel_batch(&self, _iteration: &IterationInfo, calls: &[FunctionCall]) -> HookResult {
    ///         let names: Vec<&str> = calls.iter().map(FunctionCall::function_name).collect();
    ///         eprintln!("running {} at once", names.join(", "));
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = BatchLog;
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`] before any call of the batch runs.
    async fn before_parallel_batch(
        &self,
        iteration: &IterationInfo,
        calls: &[FunctionCall],
    ) -> HookResult {
        let _ = (iteration, calls);
        Ok(())
    }

    /// Whether a call waits for a person's approval before it runs (see
    /// [`approval`](crate::approval)). `required` is what the function's declaration says, or
    /// what the middleware before this one decided; return the decision. Runs, for every call
    /// that resolved to a function, global middleware in registration order and then the
    /// call's scoped pipeline, before `before_parallel_batch` and `before_function`. The default
    /// keeps `required`.
    ///
    /// ```
    /// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, HarnessBuilder, Middleware};
    /// use hpd_agent::middleware::FunctionCall;
    /// use hpd_agent::{ScriptedChatClient, Tool, ToolCall, ToolResult};
    /// use hpd_agent::middleware::MiddlewareError;
    /// use serde_json::json;
    ///
    /// /// Transfers over 100 wait for a person.
    /// struct LargeTransfers;
    ///
    /// #[async_trait]
    /// impl Middleware for LargeTransfers {
    ///     async fn approval_required(&self, call: &FunctionCall, required: bool) -> Result<bool, MiddlewareError> {
    ///         let amount = serde_json::from_str::<serde_json::Value>(call.arguments())
    ///             .ok()
    ///             .and_then(|args| args["amount"].as_f64())
    ///             .unwrap_or(f64::INFINITY);
    ///         Ok(required || (call.function_name() == "transfer" && amount > 100.0))
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let transfer = Tool::new("transfer", "Transfers", json!({"type": "object"}), |_, _| async { ToolResult::ok("sent") });
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![
    ///         ToolCall::new("small", "transfer", r#"{"amount": 20}"#),
    ///         ToolCall::new("large", "transfer", r#"{"amount": 5000}"#),
    ///     ]),
    /// ]);
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Bank").with_tool(transfer).build()?)
    ///     .with_middleware(LargeTransfers)
    ///     .with_chat_client(model)
    ///     .build()?;
    /// let output = agent.session().run("Pay both").await?;
    /// let waiting: Vec<&str> = output.pending_approvals.iter().map(|p| p.call_id.as_str()).collect();
    /// assert_eq!(waiting, ["large"]); // `small` ran
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; every call of the response is
    /// answered `Error: run aborted by middleware`.
    async fn approval_required(
        &self,
        call: &FunctionCall,
        required: bool,
    ) -> Result<bool, MiddlewareError> {
        let _ = call;
        Ok(required)
    }

    /// A person decided on a call that waited for approval, before an approved call runs (then
    /// `before_function` and the other function hooks follow, with
    /// [`FunctionCall::approval`] set). `call.arguments()` are the arguments the model sent;
    /// an edited approval carries the ones the call runs with. Runs global middleware, then the
    /// call's scoped pipeline.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use hpd_agent::approval::ApprovalDecision;
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct AuditDecisions(Arc<Mutex<Vec<String>>>);
    ///
    /// #[async_trait]
    /// impl Middleware for AuditDecisions {
    ///     async fn on_approval(&self, call: &FunctionCall, decision: &ApprovalDecision) -> HookResult {
    ///         let verdict = if decision.is_approved() { "approved" } else { "denied" };
    ///         self.0.lock().unwrap().push(format!("{} {verdict}", call.function_name()));
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = AuditDecisions(Arc::default());
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; the calls still unanswered are
    /// answered `Error: run aborted by middleware`.
    async fn on_approval(
        &self,
        call: &FunctionCall,
        decision: &crate::approval::ApprovalDecision,
    ) -> HookResult {
        let _ = (call, decision);
        Ok(())
    }

    /// Before a function runs. May [`block`](FunctionCall::block) it.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct NoShell;
    ///
    /// #[async_trait]
    /// impl Middleware for NoShell {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
    ///         if call.function_name() == "run_shell" {
    ///             call.block("Error: shell access is disabled");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = NoShell;
    /// ```
    ///
    /// [`FunctionCall`] has a runnable example.
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; to refuse one call and let the model go
    /// on, [`block`](FunctionCall::block) it instead.
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        let _ = call;
        Ok(())
    }

    /// Around the function body. Call `next.run().await` to go on; return another result to
    /// replace it.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware, ToolResult};
    /// use hpd_agent::middleware::{FunctionCall, MiddlewareError, Next};
    ///
    /// struct Cache;
    ///
    /// #[async_trait]
    /// impl Middleware for Cache {
    ///     async fn wrap_function_call(&self, call: &FunctionCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    ///         if call.function_name() == "today" {
    ///             return Ok(ToolResult::ok("Monday")); // answered without running the function
    ///         }
    ///         next.run().await
    ///     }
    /// }
    /// # let _ = Cache;
    /// ```
    ///
    /// [`Next::run`] has a runnable example.
    ///
    /// # Errors
    ///
    /// An error (also one from `next.run()`) ends the run with [`RunError::Middleware`]; return
    /// `Ok` with an error [`ToolResult`] to fail only the call.
    async fn wrap_function_call(
        &self,
        call: &FunctionCall,
        next: Next<'_>,
    ) -> Result<ToolResult, MiddlewareError> {
        let _ = call;
        next.run().await
    }

    /// When the body returned `Err`, panicked or timed out (or a [`Tool`](crate::Tool)
    /// handler returned an error result): right where it failed, inside the innermost
    /// `wrap_function_call` wrapper, before any wrapper or `after_function` sees the error
    /// result the failure becomes.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    /// use hpd_agent::tool::FunctionFailure;
    ///
    /// struct AlertOnPanic;
    ///
    /// #[async_trait]
    /// impl Middleware for AlertOnPanic {
    ///     async fn on_error(&self, call: &FunctionCall, failure: &FunctionFailure) -> HookResult {
    ///         if matches!(failure, FunctionFailure::Panicked) {
    ///             tracing::error!(function = call.function_name(), "a tool panicked");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = AlertOnPanic;
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`].
    async fn on_error(&self, call: &FunctionCall, failure: &FunctionFailure) -> HookResult {
        let _ = (call, failure);
        Ok(())
    }

    /// After a function call (also a blocked one), with its result, which the hook may change.
    ///
    /// ```
    /// use hpd_agent::{async_trait, Middleware, ToolResult};
    /// use hpd_agent::middleware::{FunctionCall, HookResult};
    ///
    /// struct Redact;
    ///
    /// #[async_trait]
    /// impl Middleware for Redact {
    ///     async fn after_function(&self, _call: &FunctionCall, result: &mut ToolResult) -> HookResult {
    ///         result.text = result.text.replace("4111 1111 1111 1111", "[card number]");
    ///         Ok(())
    ///     }
    /// }
    /// # let _ = Redact;
    /// ```
    ///
    /// # Errors
    ///
    /// An error ends the run with [`RunError::Middleware`]; the call keeps its result.
    async fn after_function(&self, call: &FunctionCall, result: &mut ToolResult) -> HookResult {
        let _ = (call, result);
        Ok(())
    }
}

/// A scoped middleware that is created from a config.
///
/// Declared with `#[collapse("...", middlewares = [MyMiddleware])]`, it is created at each
/// expansion from the config found under its type name in the harness's `middleware_configs`
/// (matched case-insensitively), or from `{}` when there is none, so serde defaults apply.
/// A type may also derive `Default`; this trait takes precedence.
///
/// ```
/// use hpd_agent::Middleware;
/// use hpd_agent::middleware::ConfigurableMiddleware;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// #[serde(rename_all = "PascalCase")]
/// struct AuditConfig {
///     #[serde(default)]
///     verbose: bool,
/// }
///
/// struct Audit { verbose: bool }
///
/// impl Middleware for Audit {}
///
/// impl ConfigurableMiddleware for Audit {
///     type Config = AuditConfig;
///     fn from_config(config: AuditConfig) -> Self {
///         Audit { verbose: config.verbose }
///     }
/// }
///
/// let config: AuditConfig = serde_json::from_str(r#"{"Verbose": true}"#).unwrap();
/// assert!(Audit::from_config(config).verbose);
/// ```
pub trait ConfigurableMiddleware: Middleware + Sized {
    /// The config type.
    type Config: DeserializeOwned;

    /// Creates an instance.
    ///
    /// ```
    /// use hpd_agent::Middleware;
    /// use hpd_agent::middleware::ConfigurableMiddleware;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct LimitConfig {
    ///     #[serde(default = "ten")]
    ///     per_turn: u32,
    /// }
    /// fn ten() -> u32 { 10 }
    ///
    /// struct Limit {
    ///     per_turn: u32,
    /// }
    /// impl Middleware for Limit {}
    /// impl ConfigurableMiddleware for Limit {
    ///     type Config = LimitConfig;
    ///     fn from_config(config: LimitConfig) -> Self {
    ///         Limit { per_turn: config.per_turn }
    ///     }
    /// }
    ///
    /// // The registry parses `{}` when the harness gives no config, so serde defaults apply.
    /// let limit = Limit::from_config(serde_json::from_str("{}").unwrap());
    /// assert_eq!(limit.per_turn, 10);
    /// ```
    fn from_config(config: Self::Config) -> Self;
}
