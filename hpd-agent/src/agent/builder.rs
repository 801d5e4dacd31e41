//! [`AgentBuilder`]: registering harnesses, middleware and a chat client, in code or from an
//! [`AgentConfig`].

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::chat::{ChatClient, ModelOptions};
use crate::collapse::{LiveToolset, Part, Toolset};
use crate::config::{
    AgentConfig, CollapsingConfig, McpServerConfig, ModelConfig, ToolHarnessReference,
};
use crate::error::BuildError;
use crate::harness::registry::Registry;
use crate::harness::{DynamicHarness, ToolHarness};
use crate::middleware::Middleware;
use crate::tool::SubAgent;
use crate::tool::catalog::Single;

use super::events::{AgentEvent, EventHandler};
use super::registration::{
    HarnessOptions, InstanceSource, Registration, Registrations, ResolvedHarness, Selection,
    resolve, split_reference,
};
use super::{Agent, AgentInner, DEFAULT_MAX_ITERATIONS};

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
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder that starts from a config: name, instructions, model (and its `options`), `max_iterations`,
    /// collapsing settings and harness references. Builder calls made afterwards merge with it.
    pub fn from_config(config: AgentConfig) -> Self {
        let mut builder = AgentBuilder::new();
        builder.name = config.name.unwrap_or_default();
        builder.instructions = config.instructions.unwrap_or_default();
        builder.max_iterations = config.max_iterations;
        builder.collapsing = config.collapsing;
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
        builder
    }

    pub(crate) fn with_depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// Registers a sub-agent tool (see [`SubAgent`]).
    pub fn with_sub_agent(mut self, sub_agent: SubAgent) -> Self {
        self.sub_agents.push((self.registrations.len(), sub_agent));
        self
    }

    /// Sets the agent's name (reported to middleware).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the system instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// Sets how many model requests one run may make (default 16).
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Sets the chat client.
    pub fn with_chat_client(mut self, client: impl ChatClient + 'static) -> Self {
        self.client = Some(Arc::new(client));
        self
    }

    /// Sets a shared chat client.
    pub fn with_shared_chat_client(mut self, client: Arc<dyn ChatClient>) -> Self {
        self.client = Some(client);
        self
    }

    /// Registers every function of `T`, created by the registry.
    pub fn with_tool_harness<T: ToolHarness>(mut self) -> Self {
        self.registrations.add_harness::<T>();
        self
    }

    /// Registers every function of a pre-built instance.
    pub fn with_tool_harness_instance<T: ToolHarness>(mut self, instance: T) -> Self {
        let mut registration = Registration::for_type::<T>(Selection::All);
        registration.instance = InstanceSource::Object(Arc::new(instance));
        self.registrations.add(registration);
        self
    }

    /// Registers `T` with options: scoped middleware instances, metadata, config, an instance,
    /// middleware configs, or a subset of functions.
    pub fn with_tool_harness_with<T: ToolHarness>(
        mut self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) -> Self {
        self.registrations.add_with(options);
        self
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
    /// let net = HarnessBuilder::new("Net").collapse("Network checks").tool(ping).build()?;
    /// let agent = AgentBuilder::new()
    ///     .with_harness(net)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["Net"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_harness(mut self, harness: DynamicHarness) -> Self {
        self.registrations.add_dynamic(harness);
        self
    }

    /// Registers one function of `T`, by name or as `Harness.function`.
    ///
    /// Several calls for one harness merge; the selected functions keep declaration order.
    /// Selecting functions of a collapsed harness keeps it collapsed behind a container that
    /// lists only them.
    pub fn with_tool<T: ToolHarness>(mut self, function: impl Into<String>) -> Self {
        self.registrations
            .add(Registration::for_type::<T>(Selection::Functions(vec![
                function.into(),
            ])));
        self
    }

    /// Registers one function by a `Harness.function` reference, through the registry.
    pub fn with_tool_ref(mut self, reference: impl Into<String>) -> Self {
        let reference = reference.into();
        match split_reference(&reference) {
            Ok((harness, function)) => {
                let mut r = ToolHarnessReference::new(harness);
                r.functions = Some(vec![function.to_owned()]);
                self.registrations.add_reference(&r);
            }
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers harnesses by config reference (as in `tool_harnesses` of an [`AgentConfig`]).
    pub fn with_tool_harness_reference(mut self, reference: &ToolHarnessReference) -> Self {
        self.registrations.add_reference(reference);
        self
    }

    /// Replaces the registration of the same harness name entirely (adds it when absent).
    pub fn with_tool_harness_override(mut self, reference: ToolHarnessReference) -> Self {
        self.registrations
            .replace_config(Registration::from_reference(&reference));
        self
    }

    /// Turns collapsing off: no containers; every registered function is a plain tool.
    pub fn without_harness_collapsing(mut self) -> Self {
        self.collapsing.enabled = false;
        self
    }

    /// Lays requests out for prefix caching ([`CollapsingConfig::cache_stable`]): an expanded
    /// container stays in the tool list with its members appended after every other tool, and
    /// container system prompts travel in call results, so the system text never changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_cache_stable_collapsing()
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # let _ = agent;
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_cache_stable_collapsing(mut self) -> Self {
        self.collapsing.cache_stable = true;
        self
    }

    /// Changes the [`CollapsingConfig`]. Collapsing is on by default.
    pub fn configure_harness_collapsing(
        mut self,
        configure: impl FnOnce(&mut CollapsingConfig),
    ) -> Self {
        configure(&mut self.collapsing);
        self
    }

    /// Adds global middleware.
    pub fn with_middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Adds shared global middleware.
    pub fn with_shared_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Calls `handler` with every [`AgentEvent`] of every run of the agent.
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
    /// use hpd_agent::{AgentBuilder, ChatResponse, ModelOptions, ScriptedChatClient};
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
    pub fn with_openai(self, model: impl Into<String>) -> Self {
        self.with_provider("openai", model.into())
    }

    /// Uses the OpenAI Responses API ([`OpenAiResponsesClient`](crate::OpenAiResponsesClient))
    /// with this model, configured from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    pub fn with_openai_responses(self, model: impl Into<String>) -> Self {
        self.with_provider("openai_responses", model.into())
    }

    /// Uses the Anthropic Messages API ([`AnthropicClient`](crate::AnthropicClient)) with this
    /// model, configured from the environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
    pub fn with_anthropic(self, model: impl Into<String>) -> Self {
        self.with_provider("anthropic", model.into())
    }

    fn with_provider(mut self, provider: &str, model: String) -> Self {
        self.model = Some(ModelConfig {
            provider: Some(provider.to_owned()),
            model: Some(model),
            base_url: None,
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
        let registry = Registry::global();
        let mut names = Vec::new();
        for registration in self.registrations.merged() {
            let all: Vec<String> = if let Some(harness) = &registration.dynamic {
                names.push(harness.name().to_owned());
                harness.tool_names()
            } else {
                let entry = registration
                    .entry
                    .or_else(|| registry.get(&registration.name).map(|info| info.entry()));
                let Some(entry) = entry else { continue };
                names.push(entry.name.to_owned());
                entry.function_names().map(str::to_owned).collect()
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
    /// harness names in the registry, or no chat client.
    ///
    /// MCP servers (the config's `mcp_servers`, or added with `with_mcp_server` under the `mcp`
    /// cargo feature) need a connection first: `build` fails with
    /// [`BuildError::McpNeedsBuildAsync`] for them; use `build_async`.
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
        let registry = Registry::global();
        registry.validate()?;
        let resolved = self
            .registrations
            .merged()
            .map(|r| resolve(registry, &r))
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
        let depth = self.depth + 1;
        let tools = with_sub_agent_members(tools, pending, &client, depth)?;
        let singles = self
            .sub_agents
            .iter()
            .map(|(position, s)| {
                let function = super::sub_agent::build(s, s.name(), &tools, &client, depth)?;
                let label = format!("sub-agent {}", s.name());
                Ok((*position, Single { function, label }))
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        let tools = tools.with_singles(singles)?;
        Ok(Agent {
            inner: Arc::new(AgentInner {
                name: self.name,
                instructions: self.instructions,
                max_iterations: self.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS),
                client,
                model_options: self.model_options,
                middleware: self.middleware,
                tools: LiveToolset::new(tools),
                handlers: self.handlers,
                depth: self.depth,
            }),
        })
    }
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
            let function = super::sub_agent::build(&sub_agent, &harness, &tools, client, depth)?;
            additions.push((h, position, function));
        }
    }
    tools.with_members(additions)
}
