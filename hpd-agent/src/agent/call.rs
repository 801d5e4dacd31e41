//! One tool call of the model's, from its name and arguments text to the one [`CallRecord`] of
//! its result. The agent loop (`run.rs`) and the tool session (`tool_session.rs`, through which
//! the MCP server serves) both call tools through these steps, in this order:
//!
//! 1. [`admit`]: the argument limit, then the layout's own call tool unwrapped to the call it
//!    names (from here on events, middleware, limits and results see that call);
//! 2. [`started`]: the started event, of the admitted call;
//! 3. [`route`]: the name resolved against the expansion state: a container call expands and is
//!    answered with its members, a hidden member's call is recovered, an unknown name gets the
//!    not-found result;
//! 4. approval, the one step that differs: a turn pauses for the person's decision, a tool
//!    session asks its approver at once; both ask `approval_required` first;
//! 5. [`run`]: the function pipeline (hooks, wrappers, the body, `on_error`) unless the run is
//!    cancelled, with an edited approval's note on the result;
//! 6. [`finish`]: the result cut to the limits, and the finished event.
//!
//! A turn runs the steps for all calls of one response at once (batch hooks, parallel runs,
//! spans); a tool session for one call, routed under its lock and run without it.

use std::ops::Deref;
use std::time::{Duration, Instant};

use futures::FutureExt as _;

use crate::approval::{ApprovalDecision, edited_text};
use crate::collapse::{
    Delivered, Expansion, Routed, Target, Toolset, Unwrapped, may_be_layout_tool, unknown_text,
};
use crate::config::Limits;
use crate::error::RunError;
use crate::events::{AgentEvent, Emitter};
use crate::middleware::Middleware;
use crate::middleware::pipeline::{CallScope, ScopedPipeline, call_function, unless_cancelled};
use crate::tool::{Function, ToolResult};

/// What one call ended with.
#[derive(Debug, Default)]
pub(super) struct CallRecord {
    /// Its result; `None` while it has none (a call that a cancelled or aborted run left
    /// unanswered is given the run's filler text when the history gets it).
    pub(super) result: Option<ToolResult>,
    /// The deferred tools its result loads (the native layouts; empty otherwise).
    pub(super) references: Vec<String>,
    /// How long it took: routing, and the run when it ran.
    pub(super) duration: Duration,
    /// The `error.type` of a call that failed before it could run (an unknown tool).
    pub(super) error_type: Option<&'static str>,
    /// The question its function asked when the elicitation handler deferred it (the call
    /// has no result then: the run pauses), with the function that asked.
    pub(super) deferred: Option<(crate::tool::Deferred, Target)>,
    /// The container instructions its result carries, kept for a deferred call.
    pub(super) carried: Option<String>,
    /// The harness whose container answered it without running a function: a container
    /// opened or called again, a member recovered (what `container_notes` turns into a note).
    pub(super) container_answer: Option<usize>,
}

/// Reports a call as started; the time it started, when anyone sees the event.
#[inline]
pub(super) fn started(
    events: &Emitter,
    call_id: &str,
    name: &str,
    arguments: &str,
) -> Option<Instant> {
    events.sees_tool_calls().then(|| {
        events.emit(&AgentEvent::ToolCallStarted {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        });
        Instant::now()
    })
}

/// The call as it stands after the argument limit and unwrapping: itself, the call its
/// arguments name (a call of the layout's call tool), or answered with an error result (too
/// large, or its arguments name nothing). `tools` is asked for the toolset only when the name
/// can be a layout's own tool (a tool session locks its state for it).
#[inline]
pub(super) fn admit<T: Deref<Target = Toolset>>(
    tools: impl FnOnce() -> T,
    limits: &Limits,
    name: &str,
    arguments: &str,
) -> Unwrapped {
    match limits.check_arguments(name, arguments) {
        Some(rejected) => Unwrapped::Invalid(ToolResult::error(rejected)),
        None if !may_be_layout_tool(name) => Unwrapped::Direct,
        None => tools().unwrap_call(name, arguments),
    }
}

/// Where [`route`] sends a call.
pub(super) enum Resolved {
    /// It runs this function.
    Run(Target),
    /// It is answered without running (boxed: the common case, a call that runs, stays
    /// small).
    Answered(Box<Answer>),
}

/// The answer of a call that does not run.
pub(super) struct Answer {
    pub(super) result: ToolResult,
    /// The deferred tools the result loads.
    pub(super) references: Vec<String>,
    /// The `error.type` of the call (an unknown tool).
    pub(super) error_type: Option<&'static str>,
}

/// What routing one call opened.
#[derive(Debug, Default)]
pub(super) struct Opened {
    /// The harnesses whose containers it expanded, in order.
    pub(super) harnesses: Vec<String>,
    /// Whether it expanded one by recovery (a hidden member called by name).
    pub(super) recovered: bool,
    /// The harness whose container it named or whose hidden member it recovered.
    pub(super) container: Option<usize>,
}

/// Resolves a call's name against `seen` (the expansion state of the request the call
/// answers) and applies what it does to `expansion`, reporting each container it expands.
/// `delivered` is what the conversation already shows the model (schemas, loaded tools: not
/// sent again).
///
/// # Errors
///
/// A scoped middleware of an expanded harness could not be created.
#[inline]
pub(super) fn route(
    expansion: &mut Expansion,
    tools: &Toolset,
    name: &str,
    seen: &[String],
    delivered: &Delivered,
    events: &Emitter,
) -> Result<(Resolved, Opened), RunError> {
    let mut opened = Opened::default();
    let mut expanded = |harness: &str, recovery: bool| {
        opened.harnesses.push(harness.to_owned());
        opened.recovered |= recovery;
        events.emit(&AgentEvent::ContainerExpanded {
            harness: harness.to_owned(),
            recovery,
        });
    };
    let (routed, container) = expansion.route(tools, name, seen, delivered, &mut expanded)?;
    opened.container = container;
    let resolved = match routed {
        Routed::Run(target) => Resolved::Run(target),
        Routed::Answer(result, references) => Resolved::Answered(Box::new(Answer {
            result,
            references,
            error_type: None,
        })),
        Routed::Unknown => Resolved::Answered(Box::new(Answer {
            result: ToolResult::error(unknown_text(name, &tools.callable_names(seen, delivered))),
            references: Vec::new(),
            error_type: Some("unknown_tool"),
        })),
    };
    Ok((resolved, opened))
}

/// Runs a routed call through the function pipeline (global middleware, then the owning
/// harness's scoped `pipeline`) with `arguments` (the approved ones, when a person edited
/// them), unless the run is cancelled first.
///
/// Not an `async fn`: the result is finished in a `map` of the pipeline's future, so it is not
/// moved through one more state machine on its way to the caller (the agent loop measured the
/// extra move; see BENCHMARKS.md).
///
/// # Errors
///
/// [`RunError::Cancelled`], or a hook failed.
#[inline]
pub(super) fn run(
    global: &[std::sync::Arc<dyn Middleware>],
    pipeline: Option<&ScopedPipeline>,
    function: &Function,
    call_id: &str,
    arguments: &str,
    scope: &CallScope<'_>,
    approval: Option<&ApprovalDecision>,
) -> impl Future<Output = Result<ToolResult, RunError>> {
    let call = call_function(
        global, pipeline, function, call_id, arguments, scope, approval,
    );
    let edited = match approval {
        Some(ApprovalDecision::ApproveEdited { arguments }) => Some(arguments),
        _ => None,
    };
    unless_cancelled(scope.cancellation, call).map(move |output| {
        let mut result = output.ok_or(RunError::Cancelled)??;
        if let Some(arguments) = edited {
            result.text = edited_text(arguments, &result.text);
        }
        Ok(result)
    })
}

/// The result as the caller gets it (cut to the limits), reported as finished after
/// `duration` when that is given (someone sees the event: see [`started`]).
#[inline]
pub(super) fn finish(
    events: &Emitter,
    limits: &Limits,
    call_id: &str,
    name: &str,
    result: ToolResult,
    duration: Option<Duration>,
) -> ToolResult {
    let result = result.limited(limits);
    if let Some(duration) = duration {
        finished(
            events,
            call_id,
            name,
            &result.text,
            result.is_error,
            duration,
        );
    }
    result
}

/// Reports a call as finished with this text.
pub(super) fn finished(
    events: &Emitter,
    call_id: &str,
    name: &str,
    text: &str,
    is_error: bool,
    duration: Duration,
) {
    events.emit(&AgentEvent::ToolCallFinished {
        call_id: call_id.to_owned(),
        name: name.to_owned(),
        result: text.to_owned(),
        duration,
        is_error,
    });
}
