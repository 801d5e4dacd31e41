//! Running middleware hooks in the order of SPEC 4.1, and one function call through its
//! pipeline (`before_function`, wrappers around the body, `on_error`, `after_function`).

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::error::RunError;
use crate::function::{Function, FunctionFailure, ToolResult, failure_result};
use crate::middleware::{FunctionCall, HookResult, Middleware, Next};

use super::events::Emitter;
use super::tools::BuiltHarness;

/// The scoped middleware of one harness, created at expansion (or at turn start when its
/// functions are visible without expansion).
pub(crate) struct ScopedPipeline {
    pub(crate) harness: &'static str,
    pub(crate) members: Vec<Arc<dyn Middleware>>,
}

impl ScopedPipeline {
    /// Creates fresh attribute-declared instances (attribute order), then the shared code
    /// instances. `None` when the harness has no scoped middleware.
    pub(crate) fn create(harness: &BuiltHarness) -> Result<Option<Arc<ScopedPipeline>>, RunError> {
        if !harness.has_scoped_middleware() {
            return Ok(None);
        }
        let mut members =
            Vec::with_capacity(harness.scoped_specs.len() + harness.scoped_instances.len());
        for (spec, config) in &harness.scoped_specs {
            let created = std::panic::catch_unwind(|| (spec.create)(config)).map_err(|_| {
                RunError::Middleware {
                    hook: "create",
                    message: format!(
                        "scoped middleware '{}' panicked while being created",
                        spec.name
                    ),
                }
            })?;
            members.push(created.map_err(|e| RunError::Middleware {
                hook: "create",
                message: format!("scoped middleware '{}': {e}", spec.name),
            })?);
        }
        members.extend(harness.scoped_instances.iter().cloned());
        Ok(Some(Arc::new(ScopedPipeline {
            harness: harness.name(),
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
    future: BoxFuture<'_, Result<T, crate::MiddlewareError>>,
) -> Result<T, RunError> {
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(RunError::Middleware {
            hook,
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
pub(crate) struct CallScope {
    pub(crate) cancellation: CancellationToken,
    pub(crate) emitter: Emitter,
}

/// Something a call can run through the function pipeline: a harness function or a sub-agent.
pub(crate) trait Callable: Sync {
    /// The tool name.
    fn tool_name(&self) -> &str;
    /// The harness (or sub-agent) it belongs to.
    fn owner(&self) -> &str;
    /// Whether the scoped pipeline of its owner guards it (harness functions do; sub-agents
    /// have none).
    fn has_scoped_pipeline(&self) -> bool {
        true
    }
    /// Parses the arguments and runs the tool.
    fn execute<'a>(
        &'a self,
        call_id: &'a str,
        arguments: &'a str,
        scope: &'a CallScope,
    ) -> BoxFuture<'a, Result<String, FunctionFailure>>;
}

impl Callable for Function {
    fn tool_name(&self) -> &str {
        self.name()
    }

    fn owner(&self) -> &str {
        self.harness_name()
    }

    fn execute<'a>(
        &'a self,
        call_id: &'a str,
        arguments: &'a str,
        scope: &'a CallScope,
    ) -> BoxFuture<'a, Result<String, FunctionFailure>> {
        Box::pin(self.run(call_id, arguments, scope.cancellation.clone()))
    }
}

/// Runs one call through global middleware and the owning harness's scoped pipeline.
pub(crate) async fn call_function(
    global: &[Arc<dyn Middleware>],
    scoped: Option<&ScopedPipeline>,
    callable: &dyn Callable,
    call_id: &str,
    arguments: &str,
    scope: &CallScope,
) -> Result<ToolResult, RunError> {
    let scoped: &[Arc<dyn Middleware>] = scoped.map_or(&[], |p| p.members.as_slice());
    let mut call = FunctionCall::new(
        call_id.to_owned(),
        callable.tool_name(),
        callable.owner(),
        arguments.to_owned(),
    );

    for m in global.iter().chain(scoped) {
        guard("before_function", m.before_function(&mut call)).await?;
        if call.blocked().is_some() {
            break;
        }
    }

    let mut result = if let Some(text) = call.blocked() {
        ToolResult::error(text)
    } else {
        let failure: Mutex<Option<FunctionFailure>> = Mutex::new(None);
        let wrappers: Vec<Arc<dyn Middleware>> = global.iter().chain(scoped).cloned().collect();
        let core = || -> BoxFuture<'_, ToolResult> {
            Box::pin(async {
                match callable.execute(call_id, arguments, scope).await {
                    Ok(text) => ToolResult::ok(text),
                    Err(f) => {
                        let result = failure_result(callable.tool_name(), &f);
                        *failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(f);
                        result
                    }
                }
            })
        };
        let next = Next {
            call: &call,
            rest: &wrappers,
            core: &core,
        };
        let result = guard("wrap_function_call", Box::pin(next.run())).await?;
        let failure = failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(failure) = failure
            && !matches!(failure, FunctionFailure::InvalidArguments(_))
        {
            for m in scoped.iter().rev().chain(global.iter().rev()) {
                guard("on_error", m.on_error(&call, &failure)).await?;
            }
        }
        result
    };

    for m in scoped.iter().rev().chain(global.iter().rev()) {
        guard("after_function", m.after_function(&call, &mut result)).await?;
    }
    Ok(result)
}
