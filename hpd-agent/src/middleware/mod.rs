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
//! ([`HarnessOptions::add_scoped_middleware`](crate::HarnessOptions::add_scoped_middleware),
//! [`HarnessBuilder::scoped_middleware`](crate::HarnessBuilder::scoped_middleware)) are shared
//! by every expansion; [`HarnessBuilder::scoped_middleware_factory`](crate::HarnessBuilder::scoped_middleware_factory)
//! creates a fresh one at each expansion, like the attribute.
//!
//! When a harness's functions are visible without expansion (a plain harness, `never_collapse`,
//! collapsing off), its scoped pipeline is created at the start of each turn.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{FunctionCall, Middleware, MiddlewareError};
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MiddlewareError(String);

impl MiddlewareError {
    /// An error with a message.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        MiddlewareError(message.into())
    }

    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MiddlewareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MiddlewareError {}

impl From<String> for MiddlewareError {
    fn from(message: String) -> Self {
        MiddlewareError(message)
    }
}

impl From<&str> for MiddlewareError {
    fn from(message: &str) -> Self {
        MiddlewareError(message.to_owned())
    }
}

/// What a hook returns.
pub type HookResult = Result<(), MiddlewareError>;

/// The turn a hook runs in.
#[derive(Debug, Clone)]
pub struct TurnInfo {
    /// The agent's name (empty when none was set).
    pub agent_name: String,
    /// The user message that started the turn.
    pub user_message: String,
}

/// How a turn ended, for `after_message_turn`.
#[derive(Debug, Clone, Copy)]
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
}

/// The iteration a hook runs in.
#[derive(Debug, Clone)]
pub struct IterationInfo {
    /// 1 for the first model request of the turn.
    pub iteration: usize,
    /// The names of the tools visible in this iteration's request, in order.
    pub visible_tools: Vec<String>,
}

/// A call that resolved to a function, as function hooks see it.
#[derive(Debug, Clone)]
pub struct FunctionCall {
    call_id: String,
    function: Arc<str>,
    harness: Arc<str>,
    arguments: String,
    blocked: Option<String>,
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
        }
    }

    /// The model's id of the call.
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The canonical function name (for a sub-agent, its tool name).
    #[must_use]
    pub fn function_name(&self) -> &str {
        &self.function
    }

    /// The harness the function belongs to (for a sub-agent registered on its own, the
    /// sub-agent's name; for a `#[sub_agent]` member, its harness).
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The arguments text as the model sent it.
    #[must_use]
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// Blocks the call (in `before_function`): the body does not run and the model gets `text`
    /// as an error result. The remaining `before_function` hooks and the wrappers are skipped.
    pub fn block(&mut self, text: impl Into<String>) {
        self.blocked = Some(text.into());
    }

    /// Blocks the call with the default text `Function '{name}' was blocked`.
    pub fn block_default(&mut self) {
        self.blocked = Some(format!("Function '{}' was blocked", self.function));
    }

    /// The block text, when a hook blocked the call.
    #[must_use]
    pub fn blocked(&self) -> Option<&str> {
        self.blocked.as_deref()
    }
}

/// The rest of the `wrap_function_call` chain; call [`Next::run`] to go on to the function.
pub struct Next<'a> {
    pub(crate) call: &'a FunctionCall,
    pub(crate) rest: &'a [Arc<dyn Middleware>],
    pub(crate) core: &'a (dyn Fn() -> BoxFuture<'a, ToolResult> + Send + Sync),
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
            None => Ok((self.core)().await),
        }
    }
}

/// Hooks around turns, iterations and function calls. Every hook defaults to doing nothing.
///
/// See the [module docs](self) for the order in which hooks run.
#[async_trait]
pub trait Middleware: Send + Sync + 'static {
    /// At the start of a turn.
    async fn before_message_turn(&self, turn: &TurnInfo) -> HookResult {
        let _ = turn;
        Ok(())
    }

    /// At the end of a turn, also after a failed run.
    async fn after_message_turn(&self, turn: &TurnInfo, outcome: TurnOutcome<'_>) -> HookResult {
        let _ = (turn, outcome);
        Ok(())
    }

    /// Before each model request.
    async fn before_iteration(&self, iteration: &IterationInfo) -> HookResult {
        let _ = iteration;
        Ok(())
    }

    /// After the calls of an iteration ran (or after a final answer).
    async fn after_iteration(&self, iteration: &IterationInfo) -> HookResult {
        let _ = iteration;
        Ok(())
    }

    /// When a response has tool calls, with every call of the response, before resolution.
    async fn before_tool_execution(
        &self,
        iteration: &IterationInfo,
        calls: &[ToolCall],
    ) -> HookResult {
        let _ = (iteration, calls);
        Ok(())
    }

    /// When two or more calls of a response resolved to functions.
    async fn before_parallel_batch(
        &self,
        iteration: &IterationInfo,
        calls: &[FunctionCall],
    ) -> HookResult {
        let _ = (iteration, calls);
        Ok(())
    }

    /// Before a function runs. May [`block`](FunctionCall::block) it.
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        let _ = call;
        Ok(())
    }

    /// Around the function body. Call `next.run().await` to go on; return another result to
    /// replace it.
    async fn wrap_function_call(
        &self,
        call: &FunctionCall,
        next: Next<'_>,
    ) -> Result<ToolResult, MiddlewareError> {
        let _ = call;
        next.run().await
    }

    /// When the body returned `Err`, panicked or timed out.
    async fn on_error(&self, call: &FunctionCall, failure: &FunctionFailure) -> HookResult {
        let _ = (call, failure);
        Ok(())
    }

    /// After a function call (also a blocked one), with its result, which the hook may change.
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
/// use hpd_agent::{ConfigurableMiddleware, Middleware};
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
    fn from_config(config: Self::Config) -> Self;
}
