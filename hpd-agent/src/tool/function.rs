//! [`Function`]: the one entry type of an agent's tool catalog, and the call path every entry
//! shares (argument parsing, panic catching, the timeout).
//!
//! What runs behind an entry (a macro harness method, a handler given at run time, a child
//! agent) is hidden behind the crate-internal [`Invoke`] trait, so nothing above this module
//! asks which kind of tool it has.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::FunctionContext;
use super::result::{FunctionFailure, ToolResult};
use crate::arguments::{ArgumentCheck, Checked};
use crate::ask::Asker;
use crate::chat::ToolDefinition;
use crate::events::EventSink;

/// The future of a function body that is still running: its result, or why it failed.
pub type BodyFuture = BoxFuture<'static, Result<ToolResult, FunctionFailure>>;

/// How a function body started: a synchronous one (a non-`async` method, arguments that did
/// not parse) has finished already, with no future and no executor; an `async` one returns
/// its future. Both end in the one form a call's outcome has until the model sees it:
/// `Ok(result)` or the [`FunctionFailure`] that `on_error` hooks see.
pub enum Started {
    /// The body finished while starting.
    Done(Result<ToolResult, FunctionFailure>),
    /// The body is still running.
    Running(BodyFuture),
}

/// Arguments the model sent that could not be turned into the function's parameters: the
/// text of [`FunctionFailure::InvalidArguments`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgumentsError(pub(crate) String);

impl fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<ArgumentsError> for FunctionFailure {
    fn from(error: ArgumentsError) -> Self {
        FunctionFailure::InvalidArguments(error.0)
    }
}

/// What a body needs to build the [`FunctionContext`] of its call. The context is built only
/// for bodies that ask for it ([`context`](Self::context)), so a call of a method without a
/// context parameter allocates nothing for it.
pub struct CallParts<'a> {
    function: &'a Arc<str>,
    harness: &'a Arc<str>,
    call_id: &'a str,
    cancellation: &'a CancellationToken,
    events: Option<&'a Arc<dyn EventSink>>,
    asker: Option<&'a Arc<dyn Asker>>,
    turn_id: Option<&'a Arc<str>>,
    arguments: &'a str,
}

impl CallParts<'_> {
    /// The context of the call.
    #[must_use]
    pub fn context(&self) -> FunctionContext {
        let mut ctx = FunctionContext::new(
            Arc::clone(self.function),
            Arc::clone(self.harness),
            self.call_id,
            self.cancellation.clone(),
        );
        ctx.set_events(self.events.cloned());
        ctx.set_asker(self.asker.cloned());
        if let Some(turn_id) = self.turn_id {
            ctx.set_turn(Arc::clone(turn_id), self.arguments);
        }
        ctx
    }
}

/// What runs behind a catalog entry.
pub(crate) trait Invoke: Send + Sync + 'static {
    /// Starts the body with the call's arguments text (as the model sent it). Arguments that
    /// are not a JSON object (empty, blank and `null` count as `{}`) or do not fit the
    /// parameters give [`FunctionFailure::InvalidArguments`] at once; the body does not run
    /// then.
    fn invoke(&self, arguments: &str, call: &CallParts<'_>) -> Started;
}

/// A model-callable tool of an agent, ready to be called: a harness function (declared by the
/// macros or built at run time) or a sub-agent.
///
/// Cheap to clone. Its [`ToolDefinition`] is built once, when the agent is built.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::harness::HarnessInfo;
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
/// let area = HarnessInfo::of::<Geometry>().functions()?.remove(0);
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
    /// Whether its calls wait for a person's approval (see [`approval`](crate::approval)).
    requires_approval: bool,
    /// Whether its arguments are checked against its parameter schema before the body starts
    /// (set by the toolset for collapsed members in `fixed` and `native`).
    checks_arguments: bool,
    /// Its parameter schema compiled for that check, on the first call that needs it; shared
    /// by the clones.
    check: Arc<OnceLock<ArgumentCheck>>,
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
            requires_approval: false,
            checks_arguments: false,
            check: Arc::default(),
        }
    }

    /// Checks (or stops checking) its arguments against its parameter schema before the body
    /// starts: for the calls that no provider's strict decoding shaped (see the `arguments`
    /// module).
    pub(crate) fn set_argument_check(&mut self, on: bool) {
        self.checks_arguments = on;
    }

    /// The same function, with its calls waiting for approval or not.
    pub(crate) fn with_approval(mut self, requires_approval: bool) -> Self {
        self.requires_approval = requires_approval;
        self
    }

    /// Whether its calls wait for a person's approval before they run (declared with
    /// `#[ai_function(requires_approval)]`, [`Tool::with_approval_required`](crate::Tool::with_approval_required)
    /// or a config entry's `requires_approval`; middleware may still decide otherwise per call).
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct ApprovedPayouts;
    /// # #[tool_harness] impl ApprovedPayouts { /// Pays.
    /// # #[ai_function(requires_approval)] fn pay(&self, cents: u64) -> u64 { cents } }
    ///
    /// assert!(HarnessInfo::of::<ApprovedPayouts>().functions()?[0].requires_approval());
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn requires_approval(&self) -> bool {
        self.requires_approval
    }

    /// The canonical tool name.
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Planets;
    /// # #[tool_harness] impl Planets { /// A planet by its number.
    /// # #[ai_function(name = "planet")] fn planet_by_number(&self, n: u8) -> String { n.to_string() } }
    ///
    /// // The tool name, which `name = "..."` may have changed from the method's.
    /// assert_eq!(HarnessInfo::of::<Planets>().functions()?[0].name(), "planet");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of the harness it belongs to (for a sub-agent registered on its own, the
    /// sub-agent's name).
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Almanac;
    /// # #[tool_harness] impl Almanac { /// Sunrise.
    /// # #[ai_function] fn sunrise(&self) -> String { "06:12".into() } }
    ///
    /// assert_eq!(HarnessInfo::of::<Almanac>().functions()?[0].harness_name(), "Almanac");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The description the model reads (metadata placeholders rendered).
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Tides;
    /// # #[tool_harness] impl Tides { /// The next high tide.
    /// # #[ai_function] fn high_tide(&self) -> String { "14:03".into() } }
    ///
    /// assert_eq!(HarnessInfo::of::<Tides>().functions()?[0].description(), "The next high tide.");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn description(&self) -> &str {
        &self.definition.description
    }

    /// The JSON schema of the parameters.
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Moon;
    /// # #[tool_harness] impl Moon { /// The moon phase on a day.
    /// # #[ai_function] fn moon_phase(&self, day: u32) -> String { day.to_string() } }
    ///
    /// let schema = HarnessInfo::of::<Moon>().functions()?[0].schema().clone();
    /// assert_eq!(schema["properties"]["day"]["type"], "integer");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.definition.parameters
    }

    /// The tool definition sent to models.
    ///
    /// ```
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Stars;
    /// # #[tool_harness] impl Stars { /// Visible stars.
    /// # #[ai_function] fn visible_stars(&self) -> u32 { 3000 } }
    ///
    /// let function = &HarnessInfo::of::<Stars>().functions()?[0];
    /// let definition = function.definition();
    /// assert_eq!((definition.name.as_str(), definition.description.as_str()), ("visible_stars", "Visible stars."));
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    #[must_use]
    pub fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    /// The timeout of the body, if the function declares one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::harness::HarnessInfo;
    /// # use hpd_agent::prelude::*;
    /// # #[derive(Default)] pub struct Comet;
    /// # #[tool_harness] impl Comet { /// Next comet.
    /// # #[ai_function(timeout_ms = 1500)] fn next_comet(&self) -> String { "2061".into() } }
    ///
    /// assert_eq!(HarnessInfo::of::<Comet>().functions()?[0].timeout(), Some(Duration::from_millis(1500)));
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
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
    /// use hpd_agent::harness::HarnessInfo;
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
    /// let functions = HarnessInfo::of::<Calc>().functions().unwrap();
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
            Ok(result) => result,
            Err(failure) => failure.into_result(self.name()),
        }
    }

    /// The result text of a failure, as the model sees it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::harness::HarnessInfo;
    /// use hpd_agent::tool::FunctionFailure;
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
    /// let ping = &HarnessInfo::of::<Pinger>().functions()?[0];
    /// let result = ping.failure_result(&FunctionFailure::TimedOut(Duration::from_millis(250)));
    /// assert_eq!(result.text, "Error: function 'ping_host' timed out after 250 ms");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
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
    /// use hpd_agent::harness::HarnessInfo;
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
    /// let echo = &HarnessInfo::of::<Echoer>().functions()?[0];
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
    /// use hpd_agent::harness::HarnessInfo;
    /// use hpd_agent::tool::FunctionFailure;
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
    /// let fragile = &HarnessInfo::of::<Fragile>().functions()?[0];
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
    ) -> Result<ToolResult, FunctionFailure> {
        self.run_in(call_id, arguments, &cancellation, None, None, None)
            .await
    }

    /// [`run`](Self::run) with the run state the runtime hands to its own tools.
    ///
    /// A synchronous body runs to completion inside the first poll, without a boxed future
    /// and without the timer (a timeout cannot interrupt a body that does not yield).
    pub(crate) async fn run_in(
        &self,
        call_id: &str,
        arguments: &str,
        cancellation: &CancellationToken,
        events: Option<&Arc<dyn EventSink>>,
        asker: Option<&Arc<dyn Asker>>,
        turn_id: Option<&Arc<str>>,
    ) -> Result<ToolResult, FunctionFailure> {
        let repaired;
        let arguments = if self.checks_arguments {
            match self
                .check
                .get_or_init(|| ArgumentCheck::new(&self.name, &self.definition.parameters))
                .check(arguments)
            {
                Checked::Pass => arguments,
                Checked::Repaired(text) => {
                    repaired = text;
                    repaired.as_str()
                }
                Checked::Mismatch(mismatch) => {
                    return Err(FunctionFailure::InvalidArguments(mismatch));
                }
            }
        } else {
            arguments
        };
        let parts = CallParts {
            function: &self.name,
            harness: &self.harness,
            call_id,
            cancellation,
            events,
            asker,
            turn_id,
            arguments,
        };
        // Starting the body runs user code (argument hydration, a synchronous body); guard it
        // like the body.
        let started =
            std::panic::catch_unwind(AssertUnwindSafe(|| self.body.invoke(arguments, &parts)))
                .map_err(|_| FunctionFailure::Panicked)?;
        let body = match started {
            Started::Done(outcome) => return outcome,
            Started::Running(body) => body,
        };
        let guarded = AssertUnwindSafe(body).catch_unwind();
        let outcome = match self.timeout {
            // Boxed: the timer is large, and would otherwise enlarge the future of every call.
            Some(limit) => match Box::pin(tokio::time::timeout(limit, guarded)).await {
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

/// Parses the arguments text the model sent straight into a parameter type, with the rules of
/// [`parse_arguments_text`] followed by [`deserialize_arguments`] and exactly their error texts.
///
/// The common case (a JSON object that fits `T`) is parsed once, from the text into `T`. Any
/// failure is parsed again the slow way (text to [`Value`], then `T` with the JSON path of the
/// offending value), so an error says what it always said and takes the same precedence
/// (invalid JSON before a wrong type, the first wrong field in key order). The slow way also
/// decides the cases where the one-pass parse could differ: duplicate keys (the last one wins)
/// and texts with enough brackets to reach serde_json's nesting limit of 128 (which the
/// one-pass parse does not apply to values it skips). Where the one-pass parse succeeds it is
/// the answer, so a parameter gets what its type can hold even when a [`Value`] could not
/// (an `i128` beyond the `u64` range; the slow way alone would reject it as a float): the
/// `tool_args_macro` fuzz target's mirror reads arguments the same two ways.
///
/// # Errors
///
/// The invalid-arguments message (without the `Invalid arguments for '...': ` prefix).
pub(crate) fn parse_arguments<T: serde::de::DeserializeOwned>(
    arguments: &str,
) -> Result<T, ArgumentsError> {
    /// Fewer opening brackets than this cannot nest as deep as serde_json's limit, and a text
    /// that parses with that many holds as many closing ones.
    const NESTING_LIMIT: usize = 128;
    // The text as the model sends it almost always starts with the brace; serde_json skips the
    // JSON whitespace after it. Anything else is trimmed first, as the slow way does.
    let text = if arguments.starts_with('{') {
        arguments
    } else {
        let trimmed = arguments.trim();
        if trimmed.is_empty() || trimmed == "null" {
            "{}"
        } else {
            trimmed
        }
    };
    if text.starts_with('{')
        && (text.len() < 2 * NESTING_LIMIT
            || text.bytes().filter(|&b| b == b'{' || b == b'[').count() < NESTING_LIMIT)
        && let Ok(parsed) = serde_json::from_str::<T>(text)
    {
        return Ok(parsed);
    }
    let value = parse_arguments_text(arguments).map_err(ArgumentsError)?;
    deserialize_arguments(value)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Add {
        a: i64,
        b: i64,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Options {
        #[serde(default)]
        limit: Option<u8>,
        #[serde(default)]
        tags: Vec<String>,
        nested: Option<Inner>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        x: f64,
    }

    /// The way arguments were always read: text to `Value`, then the struct.
    fn reference<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ArgumentsError> {
        let value = parse_arguments_text(text).map_err(ArgumentsError)?;
        deserialize_arguments(value)
    }

    fn same<T: serde::de::DeserializeOwned + PartialEq + fmt::Debug>(text: &str) {
        assert_eq!(
            parse_arguments::<T>(text),
            reference::<T>(text),
            "for {text:?}"
        );
    }

    #[test]
    fn one_pass_parsing_reads_and_rejects_what_the_value_path_did() {
        let deep = format!(
            "{{\"a\": 1, \"b\": 2, \"x\": {}{}}}",
            "[".repeat(130),
            "]".repeat(130)
        );
        let texts = [
            r#"{"a": 2, "b": 3}"#,
            "  {\"a\": 2,\n \"b\": 3}  ",
            "{\"a\": 2, \"b\": 3}\u{a0}",
            "\u{a0}{\"a\": 2, \"b\": 3}",
            "{\"a\": 2, \"b\": 3} \n",
            r#"{"b": 3, "a": 2, "extra": {"deep": [1, 2, {"z": null}]}}"#,
            r#"{"a": 1, "a": 2, "b": 3}"#,
            r#"{"a": "two", "b": 3}"#,
            r#"{"b": "three", "a": "two"}"#,
            r#"{"a": 2.5, "b": 3}"#,
            r#"{"a": 2}"#,
            r#"{"a": 2, "b": 3"#,
            r#"{"a": 2, "b": 3} trailing"#,
            r#"{"a": "x", "b": 3, }"#,
            r#"{"a": 99999999999999999999, "b": 1}"#,
            "[2, 3]",
            "5",
            "\"text\"",
            "true",
            "null",
            " null ",
            "",
            "   ",
            "{}",
            "{",
            "not json",
            &deep,
        ];
        for text in texts {
            same::<Add>(text);
            same::<Options>(text);
        }
        for text in [
            r#"{"limit": 300}"#,
            r#"{"limit": 3, "tags": ["a", "b"]}"#,
            r#"{"tags": "a"}"#,
            r#"{"nested": {"x": 1}}"#,
            r#"{"nested": {"x": 1, "y": 2}}"#,
            r#"{"nested": {"x": "one"}}"#,
            r#"{"nested": null}"#,
        ] {
            same::<Options>(text);
        }
        assert_eq!(
            parse_arguments::<Add>(r#"{"a": 2, "b": 3}"#),
            Ok(Add { a: 2, b: 3 })
        );
        assert_eq!(
            parse_arguments::<Add>(r#"{"a": 1, "a": 2, "b": 3}"#),
            Ok(Add { a: 2, b: 3 })
        );
        assert_eq!(
            parse_arguments::<Options>(r#"{"nested": {"x": "one"}}"#),
            Err(ArgumentsError(
                "nested.x: invalid type: string \"one\", expected f64".to_owned()
            ))
        );
        assert!(parse_arguments::<Add>(&deep).is_err_and(|e| e.0.contains("recursion limit")));
    }
}
