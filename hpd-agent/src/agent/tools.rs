//! The complete tool registry of an agent (or of one run) and the collapsing rules over it:
//! which tools are visible for a request (SPEC 3.2) and what each call name resolves to
//! (SPEC 3.3).
//!
//! Everything that does not depend on the session is prepared once, when the set is built: the
//! ordered definitions of always-visible functions, the container definitions, the member
//! definitions of each collapsed harness and the name lookup tables. Computing the visible list
//! for a request then costs one pass over what is visible.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::chat::ToolDefinition;
use crate::config::CollapsingConfig;
use crate::error::BuildError;
use crate::function::Function;
use crate::middleware::Middleware;
use crate::registry::{HarnessEntry, ScopedMiddlewareSpec};

use super::registration::ResolvedHarness;
use super::sub_agent::SubAgentTool;

/// A harness as registered for an agent.
#[derive(Clone)]
pub(crate) struct BuiltHarness {
    pub(crate) entry: &'static HarnessEntry,
    /// Registered members, in declaration order.
    pub(crate) functions: Vec<Function>,
    /// Collapsed behind a container for this agent.
    pub(crate) collapsed: bool,
    /// The container definition, when collapsed with at least one member.
    pub(crate) container: Option<Arc<ToolDefinition>>,
    /// `f1, f2, ...` of the registered members.
    pub(crate) member_list: String,
    pub(crate) scoped_specs: Vec<(ScopedMiddlewareSpec, Value)>,
    pub(crate) scoped_instances: Vec<Arc<dyn Middleware>>,
}

impl BuiltHarness {
    pub(crate) fn name(&self) -> &'static str {
        self.entry.name
    }

    pub(crate) fn has_scoped_middleware(&self) -> bool {
        !self.scoped_specs.is_empty() || !self.scoped_instances.is_empty()
    }

    /// The text of a container call.
    pub(crate) fn expansion_text(&self) -> String {
        let mut text = format!(
            "{} expanded. Available functions: {}",
            self.name(),
            self.member_list
        );
        if let Some(result) = self.entry.collapse.and_then(|c| c.function_result) {
            text.push_str("\n\n");
            text.push_str(result);
        }
        text
    }

    /// The text of a recovered call.
    pub(crate) fn recovery_text(&self, function: &str) -> String {
        format!(
            "{} expanded. Available functions: {}. Call {function} again to run it.",
            self.name(),
            self.member_list
        )
    }

    /// The system prompt, when set and not blank.
    pub(crate) fn system_prompt(&self) -> Option<&'static str> {
        self.entry
            .collapse
            .and_then(|c| c.system_prompt)
            .filter(|p| !p.trim().is_empty())
    }
}

/// What one call name resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Run function `function` of harness `harness` (indexes into the tool set).
    Run { harness: usize, function: usize },
    /// A call of the container of `harness`.
    Container { harness: usize },
    /// A hidden member: expand `harness`, and answer (or run) `function`.
    Recover { harness: usize, function: usize },
    /// Run sub-agent `index`.
    SubAgent { index: usize },
    /// No such tool.
    Unknown,
}

/// Where a tool name points.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Function { harness: usize, function: usize },
    Container { harness: usize },
    SubAgent { index: usize },
}

/// One registration, in registration order.
#[derive(Debug, Clone, Copy)]
enum Item {
    Harness(usize),
    SubAgent(usize),
}

/// The complete tool registry of an agent or a run.
pub(crate) struct ToolSet {
    pub(crate) harnesses: Vec<BuiltHarness>,
    /// Sub-agent tools, always visible.
    pub(crate) sub_agents: Vec<Arc<SubAgentTool>>,
    /// Harnesses and sub-agents in registration order.
    layout: Vec<Item>,
    /// Definitions visible whatever the expansion state, in registration order.
    always_visible: Vec<Arc<ToolDefinition>>,
    /// Exact tool names.
    by_name: HashMap<String, Slot>,
    /// Lower-cased harness names.
    by_harness: HashMap<String, usize>,
    pub(crate) recovery: bool,
}

impl ToolSet {
    /// Builds the set from resolved harnesses, in registration order.
    pub(crate) fn build(
        resolved: Vec<ResolvedHarness>,
        collapsing: &CollapsingConfig,
    ) -> Result<ToolSet, BuildError> {
        let harnesses: Vec<BuiltHarness> = resolved
            .into_iter()
            .map(|r| {
                let never = collapsing
                    .never_collapse
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(r.entry.name));
                let collapsed = collapsing.enabled && r.entry.collapse.is_some() && !never;
                let member_list = r
                    .functions
                    .iter()
                    .map(Function::name)
                    .collect::<Vec<_>>()
                    .join(", ");
                let container = match r.entry.collapse {
                    Some(spec) if collapsed && !r.functions.is_empty() => {
                        Some(Arc::new(ToolDefinition {
                            name: r.entry.name.to_owned(),
                            description: format!("{} (functions: {member_list})", spec.description),
                            parameters: Arc::new(
                                serde_json::json!({"type": "object", "properties": {}}),
                            ),
                        }))
                    }
                    _ => None,
                };
                BuiltHarness {
                    entry: r.entry,
                    functions: r.functions,
                    collapsed,
                    container,
                    member_list,
                    scoped_specs: r.scoped_specs,
                    scoped_instances: r.scoped_instances,
                }
            })
            .collect();
        let layout = (0..harnesses.len()).map(Item::Harness).collect();
        Self::index(harnesses, Vec::new(), layout, collapsing.recovery)
    }

    /// The same set with sub-agent tools added; each comes with the number of harness
    /// registrations made before it, which places it in registration order.
    pub(crate) fn with_sub_agents(
        self,
        sub_agents: Vec<(usize, Arc<SubAgentTool>)>,
    ) -> Result<ToolSet, BuildError> {
        let mut all = self.sub_agents;
        let mut placed: Vec<(usize, usize)> = Vec::with_capacity(sub_agents.len());
        for (position, sub_agent) in sub_agents {
            placed.push((position, all.len()));
            all.push(sub_agent);
        }
        let mut layout = Vec::with_capacity(self.layout.len() + placed.len());
        let mut harnesses_seen = 0;
        for item in self.layout {
            if let Item::Harness(_) = item {
                layout.extend(
                    placed
                        .iter()
                        .filter(|(position, _)| *position == harnesses_seen)
                        .map(|&(_, index)| Item::SubAgent(index)),
                );
                harnesses_seen += 1;
            }
            layout.push(item);
        }
        layout.extend(
            placed
                .iter()
                .filter(|(position, _)| *position >= harnesses_seen)
                .map(|&(_, index)| Item::SubAgent(index)),
        );
        Self::index(self.harnesses, all, layout, self.recovery)
    }

    /// The same set with more (already built) harnesses after everything registered.
    ///
    /// # Errors
    ///
    /// A harness of that name is registered already.
    pub(crate) fn with_harnesses(self, extra: Vec<BuiltHarness>) -> Result<ToolSet, BuildError> {
        if let Some(clash) = extra
            .iter()
            .find(|h| self.harness_index(h.name()).is_some())
        {
            return Err(BuildError::HandedHarnessRegistered {
                harness: clash.name().to_owned(),
            });
        }
        let mut layout = self.layout;
        let mut harnesses = self.harnesses;
        for harness in extra {
            layout.push(Item::Harness(harnesses.len()));
            harnesses.push(harness);
        }
        Self::index(harnesses, self.sub_agents, layout, self.recovery)
    }

    fn index(
        harnesses: Vec<BuiltHarness>,
        sub_agents: Vec<Arc<SubAgentTool>>,
        layout: Vec<Item>,
        recovery: bool,
    ) -> Result<ToolSet, BuildError> {
        let mut by_name: HashMap<String, Slot> = HashMap::new();
        let mut by_harness = HashMap::new();
        let mut always_visible = Vec::new();
        let owner = |slot: &Slot| match *slot {
            Slot::Function { harness, .. } | Slot::Container { harness } => {
                harnesses[harness].name().to_owned()
            }
            Slot::SubAgent { index } => format!("sub-agent {}", sub_agents[index].name),
        };
        for &item in &layout {
            let h = match item {
                Item::Harness(h) => h,
                Item::SubAgent(index) => {
                    let sub_agent = &sub_agents[index];
                    if let Some(existing) = by_name.get(&sub_agent.name) {
                        return Err(BuildError::DuplicateTool {
                            name: sub_agent.name.clone(),
                            first: owner(existing),
                            second: format!("sub-agent {}", sub_agent.name),
                        });
                    }
                    by_name.insert(sub_agent.name.clone(), Slot::SubAgent { index });
                    always_visible.push(Arc::clone(&sub_agent.definition));
                    continue;
                }
            };
            let harness = &harnesses[h];
            by_harness.entry(harness.name().to_lowercase()).or_insert(h);
            let mut slots: Vec<(String, Slot)> = harness
                .functions
                .iter()
                .enumerate()
                .map(|(f, function)| {
                    (
                        function.name().to_owned(),
                        Slot::Function {
                            harness: h,
                            function: f,
                        },
                    )
                })
                .collect();
            if let Some(container) = &harness.container {
                slots.push((container.name.clone(), Slot::Container { harness: h }));
            }
            for (name, slot) in slots {
                if let Some(existing) = by_name.get(&name) {
                    return Err(BuildError::DuplicateTool {
                        name,
                        first: owner(existing),
                        second: harness.name().to_owned(),
                    });
                }
                by_name.insert(name, slot);
            }
            if !harness.collapsed {
                always_visible.extend(harness.functions.iter().map(|f| Arc::clone(f.definition())));
            }
        }
        Ok(ToolSet {
            harnesses,
            sub_agents,
            layout,
            always_visible,
            by_name,
            by_harness,
            recovery,
        })
    }

    /// The agent's set followed by the harnesses added for one run. A harness the agent
    /// already registers keeps the agent's registration.
    pub(crate) fn extend(
        base: &ToolSet,
        added: Vec<ResolvedHarness>,
        collapsing: &CollapsingConfig,
    ) -> Result<ToolSet, BuildError> {
        let added: Vec<ResolvedHarness> = added
            .into_iter()
            .filter(|r| !base.by_harness.contains_key(&r.entry.name.to_lowercase()))
            .collect();
        let extra = ToolSet::build(added, collapsing)?;
        let mut harnesses = base.harnesses.clone();
        let mut layout = base.layout.clone();
        for harness in extra.harnesses {
            layout.push(Item::Harness(harnesses.len()));
            harnesses.push(harness);
        }
        Self::index(harnesses, base.sub_agents.clone(), layout, base.recovery)
    }

    /// Finds a harness by name, case-insensitively.
    pub(crate) fn harness_index(&self, name: &str) -> Option<usize> {
        self.by_harness.get(&name.to_lowercase()).copied()
    }

    /// Whether the members of `h` are visible given the expanded harness names.
    pub(crate) fn members_visible(&self, h: usize, expanded: &[String]) -> bool {
        let harness = &self.harnesses[h];
        !harness.collapsed || expanded.iter().any(|e| e == harness.name())
    }

    /// The visible tool definitions, in the order of SPEC 3.2.
    pub(crate) fn visible(&self, expanded: &[String]) -> Vec<Arc<ToolDefinition>> {
        let mut tools = self.always_visible.clone();
        for harness in &self.harnesses {
            if let Some(container) = &harness.container
                && !expanded.iter().any(|e| e == harness.name())
            {
                tools.push(Arc::clone(container));
            }
        }
        for name in expanded {
            if let Some(h) = self.harness_index(name) {
                let harness = &self.harnesses[h];
                if harness.collapsed && harness.name() == name {
                    tools.extend(harness.functions.iter().map(|f| Arc::clone(f.definition())));
                }
            }
        }
        tools
    }

    /// Resolves one call name against the expansion state of the request it answers.
    pub(crate) fn resolve(&self, name: &str, expanded: &[String]) -> Resolution {
        match self.by_name.get(name) {
            Some(&Slot::Function { harness, function }) => {
                return if self.members_visible(harness, expanded) {
                    Resolution::Run { harness, function }
                } else if self.recovery {
                    Resolution::Recover { harness, function }
                } else {
                    Resolution::Unknown
                };
            }
            Some(&Slot::Container { harness }) => return Resolution::Container { harness },
            Some(&Slot::SubAgent { index }) => return Resolution::SubAgent { index },
            None => {}
        }
        self.resolve_qualified(name, expanded)
    }

    fn resolve_qualified(&self, name: &str, expanded: &[String]) -> Resolution {
        const SEPARATORS: [&str; 5] = [".", ":", "/", "-", "__"];
        // Every split position of every separator (overlapping ones too: `a___b` splits as
        // `a` + `_b` and `a_` + `b`) that names a registered harness on the left.
        let candidates = SEPARATORS.iter().flat_map(|separator| {
            (1..name.len())
                .filter(move |&at| name.is_char_boundary(at) && name[at..].starts_with(separator))
                .map(move |at| (&name[..at], &name[at + separator.len()..]))
        });
        let mut container = None;
        for (left, right) in candidates {
            if right.is_empty() {
                continue;
            }
            let Some(h) = self.harness_index(left) else {
                continue;
            };
            let harness = &self.harnesses[h];
            let member = harness
                .functions
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(right));
            match member {
                Some(function) if self.members_visible(h, expanded) => {
                    return Resolution::Run {
                        harness: h,
                        function,
                    };
                }
                Some(function) if self.recovery => {
                    return Resolution::Recover {
                        harness: h,
                        function,
                    };
                }
                Some(_) => return Resolution::Unknown,
                None if harness.container.is_some() => {
                    container.get_or_insert(Resolution::Container { harness: h });
                }
                None => {}
            }
        }
        // No split names a member: the first harness with a container takes the call.
        container.unwrap_or(Resolution::Unknown)
    }

    /// The function at a resolved position.
    pub(crate) fn function(&self, harness: usize, function: usize) -> &Function {
        &self.harnesses[harness].functions[function]
    }
}
