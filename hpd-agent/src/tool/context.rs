//! [`FunctionContext`]: what a function body can learn about the call that runs it.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// What a function body can learn about the call that runs it.
///
/// A macro harness method declares a parameter of type `&FunctionContext` to receive it (it is
/// left out of the schema); the handler of a [`Tool`](crate::Tool) built at run time gets it as
/// its second argument.
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
#[derive(Clone)]
pub struct FunctionContext {
    function: Arc<str>,
    harness: Arc<str>,
    call_id: Arc<str>,
    cancellation: CancellationToken,
    /// Run state the runtime hands to its own tools (a sub-agent forwards its events through
    /// it); opaque to everything else.
    pub(crate) run: Option<Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for FunctionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionContext")
            .field("function", &self.function)
            .field("harness", &self.harness)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl FunctionContext {
    /// A context for a call of `function` in `harness`.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("forecast", "Weather", "call-1", CancellationToken::new());
    /// assert_eq!((ctx.function_name(), ctx.harness_name()), ("forecast", "Weather"));
    /// ```
    #[must_use]
    pub fn new(
        function: impl Into<Arc<str>>,
        harness: impl Into<Arc<str>>,
        call_id: impl Into<Arc<str>>,
        cancellation: CancellationToken,
    ) -> Self {
        FunctionContext {
            function: function.into(),
            harness: harness.into(),
            call_id: call_id.into(),
            cancellation,
            run: None,
        }
    }

    /// The canonical function name.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("get_weather", "Weather", "call_1", CancellationToken::new());
    /// assert_eq!(ctx.function_name(), "get_weather");
    /// ```
    #[must_use]
    pub fn function_name(&self) -> &str {
        &self.function
    }

    /// The name of the harness the function belongs to.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let ctx = FunctionContext::new("get_weather", "Weather", "call_1", CancellationToken::new());
    /// assert_eq!(ctx.harness_name(), "Weather");
    /// ```
    #[must_use]
    pub fn harness_name(&self) -> &str {
        &self.harness
    }

    /// The model's id of this call.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Tracker;
    ///
    /// #[tool_harness]
    /// impl Tracker {
    ///     /// Records the call.
    ///     #[ai_function]
    ///     fn track(&self, ctx: &FunctionContext) -> String {
    ///         format!("call {} of {}", ctx.call_id(), ctx.function_name())
    ///     }
    /// }
    /// # let _ = Tracker;
    /// ```
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The run's cancellation token. Long bodies should watch it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Poller;
    ///
    /// #[tool_harness]
    /// impl Poller {
    ///     /// Polls until ready or cancelled.
    ///     #[ai_function]
    ///     async fn poll(&self, ctx: &FunctionContext) -> Result<String, String> {
    ///         tokio::select! {
    ///             _ = ctx.cancellation_token().cancelled() => Err("cancelled".into()),
    ///             _ = tokio::time::sleep(Duration::from_millis(1)) => Ok("ready".into()),
    ///         }
    ///     }
    /// }
    /// # let _ = Poller;
    /// ```
    #[must_use]
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether the run was cancelled.
    ///
    /// ```
    /// use hpd_agent::{CancellationToken, FunctionContext};
    ///
    /// let token = CancellationToken::new();
    /// let ctx = FunctionContext::new("export", "Reports", "c1", token.clone());
    /// assert!(!ctx.is_cancelled());
    /// token.cancel();
    /// assert!(ctx.is_cancelled()); // check it between steps of long work
    /// ```
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}
