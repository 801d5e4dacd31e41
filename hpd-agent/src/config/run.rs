//! [`RunConfigData`]: the JSON form of `AgentRunConfig`.

use serde_json::Value;

use super::ConfigError;
use super::ToolHarnessReference;
use super::parse::{parse_text, parse_value, to_canonical_json};

const AGENT_RUN_CONFIG: &str = "AgentRunConfig";

/// The JSON form of `AgentRunConfig`: harnesses, instructions and an iteration
/// limit for one run.
///
/// Keys: `tool_harnesses` (harness references as in [`AgentConfig`](super::AgentConfig)), `additional_instructions`
/// and `max_iterations`, normalised as in [`AgentConfig`](super::AgentConfig). There are no collapsing settings: a
/// `collapsing` key fails with `collapsing belongs to AgentConfig, not AgentRunConfig`.
///
/// # Examples
///
/// ```
/// use hpd_agent::config::{RunConfigData, ToolHarnessReference};
///
/// let run = RunConfigData::from_json(
///     r#"{"ToolHarnesses": ["WeatherTools"], "AdditionalInstructions": "Answer in French."}"#,
/// )?;
/// assert_eq!(run.tool_harnesses, [ToolHarnessReference::new("WeatherTools")]);
/// assert_eq!(run.additional_instructions.as_deref(), Some("Answer in French."));
/// assert_eq!(run.max_iterations, None);
/// # Ok::<(), hpd_agent::config::ConfigError>(())
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
    /// use hpd_agent::config::RunConfigData;
    ///
    /// let run = RunConfigData::from_json(r#"{"max_iterations": 3}"#)?;
    /// assert_eq!(run.max_iterations, Some(3));
    ///
    /// let err = RunConfigData::from_json(r#"{"collapsing": {"enabled": false}}"#).unwrap_err();
    /// assert!(err.to_string().contains("collapsing belongs to AgentConfig, not AgentRunConfig"));
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
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
    /// use hpd_agent::config::RunConfigData;
    /// use serde_json::json;
    ///
    /// let run = RunConfigData::from_value(json!({"tool_harnesses": ["MathTools"]}))?;
    /// assert_eq!(run.tool_harnesses[0].name, "MathTools");
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    pub fn from_value(value: Value) -> Result<RunConfigData, ConfigError> {
        parse_value(AGENT_RUN_CONFIG, value)
    }

    /// Writes the run config in the canonical form of [`AgentConfig::to_json`](super::AgentConfig::to_json).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::RunConfigData;
    ///
    /// let run = RunConfigData { max_iterations: Some(2), ..RunConfigData::default() };
    /// assert_eq!(run.to_json(), "{\n  \"max_iterations\": 2\n}");
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        to_canonical_json(self)
    }
}
