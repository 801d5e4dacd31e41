//! Hand-written `Deserialize` impls for the configuration types.
//!
//! Every object the project defines is read by a map visitor that normalises each key
//! ([`normalize_key`]), rejects unknown keys (listing the known ones) and keys that normalise
//! alike, and reads the value with the type's own rules. Values of the user's types stay raw
//! [`serde_json::Value`]s. Errors are `de::Error::custom` texts; `serde_path_to_error` (in the
//! callers) adds the path.

mod collapsing;
mod model;
mod reference;

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::keys::Keys;
#[cfg(test)]
use super::keys::normalize_key;
use super::{AgentConfig, McpServerConfig, SubAgentConfig, ToolHarnessReference};

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
    ContextBudget,
    OutputSchema,
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
    (AgentKey::ContextBudget, "context_budget"),
    (AgentKey::OutputSchema, "output_schema"),
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
                AgentKey::ContextBudget => config.context_budget = Some(map.next_value()?),
                AgentKey::OutputSchema => config.output_schema = map.next_value()?,
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
        ("ModelConfig", known_keys(model::MODEL_KEYS)),
        ("ModelOptions", known_keys(model::OPTIONS_KEYS)),
        ("ToolChoice", known_keys(model::TOOL_CHOICE_KEYS)),
        ("CollapsingConfig", known_keys(collapsing::COLLAPSING_KEYS)),
        ("Limits", known_keys(collapsing::LIMITS_KEYS)),
        ("ContextBudget", known_keys(collapsing::BUDGET_KEYS)),
        (
            "ToolHarnessReference",
            known_keys(reference::REFERENCE_KEYS),
        ),
        ("SubAgentConfig", known_keys(reference::SUB_AGENT_KEYS)),
        ("AgentRunConfig", known_keys(reference::RUN_KEYS)),
        ("McpServerConfig", known_keys(super::mcp::SERVER_KEYS)),
        ("OutputSchema", known_keys(super::output::OUTPUT_KEYS)),
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
