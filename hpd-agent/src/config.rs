//! Temporary stand-in for the configuration module (replaced by the config branch).
#![allow(missing_docs)]
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentConfig {
    pub name: Option<String>,
    pub instructions: Option<String>,
    pub model: Option<ModelConfig>,
    pub max_iterations: Option<usize>,
    pub collapsing: CollapsingConfig,
    pub tool_harnesses: Vec<ToolHarnessReference>,
    pub sub_agents: Vec<SubAgentConfig>,
}
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelConfig {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}
#[derive(Debug, Clone, PartialEq)]
pub struct CollapsingConfig {
    pub enabled: bool,
    pub never_collapse: Vec<String>,
    pub recovery: bool,
    pub execute_recovered_calls: bool,
    pub persist_system_prompt_injections: bool,
}
impl Default for CollapsingConfig {
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
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHarnessReference {
    pub name: String,
    pub functions: Option<Vec<String>>,
    pub config: Option<Value>,
    pub metadata: Option<Value>,
    pub middleware_configs: BTreeMap<String, Value>,
}
impl ToolHarnessReference {
    pub fn new(name: impl Into<String>) -> Self {
        ToolHarnessReference {
            name: name.into(),
            functions: None,
            config: None,
            metadata: None,
            middleware_configs: BTreeMap::new(),
        }
    }
}
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentConfig {
    pub name: String,
    pub description: String,
    pub config: Box<AgentConfig>,
    pub parent_functions: Vec<String>,
}
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
impl AgentConfig {
    pub fn from_json(text: &str) -> Result<AgentConfig, ConfigError> {
        let _ = text;
        Err(ConfigError("config parsing is not merged yet".into()))
    }
}
pub struct RunConfigData {
    pub tool_harnesses: Vec<ToolHarnessReference>,
    pub additional_instructions: Option<String>,
    pub max_iterations: Option<usize>,
}
impl RunConfigData {
    pub fn from_json(text: &str) -> Result<RunConfigData, ConfigError> {
        let _ = text;
        Err(ConfigError("config parsing is not merged yet".into()))
    }
}
