//! Model-callable functions: what the macros declare ([`FunctionSpec`]), what the runtime calls
//! ([`Function`]), what a call returns ([`ToolResult`]) and what a function body may receive
//! ([`FunctionContext`]).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::chat::ToolDefinition;

/// A harness instance, type-erased. The generated code downcasts it back to the harness type.
pub type HarnessObject = Arc<dyn Any + Send + Sync>;

/// The future of one function body: `Ok(result text)` or `Err(error text)`.
pub type BodyFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// Arguments the model sent that could not be turned into the function's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentsError(pub String);

impl fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Calls member `index` of a harness instance with JSON arguments.
///
/// Returns the body's future, or an [`ArgumentsError`] when the arguments do not match the
/// parameters (the body does not run then).
pub type InvokeFn =
    fn(&HarnessObject, usize, Value, FunctionContext) -> Result<BodyFuture, ArgumentsError>;

/// The static description of one `#[ai_function]`, emitted by the macros.
#[derive(Debug)]
pub struct FunctionSpec {
    /// The tool name.
    pub name: &'static str,
    /// The description with metadata placeholders rendered empty (used without metadata).
    pub description: &'static str,
    /// Timeout of the body in milliseconds, if any.
    pub timeout_ms: Option<u64>,
    /// Builds the parameter schema. Called once per harness per process.
    pub schema: fn() -> Value,
}

/// What a function body can learn about the call that runs it.
///
/// Declare a parameter of type `&FunctionContext` to receive it; it is left out of the schema.
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// struct Clock;
///
/// #[tool_harness]
/// impl Clock {
///     /// Tells which call this is.
///     #[ai_function]
///     fn whoami(&self, ctx: &FunctionContext) -> String {
///         format!("{} in {} ({})", ctx.function_name(), ctx.harness_name(), ctx.call_id())
///     }
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone)]
pub struct FunctionContext {
    function: &'static str,
    harness: &'static str,
    call_id: Arc<str>,
    cancellation: CancellationToken,
}

impl FunctionContext {
    /// A context for a call of `function` in `harness`.
    #[must_use]
    pub fn new(
        function: &'static str,
        harness: &'static str,
        call_id: impl Into<Arc<str>>,
        cancellation: CancellationToken,
    ) -> Self {
        FunctionContext {
            function,
            harness,
            call_id: call_id.into(),
            cancellation,
        }
    }

    /// The canonical function name.
    #[must_use]
    pub fn function_name(&self) -> &'static str {
        self.function
    }

    /// The name of the harness the function belongs to.
    #[must_use]
    pub fn harness_name(&self) -> &'static str {
        self.harness
    }

    /// The model's id of this call.
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The run's cancellation token. Long bodies should watch it.
    #[must_use]
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether the run was cancelled.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}

/// The result of a tool call as the model sees it: a text and an error flag.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// The text sent to the model.
    pub text: String,
    /// Whether it reports an error.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    #[must_use]
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: false,
        }
    }

    /// An error result.
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Why a function call failed, as `on_error` middleware hooks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FunctionFailure {
    /// The arguments did not match the parameters; the body did not run.
    InvalidArguments(String),
    /// The body returned `Err`; the text is the error's `Display`.
    Returned(String),
    /// The body panicked (the payload is never reported).
    Panicked,
    /// The body exceeded its timeout.
    TimedOut(Duration),
}

/// A function of a harness instance, ready to be called by the runtime.
///
/// Cheap to clone. Its [`ToolDefinition`] is built once, when the agent is built.
#[derive(Clone)]
pub struct Function {
    pub(crate) spec: &'static FunctionSpec,
    pub(crate) harness: &'static str,
    pub(crate) index: usize,
    pub(crate) instance: HarnessObject,
    pub(crate) invoke: InvokeFn,
    pub(crate) definition: Arc<ToolDefinition>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("harness", &self.harness)
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}

impl Function {
    /// The canonical tool name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The name of the harness it belongs to.
    #[must_use]
    pub fn harness_name(&self) -> &'static str {
        self.harness
    }

    /// The description the model reads (metadata placeholders rendered).
    #[must_use]
    pub fn description(&self) -> &str {
        &self.definition.description
    }

    /// The JSON schema of the parameters.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.definition.parameters
    }

    /// The tool definition sent to models.
    #[must_use]
    pub fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    /// The timeout of the body, if the function declares one.
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.spec.timeout_ms.map(Duration::from_millis)
    }

    /// Calls the function with the model's arguments text and returns the result the model sees.
    ///
    /// Never fails and never panics: arguments that are empty, blank or `null` count as `{}`;
    /// arguments that are not a JSON object or do not match the parameters give
    /// `Invalid arguments for '{name}': ...`; `Err(e)` gives `Error: {e}`; a panic gives
    /// `Error: function '{name}' panicked`; exceeding `timeout_ms` gives
    /// `Error: function '{name}' timed out after {ms} ms`. All of those have the error flag set.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// struct Calc;
    ///
    /// #[tool_harness]
    /// impl Calc {
    ///     /// Adds two integers.
    ///     #[ai_function]
    ///     fn add(&self, a: i64, b: i64) -> i64 { a + b }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let functions = Registry::global().instantiate::<Calc>().unwrap();
    /// let add = &functions[0];
    /// let ok = add.call("c1", r#"{"a": 2, "b": 3}"#, Default::default()).await;
    /// assert_eq!(ok.text, "5");
    /// let bad = add.call("c2", r#"{"a": "two"}"#, Default::default()).await;
    /// assert!(bad.is_error && bad.text.starts_with("Invalid arguments for 'add': "));
    /// # }
    /// ```
    pub async fn call(
        &self,
        call_id: &str,
        arguments: &str,
        cancellation: CancellationToken,
    ) -> ToolResult {
        match self.run(call_id, arguments, cancellation).await {
            Ok(text) => ToolResult::ok(text),
            Err(failure) => self.failure_result(&failure),
        }
    }

    /// The result text of a failure, as the model sees it.
    #[must_use]
    pub fn failure_result(&self, failure: &FunctionFailure) -> ToolResult {
        failure_result(self.name(), failure)
    }

    /// Validates the arguments without running the body.
    ///
    /// # Errors
    ///
    /// The invalid-arguments message when they do not match.
    pub fn check_arguments(&self, arguments: &str) -> Result<Value, String> {
        parse_arguments_text(arguments)
    }

    /// Parses the arguments and runs the body, catching panics and enforcing the timeout.
    ///
    /// # Errors
    ///
    /// A [`FunctionFailure`] saying what went wrong.
    pub async fn run(
        &self,
        call_id: &str,
        arguments: &str,
        cancellation: CancellationToken,
    ) -> Result<String, FunctionFailure> {
        let value = parse_arguments_text(arguments).map_err(FunctionFailure::InvalidArguments)?;
        let ctx = FunctionContext::new(self.spec.name, self.harness, call_id, cancellation);
        // Building the future runs user code (argument hydration); guard it like the body.
        let invoked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            (self.invoke)(&self.instance, self.index, value, ctx)
        }))
        .map_err(|_| FunctionFailure::Panicked)?;
        let body = invoked.map_err(|e| FunctionFailure::InvalidArguments(e.0))?;
        let guarded = AssertUnwindSafe(body).catch_unwind();
        let outcome = match self.timeout() {
            Some(limit) => match tokio::time::timeout(limit, guarded).await {
                Ok(outcome) => outcome,
                Err(_) => return Err(FunctionFailure::TimedOut(limit)),
            },
            None => guarded.await,
        };
        match outcome {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(message)) => Err(FunctionFailure::Returned(message)),
            Err(_) => Err(FunctionFailure::Panicked),
        }
    }
}

/// The result the model sees for a failed call of the tool `name`.
pub(crate) fn failure_result(name: &str, failure: &FunctionFailure) -> ToolResult {
    ToolResult::error(match failure {
        FunctionFailure::InvalidArguments(message) => {
            format!("Invalid arguments for '{name}': {message}")
        }
        FunctionFailure::Returned(message) => format!("Error: {message}"),
        FunctionFailure::Panicked => format!("Error: function '{name}' panicked"),
        FunctionFailure::TimedOut(d) => {
            format!(
                "Error: function '{name}' timed out after {} ms",
                d.as_millis()
            )
        }
    })
}

/// Parses the arguments text the model sent: empty, blank or `null` is `{}`; anything else must
/// be a JSON object.
pub(crate) fn parse_arguments_text(arguments: &str) -> Result<Value, String> {
    let trimmed = arguments.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Null) => Ok(Value::Object(serde_json::Map::new())),
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("arguments are not valid JSON: {e}")),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
