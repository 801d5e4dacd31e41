//! Sub-agent tools: the functions a parent hands to its child agent, and the tool body that
//! runs the child. The child itself is built by [`AgentBuilder`](super::AgentBuilder).

use std::sync::Arc;

use crate::chat::{ToolAnnotations, ToolDefinition};
use crate::collapse::{GroupExtras, Part, Toolset};
use crate::error::BuildError;
use crate::events::AgentEvent;
use crate::tool::catalog::Group;
use crate::tool::{
    CallParts, Function, FunctionFailure, Invoke, Started, SubAgent, sub_agent_parameters,
};

use super::registration::split_reference;
use super::{Agent, AgentRunConfig};

/// The tool that runs `agent`, the built child of `sub_agent` at `depth`, owned by `owner`
/// (its harness, or its own name).
pub(crate) fn tool(sub_agent: &SubAgent, owner: &str, agent: Agent, depth: usize) -> Function {
    let entry = &sub_agent.entry;
    let definition = ToolDefinition {
        name: entry.name.clone(),
        description: entry.description.clone(),
        parameters: Arc::new(sub_agent_parameters()),
        output_schema: None,
        annotations: ToolAnnotations::new(),
    };
    let body = SubAgentBody {
        name: entry.name.clone(),
        depth,
        agent,
    };
    Function::new(owner, definition, None, Arc::new(body))
}

/// The parent's harnesses reduced to the handed functions, uncollapsed, in reference order.
pub(crate) fn parent_harnesses(
    sub_agent: &SubAgent,
    parent: &Toolset,
) -> Result<Vec<Part>, BuildError> {
    let mut handed: Vec<Part> = Vec::new();
    for reference in &sub_agent.entry.parent_functions {
        let (harness_name, function) = split_reference(reference)?;
        let h = parent.harness_index(harness_name).ok_or_else(|| {
            let mut known: Vec<&str> = parent.groups().iter().map(|g| &*g.name).collect();
            known.sort_unstable();
            BuildError::UnknownHarness {
                harness: harness_name.to_owned(),
                known: known.join(", "),
            }
        })?;
        let source = &parent.groups()[h];
        let found = match source.member(function) {
            Some(found) => found,
            None if source.declared.iter().any(|f| f == function) => {
                return Err(BuildError::FunctionNotRegistered {
                    function: function.to_owned(),
                    harness: source.name.to_string(),
                });
            }
            None => {
                return Err(BuildError::UnknownFunction {
                    function: function.to_owned(),
                    harness: source.name.to_string(),
                    available: source.declared.join(", "),
                });
            }
        };
        match handed.iter_mut().find(|p| p.group.name == source.name) {
            Some(existing) => {
                if existing.group.member(found.name()).is_none() {
                    existing.group.members.push(found.clone());
                }
            }
            None => handed.push(Part {
                group: Group {
                    name: Arc::clone(&source.name),
                    collapse: None,
                    members: vec![found.clone()],
                    declared: Arc::clone(&source.declared),
                },
                // A snapshot of the handed functions: the child does not follow a changing
                // tool list.
                extras: GroupExtras {
                    scoped: parent.extras[h].scoped.clone(),
                    source: None,
                    declared_by: parent.extras[h].declared_by,
                },
            }),
        }
    }
    Ok(handed)
}

/// A built sub-agent as a tool of its parent.
struct SubAgentBody {
    name: String,
    depth: usize,
    agent: Agent,
}

#[derive(serde::Deserialize)]
struct SubAgentInput {
    input: String,
}

impl Invoke for SubAgentBody {
    fn invoke(&self, arguments: &str, call: &CallParts<'_>) -> Started {
        let SubAgentInput { input } = match crate::tool::parse_arguments(arguments) {
            Ok(input) => input,
            Err(e) => return Started::Done(Err(e.into())),
        };
        let ctx = call.context();
        let (name, depth, agent) = (self.name.clone(), self.depth, self.agent.clone());
        Started::Running(Box::pin(async move {
            let mut config =
                AgentRunConfig::new().with_cancellation(ctx.cancellation_token().child_token());
            // The child's events go to the parent's sink, each inside a `SubAgent` event; with
            // nobody listening to the parent, the child builds none.
            if let Some(parent) = ctx.events().cloned() {
                let tag = name.clone();
                config = config.on_event(move |event| {
                    parent.emit(&AgentEvent::SubAgent {
                        name: tag.clone(),
                        depth,
                        event: Box::new(event.clone()),
                    });
                });
            }
            let mut session = agent.session();
            match session.run_with(input, config).await {
                // A child's run cannot pause its parent's: nothing would resume the child.
                Ok(output) if output.is_paused() => {
                    let functions: Vec<&str> = output
                        .pending_approvals
                        .iter()
                        .map(|p| p.function.as_str())
                        .collect();
                    Err(FunctionFailure::Returned(format!(
                        "sub-agent '{name}' stopped: its calls of {} need approval, which a sub-agent cannot ask for",
                        functions.join(", ")
                    )))
                }
                Ok(output) => Ok(crate::ToolResult::ok(output.text)),
                Err(e) => Err(FunctionFailure::Returned(format!(
                    "sub-agent '{name}' failed: {e}"
                ))),
            }
        }))
    }
}
