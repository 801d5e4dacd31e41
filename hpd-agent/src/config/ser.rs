//! Hand-written `Serialize` impls: snake_case keys in the documented order, sections equal to
//! their defaults left out, a name-only harness reference written as a bare string.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{
    AgentConfig, CollapsingConfig, Limits, ModelConfig, RunConfigData, SubAgentConfig,
    ToolHarnessReference,
};
use crate::chat::{ModelOptions, ToolChoice};

/// Writes the fields whose `present` flag is set, in order, as one struct.
macro_rules! write_struct {
    ($serializer:expr, $name:literal, [$(($present:expr, $key:literal, $value:expr)),* $(,)?]) => {{
        let len = 0 $(+ usize::from($present))*;
        let mut state = $serializer.serialize_struct($name, len)?;
        $(
            if $present {
                state.serialize_field($key, $value)?;
            }
        )*
        state.end()
    }};
}

impl Serialize for AgentConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "AgentConfig",
            [
                (self.name.is_some(), "name", &self.name),
                (
                    self.instructions.is_some(),
                    "instructions",
                    &self.instructions
                ),
                (self.model.is_some(), "model", &self.model),
                (
                    self.max_iterations.is_some(),
                    "max_iterations",
                    &self.max_iterations
                ),
                (
                    !self.collapsing.is_default(),
                    "collapsing",
                    &self.collapsing
                ),
                (
                    !self.tool_harnesses.is_empty(),
                    "tool_harnesses",
                    &self.tool_harnesses
                ),
                (!self.sub_agents.is_empty(), "sub_agents", &self.sub_agents),
                (
                    !self.mcp_servers.is_empty(),
                    "mcp_servers",
                    &self.mcp_servers
                ),
                (!self.limits.is_default(), "limits", &self.limits),
                (
                    self.context_budget.is_some(),
                    "context_budget",
                    &self.context_budget
                ),
                (
                    self.output_schema.is_some(),
                    "output_schema",
                    &self.output_schema
                ),
            ]
        )
    }
}

impl Serialize for crate::ContextBudget {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "ContextBudget",
            [
                (self.max_tokens.is_some(), "max_tokens", &self.max_tokens),
                (
                    self.max_messages.is_some(),
                    "max_messages",
                    &self.max_messages
                ),
                (self.drop_trimmed, "drop_trimmed", &self.drop_trimmed),
            ]
        )
    }
}

impl Serialize for ModelConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "ModelConfig",
            [
                (self.provider.is_some(), "provider", &self.provider),
                (self.model.is_some(), "model", &self.model),
                (self.base_url.is_some(), "base_url", &self.base_url),
                (self.options.is_some(), "options", &self.options),
            ]
        )
    }
}

impl Serialize for ModelOptions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "ModelOptions",
            [
                (self.temperature.is_some(), "temperature", &self.temperature),
                (self.top_p.is_some(), "top_p", &self.top_p),
                (
                    self.max_output_tokens.is_some(),
                    "max_output_tokens",
                    &self.max_output_tokens
                ),
                (!self.stop.is_empty(), "stop", &self.stop),
                (self.seed.is_some(), "seed", &self.seed),
                (
                    self.tool_choice.is_some(),
                    "tool_choice",
                    &self.tool_choice.as_ref().map(ToolChoiceForm)
                ),
                (
                    self.parallel_tool_calls.is_some(),
                    "parallel_tool_calls",
                    &self.parallel_tool_calls
                ),
                (!self.extra.is_empty(), "extra", &self.extra),
            ]
        )
    }
}

/// A tool choice as config writes it: a string, or `{"tool": name}`.
struct ToolChoiceForm<'a>(&'a ToolChoice);

impl Serialize for ToolChoiceForm<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ToolChoice::Auto => serializer.serialize_str("auto"),
            ToolChoice::None => serializer.serialize_str("none"),
            ToolChoice::Required => serializer.serialize_str("required"),
            ToolChoice::Tool(name) => {
                write_struct!(serializer, "ToolChoice", [(true, "tool", name)])
            }
        }
    }
}

impl Serialize for CollapsingConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let default = CollapsingConfig::default();
        write_struct!(
            serializer,
            "CollapsingConfig",
            [
                (self.enabled != default.enabled, "enabled", &self.enabled),
                (
                    !self.never_collapse.is_empty(),
                    "never_collapse",
                    &self.never_collapse
                ),
                (
                    self.recovery != default.recovery,
                    "recovery",
                    &self.recovery
                ),
                (
                    self.execute_recovered_calls != default.execute_recovered_calls,
                    "execute_recovered_calls",
                    &self.execute_recovered_calls
                ),
                (
                    self.persist_system_prompt_injections
                        != default.persist_system_prompt_injections,
                    "persist_system_prompt_injections",
                    &self.persist_system_prompt_injections
                ),
                (self.layout != default.layout, "layout", &self.layout),
            ]
        )
    }
}

impl Serialize for Limits {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let default = Limits::default();
        write_struct!(
            serializer,
            "Limits",
            [
                (
                    self.max_tool_result_bytes != default.max_tool_result_bytes,
                    "max_tool_result_bytes",
                    &self.max_tool_result_bytes
                ),
                (
                    self.max_tool_result_media_bytes != default.max_tool_result_media_bytes,
                    "max_tool_result_media_bytes",
                    &self.max_tool_result_media_bytes
                ),
                (
                    self.max_argument_bytes != default.max_argument_bytes,
                    "max_argument_bytes",
                    &self.max_argument_bytes
                ),
                (
                    self.max_parallel_calls != default.max_parallel_calls,
                    "max_parallel_calls",
                    &self.max_parallel_calls
                ),
            ]
        )
    }
}

impl Serialize for ToolHarnessReference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_name_only() {
            return serializer.serialize_str(&self.name);
        }
        write_struct!(
            serializer,
            "ToolHarnessReference",
            [
                (true, "name", &self.name),
                (self.functions.is_some(), "functions", &self.functions),
                (self.config.is_some(), "config", &self.config),
                (self.metadata.is_some(), "metadata", &self.metadata),
                (
                    !self.middleware_configs.is_empty(),
                    "middleware_configs",
                    &self.middleware_configs
                ),
                (
                    !self.requires_approval.is_empty(),
                    "requires_approval",
                    &self.requires_approval
                ),
            ]
        )
    }
}

impl Serialize for SubAgentConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "SubAgentConfig",
            [
                (true, "name", &self.name),
                (true, "description", &self.description),
                (
                    *self.config != AgentConfig::default(),
                    "config",
                    &*self.config
                ),
                (
                    !self.parent_functions.is_empty(),
                    "parent_functions",
                    &self.parent_functions
                ),
            ]
        )
    }
}

impl Serialize for RunConfigData {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_struct!(
            serializer,
            "AgentRunConfig",
            [
                (
                    !self.tool_harnesses.is_empty(),
                    "tool_harnesses",
                    &self.tool_harnesses
                ),
                (
                    self.additional_instructions.is_some(),
                    "additional_instructions",
                    &self.additional_instructions
                ),
                (
                    self.max_iterations.is_some(),
                    "max_iterations",
                    &self.max_iterations
                ),
            ]
        )
    }
}
