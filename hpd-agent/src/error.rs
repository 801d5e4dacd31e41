//! Error types: building an agent ([`BuildError`]), running it ([`RunError`]), turning JSON
//! into user types ([`HydrateError`]), and harnesses whose names clash ([`RegistryError`]).

use std::fmt;

use crate::chat::ChatError;

/// Two macro harnesses whose names differ only in case, met by one agent: it uses both, or its
/// config names one of them (which is then ambiguous).
///
/// Other agents of the program are not affected.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, AgentConfig, BuildError, ScriptedChatClient};
/// use hpd_agent::error::RegistryError;
///
/// #[derive(Default)]
/// pub struct Weathervane;
/// #[tool_harness(name = "vane")]
/// impl Weathervane {
///     /// The wind direction.
///     #[ai_function]
///     fn wind(&self) -> String { "west".into() }
/// }
///
/// #[derive(Default)]
/// pub struct OtherVane;
/// #[tool_harness(name = "VANE")]
/// impl OtherVane {
///     /// The wind speed.
///     #[ai_function]
///     fn wind_speed(&self) -> u32 { 3 }
/// }
///
/// // One of them, registered by type: fine.
/// AgentBuilder::new()
///     .with_tool_harness::<Weathervane>()
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// // Both in one agent, or the name in a config: an error naming both types.
/// let both = AgentBuilder::new()
///     .with_tool_harness::<Weathervane>()
///     .with_tool_harness::<OtherVane>()
///     .with_chat_client(ScriptedChatClient::new())
///     .build()
///     .unwrap_err();
/// let by_name = AgentBuilder::from_config(AgentConfig::from_json(r#"{"tool_harnesses": ["vane"]}"#)?)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()
///     .unwrap_err();
/// for error in [both, by_name] {
///     let BuildError::Registry(RegistryError::DuplicateName { .. }) = &error else { panic!("{error}") };
///     assert!(error.to_string().contains("equal case-insensitively"), "{error}");
///     assert!(error.to_string().contains("::OtherVane"), "{error}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two harnesses of different Rust types have names that are equal case-insensitively.
    #[error(
        "harness names '{first_name}' ({first_type}) and '{second_name}' ({second_type}) are equal case-insensitively, so one agent cannot use both or name one in its config; rename one with `name = \"...\"` in its attribute"
    )]
    DuplicateName {
        /// The first harness name.
        first_name: &'static str,
        /// Its Rust type.
        first_type: &'static str,
        /// The second harness name.
        second_name: &'static str,
        /// Its Rust type.
        second_type: &'static str,
    },
}

/// A JSON value that did not deserialize into a user type (a harness config, metadata, a
/// middleware config). Carries the type's name and the JSON path of the offending value.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, AgentConfig, BuildError, ScriptedChatClient};
///
/// #[derive(serde::Deserialize)]
/// pub struct FeedConfig {
///     urls: Vec<String>,
/// }
///
/// pub struct Feeds {
///     urls: Vec<String>,
/// }
///
/// #[tool_harness]
/// impl Feeds {
///     pub fn new(config: FeedConfig) -> Self {
///         Feeds { urls: config.urls }
///     }
///
///     /// The feed URLs.
///     #[ai_function]
///     fn feed_urls(&self) -> Vec<String> { self.urls.clone() }
/// }
///
/// let config = AgentConfig::from_json(r#"{"tool_harnesses": [{"name": "Feeds", "config": {"urls": [1]}}]}"#)?;
/// let error = AgentBuilder::from_config(config).with_chat_client(ScriptedChatClient::new()).build().unwrap_err();
/// let BuildError::Config { source, .. } = &error else { panic!("{error}") };
/// assert_eq!((source.type_name, source.path.as_str()), ("FeedConfig", "urls[0]"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HydrateError {
    /// The Rust type that was being deserialized, e.g. `SearchToolsConfig`.
    pub type_name: &'static str,
    /// The JSON path of the value that failed (`.` for the root, which `Display` leaves out).
    pub path: String,
    /// serde's message.
    pub message: String,
}

impl fmt::Display for HydrateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The root has no path worth showing: `invalid Meta: missing field `x``.
        if self.path == "." {
            write!(f, "invalid {}: {}", self.type_name, self.message)
        } else {
            write!(
                f,
                "invalid {} at '{}': {}",
                self.type_name, self.path, self.message
            )
        }
    }
}

impl std::error::Error for HydrateError {}

/// Why a harness instance could not be created.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::error::ConstructError;
/// use hpd_agent::harness::HarnessInfo;
///
/// #[derive(serde::Deserialize)]
/// pub struct StopwatchConfig {
///     laps: u32,
/// }
///
/// pub struct Stopwatch {
///     laps: u32,
/// }
///
/// #[tool_harness]
/// impl Stopwatch {
///     pub fn new(config: StopwatchConfig) -> Self {
///         Stopwatch { laps: config.laps }
///     }
///
///     /// Starts the stopwatch.
///     #[ai_function]
///     fn start_stopwatch(&self) -> u32 { self.laps }
/// }
///
/// // `functions()` hands the config constructor `{}`, which lacks `laps`.
/// let error = HarnessInfo::of::<Stopwatch>().functions().unwrap_err();
/// assert!(matches!(error, ConstructError::Config { harness: "Stopwatch", .. }), "{error}");
/// assert!(error.to_string().contains("laps"), "{error}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstructError {
    /// A config was given to a harness that has no config constructor.
    #[error("harness '{harness}' takes no config (it has no config constructor)")]
    ConfigNotAccepted {
        /// The harness.
        harness: &'static str,
    },
    /// The config did not deserialize.
    #[error("config of harness '{harness}' is invalid: {source}")]
    Config {
        /// The harness.
        harness: &'static str,
        /// What failed, with the config type and JSON path.
        source: HydrateError,
    },
    /// A `#[sub_agent]` method panicked.
    #[error("the #[sub_agent] method of '{member}' panicked")]
    SubAgentPanicked {
        /// The member name.
        member: &'static str,
    },
}

impl From<ConstructError> for BuildError {
    fn from(error: ConstructError) -> Self {
        match error {
            ConstructError::ConfigNotAccepted { harness } => BuildError::ConfigNotAccepted {
                harness: harness.to_owned(),
            },
            ConstructError::Config { harness, source } => BuildError::Config {
                harness: harness.to_owned(),
                source,
            },
            error @ ConstructError::SubAgentPanicked { .. } => BuildError::Construct(error),
        }
    }
}

/// Why [`AgentBuilder::build`](crate::AgentBuilder::build) (or config parsing) failed.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, BuildError, ScriptedChatClient};
///
/// #[derive(Default)]
/// pub struct Clock;
///
/// #[tool_harness]
/// impl Clock {
///     /// The time.
///     #[ai_function]
///     fn now(&self) -> String { "12:00".into() }
/// }
///
/// let error = AgentBuilder::new()
///     .with_tool_harness_options::<Clock>(|o| o.with_functions(["Clock.now.utc"]))
///     .with_chat_client(ScriptedChatClient::new())
///     .build()
///     .unwrap_err();
/// assert!(matches!(error, BuildError::InvalidReference { .. }));
/// assert_eq!(error.to_string(), "invalid tool reference 'Clock.now.utc': expected 'Harness.function'");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A string tool reference is not `Harness.function`.
    #[error("invalid tool reference '{reference}': expected 'Harness.function'")]
    InvalidReference {
        /// The reference as given.
        reference: String,
    },
    /// `with_tool::<T>` was given a qualified name of another harness.
    #[error("tool reference '{reference}' names harness '{named}', but the type is '{harness}'")]
    WrongHarness {
        /// The reference as given.
        reference: String,
        /// The harness it names.
        named: String,
        /// The harness of the type.
        harness: String,
    },
    /// A function name that the harness does not declare.
    #[error("function '{function}' not found in harness '{harness}'; available: {available}")]
    UnknownFunction {
        /// The name asked for.
        function: String,
        /// The harness.
        harness: String,
        /// Every declared function name, in declaration order, comma-separated.
        available: String,
    },
    /// A harness name that is not in the registry.
    #[error("harness '{harness}' not found; known harnesses: {known}")]
    UnknownHarness {
        /// The name asked for.
        harness: String,
        /// Every registered harness name, sorted, comma-separated.
        known: String,
    },
    /// Two registered tools have the same name.
    #[error("tool name '{name}' is registered twice: by '{first}' and by '{second}'")]
    DuplicateTool {
        /// The tool name.
        name: String,
        /// Who registered it first.
        first: String,
        /// Who registered it again.
        second: String,
    },
    /// A harness or tool name is not a valid tool name (`[A-Za-z0-9_-]{1,64}`).
    #[error("invalid {what} name '{name}': names must match [A-Za-z0-9_-]{{1,64}}")]
    InvalidName {
        /// `harness` or `tool`.
        what: &'static str,
        /// The name as given.
        name: String,
    },
    /// The parameter schema of a tool built at run time is not a JSON object schema.
    #[error("the parameter schema of tool '{tool}' is not a JSON object schema: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A harness built at run time sets an option that only collapsed harnesses have.
    #[error(
        "harness '{harness}' sets {option} but is not collapsed; call collapse(\"...\") or drop {option}"
    )]
    NotCollapsed {
        /// The harness.
        harness: String,
        /// The option (`system_prompt` or `function_result`).
        option: &'static str,
    },
    /// Two different harnesses of one name (case-insensitively) are registered.
    #[error("harness name '{name}' is registered twice: by {first} and by {second}")]
    DuplicateHarness {
        /// The harness name.
        name: String,
        /// What registered it first.
        first: String,
        /// What registered it again.
        second: String,
    },
    /// A config was given to a harness that has no config constructor.
    #[error("harness '{harness}' takes no config (it has no config constructor)")]
    ConfigNotAccepted {
        /// The harness.
        harness: String,
    },
    /// A harness config did not deserialize.
    #[error("config of harness '{harness}' is invalid: {source}")]
    Config {
        /// The harness.
        harness: String,
        /// What failed, with the config type and JSON path.
        source: crate::error::HydrateError,
    },
    /// Metadata was given to a harness that declares no metadata type.
    #[error("harness '{harness}' takes no metadata (it declares no `metadata = Type`)")]
    MetadataNotAccepted {
        /// The harness.
        harness: String,
    },
    /// Metadata did not deserialize.
    #[error("metadata of harness '{harness}' is invalid: {source}")]
    Metadata {
        /// The harness.
        harness: String,
        /// What failed, with the metadata type and JSON path.
        source: crate::error::HydrateError,
    },
    /// A middleware config key names no configurable scoped middleware of the harness.
    #[error("harness '{harness}' has no configurable scoped middleware '{key}'")]
    UnknownMiddlewareConfig {
        /// The harness.
        harness: String,
        /// The key as given.
        key: String,
    },
    /// A scoped middleware config did not deserialize.
    #[error(
        "config of scoped middleware '{middleware}' of harness '{harness}' is invalid: {source}"
    )]
    MiddlewareConfig {
        /// The harness.
        harness: String,
        /// The middleware type name.
        middleware: String,
        /// What failed, with the config type and JSON path.
        source: crate::error::HydrateError,
    },
    /// A sub-agent could not be built.
    #[error("sub-agent '{name}': {source}")]
    SubAgent {
        /// The sub-agent's name.
        name: String,
        /// Why its child agent could not be built.
        source: Box<BuildError>,
    },
    /// A sub-agent's config registers a harness that `parent_functions` also hands to it.
    #[error(
        "harness '{harness}' is registered by the sub-agent's own config and also handed to it through parent_functions; use one or the other"
    )]
    HandedHarnessRegistered {
        /// The harness.
        harness: String,
    },
    /// A sub-agent is handed a function its parent does not register.
    #[error("function '{function}' of harness '{harness}' is not registered for the parent agent")]
    FunctionNotRegistered {
        /// The function.
        function: String,
        /// The harness.
        harness: String,
    },
    /// `max_iterations` is zero.
    #[error("max_iterations must be at least 1")]
    ZeroMaxIterations,
    /// The output schema cannot be used.
    #[error(transparent)]
    OutputSchema(#[from] crate::output::OutputSchemaError),
    /// A field of [`Limits`](crate::config::Limits) is zero.
    #[error("{0} must be at least 1")]
    ZeroLimit(&'static str),
    /// Sub-agents nest deeper than allowed.
    #[error("sub-agents nest deeper than max_depth ({max_depth})")]
    SubAgentDepth {
        /// The limit.
        max_depth: usize,
    },
    /// A harness member could not be created.
    #[error(transparent)]
    Construct(ConstructError),
    /// Two harnesses the agent uses, or one its config names and another linked one, have
    /// names that are equal case-insensitively.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An [`AgentConfig`](crate::AgentConfig) could not be parsed.
    #[error(transparent)]
    ConfigParse(#[from] crate::config::ConfigError),
    /// No chat client was given and none could be created from the config.
    #[error("no chat client: call with_chat_client, with_openai, or name a model in the config")]
    NoChatClient,
    /// The chat client could not be created.
    #[error(transparent)]
    Client(#[from] ChatError),
    /// MCP servers were registered (in the config's `mcp_servers` or in code), but
    /// [`AgentBuilder::build`](crate::AgentBuilder::build) cannot connect them.
    #[error(
        "MCP servers ({servers}) are connected by AgentBuilder::build_async().await, not by build(){hint}"
    )]
    McpNeedsBuildAsync {
        /// The server names, comma-separated.
        servers: String,
        /// `""`, or a note that the `mcp` cargo feature is off.
        hint: &'static str,
    },
    /// An MCP server could not be connected by `build_async`.
    #[error("{message}")]
    McpServer {
        /// The server's harness name.
        server: String,
        /// What went wrong (naming the server).
        message: String,
    },
}

/// Why a run failed. The session keeps its history and can run again.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient, ToolCall};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([
///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "loop", "{}")]),
///     ChatResponse::text("unreached"),
/// ]);
/// let agent = AgentBuilder::new().with_max_iterations(1).with_chat_client(model).build()?;
/// let mut session = agent.session();
/// match session.run("Go").await {
///     Err(RunError::MaxIterations(n)) => assert_eq!(n, 1),
///     other => panic!("{other:?}"),
/// }
/// // Every call was answered, so the history stays valid for the next run.
/// assert_eq!(session.history().len(), 3);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The model kept calling tools for `max_iterations` requests.
    #[error("run stopped: max_iterations ({0}) reached")]
    MaxIterations(usize),
    /// The provider failed.
    #[error(transparent)]
    Chat(#[from] ChatError),
    /// The run was cancelled through its [`CancellationToken`](tokio_util::sync::CancellationToken).
    #[error("run cancelled")]
    Cancelled,
    /// A middleware hook returned an error or panicked.
    #[error("middleware failed in {hook}: {message}")]
    Middleware {
        /// The hook that failed.
        hook: &'static str,
        /// Its error message.
        message: String,
    },
    /// The run configuration is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Tools added for the run could not be registered.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The turn ran but saving the session to its store failed. The turn is kept in memory;
    /// the next run or [`Session::save`](crate::Session::save) saves it again.
    #[error("the turn ran but the session was not saved: {0}")]
    Store(#[from] crate::store::StoreError),
    /// The [`Summarizer`](crate::agent::Summarizer) of the context budget failed; the history is as
    /// it was before the request.
    #[error("the summarizer of the context budget failed: {0}")]
    Summarizer(String),
    /// The final answer of a typed run did not match its schema after every retry, or the
    /// model refused (see [`output`](crate::output)). The history keeps every answer and
    /// every request to correct one.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The output schema of a typed run cannot be used (a hand-written `JsonSchema` impl
    /// that produces an invalid schema).
    #[error(transparent)]
    OutputSchema(#[from] crate::output::OutputSchemaError),
    /// The session is paused for approval (a new message cannot run), or its decisions do not
    /// fit the waiting calls; nothing changed. See [`approval`](crate::approval).
    #[error(transparent)]
    Approval(#[from] crate::approval::ApprovalError),
}
