//! JSON configuration: [`AgentConfig`] and [`RunConfigData`] (the JSON form of
//! `AgentRunConfig`), the pure data and serde layer (SPEC §5, §3.7, §3.10, §8).
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
//!   "model": { "provider": "openai", "model": "gpt-4o-mini" },
//!   "max_iterations": 8,
//!   "collapsing": { "never_collapse": ["WeatherTools"] },
//!   "tool_harnesses": [
//!     "WeatherTools",
//!     { "name": "SearchTools", "config": { "MaxResults": 3 } },
//!     { "name": "DatabaseTools", "functions": ["query"],
//!       "middleware_configs": { "DbAuditMiddleware": { "AuditLevel": "Detailed" } } }
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
//!   ]
//! }
//! ```
//!
//! # Keys
//!
//! The keys of every object this crate defines (the agent config, `model`, `collapsing`,
//! harness references, sub-agent entries, MCP server entries, the run config) are normalised
//! before matching:
//! ASCII letters are lower-cased and `_` is removed, so `ToolHarnesses`, `toolHarnesses`,
//! `toolharnesses` and `tool_harnesses` are one key (`-` is not removed: `tool-harnesses` is
//! unknown). Two keys of one object that normalise alike are an error naming both; an unknown
//! key is an error naming it and listing the known keys in snake_case.
//!
//! Values that belong to the user's types — a reference's `config` and `metadata`, and the
//! values of its `middleware_configs` — are kept as raw [`serde_json::Value`]s, untouched (their
//! keys are not normalised); the keys of `middleware_configs` are middleware type names, kept as
//! written (two that differ only in case are an error, since the build matches them
//! case-insensitively). The keys of an MCP server's `env` and `headers` are kept as written too.
//!
//! # Values
//!
//! - `null` means "absent" for the optional values of this crate (`name`, `instructions`,
//!   `model`, its fields, `max_iterations`, a reference's `functions`, the run config's
//!   `additional_instructions` and `max_iterations`). A reference's `config` and `metadata` are
//!   the user's values: `"config": null` is kept as `Some(Value::Null)` and handed to the config
//!   type as it is; omit the key to give none.
//! - `"collapsing": null` fails with `collapsing must be an object; omit it to use the default`.
//!   List and map values (`tool_harnesses`, `never_collapse`, `sub_agents`, `parent_functions`,
//!   `middleware_configs`) and booleans do not accept `null`: serde's type error.
//! - A harness reference is a non-empty string (the harness name) or an object with a
//!   non-empty `name`. `functions` omitted or `null` exposes all functions;
//!   `[]` fails with `functions is empty; omit it to expose all functions`.
//! - A sub-agent entry needs a non-empty `name` and a `description`; `config` (an agent config)
//!   defaults to the empty config and `parent_functions` to `[]`.
//! - An MCP server entry needs a non-empty `name` and exactly one of `command` (a stdio server,
//!   with optional `args` and `env`) and `url` (a streamable HTTP server, with optional
//!   `headers`). `collapse` defaults to `true`; `functions` follows the rules of a reference's
//!   `functions`; `timeout_ms` (`null` is absent) must be at least 1. Connecting the servers
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
//! | sub-agent without name / description | `missing key 'name' in SubAgentConfig; ...`, `missing key 'description' in SubAgentConfig; ...` | the entry |
//! | empty sub-agent name | `sub-agent name is empty` | the name |
//! | middleware keys equal but for case | `duplicate key in middleware_configs: '{first}' and '{second}' name the same middleware (names match case-insensitively)` | `...middleware_configs` |
//! | `collapsing` in a run config | `collapsing belongs to AgentConfig, not AgentRunConfig` | `.` |
//! | MCP server without name | `missing key 'name' in McpServerConfig; give the harness name` | the entry |
//! | MCP server without command and url | `missing key 'command' or 'url' in McpServerConfig; give 'command' for a stdio server or 'url' for an HTTP server` | the entry |
//! | MCP server with both | `McpServerConfig has both 'command' and 'url'; give 'command' for a stdio server or 'url' for an HTTP server` | the entry |
//! | `headers` with `command`, `args`/`env` with `url` | `'headers' belongs to an HTTP server ('url'), not to a stdio server ('command')` (and the converse) | the entry |
//! | `"timeout_ms": 0` | `timeout_ms must be at least 1` | `...timeout_ms` |
//!
//! `{Object}` is one of `AgentConfig`, `ModelConfig`, `CollapsingConfig`,
//! `ToolHarnessReference`, `SubAgentConfig`, `McpServerConfig`, `AgentRunConfig`.
//!
//! # Canonical form
//!
//! [`AgentConfig::to_json`] writes the *canonical form*: `serde_json::to_string_pretty` output
//! (two-space indentation, no trailing newline), snake_case keys in the order of the struct
//! fields, sections equal to their defaults left out (`None`, empty lists, the default
//! collapsing and each default collapsing field, empty `middleware_configs`, a sub-agent's
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
//! The types implement `Deserialize` and `Serialize` by hand, using only serde's data model,
//! so configs can also come from other self-describing formats (TOML, YAML, ...) with the same
//! key rules and messages. Harness references and raw values need `deserialize_any`, so
//! non-self-describing formats (bincode) are not supported. Calling a format's deserializer
//! directly gives serde's error without the path; wrap it in `serde_path_to_error` to keep it:
//!
//! ```
//! use hpd_agent::AgentConfig;
//!
//! let value = serde_json::json!({"ToolHarnesses": [{"Name": "MathTools", "Functions": []}]});
//! let err = serde_path_to_error::deserialize::<_, AgentConfig>(value).unwrap_err();
//! assert_eq!(err.path().to_string(), "ToolHarnesses[0].Functions");
//! assert_eq!(err.inner().to_string(), "functions is empty; omit it to expose all functions");
//! ```

mod de;
mod error;
mod mcp;
mod ser;

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;

pub use error::{ConfigError, ConfigErrorKind};
pub use mcp::{McpServerConfig, McpTransportConfig};

const AGENT_CONFIG: &str = "AgentConfig";
const AGENT_RUN_CONFIG: &str = "AgentRunConfig";
const TOOL_HARNESS_REFERENCE: &str = "ToolHarnessReference";

/// An agent described as data: what [`AgentConfig::from_json`] reads and the agent builder
/// starts from.
///
/// Every field has a default (`AgentConfig::default()` is an agent with no name, no
/// instructions, the builder's model and iteration limit, default collapsing, and no tools).
/// The JSON format, its key rules and its errors are described in the
/// [module docs](crate::config).
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, ToolHarnessReference};
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
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// Collapsing settings (JSON `collapsing`, SPEC §3.7).
    pub collapsing: CollapsingConfig,
    /// The harnesses to register, in order (JSON `tool_harnesses`).
    pub tool_harnesses: Vec<ToolHarnessReference>,
    /// Sub-agent tools (JSON `sub_agents`, SPEC §8).
    pub sub_agents: Vec<SubAgentConfig>,
    /// MCP servers whose tools become harnesses (JSON `mcp_servers`); connecting them needs
    /// `AgentBuilder::build_async` and the `mcp` cargo feature.
    pub mcp_servers: Vec<McpServerConfig>,
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
    /// # Ok::<(), hpd_agent::ConfigError>(())
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
    /// # Ok::<(), hpd_agent::ConfigError>(())
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
    /// use hpd_agent::{AgentConfig, ToolHarnessReference};
    ///
    /// let config = AgentConfig {
    ///     instructions: Some("Be brief.".into()),
    ///     tool_harnesses: vec![ToolHarnessReference::new("WeatherTools")],
    ///     ..AgentConfig::default()
    /// };
    /// let json = config.to_json();
    /// assert_eq!(json, "{\n  \"instructions\": \"Be brief.\",\n  \"tool_harnesses\": [\n    \"WeatherTools\"\n  ]\n}");
    /// assert_eq!(AgentConfig::from_json(&json)?, config);
    /// # Ok::<(), hpd_agent::ConfigError>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        to_canonical_json(self)
    }
}

impl std::str::FromStr for AgentConfig {
    type Err = ConfigError;

    /// The same as [`AgentConfig::from_json`].
    fn from_str(text: &str) -> Result<Self, ConfigError> {
        AgentConfig::from_json(text)
    }
}

/// Which model an agent talks to (JSON `model`: `provider`, `model`, `base_url`).
///
/// Every field is optional; what a missing one means is up to the agent builder.
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, ModelConfig};
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
///     })
/// );
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelConfig {
    /// The provider, e.g. `openai` (JSON `provider`).
    pub provider: Option<String>,
    /// The model name, e.g. `gpt-4o-mini` (JSON `model`).
    pub model: Option<String>,
    /// The provider's base URL, for OpenAI-compatible servers (JSON `base_url`).
    pub base_url: Option<String>,
}

/// How harnesses collapse behind containers (SPEC §3.7; JSON `collapsing`).
///
/// The default has collapsing and recovery on, recovered calls not executed, expansions
/// cleared at turn end, and no never-collapsed harness.
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, CollapsingConfig};
///
/// let config = AgentConfig::from_json(r#"{"collapsing": {"never_collapse": ["WeatherTools"]}}"#)?;
/// assert_eq!(
///     config.collapsing,
///     CollapsingConfig { never_collapse: vec!["WeatherTools".into()], ..CollapsingConfig::default() }
/// );
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CollapsingConfig {
    /// Collapsing on or off (JSON `enabled`, default `true`).
    pub enabled: bool,
    /// Harnesses (names matched case-insensitively; unknown names ignored) whose members are
    /// always visible and whose container never appears (JSON `never_collapse`, default `[]`).
    pub never_collapse: Vec<String>,
    /// Whether a call of a hidden member expands its container (JSON `recovery`, default
    /// `true`).
    pub recovery: bool,
    /// Whether a recovered call is executed right after the expansion (JSON
    /// `execute_recovered_calls`, default `false`).
    pub execute_recovered_calls: bool,
    /// Whether expansions and their instructions persist across the turns of a session (JSON
    /// `persist_system_prompt_injections`, default `false`).
    pub persist_system_prompt_injections: bool,
}

impl Default for CollapsingConfig {
    /// `enabled: true`, `never_collapse: []`, `recovery: true`,
    /// `execute_recovered_calls: false`, `persist_system_prompt_injections: false`.
    fn default() -> Self {
        CollapsingConfig {
            enabled: true,
            never_collapse: Vec::new(),
            recovery: true,
            execute_recovered_calls: false,
            persist_system_prompt_injections: false,
        }
    }
}

impl CollapsingConfig {
    /// Whether this is [`CollapsingConfig::default()`] (then serialization leaves it out).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::CollapsingConfig;
    ///
    /// assert!(CollapsingConfig::default().is_default());
    /// assert!(!CollapsingConfig { enabled: false, ..CollapsingConfig::default() }.is_default());
    /// ```
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == CollapsingConfig::default()
    }
}

/// One harness to register, by name (SPEC §5.2; an entry of JSON `tool_harnesses`).
///
/// In JSON it is either a string (the harness name, all functions) or an object with `name`,
/// `functions`, `config`, `metadata` and `middleware_configs`. The raw values are handed to the
/// harness's config type, its metadata type and its scoped middleware configs when the agent
/// is built.
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, ToolHarnessReference};
/// use serde_json::json;
///
/// let config = AgentConfig::from_json(r#"{"tool_harnesses": [
///     {"Name": "DatabaseTools", "Functions": ["query"],
///      "MiddlewareConfigs": {"DbAuditMiddleware": {"AuditLevel": "Detailed"}}}
/// ]}"#)?;
/// assert_eq!(
///     config.tool_harnesses[0],
///     ToolHarnessReference::new("DatabaseTools")
///         .with_functions(["query"])
///         .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"}))
/// );
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHarnessReference {
    /// The harness name (matched case-insensitively at build; JSON `name`).
    pub name: String,
    /// The functions to expose; `None` exposes all (JSON `functions`; `[]` is rejected when
    /// parsing).
    pub functions: Option<Vec<String>>,
    /// The raw config for the harness's config constructor (JSON `config`; a JSON `null` is
    /// `Some(Value::Null)`, only an omitted key is `None`).
    pub config: Option<Value>,
    /// The raw metadata for the harness's metadata type (JSON `metadata`; a JSON `null` is
    /// `Some(Value::Null)`, only an omitted key is `None`).
    pub metadata: Option<Value>,
    /// Raw configs of the harness's scoped middleware, keyed by middleware type name as written
    /// (JSON `middleware_configs`).
    pub middleware_configs: BTreeMap<String, Value>,
}

impl ToolHarnessReference {
    /// A reference to all functions of the harness `name`, with no config or metadata.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    ///
    /// let reference = ToolHarnessReference::new("WeatherTools");
    /// assert_eq!(reference.name, "WeatherTools");
    /// assert!(reference.is_name_only());
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        ToolHarnessReference {
            name: name.into(),
            functions: None,
            config: None,
            metadata: None,
            middleware_configs: BTreeMap::new(),
        }
    }

    /// Exposes only these functions (replacing an earlier selection). An empty selection is
    /// kept as it is and rejected by the build and by [`AgentConfig::from_json`].
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    ///
    /// let reference = ToolHarnessReference::new("WeatherTools").with_functions(["get_weather"]);
    /// assert_eq!(reference.functions, Some(vec!["get_weather".to_owned()]));
    /// ```
    #[must_use]
    pub fn with_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.functions = Some(functions.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the raw config for the harness's config constructor.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("SearchTools").with_config(json!({"MaxResults": 3}));
    /// assert_eq!(reference.config, Some(json!({"MaxResults": 3})));
    /// ```
    #[must_use]
    pub fn with_config(mut self, config: Value) -> Self {
        self.config = Some(config);
        self
    }

    /// Sets the raw metadata for the harness's metadata type.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("SearchTools")
    ///     .with_metadata(json!({"DefaultProvider": "brave", "HasTavilyProvider": false}));
    /// assert!(reference.metadata.is_some());
    /// ```
    #[must_use]
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Sets the raw config of one scoped middleware, keyed by its type name. Middleware names
    /// match case-insensitively (as at build), so this replaces an earlier config whose key
    /// differs only in case; the new key is kept as written.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("DatabaseTools")
    ///     .with_middleware_config("dbauditmiddleware", json!({}))
    ///     .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"}));
    /// assert_eq!(reference.middleware_configs.len(), 1);
    /// assert_eq!(reference.middleware_configs["DbAuditMiddleware"], json!({"AuditLevel": "Detailed"}));
    /// ```
    #[must_use]
    pub fn with_middleware_config(mut self, middleware: impl Into<String>, config: Value) -> Self {
        let middleware = middleware.into();
        let folded = middleware.to_ascii_lowercase();
        self.middleware_configs
            .retain(|name, _| name.to_ascii_lowercase() != folded);
        self.middleware_configs.insert(middleware, config);
        self
    }

    /// Parses one harness reference from JSON text (a string or an object), with the rules of
    /// a `tool_harnesses` entry; for example the argument of a builder override read from a
    /// file.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] whose document is `ToolHarnessReference`: the text is not JSON
    /// (`invalid ToolHarnessReference JSON: ...`), or the reference is invalid (no name, an
    /// empty name, `"functions": []`, an unknown or duplicate key, a wrong value type).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    ///
    /// let reference =
    ///     ToolHarnessReference::from_json(r#"{"Name": "WeatherTools", "Functions": ["get_forecast"]}"#)?;
    /// assert_eq!(reference, ToolHarnessReference::new("WeatherTools").with_functions(["get_forecast"]));
    ///
    /// let err = ToolHarnessReference::from_json(r#"{"Name": "WeatherTools", "Functions": []}"#)
    ///     .unwrap_err();
    /// assert_eq!(err.path(), "Functions");
    /// # Ok::<(), hpd_agent::ConfigError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<ToolHarnessReference, ConfigError> {
        parse_text(TOOL_HARNESS_REFERENCE, text)
    }

    /// Reads one harness reference from a JSON value, with the rules of
    /// [`from_json`](Self::from_json).
    ///
    /// # Errors
    ///
    /// As for [`from_json`](Self::from_json), without line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::from_value(json!("MathTools"))?;
    /// assert_eq!(reference, ToolHarnessReference::new("MathTools"));
    /// assert!(ToolHarnessReference::from_value(json!({"functions": ["add"]})).is_err());
    /// # Ok::<(), hpd_agent::ConfigError>(())
    /// ```
    pub fn from_value(value: Value) -> Result<ToolHarnessReference, ConfigError> {
        parse_value(TOOL_HARNESS_REFERENCE, value)
    }

    /// Whether the reference has only a name (then it serializes as a bare string).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::ToolHarnessReference;
    ///
    /// assert!(ToolHarnessReference::new("MathTools").is_name_only());
    /// assert!(!ToolHarnessReference::new("MathTools").with_functions(["add"]).is_name_only());
    /// ```
    #[must_use]
    pub fn is_name_only(&self) -> bool {
        self.functions.is_none()
            && self.config.is_none()
            && self.metadata.is_none()
            && self.middleware_configs.is_empty()
    }
}

impl From<&str> for ToolHarnessReference {
    /// The same as [`ToolHarnessReference::new`].
    fn from(name: &str) -> Self {
        ToolHarnessReference::new(name)
    }
}

impl From<String> for ToolHarnessReference {
    /// The same as [`ToolHarnessReference::new`].
    fn from(name: String) -> Self {
        ToolHarnessReference::new(name)
    }
}

/// A sub-agent tool described as data (SPEC §8; an entry of JSON `sub_agents`).
///
/// JSON: `{"name", "description", "config": {AgentConfig}, "parent_functions": [...]}`; `name`
/// (non-empty) and `description` are required, `config` defaults to the empty config and
/// `parent_functions` to `[]`.
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, SubAgentConfig};
///
/// let config = AgentConfig::from_json(r#"{"SubAgents": [{
///     "Name": "researcher",
///     "Description": "Looks things up.",
///     "Config": {"Instructions": "Be thorough.", "ToolHarnesses": ["SearchTools"]},
///     "ParentFunctions": ["DatabaseTools.query"]
/// }]}"#)?;
/// let sub_agent: &SubAgentConfig = &config.sub_agents[0];
/// assert_eq!(sub_agent.name, "researcher");
/// assert_eq!(sub_agent.config.instructions.as_deref(), Some("Be thorough."));
/// assert_eq!(sub_agent.parent_functions, ["DatabaseTools.query"]);
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentConfig {
    /// The tool name the parent sees (JSON `name`).
    pub name: String,
    /// The tool description the parent sees (JSON `description`).
    pub description: String,
    /// The child agent's own config (JSON `config`).
    pub config: Box<AgentConfig>,
    /// `Harness.function` references of the parent's functions the child may call (JSON
    /// `parent_functions`).
    pub parent_functions: Vec<String>,
}

impl SubAgentConfig {
    /// A sub-agent with no parent functions.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgentConfig};
    ///
    /// let sub_agent = SubAgentConfig::new("researcher", "Looks things up.", AgentConfig::default());
    /// assert!(sub_agent.parent_functions.is_empty());
    /// ```
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        config: AgentConfig,
    ) -> Self {
        SubAgentConfig {
            name: name.into(),
            description: description.into(),
            config: Box::new(config),
            parent_functions: Vec::new(),
        }
    }

    /// Hands these functions of the parent (`Harness.function` references) to the child,
    /// replacing an earlier list.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgentConfig};
    ///
    /// let sub_agent = SubAgentConfig::new("db", "Queries the database.", AgentConfig::default())
    ///     .with_parent_functions(["DatabaseTools.query"]);
    /// assert_eq!(sub_agent.parent_functions, ["DatabaseTools.query"]);
    /// ```
    #[must_use]
    pub fn with_parent_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parent_functions = functions.into_iter().map(Into::into).collect();
        self
    }
}

/// The JSON form of `AgentRunConfig` (SPEC §3.10): harnesses, instructions and an iteration
/// limit for one run.
///
/// Keys: `tool_harnesses` (harness references as in [`AgentConfig`]), `additional_instructions`
/// and `max_iterations`, normalised as in [`AgentConfig`]. There are no collapsing settings: a
/// `collapsing` key fails with `collapsing belongs to AgentConfig, not AgentRunConfig`.
///
/// # Examples
///
/// ```
/// use hpd_agent::{RunConfigData, ToolHarnessReference};
///
/// let run = RunConfigData::from_json(
///     r#"{"ToolHarnesses": ["WeatherTools"], "AdditionalInstructions": "Answer in French."}"#,
/// )?;
/// assert_eq!(run.tool_harnesses, [ToolHarnessReference::new("WeatherTools")]);
/// assert_eq!(run.additional_instructions.as_deref(), Some("Answer in French."));
/// assert_eq!(run.max_iterations, None);
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunConfigData {
    /// Harnesses added for the run (JSON `tool_harnesses`).
    pub tool_harnesses: Vec<ToolHarnessReference>,
    /// Appended to the agent's instructions after a blank line, for the run only (JSON
    /// `additional_instructions`).
    pub additional_instructions: Option<String>,
    /// The iteration limit of the run (JSON `max_iterations`).
    pub max_iterations: Option<usize>,
}

impl RunConfigData {
    /// Parses a run config from JSON text.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: `invalid AgentRunConfig JSON: {serde_json message}` when the text is
    /// not JSON; otherwise an unknown or duplicate key, a `collapsing` key
    /// (`collapsing belongs to AgentConfig, not AgentRunConfig`), a wrong value type, or a bad
    /// harness reference, with the path of the offending value.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::RunConfigData;
    ///
    /// let run = RunConfigData::from_json(r#"{"max_iterations": 3}"#)?;
    /// assert_eq!(run.max_iterations, Some(3));
    ///
    /// let err = RunConfigData::from_json(r#"{"collapsing": {"enabled": false}}"#).unwrap_err();
    /// assert!(err.to_string().contains("collapsing belongs to AgentConfig, not AgentRunConfig"));
    /// # Ok::<(), hpd_agent::ConfigError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<RunConfigData, ConfigError> {
        parse_text(AGENT_RUN_CONFIG, text)
    }

    /// Reads a run config from a JSON value, with the same rules as
    /// [`from_json`](Self::from_json).
    ///
    /// # Errors
    ///
    /// As for [`from_json`](Self::from_json), without line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::RunConfigData;
    /// use serde_json::json;
    ///
    /// let run = RunConfigData::from_value(json!({"tool_harnesses": ["MathTools"]}))?;
    /// assert_eq!(run.tool_harnesses[0].name, "MathTools");
    /// # Ok::<(), hpd_agent::ConfigError>(())
    /// ```
    pub fn from_value(value: Value) -> Result<RunConfigData, ConfigError> {
        parse_value(AGENT_RUN_CONFIG, value)
    }

    /// Writes the run config in the canonical form of [`AgentConfig::to_json`].
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::RunConfigData;
    ///
    /// let run = RunConfigData { max_iterations: Some(2), ..RunConfigData::default() };
    /// assert_eq!(run.to_json(), "{\n  \"max_iterations\": 2\n}");
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        to_canonical_json(self)
    }
}

/// Parses `text` as `T`, reporting syntax errors before anything else.
fn parse_text<T: DeserializeOwned>(document: &'static str, text: &str) -> Result<T, ConfigError> {
    // First the whole text is checked to be JSON, so that "not JSON" is reported as such even
    // when a configuration mistake comes first. Configs are small: the second pass is cheap.
    serde_json::from_str::<IgnoredAny>(text).map_err(|err| ConfigError::syntax(document, &err))?;
    // Then the typed pass reads the text itself (not a `Value`), so errors keep line and column.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|err| ConfigError::from_tracked(document, err))?;
    deserializer
        .end()
        .map_err(|err| ConfigError::syntax(document, &err))?;
    Ok(parsed)
}

fn parse_value<T: DeserializeOwned>(
    document: &'static str,
    value: Value,
) -> Result<T, ConfigError> {
    // The same nesting limit as JSON text has, so whatever `from_value` accepts, `to_json`
    // writes and `from_json` reads back.
    if let Some(path) = too_deep(&value, 0) {
        return Err(ConfigError::too_deep(document, path));
    }
    serde_path_to_error::deserialize(value).map_err(|err| ConfigError::from_tracked(document, err))
}

/// serde_json's recursion limit for JSON text.
const MAX_DEPTH: usize = 127;

/// The path of the first value nested deeper than [`MAX_DEPTH`] arrays and objects.
fn too_deep(value: &Value, depth: usize) -> Option<String> {
    let children: Box<dyn Iterator<Item = (String, &Value)>> = match value {
        Value::Array(items) => {
            Box::new(items.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)))
        }
        Value::Object(map) => Box::new(map.iter().map(|(k, v)| (format!(".{k}"), v))),
        _ => return None,
    };
    if depth >= MAX_DEPTH {
        return Some(String::new());
    }
    for (step, child) in children {
        if let Some(rest) = too_deep(child, depth + 1) {
            return Some(format!("{step}{rest}"));
        }
    }
    None
}

fn to_canonical_json(value: &impl serde::Serialize) -> String {
    // Every key these impls write is a string and a `Value` always serializes, so this cannot
    // fail.
    serde_json::to_string_pretty(value).expect("a configuration always serializes to JSON")
}
