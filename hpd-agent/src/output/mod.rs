//! Typed final answers: the [`OutputSchema`] a run's final answer must match, how it is sent to
//! each provider, how the answer is checked, and the errors.
//!
//! Entry points: [`Agent::run_typed`](crate::Agent::run_typed) and
//! [`Session::run_typed`](crate::Session::run_typed) (a `T: DeserializeOwned + JsonSchema`
//! gives the schema), [`AgentBuilder::with_output_schema`](crate::AgentBuilder::with_output_schema)
//! and [`AgentRunConfig::with_output_schema`](crate::AgentRunConfig::with_output_schema) (any
//! JSON Schema, e.g. from the `output_schema` key of a JSON config).
//!
//! # What a typed run does
//!
//! 1. Every model request of the turn carries the schema in the provider's native structured
//!    output field (below). Tool calls go on as usual: the constraint applies to the model's
//!    final text answer, not to its tool calls.
//! 2. The final answer (a reply without tool calls) is parsed as JSON and checked against the
//!    schema as given (with the `output-validation` feature, on by default, by the `jsonschema`
//!    crate: every keyword, ranges and patterns included), and, for `run_typed::<T>`, by
//!    deserializing it into `T`.
//! 3. On a mismatch the agent asks the model again: the rejected answer stays in the history,
//!    followed by a user message naming the JSON path of the first mismatch and the error (see
//!    [`retry_message`]). [`DEFAULT_OUTPUT_RETRIES`] (1) such requests are made; set the number
//!    with `with_output_retries` on the builder or the run config, or `retries` in JSON. They do
//!    not count against `max_iterations`.
//! 4. When the retries are used up the run fails with [`RunError::Output`](crate::RunError::Output)
//!    carrying an [`OutputError`]: the raw text of the last answer, the JSON pointer of its
//!    first mismatch, the message. A refusal the provider reports as such (finish reason
//!    [`ContentFilter`](crate::chat::FinishReason::ContentFilter): Anthropic's `refusal` stop
//!    reason, a content filter) fails at once, without retry. An OpenAI `refusal` text comes
//!    back as the reply's text, does not parse, and is asked again like any mismatch.
//! 5. A typed run that pauses for approval (see [`approval`](crate::approval)) fails with an
//!    [`OutputError`] saying so; decide the calls with `Session::decide_with`, giving it
//!    `AgentRunConfig::with_output_schema` to have the answer checked.
//!
//! # On the wire
//!
//! | provider | field |
//! |---|---|
//! | Chat Completions ([`OpenAiClient`](crate::providers::openai::OpenAiClient)), llama.cpp's server and other compatible servers | `response_format: {"type": "json_schema", "json_schema": {"name", "description", "schema", "strict"}}` |
//! | OpenAI Responses ([`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient)) | `text: {"format": {"type": "json_schema", "name", "description", "schema", "strict"}}` |
//! | Anthropic Messages ([`AnthropicClient`](crate::providers::anthropic::AnthropicClient)) | `output_config: {"format": {"type": "json_schema", "schema"}}` |
//!
//! Anthropic documents two ways to get JSON: *JSON outputs* (`output_config.format`, which
//! constrains the text of the reply by constrained decoding) and forcing a tool whose input
//! schema is the answer's. This crate uses `output_config.format`: it is the mechanism the
//! structured outputs page documents for the response itself (generally available, no beta
//! header; the earlier top-level `output_format` with the `structured-outputs-2025-11-13`
//! header is the deprecated beta form), it leaves `tool_choice` free, so the model's own tool
//! calls still run before the answer (a forced answer tool would make every reply a call of
//! it), and the answer arrives as the reply's text, as on the other providers.
//!
//! A field of [`ModelOptions::extra`](crate::chat::ModelOptions::extra) with the same name
//! (`response_format`, `text`, `output_config`) replaces the one this crate writes, as every
//! `extra` field does: include the format in it.
//!
//! How tools and the format combine: Chat Completions, Responses and Anthropic apply the
//! format to the reply's text only, so the model may call tools first and answer in the schema
//! last. llama.cpp's server turns `response_format` into a grammar for every reply of that
//! request, so a model there cannot call tools while a schema is set; run the tool turn with
//! [`Session::run`](crate::Session::run) and ask for the typed answer with
//! `run_typed` in the same session.
//!
//! # Schemas for the vendors' strict modes
//!
//! The schema sent is derived from the schema given, once, when the [`OutputSchema`] is built:
//!
//! - A root that is not a plain object (`Vec<T>`, an enum, `Option<T>`, a number) is wrapped:
//!   `{"type": "object", "properties": {"value": <schema>}, "required": ["value"],
//!   "additionalProperties": false}`, since the vendors take an object root only; the answer's
//!   `value` is unwrapped before it is checked. `$defs` stay at the root.
//! - Every object schema gets `additionalProperties: false` (all three vendors require it in
//!   strict mode). An object whose `additionalProperties` is a schema (a `HashMap` field)
//!   cannot be expressed strictly: Chat Completions and Responses then get `strict: false`, and
//!   Anthropic may reject the request.
//! - Chat Completions and Responses: every property is listed in `required`; one that was
//!   optional becomes nullable (`"type": [..., "null"]`, or `anyOf` with `{"type": "null"}`).
//!   Before the answer is checked, a `null` the model gave such a property is removed again,
//!   so `Option` fields and `#[serde(default)]` fields work as written.
//! - `default` is dropped from the strict OpenAI form; `format` is dropped from non-string
//!   schemas (schemars writes `"format": "uint32"` and the like, which the vendors reject).
//! - Anthropic: the keywords its structured outputs do not support (`minimum`, `maximum`,
//!   `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`,
//!   `maxItems`, `minItems` above 1, `uniqueItems`) are removed from the sent schema and
//!   written into its `description`, as Anthropic's SDKs do. The answer is still checked
//!   against them here.
//! - `$schema` is dropped from the sent forms (the vendors take the schema without it).
//!
//! The answer is always checked against the schema as given, never against these forms.

mod check;
mod strict;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

pub(crate) use check::Mismatch;
pub use check::retry_message;

/// How many times a typed run asks the model again after an answer that does not match.
///
/// ```
/// assert_eq!(hpd_agent::output::DEFAULT_OUTPUT_RETRIES, 1);
/// ```
pub const DEFAULT_OUTPUT_RETRIES: usize = 1;

/// A JSON Schema the final answer of a run must match, with the name the providers show the
/// model, and its vendor forms (see the [module docs](self)). Cheap to clone.
///
/// ```
/// use hpd_agent::output::OutputSchema;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[allow(dead_code)]
/// struct Weather {
///     city: String,
///     celsius: f64,
/// }
///
/// let typed = OutputSchema::for_type::<Weather>()?;
/// assert_eq!(typed.name(), "Weather");
/// assert_eq!(typed.schema()["required"], json!(["city", "celsius"]));
///
/// let by_hand = OutputSchema::new("answer", json!({"type": "array", "items": {"type": "integer"}}))?
///     .with_description("The numbers asked for");
/// // An array root is wrapped for the vendors, and the answer unwrapped again.
/// assert_eq!(by_hand.openai_schema()["properties"]["value"]["type"], "array");
/// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
/// ```
#[derive(Clone)]
pub struct OutputSchema {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    description: Option<String>,
    schema: Value,
    strict: bool,
    forms: strict::Forms,
    checker: check::Checker,
}

impl fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputSchema")
            .field("name", &self.inner.name)
            .field("description", &self.inner.description)
            .field("strict", &self.inner.strict)
            .field("schema", &self.inner.schema)
            .finish_non_exhaustive()
    }
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
            || (self.inner.name == other.inner.name
                && self.inner.description == other.inner.description
                && self.inner.strict == other.inner.strict
                && self.inner.schema == other.inner.schema)
    }
}

impl OutputSchema {
    /// An output schema named `name` (what the OpenAI APIs show the model; 1 to 64 of
    /// `A-Z a-z 0-9 _ -`), strict by default.
    ///
    /// # Errors
    ///
    /// [`OutputSchemaError`] when the name is invalid, the schema is not an object (or a
    /// boolean schema), or, with the `output-validation` feature, it is not a valid JSON
    /// Schema (the error carries the JSON pointer of the offending keyword).
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("city", json!({"type": "object", "properties": {"name": {"type": "string"}}}))?;
    /// assert!(schema.is_strict());
    /// let error = OutputSchema::new("city", json!({"type": "object", "properties": {"name": {"type": "text"}}})).unwrap_err();
    /// assert_eq!(error.path, "/properties/name/type");
    /// assert!(OutputSchema::new("no spaces", json!({})).is_err());
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    pub fn new(name: impl Into<String>, schema: Value) -> Result<Self, OutputSchemaError> {
        Self::build(name.into(), None, schema, true)
    }

    /// The schema of `T` as schemars generates it (draft 2020-12, subschemas in `$defs`), named
    /// after the type (`Weather`, `Vec_of_Weather`: characters the name may not have become
    /// `_`). The doc comments of `T` and its fields become `description`s.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), for a hand-written `JsonSchema` impl that produces an invalid
    /// schema.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    ///
    /// let schema = OutputSchema::for_type::<Vec<u8>>()?;
    /// assert_eq!(schema.name(), "Array_of_uint8");
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    pub fn for_type<T: schemars::JsonSchema>() -> Result<Self, OutputSchemaError> {
        let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
            s.meta_schema = None;
        });
        let mut schema = settings.into_generator().root_schema_for::<T>().to_value();
        let description = match &mut schema {
            Value::Object(map) => {
                map.remove("title");
                map.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
            _ => None,
        };
        Self::build(tool_name(&T::schema_name()), description, schema, true)
    }

    fn build(
        name: String,
        description: Option<String>,
        schema: Value,
        strict: bool,
    ) -> Result<Self, OutputSchemaError> {
        if !valid_name(&name) {
            return Err(OutputSchemaError {
                path: String::new(),
                message: format!(
                    "output schema name '{name}' is invalid; use 1 to 64 of A-Z a-z 0-9 _ -"
                ),
            });
        }
        if !(schema.is_object() || schema.is_boolean()) {
            return Err(OutputSchemaError {
                path: String::new(),
                message: "a JSON Schema is an object (or a boolean)".to_owned(),
            });
        }
        let checker = check::Checker::new(&schema)?;
        let forms = strict::Forms::new(&schema);
        Ok(OutputSchema {
            inner: Arc::new(Inner {
                name,
                description,
                schema,
                strict,
                forms,
                checker,
            }),
        })
    }

    /// The schema with a description the providers show the model next to it.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("n", json!({"type": "integer"}))?.with_description("A count");
    /// assert_eq!(schema.description(), Some("A count"));
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn with_description(self, description: impl Into<String>) -> Self {
        self.rebuilt(|inner| inner.description = Some(description.into()))
    }

    /// Whether the OpenAI APIs get `strict: true` (default `true`). A schema that cannot be
    /// strict (an object with an `additionalProperties` schema) is sent with `strict: false`
    /// whatever this says.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let loose = OutputSchema::new("n", json!({"type": "integer"}))?.with_strict(false);
    /// assert!(!loose.is_strict());
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn with_strict(self, strict: bool) -> Self {
        self.rebuilt(|inner| inner.strict = strict)
    }

    fn rebuilt(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(shared) => Inner {
                name: shared.name.clone(),
                description: shared.description.clone(),
                schema: shared.schema.clone(),
                strict: shared.strict,
                forms: shared.forms.clone(),
                checker: shared.checker.clone(),
            },
        };
        change(&mut inner);
        OutputSchema {
            inner: Arc::new(inner),
        }
    }

    /// The name.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// assert_eq!(OutputSchema::new("report", serde_json::json!({}))?.name(), "report");
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The description, if any.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// assert_eq!(OutputSchema::new("report", serde_json::json!({}))?.description(), None);
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// The schema as given: what answers are checked against.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("n", json!({"type": "integer", "minimum": 1}))?;
    /// assert_eq!(schema.schema()["minimum"], 1);
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.inner.schema
    }

    /// Whether strict mode was asked for (see [`with_strict`](Self::with_strict)).
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// assert!(OutputSchema::new("n", serde_json::json!({}))?.is_strict());
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn is_strict(&self) -> bool {
        self.inner.strict
    }

    /// What the OpenAI APIs (Chat Completions, Responses, and compatible servers) are sent as
    /// `strict`: [`is_strict`](Self::is_strict), unless the schema cannot be strict.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    /// assert!(!OutputSchema::new("counts", map)?.openai_strict());
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn openai_strict(&self) -> bool {
        self.inner.strict && self.inner.forms.openai_strict
    }

    /// The schema sent to the OpenAI APIs: object root, `additionalProperties: false`, and,
    /// when sent strict, every property required (see the [module docs](self)).
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("p", json!({
    ///     "type": "object",
    ///     "properties": {"name": {"type": "string"}, "nick": {"type": "string"}},
    ///     "required": ["name"]
    /// }))?;
    /// let sent = schema.openai_schema();
    /// assert_eq!(sent["required"], json!(["name", "nick"]));
    /// assert_eq!(sent["properties"]["nick"]["type"], json!(["string", "null"]));
    /// assert_eq!(sent["additionalProperties"], false);
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn openai_schema(&self) -> &Value {
        if self.openai_strict() {
            &self.inner.forms.openai
        } else {
            &self.inner.forms.openai_loose
        }
    }

    /// The schema sent to Anthropic: object root, `additionalProperties: false`, the keywords
    /// Anthropic does not support moved into descriptions.
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("n", json!({
    ///     "type": "object",
    ///     "properties": {"count": {"type": "integer", "minimum": 1}},
    ///     "required": ["count"]
    /// }))?;
    /// let count = &schema.anthropic_schema()["properties"]["count"];
    /// assert!(count.get("minimum").is_none());
    /// assert_eq!(count["description"], "Constraints: minimum 1.");
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn anthropic_schema(&self) -> &Value {
        &self.inner.forms.anthropic
    }

    /// Checks a final answer: parses `text` as JSON, unwraps a wrapped root, removes the
    /// `null`s strict mode made the model write for optional properties, and validates the
    /// result against [`schema`](Self::schema). Returns the answer as JSON.
    ///
    /// # Errors
    ///
    /// [`OutputError`] with the JSON pointer of the first mismatch (`""` for the root, also
    /// when the text is not JSON) and the message (`attempts` is 1).
    ///
    /// ```
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// let schema = OutputSchema::new("p", json!({
    ///     "type": "object",
    ///     "properties": {"age": {"type": "integer", "minimum": 0}},
    ///     "required": ["age"]
    /// }))?;
    /// assert_eq!(schema.check(r#"{"age": 41}"#)?, json!({"age": 41}));
    /// let error = schema.check(r#"{"age": -1}"#).unwrap_err();
    /// # #[cfg(feature = "output-validation")]
    /// assert_eq!(error.path, "/age");
    /// assert_eq!(error.text, r#"{"age": -1}"#);
    /// assert_eq!(schema.check("not json").unwrap_err().path, "");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(&self, text: &str) -> Result<Value, OutputError> {
        self.check_value(text).map_err(|m| self.error(text, m, 1))
    }

    pub(crate) fn check_value(&self, text: &str) -> Result<Value, Mismatch> {
        let mut value = check::parse(text)?;
        if self.inner.forms.wrapped {
            value = strict::unwrap(value);
        }
        check::relax(&self.inner.schema, &mut value);
        self.inner.checker.validate(&value)?;
        Ok(value)
    }

    pub(crate) fn error(&self, text: &str, mismatch: Mismatch, attempts: usize) -> OutputError {
        OutputError {
            schema: self.inner.name.clone(),
            text: text.to_owned(),
            path: mismatch.path,
            message: mismatch.message,
            attempts,
        }
    }
}

/// Whether `name` is 1 to 64 of `A-Z a-z 0-9 _ -` (the OpenAI APIs' rule for format names).
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A schemars type name as a format name: other characters become `_`, cut to 64.
fn tool_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if out.is_empty() {
        out.push_str("answer");
    }
    out
}

/// An output schema that cannot be used.
///
/// ```
/// use hpd_agent::output::OutputSchema;
/// use serde_json::json;
///
/// let error = OutputSchema::new("x", json!("a string")).unwrap_err();
/// assert_eq!(error.to_string(), "invalid output schema: a JSON Schema is an object (or a boolean)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid output schema: {message}{}", at(path))]
#[non_exhaustive]
pub struct OutputSchemaError {
    /// The JSON pointer of the offending keyword in the schema (`""`: the whole schema).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" (at {path})")
    }
}

/// The final answer of a typed run did not match its schema, after every retry; or the model
/// refused.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// #[allow(dead_code)]
/// struct Count { n: u32 }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([
///     ChatResponse::text(r#"{"n": "three"}"#),
///     ChatResponse::text(r#"{"n": -3}"#),
/// ]);
/// let agent = AgentBuilder::new().with_chat_client(model).build()?;
/// let Err(RunError::Output(error)) = agent.run_typed::<Count>("Count them").await else { panic!() };
/// assert_eq!((error.text.as_str(), error.path.as_str(), error.attempts), (r#"{"n": -3}"#, "/n", 2));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the answer does not match the output schema '{schema}' at '{path}' after {attempts} attempt(s): {message}"
)]
#[non_exhaustive]
pub struct OutputError {
    /// The name of the schema.
    pub schema: String,
    /// The raw text of the last answer.
    pub text: String,
    /// The JSON pointer of the first mismatch in the answer (`""`: the answer as a whole, e.g.
    /// when it is not JSON).
    pub path: String,
    /// What is wrong there.
    pub message: String,
    /// How many answers the model gave (1 + the retries made).
    pub attempts: usize,
}

impl OutputError {
    pub(crate) fn from_mismatch(schema: &str, text: &str, mismatch: Mismatch) -> Self {
        OutputError {
            schema: tool_name(schema),
            text: text.to_owned(),
            path: mismatch.path,
            message: mismatch.message,
            attempts: 1,
        }
    }
}
