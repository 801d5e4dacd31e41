//! The visitors of `ToolHarnessReference`, `SubAgentConfig` and the run config.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::super::keys::{Keys, normalize_key};
use super::super::{AgentConfig, RunConfigData, SubAgentConfig, ToolHarnessReference};
use super::*;

// ---------------------------------------------------------------------------------------------
// ToolHarnessReference

#[derive(Clone, Copy)]
pub(super) enum ReferenceKey {
    Name,
    Functions,
    Config,
    Metadata,
    MiddlewareConfigs,
    RequiresApproval,
}

pub(super) const REFERENCE_KEYS: &[(ReferenceKey, &str)] = &[
    (ReferenceKey::Name, "name"),
    (ReferenceKey::Functions, "functions"),
    (ReferenceKey::Config, "config"),
    (ReferenceKey::Metadata, "metadata"),
    (ReferenceKey::MiddlewareConfigs, "middleware_configs"),
    (ReferenceKey::RequiresApproval, "requires_approval"),
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
                ReferenceKey::RequiresApproval => {
                    let names = map.next_value_seed(ListOf::<String>(
                        "a list of function names",
                        PhantomData,
                    ))?;
                    if let Some(empty) = names.iter().find(|n| n.trim().is_empty()) {
                        return Err(de::Error::custom(format!(
                            "requires_approval holds an empty function name ({empty:?}); give function names"
                        )));
                    }
                    reference = reference.with_approval_required(names);
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
pub(super) enum SubAgentKey {
    Name,
    Description,
    Config,
    ParentFunctions,
}

pub(super) const SUB_AGENT_KEYS: &[(SubAgentKey, &str)] = &[
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
pub(super) enum RunKey {
    ToolHarnesses,
    AdditionalInstructions,
    MaxIterations,
}

pub(super) const RUN_KEYS: &[(RunKey, &str)] = &[
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
