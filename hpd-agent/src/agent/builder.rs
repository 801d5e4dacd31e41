//! [`AgentBuilder`]: registering harnesses, middleware and a chat client, in code or from an
//! [`AgentConfig`].

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::chat::{ChatClient, ModelOptions};
use crate::collapse::{LiveToolset, Part, Toolset};
use crate::config::{
    AgentConfig, CollapsingConfig, Limits, McpServerConfig, ModelConfig, ToolHarnessReference,
};
use crate::error::BuildError;
use crate::harness::{DynamicHarness, ToolHarness};
use crate::middleware::Middleware;
use crate::output::OutputSchema;
use crate::tool::catalog::Single;
use crate::tool::{Function, SubAgent};

use super::budget::{ApproxTokens, Budgeting, Summarizer, TokenEstimator};
use super::registration::{
    HarnessOptions, Registration, Registrations, ResolvedHarness, Selection, resolve,
    split_reference,
};
use super::sub_agent;
use super::{Agent, AgentInner, DEFAULT_MAX_ITERATIONS};
use crate::config::ContextBudget;
use crate::events::{AgentEvent, EventHandler};

/// Builds an [`Agent`].
///
/// Registration methods can be called in any order and merge per harness: a harness keeps the
/// position of its first registration, registering it whole wins over selecting functions,
/// selections are united, and later metadata, config or instance replace earlier ones. Every
/// mistake (unknown harness or function, bad config, duplicate tool name) is reported by
/// [`build`](Self::build).
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
///
/// #[derive(Default)]
/// struct Weather;
///
/// #[tool_harness]
/// impl Weather {
///     /// Gets the current weather for a city.
///     #[ai_function]
///     fn get_weather(&self, city: String) -> String { format!("It is sunny in {city}.") }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let client = ScriptedChatClient::with_replies([ChatResponse::text("Hello!")]);
/// let agent = AgentBuilder::new()
///     .with_instructions("Be brief.")
///     .with_tool_harness::<Weather>()
///     .with_chat_client(client)
///     .build()?;
/// let output = agent.run("hi").await?;
/// assert_eq!(output.text, "Hello!");
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
#[must_use]
pub struct AgentBuilder {
    name: String,
    instructions: String,
    max_iterations: Option<usize>,
    collapsing: CollapsingConfig,
    limits: Limits,
    model: Option<ModelConfig>,
    model_options: ModelOptions,
    registrations: Registrations,
    middleware: Vec<Arc<dyn Middleware>>,
    client: Option<Arc<dyn ChatClient>>,
    handlers: Vec<EventHandler>,
    /// Sub-agents, each with the number of harnesses registered before it.
    sub_agents: Vec<(usize, SubAgent)>,
    /// 0 for a top-level agent; the nesting level of a sub-agent's child.
    depth: usize,
    errors: Vec<BuildError>,
    /// MCP servers of the config, connected by `build_async` (cargo feature `mcp`).
    mcp_servers: Vec<McpServerConfig>,
    /// Tool sources registered in code that need connecting first (MCP servers), in order.
    pending: Vec<PendingSource>,
    /// The context budget, its token estimator and summarizer.
    budget: Option<ContextBudget>,
    estimator: Option<Arc<dyn TokenEstimator>>,
    summarizer: Option<Arc<dyn Summarizer>>,
    /// The schema every run's final answer must match, and the retries.
    output: Option<OutputSchema>,
    output_retries: Option<usize>,
    /// Whether spans record content; `None`: as the environment says.
    trace_content: Option<bool>,
    /// Who answers its functions' asks; sampling defaults to the agent's model.
    asks: crate::tool::Handlers,
}

/// Connects a tool source, given the tool and harness names the agent already uses, into the
/// harness to register.
pub(crate) type Connect =
    Box<dyn FnOnce(Vec<String>) -> BoxFuture<'static, Result<DynamicHarness, BuildError>> + Send>;

/// A tool source that `build_async` connects before building.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct PendingSource {
    /// Its harness name, for messages.
    pub(crate) name: String,
    pub(crate) connect: Connect,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("name", &self.name)
            .field("instructions", &self.instructions)
            .field("collapsing", &self.collapsing)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// An empty builder.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, BuildError, ScriptedChatClient};
    ///
    /// // Everything is optional except the chat client.
    /// assert!(matches!(AgentBuilder::new().build(), Err(BuildError::NoChatClient)));
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert!(agent.harness_names().is_empty());
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder that starts from a config: name, instructions, model (and its `options`), `max_iterations`,
    /// collapsing settings and harness references. Builder calls made afterwards merge with it.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
    ///
    /// let config = AgentConfig::from_json(r#"{"name": "planner", "instructions": "Plan.", "max_iterations": 4}"#)?;
    /// let agent = AgentBuilder::from_config(config)
    ///     .with_chat_client(ScriptedChatClient::new()) // builder calls merge with the config
    ///     .build()?;
    /// assert_eq!(agent.name(), "planner");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_config(config: AgentConfig) -> Self {
        let mut builder = AgentBuilder::new();
        builder.name = config.name.unwrap_or_default();
        builder.instructions = config.instructions.unwrap_or_default();
        builder.max_iterations = config.max_iterations;
        builder.collapsing = config.collapsing;
        builder.limits = config.limits;
        builder.budget = config.context_budget;
        if let Some(options) = config.model.as_ref().and_then(|m| m.options.clone()) {
            builder.model_options = options;
        }
        builder.model = config.model;
        for reference in &config.tool_harnesses {
            builder
                .registrations
                .add_config(Registration::from_reference(reference));
        }
        let position = builder.registrations.len();
        builder.sub_agents = config
            .sub_agents
            .iter()
            .map(|s| (position, SubAgent::from_config(s)))
            .collect();
        builder.mcp_servers = config.mcp_servers;
        if let Some(output) = &config.output_schema {
            match output.to_schema() {
                Ok(schema) => builder.output = Some(schema),
                Err(e) => builder.errors.push(BuildError::OutputSchema(e)),
            }
            builder.output_retries = output.retries;
        }
        builder
    }

    /// The schema every run's final answer must match (see [`output`](crate::output)): each
    /// request carries it in the provider's structured output field, the answer is checked
    /// against it, and [`RunOutput::value`](crate::RunOutput::value) carries the checked JSON.
    /// A run's own schema ([`AgentRunConfig::with_output_schema`](crate::AgentRunConfig::with_output_schema),
    /// [`Session::run_typed`](crate::Session::run_typed)) replaces it for that run. JSON
    /// config: `output_schema`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let schema = OutputSchema::new("sentiment", json!({"enum": ["positive", "neutral", "negative"]}))?;
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text(r#"{"value": "positive"}"#)]);
    /// let agent = AgentBuilder::new().with_output_schema(schema).with_chat_client(model).build()?;
    /// let output = agent.run("I love it!").await?;
    /// assert_eq!(output.value, Some(json!("positive")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_output_schema(mut self, schema: OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// How many times a run sends a mismatching final answer back to the model (default
    /// [`DEFAULT_OUTPUT_RETRIES`](crate::output::DEFAULT_OUTPUT_RETRIES)); JSON config:
    /// `output_schema.retries`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("nine")]);
    /// let agent = AgentBuilder::new().with_output_retries(0).with_chat_client(model.clone()).build()?;
    /// assert!(matches!(agent.run_typed::<u32>("Count").await, Err(RunError::Output(_))));
    /// assert_eq!(model.requests().len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_output_retries(mut self, retries: usize) -> Self {
        self.output_retries = Some(retries);
        self
    }

    pub(crate) fn with_depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// Registers a sub-agent tool (see [`SubAgent`]).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient, SubAgent};
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_sub_agent(SubAgent::new("translator", "Translates a text to French.", AgentConfig::default()))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["translator"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_sub_agent(mut self, sub_agent: SubAgent) -> Self {
        self.sub_agents.push((self.registrations.len(), sub_agent));
        self
    }

    /// Whether the run's spans record what the conventions call content (cargo feature
    /// `otel`): the user message and the answer on `invoke_agent`, the system instructions and
    /// the messages sent and received on `chat`, the arguments and results on
    /// `execute_tool`. Off by default, as the OpenTelemetry GenAI conventions ask, since
    /// these may carry personal data; without this call it is on when the environment
    /// variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`, `span_only`
    /// or `span_and_event` (any case) when the agent is built. Credentials never appear
    /// either way. Without the `otel` feature this changes nothing.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_trace_content(true).with_chat_client(ScriptedChatClient::new()).build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_trace_content(mut self, on: bool) -> Self {
        self.trace_content = Some(on);
        self
    }

    /// Answers the sampling asks of the agent's functions
    /// ([`FunctionContext::sample`](crate::FunctionContext::sample)) in its runs and tool
    /// sessions; without this call the agent's own model answers them
    /// ([`ModelSampling`](crate::tool::ModelSampling)).
    ///
    /// ```
    /// use hpd_agent::async_trait;
    /// use hpd_agent::tool::{AskError, SamplingHandler, SamplingReply, SamplingRequest};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// struct NoSampling;
    ///
    /// #[async_trait]
    /// impl SamplingHandler for NoSampling {
    ///     async fn sample(&self, _request: &SamplingRequest) -> Result<SamplingReply, AskError> {
    ///         Err(AskError::Refused("sampling is off in this application".into()))
    ///     }
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_sampling_handler(NoSampling)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_sampling_handler(
        mut self,
        handler: impl crate::tool::SamplingHandler + 'static,
    ) -> Self {
        self.asks.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers the elicitation asks of the agent's functions
    /// ([`FunctionContext::elicit`](crate::FunctionContext::elicit)) in its runs and tool
    /// sessions. Without a handler they fail with
    /// [`AskError::NoHandler`](crate::tool::AskError::NoHandler).
    ///
    /// ```
    /// use hpd_agent::async_trait;
    /// use hpd_agent::tool::{AskError, Elicitation, ElicitationAnswer, ElicitationHandler};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// struct Decline;
    ///
    /// #[async_trait]
    /// impl ElicitationHandler for Decline {
    ///     async fn elicit(&self, _request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
    ///         Ok(ElicitationAnswer::decline())
    ///     }
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_elicitation_handler(Decline)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_elicitation_handler(
        mut self,
        handler: impl crate::tool::ElicitationHandler + 'static,
    ) -> Self {
        self.asks.elicitation = Some(Arc::new(handler));
        self
    }

    /// The roots the agent's functions get from
    /// [`FunctionContext::roots`](crate::FunctionContext::roots) in its runs and tool
    /// sessions. Without this call they fail with
    /// [`AskError::NoHandler`](crate::tool::AskError::NoHandler).
    ///
    /// ```
    /// use hpd_agent::tool::Root;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_roots([Root::new("file:///srv/project").with_name("project")])
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = crate::tool::Root>) -> Self {
        self.asks.roots = Some(roots.into_iter().collect());
        self
    }

    /// Sets the agent's name (reported to middleware).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_name("triage").with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.name(), "triage");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the system instructions.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi")]);
    /// let agent = AgentBuilder::new().with_instructions("Answer in one word.").with_chat_client(model.clone()).build()?;
    /// agent.run("Hello").await?;
    /// assert_eq!(model.requests()[0].instructions, "Answer in one word.");
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// Sets how many model requests one run may make (default 16).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_max_iterations(4).with_chat_client(ScriptedChatClient::new()).build();
    /// assert!(agent.is_ok());
    /// // At least one request is needed.
    /// let error = AgentBuilder::new().with_max_iterations(0).with_chat_client(ScriptedChatClient::new()).build();
    /// assert!(error.is_err());
    /// ```
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Sets the chat client.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// // Any `ChatClient`: a provider client, or a scripted one in tests.
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
    ///     .build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_chat_client(mut self, client: impl ChatClient + 'static) -> Self {
        self.client = Some(Arc::new(client));
        self
    }

    /// Sets a shared chat client.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::{AgentBuilder, ChatClient, ScriptedChatClient};
    ///
    /// // One client (one connection pool) for several agents.
    /// let client: Arc<dyn ChatClient> = Arc::new(ScriptedChatClient::new());
    /// let planner = AgentBuilder::new().with_name("planner").with_shared_chat_client(client.clone()).build()?;
    /// let writer = AgentBuilder::new().with_name("writer").with_shared_chat_client(client).build()?;
    /// # drop((planner, writer));
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_shared_chat_client(mut self, client: Arc<dyn ChatClient>) -> Self {
        self.client = Some(client);
        self
    }

    /// Registers every function of `T`, made with `fn new()` or `Default` (a config constructor
    /// gets `{}`).
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct Dice;
    ///
    /// #[tool_harness]
    /// impl Dice {
    ///     /// Rolls a die with `sides` sides (always 4 here).
    ///     #[ai_function]
    ///     fn roll(&self, sides: u32) -> u32 { 4.min(sides) }
    /// }
    ///
    /// let agent = AgentBuilder::new().with_tool_harness::<Dice>().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.initial_tool_names(), ["roll"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_tool_harness<T: ToolHarness>(mut self) -> Self {
        self.registrations.add_harness::<T>();
        self
    }

    /// Registers every function of a pre-built instance: the same as
    /// `with_tool_harness_options::<T>(|o| o.with_instance(instance))`.
    #[deprecated(
        since = "0.1.0",
        note = "use `with_tool_harness_options::<T>(|o| o.with_instance(instance))`"
    )]
    pub fn with_tool_harness_instance<T: ToolHarness>(self, instance: T) -> Self {
        self.with_tool_harness_options::<T>(|o| o.with_instance(instance))
    }

    /// Registers `T` with options: scoped middleware instances, metadata, config, an instance,
    /// middleware configs, or a subset of functions.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct Notebook;
    ///
    /// #[collapse("Notes")]
    /// impl Notebook {
    ///     /// Reads the notes.
    ///     #[ai_function]
    ///     fn read_notes(&self) -> String { String::new() }
    ///     /// Deletes every note.
    ///     #[ai_function]
    ///     fn wipe_notes(&self) {}
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<Notebook>(|o| o.with_functions(["read_notes"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.tool_session().visible_tools()[0].description, "Notes (functions: read_notes)");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_tool_harness_options<T: ToolHarness>(
        mut self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) -> Self {
        self.registrations.add_with(options);
        self
    }

    /// Renamed to [`with_tool_harness_options`](Self::with_tool_harness_options).
    #[deprecated(since = "0.1.0", note = "renamed to `with_tool_harness_options`")]
    pub fn with_tool_harness_with<T: ToolHarness>(
        self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) -> Self {
        self.with_tool_harness_options(options)
    }

    /// Registers a harness built at run time (see [`HarnessBuilder`](crate::HarnessBuilder)),
    /// whole or as selected with [`DynamicHarness::select`]. It follows every rule a Rust
    /// harness follows: registration order, collapsing, recovery, selection merging,
    /// `never_collapse`, duplicate names, scoped middleware.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async {
    ///     ToolResult::ok("pong")
    /// });
    /// let net = HarnessBuilder::new("Net").with_collapse("Network checks").with_tool(ping).build()?;
    /// let agent = AgentBuilder::new()
    ///     .with_harness(net)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["Net", "call_function"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_harness(mut self, harness: DynamicHarness) -> Self {
        self.registrations.add_dynamic(harness);
        self
    }

    /// Registers one function of `T`, by name or as `Harness.function`: the same as
    /// `with_tool_harness_options::<T>(|o| o.with_functions([function]))`.
    #[deprecated(
        since = "0.1.0",
        note = "use `with_tool_harness_options::<T>(|o| o.with_functions([function]))`"
    )]
    pub fn with_tool<T: ToolHarness>(self, function: impl Into<String>) -> Self {
        let function: String = function.into();
        self.with_tool_harness_options::<T>(|o| o.with_functions([function]))
    }

    /// Registers one function by a `Harness.function` reference, through the registry: the
    /// same as `with_tool_harness_reference(&ToolHarnessReference::new(harness).with_functions([function]))`.
    #[deprecated(
        since = "0.1.0",
        note = "use `with_tool_harness_reference(&ToolHarnessReference::new(harness).with_functions([function]))`"
    )]
    pub fn with_tool_ref(mut self, reference: impl Into<String>) -> Self {
        let reference = reference.into();
        match split_reference(&reference) {
            Ok((harness, function)) => {
                let r = ToolHarnessReference::new(harness).with_functions([function]);
                self.registrations.add_reference(&r);
            }
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers harnesses by config reference (as in `tool_harnesses` of an [`AgentConfig`]).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, BuildError, ScriptedChatClient};
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let reference = ToolHarnessReference::new("NotLinkedIn").with_functions(["run"]);
    /// let error = AgentBuilder::new()
    ///     .with_tool_harness_reference(&reference)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(error, BuildError::UnknownHarness { .. }));
    /// ```
    pub fn with_tool_harness_reference(mut self, reference: &ToolHarnessReference) -> Self {
        self.registrations.add_reference(reference);
        self
    }

    /// Replaces the registration of the same harness name entirely (adds it when absent).
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// #[derive(Default)]
    /// pub struct Calendar;
    ///
    /// #[tool_harness]
    /// impl Calendar {
    ///     /// Lists events.
    ///     #[ai_function]
    ///     fn list_events(&self) -> String { String::new() }
    ///     /// Creates an event.
    ///     #[ai_function]
    ///     fn create_event(&self, title: String) -> String { title }
    /// }
    ///
    /// let config = AgentConfig::from_json(r#"{"tool_harnesses": ["Calendar"]}"#)?;
    /// let agent = AgentBuilder::from_config(config)
    ///     // Not merged with the config's entry: replaces it.
    ///     .with_tool_harness_override(ToolHarnessReference::new("Calendar").with_functions(["list_events"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["list_events"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_tool_harness_override(mut self, reference: ToolHarnessReference) -> Self {
        self.registrations
            .replace_config(Registration::from_reference(&reference));
        self
    }

    /// Sets the caps on tool results, tool arguments and concurrent calls (see [`Limits`]);
    /// replaces the config's `limits`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    /// use hpd_agent::config::Limits;
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_limits(Limits::default().with_max_tool_result_bytes(8192).with_max_parallel_calls(4))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.limits().max_parallel_calls, 4);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Keeps every request within `budget` by trimming the oldest whole turns (see
    /// [`ContextBudget`] and the [module docs](crate::agent::budget)); replaces the config's
    /// `context_budget`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::config::ContextBudget;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies(["a", "b", "c"].map(ChatResponse::text));
    /// let agent = AgentBuilder::new()
    ///     .with_context_budget(ContextBudget::messages(2))
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// let mut session = agent.session();
    /// for message in ["one", "two", "three"] {
    ///     session.run(message).await?;
    /// }
    /// // The third request sent only the last turn; the history keeps all three, marked.
    /// assert_eq!(model.requests()[2].messages.len(), 1);
    /// assert_eq!((session.history().len(), session.state().trimmed), (6, 4));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_context_budget(mut self, budget: ContextBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Counts tokens for the context budget with `estimator` instead of [`ApproxTokens`] (the
    /// provider's reported counts are used where they apply).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    /// use hpd_agent::agent::TokenEstimator;
    /// use hpd_agent::config::ContextBudget;
    ///
    /// #[derive(Debug)]
    /// struct Words;
    /// impl TokenEstimator for Words {
    ///     fn text_tokens(&self, text: &str) -> usize { text.split_whitespace().count() }
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_context_budget(ContextBudget::tokens(1000))
    ///     .with_token_estimator(Words)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_token_estimator(mut self, estimator: impl TokenEstimator + 'static) -> Self {
        self.estimator = Some(Arc::new(estimator));
        self
    }

    /// Replaces the turns the context budget trims with a summary turn that `summarizer`
    /// writes (see [`Summarizer`]).
    ///
    /// ```
    /// use hpd_agent::{async_trait, AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::agent::Summarizer;
    /// use hpd_agent::config::ContextBudget;
    ///
    /// struct Count;
    ///
    /// #[async_trait]
    /// impl Summarizer for Count {
    ///     async fn summarize(&self, _: Option<&str>, turns: &[ChatMessage]) -> Result<String, String> {
    ///         Ok(format!("{} earlier messages", turns.len()))
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies(["a", "b"].map(ChatResponse::text));
    /// let agent = AgentBuilder::new()
    ///     .with_context_budget(ContextBudget::messages(2))
    ///     .with_summarizer(Count)
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// let mut session = agent.session();
    /// session.run("one").await?;
    /// session.run("two").await?;
    /// let sent = &model.requests()[1].messages;
    /// assert_eq!(sent[0], ChatMessage::user("Summary of the earlier conversation:\n2 earlier messages"));
    /// // The summary turn and "two": over the budget, but the current turn is always sent.
    /// assert_eq!(sent.len(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_summarizer(mut self, summarizer: impl Summarizer + 'static) -> Self {
        self.summarizer = Some(Arc::new(summarizer));
        self
    }

    /// Turns collapsing off: no containers; every registered function is a plain tool.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .without_harness_collapsing()
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["ping"]); // no container
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn without_harness_collapsing(mut self) -> Self {
        self.collapsing.enabled = false;
        self
    }

    /// Sets how requests carry collapsed harnesses ([`CollapsingConfig::layout`]; JSON
    /// `collapsing.layout`). See [`CollapsingLayout`](crate::config::CollapsingLayout) for what each
    /// layout sends and what it costs.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use hpd_agent::config::{CollapsingLayout, CALL_TOOL};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_collapsing_layout(CollapsingLayout::Fixed)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// // The container and the call tool, for the whole session.
    /// assert_eq!(agent.tool_session().visible_tool_names(), ["Net", CALL_TOOL]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_collapsing_layout(mut self, layout: crate::config::CollapsingLayout) -> Self {
        self.collapsing.layout = layout;
        self
    }

    /// The [`append`](crate::config::CollapsingLayout::Append) layout: an expanded container stays in
    /// the tool list with its members appended after every other tool, and container system
    /// prompts travel in call results, so the system text never changes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    /// use hpd_agent::config::CollapsingLayout;
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_cache_stable_collapsing()
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # let _ = (agent, CollapsingLayout::Append);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[deprecated(note = "use `with_collapsing_layout(CollapsingLayout::Append)`")]
    pub fn with_cache_stable_collapsing(self) -> Self {
        self.with_collapsing_layout(crate::config::CollapsingLayout::Append)
    }

    /// Changes the [`CollapsingConfig`]. Collapsing is on by default.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .configure_harness_collapsing(|c| {
    ///         c.never_collapse.push("Net".into());
    ///         c.execute_recovered_calls = true;
    ///     })
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["ping"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn configure_harness_collapsing(
        mut self,
        configure: impl FnOnce(&mut CollapsingConfig),
    ) -> Self {
        configure(&mut self.collapsing);
        self
    }

    /// Adds global middleware.
    ///
    /// ```
    /// use hpd_agent::{async_trait, AgentBuilder, ChatResponse, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, MiddlewareError};
    /// use hpd_agent::{HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// struct ReadOnly;
    ///
    /// #[async_trait]
    /// impl Middleware for ReadOnly {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
    ///         if call.function_name().starts_with("delete") {
    ///             call.block("Error: this agent is read-only");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let delete = Tool::new("delete_file", "Deletes a file", json!({"type": "object"}), |_, _| async { ToolResult::ok("deleted") });
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "delete_file", "{}")]),
    ///     ChatResponse::text("I cannot."),
    /// ]);
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Files").with_tool(delete).build()?)
    ///     .with_middleware(ReadOnly)
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// agent.run("Delete it").await?;
    /// assert_eq!(model.requests()[1].tool_result("c1"), Some(("Error: this agent is read-only", true)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Adds shared global middleware.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::{AgentBuilder, Middleware, ScriptedChatClient};
    ///
    /// struct Metrics;
    /// impl Middleware for Metrics {}
    ///
    /// // One instance (e.g. with shared counters) in several agents.
    /// let metrics: Arc<dyn Middleware> = Arc::new(Metrics);
    /// let a = AgentBuilder::new().with_shared_middleware(metrics.clone()).with_chat_client(ScriptedChatClient::new()).build()?;
    /// let b = AgentBuilder::new().with_shared_middleware(metrics).with_chat_client(ScriptedChatClient::new()).build()?;
    /// # drop((a, b));
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_shared_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Calls `handler` with every [`AgentEvent`] of every run of the agent.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use hpd_agent::{AgentBuilder, AgentEvent, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = Arc::new(Mutex::new(String::new()));
    /// let sink = text.clone();
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hello")]))
    ///     .on_event(move |event| {
    ///         if let AgentEvent::TextDelta { text } = event {
    ///             sink.lock().unwrap().push_str(text);
    ///         }
    ///     })
    ///     .build()?;
    /// agent.run("Hi").await?;
    /// assert_eq!(*text.lock().unwrap(), "Hello");
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_event(mut self, handler: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.handlers.push(Arc::new(handler));
        self
    }

    /// Sets the model options sent with every request (see [`ModelOptions`]). Fields set here
    /// replace those of a config's `model.options` and of earlier calls; `extra` objects are
    /// merged key by key. A run can override them with
    /// [`AgentRunConfig::with_model_options`](crate::AgentRunConfig::with_model_options).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::chat::ModelOptions;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("hi")]);
    /// let agent = AgentBuilder::new()
    ///     .with_model_options(ModelOptions::new().with_temperature(0.0).with_max_output_tokens(256))
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// agent.run("hello").await?;
    /// assert_eq!(model.requests()[0].options.max_output_tokens, Some(256));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_model_options(mut self, options: ModelOptions) -> Self {
        self.model_options = self.model_options.merged_with(&options);
        self
    }

    /// Uses the OpenAI-compatible provider with this model, configured from the environment
    /// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    ///
    /// ```no_run
    /// use hpd_agent::AgentBuilder;
    ///
    /// // OPENAI_API_KEY must be set; OPENAI_BASE_URL points at a local server such as llama.cpp,
    /// // Ollama or vLLM (e.g. `http://127.0.0.1:8080/v1`).
    /// let agent = AgentBuilder::new().with_openai("gpt-4o-mini").build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_openai(self, model: impl Into<String>) -> Self {
        self.with_provider("openai", model.into())
    }

    /// Uses the OpenAI Responses API ([`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient))
    /// with this model, configured from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    ///
    /// ```no_run
    /// use hpd_agent::AgentBuilder;
    ///
    /// let agent = AgentBuilder::new().with_openai_responses("gpt-4o-mini").build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_openai_responses(self, model: impl Into<String>) -> Self {
        self.with_provider("openai_responses", model.into())
    }

    /// Uses the Anthropic Messages API ([`AnthropicClient`](crate::providers::anthropic::AnthropicClient)) with this
    /// model, configured from the environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
    ///
    /// ```no_run
    /// use hpd_agent::AgentBuilder;
    ///
    /// // ANTHROPIC_API_KEY must be set.
    /// let agent = AgentBuilder::new().with_anthropic("claude-sonnet-4-5").build()?;
    /// # drop(agent);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_anthropic(self, model: impl Into<String>) -> Self {
        self.with_provider("anthropic", model.into())
    }

    fn with_provider(mut self, provider: &str, model: String) -> Self {
        self.model = Some(ModelConfig {
            provider: Some(provider.to_owned()),
            model: Some(model),
            base_url: None,
            deferred_tools: None,
            options: None,
        });
        self.client = None;
        self
    }

    /// Adds a tool source that `build_async` connects (see [`PendingSource`]).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn add_pending(mut self, source: PendingSource) -> Self {
        self.pending.push(source);
        self
    }

    /// Takes the config's MCP servers and the pending sources, leaving none.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn take_pending(&mut self) -> (Vec<McpServerConfig>, Vec<PendingSource>) {
        (
            std::mem::take(&mut self.mcp_servers),
            std::mem::take(&mut self.pending),
        )
    }

    /// The tool and harness names the registrations will use, as far as they can be told
    /// before the build (a registration the build will reject adds nothing).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn tool_names_in_use(&self) -> Vec<String> {
        let mut names = Vec::new();
        for registration in self.registrations.merged() {
            let all: Vec<String> = if let Some(harness) = &registration.dynamic {
                names.push(harness.name().to_owned());
                harness.tool_names()
            } else {
                let Some(info) = registration.info else {
                    continue;
                };
                names.push(info.name().to_owned());
                info.function_names().map(str::to_owned).collect()
            };
            match &registration.selection {
                Selection::All => names.extend(all),
                Selection::Functions(selected) => names.extend(all.into_iter().filter(|name| {
                    selected
                        .iter()
                        .any(|s| s == name || s.ends_with(&format!(".{name}")))
                })),
            }
        }
        names.extend(self.sub_agents.iter().map(|(_, s)| s.name().to_owned()));
        names
    }

    /// Builds the agent.
    ///
    /// # Errors
    ///
    /// A [`BuildError`]: an invalid tool reference, an unknown harness or function, a config,
    /// metadata or middleware config that does not fit, two tools with one name, conflicting
    /// harnesses of one name (case-insensitively) used by this agent, or no chat client.
    ///
    /// MCP servers (the config's `mcp_servers`, or added with `with_mcp_server` under the `mcp`
    /// cargo feature) need a connection first: `build` fails with
    /// [`BuildError::McpNeedsBuildAsync`] for them; use `build_async`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, BuildError, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = || Tool::new("search", "Searches", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let error = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Web").with_tool(tool()).build()?)
    ///     .with_harness(HarnessBuilder::new("Docs").with_tool(tool()).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("search"), "{error}"); // two tools of one name
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn build(self) -> Result<Agent, BuildError> {
        self.build_with(Vec::new())
    }

    /// Fails when MCP servers wait for `build_async`.
    fn check_no_mcp_servers(&self) -> Result<(), BuildError> {
        let names: Vec<&str> = self
            .mcp_servers
            .iter()
            .map(|s| s.name.as_str())
            .chain(self.pending.iter().map(|p| p.name.as_str()))
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        Err(BuildError::McpNeedsBuildAsync {
            servers: names.join(", "),
            hint: if cfg!(feature = "mcp") {
                ""
            } else {
                "; build_async needs the `mcp` cargo feature of hpd-agent"
            },
        })
    }

    /// Builds the agent with extra, already built harnesses (a sub-agent's parent functions).
    pub(crate) fn build_with(self, extra: Vec<Part>) -> Result<Agent, BuildError> {
        self.check_no_mcp_servers()?;
        if let Some(error) = self.errors.into_iter().next() {
            return Err(error);
        }
        if self.max_iterations == Some(0) {
            return Err(BuildError::ZeroMaxIterations);
        }
        if let Some(field) = self.limits.zero_field() {
            return Err(BuildError::ZeroLimit(field));
        }
        let resolved = self
            .registrations
            .merged()
            .map(|r| resolve(&r))
            .collect::<Result<Vec<_>, _>>()?;
        let (parts, pending) = split_pending(resolved);
        let tools = Toolset::new(parts, &self.collapsing)?;
        if let Some(clash) = extra
            .iter()
            .find(|p| tools.harness_index(&p.group.name).is_some())
        {
            return Err(BuildError::HandedHarnessRegistered {
                harness: clash.group.name.to_string(),
            });
        }
        let tools = tools.with_parts(extra)?;
        let client = match self.client {
            Some(client) => client,
            None => match self.model {
                Some(model) => super::client_from_model(&model)?,
                None => return Err(BuildError::NoChatClient),
            },
        };
        let tools = tools.with_native(client.deferred_tools());
        if tools.native_falls_back() {
            tracing::info!(
                target: "hpd_agent",
                agent = %self.name,
                "collapsing layout native: the chat client has no deferred tool loading; using fixed"
            );
            crate::events::Emitter::new(self.handlers.clone()).emit(&AgentEvent::LayoutFallback {
                requested: crate::config::CollapsingLayout::Native,
                used: crate::config::CollapsingLayout::Fixed,
                reason: "the chat client has no deferred tool loading".to_owned(),
            });
        }
        let depth = self.depth + 1;
        let tools = with_sub_agent_members(tools, pending, &client, depth)?;
        let singles = self
            .sub_agents
            .iter()
            .map(|(position, s)| {
                let function = build_sub_agent(s, s.name(), &tools, &client, depth)?;
                let label = format!("sub-agent {}", s.name());
                Ok((*position, Single { function, label }))
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        let tools = tools.with_singles(singles)?;
        let mut asks = self.asks;
        if asks.sampling.is_none() {
            asks.sampling = Some(Arc::new(crate::tool::ModelSampling::shared(Arc::clone(
                &client,
            ))));
        }
        Ok(Agent {
            inner: Arc::new(AgentInner {
                asks: Arc::new(asks),
                name: self.name,
                instructions: self.instructions,
                max_iterations: self.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS),
                client,
                model_options: self.model_options,
                limits: self.limits,
                middleware: self.middleware,
                tools: LiveToolset::new(tools),
                handlers: self.handlers,
                depth: self.depth,
                budgeting: self
                    .budget
                    .filter(ContextBudget::is_limited)
                    .map(|budget| Budgeting {
                        budget,
                        estimator: self.estimator.unwrap_or_else(|| Arc::new(ApproxTokens)),
                        summarizer: self.summarizer,
                    }),
                output: self.output,
                output_retries: self.output_retries,
                trace_content: self.trace_content.unwrap_or_else(trace_content_from_env),
            }),
        })
    }
}

/// Whether `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` asks for content on spans.
fn trace_content_from_env() -> bool {
    std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT").is_ok_and(|value| {
        ["true", "span_only", "span_and_event"]
            .iter()
            .any(|on| value.trim().eq_ignore_ascii_case(on))
    })
}

/// Sub-agent members of resolved harnesses, by harness name, waiting for the toolset their
/// parent functions come from.
pub(crate) type Pending = Vec<(Arc<str>, Vec<(usize, SubAgent)>)>;

/// Splits resolved harnesses into their parts and their pending sub-agent members.
pub(crate) fn split_pending(resolved: Vec<ResolvedHarness>) -> (Vec<Part>, Pending) {
    let mut pending = Vec::new();
    let parts = resolved
        .into_iter()
        .map(|r| {
            if !r.sub_agents.is_empty() {
                pending.push((Arc::clone(&r.part.group.name), r.sub_agents));
            }
            r.part
        })
        .collect();
    (parts, pending)
}

/// Builds the `#[sub_agent]` members of harnesses against the toolset without them and adds
/// them in their declaration places.
pub(crate) fn with_sub_agent_members(
    tools: Toolset,
    pending: Pending,
    client: &Arc<dyn ChatClient>,
    depth: usize,
) -> Result<Toolset, BuildError> {
    let mut additions = Vec::new();
    for (harness, members) in pending {
        let Some(h) = tools.harness_index(&harness) else {
            continue;
        };
        for (position, sub_agent) in members {
            let function = build_sub_agent(&sub_agent, &harness, &tools, client, depth)?;
            additions.push((h, position, function));
        }
    }
    tools.with_members(additions)
}

/// Builds the child agent of `sub_agent` at `depth` (1 for a sub-agent of a top-level agent)
/// and the tool that runs it, owned by `owner` (its harness, or its own name).
fn build_sub_agent(
    sub_agent: &SubAgent,
    owner: &str,
    parent: &Toolset,
    parent_client: &Arc<dyn ChatClient>,
    depth: usize,
) -> Result<Function, BuildError> {
    let entry = &sub_agent.entry;
    let context = |source: BuildError| BuildError::SubAgent {
        name: entry.name.clone(),
        source: Box::new(source),
    };
    if depth > sub_agent.max_depth {
        return Err(context(BuildError::SubAgentDepth {
            max_depth: sub_agent.max_depth,
        }));
    }
    let handed = sub_agent::parent_harnesses(sub_agent, parent).map_err(context)?;
    let mut builder = AgentBuilder::from_config((*entry.config).clone()).with_depth(depth);
    if entry.config.model.is_none() {
        builder = builder.with_shared_chat_client(Arc::clone(parent_client));
    }
    let agent = builder.build_with(handed).map_err(context)?;
    Ok(sub_agent::tool(sub_agent, owner, agent, depth))
}
