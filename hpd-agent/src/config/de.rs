//! Hand-written `Deserialize` impls for the configuration types.
//!
//! Every object the project defines is read by a map visitor that normalises each key
//! ([`normalize_key`]), rejects unknown keys (listing the known ones) and keys that normalise
//! alike, and reads the value with the type's own rules. Values of the user's types stay raw
//! [`serde_json::Value`]s. Errors are `de::Error::custom` texts; `serde_path_to_error` (in the
//! callers) adds the path.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::keys::{Keys, normalize_key};
use super::{
    AgentConfig, CollapsingConfig, Limits, McpServerConfig, ModelConfig, RunConfigData,
    SubAgentConfig, ToolHarnessReference,
};
use crate::chat::{ModelOptions, ToolChoice};

/// A string that must not be empty; the field names it in the error (`{0} is empty`).
pub(super) struct NonEmptyString(pub(super) &'static str);

impl<'de> DeserializeSeed<'de> for NonEmptyString {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        let value = String::deserialize(deserializer)?;
        if value.is_empty() {
            return Err(de::Error::custom(format_args!("{} is empty", self.0)));
        }
        Ok(value)
    }
}

/// `functions`: `null` is "all functions", `[]` is an error.
pub(super) struct FunctionList;

impl<'de> DeserializeSeed<'de> for FunctionList {
    type Value = Option<Vec<String>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let functions = Option::<Vec<String>>::deserialize(deserializer)?;
        if functions.as_ref().is_some_and(Vec::is_empty) {
            return Err(de::Error::custom(
                "functions is empty; omit it to expose all functions",
            ));
        }
        Ok(functions)
    }
}

/// `middleware_configs`: middleware type names (kept as written) to raw configs.
struct MiddlewareConfigs;

impl<'de> DeserializeSeed<'de> for MiddlewareConfigs {
    type Value = BTreeMap<String, Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MiddlewareConfigs {
    type Value = BTreeMap<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object mapping middleware type names to their configs")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut configs = BTreeMap::new();
        // Middleware names are matched case-insensitively at build, so two keys that differ
        // only in case would be ambiguous. Folded name -> name as written.
        let mut folded_names = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if folded_names.get(&key.to_ascii_lowercase()) == Some(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key in middleware_configs: '{key}' appears twice"
                )));
            }
            if let Some(first) = folded_names.get(&key.to_ascii_lowercase()) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key in middleware_configs: '{first}' and '{key}' name the same \
                     middleware (names match case-insensitively)"
                )));
            }
            let value = map.next_value::<Value>()?;
            folded_names.insert(key.to_ascii_lowercase(), key.clone());
            configs.insert(key, value);
        }
        Ok(configs)
    }
}

// ---------------------------------------------------------------------------------------------
// AgentConfig

#[derive(Clone, Copy)]
enum AgentKey {
    Name,
    Instructions,
    Model,
    MaxIterations,
    Collapsing,
    ToolHarnesses,
    SubAgents,
    McpServers,
    Limits,
}

const AGENT_KEYS: &[(AgentKey, &str)] = &[
    (AgentKey::Name, "name"),
    (AgentKey::Instructions, "instructions"),
    (AgentKey::Model, "model"),
    (AgentKey::MaxIterations, "max_iterations"),
    (AgentKey::Collapsing, "collapsing"),
    (AgentKey::ToolHarnesses, "tool_harnesses"),
    (AgentKey::SubAgents, "sub_agents"),
    (AgentKey::McpServers, "mcp_servers"),
    (AgentKey::Limits, "limits"),
];

impl<'de> Deserialize<'de> for AgentConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AgentConfigVisitor)
    }
}

struct AgentConfigVisitor;

impl<'de> Visitor<'de> for AgentConfigVisitor {
    type Value = AgentConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an AgentConfig object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AgentConfig, A::Error> {
        let mut keys = Keys::new("AgentConfig", AGENT_KEYS);
        let mut config = AgentConfig::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                AgentKey::Name => config.name = map.next_value()?,
                AgentKey::Instructions => config.instructions = map.next_value()?,
                AgentKey::Model => config.model = map.next_value()?,
                AgentKey::MaxIterations => config.max_iterations = map.next_value()?,
                AgentKey::Collapsing => config.collapsing = map.next_value()?,
                AgentKey::Limits => config.limits = map.next_value()?,
                AgentKey::ToolHarnesses => {
                    config.tool_harnesses = map.next_value_seed(ListOf::<ToolHarnessReference>(
                        "a list of harness references",
                        PhantomData,
                    ))?;
                }
                AgentKey::SubAgents => {
                    config.sub_agents = map.next_value_seed(ListOf::<SubAgentConfig>(
                        "a list of sub-agent objects",
                        PhantomData,
                    ))?;
                }
                AgentKey::McpServers => {
                    config.mcp_servers = map.next_value_seed(ListOf::<McpServerConfig>(
                        "a list of MCP server objects",
                        PhantomData,
                    ))?;
                }
            }
        }
        Ok(config)
    }
}

/// A list with a readable `expecting` text (serde's `Vec` says only "a sequence").
pub(super) struct ListOf<T>(pub(super) &'static str, pub(super) PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ListOf<T> {
    type Value = Vec<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListOf<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        // Never trust a size hint for a preallocation larger than a small bound.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(items)
    }
}

// ---------------------------------------------------------------------------------------------
// ModelConfig

#[derive(Clone, Copy)]
enum ModelKey {
    Provider,
    Model,
    BaseUrl,
    Options,
}

const MODEL_KEYS: &[(ModelKey, &str)] = &[
    (ModelKey::Provider, "provider"),
    (ModelKey::Model, "model"),
    (ModelKey::BaseUrl, "base_url"),
    (ModelKey::Options, "options"),
];

impl<'de> Deserialize<'de> for ModelConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ModelConfigVisitor)
    }
}

struct ModelConfigVisitor;

impl<'de> Visitor<'de> for ModelConfigVisitor {
    type Value = ModelConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a model object (provider, model, base_url)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelConfig, A::Error> {
        let mut keys = Keys::new("ModelConfig", MODEL_KEYS);
        let mut model = ModelConfig::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                ModelKey::Provider => model.provider = map.next_value()?,
                ModelKey::Model => model.model = map.next_value()?,
                ModelKey::BaseUrl => model.base_url = map.next_value()?,
                ModelKey::Options => model.options = map.next_value()?,
            }
        }
        Ok(model)
    }
}

// ---------------------------------------------------------------------------------------------
// ModelOptions

#[derive(Clone, Copy)]
enum OptionsKey {
    Temperature,
    TopP,
    MaxOutputTokens,
    Stop,
    Seed,
    ToolChoice,
    ParallelToolCalls,
    Extra,
}

const OPTIONS_KEYS: &[(OptionsKey, &str)] = &[
    (OptionsKey::Temperature, "temperature"),
    (OptionsKey::TopP, "top_p"),
    (OptionsKey::MaxOutputTokens, "max_output_tokens"),
    (OptionsKey::Stop, "stop"),
    (OptionsKey::Seed, "seed"),
    (OptionsKey::ToolChoice, "tool_choice"),
    (OptionsKey::ParallelToolCalls, "parallel_tool_calls"),
    (OptionsKey::Extra, "extra"),
];

impl<'de> Deserialize<'de> for ModelOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ModelOptionsVisitor)
    }
}

struct ModelOptionsVisitor;

impl<'de> Visitor<'de> for ModelOptionsVisitor {
    type Value = ModelOptions;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a model options object (temperature, top_p, max_output_tokens, stop, ...)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelOptions, A::Error> {
        let mut keys = Keys::new("ModelOptions", OPTIONS_KEYS);
        let mut options = ModelOptions::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                OptionsKey::Temperature => {
                    options.temperature = map.next_value_seed(Checked(|t: &f64| {
                        (*t < 0.0).then_some("temperature must not be negative")
                    }))?;
                }
                OptionsKey::TopP => {
                    options.top_p = map.next_value_seed(Checked(|p: &f64| {
                        (!(0.0..=1.0).contains(p)).then_some("top_p must be between 0 and 1")
                    }))?;
                }
                OptionsKey::MaxOutputTokens => {
                    options.max_output_tokens = map.next_value_seed(Checked(|n: &u32| {
                        (*n == 0).then_some("max_output_tokens must be at least 1")
                    }))?;
                }
                OptionsKey::Stop => options.stop = map.next_value_seed(StopSequences)?,
                OptionsKey::Seed => options.seed = map.next_value()?,
                OptionsKey::ToolChoice => {
                    options.tool_choice = map.next_value::<Option<ToolChoiceValue>>()?.map(|c| c.0);
                }
                OptionsKey::ParallelToolCalls => options.parallel_tool_calls = map.next_value()?,
                OptionsKey::Extra => options.extra = map.next_value_seed(ExtraFields)?,
            }
        }
        Ok(options)
    }
}

/// An optional value that must pass a check; the check returns the error message.
struct Checked<T>(fn(&T) -> Option<&'static str>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Checked<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let value = Option::<T>::deserialize(deserializer)?;
        if let Some(message) = value.as_ref().and_then(self.0) {
            return Err(de::Error::custom(message));
        }
        Ok(value)
    }
}

/// `extra`: an object of request body fields, kept raw; `null` is none.
struct ExtraFields;

impl<'de> DeserializeSeed<'de> for ExtraFields {
    type Value = serde_json::Map<String, Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(extra) => Ok(extra),
            Value::Null => Ok(serde_json::Map::new()),
            _ => Err(de::Error::custom(
                "extra must be an object of request body fields",
            )),
        }
    }
}

/// `stop`: one string or a list of strings; `null` is none.
struct StopSequences;

impl<'de> DeserializeSeed<'de> for StopSequences {
    type Value = Vec<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StopSequences {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stop sequence or a list of them")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
        Ok(vec![value.to_owned()])
    }

    fn visit_unit<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_none<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<String>, A::Error> {
        ListOf::<String>("a list of stop sequences", PhantomData).visit_seq(seq)
    }
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` (ASCII case ignored) or `{"tool": name}`.
struct ToolChoiceValue(ToolChoice);

#[derive(Clone, Copy)]
enum ToolChoiceKey {
    Tool,
}

const TOOL_CHOICE_KEYS: &[(ToolChoiceKey, &str)] = &[(ToolChoiceKey::Tool, "tool")];

impl<'de> Deserialize<'de> for ToolChoiceValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolChoiceVisitor)
    }
}

struct ToolChoiceVisitor;

impl<'de> Visitor<'de> for ToolChoiceVisitor {
    type Value = ToolChoiceValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#""auto", "none", "required" or {"tool": "name"}"#)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<ToolChoiceValue, E> {
        let choice = match value.to_ascii_lowercase().as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => {
                return Err(E::custom(format_args!(
                    "unknown tool_choice '{value}'; expected \"auto\", \"none\", \"required\" \
                     or {{\"tool\": \"name\"}}"
                )));
            }
        };
        Ok(ToolChoiceValue(choice))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolChoiceValue, A::Error> {
        let mut keys = Keys::new("ToolChoice", TOOL_CHOICE_KEYS);
        let mut name = None;
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                ToolChoiceKey::Tool => name = Some(map.next_value_seed(NonEmptyString("tool"))?),
            }
        }
        match name {
            Some(name) => Ok(ToolChoiceValue(ToolChoice::Tool(name))),
            None => Err(de::Error::custom(
                "missing key 'tool' in ToolChoice; name the tool the model must call",
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CollapsingConfig

#[derive(Clone, Copy)]
enum CollapsingKey {
    Enabled,
    NeverCollapse,
    Recovery,
    ExecuteRecoveredCalls,
    PersistSystemPromptInjections,
    CacheStable,
}

const COLLAPSING_KEYS: &[(CollapsingKey, &str)] = &[
    (CollapsingKey::Enabled, "enabled"),
    (CollapsingKey::NeverCollapse, "never_collapse"),
    (CollapsingKey::Recovery, "recovery"),
    (
        CollapsingKey::ExecuteRecoveredCalls,
        "execute_recovered_calls",
    ),
    (
        CollapsingKey::PersistSystemPromptInjections,
        "persist_system_prompt_injections",
    ),
    (CollapsingKey::CacheStable, "cache_stable"),
];

const COLLAPSING_NULL: &str = "collapsing must be an object; omit it to use the default";

impl<'de> Deserialize<'de> for CollapsingConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any` so that `null` reaches `visit_unit` and gets the specified message.
        deserializer.deserialize_any(CollapsingConfigVisitor)
    }
}

struct CollapsingConfigVisitor;

impl<'de> Visitor<'de> for CollapsingConfigVisitor {
    type Value = CollapsingConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a collapsing object such as {"enabled": false}"#)
    }

    fn visit_unit<E: de::Error>(self) -> Result<CollapsingConfig, E> {
        Err(E::custom(COLLAPSING_NULL))
    }

    fn visit_none<E: de::Error>(self) -> Result<CollapsingConfig, E> {
        Err(E::custom(COLLAPSING_NULL))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CollapsingConfig, A::Error> {
        let mut keys = Keys::new("CollapsingConfig", COLLAPSING_KEYS);
        let mut collapsing = CollapsingConfig::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                CollapsingKey::Enabled => collapsing.enabled = map.next_value()?,
                CollapsingKey::NeverCollapse => {
                    collapsing.never_collapse = map.next_value_seed(ListOf::<String>(
                        "a list of harness names",
                        PhantomData,
                    ))?;
                }
                CollapsingKey::Recovery => collapsing.recovery = map.next_value()?,
                CollapsingKey::ExecuteRecoveredCalls => {
                    collapsing.execute_recovered_calls = map.next_value()?;
                }
                CollapsingKey::PersistSystemPromptInjections => {
                    collapsing.persist_system_prompt_injections = map.next_value()?;
                }
                CollapsingKey::CacheStable => collapsing.cache_stable = map.next_value()?,
            }
        }
        Ok(collapsing)
    }
}

// ---------------------------------------------------------------------------------------------
// Limits

#[derive(Clone, Copy)]
enum LimitsKey {
    ToolResultBytes,
    ArgumentBytes,
    ParallelCalls,
}

const LIMITS_KEYS: &[(LimitsKey, &str)] = &[
    (LimitsKey::ToolResultBytes, "max_tool_result_bytes"),
    (LimitsKey::ArgumentBytes, "max_argument_bytes"),
    (LimitsKey::ParallelCalls, "max_parallel_calls"),
];

const LIMITS_NULL: &str = "limits must be an object; omit it to use the defaults";

/// One limit: an integer of at least 1; the field names it in the error.
struct AtLeastOne(&'static str);

impl<'de> DeserializeSeed<'de> for AtLeastOne {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        let value = usize::deserialize(deserializer)?;
        if value == 0 {
            return Err(de::Error::custom(format_args!(
                "{} must be at least 1",
                self.0
            )));
        }
        Ok(value)
    }
}

impl<'de> Deserialize<'de> for Limits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any` so that `null` reaches `visit_unit` and gets the specified message.
        deserializer.deserialize_any(LimitsVisitor)
    }
}

struct LimitsVisitor;

impl<'de> Visitor<'de> for LimitsVisitor {
    type Value = Limits;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a limits object such as {"max_parallel_calls": 4}"#)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Limits, E> {
        Err(E::custom(LIMITS_NULL))
    }

    fn visit_none<E: de::Error>(self) -> Result<Limits, E> {
        Err(E::custom(LIMITS_NULL))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Limits, A::Error> {
        let mut keys = Keys::new("Limits", LIMITS_KEYS);
        let mut limits = Limits::default();
        while let Some(key) = map.next_key::<String>()? {
            let (field, name) = match keys.identify(key)? {
                LimitsKey::ToolResultBytes => {
                    (&mut limits.max_tool_result_bytes, "max_tool_result_bytes")
                }
                LimitsKey::ArgumentBytes => (&mut limits.max_argument_bytes, "max_argument_bytes"),
                LimitsKey::ParallelCalls => (&mut limits.max_parallel_calls, "max_parallel_calls"),
            };
            *field = map.next_value_seed(AtLeastOne(name))?;
        }
        Ok(limits)
    }
}

// ---------------------------------------------------------------------------------------------
// ToolHarnessReference

#[derive(Clone, Copy)]
enum ReferenceKey {
    Name,
    Functions,
    Config,
    Metadata,
    MiddlewareConfigs,
}

const REFERENCE_KEYS: &[(ReferenceKey, &str)] = &[
    (ReferenceKey::Name, "name"),
    (ReferenceKey::Functions, "functions"),
    (ReferenceKey::Config, "config"),
    (ReferenceKey::Metadata, "metadata"),
    (ReferenceKey::MiddlewareConfigs, "middleware_configs"),
];

impl<'de> Deserialize<'de> for ToolHarnessReference {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A string or an object: only `deserialize_any` can tell.
        deserializer.deserialize_any(ReferenceVisitor)
    }
}

struct ReferenceVisitor;

impl<'de> Visitor<'de> for ReferenceVisitor {
    type Value = ToolHarnessReference;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a harness name or a harness reference object with a name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<ToolHarnessReference, E> {
        if name.is_empty() {
            return Err(E::custom("harness name is empty"));
        }
        Ok(ToolHarnessReference::new(name))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolHarnessReference, A::Error> {
        let mut keys = Keys::new("ToolHarnessReference", REFERENCE_KEYS);
        let mut name = None;
        let mut reference = ToolHarnessReference::new(String::new());
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                ReferenceKey::Name => {
                    name = Some(map.next_value_seed(NonEmptyString("harness name"))?);
                }
                ReferenceKey::Functions => {
                    reference.functions = map.next_value_seed(FunctionList)?
                }
                // Raw values are kept as written, `null` included: it is the user's type that
                // decides what `null` means. Omitting the key is "no value".
                ReferenceKey::Config => reference.config = Some(map.next_value::<Value>()?),
                ReferenceKey::Metadata => reference.metadata = Some(map.next_value::<Value>()?),
                ReferenceKey::MiddlewareConfigs => {
                    reference.middleware_configs = map.next_value_seed(MiddlewareConfigs)?;
                }
            }
        }
        let Some(name) = name else {
            return Err(de::Error::custom(
                "missing key 'name' in ToolHarnessReference; give the harness name",
            ));
        };
        reference.name = name;
        Ok(reference)
    }
}

// ---------------------------------------------------------------------------------------------
// SubAgentConfig

#[derive(Clone, Copy)]
enum SubAgentKey {
    Name,
    Description,
    Config,
    ParentFunctions,
}

const SUB_AGENT_KEYS: &[(SubAgentKey, &str)] = &[
    (SubAgentKey::Name, "name"),
    (SubAgentKey::Description, "description"),
    (SubAgentKey::Config, "config"),
    (SubAgentKey::ParentFunctions, "parent_functions"),
];

impl<'de> Deserialize<'de> for SubAgentConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SubAgentVisitor)
    }
}

struct SubAgentVisitor;

impl<'de> Visitor<'de> for SubAgentVisitor {
    type Value = SubAgentConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sub-agent object (name, description, config, parent_functions)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SubAgentConfig, A::Error> {
        let mut keys = Keys::new("SubAgentConfig", SUB_AGENT_KEYS);
        let mut name = None;
        let mut description = None;
        let mut config = AgentConfig::default();
        let mut parent_functions = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                SubAgentKey::Name => {
                    name = Some(map.next_value_seed(NonEmptyString("sub-agent name"))?);
                }
                SubAgentKey::Description => description = Some(map.next_value::<String>()?),
                SubAgentKey::Config => config = map.next_value()?,
                SubAgentKey::ParentFunctions => {
                    parent_functions = map.next_value_seed(ListOf::<String>(
                        "a list of 'Harness.function' references",
                        PhantomData,
                    ))?;
                }
            }
        }
        let Some(name) = name else {
            return Err(de::Error::custom(
                "missing key 'name' in SubAgentConfig; give the sub-agent's tool name",
            ));
        };
        let Some(description) = description else {
            return Err(de::Error::custom(
                "missing key 'description' in SubAgentConfig; describe the sub-agent for the model",
            ));
        };
        Ok(SubAgentConfig {
            name,
            description,
            config: Box::new(config),
            parent_functions,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// RunConfigData

#[derive(Clone, Copy)]
enum RunKey {
    ToolHarnesses,
    AdditionalInstructions,
    MaxIterations,
}

const RUN_KEYS: &[(RunKey, &str)] = &[
    (RunKey::ToolHarnesses, "tool_harnesses"),
    (RunKey::AdditionalInstructions, "additional_instructions"),
    (RunKey::MaxIterations, "max_iterations"),
];

impl<'de> Deserialize<'de> for RunConfigData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RunConfigVisitor)
    }
}

struct RunConfigVisitor;

impl<'de> Visitor<'de> for RunConfigVisitor {
    type Value = RunConfigData;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an AgentRunConfig object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RunConfigData, A::Error> {
        let mut keys = Keys::new("AgentRunConfig", RUN_KEYS);
        let mut run = RunConfigData::default();
        while let Some(key) = map.next_key::<String>()? {
            if normalize_key(&key) == "collapsing" {
                return Err(de::Error::custom(
                    "collapsing belongs to AgentConfig, not AgentRunConfig",
                ));
            }
            match keys.identify(key)? {
                RunKey::ToolHarnesses => {
                    run.tool_harnesses = map.next_value_seed(ListOf::<ToolHarnessReference>(
                        "a list of harness references",
                        PhantomData,
                    ))?;
                }
                RunKey::AdditionalInstructions => run.additional_instructions = map.next_value()?,
                RunKey::MaxIterations => run.max_iterations = map.next_value()?,
            }
        }
        Ok(run)
    }
}

/// The names of the keys of one object, in canonical order.
#[cfg(test)]
fn known_keys<K>(table: &[(K, &'static str)]) -> Vec<&'static str> {
    table.iter().map(|(_, name)| *name).collect()
}

/// The known keys of every object.
#[cfg(test)]
fn all_known_keys() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("AgentConfig", known_keys(AGENT_KEYS)),
        ("ModelConfig", known_keys(MODEL_KEYS)),
        ("ModelOptions", known_keys(OPTIONS_KEYS)),
        ("ToolChoice", known_keys(TOOL_CHOICE_KEYS)),
        ("CollapsingConfig", known_keys(COLLAPSING_KEYS)),
        ("Limits", known_keys(LIMITS_KEYS)),
        ("ToolHarnessReference", known_keys(REFERENCE_KEYS)),
        ("SubAgentConfig", known_keys(SUB_AGENT_KEYS)),
        ("AgentRunConfig", known_keys(RUN_KEYS)),
        ("McpServerConfig", known_keys(super::mcp::SERVER_KEYS)),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::keys::{edit_distance, matches_normalized, unknown_key_message};
    use super::*;

    #[test]
    fn normalisation_lowercases_ascii_and_drops_underscores() {
        assert_eq!(normalize_key("ToolHarnesses"), "toolharnesses");
        assert_eq!(normalize_key("tool_harnesses"), "toolharnesses");
        assert_eq!(normalize_key("TOOL__HARNESSES_"), "toolharnesses");
        assert_eq!(normalize_key("tool-harnesses"), "tool-harnesses");
        // Not ASCII: kept, so the Kelvin sign does not pass for a `k`.
        assert_eq!(normalize_key("\u{212A}"), "\u{212A}");
    }

    #[test]
    fn every_canonical_key_is_snake_case_and_matches_its_normal_form() {
        for (object, keys) in all_known_keys() {
            for key in keys {
                assert!(
                    key.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{object}.{key}"
                );
                assert!(
                    matches_normalized(key, &normalize_key(key)),
                    "{object}.{key}"
                );
                assert!(
                    !matches_normalized(key, &format!("{}x", normalize_key(key))),
                    "{object}.{key}"
                );
            }
        }
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("collapsing", "colapsing"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggestion_only_for_near_misses() {
        let known = ["name", "functions"];
        let near = unknown_key_message("X", "Fucntions", "fucntions", known.iter().copied());
        assert!(near.contains("did you mean 'functions'?"), "{near}");
        let far = unknown_key_message("X", "zzz", "zzz", known.iter().copied());
        assert!(!far.contains("did you mean"), "{far}");
        assert!(far.ends_with("known keys: name, functions"), "{far}");
        let long = "functions".repeat(1000);
        let huge = unknown_key_message("X", &long, &long, known.iter().copied());
        assert!(!huge.contains("did you mean"));
    }
}
