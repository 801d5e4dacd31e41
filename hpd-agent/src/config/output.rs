//! `output_schema`: the schema every final answer of a configured agent must match.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value;

use super::keys::Keys;
use crate::output::{OutputSchema, OutputSchemaError};

/// The `output_schema` of an [`AgentConfig`](crate::AgentConfig): a JSON Schema the agent's
/// final answers must match (see [`output`](crate::output)).
///
/// JSON keys: `name` (required; 1 to 64 of `A-Z a-z 0-9 _ -`), `schema` (required; a JSON
/// Schema object, kept as written: its keys are the schema's, not normalised), `description`,
/// `strict` (default `true`), `retries` (default
/// [`DEFAULT_OUTPUT_RETRIES`](crate::DEFAULT_OUTPUT_RETRIES)). The schema is checked when
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
/// # Ok::<(), hpd_agent::ConfigError>(())
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
    /// # Ok::<(), hpd_agent::OutputSchemaError>(())
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

#[derive(Clone, Copy)]
pub(super) enum OutputKey {
    Name,
    Schema,
    Description,
    Strict,
    Retries,
}

pub(super) const OUTPUT_KEYS: &[(OutputKey, &str)] = &[
    (OutputKey::Name, "name"),
    (OutputKey::Schema, "schema"),
    (OutputKey::Description, "description"),
    (OutputKey::Strict, "strict"),
    (OutputKey::Retries, "retries"),
];

impl<'de> Deserialize<'de> for OutputSchemaConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OutputVisitor)
    }
}

/// The schema as a seed, so a bad one is reported at `output_schema.schema`.
struct SchemaValue;

impl<'de> de::DeserializeSeed<'de> for SchemaValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        let schema = Value::deserialize(deserializer)?;
        // A name that passes, so only the schema is judged here.
        if let Err(e) = OutputSchema::new("schema", schema.clone()) {
            let at = if e.path.is_empty() {
                String::new()
            } else {
                format!(" (at {})", e.path)
            };
            return Err(de::Error::custom(format_args!("{}{at}", e.message)));
        }
        Ok(schema)
    }
}

/// The name, checked as [`OutputSchema::new`] checks it.
struct NameValue;

impl<'de> de::DeserializeSeed<'de> for NameValue {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Err(e) = OutputSchema::new(name.clone(), Value::Bool(true)) {
            return Err(de::Error::custom(e.message));
        }
        Ok(name)
    }
}

struct OutputVisitor;

impl<'de> Visitor<'de> for OutputVisitor {
    type Value = OutputSchemaConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an OutputSchema object with 'name' and 'schema'")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OutputSchemaConfig, A::Error> {
        let mut keys = Keys::new("OutputSchema", OUTPUT_KEYS);
        let (mut name, mut schema) = (None, None);
        let mut config = OutputSchemaConfig::new("", Value::Null);
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                OutputKey::Name => name = Some(map.next_value_seed(NameValue)?),
                OutputKey::Schema => schema = Some(map.next_value_seed(SchemaValue)?),
                OutputKey::Description => config.description = map.next_value()?,
                OutputKey::Strict => config.strict = map.next_value()?,
                OutputKey::Retries => config.retries = map.next_value()?,
            }
        }
        config.name = name.ok_or_else(|| {
            de::Error::custom("missing key 'name' in OutputSchema; name the answer's format")
        })?;
        config.schema = schema.ok_or_else(|| {
            de::Error::custom("missing key 'schema' in OutputSchema; give the answer's JSON Schema")
        })?;
        Ok(config)
    }
}

impl Serialize for OutputSchemaConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 2
            + usize::from(self.description.is_some())
            + usize::from(!self.strict)
            + usize::from(self.retries.is_some());
        let mut state = serializer.serialize_struct("OutputSchema", len)?;
        state.serialize_field("name", &self.name)?;
        state.serialize_field("schema", &self.schema)?;
        if self.description.is_some() {
            state.serialize_field("description", &self.description)?;
        }
        if !self.strict {
            state.serialize_field("strict", &self.strict)?;
        }
        if self.retries.is_some() {
            state.serialize_field("retries", &self.retries)?;
        }
        state.end()
    }
}
