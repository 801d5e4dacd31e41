//! JSON configuration: [`AgentConfig`] and [`RunConfigData`] (the JSON form of
//! `AgentRunConfig`), the pure data and serde layer.
//!
//! Entry points: [`AgentConfig::from_json`], [`AgentConfig::from_value`],
//! [`AgentConfig::to_json`], [`RunConfigData::from_json`], [`ToolHarnessReference::from_json`]
//! (one reference on its own). Nothing here looks at the registry:
//! harness and function names are checked when an agent is built from the config.
//!
//! # Format
//!
//! ```json
//! {
//!   "name": "assistant",
//!   "instructions": "Be brief.",
//!   "model": { "provider": "openai", "model": "gpt-4o-mini",
//!              "options": { "temperature": 0, "max_output_tokens": 1024,
//!                           "tool_choice": "auto", "extra": { "user": "docs" } } },
//!   "max_iterations": 8,
//!   "collapsing": { "never_collapse": ["WeatherTools"] },
//!   "tool_harnesses": [
//!     "WeatherTools",
//!     { "name": "SearchTools", "config": { "MaxResults": 3 } },
//!     { "name": "DatabaseTools", "functions": ["query", "drop_table"],
//!       "middleware_configs": { "DbAuditMiddleware": { "AuditLevel": "Detailed" } },
//!       "requires_approval": ["drop_table"] }
//!   ],
//!   "sub_agents": [
//!     { "name": "researcher", "description": "Looks things up.",
//!       "config": { "instructions": "Be thorough.", "tool_harnesses": ["SearchTools"] },
//!       "parent_functions": ["DatabaseTools.query"] }
//!   ],
//!   "mcp_servers": [
//!     { "name": "Files", "command": "npx",
//!       "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
//!       "functions": ["read_text_file"], "timeout_ms": 30000 },
//!     { "name": "Search", "url": "http://127.0.0.1:3000/mcp",
//!       "headers": { "Authorization": "Bearer token" }, "collapse": false }
//!   ],
//!   "limits": { "max_tool_result_bytes": 65536, "max_argument_bytes": 262144,
//!               "max_parallel_calls": 16 }
//! }
//! ```
//!
//! # Keys
//!
//! The keys of every object this crate defines (the agent config, `model`, `model.options`
//! and its `tool_choice` object, `collapsing`, `limits`, harness references, sub-agent entries, MCP server
//! entries, the run config) are normalised before matching:
//! ASCII letters are lower-cased and `_` is removed, so `ToolHarnesses`, `toolHarnesses`,
//! `toolharnesses` and `tool_harnesses` are one key (`-` is not removed: `tool-harnesses` is
//! unknown). Two keys of one object that normalise alike are an error naming both; an unknown
//! key is an error naming it and listing the known keys in snake_case.
//!
//! Values that belong to the user's types — a reference's `config` and `metadata`, the values
//! of its `middleware_configs`, and `model.options.extra` (request body fields of the provider)
//! — are kept as raw [`serde_json::Value`]s, untouched (their
//! keys are not normalised); the keys of `middleware_configs` are middleware type names, kept as
//! written (two that differ only in case are an error, since the build matches them
//! case-insensitively). The keys of an MCP server's `env` and `headers` are kept as written too.
//!
//! # Values
//!
//! - `null` means "absent" for the optional values of this crate (`name`, `instructions`,
//!   `model`, its fields, the fields of `model.options`, `max_iterations`, a reference's `functions`, the run config's
//!   `additional_instructions` and `max_iterations`). A reference's `config` and `metadata` are
//!   the user's values: `"config": null` is kept as `Some(Value::Null)` and handed to the config
//!   type as it is; omit the key to give none.
//! - `"collapsing": null` fails with `collapsing must be an object; omit it to use the default`;
//!   `"limits": null` with `limits must be an object; omit it to use the defaults`. Each value
//!   of `limits` is an integer of at least 1.
//!   List and map values (`tool_harnesses`, `never_collapse`, `sub_agents`, `parent_functions`,
//!   `middleware_configs`, `requires_approval`) and booleans do not accept `null`: serde's
//!   type error.
//! - A harness reference is a non-empty string (the harness name) or an object with a
//!   non-empty `name`. `functions` omitted or `null` exposes all functions;
//!   `[]` fails with `functions is empty; omit it to expose all functions`.
//! - A reference's `requires_approval` is a list of function names whose calls wait for a
//!   person's approval (besides those the harness declares with
//!   `#[ai_function(requires_approval)]`; see [`approval`](crate::approval)). A name given
//!   twice counts once; an empty name fails when parsing, and a name the harness does not
//!   declare fails the build with the unknown-function error, which lists the declared ones.
//!   It does not accept `null` or `true`: list the functions.
//! - A sub-agent entry needs a non-empty `name` and a `description`; `config` (an agent config)
//!   defaults to the empty config and `parent_functions` to `[]`.
//! - An MCP server entry needs a non-empty `name` and exactly one of `command` (a stdio server,
//!   with optional `args` and `env`) and `url` (a streamable HTTP server, with optional
//!   `headers`). `collapse` defaults to `true`; `functions` follows the rules of a reference's
//!   `functions`; `timeout_ms` (`null` is absent) must be at least 1; an HTTP server may
//!   take `auth` ([`McpAuthConfig`]) to sign in with OAuth; `roots` (objects with `uri` and an
//!   optional `name`) are what the server gets from `roots/list`. Connecting the servers
//!   needs `AgentBuilder::build_async` and the `mcp` cargo feature.
//! - A run config with a `collapsing` key fails with
//!   `collapsing belongs to AgentConfig, not AgentRunConfig`.
//!
//! # Errors
//!
//! Parsing fails with a [`ConfigError`] that carries the JSON path of the offending value; its
//! `Display` layout is documented on the type. A text is first checked to be JSON as a whole,
//! so a syntax error is reported as `invalid AgentConfig JSON: ...` even when a configuration
//! mistake comes before it in the text. Keys in the path are spelled as in the document. The
//! messages of this module (the rest are serde's, e.g. `invalid type: string "x", expected
//! usize`):
//!
//! | mistake | message | path |
//! |---|---|---|
//! | unknown key | `unknown key '{key}' in {Object} (did you mean '{known}'?); known keys: {k1}, {k2}, ...` (the hint only for a near miss) | the object |
//! | two spellings of one key | `duplicate key in {Object}: '{first}' and '{second}' both mean '{key}'` | the object |
//! | one key twice | `duplicate key in {Object}: '{key}' appears twice` | the object |
//! | `"collapsing": null` | `collapsing must be an object; omit it to use the default` | `collapsing` |
//! | `"functions": []` | `functions is empty; omit it to expose all functions` | `...functions` |
//! | reference without name | `missing key 'name' in ToolHarnessReference; give the harness name` | the reference |
//! | empty reference name | `harness name is empty` | the name |
//! | empty name in `requires_approval` | `requires_approval holds an empty function name (""); give function names` | `...requires_approval` |
//! | sub-agent without name / description | `missing key 'name' in SubAgentConfig; ...`, `missing key 'description' in SubAgentConfig; ...` | the entry |
//! | empty sub-agent name | `sub-agent name is empty` | the name |
//! | middleware keys equal but for case | `duplicate key in middleware_configs: '{first}' and '{second}' name the same middleware (names match case-insensitively)` | `...middleware_configs` |
//! | `collapsing` in a run config | `collapsing belongs to AgentConfig, not AgentRunConfig` | `.` |
//! | negative `temperature` | `temperature must not be negative` | `model.options.temperature` |
//! | `top_p` outside 0..=1 | `top_p must be between 0 and 1` | `model.options.top_p` |
//! | `"max_output_tokens": 0` | `max_output_tokens must be at least 1` | `model.options.max_output_tokens` |
//! | unknown `tool_choice` string | `unknown tool_choice '{value}'; expected "auto", "none", "required" or {"tool": "name"}` | `model.options.tool_choice` |
//! | `tool_choice` object without `tool` | `missing key 'tool' in ToolChoice; name the tool the model must call` | `model.options.tool_choice` |
//! | `extra` not an object | `extra must be an object of request body fields` | `model.options.extra` |
//! | MCP server without name | `missing key 'name' in McpServerConfig; give the harness name` | the entry |
//! | MCP server without command and url | `missing key 'command' or 'url' in McpServerConfig; give 'command' for a stdio server or 'url' for an HTTP server` | the entry |
//! | MCP server with both | `McpServerConfig has both 'command' and 'url'; give 'command' for a stdio server or 'url' for an HTTP server` | the entry |
//! | `headers` with `command`, `args`/`env` with `url` | `'headers' belongs to an HTTP server ('url'), not to a stdio server ('command')` (and the converse) | the entry |
//! | `"timeout_ms": 0` | `timeout_ms must be at least 1` | `...timeout_ms` |
//! | `"limits": null` | `limits must be an object; omit it to use the defaults` | `limits` |
//! | a limit of 0 | `{field} must be at least 1` | `limits.{field}` |
//!
//! `{Object}` is one of `AgentConfig`, `ModelConfig`, `ModelOptions`, `ToolChoice`,
//! `CollapsingConfig`, `Limits`, `ToolHarnessReference`, `SubAgentConfig`, `McpServerConfig`,
//! `AgentRunConfig`.
//!
//! # Canonical form
//!
//! [`AgentConfig::to_json`] writes the *canonical form*: `serde_json::to_string_pretty` output
//! (two-space indentation, no trailing newline), snake_case keys in the order of the struct
//! fields, sections equal to their defaults left out (`None`, empty lists, the default
//! collapsing and each default collapsing field, the default limits and each default limit, empty `middleware_configs` and `requires_approval`, a sub-agent's
//! default `config`), and a bare string for a harness reference that has only a name.
//! `middleware_configs` keys are written sorted; raw values are written as serde_json writes a
//! [`serde_json::Value`]. `from_json(&c.to_json()) == Ok(c)` for every config this module can
//! parse, and a document in canonical form serializes back byte for byte.
//!
//! Raw values keep every number exactly: the crate enables serde_json's `float_roundtrip`, so
//! a float reads back to the same `f64` that was written.
//!
//! # Other formats
//!
//! The types implement `Deserialize` and `Serialize` with serde's derives on private mirrors
//! of the public types, reading each object's keys through one normalising step as they are
//! read (not through a `serde_json::Value`, which would lose positions and duplicate keys).
//! They use only serde's data model, so configs can also come from other self-describing
//! formats (TOML, YAML, ...) with the same key rules and messages. Harness references and raw
//! values need `deserialize_any`, so non-self-describing formats (bincode) are not supported.
//! Calling a format's deserializer directly gives serde's error without the path; wrap it in
//! `serde_path_to_error` to keep it:
//!
//! ```
//! use hpd_agent::AgentConfig;
//!
//! let value = serde_json::json!({"ToolHarnesses": [{"Name": "MathTools", "Functions": []}]});
//! let err = serde_path_to_error::deserialize::<_, AgentConfig>(value).unwrap_err();
//! assert_eq!(err.path().to_string(), "ToolHarnesses[0].Functions");
//! assert_eq!(err.inner().to_string(), "functions is empty; omit it to expose all functions");
//! ```

mod budget;
mod collapsing;
mod error;
mod fields;
mod limits;
mod mcp;
mod object;
mod output;
mod parse;
mod reference;
mod run;
mod sub_agent;
mod values;

use serde_json::Value;

pub use budget::ContextBudget;
pub use collapsing::{
    CALL_TOOL, CollapsingConfig, CollapsingLayout, DEFAULT_OPEN_AHEAD, OPEN_AHEAD_MAX,
    UnknownLayout,
};
pub use error::{ConfigError, ConfigErrorKind};
pub(crate) use limits::cut_text;
pub use limits::{
    DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_TOOL_RESULT_BYTES,
    DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES, Limits,
};
pub use mcp::{McpAuthConfig, McpServerConfig, McpTransportConfig};
pub use output::OutputSchemaConfig;
pub use reference::ToolHarnessReference;
pub use run::RunConfigData;
pub use sub_agent::SubAgentConfig;

use parse::{parse_text, parse_value, to_canonical_json};

const AGENT_CONFIG: &str = "AgentConfig";

/// An agent described as data: what [`AgentConfig::from_json`] reads and the agent builder
/// starts from.
///
/// Every field has a default (`AgentConfig::default()` is an agent with no name, no
/// instructions, the builder's model and iteration limit, default collapsing, and no tools).
/// It is `#[non_exhaustive]`, so that a release can add a field: outside the crate it is made
/// by [`from_json`](Self::from_json) or `default()`, then set with its `with_*` setters (one per
/// field; those of the lists add one entry) or by assigning its public fields.
/// The JSON format, its key rules and its errors are described in the
/// [module docs](crate::config).
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::ToolHarnessReference;
///
/// let config = AgentConfig::from_json(r#"{
///     "Instructions": "Be brief.",
///     "ToolHarnesses": ["WeatherTools", {"Name": "MathTools", "Functions": ["add"]}]
/// }"#)?;
/// assert_eq!(config.instructions.as_deref(), Some("Be brief."));
/// assert_eq!(config.tool_harnesses[0], ToolHarnessReference::new("WeatherTools"));
/// assert_eq!(
///     config.tool_harnesses[1],
///     ToolHarnessReference::new("MathTools").with_functions(["add"])
/// );
/// assert!(config.collapsing.enabled);
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The agent's name (JSON `name`).
    pub name: Option<String>,
    /// The agent's system instructions (JSON `instructions`).
    pub instructions: Option<String>,
    /// The model to talk to (JSON `model`); `None` leaves the choice to the builder (or, for a
    /// sub-agent, to its parent).
    pub model: Option<ModelConfig>,
    /// The most model requests of one run (JSON `max_iterations`); `None` is the builder's
    /// default.
    pub max_iterations: Option<usize>,
    /// Collapsing settings (JSON `collapsing`).
    pub collapsing: CollapsingConfig,
    /// The harnesses to register, in order (JSON `tool_harnesses`).
    pub tool_harnesses: Vec<ToolHarnessReference>,
    /// Sub-agent tools (JSON `sub_agents`).
    pub sub_agents: Vec<SubAgentConfig>,
    /// MCP servers whose tools become harnesses (JSON `mcp_servers`); connecting them needs
    /// `AgentBuilder::build_async` and the `mcp` cargo feature.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Caps on tool results, tool arguments and concurrent calls (JSON `limits`).
    pub limits: Limits,
    /// The budget of one request's history (JSON `context_budget`); `None` sends the whole
    /// history.
    pub context_budget: Option<ContextBudget>,
    /// The schema every final answer must match (JSON `output_schema`); `None`: plain text
    /// answers.
    pub output_schema: Option<OutputSchemaConfig>,
}

impl AgentConfig {
    /// Parses an agent config from JSON text.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: of kind [`Syntax`](ConfigErrorKind::Syntax) when the text is not JSON
    /// (`invalid AgentConfig JSON: {serde_json message with line and column}`), else of kind
    /// [`Invalid`](ConfigErrorKind::Invalid) with the path of the offending value: an unknown
    /// or duplicate key, a value of the wrong type, `"collapsing": null`, `"functions": []`, a
    /// harness reference without a name.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    ///
    /// let config = AgentConfig::from_json(r#"{"collapsing": {"enabled": false}}"#)?;
    /// assert!(!config.collapsing.enabled);
    ///
    /// let err = AgentConfig::from_json(r#"{"colapsing": {}}"#).unwrap_err();
    /// assert!(err.to_string().contains("unknown key 'colapsing' in AgentConfig"));
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<AgentConfig, ConfigError> {
        parse_text(AGENT_CONFIG, text)
    }

    /// Reads an agent config from a JSON value, with the same rules as
    /// [`from_json`](Self::from_json).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] of kind [`Invalid`](ConfigErrorKind::Invalid), as for
    /// [`from_json`](Self::from_json) but without line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use serde_json::json;
    ///
    /// let config = AgentConfig::from_value(json!({"MaxIterations": 4}))?;
    /// assert_eq!(config.max_iterations, Some(4));
    ///
    /// let err = AgentConfig::from_value(json!({"tool_harnesses": [{"functions": ["add"]}]}))
    ///     .unwrap_err();
    /// assert_eq!(err.path(), "tool_harnesses[0]");
    /// assert!(err.message().contains("missing key 'name'"));
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    pub fn from_value(value: Value) -> Result<AgentConfig, ConfigError> {
        parse_value(AGENT_CONFIG, value)
    }

    /// Writes the config in the canonical form (see the [module docs](crate::config)):
    /// pretty-printed JSON with two-space indentation and no trailing newline, snake_case keys,
    /// defaults left out, name-only harness references as bare strings.
    ///
    /// [`from_json`](Self::from_json) reads the result back to an equal config. A
    /// [`ToolHarnessReference`] built in code with an empty `functions` list, an empty name or
    /// two `middleware_configs` keys that differ only in case (the fields are public; the
    /// helpers do not produce that), or a [`SubAgentConfig`] with an empty name, is written as
    /// it is and is then rejected by `from_json`.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let mut config = AgentConfig::default();
    /// config.instructions = Some("Be brief.".into());
    /// config.tool_harnesses = vec![ToolHarnessReference::new("WeatherTools")];
    /// let json = config.to_json();
    /// assert_eq!(json, "{\n  \"instructions\": \"Be brief.\",\n  \"tool_harnesses\": [\n    \"WeatherTools\"\n  ]\n}");
    /// assert_eq!(AgentConfig::from_json(&json)?, config);
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        to_canonical_json(self)
    }

    /// Sets [`name`](Self::name).
    ///
    /// ```
    /// let config = hpd_agent::AgentConfig::default().with_name("planner");
    /// assert_eq!(config.name.as_deref(), Some("planner"));
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets [`instructions`](Self::instructions).
    ///
    /// ```
    /// let config = hpd_agent::AgentConfig::default().with_instructions("Be brief.");
    /// assert_eq!(config.instructions.as_deref(), Some("Be brief."));
    /// ```
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets [`model`](Self::model).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ModelConfig;
    ///
    /// let model = ModelConfig {
    ///     provider: Some("openai".into()),
    ///     model: Some("gpt-4o-mini".into()),
    ///     ..ModelConfig::default()
    /// };
    /// let config = AgentConfig::default().with_model(model.clone());
    /// assert_eq!(config.model, Some(model));
    /// ```
    #[must_use]
    pub fn with_model(mut self, model: ModelConfig) -> Self {
        self.model = Some(model);
        self
    }

    /// Sets [`max_iterations`](Self::max_iterations).
    ///
    /// ```
    /// let config = hpd_agent::AgentConfig::default().with_max_iterations(4);
    /// assert_eq!(config.max_iterations, Some(4));
    /// ```
    #[must_use]
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Sets [`collapsing`](Self::collapsing).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::CollapsingConfig;
    ///
    /// let config = AgentConfig::default().with_collapsing(CollapsingConfig::default().with_enabled(false));
    /// assert!(!config.collapsing.enabled);
    /// ```
    #[must_use]
    pub fn with_collapsing(mut self, collapsing: CollapsingConfig) -> Self {
        self.collapsing = collapsing;
        self
    }

    /// Adds a harness to [`tool_harnesses`](Self::tool_harnesses), after those already there.
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let config = AgentConfig::default()
    ///     .with_tool_harness(ToolHarnessReference::new("WeatherTools"))
    ///     .with_tool_harness(ToolHarnessReference::new("MathTools").with_functions(["add"]));
    /// assert_eq!(config.tool_harnesses.len(), 2);
    /// assert_eq!(config.tool_harnesses[0].name, "WeatherTools");
    /// ```
    #[must_use]
    pub fn with_tool_harness(mut self, harness: ToolHarnessReference) -> Self {
        self.tool_harnesses.push(harness);
        self
    }

    /// Adds a sub-agent to [`sub_agents`](Self::sub_agents), after those already there.
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::SubAgentConfig;
    ///
    /// let researcher = SubAgentConfig::new("researcher", "Looks things up.", AgentConfig::default());
    /// let config = AgentConfig::default().with_sub_agent(researcher);
    /// assert_eq!(config.sub_agents[0].name, "researcher");
    /// ```
    #[must_use]
    pub fn with_sub_agent(mut self, sub_agent: SubAgentConfig) -> Self {
        self.sub_agents.push(sub_agent);
        self
    }

    /// Adds an MCP server to [`mcp_servers`](Self::mcp_servers), after those already there.
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::McpServerConfig;
    ///
    /// let config = AgentConfig::default()
    ///     .with_mcp_server(McpServerConfig::http("Search", "http://127.0.0.1:3000/mcp"));
    /// assert_eq!(config.mcp_servers[0].name, "Search");
    /// ```
    #[must_use]
    pub fn with_mcp_server(mut self, server: McpServerConfig) -> Self {
        self.mcp_servers.push(server);
        self
    }

    /// Sets [`limits`](Self::limits).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::Limits;
    ///
    /// let config = AgentConfig::default().with_limits(Limits::default().with_max_parallel_calls(1));
    /// assert_eq!(config.limits.max_parallel_calls, 1);
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`context_budget`](Self::context_budget).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ContextBudget;
    ///
    /// let config = AgentConfig::default().with_context_budget(ContextBudget::tokens(8_000));
    /// assert_eq!(config.context_budget, Some(ContextBudget::tokens(8_000)));
    /// ```
    #[must_use]
    pub fn with_context_budget(mut self, budget: ContextBudget) -> Self {
        self.context_budget = Some(budget);
        self
    }

    /// Sets [`output_schema`](Self::output_schema).
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::OutputSchemaConfig;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchemaConfig::new("verdict", json!({"type": "object"}));
    /// let config = AgentConfig::default().with_output_schema(schema.clone());
    /// assert_eq!(config.output_schema, Some(schema));
    /// ```
    #[must_use]
    pub fn with_output_schema(mut self, schema: OutputSchemaConfig) -> Self {
        self.output_schema = Some(schema);
        self
    }
}

impl std::str::FromStr for AgentConfig {
    type Err = ConfigError;

    /// The same as [`AgentConfig::from_json`].
    fn from_str(text: &str) -> Result<Self, ConfigError> {
        AgentConfig::from_json(text)
    }
}

/// Which model an agent talks to (JSON `model`: `provider`, `model`, `base_url`,
/// `deferred_tools`, `options`).
///
/// Every field is optional; what a missing one means is up to the agent builder.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::ModelConfig;
///
/// let config = AgentConfig::from_json(
///     r#"{"model": {"Provider": "openai", "Model": "gpt-4o-mini", "BaseUrl": "http://localhost:11434/v1"}}"#,
/// )?;
/// assert_eq!(
///     config.model,
///     Some(ModelConfig {
///         provider: Some("openai".into()),
///         model: Some("gpt-4o-mini".into()),
///         base_url: Some("http://localhost:11434/v1".into()),
///         deferred_tools: None,
///         options: None,
///     })
/// );
///
/// // A gateway to the Anthropic API, with the mid-conversation tool additions.
/// let config = AgentConfig::from_json(
///     r#"{"model": {"provider": "anthropic", "base_url": "https://gateway.example", "deferred_tools": "tool_additions"}}"#,
/// )?;
/// let model = config.model.unwrap();
/// assert_eq!(model.deferred_tools, Some(hpd_agent::chat::DeferredTools::ToolAdditions));
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelConfig {
    /// The provider, e.g. `openai` (JSON `provider`).
    pub provider: Option<String>,
    /// The model name, e.g. `gpt-4o-mini` (JSON `model`).
    pub model: Option<String>,
    /// The provider's base URL, for OpenAI-compatible servers (JSON `base_url`).
    pub base_url: Option<String>,
    /// The client's form of deferred tool loading, which the `native` collapsing layout maps
    /// onto (JSON `deferred_tools`: `"none"`, `"tool_references"`, `"tool_additions"`,
    /// `"tool_search"`, `"additional_tools"`; see
    /// [`DeferredTools`](crate::chat::DeferredTools)). `None` keeps the client's default for
    /// its host and model (see `AnthropicClient::with_deferred_tools` and
    /// `OpenAiResponsesClient::with_deferred_tools`); a form the provider does not have is a
    /// build error.
    pub deferred_tools: Option<crate::chat::DeferredTools>,
    /// Generation settings sent with every request (JSON `options`: `temperature`, `top_p`,
    /// `max_output_tokens`, `stop` (a string or a list), `seed`, `tool_choice` (`"auto"`,
    /// `"none"`, `"required"` or `{"tool": "name"}`), `parallel_tool_calls`, and `extra`, an
    /// object merged into the request body). Its keys follow the rules of the rest of the
    /// config; `extra` is the user's and kept as written.
    pub options: Option<crate::chat::ModelOptions>,
}
