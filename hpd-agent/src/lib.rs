//! # hpd-agent
//!
//! LLM agents whose tools are plain Rust methods.
//!
//! Annotate an inherent `impl` block with [`#[tool_harness]`](macro@tool_harness) or
//! [`#[collapse("...")]`](macro@collapse) and its methods with
//! [`#[ai_function]`](macro@ai_function). The macros check the harness at compile time, derive a
//! JSON schema for each function's parameters, and register the harness at link time; an
//! [`AgentBuilder`] then registers harnesses by type or by name (also from JSON
//! [`AgentConfig`]), and an [`Agent`] runs the model loop.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
//!
//! #[derive(Default)]
//! pub struct MathTools;
//!
//! #[collapse("Math operations", system_prompt = "Use exact arithmetic.")]
//! impl MathTools {
//!     /// Adds two integers.
//!     #[ai_function]
//!     fn add(&self, a: i64, b: i64) -> i64 {
//!         a + b
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A scripted model: open the container, call `add`, answer.
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "MathTools", "{}")]),
//!     ChatResponse::tool_calls(vec![ToolCall::new("c2", "add", r#"{"a": 2, "b": 3}"#)]),
//!     ChatResponse::text("2 + 3 = 5"),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_instructions("Be brief.")
//!     .with_tool_harness::<MathTools>()
//!     .with_chat_client(model.clone())
//!     .build()?;
//! let output = agent.run("What is 2 + 3?").await?;
//! assert_eq!(output.text, "2 + 3 = 5");
//!
//! let requests = model.requests();
//! assert_eq!(requests[0].tool_names(), ["MathTools"]); // collapsed: one container
//! assert_eq!(requests[1].tool_names(), ["add"]); // expanded after the container call
//! assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
//! # Ok(())
//! # }
//! ```
//!
//! # Writing a harness
//!
//! - The impl macro owns the whole block: it reads `#[ai_function]` on methods and
//!   `#[ai_description("...")]` on parameters, strips them, and registers the harness. Both
//!   accept `name = "..."` (default: the type's name) and `metadata = Type`; `#[collapse]` also
//!   takes `function_result`, `system_prompt` and `middlewares = [...]`.
//! - `#[ai_function]` options: `name`, `description` (default: the doc comment), `condition`,
//!   `timeout_ms`. Names must match `[A-Za-z0-9_-]{1,64}`.
//! - Methods are `fn` or `async fn` taking `&self` (the harness is shared by concurrent calls, so
//!   it must be `Send + Sync + 'static`; keep state behind `Mutex`/atomics). Synchronous bodies
//!   run on the async executor: long blocking work belongs in `spawn_blocking`.
//! - Parameters are any `serde::de::DeserializeOwned + schemars::JsonSchema` types; `Option<T>`
//!   parameters are not required and serde attributes work as usual. A `&FunctionContext` or
//!   `CancellationToken` parameter is supplied by the runtime and left out of the schema.
//!   Fields the model sends that match no parameter are ignored (models add them often).
//! - Return values become the result text: a JSON string without quotes, `()`/`None` as the
//!   empty string, anything else as compact JSON. A return type written `Result<T, E>` (any
//!   path ending in `Result`, `E: Display`) sends `Err(e)` as an error result; a type alias
//!   that hides `Result` is not recognised.
//! - The registry creates a harness with `fn new(config: C) -> Self` (a *config constructor*;
//!   the config comes from JSON or code, `{}` when none is given), else `fn new() -> Self`, else
//!   `Default`. A pre-built instance can always be registered instead.
//! - [`#[sub_agent]`](macro@sub_agent) (optionally `name = "..."`) on a method taking only
//!   `&self` and returning a [`SubAgent`] makes the sub-agent a member of the harness: listed by
//!   its container, visible once the container expands, guarded by the harness's scoped
//!   middleware. The tool name is the `name` option or the method's name.
//!
//! # Harnesses built at run time
//!
//! Tools that exist only at run time (an MCP server's, tools generated from an API description,
//! plugins) form a [`DynamicHarness`], built by [`HarnessBuilder`] from [`Tool`]s: a name, a
//! description, a JSON parameter schema and an async handler. A dynamic harness collapses,
//! recovers, is selected, never-collapsed, uncollapsed and guarded by scoped middleware exactly
//! like a macro harness.
//!
//! ```
//! use hpd_agent::{
//!     AgentBuilder, ChatResponse, FunctionContext, HarnessBuilder, Middleware,
//!     ScriptedChatClient, Tool, ToolCall, ToolResult,
//! };
//! use serde_json::json;
//!
//! #[derive(Default)]
//! struct Audit;
//! impl Middleware for Audit {}
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}},
//!     "required": ["city"]
//! });
//! let weather = HarnessBuilder::new("Weather")
//!     .collapse("Weather lookups") // omit for a plain harness
//!     .system_prompt("Report temperatures in °C.")
//!     .function_result("Weather tools are active.")
//!     .tool(Tool::new(
//!         "forecast",
//!         "Forecast for a city",
//!         schema,
//!         |args: serde_json::Value, _ctx: FunctionContext| async move {
//!             ToolResult::ok(format!("sunny in {}", args["city"].as_str().unwrap_or("?")))
//!         },
//!     ))
//!     .scoped_middleware(Audit::default())
//!     .build()?;
//!
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "Weather", "{}")]),
//!     ChatResponse::tool_calls(vec![ToolCall::new("c2", "forecast", r#"{"city": "Oslo"}"#)]),
//!     ChatResponse::text("Sunny in Oslo."),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_harness(weather)
//!     .with_chat_client(model.clone())
//!     .build()?;
//! assert_eq!(agent.run("Weather in Oslo?").await?.text, "Sunny in Oslo.");
//!
//! let requests = model.requests();
//! assert_eq!(requests[0].tool_names(), ["Weather"]);
//! assert_eq!(requests[1].tool_names(), ["forecast"]);
//! assert_eq!(requests[2].tool_result("c2"), Some(("sunny in Oslo", false)));
//! # Ok(())
//! # }
//! ```
//!
//! A harness whose tools change while the agent lives (an MCP server announcing a new list)
//! replaces them through [`DynamicHarness::updater`]; agents take the new list from their next
//! turn on, so one turn always sees one list. [`HarnessBuilder::before_turn`] runs an async hook
//! at the start of every turn, where a source can reconnect.
//!
//! # Tools without a model
//!
//! [`Agent::tool_session`] gives a [`ToolSession`]: the agent's tools as a model would see them,
//! called by name, with containers, recovery and middleware as in a turn, which is what serving
//! an agent's tools over MCP needs ([`Agent::flat_tool_session`] lists every function).
//!
//! # Collapsing
//!
//! A collapsed harness is offered to the model as one *container* tool named after the harness,
//! described as `{description} (functions: f1, f2, ...)`, with an empty parameter object. Its
//! functions are visible only while the container is expanded. Before every model request the
//! visible tools are computed, in this order:
//!
//! 1. functions of plain harnesses (and of never-collapsed harnesses, or of every harness when
//!    collapsing is disabled), in registration order;
//! 2. containers that are not expanded, in registration order;
//! 3. members of expanded containers, in expansion order.
//!
//! Calling a container expands it (from the next request on), activates its `system_prompt`
//! under `## Active container instructions`, and creates its scoped middleware. Calling a hidden
//! member, by its name or qualified (`MathTools.add`, `mathtools:add`, `MathTools/add`,
//! `MathTools-add`, `MathTools__add`), expands its container too (*recovery*): the call is
//! answered with `MathTools expanded. Available functions: add. Call add again to run it.`, or
//! run right away with [`CollapsingConfig::execute_recovered_calls`]. At the end of a turn all
//! containers collapse again, unless [`CollapsingConfig::persist_system_prompt_injections`] is
//! set. Functions that are not registered for the agent are never run, whatever name the model
//! uses.
//!
//! Providers cache the longest unchanged prefix of a request (tools, then system text, then
//! messages), and the layout above changes the middle of the tool list and the system text when
//! a container expands. The cache-stable layout ([`AgentBuilder::with_cache_stable_collapsing`],
//! `{"collapsing": {"cache_stable": true}}`) keeps every request of a turn a continuation of the
//! previous one: an expanded container stays in place with its members appended after all other
//! tools, and its `system_prompt` is carried, under the same heading, by the result of the call
//! that expanded it instead of the system text.
//!
//! Collapsing is on by default; turn it off with
//! [`AgentBuilder::without_harness_collapsing`] or `{"collapsing": {"enabled": false}}`, and tune
//! it with [`AgentBuilder::configure_harness_collapsing`].
//!
//! # What the model sees when things go wrong
//!
//! | situation | result text | error flag |
//! |---|---|---|
//! | `Err(e)` returned | `Error: {e}` | yes |
//! | the body panicked | `Error: function '{name}' panicked` (never the payload) | yes |
//! | the body exceeded `timeout_ms` | `Error: function '{name}' timed out after {ms} ms` | yes |
//! | arguments not JSON or not matching | `Invalid arguments for '{name}': {serde error with path}` | yes |
//! | unknown name | `Function '{name}' not found. Available functions: ...` | yes |
//! | blocked by middleware | the middleware's text, default `Function '{name}' was blocked` | yes |
//! | arguments over `max_argument_bytes` | `Error: the arguments of '{name}' are {n} bytes; the limit is {max} bytes` | yes |
//! | a result over `max_tool_result_bytes` | the result cut, ending `[truncated: {n} of {total} bytes dropped]` | as it was |
//!
//! Every tool call gets a result, in call order, so the history stays valid even when a run
//! fails (max iterations, cancellation, provider or middleware errors); the session can run
//! again. The agent's [`Limits`] (set with [`AgentBuilder::with_limits`] or the config's
//! `limits` section) bound what the model exchanges with tools: the size of one result, the
//! size of one call's arguments, and how many calls of one response run at once (a response
//! with thousands of calls runs them a few at a time, answered in call order).
//!
//! # Configuration
//!
//! [`AgentConfig::from_json`] reads agents from JSON; keys match whatever their case or
//! underscores (`ToolHarnesses`, `toolHarnesses`, `tool_harnesses`), unknown keys are errors that
//! list the known ones, and every error carries the JSON path. [`AgentBuilder::from_config`]
//! starts a builder from it; builder calls made afterwards merge with the config's entries.
//!
//! # Providers and model options
//!
//! An agent talks to its model through a [`ChatClient`]: [`OpenAiClient`] (OpenAI Chat
//! Completions and the servers that speak it), [`OpenAiResponsesClient`] (the Responses API),
//! [`AnthropicClient`] (the Messages API), or [`ScriptedChatClient`] for tests; see
//! [`providers`]. [`AgentBuilder::with_openai`], [`AgentBuilder::with_openai_responses`] and
//! [`AgentBuilder::with_anthropic`] configure one from the environment, as does a config's
//! `"model": {"provider": ...}`.
//!
//! [`ModelOptions`] (temperature, token limit, stop sequences, seed, [`ToolChoice`],
//! `parallel_tool_calls`, and `extra` request fields) go with every request: set them with
//! [`AgentBuilder::with_model_options`], per run with [`AgentRunConfig::with_model_options`]
//! (merged field by field over the agent's), or in config under `model.options`. A forcing
//! tool choice holds until the model has called a tool in the turn, then the turn goes on
//! with `Auto`; a [`ToolChoice::Tool`] name is resolved like a call of that name (a collapsed
//! harness forces its container, a hidden function expands its container first, as recovery
//! would, and is then forced).
//!
//! Every reply carries a [`FinishReason`]; a reply cut off at the token limit
//! ([`FinishReason::Length`]) still ends the run, with [`RunOutput::finish_reason`] saying so
//! and an [`AgentEvent::ResponseIncomplete`] for each such reply. [`Usage`] counts the whole
//! prompt in `input_tokens` and its part read from the provider's prompt cache in
//! `cached_input_tokens`. Reasoning a provider returns ([`Reasoning`], with Anthropic's
//! signatures) is kept in the history and sent back where the provider needs it. API keys never
//! appear in errors, `Debug` output, events or traces.
//!
//! # Sub-agents
//!
//! A [`SubAgent`] is a tool (one required `input` string) that runs a child agent built from its
//! own [`AgentConfig`]; see its docs. Register it on its own with
//! [`AgentBuilder::with_sub_agent`] or as a member of a harness with `#[sub_agent]`.
//!
//! # Choices where the contract is silent
//!
//! - Argument objects may carry fields that match no parameter; they are ignored, since models
//!   add them often. Arguments that are not a JSON object (after empty, blank or `null` count
//!   as `{}`) are invalid.
//! - A harness added for one run ([`AgentRunConfig`]) that the agent already registers keeps the
//!   agent's registration.
//! - Sub-agent tools registered with [`AgentBuilder::with_sub_agent`] are always visible: they
//!   take their registration place among the plain functions (config `sub_agents` come after
//!   the config's `tool_harnesses`). `#[sub_agent]` members follow their harness's visibility.
//! - A sub-agent config may not register a harness that `parent_functions` hands to it (two
//!   harnesses of one name); the build says so.
//! - `max_iterations` must be at least 1.
//! - Runs need a Tokio runtime with its time driver (`enable_all()` or `#[tokio::main]`):
//!   `timeout_ms` relies on it.
//! - A panicking [`AgentEvent`] subscriber is reported through `tracing` and the run goes on.
//! - A cancelled run answers every pending call with `Error: run cancelled` and fails with
//!   [`RunError::Cancelled`].
//! - A middleware hook that panics ends the run like one that returns an error.
//! - Every [`AgentEvent`] is also logged through `tracing` at debug level (target `hpd_agent`),
//!   inside a `turn` span.
//! - Harness names match ASCII case-insensitively everywhere (registry, references,
//!   `never_collapse`, qualified call names, duplicates); other letters compare exactly. Valid
//!   names are ASCII, so this only decides how a non-ASCII reference is compared.
//! - The error [`ToolResult`] of a [`Tool`] handler reaches the model as it is (no `Error: `
//!   prefix); `on_error` hooks see it as [`FunctionFailure::Reported`].
//! - `system_prompt` or `function_result` on a dynamic harness that is not collapsed fails
//!   [`HarnessBuilder::build`].
//! - Registering a dynamic harness twice (or clones of it) merges the registrations; two
//!   different harnesses of one name (dynamic or Rust) fail the build with
//!   [`BuildError::DuplicateHarness`], also when one of them is added for a run.
//! - A changed tool list whose names clash with other tools is not applied: the previous list
//!   stays and the clash is logged through `tracing` (a warning).
//! - The tool name of a `#[sub_agent]` member is the attribute's `name` or the method name;
//!   events and error texts use it too.
//! - A [`ToolSession`] has no turns: turn, iteration and batch hooks do not run, and
//!   expansions last until [`ToolSession::collapse_all`].
//!
//! # Where things are
//!
//! - [`harness`]: harnesses, Rust ([`ToolHarness`], the link-time [`registry`]) and built at
//!   run time ([`HarnessBuilder`]), and the rules for their names.
//! - [`tool`]: the one entry type of an agent's tool catalog ([`Function`]), results, failures,
//!   the call context, sub-agent declarations. Every tool is called through one path.
//! - `collapse` (internal): which tools a request carries, what a call name resolves to, the
//!   expansion state with its instructions section and scoped pipelines, the turn-end policy.
//! - [`middleware`]: hooks, their order, scoped pipelines.
//! - [`agent`]: [`Agent`], [`Session`], the builder, registration, one turn, events,
//!   sub-agents, [`ToolSession`].
//! - [`config`]: [`AgentConfig`] and friends, key folding, config errors.
//! - [`chat`], [`providers`] ([`openai`], [`providers::anthropic`],
//!   [`providers::openai_responses`], [`scripted`]): the model side.
//!
//! A tool call goes down from the turn (`agent`) through `collapse` (resolution, expansion) and
//! `middleware` (the pipeline) to the catalog entry (`tool`) and its body, and back.
//!
//! # Sessions that outlive the process
//!
//! [`Agent::open_session`] loads a conversation from a [`SessionStore`] (or starts it empty) and
//! saves it at the end of every turn, refusing to overwrite a turn another worker saved first;
//! see [`store`] for the backends (memory, SQLite by default, PostgreSQL and Redis behind
//! features) and what happens when a store is down.
//!
//! # Harnesses in library crates
//!
//! Harnesses are found through `inventory`, which sees a library's harnesses only when the
//! library is linked into the final binary. A binary that names harnesses only in JSON config
//! should write `use my_harness_library as _;` so the linker keeps the crate (see
//! [`registry`]).
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

pub mod agent;
pub mod chat;
mod collapse;
pub mod config;
mod credentials;
mod error;
pub mod harness;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod middleware;
pub mod providers;
mod session;
pub mod store;
pub mod tool;

pub use providers::{openai, scripted};

// Not public API. Used by generated code.
#[doc(hidden)]
pub mod __private;

pub use harness::registry;

pub use agent::{
    Agent, AgentBuilder, AgentEvent, AgentRunConfig, DEFAULT_MAX_ITERATIONS, HarnessOptions,
    RunOutput, Session, SessionState, ToolCallOutcome, ToolSession,
};
pub use async_trait::async_trait;
pub use chat::{
    ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, FinishReason, ModelOptions,
    Reasoning, TextSink, ToolCall, ToolChoice, ToolDefinition, Usage,
};
pub use config::{
    AgentConfig, CollapsingConfig, ConfigError, ConfigErrorKind, Limits, McpServerConfig,
    McpTransportConfig, ModelConfig, RunConfigData, SubAgentConfig, ToolHarnessReference,
};
pub use error::{BuildError, ConstructError, HydrateError, RegistryError, RunError};
pub use harness::{
    DynamicHarness, HarnessBuilder, IntoToolSchema, Tool, ToolHarness, ToolListUpdater,
};
pub use hpd_agent_macros::{ai_function, collapse, sub_agent, tool_harness};
pub use middleware::{
    ConfigurableMiddleware, FunctionCall, HookResult, IterationInfo, Middleware, MiddlewareError,
    Next, TurnInfo, TurnOutcome,
};
pub use providers::anthropic::AnthropicClient;
pub use providers::openai::OpenAiClient;
pub use providers::openai_responses::OpenAiResponsesClient;
pub use registry::{FunctionSpec, HarnessEntry, HarnessInfo, Registry};
pub use scripted::{RecordedRequest, ScriptedChatClient};
pub use store::{SessionStore, StoreError};
pub use tokio_util::sync::CancellationToken;
pub use tool::{Function, FunctionContext, FunctionFailure, SubAgent, ToolResult};

/// What harness code needs: the attribute macros and the types their functions use.
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// struct Waiter;
///
/// #[tool_harness]
/// impl Waiter {
///     /// Waits until cancelled.
///     #[ai_function]
///     async fn wait(&self, token: CancellationToken) -> String {
///         token.cancelled().await;
///         "cancelled".to_owned()
///     }
/// }
/// # fn main() {}
/// ```
pub mod prelude {
    pub use crate::{
        CancellationToken, FunctionContext, SubAgent, ToolHarness, ai_function, async_trait,
        collapse, sub_agent, tool_harness,
    };
}
