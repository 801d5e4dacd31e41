//! Resolving a [`ToolChoice`] against the tools of a turn before each model request.
//!
//! Forcing choices (`Required`, `Tool`) hold until the model has called a tool in the turn;
//! then `Auto`, or the loop could never end. `Tool(name)` is resolved like a call of that name:
//! a visible tool by its own name, a collapsed harness (its name in any case) by its container
//! (any tool once the container is expanded), a hidden member by expanding its container
//! first, as recovery would. In the `fixed` layout a member is forced through the call tool,
//! which is what the tool list shows; with Responses namespaces (whose functions and
//! containers a choice cannot name) a forced member or container becomes `Required`.

use crate::chat::{ChatError, ToolChoice};
use crate::error::RunError;

use super::{Layout, Resolution, Toolset};
use crate::config::CALL_TOOL;

/// What to do before a request: the choice to send, and a container to expand first.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ResolvedChoice {
    /// The choice to send; `None` sends none.
    pub(crate) choice: Option<ToolChoice>,
    /// A harness whose container must be expanded (as a recovery) before the request.
    pub(crate) expand: Option<usize>,
}

/// Resolves `choice` for the next request. `tool_called`: the model already called a tool in
/// this turn.
pub(crate) fn resolve(
    tools: &Toolset,
    expanded: &[String],
    choice: Option<&ToolChoice>,
    tool_called: bool,
) -> Result<ResolvedChoice, RunError> {
    let plain = |choice: Option<ToolChoice>| {
        Ok(ResolvedChoice {
            choice,
            expand: None,
        })
    };
    let Some(choice) = choice else {
        return plain(None);
    };
    if tool_called && choice.forces_a_call() {
        return plain(Some(ToolChoice::Auto));
    }
    let ToolChoice::Tool(name) = choice else {
        return plain(Some(choice.clone()));
    };
    let mut resolution = tools.resolve(name, expanded, None);
    // Harness names match whatever their case, as everywhere else in the crate.
    if resolution == Resolution::Unknown
        && let Some(h) = tools.harness_index(name)
        && tools.containers[h].is_some()
    {
        resolution = Resolution::Container(h);
    }
    let layout = tools.layout();
    // A member the tool list does not show is forced through what reaches it there: the call
    // tool in `fixed`; any call with Responses namespaces, whose functions a choice cannot name.
    let member = |target: super::Target| -> ToolChoice {
        let listed = tools.owner(target).is_none_or(|h| !tools.is_collapsed(h));
        match layout {
            Layout::Fixed if !listed => ToolChoice::Tool(CALL_TOOL.to_owned()),
            Layout::Search if !listed => ToolChoice::Required,
            _ => ToolChoice::Tool(tools.function(target).name().to_owned()),
        }
    };
    match resolution {
        Resolution::Run(target) => plain(Some(member(target))),
        Resolution::Container(h) => {
            let harness = &*tools.groups()[h].name;
            if expanded.iter().any(|e| e == harness) || layout == Layout::Search {
                plain(Some(ToolChoice::Required))
            } else {
                plain(Some(ToolChoice::Tool(harness.to_owned())))
            }
        }
        Resolution::Recover(h, f) | Resolution::Loaded(h, f) => Ok(ResolvedChoice {
            choice: Some(member(super::Target::Member(h, f))),
            expand: Some(h),
        }),
        Resolution::Unknown => Err(RunError::Chat(ChatError::Config(format!(
            "tool_choice names '{name}', which is not a tool of this agent"
        )))),
    }
}
