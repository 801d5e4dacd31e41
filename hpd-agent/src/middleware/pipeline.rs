//! Running middleware hooks in their order (global middleware first on the way in, scoped
//! pipelines innermost), scoped pipelines and where their members come from, and one function
//! call through its pipeline (`before_function`, wrappers around the body, `on_error`,
//! `after_function`).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{FunctionCall, HookResult, Middleware, MiddlewareError, Next};
use crate::approval::ApprovalDecision;
use crate::error::RunError;
use crate::events::EventSink;
use crate::tool::{Function, FunctionFailure, ToolResult};

/// Creates one scoped middleware instance, or says why it cannot.
pub(crate) type MakeMiddleware = Arc<dyn Fn() -> Result<Arc<dyn Middleware>, String> + Send + Sync>;

/// Where one member of a harness's scoped pipeline comes from.
#[derive(Clone)]
pub(crate) enum ScopedSource {
    /// Created afresh at each expansion (attribute-declared types, factories).
    Fresh {
        /// The middleware's name, for error messages.
        name: Arc<str>,
        /// Creates an instance.
        make: MakeMiddleware,
    },
    /// One instance shared by every expansion.
    Shared(Arc<dyn Middleware>),
}

/// The scoped middleware of one harness, created at expansion (or at turn start when its
/// functions are visible without expansion).
pub(crate) struct ScopedPipeline {
    pub(crate) harness: Arc<str>,
    pub(crate) members: Vec<Arc<dyn Middleware>>,
}

impl ScopedPipeline {
    /// Creates the members in order (fresh instances made now, shared ones cloned). `None` when
    /// there are no sources.
    ///
    /// # Errors
    ///
    /// A factory failed or panicked.
    pub(crate) fn create(
        harness: &Arc<str>,
        sources: &[ScopedSource],
    ) -> Result<Option<Arc<ScopedPipeline>>, RunError> {
        if sources.is_empty() {
            return Ok(None);
        }
        let mut members = Vec::with_capacity(sources.len());
        for source in sources {
            match source {
                ScopedSource::Shared(shared) => members.push(Arc::clone(shared)),
                ScopedSource::Fresh { name, make } => {
                    let created =
                        std::panic::catch_unwind(AssertUnwindSafe(|| make())).map_err(|_| {
                            RunError::Middleware {
                                hook: "create",
                                message: format!(
                                    "scoped middleware '{name}' panicked while being created"
                                ),
                            }
                        })?;
                    members.push(created.map_err(|e| RunError::Middleware {
                        hook: "create",
                        message: format!("scoped middleware '{name}': {e}"),
                    })?);
                }
            }
        }
        Ok(Some(Arc::new(ScopedPipeline {
            harness: Arc::clone(harness),
            members,
        })))
    }
}

/// Global middleware in registration order, then the pipelines in creation order.
pub(crate) fn forward<'a>(
    global: &'a [Arc<dyn Middleware>],
    pipelines: &'a [Arc<ScopedPipeline>],
) -> Vec<&'a dyn Middleware> {
    global
        .iter()
        .map(|m| &**m)
        .chain(
            pipelines
                .iter()
                .flat_map(|p| p.members.iter().map(|m| &**m)),
        )
        .collect()
}

/// The reverse of [`forward`]: pipelines last-created first (members reversed), then global
/// middleware in reverse.
pub(crate) fn backward<'a>(
    global: &'a [Arc<dyn Middleware>],
    pipelines: &'a [Arc<ScopedPipeline>],
) -> Vec<&'a dyn Middleware> {
    let mut all = forward(global, pipelines);
    all.reverse();
    all
}

/// Runs one hook on each middleware in order; the first error (or panic) stops and is returned.
/// With a cancellation token, a cancelled run stops waiting for the hook.
pub(crate) async fn run_hooks<'a, F>(
    hook: &'static str,
    middleware: Vec<&'a dyn Middleware>,
    cancellation: Option<&CancellationToken>,
    call: F,
) -> Result<(), RunError>
where
    F: Fn(&'a dyn Middleware) -> BoxFuture<'a, HookResult>,
{
    for m in middleware {
        match cancellation {
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => return Err(RunError::Cancelled),
                result = guard(hook, call(m)) => result?,
            },
            None => guard(hook, call(m)).await?,
        }
    }
    Ok(())
}

/// Awaits one hook, turning an error or a panic into [`RunError::Middleware`].
pub(crate) async fn guard<T>(
    hook: &'static str,
    future: BoxFuture<'_, Result<T, crate::middleware::MiddlewareError>>,
) -> Result<T, RunError> {
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(RunError::Middleware {
            hook: e.hook().unwrap_or(hook),
            message: e.to_string(),
        }),
        Err(_) => Err(RunError::Middleware {
            hook,
            message: "the hook panicked".to_owned(),
        }),
    }
}

/// What a run hands to the tools it calls.
#[derive(Clone)]
pub(crate) struct CallScope<'a> {
    pub(crate) cancellation: &'a CancellationToken,
    /// The id of the turn the call belongs to (`None` in a tool session).
    pub(crate) turn_id: Option<Arc<str>>,
    /// Where the calls' events go (see `FunctionContext`); `None` when nobody sees them.
    pub(crate) events: Option<Arc<dyn EventSink>>,
    /// Who answers the calls' asks (sampling, elicitation, roots).
    pub(crate) asker: Option<Arc<dyn crate::tool::Asker>>,
}

/// Runs one call through global middleware and the owning harness's scoped pipeline.
///
/// # Errors
///
/// A hook returned an error or panicked.
pub(crate) async fn call_function(
    global: &[Arc<dyn Middleware>],
    scoped: Option<&ScopedPipeline>,
    function: &Function,
    call_id: &str,
    arguments: &str,
    scope: &CallScope<'_>,
    approval: Option<&ApprovalDecision>,
) -> Result<ToolResult, RunError> {
    let scoped: &[Arc<dyn Middleware>] = scoped.map_or(&[], |p| p.members.as_slice());
    if global.is_empty() && scoped.is_empty() {
        // No hook would see the call: run the function alone, without building the call the
        // hooks read.
        return Ok(
            match function
                .run_in(
                    call_id,
                    arguments,
                    scope.cancellation,
                    scope.events.as_ref(),
                    scope.asker.as_ref(),
                    scope.turn_id.as_ref(),
                )
                .await
            {
                Ok(result) => result,
                Err(failure) => failure.into_result(function.name()),
            },
        );
    }
    // Boxed: the hooks' state is large, and calls without middleware do not need it.
    Box::pin(through_middleware(
        global, scoped, function, call_id, arguments, scope, approval,
    ))
    .await
}

/// Whether a call of `function` waits for approval: its declaration, then each middleware's
/// `approval_required` (global in order, then the scoped pipeline).
///
/// # Errors
///
/// A hook returned an error or panicked.
pub(crate) async fn approval_required(
    global: &[Arc<dyn Middleware>],
    scoped: Option<&ScopedPipeline>,
    function: &Function,
    call_id: &str,
    arguments: &str,
    turn_id: Option<&Arc<str>>,
) -> Result<bool, RunError> {
    let mut required = function.requires_approval();
    let scoped: &[Arc<dyn Middleware>] = scoped.map_or(&[], |p| p.members.as_slice());
    if global.is_empty() && scoped.is_empty() {
        return Ok(required);
    }
    let mut call = FunctionCall::new(
        call_id.to_owned(),
        function.name(),
        function.harness_name(),
        arguments.to_owned(),
    );
    call.turn_id = turn_id.cloned();
    for m in global.iter().chain(scoped) {
        required = guard("approval_required", m.approval_required(&call, required)).await?;
    }
    Ok(required)
}

/// Tells every middleware (global in order, then the scoped pipeline) what a person decided
/// on a call of `function` made with `arguments` (the model's).
///
/// # Errors
///
/// A hook returned an error or panicked.
pub(crate) async fn announce_decision(
    global: &[Arc<dyn Middleware>],
    scoped: Option<&ScopedPipeline>,
    function: &Function,
    call_id: &str,
    arguments: &str,
    turn_id: Option<&Arc<str>>,
    decision: &ApprovalDecision,
) -> Result<(), RunError> {
    let scoped: &[Arc<dyn Middleware>] = scoped.map_or(&[], |p| p.members.as_slice());
    if global.is_empty() && scoped.is_empty() {
        return Ok(());
    }
    let mut call = FunctionCall::new(
        call_id.to_owned(),
        function.name(),
        function.harness_name(),
        arguments.to_owned(),
    );
    call.turn_id = turn_id.cloned();
    call.approval = Some(decision.clone());
    for m in global.iter().chain(scoped) {
        guard("on_approval", m.on_approval(&call, decision)).await?;
    }
    Ok(())
}

/// [`call_function`] for a call that at least one middleware sees.
async fn through_middleware(
    global: &[Arc<dyn Middleware>],
    scoped: &[Arc<dyn Middleware>],
    function: &Function,
    call_id: &str,
    arguments: &str,
    scope: &CallScope<'_>,
    approval: Option<&ApprovalDecision>,
) -> Result<ToolResult, RunError> {
    let mut call = FunctionCall::new(
        call_id.to_owned(),
        function.name(),
        function.harness_name(),
        arguments.to_owned(),
    );
    call.turn_id.clone_from(&scope.turn_id);
    call.approval = approval.cloned();

    for m in global.iter().chain(scoped) {
        guard("before_function", m.before_function(&mut call)).await?;
        if call.blocked().is_some() {
            crate::telemetry::record_blocked();
            break;
        }
    }

    let mut result = if let Some(text) = call.blocked() {
        ToolResult::error(text)
    } else {
        let wrappers: Vec<Arc<dyn Middleware>> = global.iter().chain(scoped).cloned().collect();
        // The function's outcome keeps its one form until here: `on_error` hooks see the
        // failure where it happened, inside the innermost wrapper, then it becomes the result
        // the wrappers and the model see.
        let call = &call;
        let core = || -> BoxFuture<'_, Result<ToolResult, MiddlewareError>> {
            Box::pin(async move {
                let failure = match function
                    .run_in(
                        call_id,
                        arguments,
                        scope.cancellation,
                        scope.events.as_ref(),
                        scope.asker.as_ref(),
                        scope.turn_id.as_ref(),
                    )
                    .await
                {
                    Ok(result) => return Ok(result),
                    Err(failure) => failure,
                };
                if !matches!(failure, FunctionFailure::InvalidArguments(_)) {
                    for m in scoped.iter().rev().chain(global.iter().rev()) {
                        guard("on_error", m.on_error(call, &failure))
                            .await
                            .map_err(|e| MiddlewareError::of_hook("on_error", hook_message(e)))?;
                    }
                }
                Ok(failure.into_result(function.name()))
            })
        };
        let next = Next {
            call,
            rest: &wrappers,
            core: &core,
        };
        guard("wrap_function_call", Box::pin(next.run())).await?
    };

    for m in scoped.iter().rev().chain(global.iter().rev()) {
        guard("after_function", m.after_function(&call, &mut result)).await?;
    }
    Ok(result)
}

/// The message of a hook's [`RunError::Middleware`].
fn hook_message(error: RunError) -> String {
    match error {
        RunError::Middleware { message, .. } => message,
        other => other.to_string(),
    }
}

/// Runs `call` unless `token` is cancelled first: `None` when it is cancelled before the call
/// finishes (checked before each poll, as a `biased` select with the cancellation first would).
/// A call that finishes in its first poll (a synchronous body) never registers for the
/// cancellation.
pub(crate) async fn unless_cancelled<F: Future>(
    token: &CancellationToken,
    call: F,
) -> Option<F::Output> {
    if token.is_cancelled() {
        return None;
    }
    let mut call = std::pin::pin!(call);
    if let Poll::Ready(output) =
        std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await
    {
        return Some(output);
    }
    // Boxed: the registration is large, and only calls that wait need it.
    let cancelled = Box::pin(token.cancelled());
    tokio::select! {
        biased;
        () = cancelled => None,
        output = call => Some(output),
    }
}
