//! [`Tool`]: one tool of a harness built at run time, the checks its name and schema pass, and
//! the catalog body that runs its handler.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::names::is_valid;
use crate::chat::ToolAnnotations;
use crate::error::BuildError;
use crate::tool::{
    CallParts, FunctionContext, FunctionFailure, Invoke, Started, ToolResult, parse_arguments_text,
};

pub(crate) type Handler =
    dyn Fn(Value, FunctionContext) -> BoxFuture<'static, ToolResult> + Send + Sync;

/// What [`Tool::new`] accepts as the parameter schema: a JSON value (`serde_json::json!`, a
/// `Value`, an object map) or JSON text. Text that is not JSON fails
/// [`HarnessBuilder::build`](crate::HarnessBuilder::build) like any other invalid schema.
///
/// ```
/// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
///
/// let from_text = Tool::new("t", "", r#"{"type": "object"}"#, |_, _| async { ToolResult::ok("") });
/// assert!(HarnessBuilder::new("H").with_tool(from_text).build().is_ok());
/// let broken = Tool::new("t", "", "{not json", |_, _| async { ToolResult::ok("") });
/// let error = HarnessBuilder::new("H").with_tool(broken).build().unwrap_err();
/// assert!(error.to_string().contains("is not a JSON object schema: not valid JSON"));
/// ```
pub trait IntoToolSchema {
    /// The schema, or why it is not one.
    ///
    /// # Errors
    ///
    /// The text is not JSON.
    ///
    /// ```
    /// use hpd_agent::harness::IntoToolSchema;
    /// use serde_json::json;
    ///
    /// assert_eq!(r#"{"type": "object"}"#.into_tool_schema(), Ok(json!({"type": "object"})));
    /// assert!("{oops".into_tool_schema().is_err());
    /// ```
    fn into_tool_schema(self) -> Result<Value, String>;
}

impl IntoToolSchema for Value {
    fn into_tool_schema(self) -> Result<Value, String> {
        Ok(self)
    }
}

impl IntoToolSchema for &Value {
    fn into_tool_schema(self) -> Result<Value, String> {
        Ok(self.clone())
    }
}

impl IntoToolSchema for serde_json::Map<String, Value> {
    fn into_tool_schema(self) -> Result<Value, String> {
        Ok(Value::Object(self))
    }
}

impl IntoToolSchema for &str {
    fn into_tool_schema(self) -> Result<Value, String> {
        serde_json::from_str(self).map_err(|e| format!("not valid JSON: {e}"))
    }
}

impl IntoToolSchema for String {
    fn into_tool_schema(self) -> Result<Value, String> {
        self.as_str().into_tool_schema()
    }
}

/// One tool of a [`DynamicHarness`](crate::harness::DynamicHarness): a name, a description, a JSON
/// schema of its parameters and the async handler that runs it.
///
/// The handler gets the call's arguments (always a JSON object: empty, blank or `null`
/// arguments count as `{}`, anything else that is not an object is answered with the
/// invalid-arguments result without calling it) and a [`FunctionContext`]. Its [`ToolResult`]
/// reaches the model as it is; an error result is reported to `on_error` middleware hooks as
/// [`FunctionFailure::Reported`]. A handler that panics gives
/// `Error: function '{name}' panicked`, one that exceeds its timeout
/// `Error: function '{name}' timed out after {ms} ms`.
///
/// ```
/// use hpd_agent::{Tool, ToolResult};
/// use serde_json::json;
///
/// let echo = Tool::new(
///     "echo",
///     "Repeats a text",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args, _ctx| async move { ToolResult::ok(args["text"].as_str().unwrap_or_default()) },
/// )
/// .with_timeout(std::time::Duration::from_secs(5));
/// assert_eq!(echo.name(), "echo");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    /// Why the schema given to [`Tool::new`] is not one; reported by the build.
    pub(crate) schema_error: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) output_schema: Option<Arc<Value>>,
    /// What the tool does to its environment.
    pub(crate) annotations: ToolAnnotations,
    pub(crate) handler: Arc<Handler>,
    /// Whether calls wait for a person's approval.
    pub(crate) requires_approval: bool,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` (`[A-Za-z0-9_-]{1,64}`), described to the model by `description`,
    /// whose parameters `schema` describes (a JSON object schema: `{"type": "object", ...}`, as
    /// a value or as JSON text), run by `handler`. Names and schema are checked by
    /// [`HarnessBuilder::build`](crate::HarnessBuilder::build).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let divide = Tool::new(
    ///     "divide",
    ///     "Divides a by b",
    ///     json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
    ///     |args, ctx| async move {
    ///         let (a, b) = (args["a"].as_f64().unwrap_or(0.0), args["b"].as_f64().unwrap_or(0.0));
    ///         if b == 0.0 {
    ///             // Sent to the model as it is, with the error flag.
    ///             return ToolResult::error(format!("Error: {} cannot divide by zero", ctx.function_name()));
    ///         }
    ///         ToolResult::ok((a / b).to_string())
    ///     },
    /// );
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Math").with_tool(divide).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// assert_eq!(tools.call_tool("c1", "divide", r#"{"a": 1, "b": 4}"#).await?.result.text, "0.25");
    /// assert!(tools.call_tool("c2", "divide", r#"{"a": 1, "b": 0}"#).await?.result.is_error);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: impl IntoToolSchema,
        handler: F,
    ) -> Self
    where
        F: Fn(Value, FunctionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        let (schema, schema_error) = match schema.into_tool_schema() {
            Ok(schema) => (schema, None),
            Err(error) => (Value::Null, Some(error)),
        };
        Tool {
            name: name.into(),
            description: description.into(),
            schema,
            schema_error,
            timeout: None,
            output_schema: None,
            annotations: ToolAnnotations::new(),
            handler: Arc::new(move |arguments, ctx| Box::pin(handler(arguments, ctx))),
            requires_approval: false,
        }
    }

    /// Says what the tool does to its environment: an MCP server advertises it, and a
    /// collapsed harness's hints leave a tool that changes things out for a request that asks
    /// for no change ([`ToolAnnotations`]).
    ///
    /// ```
    /// use hpd_agent::chat::ToolAnnotations;
    /// use hpd_agent::{Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let drop_table = Tool::new("drop_table", "Drops a table", json!({"type": "object"}), |_, _| async {
    ///     ToolResult::ok("dropped")
    /// })
    /// .with_annotations(ToolAnnotations::new().with_read_only(false).with_destructive(true));
    /// assert!(drop_table.annotations().changes_things());
    /// ```
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// What the tool says it does to its environment ([`with_annotations`](Self::with_annotations)).
    #[must_use]
    pub fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    /// Makes every call of the tool wait for a person's approval: a run pauses before the call
    /// runs and returns it in [`RunOutput::pending_approvals`](crate::RunOutput::pending_approvals);
    /// see [`approval`](crate::approval).
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let wire = Tool::new("wire", "Wires money", json!({"type": "object"}), |_, _| async { ToolResult::ok("sent") })
    ///     .with_approval_required();
    /// assert!(wire.needs_approval());
    /// ```
    #[must_use]
    pub fn with_approval_required(mut self) -> Self {
        self.requires_approval = true;
        self
    }

    /// Renamed to [`with_approval_required`](Self::with_approval_required).
    #[deprecated(since = "0.1.0", note = "renamed to `with_approval_required`")]
    pub fn requires_approval(self) -> Self {
        self.with_approval_required()
    }

    /// Whether calls of the tool wait for approval ([`with_approval_required`](Self::with_approval_required)).
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    ///
    /// let read = Tool::new("read", "Reads", serde_json::json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// assert!(!read.needs_approval());
    /// ```
    #[must_use]
    pub fn needs_approval(&self) -> bool {
        self.requires_approval
    }

    /// Abandons the handler's future after `timeout`; the model gets
    /// `Error: function '{name}' timed out after {ms} ms`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let slow = Tool::new("slow", "Takes long", json!({"type": "object"}), |_, _| async {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     ToolResult::ok("late")
    /// })
    /// .with_timeout(Duration::from_millis(10));
    /// assert_eq!(slow.timeout(), Some(Duration::from_millis(10)));
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Slow").with_tool(slow).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let outcome = agent.tool_session().call_tool("c1", "slow", "{}").await?;
    /// assert_eq!(outcome.result.text, "Error: function 'slow' timed out after 10 ms");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Declares the JSON schema of the tool's structured result (its
    /// [`ToolResult::structured`] value), which an MCP server advertises as the tool's
    /// `outputSchema`. MCP requires an object schema; the handler should then return results
    /// with a structured value that fits it.
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let weather = Tool::new("weather", "The weather", json!({"type": "object"}), |_, _| async {
    ///     ToolResult::structured(json!({"celsius": 21}))
    /// })
    /// .with_output_schema(json!({"type": "object", "properties": {"celsius": {"type": "number"}}}));
    /// assert_eq!(weather.output_schema().unwrap()["properties"]["celsius"]["type"], "number");
    /// ```
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Arc::new(schema));
        self
    }

    /// The output schema, if one is declared.
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    ///
    /// let tool = Tool::new("lookup", "", r#"{"type": "object"}"#, |_, _| async { ToolResult::ok("") });
    /// assert!(tool.output_schema().is_none());
    /// ```
    #[must_use]
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_deref()
    }

    /// The tool name.
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    ///
    /// let tool = Tool::new("lookup", "Looks up a word", r#"{"type": "object"}"#, |_, _| async { ToolResult::ok("") });
    /// assert_eq!(tool.name(), "lookup");
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    ///
    /// let tool = Tool::new("lookup", "Looks up a word", r#"{"type": "object"}"#, |_, _| async { ToolResult::ok("") });
    /// assert_eq!(tool.description(), "Looks up a word");
    /// ```
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The parameter schema (`null` when the text given to [`Tool::new`] was not JSON).
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = Tool::new("lookup", "", r#"{"type": "object", "properties": {"word": {"type": "string"}}}"#, |_, _| async {
    ///     ToolResult::ok("")
    /// });
    /// assert_eq!(tool.schema()["properties"]["word"], json!({"type": "string"}));
    /// ```
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The timeout, if set.
    ///
    /// ```
    /// use hpd_agent::{Tool, ToolResult};
    ///
    /// let tool = Tool::new("lookup", "", r#"{"type": "object"}"#, |_, _| async { ToolResult::ok("") });
    /// assert_eq!(tool.timeout(), None); // no timeout unless `with_timeout` sets one
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// Checks names and schemas of a tool list and normalises the schemas.
pub(crate) fn checked(harness: &str, tools: Vec<Tool>) -> Result<Arc<[Tool]>, BuildError> {
    // Tool names are compared exactly (only harness names are case-insensitive); a set keeps
    // the check linear in the number of tools.
    let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
    for tool in &tools {
        if !is_valid(&tool.name) {
            return Err(BuildError::InvalidName {
                what: "tool",
                name: tool.name.clone(),
            });
        }
        if !seen.insert(&tool.name) {
            return Err(BuildError::DuplicateTool {
                name: tool.name.clone(),
                first: harness.to_owned(),
                second: harness.to_owned(),
            });
        }
    }
    tools
        .into_iter()
        .map(|mut tool| {
            let checked = match tool.schema_error.take() {
                Some(error) => Err(error),
                None => normalise_schema(&mut tool.schema),
            };
            checked.map_err(|reason| BuildError::InvalidSchema {
                tool: tool.name.clone(),
                reason,
            })?;
            Ok(tool)
        })
        .collect()
}

/// A parameter schema must be an object with `"type": "object"`; `properties` (added when
/// missing) must be an object and `required`, when present, an array of strings.
fn normalise_schema(schema: &mut Value) -> Result<(), String> {
    let Value::Object(map) = schema else {
        return Err("expected a JSON object".to_owned());
    };
    match map.get("type") {
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => return Err(format!("\"type\" must be \"object\", found {other}")),
        None => return Err("\"type\": \"object\" is missing".to_owned()),
    }
    match map.get("properties") {
        Some(Value::Object(_)) => {}
        Some(_) => return Err("\"properties\" must be an object".to_owned()),
        None => {
            map.insert(
                "properties".to_owned(),
                Value::Object(serde_json::Map::new()),
            );
        }
    }
    match map.get("required") {
        None => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {}
        Some(_) => return Err("\"required\" must be an array of strings".to_owned()),
    }
    Ok(())
}

/// The body of a run-time tool: its handler.
pub(crate) struct HandlerBody(pub(crate) Arc<Handler>);

impl Invoke for HandlerBody {
    fn invoke(&self, arguments: &str, call: &CallParts<'_>) -> Started {
        let arguments = match parse_arguments_text(arguments) {
            Ok(arguments) => arguments,
            Err(message) => return Started::Done(Err(FunctionFailure::InvalidArguments(message))),
        };
        let future = (self.0)(arguments, call.context());
        // An error result is the handler's failure, in the one form `on_error` sees; it reaches
        // the model as it is (moved, not copied).
        Started::Running(Box::pin(async move {
            let result = future.await;
            if result.is_error {
                Err(FunctionFailure::Reported(result))
            } else {
                Ok(result)
            }
        }))
    }
}
