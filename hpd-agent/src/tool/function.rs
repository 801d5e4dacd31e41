//! [`Function`]: the one entry type of an agent's tool catalog, and the call path every entry
//! shares (argument parsing, panic catching, the timeout).
//!
//! What runs behind an entry (a macro harness method, a handler given at run time, a child
//! agent) is hidden behind the crate-internal [`Invoke`] trait, so nothing above this module
//! asks which kind of tool it has.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::FunctionContext;
use super::result::{FunctionFailure, ToolResult};
use crate::chat::ToolDefinition;

/// The future of one macro-generated function body: `Ok(result text)` or `Err(error text)`.
pub type BodyFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// Arguments the model sent that could not be turned into the function's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentsError(pub String);

impl fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The running body of a catalog entry: the result text or why it failed.
pub(crate) type CallFuture = BoxFuture<'static, Result<String, FunctionFailure>>;

/// What runs behind a catalog entry.
pub(crate) trait Invoke: Send + Sync + 'static {
    /// Starts the body with the call's arguments, already known to be a JSON object.
    ///
    /// # Errors
    ///
    /// The arguments do not fit the parameters; the body does not run then.
    fn invoke(&self, arguments: Value, ctx: FunctionContext) -> Result<CallFuture, ArgumentsError>;
}

/// A model-callable tool of an agent, ready to be called: a harness function (declared by the
/// macros or built at run time) or a sub-agent.
///
/// Cheap to clone. Its [`ToolDefinition`] is built once, when the agent is built.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::Registry;
///
/// #[derive(Default)]
/// pub struct Geometry;
///
/// #[tool_harness]
/// impl Geometry {
///     /// The area of a circle.
///     #[ai_function(timeout_ms = 50)]
///     fn circle_area(&self, radius: f64) -> f64 { std::f64::consts::PI * radius * radius }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let area = Registry::global().instantiate::<Geometry>()?.remove(0);
/// assert_eq!((area.name(), area.harness_name()), ("circle_area", "Geometry"));
/// assert_eq!(area.description(), "The area of a circle.");
/// assert_eq!(area.schema()["required"], serde_json::json!(["radius"]));
/// assert_eq!(area.definition().name, "circle_area");
/// assert_eq!(area.timeout(), Some(std::time::Duration::from_millis(50)));
/// assert!(area.call("c1", r#"{"radius": 1}"#, Default::default()).await.text.starts_with("3.14159"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Function {
    name: Arc<str>,
    harness: Arc<str>,
    definition: Arc<ToolDefinition>,
    timeout: Option<Duration>,
    body: Arc<dyn Invoke>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("harness", &self.harness)
            .field("name", &self.definition.name)
            .finish_non_exhaustive()
    }
}

impl Function {
    pub(crate) fn new(
        harness: impl Into<Arc<str>>,
        definition: ToolDefinition,
        timeout: Option<Duration>,
        body: Arc<dyn Invoke>,
    ) -> Self {
        Function {
            name: Arc::from(definition.name.as_str()),
            harness: harness.into(),
            definition: Arc::new(definition),
            timeout,
            body,
        }
    }

    /// The canonical tool name.
    ///
    /// ```
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Planets;
    /// # #[tool_harness] impl Planets { /// A planet by its number.
    /// # #[ai_function(name = "planet")] fn planet_by_number(&self, n: u8) -> String { n.to_string() } }
    ///
    /// // The tool name, which `name = "..."` may have changed from the method's.
    /// assert_eq!(Registry::global().instantiate::<Planets>()?[0].name(), "planet");
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of the harness it belongs to (for a sub-agent registered on its own, the
    /// sub-agent's name).
    ///
    /// ```
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Almanac;
    /// # #[tool_harness] impl Almanac { /// Sunrise.
    /// # #[ai_function] fn sunrise(&self) -> String { "06:12".into() } }
    ///
    /// assert_eq!(Registry::global().instantiate::<Almanac>()?[0].harness_name(), "Almanac");
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The description the model reads (metadata placeholders rendered).
    ///
    /// ```
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Tides;
    /// # #[tool_harness] impl Tides { /// The next high tide.
    /// # #[ai_function] fn high_tide(&self) -> String { "14:03".into() } }
    ///
    /// assert_eq!(Registry::global().instantiate::<Tides>()?[0].description(), "The next high tide.");
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn description(&self) -> &str {
        &self.definition.description
    }

    /// The JSON schema of the parameters.
    ///
    /// ```
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Moon;
    /// # #[tool_harness] impl Moon { /// The moon phase on a day.
    /// # #[ai_function] fn moon_phase(&self, day: u32) -> String { day.to_string() } }
    ///
    /// let schema = Registry::global().instantiate::<Moon>()?[0].schema().clone();
    /// assert_eq!(schema["properties"]["day"]["type"], "integer");
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.definition.parameters
    }

    /// The tool definition sent to models.
    ///
    /// ```
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Stars;
    /// # #[tool_harness] impl Stars { /// Visible stars.
    /// # #[ai_function] fn visible_stars(&self) -> u32 { 3000 } }
    ///
    /// let function = &Registry::global().instantiate::<Stars>()?[0];
    /// let definition = function.definition();
    /// assert_eq!((definition.name.as_str(), definition.description.as_str()), ("visible_stars", "Visible stars."));
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    /// The timeout of the body, if the function declares one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::Registry;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Comet;
    /// # #[tool_harness] impl Comet { /// Next comet.
    /// # #[ai_function(timeout_ms = 1500)] fn next_comet(&self) -> String { "2061".into() } }
    ///
    /// assert_eq!(Registry::global().instantiate::<Comet>()?[0].timeout(), Some(Duration::from_millis(1500)));
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Calls the function with the model's arguments text and returns the result the model sees.
    ///
    /// Never fails and never panics: arguments that are empty, blank or `null` count as `{}`;
    /// arguments that are not a JSON object or do not match the parameters give
    /// `Invalid arguments for '{name}': ...`; `Err(e)` gives `Error: {e}`; a panic gives
    /// `Error: function '{name}' panicked`; exceeding the timeout gives
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
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{FunctionFailure, Registry};
    ///
    /// #[derive(Default)]
    /// pub struct Pinger;
    ///
    /// #[tool_harness]
    /// impl Pinger {
    ///     /// Pings a host.
    ///     #[ai_function]
    ///     fn ping_host(&self, host: String) -> String { host }
    /// }
    ///
    /// let ping = &Registry::global().instantiate::<Pinger>()?[0];
    /// let result = ping.failure_result(&FunctionFailure::TimedOut(Duration::from_millis(250)));
    /// assert_eq!(result.text, "Error: function 'ping_host' timed out after 250 ms");
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
    #[must_use]
    pub fn failure_result(&self, failure: &FunctionFailure) -> ToolResult {
        failure.result_for(self.name())
    }

    /// Checks that the arguments text is a JSON object (or empty, blank or `null`, which count
    /// as `{}`), without running the body.
    ///
    /// # Errors
    ///
    /// The invalid-arguments message when it is not.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Echoer;
    ///
    /// #[tool_harness]
    /// impl Echoer {
    ///     /// Echoes.
    ///     #[ai_function]
    ///     fn echo_text(&self, text: Option<String>) -> String { text.unwrap_or_default() }
    /// }
    ///
    /// let echo = &Registry::global().instantiate::<Echoer>()?[0];
    /// assert_eq!(echo.check_arguments("")?, serde_json::json!({})); // empty counts as `{}`
    /// assert!(echo.check_arguments("[1, 2]").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_arguments(&self, arguments: &str) -> Result<Value, String> {
        parse_arguments_text(arguments)
    }

    /// Parses the arguments and runs the body, catching panics and enforcing the timeout.
    ///
    /// # Errors
    ///
    /// A [`FunctionFailure`] saying what went wrong.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{FunctionFailure, Registry};
    ///
    /// #[derive(Default)]
    /// pub struct Fragile;
    ///
    /// #[tool_harness]
    /// impl Fragile {
    ///     /// Panics.
    ///     #[ai_function]
    ///     fn break_down(&self) -> String { panic!("oops") }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let fragile = &Registry::global().instantiate::<Fragile>()?[0];
    /// let failure = fragile.run("c1", "{}", Default::default()).await.unwrap_err();
    /// assert_eq!(failure, FunctionFailure::Panicked); // caught; the payload is never reported
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run(
        &self,
        call_id: &str,
        arguments: &str,
        cancellation: CancellationToken,
    ) -> Result<String, FunctionFailure> {
        self.run_in(call_id, arguments, cancellation, None).await
    }

    /// [`run`](Self::run) with the run state the runtime hands to its own tools.
    pub(crate) async fn run_in(
        &self,
        call_id: &str,
        arguments: &str,
        cancellation: CancellationToken,
        run: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Result<String, FunctionFailure> {
        let value = parse_arguments_text(arguments).map_err(FunctionFailure::InvalidArguments)?;
        let mut ctx = FunctionContext::new(
            Arc::clone(&self.name),
            Arc::clone(&self.harness),
            call_id,
            cancellation,
        );
        ctx.run = run;
        // Starting the body runs user code (argument hydration); guard it like the body.
        let invoked = std::panic::catch_unwind(AssertUnwindSafe(|| self.body.invoke(value, ctx)))
            .map_err(|_| FunctionFailure::Panicked)?;
        let body = invoked.map_err(|e| FunctionFailure::InvalidArguments(e.0))?;
        let guarded = AssertUnwindSafe(body).catch_unwind();
        let outcome = match self.timeout {
            Some(limit) => match tokio::time::timeout(limit, guarded).await {
                Ok(outcome) => outcome,
                Err(_) => return Err(FunctionFailure::TimedOut(limit)),
            },
            None => guarded.await,
        };
        outcome.unwrap_or(Err(FunctionFailure::Panicked))
    }
}

/// Deserializes call arguments into a parameter type.
///
/// # Errors
///
/// serde's message, prefixed with the JSON path of the offending value when there is one.
pub(crate) fn deserialize_arguments<T: serde::de::DeserializeOwned>(
    arguments: Value,
) -> Result<T, ArgumentsError> {
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            ArgumentsError(inner.to_string())
        } else {
            ArgumentsError(format!("{path}: {inner}"))
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
