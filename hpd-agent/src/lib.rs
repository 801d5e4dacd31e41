//! # hpd-agent
//!
//! LLM agents whose tools are plain Rust methods.
//!
//! Annotate an inherent `impl` block with [`#[tool_harness]`](macro@tool_harness) or
//! [`#[collapse("...")]`](macro@collapse) and its methods with
//! [`#[ai_function]`](macro@ai_function). The macros check the harness at compile time, derive a
//! JSON schema for each function's parameters, and register the harness at link time; an
//! [`AgentBuilder`] then registers harnesses by type or by name (also from JSON
//! [`AgentConfig`]), and an [`Agent`] runs the model loop: request, run the tool calls, send
//! their results, until the model answers. The signature feature is *collapsing*: a collapsed
//! harness is shown to the model as one container tool, and its functions appear only after the
//! model calls it, so a large catalog costs a few tokens until it is needed.
//!
//! # Quick start
//!
//! A collapsed harness, an agent, and a run. The model here is a [`ScriptedChatClient`] that
//! plays a conversation and records the requests, so the example runs offline; swap it for
//! [`OpenAiClient`](crate::providers::openai::OpenAiClient), [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient) or [`AnthropicClient`](crate::providers::anthropic::AnthropicClient) to talk to a real model.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall};
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
//! // A scripted model: open the container, call `add` through the call tool, answer.
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "MathTools", "{}")]),
//!     ChatResponse::tool_calls(vec![ToolCall::new(
//!         "c2",
//!         "call_function",
//!         r#"{"name": "add", "arguments": {"a": 2, "b": 3}}"#,
//!     )]),
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
//! // Collapsed: one container, and the call tool of the default `fixed` layout.
//! assert_eq!(requests[0].tool_names(), ["MathTools", "call_function"]);
//! // The container's answer, `add`'s schema, came back as a note in the user's turn (the
//! // default `container_notes`) in place of the call and its result; the list never changes.
//! let Some(ChatMessage::User { content: note }) = requests[1].messages.last() else {
//!     panic!("a note ends the second request");
//! };
//! assert!(note.contains(r#"{"name":"add""#) && requests[1].tool_result("c1").is_none());
//! assert_eq!(requests[1].tool_names(), ["MathTools", "call_function"]);
//! assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
//! # Ok(())
//! # }
//! ```
//!
//! # Harnesses and functions
//!
//! A *harness* is a type whose annotated impl block declares functions; the macros' pages list
//! every option with its default, the compile errors for common mistakes, and what they
//! generate.
//!
//! - The impl macro owns the whole block: it reads `#[ai_function]` and `#[sub_agent]` on
//!   methods and `#[ai_description("...")]` on parameters, strips them, and registers the
//!   harness. Both impl macros accept `name = "..."` (default: the type's name) and
//!   `metadata = Type`; `#[collapse]` also takes `function_result`, `system_prompt` and
//!   `middlewares = [...]`.
//! - `#[ai_function]` options: `name`, `description` (default: the doc comment), `condition`,
//!   `timeout_ms`, `requires_approval` (see [Approval](#approval)), and `read_only`,
//!   `destructive`, `idempotent`, `open_world`, what the function does to its environment
//!   ([`ToolAnnotations`](crate::chat::ToolAnnotations), MCP's tool annotations). Names must
//!   match `[A-Za-z0-9_-]{1,64}`.
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
//!   `Default`. A pre-built instance can always be registered instead
//!   ([`HarnessOptions::with_instance`](crate::agent::HarnessOptions::with_instance)).
//!
//! Harnesses are found through `inventory`, which sees a library's harnesses only when the
//! library is linked into the final binary. A binary that names harnesses only in JSON config
//! should write `use my_harness_library as _;` so the linker keeps the crate (see
//! [`harness`](crate::harness#harnesses-in-library-crates)).
//!
//! # Collapsing
//!
//! A collapsed harness is offered to the model as one *container* tool named after the harness,
//! described as `{description} (functions: f1, f2, ...)`, with an empty parameter object. Its
//! functions reach the model only once it calls the container. How they reach it is the
//! *layout* ([`CollapsingLayout`](crate::config::CollapsingLayout): [`AgentBuilder::with_collapsing_layout`], or
//! `{"collapsing": {"layout": "..."}}` in JSON). The default is `native`: the chat client's own
//! deferred loading where it has one, and `fixed` on every other client (OpenAI Chat
//! Completions servers, llama.cpp, the scripted client); see
//! [`CollapsingLayout`](crate::config::CollapsingLayout) for why.
//!
//! What it buys, as measured in the repository's `BENCHMARKS.md` (OpenAI Chat tool JSON,
//! `o200k_base` tokens): **92.3% fewer tool tokens on the first request** for a synthetic
//! catalog of 20 collapsed harnesses × 8 functions, and **93.2%** for the tools of six MCP
//! reference servers, with every function reachable in one extra call.
//!
//! **`fixed` (the default on clients without deferred loading).** The tool list is the same on every request of a session: the
//! functions of plain harnesses (and of never-collapsed harnesses, or of every harness when
//! collapsing is disabled) in registration order, then the containers in registration order,
//! then the call tool [`CALL_TOOL`](crate::config::CALL_TOOL) (`call_function`) when there is a container.
//!
//! - **Containers.** Calling a container expands it: the call is answered with `{Name}
//!   expanded. Available functions: ...`, then each member's name, description and parameter
//!   schema as one JSON line, then the harness's `function_result` and `system_prompt` (under
//!   `## Active container instructions`) when it has them, and its scoped middleware is
//!   created. The model calls a member through `call_function` with `{"name": "add",
//!   "arguments": {"a": 2, "b": 3}}`; that call takes exactly the path of a direct call of the
//!   member (validation, middleware, limits, events and recovery name the member, while the
//!   history keeps the model's own call). A container opened again later in the session
//!   answers without the schemas and instructions the history already holds.
//! - **Arguments checked.** No provider's strict decoding reaches the `arguments` of
//!   `call_function`, nor a member a native form loaded mid-conversation, so in `fixed` and
//!   `native` a call of a collapsed member is checked against the member's whole JSON Schema
//!   before anything runs (and in `hide` and `append` with container notes, whose hints
//!   outline a member's call; the `argument-validation` feature, on by default): a mismatch is
//!   answered with `Invalid arguments for 'add': at $.a: "two" is not of type "integer"`,
//!   naming the JSON path of the first mismatch, and the member does not run. A hint's
//!   placeholder sent back as a value (`{"path": "<path>"}`) is refused the same way.
//! - **Recovery.** Calling a member before its container, directly or through
//!   `call_function`, by its name or qualified (`MathTools.add`, `mathtools:add`,
//!   `MathTools/add`, `MathTools-add`, `MathTools__add`), expands its container too: the call
//!   is answered with the expansion and `Call add again to run it.`, or run right away with
//!   [`CollapsingConfig::execute_recovered_calls`](crate::config::CollapsingConfig::execute_recovered_calls). Functions that are not registered for the
//!   agent are never run, whatever name the model uses.
//! - **Turn end, and what stays loaded.** At the end of a turn every container collapses
//!   again: its scoped middleware is dropped. What the model was shown stays shown, though: in
//!   `fixed` and `native`, a member whose definition the conversation holds (its schema line in
//!   an earlier container result; in `native`, its definition loaded by an earlier result) runs
//!   when the model calls it in a later turn, through `call_function` or by its own name, with
//!   no recovery answer and no extra round trip. Its container expands again for that call, as
//!   a container call would expand it: a fresh scoped pipeline, and its `system_prompt` in the
//!   result when the conversation no longer holds it. A member whose definition the model has
//!   not seen (never opened, or trimmed away by the context budget) is recovered. In `hide` and
//!   `append`, where members reach the model only through the tool list, a member called after
//!   turn end is recovered. [`CollapsingConfig::keep_expansions_across_turns`](crate::config::CollapsingConfig::keep_expansions_across_turns)
//!   keeps expansions, and the same scoped middleware instances, for the whole session (in
//!   `hide` and `append` the members stay in the tool list; in `fixed` and `native` members run
//!   even once the context budget has trimmed their definitions away).
//!
//! - **Opening ahead.** With [`CollapsingConfig::open_ahead`](crate::config::CollapsingConfig::open_ahead)
//!   set, the containers are ranked against the user's message before the first request of a
//!   turn (BM25 over one small document per harness, its name and description, and one per
//!   member, its name, description and parameters; a harness scores as its best document),
//!   and the best-ranked one is opened for the model when it scores at least
//!   the setting, so the model needs no container round trip. In `fixed` the container's
//!   answer (its members' schemas) is added to the user's message, after a line that names the
//!   opened container and followed by the user's text again (so the request is what the model
//!   reads last); in `native` the history gets an assistant message calling it and its
//!   result (the result carries the references that load the members). `fixed` does not put a
//!   call there because a model shown a container call tends to make the same call again (a
//!   small model did so on every task it was tried on; `BENCHMARKS.md`). Only in `fixed`, and in
//!   `native` with tool references or tool additions, where that appends to the conversation
//!   and so keeps the cached prefix; a container whose members the conversation holds is not
//!   opened again. On by default from [`DEFAULT_OPEN_AHEAD`](crate::config::DEFAULT_OPEN_AHEAD)
//!   (`BENCHMARKS.md` has the figures: on the accuracy harness's 45 tasks, the container
//!   opened at the default score was the needed one in all 45, and 2 of 12 messages that need
//!   no tool opened one); `without_open_ahead()` turns it off.
//!
//! - **Container answers as notes.** With [`CollapsingConfig::container_notes`](crate::config::CollapsingConfig::container_notes)
//!   on, in `fixed`, `hide` and `append`, a response whose calls are all container calls (or
//!   recovered member calls) leaves no call and no result in the history: the layout's answers go into one note
//!   in the user's turn, written as opening ahead writes it (the containers named, their
//!   members' schemas (in `fixed` under `<Harness>: call its functions through
//!   call_function, as ...:`, without the container result's list of members), then the
//!   user's message again), ending with the members that fit the
//!   user's message best (BM25; every one scoring at least half as well as the best, up to
//!   three, a member that says it is deprecated yielding to its replacement, and, for a
//!   message with no verb of change, a member annotated as changing things yielding to one
//!   that is not), each with the
//!   whole call that runs it (through `call_function` in `fixed`; in `hide` and `append`,
//!   where the opened members are in the next request's tool list, by their own names). A
//!   container called again although its schemas are in the
//!   conversation gets a note naming those members with their schemas and their calls. The calls
//!   are still reported to events, middleware and traces, the response's own text stays, and
//!   the history only grows, so the cached prefix is kept. It exists for models that repeat
//!   the last call they see: on Qwen2.5-Coder-1.5B it turned most container loops into member
//!   calls (`BENCHMARKS.md`, "Fifth run"). On by default, with opening ahead: together they
//!   took `fixed` from 19 to 43 of the accuracy harness's 45 tasks on that model (three runs; 41 in
//!   two runs of an earlier ranking, 38 or 39 in five before; 42 flat), the one model that calls
//!   tools the repository could measure; `with_container_notes(false)` gives plain `fixed`,
//!   where the model's container calls and their results stay in the history. Vendors' models are trained on their own tool
//!   results and were not measured; where their client has deferred loading, `native` uses it and
//!   no note is written.
//!
//! **Why `fixed`, and the other layouts.** Providers cache the longest unchanged prefix of a
//! request (tools, then system text, then messages) and bill everything after the first change
//! again. `fixed` never changes the tool list or the system text, so each request keeps the
//! whole previous one cached; the price is a longer container result and one layer of
//! indirection for the model. Over whole sessions (the `session_cost` benchmark in
//! `BENCHMARKS.md`) it costs less than `hide` on every catalog from five turns on, under
//! Anthropic's and OpenAI's cache pricing (less than `append` too, but for one catalog at five
//! turns under OpenAI's rule); on one turn it is cheaper than `hide` on two catalogs and 3%
//! dearer on the smallest (4 harnesses).
//! The other layouts:
//! - `hide`, the seed's layout and its default until `fixed` replaced it: an expanded container
//!   leaves the tool list, its members are appended after every other tool (in expansion
//!   order), and its `system_prompt` joins the system text under `## Active container
//!   instructions`; the model calls members by their own names. Each expansion changes the tool
//!   list, so the cached prefix ends at the first tool. Choose it for a model that handles the
//!   call tool poorly (run the repository's accuracy harness on your model to know).
//! - `append` (the seed's `cache_stable`): containers stay; members of expanded containers are
//!   appended; system prompts travel in call results.
//! - `native`: the provider's own deferred loading, in the form the chat client names
//!   (`DeferredTools`: Anthropic `tool_reference` blocks or mid-conversation `tool_addition`s,
//!   OpenAI Responses namespaces with a client-executed `tool_search` or `additional_tools`
//!   items; a per-client setting, `model.deferred_tools` in a config), and `fixed` where it has
//!   none. A container's result that loads every member says `{Name} expanded. Its functions
//!   are loaded.` without listing them (the definitions it loads name them; a result that
//!   loads nothing new lists them as other layouts do). The cheapest layout with Anthropic's
//!   client; with the Responses client, each load adds its namespace to the history, which
//!   costs up to 0.03 of flat's input more than `fixed` where a session keeps loading
//!   harnesses, and less than `fixed` where it uses a few.
//!
//! For a small catalog whose every harness a long session keeps using, collapsing off is
//! cheapest of all.
//!
//! Collapsing is on by default; turn it off with
//! [`AgentBuilder::without_harness_collapsing`] or `{"collapsing": {"enabled": false}}`, keep
//! chosen harnesses always open with [`CollapsingConfig::never_collapse`](crate::config::CollapsingConfig::never_collapse), and tune the rest
//! with [`AgentBuilder::configure_harness_collapsing`].
//!
//! # Selective registration
//!
//! An agent need not take every function of a harness:
//! [`HarnessOptions::with_functions`](crate::agent::HarnessOptions::with_functions) registers a
//! subset of `T`'s functions (by name or `"Harness.function"`), a
//! [`ToolHarnessReference`](crate::config::ToolHarnessReference) with `functions` does the same
//! by name, and so does a config entry `{"name": ..., "functions": [...]}`. Registrations of one harness merge (whole wins over a selection, selections are
//! united), and a collapsed harness registered in part stays collapsed behind a container that
//! lists only the selected functions.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, ScriptedChatClient};
//!
//! #[derive(Default)]
//! pub struct FileOps;
//!
//! #[collapse("File operations")]
//! impl FileOps {
//!     /// Reads a file.
//!     #[ai_function]
//!     fn read(&self, path: String) -> String { format!("contents of {path}") }
//!     /// Deletes a file.
//!     #[ai_function]
//!     fn delete(&self, path: String) -> String { format!("deleted {path}") }
//! }
//!
//! let agent = AgentBuilder::new()
//!     .with_tool_harness_options::<FileOps>(|o| o.with_functions(["read"])) // `delete` is not registered, so it can never run
//!     .with_chat_client(ScriptedChatClient::new())
//!     .build()?;
//! let tools = agent.tool_session().visible_tools();
//! assert_eq!(tools[0].description, "File operations (functions: read)");
//! # Ok::<(), hpd_agent::BuildError>(())
//! ```
//!
//! # Configuration
//!
//! [`AgentConfig::from_json`] reads agents from JSON; keys match whatever their case or
//! underscores (`ToolHarnesses`, `toolHarnesses`, `tool_harnesses`), unknown keys are errors that
//! list the known ones, and every error carries the JSON path. [`AgentBuilder::from_config`]
//! starts a builder from it; builder calls made afterwards merge with the config's entries. The
//! [`config`] module shows the whole format; [`AgentRunConfig`] holds the settings of one run.
//!
//! ```
//! use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
//!
//! let config = AgentConfig::from_json(r#"{
//!     "name": "assistant",
//!     "instructions": "Be brief.",
//!     "max_iterations": 8,
//!     "collapsing": {"layout": "append"},
//!     "tool_harnesses": [{"name": "Archive", "functions": ["read"]}]
//! }"#)?;
//! let agent = AgentBuilder::from_config(config)
//!     .with_chat_client(ScriptedChatClient::new())
//!     .build()?;
//! assert_eq!(agent.name(), "assistant");
//! assert_eq!(agent.initial_tool_names(), ["Archive"]);
//!
//! let error = AgentConfig::from_json(r#"{"tool_harnesses": [{"nmae": "Archive"}]}"#).unwrap_err();
//! assert!(error.to_string().contains("tool_harnesses[0]"));
//! # #[derive(Default)] pub struct Archive;
//! # #[hpd_agent::collapse("Archived files")]
//! # impl Archive {
//! #     /// Reads a file.
//! #     #[hpd_agent::ai_function]
//! #     fn read(&self, path: String) -> String { path }
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Middleware
//!
//! A [`Middleware`] hooks into turns, model requests and function calls: it can block a call
//! ([`FunctionCall::block`](crate::middleware::FunctionCall::block)), wrap it ([`Middleware::wrap_function_call`]), rewrite its result
//! ([`Middleware::after_function`]) or end the run with an error. *Global* middleware
//! ([`AgentBuilder::with_middleware`]) sees every call; *scoped* middleware belongs to one
//! harness (`#[collapse("...", middlewares = [Audit])]`, [`HarnessOptions::with_scoped_middleware`](crate::agent::HarnessOptions::with_scoped_middleware),
//! [`HarnessBuilder::with_scoped_middleware`]) and sees only that harness's calls, created afresh at
//! each expansion. The [`middleware`] module gives the order of hooks and what their errors do.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, ChatResponse, Middleware};
//! use hpd_agent::middleware::{FunctionCall, MiddlewareError};
//! use hpd_agent::{ScriptedChatClient, ToolCall, ToolResult};
//!
//! #[derive(Default)]
//! struct AuditLog(Arc<Mutex<Vec<String>>>);
//!
//! #[async_trait]
//! impl Middleware for AuditLog {
//!     async fn after_function(&self, call: &FunctionCall, result: &mut ToolResult) -> Result<(), MiddlewareError> {
//!         self.0.lock().unwrap().push(format!("{}({}) = {}", call.function_name(), call.arguments(), result.text));
//!         Ok(())
//!     }
//! }
//!
//! #[derive(Default)]
//! pub struct Greeter;
//!
//! #[tool_harness]
//! impl Greeter {
//!     /// Greets someone.
//!     #[ai_function]
//!     fn greet(&self, name: String) -> String { format!("Hello, {name}!") }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let log = Arc::new(Mutex::new(Vec::new()));
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "greet", r#"{"name":"Ada"}"#)]),
//!     ChatResponse::text("Done."),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_tool_harness::<Greeter>()
//!     .with_middleware(AuditLog(log.clone()))
//!     .with_chat_client(model)
//!     .build()?;
//! agent.run("Greet Ada").await?;
//! assert_eq!(*log.lock().unwrap(), [r#"greet({"name":"Ada"}) = Hello, Ada!"#]);
//! # Ok(())
//! # }
//! ```
//!
//! # Metadata and conditional functions
//!
//! A harness declared with `metadata = Type` gets a value of that type at registration
//! ([`HarnessOptions::with_metadata`](crate::agent::HarnessOptions::with_metadata), or JSON `"metadata"` parsed into the type). Two things read
//! it: `#[ai_function(condition = <expr>)]` leaves a function out of the agent when the
//! expression over `metadata` is false, and `{metadata.field}` in a description is filled in
//! from it. Without metadata at registration, conditions hold and placeholders are empty. The
//! [`tool_harness`](macro@tool_harness) page has a full example.
//!
//! # Sub-agents
//!
//! A [`SubAgent`] is a tool (one required `input` string) that runs a child agent built from its
//! own [`AgentConfig`], with the parent's chat client unless the config names a model; each
//! call is a fresh child session, and the child's events reach the parent's subscribers as
//! [`AgentEvent::SubAgent`]. Register it on its own with [`AgentBuilder::with_sub_agent`] (or
//! the config's `sub_agents`), or as a member of a harness with
//! [`#[sub_agent]`](macro@sub_agent), where it follows the harness's collapsing and scoped
//! middleware. [`SubAgent::with_parent_functions`] hands chosen functions of the parent to the
//! child.
//!
//! ```
//! use hpd_agent::{AgentBuilder, AgentConfig, ChatResponse, ScriptedChatClient, SubAgent, ToolCall};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // One scripted model plays both: the parent calls the sub-agent, the child answers, the
//! // parent answers with the child's text.
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "summarizer", r#"{"input": "a long text"}"#)]),
//!     ChatResponse::text("short"),
//!     ChatResponse::text("The summary is: short"),
//! ]);
//! let child = AgentConfig::from_json(r#"{"instructions": "Summarize in one word."}"#)?;
//! let agent = AgentBuilder::new()
//!     .with_sub_agent(SubAgent::new("summarizer", "Summarizes a text.", child))
//!     .with_chat_client(model.clone())
//!     .build()?;
//! assert_eq!(agent.run("Summarize this").await?.text, "The summary is: short");
//! assert_eq!(model.requests()[2].tool_result("c1"), Some(("short", false)));
//! # Ok(())
//! # }
//! ```
//!
//! # Dynamic harnesses
//!
//! Tools that exist only at run time (an MCP server's, tools generated from an API description,
//! plugins) form a [`DynamicHarness`](crate::harness::DynamicHarness), built by [`HarnessBuilder`] from [`Tool`]s: a name, a
//! description, a JSON parameter schema and an async handler. A dynamic harness collapses,
//! recovers, is selected, never-collapsed and guarded by scoped middleware exactly like a macro
//! harness.
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
//!     .with_collapse("Weather lookups") // omit for a plain harness
//!     .with_system_prompt("Report temperatures in °C.")
//!     .with_function_result("Weather tools are active.")
//!     .with_tool(Tool::new(
//!         "forecast",
//!         "Forecast for a city",
//!         schema,
//!         |args: serde_json::Value, _ctx: FunctionContext| async move {
//!             ToolResult::ok(format!("sunny in {}", args["city"].as_str().unwrap_or("?")))
//!         },
//!     ))
//!     .with_scoped_middleware(Audit::default())
//!     .build()?;
//!
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "Weather", "{}")]),
//!     ChatResponse::tool_calls(vec![ToolCall::new(
//!         "c2",
//!         "call_function",
//!         r#"{"name": "forecast", "arguments": {"city": "Oslo"}}"#,
//!     )]),
//!     ChatResponse::text("Sunny in Oslo."),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_harness(weather)
//!     .with_chat_client(model.clone())
//!     .build()?;
//! assert_eq!(agent.run("Weather in Oslo?").await?.text, "Sunny in Oslo.");
//!
//! let requests = model.requests();
//! assert_eq!(requests[0].tool_names(), ["Weather", "call_function"]);
//! assert_eq!(requests[1].tool_names(), ["Weather", "call_function"]);
//! assert_eq!(requests[2].tool_result("c2"), Some(("sunny in Oslo", false)));
//! # Ok(())
//! # }
//! ```
//!
//! A harness whose tools change while the agent lives (an MCP server announcing a new list)
//! replaces them through [`DynamicHarness::updater`](crate::harness::DynamicHarness::updater); agents take the new list from their next
//! turn on, so one turn always sees one list. [`HarnessBuilder::before_turn`] runs an async hook
//! at the start of every turn, where a source can reconnect.
//!
//! # Providers and model options
//!
//! An agent talks to its model through a [`ChatClient`]: [`OpenAiClient`](crate::providers::openai::OpenAiClient) (OpenAI Chat
//! Completions and the servers that speak it: llama.cpp, Ollama, vLLM, ...),
//! [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient) (the Responses API), [`AnthropicClient`](crate::providers::anthropic::AnthropicClient) (the Messages API), or
//! [`ScriptedChatClient`] for tests; see [`providers`]. [`AgentBuilder::with_openai`],
//! [`AgentBuilder::with_openai_responses`] and [`AgentBuilder::with_anthropic`] configure one
//! from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`), as does a config's `"model": {"provider": ...}`.
//!
//! [`ModelOptions`](crate::chat::ModelOptions) (temperature, token limit, stop sequences, seed, [`ToolChoice`](crate::chat::ToolChoice),
//! `parallel_tool_calls`, and `extra` request fields) go with every request: set them with
//! [`AgentBuilder::with_model_options`], per run with [`AgentRunConfig::with_model_options`]
//! (merged field by field over the agent's), or in config under `model.options`. A forcing
//! tool choice holds until the model has called a tool in the turn, then the turn goes on
//! with `Auto`; a [`ToolChoice::Tool`](crate::chat::ToolChoice::Tool) name is resolved like a call of that name (a collapsed
//! harness forces its container, a hidden function expands its container first, as recovery
//! would, and is then forced).
//!
//! Every reply carries a [`FinishReason`](crate::chat::FinishReason); a reply cut off at the token limit
//! ([`FinishReason::Length`](crate::chat::FinishReason::Length)) still ends the run, with [`RunOutput::finish_reason`] saying so
//! and an [`AgentEvent::ResponseIncomplete`] for each such reply. [`Usage`](crate::chat::Usage) counts the whole
//! prompt in `input_tokens` and its part read from the provider's prompt cache in
//! `cached_input_tokens`. Reasoning a provider returns ([`Reasoning`](crate::chat::Reasoning), with Anthropic's
//! signatures) is kept in the history and sent back where the provider needs it. API keys never
//! appear in errors, `Debug` output, events or traces.
//!
//! ```no_run
//! use hpd_agent::AgentBuilder;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Reads OPENAI_API_KEY (and OPENAI_BASE_URL for a local server) from the environment.
//! let agent = AgentBuilder::new().with_openai("gpt-4o-mini").build()?;
//! println!("{}", agent.run("Say hello").await?.text);
//! # Ok(())
//! # }
//! ```
//!
//! # Typed answers
//!
//! [`Agent::run_typed`] and [`Session::run_typed`] return the final answer as any
//! `T: DeserializeOwned + JsonSchema`. Each request carries `T`'s schema in the provider's
//! structured output field (Chat Completions and llama.cpp `response_format`, Responses
//! `text.format`, Anthropic `output_config.format`), made acceptable to the vendors' strict
//! modes; tools still run before the answer; the answer is validated against the schema
//! (cargo feature `output-validation`, default) and deserialized; a mismatch is sent back to
//! the model with its JSON path ([`DEFAULT_OUTPUT_RETRIES`](crate::output::DEFAULT_OUTPUT_RETRIES) times, see
//! [`AgentRunConfig::with_output_retries`]) before the run fails with [`RunError::Output`]
//! ([`OutputError`](crate::output::OutputError): the raw text and the path of the first mismatch). Any JSON Schema can be
//! given as an [`OutputSchema`](crate::output::OutputSchema) ([`AgentBuilder::with_output_schema`], or `output_schema` in
//! config); the [`output`] module has the details per provider and every schema rewrite.
//!
//! ```
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
//! # use hpd_agent::prelude::*;
//! # #[derive(Default)] pub struct MeetingClock;
//! # #[tool_harness] impl MeetingClock {
//! #     /// The time.
//! #     #[ai_function] fn now(&self) -> String { "09:30".into() }
//! # }
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Meeting {
//!     title: String,
//!     /// Minutes from now.
//!     starts_in: u32,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "now", "{}")]),
//!     ChatResponse::text(r#"{"title": "Stand-up", "starts_in": 30}"#),
//! ]);
//! let agent = AgentBuilder::new().with_tool_harness::<MeetingClock>().with_chat_client(model).build()?;
//! let meeting: Meeting = agent.run_typed("When is the stand-up? It is at 10:00.").await?;
//! assert_eq!((meeting.title.as_str(), meeting.starts_in), ("Stand-up", 30));
//! # Ok(())
//! # }
//! ```
//!
//! # Sessions and stores
//!
//! A [`Session`] keeps a conversation (history and expansion state) across turns;
//! [`Agent::run`] is one turn in a fresh session. [`Session::state`] is serializable
//! ([`SessionState`](crate::agent::SessionState)) and [`Agent::resume`] continues from it. [`Agent::open_session`] loads a
//! conversation from a [`SessionStore`](crate::store::SessionStore) (or starts it empty) and saves it at the end of every
//! turn, refusing to overwrite a turn another worker saved first; see [`store`] for the
//! backends (memory, SQLite by default, PostgreSQL and Redis behind features) and what happens
//! when a store is down.
//!
//! ```
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi!"), ChatResponse::text("Ada.")]);
//! let agent = AgentBuilder::new().with_chat_client(model).build()?;
//! let mut session = agent.session();
//! session.run("Hello, I am Ada").await?;
//! let saved = serde_json::to_string(session.state())?; // e.g. into your own database
//!
//! let mut resumed = agent.resume(serde_json::from_str(&saved)?);
//! assert_eq!(resumed.run("Who am I?").await?.text, "Ada.");
//! assert_eq!(resumed.history().len(), 4);
//! # Ok(())
//! # }
//! ```
//!
//! # Approval
//!
//! A function can need a person's approval before it runs: `#[ai_function(requires_approval)]`,
//! [`Tool::with_approval_required`], a config entry's `"requires_approval": ["delete"]` (or
//! [`HarnessOptions::with_approval_required`](crate::agent::HarnessOptions::with_approval_required)), or a middleware's
//! [`approval_required`](Middleware::approval_required) hook deciding per call from its
//! arguments. When the model calls one, the run stops before the call runs: the other calls of
//! the same reply run, and the run returns `Ok` with [`RunOutput::pending_approvals`] (call id,
//! function, harness, arguments). The paused session is part of [`SessionState`](crate::agent::SessionState), so it is saved
//! to any [`SessionStore`](crate::store::SessionStore) like the rest, and [`Session::decide`] resumes it, in this process or
//! another, with one [`ApprovalDecision`](approval::ApprovalDecision) per waiting call: approve,
//! approve with edited arguments (recorded in the result and in [`SessionState::approvals`](crate::agent::SessionState::approvals)), or
//! deny with a reason the model reads. Every call of the reply is then answered in call order,
//! so the history stays valid for every provider, and the turn goes on. Middleware sees the
//! decisions ([`Middleware::on_approval`], [`FunctionCall::approval`](crate::middleware::FunctionCall::approval)) and the run reports
//! [`AgentEvent::ApprovalRequested`] and [`AgentEvent::ApprovalDecided`]. Calls that collapsing
//! routes to a function (an executed recovered call, the `fixed` layout's call tool, a tool a
//! native layout loaded) need approval as a direct call does. The [`approval`] module has the
//! texts the model sees and the choices made.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::approval::Approvals;
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
//!
//! #[derive(Default)]
//! pub struct Deployments;
//!
//! #[tool_harness]
//! impl Deployments {
//!     /// Deploys a version to production.
//!     #[ai_function(requires_approval)]
//!     fn deploy(&self, version: String) -> String { format!("deployed {version}") }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "deploy", r#"{"version": "2.0"}"#)]),
//!     ChatResponse::text("Deployed 1.9 instead."),
//! ]);
//! let agent = AgentBuilder::new().with_tool_harness::<Deployments>().with_chat_client(model.clone()).build()?;
//! let mut session = agent.session();
//! let paused = session.run("Ship 2.0").await?;
//! assert_eq!(paused.pending_approvals[0].function, "deploy"); // nothing deployed yet
//! let saved = serde_json::to_string(session.state())?; // or let a SessionStore keep it
//!
//! let mut later = agent.resume(serde_json::from_str(&saved)?);
//! let output = later.decide(Approvals::new().approve_edited("c1", serde_json::json!({"version": "1.9"}))).await?;
//! assert_eq!(output.text, "Deployed 1.9 instead.");
//! assert!(model.requests()[1].tool_result("c1").unwrap().0.ends_with("deployed 1.9"));
//! # Ok(())
//! # }
//! ```
//!
//! # MCP
//!
//! With the `mcp` feature, the [`mcp`](mcp/index.html) module connects MCP servers as harnesses
//! (`McpHarness`, or a config's `mcp_servers` with [`McpServerConfig`](crate::config::McpServerConfig), connected by
//! `AgentBuilder::build_async`) and serves an agent's tools to MCP clients (`McpServer`, over
//! stdio or streamable HTTP, collapsing per MCP session). An MCP server's tools form a
//! [`DynamicHarness`](crate::harness::DynamicHarness), collapsed behind one container by default. Both work on
//! [`Agent::tool_session`], a [`ToolSession`](crate::agent::ToolSession): the agent's tools as a model would see them,
//! called by name, with containers, recovery and middleware as in a turn
//! ([`Agent::flat_tool_session`] lists every function). A served function that needs approval
//! asks the MCP client's user through elicitation, and is refused with an error result for a
//! client that does not support elicitation ([`ToolSession::with_approver`](crate::agent::ToolSession::with_approver) does the same for
//! a tool session of your own).
//!
//! # Events, tracing and cancellation
//!
//! A run reports what it does as [`AgentEvent`]s: to callbacks ([`AgentBuilder::on_event`],
//! [`AgentRunConfig::on_event`]), as a stream ([`Session::run_streamed`]), and to `tracing`
//! at debug level (target `hpd_agent`, inside the INFO spans `turn`, `model_request` and
//! `tool_call`; with the `otel` feature these are the OpenTelemetry GenAI spans
//! `invoke_agent`, `chat` and `execute_tool`, see the `otel` module). A [`CancellationToken`] given
//! with [`AgentRunConfig::with_cancellation`] ends a run: the model request or the running
//! functions are abandoned, every pending call is answered `Error: run cancelled`, and the run
//! fails with [`RunError::Cancelled`]. Functions see the token through a `CancellationToken`
//! or `&FunctionContext` parameter.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use hpd_agent::{AgentBuilder, AgentEvent, AgentRunConfig, CancellationToken, ChatResponse};
//! use hpd_agent::{RunError, ScriptedChatClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let agent = AgentBuilder::new()
//!     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
//!     .on_event(move |event| {
//!         if let AgentEvent::IterationStarted { iteration, .. } = event {
//!             log.lock().unwrap().push(*iteration);
//!         }
//!     })
//!     .build()?;
//! agent.run("Hello").await?;
//! assert_eq!(*seen.lock().unwrap(), [1]);
//!
//! let token = CancellationToken::new();
//! token.cancel();
//! let cancelled = agent.session().run_with("Hello", AgentRunConfig::new().with_cancellation(token)).await;
//! assert!(matches!(cancelled, Err(RunError::Cancelled)));
//! # Ok(())
//! # }
//! ```
//!
//! # Images and structured results
//!
//! A [`ToolResult`] is an ordered list of [`ContentPart`](crate::chat::ContentPart)s (text, image, audio, a resource link,
//! an embedded resource) and an optional structured JSON value, besides its error flag. An
//! `#[ai_function]` picks its result by its return type (checked at compile time, without
//! specialization: the generated code probes the type):
//! - a type that implements [`IntoToolResult`](crate::tool::IntoToolResult) ([`Image`](crate::tool::Image), [`Audio`](crate::tool::Audio), [`ContentPart`](crate::chat::ContentPart),
//!   `Vec<ContentPart>`, [`ToolResult`], or one of yours) gives exactly that result;
//! - a `Serialize + schemars::JsonSchema` type gives its JSON text as before and, when its
//!   schema describes an object, the value as the structured result; that schema is the
//!   function's output schema ([`ToolDefinition::output_schema`](crate::chat::ToolDefinition::output_schema), which
//!   [`McpServer`](mcp/struct.McpServer.html) advertises as `outputSchema`);
//! - any other `Serialize` type gives its JSON text.
//!
//! `Result<T, E>` works with each. A return type the macro cannot name outside the method
//! (`impl Serialize`, a type with the method's own lifetime) has no output schema.
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::harness::HarnessInfo;
//! use hpd_agent::tool::Image;
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! pub struct Weather { celsius: f64 }
//!
//! #[derive(Default)]
//! pub struct Station;
//!
//! #[tool_harness]
//! impl Station {
//!     /// The current weather.
//!     #[ai_function]
//!     fn weather(&self) -> Weather { Weather { celsius: 21.5 } }
//!     /// A photo of the sky.
//!     #[ai_function]
//!     fn sky(&self) -> Result<Image, String> { Ok(Image::png(vec![0x89, b'P', b'N', b'G'])) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let functions = HarnessInfo::of::<Station>().functions()?;
//! assert_eq!(functions[0].definition().output_schema.as_ref().unwrap()["type"], "object");
//! let weather = functions[0].call("c1", "{}", Default::default()).await;
//! assert_eq!((weather.text.as_str(), weather.structured), (r#"{"celsius":21.5}"#, Some(serde_json::json!({"celsius": 21.5}))));
//! let sky = functions[1].call("c2", "{}", Default::default()).await;
//! assert_eq!(sky.text, "[image: image/png, 4 bytes]");
//! # Ok(())
//! # }
//! ```
//!
//! Providers send images as their APIs define them (see [`ToolImages`](crate::chat::ToolImages): inside Anthropic's
//! `tool_result`, inside a Responses `function_call_output`, in a user message after the tool
//! messages on Chat Completions) or, with [`ToolImages::Describe`](crate::chat::ToolImages::Describe), as the result's text form;
//! what an API takes no part for goes as text, never dropped. The structured value goes as JSON
//! text (no provider has a field for it). [`Limits`](crate::config::Limits) apply per part.
//!
//! Stored sessions keep the parts in [`ChatMessage::Tool`] (`parts`, base64 data), beside the
//! text form in `content`; a session stored before parts existed has no `parts` key and reads
//! as text results (serde's `default`), so old sessions stay readable and a history with parts
//! is still valid for every provider.
//!
//! # Errors, and what the model sees
//!
//! Building fails with a [`BuildError`] (an unknown harness or function, a config that does not
//! fit, two tools of one name, no chat client), configs with a [`ConfigError`](crate::config::ConfigError) carrying the JSON
//! path, runs with a [`RunError`], stores with a [`StoreError`](crate::store::StoreError). A failing tool never fails the
//! run: the model gets an error result and can react.
//!
//! | situation | result text | error flag |
//! |---|---|---|
//! | `Err(e)` returned | `Error: {e}` | yes |
//! | the body panicked | `Error: function '{name}' panicked` (never the payload) | yes |
//! | the body exceeded `timeout_ms` | `Error: function '{name}' timed out after {ms} ms` | yes |
//! | arguments not JSON or not matching | `Invalid arguments for '{name}': {serde error with path}` | yes |
//! | unknown name | `Function '{name}' not found. Available functions: ...` | yes |
//! | blocked by middleware | the middleware's text, default `Function '{name}' was blocked` | yes |
//! | denied by the person approving | `Function '{name}' was denied by the user: {reason}` | yes |
//! | arguments over `max_argument_bytes` | `Error: the arguments of '{name}' are {n} bytes; the limit is {max} bytes` | yes |
//! | a result over `max_tool_result_bytes` | the result cut, ending `[truncated: {n} of {total} bytes dropped]` (each text part of a result with parts) | as it was |
//! | an image, audio or blob over `max_tool_result_media_bytes` | that part replaced by `[image: {mime}, {n} bytes, not sent: over the limit of {max} bytes]` | as it was |
//!
//! Every tool call gets a result, in call order, so the history stays valid even when a run
//! fails (max iterations, cancellation, provider or middleware errors); the session can run
//! again. The agent's [`Limits`](crate::config::Limits) (set with [`AgentBuilder::with_limits`] or the config's
//! `limits` section) bound what the model exchanges with tools: the size of one result, the
//! size of one call's arguments, and how many calls of one response run at once (a response
//! with thousands of calls runs them a few at a time, answered in call order).
//!
//! # Feature flags
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `sqlite` | yes | `store::SqliteSessionStore`, the embedded session store (SQLite compiled in through `rusqlite`) |
//! | `output-validation` | yes | typed final answers checked against their whole JSON Schema (`jsonschema`); without it, by parsing and deserializing only |
//! | `argument-validation` | yes | in `fixed` and `native` (and `hide` and `append` with container notes), a collapsed member's arguments checked against its JSON Schema before it runs, and a hint's placeholder sent back as a value refused (`jsonschema`); without it, by the function's own parsing only |
//! | `postgres` | no | `store::PostgresSessionStore`, over `tokio-postgres` |
//! | `redis` | no | `store::RedisSessionStore`, over the `redis` crate with Tokio support |
//! | `mcp` | no | the [`mcp`](mcp/index.html) module: `McpHarness` (MCP servers as harnesses), `McpServer` (an agent's tools over MCP), `AgentBuilder::with_mcp_server` and `build_async`; built on the official Rust SDK `rmcp` |
//! | `otel` | no | the `otel` module: the run's spans by the OpenTelemetry GenAI conventions (through `tracing-opentelemetry`; the operator picks the SDK and exporter), W3C trace context through MCP `_meta` |
//!
//! Everything else (the macros, the three HTTP providers, the memory store) is always there.
//! Items behind a feature are marked so on docs.rs, which builds every feature.
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
//! - A middleware hook that panics ends the run like one that returns an error.
//! - Harness names match ASCII case-insensitively everywhere (registry, references,
//!   `never_collapse`, qualified call names, duplicates); other letters compare exactly. Valid
//!   names are ASCII, so this only decides how a non-ASCII reference is compared.
//! - The error [`ToolResult`] of a [`Tool`] handler reaches the model as it is (no `Error: `
//!   prefix); `on_error` hooks see it as [`FunctionFailure::Reported`](crate::tool::FunctionFailure::Reported).
//! - A call's outcome is `Ok(result)` or a [`FunctionFailure`](crate::tool::FunctionFailure)
//!   from the body to the innermost `wrap_function_call` wrapper: `on_error` hooks see the
//!   failure there, before any wrapper sees the error result it becomes.
//! - `system_prompt` or `function_result` on a dynamic harness that is not collapsed fails
//!   [`HarnessBuilder::build`].
//! - Registering a dynamic harness twice (or clones of it) merges the registrations; two
//!   different harnesses of one name (dynamic or Rust) fail the build with
//!   [`BuildError::DuplicateHarness`], also when one of them is added for a run.
//! - A changed tool list whose names clash with other tools is not applied: the previous list
//!   stays and the clash is logged through `tracing` (a warning).
//! - The tool name of a `#[sub_agent]` member is the attribute's `name` or the method name;
//!   events and error texts use it too.
//! - A [`ToolSession`](crate::agent::ToolSession) has no turns: turn, iteration and batch hooks do not run, and
//!   expansions last until [`ToolSession::collapse_all`](crate::agent::ToolSession::collapse_all).
//!
//! # Where things are
//!
//! - [`harness`]: harnesses, Rust ([`ToolHarness`], described by
//!   [`HarnessInfo`](crate::harness::HarnessInfo)) and built at run time ([`HarnessBuilder`]),
//!   and the rules for their names.
//! - [`tool`]: the one entry type of an agent's tool catalog ([`Function`](crate::tool::Function)), results, failures,
//!   the call context, sub-agent declarations. Every tool is called through one path.
//! - `collapse` (internal): which tools a request carries, what a call name resolves to, the
//!   expansion state with its instructions section and scoped pipelines, the turn-end policy.
//! - [`middleware`]: hooks, their order, scoped pipelines.
//! - [`agent`]: [`Agent`], [`Session`], the builder, registration, one turn, events,
//!   sub-agents, [`ToolSession`](crate::agent::ToolSession). A model's call in a turn and a
//!   tool session's call (also one served over MCP) go through the same steps in `agent/call.rs`:
//!   the argument limit and unwrapping, routing (containers, recovery, unknown names),
//!   approval, the function pipeline, the cut to the result limits, the started and finished
//!   events.
//! - [`config`]: [`AgentConfig`] and friends, key folding, config errors.
//! - [`chat`], [`providers`] ([`providers::openai`], [`providers::anthropic`],
//!   [`providers::openai_responses`], [`providers::scripted`]): the model side.
//! - [`error`]: the error types of building and running an agent, and of harness configs.
//! - [`store`]: session stores. `mcp` (feature `mcp`): MCP client and server. `otel`
//!   (feature `otel`): the run's spans as OpenTelemetry GenAI spans, and how to export them.
//! - [`approval`]: pending calls, decisions, the paused turn, approvers.
//! - [`prelude`]: what harness code imports.
//!
//! A tool call goes down from the turn (`agent`) through `collapse` (resolution, expansion) and
//! `middleware` (the pipeline) to the catalog entry (`tool`) and its body, and back.
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the `mcp` feature its items are not compiled, so the links of the core modules' docs
// to them (approval and asking through an MCP server, functions an MCP client calls) cannot
// resolve; every other link stays checked, and with the feature (docs.rs builds every feature,
// CI the workspace's) these are checked too.
#![cfg_attr(not(feature = "mcp"), allow(rustdoc::broken_intra_doc_links))]

pub mod agent;
pub mod approval;
mod arguments;
mod ask;
pub mod chat;
mod collapse;
pub mod config;
mod credentials;
pub mod error;
mod events;
pub mod harness;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod middleware;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
pub mod output;
pub mod providers;
mod roots;
mod session;
pub mod store;
mod telemetry;
pub mod tool;

// Not public API. Used by generated code.
#[doc(hidden)]
pub mod __private;

// Not public API. Entry points of the fuzz targets in `fuzz/`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

// The names almost every program uses; everything else has one path, in the module of its
// concept (see STYLE.md).
pub use agent::{Agent, AgentBuilder, AgentEvent, AgentRunConfig, RunOutput, Session};
pub use async_trait::async_trait;
pub use chat::{ChatClient, ChatMessage, ChatResponse, ToolCall};
pub use config::AgentConfig;
pub use error::{BuildError, RunError};
pub use harness::{HarnessBuilder, Tool, ToolHarness};
pub use hpd_agent_macros::{ai_function, collapse, sub_agent, tool_harness};
pub use middleware::Middleware;
pub use providers::scripted::ScriptedChatClient;
pub use tokio_util::sync::CancellationToken;
pub use tool::{FunctionContext, SubAgent, ToolResult};

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
