//! The serde form of the config types: private mirror structs carry the derives, so the public
//! types keep their shape and the format is stated in one place.
//!
//! Most mirrors are serde remote definitions: `#[serde(remote = "AgentConfig")]` on
//! `AgentDef` derives functions that read and write an `AgentConfig` itself. The derived
//! reader builds the public struct naming every field, so a field added to a public type and
//! not to its mirror does not compile. The three objects that differ from their types (the seed's
//! `cache_stable` key of [`CollapsingConfig`], the transport of [`McpServerConfig`], the
//! `{"tool": name}` form of [`ToolChoice`]) have plain mirrors, converted to and from the
//! public types by destructuring them whole, for the same reason.
//!
//! Every `Deserialize` impl goes through [`object::deserialize`] (keys normalised as they are
//! read, required keys, `null` for sections); the derives then see snake_case keys only and
//! deny unknown ones. Every `Serialize` impl writes the canonical form: snake_case keys in field
//! order, values equal to their defaults left out.

use std::collections::BTreeMap;

use serde::de;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::limits::{
    DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_TOOL_RESULT_BYTES,
    DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES,
};
use super::object::{self, ConfigObject, ReadStr};
// The field readers and predicates named in the `serde` attributes.
use super::values::*;
use super::{
    AgentConfig, CollapsingConfig, CollapsingLayout, Limits, McpAuthConfig, McpServerConfig,
    McpTransportConfig, ModelConfig, OutputSchemaConfig, RunConfigData, SubAgentConfig,
    ToolHarnessReference,
};
use crate::chat::{ModelOptions, ToolChoice};
use crate::config::{ContextBudget, DEFAULT_OPEN_AHEAD};

/// `Deserialize` through [`object::deserialize`], for each [`ConfigObject`].
macro_rules! deserialize_as_object {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                object::deserialize(deserializer)
            }
        }
    )*};
}

deserialize_as_object!(
    AgentConfig,
    ModelConfig,
    ModelOptions,
    CollapsingConfig,
    Limits,
    ContextBudget,
    ToolHarnessReference,
    SubAgentConfig,
    RunConfigData,
    McpServerConfig,
    McpAuthConfig,
    OutputSchemaConfig,
    ToolChoiceValue,
);

/// `Serialize` by the remote mirror's derived writer.
macro_rules! serialize_by {
    ($($ty:ty => $mirror:ident),* $(,)?) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $mirror::serialize(self, serializer)
            }
        }
    )*};
}

serialize_by!(
    AgentConfig => AgentDef,
    ModelConfig => ModelDef,
    ModelOptions => OptionsDef,
    Limits => LimitsDef,
    ContextBudget => BudgetDef,
    SubAgentConfig => SubAgentDef,
    RunConfigData => RunDef,
    McpAuthConfig => AuthDef,
    OutputSchemaConfig => OutputDef,
);

// ---------------------------------------------------------------------------------------------
// AgentConfig, ModelConfig, ModelOptions

#[derive(Serialize, Deserialize)]
#[serde(remote = "AgentConfig", rename = "AgentConfig")]
#[serde(deny_unknown_fields, default = "AgentConfig::default")]
struct AgentDef {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<ModelConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_iterations: Option<usize>,
    #[serde(skip_serializing_if = "is_default")]
    collapsing: CollapsingConfig,
    #[serde(deserialize_with = "harness_references")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_harnesses: Vec<ToolHarnessReference>,
    #[serde(deserialize_with = "sub_agents")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sub_agents: Vec<SubAgentConfig>,
    #[serde(deserialize_with = "mcp_servers")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mcp_servers: Vec<McpServerConfig>,
    #[serde(skip_serializing_if = "is_default")]
    limits: Limits,
    #[serde(deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    context_budget: Option<ContextBudget>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<OutputSchemaConfig>,
}

impl ConfigObject for AgentConfig {
    const EXPECTING: &'static str = "an AgentConfig object";

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        AgentDef::deserialize(deserializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "ModelConfig", rename = "ModelConfig")]
#[serde(deny_unknown_fields, default = "ModelConfig::default")]
struct ModelDef {
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deferred_tools: Option<crate::chat::DeferredTools>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<ModelOptions>,
}

impl ConfigObject for ModelConfig {
    const EXPECTING: &'static str = "a model object (provider, model, base_url, deferred_tools)";

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ModelDef::deserialize(deserializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "ModelOptions", rename = "ModelOptions")]
#[serde(deny_unknown_fields, default = "ModelOptions::default")]
struct OptionsDef {
    #[serde(deserialize_with = "temperature")]
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(deserialize_with = "top_p")]
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(deserialize_with = "max_output_tokens")]
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(deserialize_with = "stop")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(deserialize_with = "tool_choice")]
    #[serde(
        serialize_with = "write_tool_choice",
        skip_serializing_if = "Option::is_none"
    )]
    tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(deserialize_with = "extra")]
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

impl ConfigObject for ModelOptions {
    const EXPECTING: &'static str =
        "a model options object (temperature, top_p, max_output_tokens, stop, ...)";

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        OptionsDef::deserialize(deserializer)
    }
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` (ASCII case ignored) or `{"tool": name}`.
pub(super) struct ToolChoiceValue(ToolChoice);

/// The object form of [`ToolChoice`].
#[derive(Serialize, Deserialize)]
#[serde(rename = "ToolChoice", deny_unknown_fields)]
struct ToolChoiceFields {
    #[serde(deserialize_with = "tool_name")]
    tool: String,
}

impl ConfigObject for ToolChoiceValue {
    const EXPECTING: &'static str = r#""auto", "none", "required" or {"tool": "name"}"#;
    const FROM_STR: Option<ReadStr<Self>> = Some(|value| {
        let choice = match value.to_ascii_lowercase().as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => {
                return Err(format!(
                    "unknown tool_choice '{value}'; expected \"auto\", \"none\", \"required\" \
                     or {{\"tool\": \"name\"}}"
                ));
            }
        };
        Ok(ToolChoiceValue(choice))
    });
    const REQUIRED: &'static [(&'static str, &'static str)] =
        &[("tool", "name the tool the model must call")];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ToolChoiceFields { tool } = ToolChoiceFields::deserialize(deserializer)?;
        Ok(ToolChoiceValue(ToolChoice::Tool(tool)))
    }
}

/// `model.options.tool_choice`; `null` is none.
fn tool_choice<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<ToolChoice>, D::Error> {
    Ok(Option::<ToolChoiceValue>::deserialize(deserializer)?.map(|choice| choice.0))
}

/// Writes `model.options.tool_choice` as it is read.
fn write_tool_choice<S: Serializer>(
    choice: &Option<ToolChoice>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let tool = match choice {
        None => return serializer.serialize_none(),
        Some(ToolChoice::Auto) => return serializer.serialize_str("auto"),
        Some(ToolChoice::None) => return serializer.serialize_str("none"),
        Some(ToolChoice::Required) => return serializer.serialize_str("required"),
        Some(ToolChoice::Tool(tool)) => tool.clone(),
    };
    ToolChoiceFields { tool }.serialize(serializer)
}

// ---------------------------------------------------------------------------------------------
// CollapsingConfig, Limits, ContextBudget

/// `collapsing`: each key present or absent (`null` is not absent), so that reading leaves the
/// defaults to [`CollapsingConfig::default`] and writing leaves them out.
#[derive(Serialize, Deserialize)]
#[serde(rename = "CollapsingConfig", deny_unknown_fields)]
struct CollapsingFields {
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    enabled: Option<bool>,
    #[serde(default, deserialize_with = "harness_names")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    never_collapse: Vec<String>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    recovery: Option<bool>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    execute_recovered_calls: Option<bool>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    keep_expansions_across_turns: Option<bool>,
    /// The old name of `keep_expansions_across_turns`: read, never written.
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing)]
    persist_system_prompt_injections: Option<bool>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    layout: Option<CollapsingLayout>,
    /// The seed's name of `"layout": "append"`: read, never written.
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing)]
    cache_stable: Option<bool>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    open_ahead: Option<OpenAhead>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    container_notes: Option<bool>,
}

/// `collapsing.open_ahead`: a score, `true` for the default score, or `false` for off.
#[derive(Serialize, Deserialize)]
#[serde(untagged, expecting = "a score (a number), true or false")]
enum OpenAhead {
    Switch(bool),
    Score(f64),
}

impl ConfigObject for CollapsingConfig {
    const EXPECTING: &'static str = r#"a collapsing object such as {"enabled": false}"#;
    const NULL: Option<&'static str> =
        Some("collapsing must be an object; omit it to use the default");

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let CollapsingFields {
            enabled,
            never_collapse,
            recovery,
            execute_recovered_calls,
            keep_expansions_across_turns,
            persist_system_prompt_injections,
            layout,
            cache_stable,
            open_ahead,
            container_notes,
        } = CollapsingFields::deserialize(deserializer)?;
        let default = CollapsingConfig::default();
        let keep_expansions_across_turns = match (
            keep_expansions_across_turns,
            persist_system_prompt_injections,
        ) {
            (Some(new), Some(old)) if new != old => {
                return Err(de::Error::custom(format_args!(
                    "persist_system_prompt_injections ({old}) contradicts \
                     keep_expansions_across_turns ({new}); persist_system_prompt_injections is \
                     the old name of keep_expansions_across_turns: give the new name alone"
                )));
            }
            (new, old) => new.or(old),
        };
        let layout = match (layout, cache_stable) {
            (Some(layout), None) => layout,
            (None, Some(true)) => CollapsingLayout::Append,
            // The seed's `cache_stable: false` meant its default, `hide`.
            (None, Some(false)) => CollapsingLayout::Hide,
            (None, None) => default.layout,
            (Some(layout), Some(stable)) => {
                if stable != (layout == CollapsingLayout::Append) {
                    return Err(de::Error::custom(format_args!(
                        "cache_stable ({stable}) contradicts layout \"{layout}\"; \
                         cache_stable is the old name of layout \"append\": give layout alone"
                    )));
                }
                layout
            }
        };
        Ok(CollapsingConfig {
            enabled: enabled.unwrap_or(default.enabled),
            never_collapse,
            recovery: recovery.unwrap_or(default.recovery),
            execute_recovered_calls: execute_recovered_calls
                .unwrap_or(default.execute_recovered_calls),
            keep_expansions_across_turns: keep_expansions_across_turns
                .unwrap_or(default.keep_expansions_across_turns),
            layout,
            open_ahead: match open_ahead {
                None => default.open_ahead,
                Some(OpenAhead::Switch(false)) => None,
                Some(OpenAhead::Switch(true)) => Some(DEFAULT_OPEN_AHEAD),
                Some(OpenAhead::Score(score)) if score.is_finite() && score >= 0.0 => Some(score),
                Some(OpenAhead::Score(score)) => {
                    return Err(de::Error::custom(format_args!(
                        "open_ahead must be a score of 0 or more, true or false; got {score}"
                    )));
                }
            },
            container_notes: container_notes.unwrap_or(default.container_notes),
        })
    }
}

impl Serialize for CollapsingConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let CollapsingConfig {
            enabled,
            never_collapse,
            recovery,
            execute_recovered_calls,
            keep_expansions_across_turns,
            layout,
            open_ahead,
            container_notes,
        } = self.clone();
        let default = CollapsingConfig::default();
        CollapsingFields {
            enabled: changed(enabled, default.enabled),
            never_collapse,
            recovery: changed(recovery, default.recovery),
            execute_recovered_calls: changed(
                execute_recovered_calls,
                default.execute_recovered_calls,
            ),
            keep_expansions_across_turns: changed(
                keep_expansions_across_turns,
                default.keep_expansions_across_turns,
            ),
            persist_system_prompt_injections: None,
            layout: changed(layout, default.layout),
            cache_stable: None,
            open_ahead: (open_ahead != default.open_ahead)
                .then_some(open_ahead.map_or(OpenAhead::Switch(false), OpenAhead::Score)),
            container_notes: changed(container_notes, default.container_notes),
        }
        .serialize(serializer)
    }
}

/// `value` unless it is `default`: what the canonical form writes.
fn changed<T: PartialEq>(value: T, default: T) -> Option<T> {
    (value != default).then_some(value)
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "Limits", rename = "Limits")]
#[serde(deny_unknown_fields, default = "Limits::default")]
struct LimitsDef {
    #[serde(deserialize_with = "max_tool_result_bytes")]
    #[serde(skip_serializing_if = "equals::<DEFAULT_MAX_TOOL_RESULT_BYTES>")]
    max_tool_result_bytes: usize,
    #[serde(deserialize_with = "max_tool_result_media_bytes")]
    #[serde(skip_serializing_if = "equals::<DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES>")]
    max_tool_result_media_bytes: usize,
    #[serde(deserialize_with = "max_argument_bytes")]
    #[serde(skip_serializing_if = "equals::<DEFAULT_MAX_ARGUMENT_BYTES>")]
    max_argument_bytes: usize,
    #[serde(deserialize_with = "max_parallel_calls")]
    #[serde(skip_serializing_if = "equals::<DEFAULT_MAX_PARALLEL_CALLS>")]
    max_parallel_calls: usize,
}

impl ConfigObject for Limits {
    const EXPECTING: &'static str = r#"a limits object such as {"max_parallel_calls": 4}"#;
    const NULL: Option<&'static str> =
        Some("limits must be an object; omit it to use the defaults");

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        LimitsDef::deserialize(deserializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "ContextBudget", rename = "ContextBudget")]
#[serde(deny_unknown_fields, default = "ContextBudget::default")]
struct BudgetDef {
    #[serde(deserialize_with = "max_tokens")]
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<usize>,
    #[serde(deserialize_with = "max_messages")]
    #[serde(skip_serializing_if = "Option::is_none")]
    max_messages: Option<usize>,
    #[serde(skip_serializing_if = "is_default")]
    drop_trimmed: bool,
}

impl ConfigObject for ContextBudget {
    const EXPECTING: &'static str = r#"a context budget object such as {"max_tokens": 4000}"#;
    const NULL: Option<&'static str> =
        Some("context_budget must be an object; omit it to send the whole history");

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BudgetDef::deserialize(deserializer)
    }
}

// ---------------------------------------------------------------------------------------------
// ToolHarnessReference, SubAgentConfig, RunConfigData

#[derive(Serialize, Deserialize)]
#[serde(remote = "ToolHarnessReference", rename = "ToolHarnessReference")]
#[serde(deny_unknown_fields)]
struct ReferenceDef {
    #[serde(deserialize_with = "harness_name")]
    name: String,
    #[serde(default, deserialize_with = "functions")]
    #[serde(skip_serializing_if = "Option::is_none")]
    functions: Option<Vec<String>>,
    // Raw values are kept as written, `null` included: it is the user's type that decides what
    // `null` means. Omitting the key is "no value".
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<Value>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Value>,
    #[serde(default, deserialize_with = "middleware_configs")]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    middleware_configs: BTreeMap<String, Value>,
    #[serde(default, deserialize_with = "requires_approval")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    requires_approval: Vec<String>,
}

impl ConfigObject for ToolHarnessReference {
    const EXPECTING: &'static str = "a harness name or a harness reference object with a name";
    const FROM_STR: Option<ReadStr<Self>> = Some(|name| {
        if name.is_empty() {
            return Err("harness name is empty".to_owned());
        }
        Ok(ToolHarnessReference::new(name))
    });
    const REQUIRED: &'static [(&'static str, &'static str)] = &[("name", "give the harness name")];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ReferenceDef::deserialize(deserializer)
    }
}

impl Serialize for ToolHarnessReference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_name_only() {
            return serializer.serialize_str(&self.name);
        }
        ReferenceDef::serialize(self, serializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "SubAgentConfig", rename = "SubAgentConfig")]
#[serde(deny_unknown_fields)]
struct SubAgentDef {
    #[serde(deserialize_with = "sub_agent_name")]
    name: String,
    description: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "is_default")]
    config: Box<AgentConfig>,
    #[serde(default, deserialize_with = "parent_functions")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parent_functions: Vec<String>,
}

impl ConfigObject for SubAgentConfig {
    const EXPECTING: &'static str =
        "a sub-agent object (name, description, config, parent_functions)";
    const REQUIRED: &'static [(&'static str, &'static str)] = &[
        ("name", "give the sub-agent's tool name"),
        ("description", "describe the sub-agent for the model"),
    ];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        SubAgentDef::deserialize(deserializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "RunConfigData", rename = "AgentRunConfig")]
#[serde(deny_unknown_fields, default = "RunConfigData::default")]
struct RunDef {
    #[serde(deserialize_with = "harness_references")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_harnesses: Vec<ToolHarnessReference>,
    #[serde(skip_serializing_if = "Option::is_none")]
    additional_instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_iterations: Option<usize>,
}

impl ConfigObject for RunConfigData {
    const EXPECTING: &'static str = "an AgentRunConfig object";
    const MISPLACED: &'static [(&'static str, &'static str)] = &[(
        "collapsing",
        "collapsing belongs to AgentConfig, not AgentRunConfig",
    )];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RunDef::deserialize(deserializer)
    }
}

// ---------------------------------------------------------------------------------------------
// McpServerConfig, McpAuthConfig, OutputSchemaConfig

/// An MCP server entry: the transport's keys side by side, checked against each other when
/// converted.
#[derive(Serialize, Deserialize)]
#[serde(rename = "McpServerConfig", deny_unknown_fields)]
struct ServerFields {
    #[serde(deserialize_with = "server_name")]
    name: String,
    #[serde(default, deserialize_with = "command")]
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, deserialize_with = "arguments")]
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<String>>,
    #[serde(default, deserialize_with = "env")]
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "url")]
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, deserialize_with = "headers")]
    #[serde(skip_serializing_if = "Option::is_none")]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default = "yes")]
    #[serde(skip_serializing_if = "is_true")]
    collapse: bool,
    #[serde(default, deserialize_with = "functions")]
    #[serde(skip_serializing_if = "Option::is_none")]
    functions: Option<Vec<String>>,
    #[serde(default, deserialize_with = "timeout_ms")]
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
    #[serde(default, deserialize_with = "some")]
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<McpAuthConfig>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    roots: Vec<crate::roots::Root>,
    #[serde(default = "yes")]
    #[serde(skip_serializing_if = "is_true")]
    resources: bool,
}

const BOTH_OR_NEITHER: &str = "give 'command' for a stdio server or 'url' for an HTTP server";

impl ConfigObject for McpServerConfig {
    const EXPECTING: &'static str = "an MCP server object (name, and command or url)";
    const REQUIRED: &'static [(&'static str, &'static str)] = &[("name", "give the harness name")];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ServerFields {
            name,
            command,
            args,
            env,
            url,
            headers,
            description,
            collapse,
            functions,
            timeout_ms,
            auth,
            roots,
            resources,
        } = ServerFields::deserialize(deserializer)?;
        let belongs = |key: &str, server: &str, other: &str| {
            de::Error::custom(format_args!("'{key}' belongs to {server}, not to {other}"))
        };
        let (http, stdio) = ("an HTTP server ('url')", "a stdio server ('command')");
        let transport = match (command, url) {
            (Some(command), None) => {
                if auth.is_some() {
                    return Err(belongs("auth", http, stdio));
                }
                if headers.is_some() {
                    return Err(belongs("headers", http, stdio));
                }
                McpTransportConfig::Stdio {
                    command,
                    args: args.unwrap_or_default(),
                    env: env.unwrap_or_default(),
                }
            }
            (None, Some(url)) => {
                if args.is_some() {
                    return Err(belongs("args", stdio, http));
                }
                if env.is_some() {
                    return Err(belongs("env", stdio, http));
                }
                McpTransportConfig::Http {
                    url,
                    headers: headers.unwrap_or_default(),
                }
            }
            (Some(_), Some(_)) => {
                return Err(de::Error::custom(format_args!(
                    "McpServerConfig has both 'command' and 'url'; {BOTH_OR_NEITHER}"
                )));
            }
            (None, None) => {
                return Err(de::Error::custom(format_args!(
                    "missing key 'command' or 'url' in McpServerConfig; {BOTH_OR_NEITHER}"
                )));
            }
        };
        Ok(McpServerConfig {
            name,
            transport,
            description,
            collapse,
            functions,
            timeout_ms,
            auth,
            roots,
            resources,
        })
    }
}

impl Serialize for McpServerConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let McpServerConfig {
            name,
            transport,
            description,
            collapse,
            functions,
            timeout_ms,
            auth,
            roots,
            resources,
        } = self.clone();
        let (command, args, env, url, headers) = match transport {
            McpTransportConfig::Stdio { command, args, env } => (
                Some(command),
                changed(args, Vec::new()),
                changed(env, BTreeMap::new()),
                None,
                None,
            ),
            McpTransportConfig::Http { url, headers } => (
                None,
                None,
                None,
                Some(url),
                changed(headers, BTreeMap::new()),
            ),
        };
        ServerFields {
            name,
            command,
            args,
            env,
            url,
            headers,
            description,
            collapse,
            functions,
            timeout_ms,
            auth,
            roots,
            resources,
        }
        .serialize(serializer)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "McpAuthConfig", rename = "McpAuthConfig")]
#[serde(deny_unknown_fields, default = "McpAuthConfig::default")]
struct AuthDef {
    #[serde(deserialize_with = "client_id")]
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(deserialize_with = "client_secret")]
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(deserialize_with = "client_metadata_url")]
    #[serde(skip_serializing_if = "Option::is_none")]
    client_metadata_url: Option<String>,
    #[serde(deserialize_with = "scopes")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    #[serde(deserialize_with = "token_file")]
    #[serde(skip_serializing_if = "Option::is_none")]
    token_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    redirect_port: Option<u16>,
}

impl ConfigObject for McpAuthConfig {
    const EXPECTING: &'static str = "an OAuth object (client_id, client_secret, \
                                     client_metadata_url, scopes, token_file, redirect_port)";

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let auth = AuthDef::deserialize(deserializer)?;
        if auth.client_secret.is_some() && auth.client_id.is_none() {
            return Err(de::Error::custom(
                "'client_secret' needs the 'client_id' of the pre-registered client",
            ));
        }
        Ok(auth)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "OutputSchemaConfig", rename = "OutputSchema")]
#[serde(deny_unknown_fields)]
struct OutputDef {
    #[serde(deserialize_with = "output_name")]
    name: String,
    #[serde(deserialize_with = "output_schema")]
    schema: Value,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default = "yes")]
    #[serde(skip_serializing_if = "is_true")]
    strict: bool,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    retries: Option<usize>,
}

impl ConfigObject for OutputSchemaConfig {
    const EXPECTING: &'static str = "an OutputSchema object with 'name' and 'schema'";
    const REQUIRED: &'static [(&'static str, &'static str)] = &[
        ("name", "name the answer's format"),
        ("schema", "give the answer's JSON Schema"),
    ];

    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        OutputDef::deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use serde::de::value::Error;

    use super::*;

    /// Catches the object name and the fields a derived impl hands `deserialize_struct`.
    struct Probe<'a>(&'a mut Vec<(&'static str, &'static [&'static str])>);

    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = Error;

        fn deserialize_struct<V: de::Visitor<'de>>(
            self,
            object: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            self.0.push((object, fields));
            Err(de::Error::custom("probed"))
        }

        fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(de::Error::custom("not a struct"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }

    /// The objects of the config with their fields, and the required and misplaced keys.
    type Known = (
        &'static str,
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
        &'static [(&'static str, &'static str)],
    );

    fn known<T: ConfigObject>(read: impl FnOnce(Probe<'_>)) -> Known {
        let mut probed = Vec::new();
        read(Probe(&mut probed));
        let [(object, fields)] = probed[..] else {
            panic!("one struct per object: {probed:?}");
        };
        (object, fields, T::REQUIRED, T::MISPLACED)
    }

    fn all_known() -> Vec<Known> {
        vec![
            known::<AgentConfig>(|p| drop(AgentDef::deserialize(p))),
            known::<ModelConfig>(|p| drop(ModelDef::deserialize(p))),
            known::<ModelOptions>(|p| drop(OptionsDef::deserialize(p))),
            known::<ToolChoiceValue>(|p| drop(ToolChoiceFields::deserialize(p))),
            known::<CollapsingConfig>(|p| drop(CollapsingFields::deserialize(p))),
            known::<Limits>(|p| drop(LimitsDef::deserialize(p))),
            known::<ContextBudget>(|p| drop(BudgetDef::deserialize(p))),
            known::<ToolHarnessReference>(|p| drop(ReferenceDef::deserialize(p))),
            known::<SubAgentConfig>(|p| drop(SubAgentDef::deserialize(p))),
            known::<RunConfigData>(|p| drop(RunDef::deserialize(p))),
            known::<McpServerConfig>(|p| drop(ServerFields::deserialize(p))),
            known::<McpAuthConfig>(|p| drop(AuthDef::deserialize(p))),
            known::<OutputSchemaConfig>(|p| drop(OutputDef::deserialize(p))),
        ]
    }

    #[test]
    fn every_key_is_snake_case_and_every_required_key_is_known() {
        for (object, fields, required, misplaced) in all_known() {
            for field in fields {
                assert!(
                    field.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{object}.{field}"
                );
            }
            for (key, _) in required {
                assert!(fields.contains(key), "{object}.{key}");
            }
            for (key, _) in misplaced {
                assert!(!fields.contains(key), "{object}.{key}");
            }
        }
    }

    #[test]
    fn objects_are_named_as_the_errors_name_them() {
        let names: Vec<_> = all_known().into_iter().map(|(object, ..)| object).collect();
        assert_eq!(
            names,
            [
                "AgentConfig",
                "ModelConfig",
                "ModelOptions",
                "ToolChoice",
                "CollapsingConfig",
                "Limits",
                "ContextBudget",
                "ToolHarnessReference",
                "SubAgentConfig",
                "AgentRunConfig",
                "McpServerConfig",
                "McpAuthConfig",
                "OutputSchema",
            ]
        );
    }
}
