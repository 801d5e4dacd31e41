//! The expansion state of a session: which containers are expanded (in expansion order), the
//! scoped pipelines that exist, the active container instructions, what a call does to them,
//! and what survives the end of a turn.

use std::sync::Arc;

use super::{Delivered, Resolution, Target, Toolset};
use crate::error::RunError;
use crate::middleware::pipeline::ScopedPipeline;
use crate::tool::ToolResult;

/// Which containers are expanded and which scoped pipelines exist.
#[derive(Default)]
pub(crate) struct Expansion {
    /// Expanded harness names, in expansion order.
    pub(crate) expanded: Vec<String>,
    /// Scoped pipelines in creation order.
    pub(crate) pipelines: Vec<Arc<ScopedPipeline>>,
    /// Outside the hide layout: expanded harnesses whose system prompt no call result
    /// has carried yet, in expansion order.
    undelivered: Vec<String>,
}

/// What a call does, once resolved.
#[derive(Debug)]
pub(crate) enum Routed {
    /// Run this tool through the function pipeline.
    Run(Target),
    /// Answer with this result (a container call, a recovered call that is not executed), which
    /// loads these deferred tools (the native layouts; empty otherwise).
    Answer(ToolResult, Vec<String>),
    /// No such tool.
    Unknown,
}

impl Expansion {
    /// A state resumed from stored expanded names and kept pipelines.
    pub(crate) fn new(expanded: Vec<String>, pipelines: Vec<Arc<ScopedPipeline>>) -> Self {
        Expansion {
            expanded,
            pipelines,
            undelivered: Vec::new(),
        }
    }

    /// Creates the pipelines that exist from the start of a turn: those of persisted expansions
    /// that lost theirs (a resumed session), in expansion order, then those of harnesses whose
    /// functions are visible without expansion.
    ///
    /// # Errors
    ///
    /// A scoped middleware could not be created.
    pub(crate) fn start(&mut self, tools: &Toolset) -> Result<(), RunError> {
        let expanded: Vec<usize> = self
            .expanded
            .iter()
            .filter_map(|name| tools.harness_index(name))
            .filter(|&h| tools.is_collapsed(h))
            .collect();
        for h in expanded {
            self.ensure_pipeline(tools, h)?;
        }
        for h in 0..tools.groups().len() {
            if !tools.is_collapsed(h) {
                self.ensure_pipeline(tools, h)?;
            }
        }
        Ok(())
    }

    /// Creates the scoped pipeline of harness `h` unless it exists.
    ///
    /// # Errors
    ///
    /// A scoped middleware could not be created.
    pub(crate) fn ensure_pipeline(&mut self, tools: &Toolset, h: usize) -> Result<(), RunError> {
        let name = &tools.groups()[h].name;
        if self.pipelines.iter().any(|p| p.harness == *name) {
            return Ok(());
        }
        if let Some(pipeline) = ScopedPipeline::create(name, &tools.extras[h].scoped)? {
            self.pipelines.push(pipeline);
        }
        Ok(())
    }

    /// The scoped pipeline that guards a tool, if any.
    pub(crate) fn pipeline(&self, tools: &Toolset, target: Target) -> Option<&Arc<ScopedPipeline>> {
        let h = tools.owner(target)?;
        let name = &tools.groups()[h].name;
        self.pipelines.iter().find(|p| p.harness == *name)
    }

    /// Whether harness `h` is expanded.
    pub(crate) fn is_expanded(&self, tools: &Toolset, h: usize) -> bool {
        let name = &tools.groups()[h].name;
        self.expanded.iter().any(|e| **e == **name)
    }

    /// Expands the container of harness `h` if it is not expanded yet; `true` when it was not.
    ///
    /// # Errors
    ///
    /// Its scoped middleware could not be created; the container stays collapsed then.
    pub(crate) fn expand(&mut self, tools: &Toolset, h: usize) -> Result<bool, RunError> {
        if self.is_expanded(tools, h) {
            return Ok(false);
        }
        self.ensure_pipeline(tools, h)?;
        self.expanded.push(tools.groups()[h].name.to_string());
        if tools.carried_instructions(h).is_some() {
            self.undelivered.push(tools.groups()[h].name.to_string());
        }
        Ok(true)
    }

    /// Outside the hide layout, the system prompt of harness `h` if no call result has
    /// carried it since it expanded; a result that carries it calls this once.
    fn take_carried(&mut self, tools: &Toolset, h: usize) -> Option<String> {
        let name = &*tools.groups()[h].name;
        let at = self.undelivered.iter().position(|u| u == name)?;
        self.undelivered.remove(at);
        tools.carried_instructions(h)
    }

    /// Outside the hide layout, the instructions the result of a run of `target` carries
    /// (appended after a blank line): those of its harness when it expanded without a result
    /// that carried them (a forced tool choice, an executed recovered call). `None` otherwise.
    pub(crate) fn take_instructions(
        &mut self,
        tools: &Toolset,
        target: Target,
        delivered: &Delivered,
    ) -> Option<String> {
        let h = tools.owner(target)?;
        self.take_carried(tools, h)
            .filter(|_| !delivered.instructed(h))
    }

    /// Resolves a call name against `seen` (the expansion state of the request the call
    /// answers) and `delivered` (what the conversation shows the model), and applies what it
    /// does to the expansion state: a container call, a recovered call or a call of a member the
    /// conversation holds expands (calling `expanded(harness, recovery)` when a container
    /// expands).
    ///
    /// # Errors
    ///
    /// A scoped middleware could not be created.
    ///
    /// Also returns the harness whose container the call named or whose hidden member it
    /// recovered, if any.
    pub(crate) fn route(
        &mut self,
        tools: &Toolset,
        name: &str,
        seen: &[String],
        delivered: &Delivered,
        expanded: &mut dyn FnMut(&str, bool),
    ) -> Result<(Routed, Option<usize>), RunError> {
        Ok(match tools.resolve(name, seen, Some(delivered)) {
            Resolution::Run(target) => (Routed::Run(target), None),
            Resolution::Loaded(h, f) => {
                // What is loaded stays loaded: the model has the member's definition from an
                // earlier result, so the call runs now. The harness expands again for it (its
                // scoped pipeline; its instructions travel in the result when the conversation
                // no longer holds them), and the result loads nothing.
                if self.expand(tools, h)? {
                    expanded(&tools.groups()[h].name, false);
                }
                (Routed::Run(Target::Member(h, f)), None)
            }
            Resolution::Container(h) => {
                if self.expand(tools, h)? {
                    expanded(&tools.groups()[h].name, false);
                }
                // With a fixed tool list the container's result is its manual: it always
                // carries the system prompt, as it always lists the members.
                // A section an earlier result of the history carried is not sent again.
                let section = if delivered.instructed(h) {
                    self.take_carried(tools, h);
                    None
                } else if tools.layout().is_fixed_list() {
                    self.take_carried(tools, h);
                    tools.carried_instructions(h)
                } else {
                    self.take_carried(tools, h)
                };
                let text = with_section(tools.expansion_text(h, delivered), section);
                (
                    Routed::Answer(ToolResult::ok(text), tools.references(h, delivered)),
                    Some(h),
                )
            }
            Resolution::Recover(h, f) => {
                if self.expand(tools, h)? {
                    expanded(&tools.groups()[h].name, true);
                }
                let routed = if tools.settings.execute_recovered_calls {
                    Routed::Run(Target::Member(h, f))
                } else {
                    let function = tools.function(Target::Member(h, f)).name();
                    let section = self
                        .take_carried(tools, h)
                        .filter(|_| !delivered.instructed(h));
                    let text = with_section(tools.recovery_text(h, function, delivered), section);
                    Routed::Answer(ToolResult::ok(text), tools.references(h, delivered))
                };
                (routed, Some(h))
            }
            Resolution::Unknown => (Routed::Unknown, None),
        })
    }

    /// The system instructions for the next request: `base`, then one section per expanded
    /// container with a system prompt, in expansion order, under
    /// `## Active container instructions`. In every layout but `hide` always `base`: call
    /// results carry those sections instead.
    pub(crate) fn instructions(&self, tools: &Toolset, base: &str) -> String {
        if tools.layout().carries_instructions() {
            return base.to_owned();
        }
        let sections: Vec<String> = self
            .expanded
            .iter()
            .filter_map(|name| {
                let h = tools.harness_index(name)?;
                if !tools.is_collapsed(h) {
                    return None;
                }
                tools
                    .system_prompt(h)
                    .map(|prompt| format!("### {}\n{prompt}", tools.groups()[h].name))
            })
            .collect();
        if sections.is_empty() {
            return base.to_owned();
        }
        let mut text = String::new();
        if !base.is_empty() {
            text.push_str(base);
            text.push_str("\n\n");
        }
        text.push_str("## Active container instructions\n\n");
        text.push_str(&sections.join("\n\n"));
        text
    }

    /// What a session keeps when a turn ends: nothing (every container collapses, active
    /// instructions clear, scoped pipelines drop), unless the agent's collapsing settings
    /// persist expansions; then [`persisting`](Self::persisting).
    pub(crate) fn end_turn(self, agent: &Toolset) -> Expansion {
        if agent.settings.keep_expansions_across_turns {
            self.persisting(agent)
        } else {
            Expansion::default()
        }
    }

    /// What a session keeps when a turn ends with expansions persisting: the expansions of
    /// harnesses `kept` still registers (harnesses added for one run are gone next run), and
    /// their pipelines. Pipelines of harnesses visible without expansion are created afresh
    /// each turn.
    pub(crate) fn persisting(self, kept: &Toolset) -> Expansion {
        let expanded: Vec<String> = self
            .expanded
            .into_iter()
            .filter(|e| kept.harness_index(e).is_some())
            .collect();
        let pipelines = self
            .pipelines
            .into_iter()
            .filter(|p| expanded.iter().any(|e| **e == *p.harness))
            .collect();
        let undelivered = self
            .undelivered
            .into_iter()
            .filter(|u| expanded.contains(u))
            .collect();
        Expansion {
            expanded,
            pipelines,
            undelivered,
        }
    }
}

/// `text`, then `section` after a blank line when there is one.
pub(crate) fn with_section(mut text: String, section: Option<String>) -> String {
    if let Some(section) = section {
        text.push_str("\n\n");
        text.push_str(&section);
    }
    text
}

/// The result text of an unknown call name, given the names visible in the request.
pub(crate) fn unknown_text(name: &str, visible: &[String]) -> String {
    if visible.is_empty() {
        format!("Function '{name}' not found. No functions are available.")
    } else {
        format!(
            "Function '{name}' not found. Available functions: {}",
            visible.join(", ")
        )
    }
}
