//! Procedural macros of [`hpd-agent`](https://docs.rs/hpd-agent). Depend on `hpd-agent`, which
//! re-exports them (also through `hpd_agent::prelude`); the code they generate calls
//! `hpd_agent::__private`, so this crate is of no use on its own.
//!
//! | attribute | goes on | makes |
//! |---|---|---|
//! | [`#[tool_harness]`](macro@tool_harness) | an inherent `impl` block | a plain harness: every function is a tool |
//! | [`#[collapse("...")]`](macro@collapse) | an inherent `impl` block | a collapsed harness: one container tool until the model calls it |
//! | [`#[ai_function]`](macro@ai_function) | a method of such a block | a model-callable function |
//! | `#[ai_description("...")]` | a parameter of an `#[ai_function]` | the parameter's description in the JSON schema |
//! | [`#[sub_agent]`](macro@sub_agent) | a method of such a block returning a `SubAgent` | a sub-agent member of the harness |
//!
//! `#[ai_description]` is not a macro of its own: the impl macros read it from the parameters
//! and remove it, so it needs no import.
//!
//! Layout of the implementation: `args` parses attribute arguments, `ast` is a typed view of
//! the impl block, `valid` checks it, `expand` writes the code and `fallback` what is emitted
//! when the input is wrong. Everything below this file works on `proc_macro2` so the expansion
//! snapshot tests of `hpd-agent-tests` can include these modules with `#[path]` and call them
//! directly.

use proc_macro::TokenStream;

mod args;
mod ast;
mod errors;
mod expand;
mod fallback;
mod user_item;
mod valid;

/// Marks a plain tool harness: the impl block's `#[ai_function]` methods become tools the
/// model always sees.
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct WeatherTools;
///
/// #[tool_harness]
/// impl WeatherTools {
///     /// Gets the current weather for a city.
///     #[ai_function]
///     fn get_weather(&self, #[ai_description("The city to look up.")] city: String) -> String {
///         format!("It is sunny in {city}.")
///     }
///
///     /// Not a tool: methods without `#[ai_function]` stay ordinary methods.
///     fn helper(&self) -> u8 {
///         1
///     }
/// }
///
/// let info = hpd_agent::harness::HarnessInfo::of::<WeatherTools>();
/// assert_eq!(info.name(), "WeatherTools");
/// assert!(!info.is_collapsed());
/// let functions = info.functions()?;
/// assert_eq!(functions[0].name(), "get_weather");
/// assert_eq!(functions[0].description(), "Gets the current weather for a city.");
/// # Ok::<(), hpd_agent::error::ConstructError>(())
/// ```
///
/// Goes on an inherent impl block of a non-generic named type that is `Send + Sync + 'static`,
/// without a `where` clause; one type has at most one annotated impl block. The macro owns the
/// block: it reads and removes the `#[ai_function(...)]` and `#[sub_agent(...)]` attributes of
/// its methods and the `#[ai_description("...")]` attributes of their parameters, implements
/// `hpd_agent::ToolHarness` for the type, which `AgentBuilder::with_tool_harness::<T>()` uses, and
/// registers it in the link-time registry, where JSON config finds it by name.
///
/// # Options
///
/// | option | type | default | meaning |
/// |---|---|---|---|
/// | `name` | string literal | the type's name as written (`WeatherTools`) | the harness name: JSON config, `Harness.function` references, qualified calls and events use it; must match `[A-Za-z0-9_-]{1,64}` |
/// | `metadata` | a type | none | the metadata type (`serde::de::DeserializeOwned + Send + Sync + 'static`) that `condition`s and `{metadata.field}` placeholders read; given at registration with `HarnessOptions::with_metadata` or JSON `"metadata"` |
/// | `crate` | string literal | `"::hpd_agent"` | the path of the hpd-agent crate in the generated code, for a crate that renames the dependency (`agents = { package = "hpd-agent", ... }` in `Cargo.toml` takes `crate = "agents"`) or re-exports it (`crate = "my_framework::hpd"`) |
///
/// ```
/// # use hpd_agent::prelude::*;
/// # #[derive(Default)] pub struct Forecasts;
/// #[tool_harness(name = "weather")]
/// impl Forecasts {
///     /// Gets the current weather for a city.
///     #[ai_function]
///     fn current(&self, city: String) -> String {
///         format!("sunny in {city}")
///     }
/// }
/// assert_eq!(hpd_agent::harness::HarnessInfo::of::<Forecasts>().name(), "weather");
/// ```
///
/// # `#[ai_function]` methods
///
/// Options and the rules for parameters and return values are in [`ai_function`]; in short:
/// methods are `fn` or `async fn` taking `&self` (the future must be `Send`), parameters are
/// owned `serde::Deserialize + schemars::JsonSchema` types, and the return value becomes the
/// result text (`Result<T, E>` sends `Err(e)` as an error result).
///
/// # Description placeholders
///
/// `{metadata.field}` (or `{metadata.a.b}`) in a description is rendered with `Display` from the
/// metadata given at registration; without metadata it renders as empty text, and a field the
/// metadata type lacks is a compile error at the description. In `description = "..."` write
/// `{{` and `}}` for literal braces; every other `{...}` is an error. Doc comments are also read
/// by rustdoc, where doubled braces would look wrong, so in a doc comment only `{metadata.…}` is
/// special and other braces are kept as written.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// #[derive(serde::Deserialize)]
/// pub struct SearchMetadata {
///     provider: String,
///     beta: bool,
/// }
///
/// #[derive(Default)]
/// pub struct Search;
///
/// #[tool_harness(metadata = SearchMetadata)]
/// impl Search {
///     #[ai_function(description = "Searches the web with {metadata.provider}.")]
///     fn search(&self, query: String) -> String {
///         format!("results for {query}")
///     }
///
///     /// Searches only the beta index.
///     #[ai_function(condition = metadata.beta)]
///     fn beta_search(&self, query: String) -> String {
///         format!("beta results for {query}")
///     }
/// }
///
/// let agent = AgentBuilder::new()
///     .with_tool_harness_options::<Search>(|o| {
///         o.with_metadata(SearchMetadata { provider: "Tavily".into(), beta: false })
///     })
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// // `beta_search` is left out: its condition is false for this metadata.
/// assert_eq!(agent.initial_tool_names(), ["search"]);
/// let tools = agent.tool_session().visible_tools();
/// assert_eq!(tools[0].description, "Searches the web with Tavily.");
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
///
/// # Construction
///
/// The registry creates the harness, in this order of preference, with:
///
/// 1. an associated `fn new(config: C) -> Self` in the annotated block (a *config
///    constructor*): `C: serde::de::DeserializeOwned` is parsed from the registration's config
///    (JSON `"config"`, `HarnessOptions::config`), from `{}` when none is given;
/// 2. else an associated `fn new() -> Self` in the block;
/// 3. else `Default`.
///
/// A pre-built instance can always be registered instead
/// (`HarnessOptions::with_instance`).
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentConfig, AgentBuilder, ScriptedChatClient};
///
/// #[derive(serde::Deserialize)]
/// pub struct CounterConfig {
///     #[serde(default)]
///     start: u32,
/// }
///
/// pub struct StartValue {
///     start: u32,
/// }
///
/// #[tool_harness]
/// impl StartValue {
///     pub fn new(config: CounterConfig) -> Self {
///         StartValue { start: config.start }
///     }
///
///     /// The starting value.
///     #[ai_function]
///     fn start(&self) -> u32 {
///         self.start
///     }
/// }
///
/// let config = AgentConfig::from_json(
///     r#"{"tool_harnesses": [{"name": "StartValue", "config": {"start": 7}}]}"#,
/// )?;
/// let agent = AgentBuilder::from_config(config)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// assert_eq!(agent.harness_names(), ["StartValue"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Compile errors for common mistakes
///
/// Every mistake in an attribute is reported at its place, and one attribute with several
/// mistakes reports each of them. Some of the messages:
///
/// | mistake | message |
/// |---|---|
/// | a misspelt option, `#[tool_harness(nmae = "x")]` | ``unknown `tool_harness` option `nmae`; expected one of `name`, `metadata`, `crate` `` |
/// | a collapsed harness option on a plain one | ``` `system_prompt` is an option of collapsed harnesses; write `#[collapse("description", system_prompt = ...)]`, or remove it ``` |
/// | a description, `#[tool_harness("Math")]` | ``` `#[tool_harness]` takes no description; for a collapsed harness write `#[collapse("...")]` instead ``` |
/// | on a struct or fn | ``` `#[tool_harness]` goes on an impl block of the harness type, like `#[tool_harness] impl MyTools { ... }` ``` |
/// | on a trait impl | ``` `#[tool_harness]` goes on an inherent impl block like `impl MyTools { ... }`, not on a trait impl; ... ``` |
/// | on a generic impl or one with `where` | ``` `#[tool_harness]` cannot go on a generic impl block; ... ``` |
/// | `&mut self`, `self` or no receiver | ``` `#[ai_function]` methods take `&self`, not `&mut self`: calls share the harness and may run concurrently; ... ``` |
/// | a borrowed parameter, `city: &str` | ``` `#[ai_function]` parameters are deserialized from the model's JSON arguments, so they must be owned; use `String` instead of `&str`, ... ``` |
/// | a name with other characters, `name = "get.weather"` | ``invalid function name `get.weather`: only ASCII letters, digits, `_` and `-` are allowed ...`` |
/// | two functions of one name | ``duplicate function name `search` in harness `Tools`; give one of them another name with `#[ai_function(name = "...")]` `` |
/// | `condition` or a placeholder without `metadata = ...` | ``` `condition` reads the harness metadata, but `Tools` declares no metadata type; add `metadata = YourMetadata` to `#[tool_harness(...)]` ``` |
/// | no way to construct the harness | ``the registry cannot construct tool harness `Tools` `` (with a note: derive `Default`, or add `fn new() -> Self` or `fn new(config: C) -> Self`) |
/// | a parameter type without `JsonSchema` | ``the trait bound `Query: hpd_agent::__private::schemars::JsonSchema` is not satisfied`` |
/// | a state type that is not `Sync` | `` `Cell<u32>` cannot be shared between threads safely `` |
/// | `#[ai_function]` in a block without the impl macro | ``` `#[ai_function]` only works on a method of an impl block annotated with `#[tool_harness]` or `#[collapse("...")]`; ... ``` |
///
/// ```compile_fail
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Notes;
///
/// #[tool_harness]
/// impl Notes {
///     /// Adds a note.
///     #[ai_function]
///     fn add(&mut self, text: String) {} // `&mut self`: keep state behind a `Mutex` instead
/// }
/// ```
///
/// # What it generates
///
/// A sketch of the expansion (`cargo expand` shows it in full; the snapshot tests of the
/// repository's `hpd-agent-tests` crate pin it). For
///
/// ```ignore
/// #[tool_harness]
/// impl WeatherTools {
///     /// Gets the current weather for a city.
///     #[ai_function(timeout_ms = 5000)]
///     fn get_weather(&self, #[ai_description("The city.")] city: String) -> String { ... }
/// }
/// ```
///
/// the macro emits (`ignore`d: the items it uses are in the hidden `hpd_agent::__private`):
///
/// ```ignore
/// impl WeatherTools {
///     /// Gets the current weather for a city.
///     #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
///     fn get_weather(&self, city: String) -> String { ... } // helper attributes removed
/// }
///
/// const _: () = {
///     use ::hpd_agent::__private as __hpd;
///     // One arguments struct per function: its schema is the tool's parameters.
///     #[derive(Deserialize, JsonSchema)]
///     struct __HpdArgs0 {
///         #[schemars(description = "The city.")]
///         city: String,
///     }
///     // The output schema: the return type's schema when it is `Serialize + JsonSchema` and
///     // describes an object, else `None`.
///     fn __hpd_output_schema0() -> Option<Value> { ... }
///     // Parses the arguments, calls the method, turns its value into the result: a whole
///     // result for an `IntoToolResult` type, else its text (and, for a `JsonSchema` type that
///     // serializes to an object, the value as the structured result). Its outcome is
///     // `Result<ToolResult, FunctionFailure>` from here to the model: finished at once for a
///     // synchronous method or arguments that do not parse, a future for an `async` one.
///     fn __hpd_invoke(instance: &HarnessObject, index: usize, arguments: &str, call: &CallParts<'_>)
///         -> Started { ... }
///     static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
///         name: "WeatherTools",
///         functions: &[__hpd::FunctionSpec {
///             name: "get_weather",
///             description: "Gets the current weather for a city.",
///             timeout_ms: Some(5000),
///             requires_approval: false,
///             // `.with_read_only(true)` and so on for each of `read_only`, `destructive`,
///             // `idempotent`, `open_world` written
///             annotations: __hpd::ToolAnnotations::new(),
///             schema: __hpd_schema0,
///             output_schema: __hpd_output_schema0,
///             sub_agent: None,
///         }],
///         collapse: None, // Some(CollapseSpec { .. }) for #[collapse]
///         constructor: __hpd::ConstructorSpec::Plain(..), // Config { .. } for `fn new(config: C)`
///         metadata: None,
///         scoped_middlewares: &[],
///         invoke: __hpd_invoke,
///         ..
///     };
///     impl __hpd::ToolHarness for WeatherTools {
///         type Metadata = __hpd::Never; // the `metadata` type when given
///         type Config = __hpd::Never;   // `C` of a config constructor
///         fn from_config(config: Self::Config) -> Self { match config {} }
///         // Hidden: only the macros can name `Seal`, so only they implement the trait.
///         fn __harness_info(_: __hpd::Seal) -> &'static __hpd::HarnessInfo { &__HPD_INFO }
///     }
///     // What `HarnessInfo::of::<WeatherTools>()` returns and the registry lists.
///     static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);
///     __hpd::inventory::submit! { __hpd::HarnessRegistration(&__HPD_INFO) }
/// };
/// ```
///
/// Generated items live in the anonymous `const _: () = { ... };` with the lint allowances
/// they need. Because the macro requires `&self` and owned parameters, annotated methods get
/// `#[allow(clippy::unused_self, clippy::needless_pass_by_value)]`, and a config constructor
/// `#[allow(clippy::needless_pass_by_value)]`.
#[proc_macro_attribute]
pub fn tool_harness(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Plain, args.into(), input.into()).into()
}

/// Marks a collapsed tool harness, hidden behind one container tool until the model calls it.
///
/// The model first sees one tool named after the harness, described as
/// `{description} (functions: f1, f2, ...)` with no parameters. Calling it expands the
/// container: in the default `fixed` layout its result carries the functions' names,
/// descriptions and parameter schemas, its `function_result` and its `system_prompt`, and the
/// model calls the functions through the call tool `call_function` (in the `hide` layout they
/// replace the container in the tool list from the next request on, and the `system_prompt`
/// joins the system text); its scoped middleware guards its calls; at the end of the turn it
/// collapses again.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall};
///
/// #[derive(Default)]
/// pub struct MathTools;
///
/// #[collapse(
///     "Math operations",
///     system_prompt = "Use exact arithmetic.",
///     function_result = "Math tools are active."
/// )]
/// impl MathTools {
///     /// Adds two integers.
///     #[ai_function]
///     fn add(&self, a: i64, b: i64) -> i64 {
///         a + b
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([
///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "MathTools", "{}")]),
///     ChatResponse::text("Ready."),
/// ]);
/// let agent = AgentBuilder::new().with_tool_harness::<MathTools>().with_chat_client(model.clone()).build()?;
/// agent.run("Get ready to add.").await?;
///
/// let requests = model.requests();
/// assert_eq!(requests[0].tool_names(), ["MathTools", "call_function"]);
/// assert_eq!(requests[0].tools[0].description, "Math operations (functions: add)");
/// // The container's answer comes back in a note in the user's turn (the default
/// // `container_notes`; with it off, as the result of the call `c1`).
/// let Some(ChatMessage::User { content: note }) = requests[1].messages.last() else {
///     panic!("a note ends the second request");
/// };
/// let (_, result) = note.split_once("call them: MathTools.\n\n").unwrap();
/// // The note has named the container, and each schema line names a member: the answer
/// // starts with how to call them.
/// assert!(result.starts_with("MathTools: call its functions through call_function"));
/// assert!(result.contains(r#"{"name":"add","description":"Adds two integers.""#));
/// assert!(result.contains("Math tools are active."));
/// assert!(result.contains("Use exact arithmetic."));
/// // The tool list does not change, so the provider's prompt cache keeps the whole request.
/// assert_eq!(requests[1].tool_names(), ["MathTools", "call_function"]);
/// # Ok(())
/// # }
/// ```
///
/// # Options
///
/// The container description comes first; the options follow in any order.
///
/// | option | type | default | meaning |
/// |---|---|---|---|
/// | (first argument) | string literal | required | the container's description |
/// | `name` | string literal | the type's name | the harness and container tool name, as for [`tool_harness`] |
/// | `metadata` | a type | none | as for [`tool_harness`] |
/// | `function_result` | string literal | none | appended (after a blank line) to the result of the container call, `{Name} expanded. Available functions: ...` |
/// | `system_prompt` | string literal | none | under `## Active container instructions`, carried by the result of the call that expanded the container (in the `hide` layout: added to the system text while the container is expanded) |
/// | `middlewares` | `[Type, path::Type, ...]` | `[]` | scoped middleware: guards only this harness's functions, created afresh at each expansion |
/// | `crate` | string literal | `"::hpd_agent"` | as for [`tool_harness`] |
///
/// Each type in `middlewares` is created from its config when it implements
/// `hpd_agent::middleware::ConfigurableMiddleware` (the config comes from the registration's
/// `middleware_configs`, keyed by the last segment of the path as written, or `HarnessOptions::
/// middleware_config`), else with `Default`.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::Middleware;
/// use hpd_agent::middleware::ConfigurableMiddleware;
///
/// #[derive(Default)]
/// pub struct Quiet;
/// impl Middleware for Quiet {}
///
/// #[derive(serde::Deserialize)]
/// pub struct AuditConfig {
///     #[serde(default)]
///     verbose: bool, // `{}` is parsed when the registration gives no config
/// }
///
/// pub struct Audit {
///     verbose: bool,
/// }
/// impl Middleware for Audit {}
/// impl ConfigurableMiddleware for Audit {
///     type Config = AuditConfig;
///     fn from_config(config: AuditConfig) -> Self {
///         Audit { verbose: config.verbose }
///     }
/// }
///
/// #[derive(Default)]
/// pub struct Db;
///
/// #[collapse("Database access", name = "db", middlewares = [Quiet, Audit])]
/// impl Db {
///     /// Runs a read-only query.
///     #[ai_function]
///     fn query(&self, sql: String) -> String {
///         format!("0 rows for {sql}")
///     }
/// }
///
/// let info = hpd_agent::harness::HarnessInfo::of::<Db>();
/// assert_eq!(info.name(), "db");
/// assert!(info.is_collapsed());
/// ```
///
/// Everything else (functions, placeholders, construction, the generated code) is as for
/// [`tool_harness`]; the registry entry carries `collapse: Some(CollapseSpec { description,
/// function_result, system_prompt })` and one scoped middleware spec per `middlewares` entry.
///
/// # Compile errors for common mistakes
///
/// | mistake | message |
/// |---|---|
/// | no description, `#[collapse(name = "x")]` | ``` `#[collapse]` needs the container description as its first argument, like `#[collapse("Math operations")]` ``` |
/// | no comma after it, `#[collapse("Math" name = "m")]` | ``expected `,` between the description and the options`` |
/// | `middlewares = Audit` | ``` `middlewares` takes a list of middleware types, like `middlewares = [AuditMiddleware]` ``` |
/// | a middleware without `Default` or `ConfigurableMiddleware` | ``scoped middleware `Audit` cannot be constructed`` |
/// | an option given twice | ``duplicate `collapse` option `name`; remove one of them`` |
///
/// ```compile_fail
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Math;
///
/// #[collapse(system_prompt = "Be exact.")] // the description is missing
/// impl Math {
///     /// Adds.
///     #[ai_function]
///     fn add(&self, a: i64, b: i64) -> i64 { a + b }
/// }
/// ```
#[proc_macro_attribute]
pub fn collapse(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Collapse, args.into(), input.into()).into()
}

/// Marks a method of a `#[tool_harness]` or `#[collapse]` impl block that returns the
/// `hpd_agent::SubAgent` it declares, making the sub-agent a member of the harness.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
///
/// #[derive(Default)]
/// pub struct Research;
///
/// #[collapse("Research helpers")]
/// impl Research {
///     /// Looks a term up.
///     #[ai_function]
///     fn define(&self, term: String) -> String {
///         format!("{term}: a word")
///     }
///
///     #[sub_agent(name = "researcher")]
///     fn research(&self) -> SubAgent {
///         SubAgent::new("ignored", "Researches a question in depth.", AgentConfig::default())
///     }
/// }
///
/// let agent = AgentBuilder::new()
///     .with_tool_harness::<Research>()
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// // A member like a function: listed by the container, visible once it expands.
/// assert_eq!(agent.initial_tool_names(), ["Research", "call_function"]);
/// let session = agent.tool_session();
/// assert!(session.visible_tools()[0].description.ends_with("(functions: define, researcher)"));
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
///
/// # Options
///
/// | option | type | default | meaning |
/// |---|---|---|---|
/// | `name` | string literal | the method's name | the tool name; must match `[A-Za-z0-9_-]{1,64}` (the name given to `SubAgent::new` is not used) |
///
/// The method takes only `&self` and is not `async`; the agent calls it once when it is built.
/// The tool has one required `input` string parameter and is described by the `SubAgent`'s
/// description. The impl macro reads and removes the attribute; the registry entry lists the
/// member as a `FunctionSpec` whose `sub_agent` field calls the method.
///
/// # Compile errors for common mistakes
///
/// | mistake | message |
/// |---|---|
/// | outside an annotated impl block | ``` `#[sub_agent]` only works on a method of an impl block annotated with `#[tool_harness]` or `#[collapse("...")]`; add one of them to the impl block, or register the sub-agent with `AgentBuilder::with_sub_agent` ``` |
/// | `async fn` | ``` `#[sub_agent]` methods cannot be `async`; the agent calls them once when it is built, so return the `SubAgent` directly ``` |
/// | parameters besides `&self` | ``` `#[sub_agent]` methods take only `&self`; the model's input reaches the sub-agent as its `input` argument ``` |
/// | no return type | ``` `#[sub_agent]` method `helper` returns nothing; return the `hpd_agent::SubAgent` that runs the child agent ``` |
/// | also `#[ai_function]` | ``a method is either an `#[ai_function]` or a `#[sub_agent]`, not both; ...`` |
/// | another option | ``unknown `sub_agent` option `description`; expected one of `name` `` |
///
/// ```compile_fail
/// use hpd_agent::prelude::*;
/// use hpd_agent::AgentConfig;
///
/// pub struct Lonely;
///
/// impl Lonely {
///     #[sub_agent] // no #[tool_harness] or #[collapse] on the impl block
///     fn helper(&self) -> SubAgent {
///         SubAgent::new("helper", "Helps.", AgentConfig::default())
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn sub_agent(args: TokenStream, input: TokenStream) -> TokenStream {
    fallback::sub_agent_outside_harness(args.into(), input.into()).into()
}

/// Marks a model-callable method of a `#[tool_harness]` or `#[collapse]` impl block. The impl
/// macro reads and removes it; on its own it is a compile error.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Tally {
///     total: AtomicU64, // calls share `&self`: keep state in atomics or a `Mutex`
/// }
///
/// #[tool_harness]
/// impl Tally {
///     /// Adds `n` to the total and returns the new total.
///     #[ai_function]
///     fn add(&self, #[ai_description("How much to add.")] n: u64) -> u64 {
///         self.total.fetch_add(n, Ordering::SeqCst) + n
///     }
///
///     #[ai_function(name = "reset", description = "Sets the total to zero.", timeout_ms = 1000)]
///     async fn clear(&self, ctx: &FunctionContext) -> Result<String, String> {
///         if ctx.is_cancelled() {
///             return Err("cancelled".to_owned());
///         }
///         self.total.store(0, Ordering::SeqCst);
///         Ok("done".to_owned())
///     }
/// }
///
/// let functions = hpd_agent::harness::HarnessInfo::of::<Tally>().functions()?;
/// assert_eq!(functions[0].name(), "add");
/// assert_eq!(functions[1].name(), "reset");
/// assert_eq!(functions[1].timeout(), Some(std::time::Duration::from_millis(1000)));
/// let schema = functions[0].schema();
/// assert_eq!(schema["required"], serde_json::json!(["n"]));
/// assert_eq!(schema["properties"]["n"]["description"], "How much to add.");
/// # Ok::<(), hpd_agent::error::ConstructError>(())
/// ```
///
/// # Options
///
/// | option | type | default | meaning |
/// |---|---|---|---|
/// | `name` | string literal | the method's name (`r#type` gives `type`) | the tool name; must match `[A-Za-z0-9_-]{1,64}` and be unique in the harness |
/// | `description` | string literal | the doc comment: lines trimmed and joined with `\n`, blank lines at both ends removed; empty without one | what the model reads; may hold `{metadata.field}` placeholders (see [`tool_harness`]) |
/// | `condition` | a `bool` expression over `metadata: &Metadata` | always true | the function exists only for metadata where it holds; true when no metadata is given at registration; needs `metadata = ...` on the impl attribute |
/// | `timeout_ms` | integer ≥ 1 | no timeout | a call running longer fails with `Error: function '{name}' timed out after {ms} ms` |
/// | `requires_approval` | alone, or `= true` / `= false` | `false` | every call waits for a person's approval: the run pauses before it runs and `Session::decide` resumes it (see `hpd_agent::approval`); middleware may still decide per call |
/// | `read_only` | alone, or `= true` / `= false` | not said | the function changes nothing in its environment (MCP's `readOnlyHint`) |
/// | `destructive` | alone, or `= true` / `= false` | not said | its changes may destroy or overwrite what was there; `false`: it only adds (`destructiveHint`); not with `read_only` |
/// | `idempotent` | alone, or `= true` / `= false` | not said | a second call with the same arguments changes nothing more (`idempotentHint`) |
/// | `open_world` | alone, or `= true` / `= false` | not said | it reaches outside entities, as a web search does (`openWorldHint`) |
///
/// The last four are the function's `ToolAnnotations` (`hpd_agent::chat`), hints that never
/// decide what runs: an MCP server advertises them as the tool's `annotations`, and a collapsed
/// harness's hints leave a function that changes things (`read_only = false`, or
/// `destructive` alone) out for a request that asks for no change while another fits it.
///
/// # Methods
///
/// `fn` or `async fn` taking `&self`; not `unsafe`, not `extern`, no type or const
/// parameters. The harness is shared by concurrent calls, so an `async fn`'s future must be
/// `Send`. Synchronous bodies run on the async executor: long blocking work belongs in
/// `tokio::task::spawn_blocking`.
///
/// # Parameters
///
/// Parameters become the fields of a generated arguments struct, whose JSON schema is the
/// tool's parameter schema. So their types implement `serde::Deserialize` and
/// `schemars::JsonSchema` and are owned (`String`, not `&str`); `Option<T>` parameters are not
/// required, and `#[serde(...)]` / `#[schemars(...)]` attributes on a parameter are moved to
/// its field. `#[ai_description("...")]` (or `#[ai_description = "..."]`) on a parameter
/// describes it in the schema. Fields the model sends that match no parameter are ignored.
///
/// A parameter whose type ends in `FunctionContext` (written `&FunctionContext` or
/// `FunctionContext`) or `CancellationToken` (by value) is supplied by the runtime and left out
/// of the schema.
///
/// # Return values
///
/// The value becomes the result text: a JSON string without its quotes, `()` and `None` as the
/// empty string, anything else (`serde::Serialize`) as compact JSON. A return type written
/// `Result<T, E>` (any path ending in `Result`, `E: Display`) sends `Err(e)` as an error result,
/// `Error: {e}`; a type alias that hides `Result` is not recognised and is sent as a value. A
/// panic becomes the error result `Error: function '{name}' panicked`.
///
/// # Compile errors for common mistakes
///
/// | mistake | message |
/// |---|---|
/// | `#[ai_function(descripton = "...")]` | ``unknown `ai_function` option `descripton`; expected one of `name`, `description`, `condition`, `timeout_ms`, `requires_approval` `` |
/// | `requires_approval = "yes"` | ``` `requires_approval` takes `true` or `false`; write `requires_approval` alone to require approval ``` |
/// | `name = search` | ``` `name` takes a string literal, like `name = "search"` ``` |
/// | `timeout_ms = "5s"` / `timeout_ms = 0` | ``` `timeout_ms` takes a whole number of milliseconds, like `timeout_ms = 5000` ``` / ``` `timeout_ms` must be at least 1; remove it for no timeout ``` |
/// | two `#[ai_function]` on one method | ``duplicate `#[ai_function]`; put every option in one attribute`` |
/// | `#[ai_description]` on a runtime parameter | ``this parameter is supplied by the runtime and is not in the schema; remove `#[ai_description]` `` |
/// | `token: &CancellationToken` | ``the runtime hands a `CancellationToken` by value (it is a cheap handle); write `token: CancellationToken` `` |
/// | `unsafe fn` | ``` `#[ai_function]` methods cannot be `unsafe`; the model calls them with arbitrary arguments ``` |
/// | a placeholder other than `{metadata.…}` in `description = "..."` | ``invalid placeholder `{count}` in the description; write `{metadata.field}` to insert a metadata field, or `{{` and `}}` for literal braces`` |
/// | outside an annotated impl block | ``` `#[ai_function]` only works on a method of an impl block annotated with `#[tool_harness]` or `#[collapse("...")]`; add one of them to the impl block ``` |
///
/// The receiver, naming and construction errors are listed at [`tool_harness`].
///
/// ```compile_fail
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Lookup;
///
/// #[tool_harness]
/// impl Lookup {
///     /// Finds a word.
///     #[ai_function]
///     fn find(&self, word: &str) -> String { word.to_owned() } // must be `String`
/// }
/// ```
///
/// # What it generates
///
/// Nothing of its own: the impl macro turns each `#[ai_function]` into an arguments struct, an
/// arm of the harness's call dispatcher and a `FunctionSpec` of its registry entry (see the
/// sketch at [`tool_harness`]), and leaves the method as written, without the attributes.
#[proc_macro_attribute]
pub fn ai_function(args: TokenStream, input: TokenStream) -> TokenStream {
    fallback::ai_function_outside_harness(args.into(), input.into()).into()
}
