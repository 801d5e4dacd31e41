//! What a tool call returns to the model ([`ToolResult`]) and why a call failed
//! ([`FunctionFailure`]).

use std::time::Duration;

/// The result of a tool call as the model sees it: a text and an error flag.
///
/// ```
/// use hpd_agent::ToolResult;
///
/// let ok = ToolResult::ok("sunny");
/// assert!(!ok.is_error);
/// let failed = ToolResult::error("no such city");
/// assert_eq!((failed.text.as_str(), failed.is_error), ("no such city", true));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// The text sent to the model.
    pub text: String,
    /// Whether it reports an error.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// let result = ToolResult::ok("42");
    /// assert_eq!((result.text.as_str(), result.is_error), ("42", false));
    /// ```
    #[must_use]
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: false,
        }
    }

    /// An error result.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// let result = ToolResult::error("Error: no such city");
    /// assert_eq!((result.text.as_str(), result.is_error), ("Error: no such city", true));
    /// ```
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Why a function call failed, as `on_error` middleware hooks see it.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{FunctionFailure, Registry};
///
/// #[derive(Default)]
/// pub struct Parser;
///
/// #[tool_harness]
/// impl Parser {
///     /// Parses a number.
///     #[ai_function]
///     fn parse_number(&self, text: String) -> Result<i64, String> {
///         text.trim().parse().map_err(|_| format!("'{text}' is not a number"))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let parse = &Registry::global().instantiate::<Parser>()?[0];
/// let failure = parse.run("c1", r#"{"text": "x"}"#, Default::default()).await.unwrap_err();
/// assert_eq!(failure, FunctionFailure::Returned("'x' is not a number".into()));
/// assert_eq!(parse.failure_result(&failure).text, "Error: 'x' is not a number");
/// let failure = parse.run("c2", r#"{"txt": "1"}"#, Default::default()).await.unwrap_err();
/// assert!(matches!(failure, FunctionFailure::InvalidArguments(_)));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FunctionFailure {
    /// The arguments did not match the parameters; the body did not run.
    InvalidArguments(String),
    /// The body returned `Err`; the text is the error's `Display`.
    Returned(String),
    /// The body of a tool built at run time returned an error [`ToolResult`]; the model gets
    /// this text as it is.
    Reported(String),
    /// The body panicked (the payload is never reported).
    Panicked,
    /// The body exceeded its timeout.
    TimedOut(Duration),
}

impl FunctionFailure {
    /// The result the model sees for this failure of a call of the tool `name`.
    ///
    /// ```
    /// use hpd_agent::FunctionFailure;
    ///
    /// let result = FunctionFailure::Panicked.result_for("add");
    /// assert_eq!(result.text, "Error: function 'add' panicked");
    /// assert!(result.is_error);
    /// ```
    #[must_use]
    pub fn result_for(&self, name: &str) -> ToolResult {
        failure_result(name, self)
    }
}

fn failure_result(name: &str, failure: &FunctionFailure) -> ToolResult {
    ToolResult::error(match failure {
        FunctionFailure::InvalidArguments(message) => {
            format!("Invalid arguments for '{name}': {message}")
        }
        FunctionFailure::Returned(message) => format!("Error: {message}"),
        FunctionFailure::Reported(text) => text.clone(),
        FunctionFailure::Panicked => format!("Error: function '{name}' panicked"),
        FunctionFailure::TimedOut(d) => {
            format!(
                "Error: function '{name}' timed out after {} ms",
                d.as_millis()
            )
        }
    })
}
