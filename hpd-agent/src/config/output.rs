//! `output_schema`: the schema every final answer of a configured agent must match.

use serde_json::Value;

use crate::output::{OutputSchema, OutputSchemaError};

/// The `output_schema` of an [`AgentConfig`](crate::AgentConfig): a JSON Schema the agent's
/// final answers must match (see [`output`](crate::output)).
///
/// JSON keys: `name` (required; 1 to 64 of `A-Z a-z 0-9 _ -`), `schema` (required; a JSON
/// Schema object, kept as written: its keys are the schema's, not normalised), `description`,
/// `strict` (default `true`), `retries` (default
/// [`DEFAULT_OUTPUT_RETRIES`](crate::output::DEFAULT_OUTPUT_RETRIES)). The schema is checked when
/// the config is parsed.
///
/// ```
/// use hpd_agent::AgentConfig;
///
/// let config = AgentConfig::from_json(r#"{
///     "output_schema": {
///         "name": "weather",
///         "schema": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
///         "retries": 2
///     }
/// }"#)?;
/// let output = config.output_schema.as_ref().unwrap();
/// assert_eq!((output.name.as_str(), output.retries), ("weather", Some(2)));
///
/// let error = AgentConfig::from_json(r#"{"output_schema": {"name": "w", "schema": {"type": "float"}}}"#).unwrap_err();
/// # #[cfg(feature = "output-validation")]
/// assert!(error.to_string().starts_with("invalid AgentConfig at 'output_schema.schema'"), "{error}");
/// # #[cfg(feature = "output-validation")]
/// assert!(error.to_string().contains(": not a valid JSON Schema: "), "{error}");
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OutputSchemaConfig {
    /// The name the providers show the model (JSON `name`).
    pub name: String,
    /// The JSON Schema (JSON `schema`).
    pub schema: Value,
    /// What the schema is for (JSON `description`).
    pub description: Option<String>,
    /// Whether the OpenAI APIs get `strict: true` (JSON `strict`, default `true`).
    pub strict: bool,
    /// How many times a mismatching answer is sent back (JSON `retries`); `None`: the
    /// builder's.
    pub retries: Option<usize>,
}

impl OutputSchemaConfig {
    /// An output schema config with the defaults.
    ///
    /// ```
    /// use hpd_agent::config::OutputSchemaConfig;
    ///
    /// let config = OutputSchemaConfig::new("answer", serde_json::json!({"type": "string"}));
    /// assert!(config.strict && config.retries.is_none());
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        OutputSchemaConfig {
            name: name.into(),
            schema,
            description: None,
            strict: true,
            retries: None,
        }
    }

    /// The [`OutputSchema`] it describes.
    ///
    /// # Errors
    ///
    /// [`OutputSchemaError`]: see [`OutputSchema::new`].
    ///
    /// ```
    /// use hpd_agent::config::OutputSchemaConfig;
    ///
    /// let config = OutputSchemaConfig::new("answer", serde_json::json!({"type": "string"}));
    /// assert_eq!(config.to_schema()?.name(), "answer");
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    pub fn to_schema(&self) -> Result<OutputSchema, OutputSchemaError> {
        let mut schema =
            OutputSchema::new(self.name.clone(), self.schema.clone())?.with_strict(self.strict);
        if let Some(description) = &self.description {
            schema = schema.with_description(description.clone());
        }
        Ok(schema)
    }
}
