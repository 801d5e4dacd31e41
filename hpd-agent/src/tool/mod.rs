//! Tools: the one entry type of an agent's catalog ([`Function`]), what a call returns
//! ([`ToolResult`]), why it failed ([`FunctionFailure`]), what a body may learn about its call
//! ([`FunctionContext`]), and the declaration of a sub-agent tool ([`SubAgent`]).
//!
//! Every tool an agent offers, whatever declared it (a `#[tool_harness]` method, a
//! [`Tool`](crate::Tool) given at run time, a `#[sub_agent]` method, a
//! [`with_sub_agent`](crate::AgentBuilder::with_sub_agent) registration), is a [`Function`] and
//! is called through [`Function::run`].
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::harness::HarnessInfo;
//!
//! #[derive(Default)]
//! pub struct Salutation;
//!
//! #[tool_harness]
//! impl Salutation {
//!     /// Greets someone.
//!     #[ai_function]
//!     fn greet_person(&self, name: String) -> String { format!("Hello, {name}!") }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Every tool is a `Function`, called the same way.
//! let greet = &HarnessInfo::of::<Salutation>().functions()?[0];
//! let result = greet.call("c1", r#"{"name": "Ada"}"#, CancellationToken::new()).await;
//! assert_eq!((result.text.as_str(), result.is_error), ("Hello, Ada!", false));
//! # Ok(())
//! # }
//! ```
//!
//! # Asking the caller
//!
//! A function can ask whoever called it for a completion of their model
//! ([`FunctionContext::sample`]), for input from their user ([`FunctionContext::elicit`]: a
//! form with a schema or a URL to visit) and for their roots ([`FunctionContext::roots`]).
//! Who answers depends on who called:
//!
//! - **An agent's own run** (or a [`ToolSession`](crate::agent::ToolSession)): the handlers
//!   registered on the [`AgentBuilder`](crate::AgentBuilder). Sampling goes to the agent's own
//!   model ([`ModelSampling`]) unless
//!   [`with_sampling_handler`](crate::AgentBuilder::with_sampling_handler) sets another
//!   handler; elicitation goes to
//!   [`with_elicitation_handler`](crate::AgentBuilder::with_elicitation_handler), and roots
//!   are those of [`with_roots`](crate::AgentBuilder::with_roots). Without one the ask fails
//!   with [`AskError::NoHandler`], which the function can turn into a result the model reads.
//!   A sub-agent's functions ask the sub-agent, which is built from its own config: its own
//!   model samples, and the parent's elicitation handler and roots are not passed down.
//! - **An MCP client**, when an [`McpServer`](crate::mcp::McpServer) serves the function: see
//!   [functions that ask the client](crate::mcp#functions-that-ask-the-client). A client that
//!   did not declare the capability is not asked ([`AskError::NotDeclared`]).
//!
//! Every ask has a key, its name in a 2026-07-28 `input_required` result: the one the request
//! sets (`with_key`), else `{sampling|elicitation|roots}-{n}` for the call's n-th ask. An
//! accepted form is checked against its schema before the function sees it.

pub(crate) mod catalog;
pub(crate) mod context;
mod function;
mod output;
mod result;
mod sub_agent;

pub use crate::ask::{
    AskError, ElicitAction, Elicitation, ElicitationAnswer, ElicitationHandler, ElicitationKind,
    ModelSampling, Root, RootsRequest, SamplingHandler, SamplingReply, SamplingRequest,
};
pub use crate::events::LogLevel;
pub use context::FunctionContext;
pub use function::Function;
// Not public API. Used by generated code.
#[doc(hidden)]
pub use function::{BodyFuture, CallParts, Started};
pub use result::{Audio, FunctionFailure, Image, IntoToolResult, ToolResult};
#[allow(deprecated)]
pub use sub_agent::DEFAULT_MAX_DEPTH;
pub(crate) use sub_agent::sub_agent_parameters;
pub use sub_agent::{DEFAULT_MAX_SUB_AGENT_DEPTH, SubAgent};

#[cfg(feature = "mcp")]
pub(crate) use crate::ask::Input;
pub(crate) use crate::ask::{Answer, Asker, CallPause, Deferred, Handlers, PausingAsker};
#[cfg(feature = "mcp")]
pub(crate) use context::arguments_digest;
pub(crate) use function::{Invoke, parse_arguments, parse_arguments_text};
pub(crate) use output::{object_schema, result_text, structured_output};
