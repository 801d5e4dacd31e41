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
