//! Collapsing: which tools a request carries, and what a call name resolves to.
//!
//! A [`Toolset`] is the agent's (or one run's) catalog with the collapsing settings applied,
//! prepared once: the ordered definitions of always-visible tools, the container definitions,
//! the member definitions of each collapsed harness and the name lookup tables. Computing the
//! visible list for a request then costs one pass over what is visible. The per-session side,
//! which containers are expanded and which scoped pipelines exist, is an [`Expansion`].
//!
//! The order of the visible tools is:
//! 1. tools visible without expansion (functions of plain, never-collapsed or, with collapsing
//!    off, all harnesses, and tools registered on their own), in registration order;
//! 2. containers that are not expanded (in every layout but `hide`: every container, expanded
//!    or not), in registration order;
//! 3. members of expanded containers, in expansion order (`hide` and `append`); in `fixed`, the
//!    call tool instead; in the native layouts nothing: the members go as deferred groups
//!    ([`Toolset::deferred`]), and with Responses namespaces the containers too.
//!
//! Outside `hide` a request's tool list therefore starts with the previous request's list, and
//! container system prompts travel in call results (see [`Toolset::carried_instructions`])
//! instead of the system text.
//!
//! A call name resolves, in this order, to a visible tool, a container, a hidden member (exact
//! name: recovery), or a qualified name `Harness{sep}tool` (`.` `:` `/` `-` `__`, every split
//! tried, harness names case-insensitive, member names case-insensitive); anything else is
//! unknown. Nothing that is not registered is ever reached.

mod expansion;
mod open_ahead;
mod refresh;
pub(crate) mod tool_choice;
mod unwrap;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;

use crate::chat::{ChatMessage, DeferredGroup, DeferredTools, ToolAnnotations, ToolDefinition};
use crate::config::{CALL_TOOL, CollapsingConfig, CollapsingLayout};
use crate::error::{BuildError, RegistryError};
use crate::harness::names::{fold, same};
use crate::harness::{DynamicHarness, HarnessInfo};
use crate::middleware::pipeline::ScopedSource;
use crate::tool::Function;
use crate::tool::catalog::{Catalog, Group, Slot};

pub(crate) use expansion::{Expansion, Routed, unknown_text, with_section};
pub(crate) use refresh::LiveToolset;
pub(crate) use unwrap::{Unwrapped, may_be_layout_tool};

/// Where a harness built at run time came from, to pick up a changed tool list.
#[derive(Clone)]
pub(crate) struct DynamicSource {
    pub(crate) harness: DynamicHarness,
    /// The selected tool names (merged over registrations), `None` for all.
    pub(crate) selection: Option<Vec<String>>,
    /// The generation of the tool list the group's members come from.
    pub(crate) generation: u64,
}

/// What the runtime attaches to a harness of the catalog.
#[derive(Clone, Default)]
pub(crate) struct GroupExtras {
    /// The members of its scoped pipeline, in order.
    pub(crate) scoped: Vec<ScopedSource>,
    /// Set for a harness built at run time.
    pub(crate) source: Option<DynamicSource>,
    /// The declaration of a macro harness.
    pub(crate) declared_by: Option<&'static HarnessInfo>,
}

/// A harness ready to enter a catalog: its group and what is attached to it.
#[derive(Clone)]
pub(crate) struct Part {
    pub(crate) group: Group,
    pub(crate) extras: GroupExtras,
}

/// The layout a toolset lays requests out in: the configured one, with `native` resolved
/// against the chat client's form of deferred loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Hide,
    Append,
    Fixed,
    /// Native, as Anthropic's `defer_loading` with `tool_reference` blocks, or a form that adds
    /// the loaded tools after the container's result (Anthropic `tool_addition` blocks, the
    /// Responses `additional_tools` item): containers in the tool list, members loaded by
    /// name through the container's result.
    References,
    /// Native, as the OpenAI Responses namespaces with a client-executed `tool_search`.
    Search,
}

impl Layout {
    /// Whether container system prompts travel in call results instead of the system text.
    pub(crate) fn carries_instructions(self) -> bool {
        self != Layout::Hide
    }

    /// Whether the tool list stays the same across expansions.
    pub(crate) fn is_fixed_list(self) -> bool {
        matches!(self, Layout::Fixed | Layout::References | Layout::Search)
    }
}

/// The name of the client-executed tool search of the `Search` layout: requests carry it as
/// [`ChatRequest::tool_search`](crate::chat::ChatRequest::tool_search), and the provider hands
/// the runtime the model's search calls under it.
pub(crate) const SEARCH_TOOL: &str = "tool_search";

/// What one call name resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Run this tool.
    Run(Target),
    /// A call of the container of harness `h`.
    Container(usize),
    /// A hidden member: expand harness `h`, and answer (or run) member `f`.
    Recover(usize, usize),
    /// A hidden member whose definition the conversation already holds (the layouts with a
    /// fixed list): expand harness `h` again and run member `f`, with no recovery answer.
    Loaded(usize, usize),
    /// No such tool.
    Unknown,
}

/// A tool of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Member `f` of harness `h`.
    Member(usize, usize),
    /// Tool `i` registered on its own.
    Single(usize),
}

/// Where an exact tool name points.
#[derive(Debug, Clone, Copy)]
enum NameSlot {
    Tool(Target),
    Container(usize),
    /// A name the layout reserves ([`CALL_TOOL`], [`SEARCH_TOOL`]).
    Reserved,
}

/// The complete tool registry of an agent or a run, with collapsing applied.
/// The hasher of the tool-name index: FNV-1a (the `fnv` crate, already in the dependency tree
/// through the HTTP stack), much cheaper than the default SipHash on the short names it holds,
/// which the lookup of every call pays. The keys are the registered names (chosen by the
/// program, not by the model), so the flooding resistance SipHash buys is not needed; the names
/// a model sends are only looked up.
type NameHash = fnv::FnvBuildHasher;

#[derive(Clone)]
pub(crate) struct Toolset {
    pub(crate) catalog: Catalog,
    /// Parallel to `catalog.groups`.
    pub(crate) extras: Vec<GroupExtras>,
    pub(crate) settings: CollapsingConfig,
    /// Parallel to `catalog.groups`: collapsed behind a container for this agent.
    collapsed: Vec<bool>,
    /// Parallel to `catalog.groups`: the container, when collapsed with at least one member.
    containers: Vec<Option<Arc<ToolDefinition>>>,
    /// Parallel to `catalog.groups`: `f1, f2, ...` of the registered members.
    member_lists: Vec<String>,
    always_visible: Vec<Arc<ToolDefinition>>,
    by_name: HashMap<String, NameSlot, NameHash>,
    /// Folded harness names.
    by_harness: HashMap<String, usize>,
    /// The chat client's form of deferred loading (what `native` becomes).
    native: DeferredTools,
    /// The call tool of the fixed layout, when that layout (or `native`) has a container.
    call_tool: Option<Arc<ToolDefinition>>,
    /// The collapsed harnesses with a container, as deferred groups.
    deferred: Arc<[DeferredGroup]>,
    /// Parallel to `catalog.groups`: the fixed layout's schema line of each member (empty in
    /// the other layouts).
    schema_lines: Vec<Vec<String>>,
    /// The containers ranked for opening ahead of the model (empty when it is off).
    ranker: Arc<open_ahead::Ranker>,
    /// Parallel to `catalog.groups`: each harness's members ranked for the hint of
    /// [`Toolset::member_hint`] (empty unless a layout writes notes or `fixed` opens ahead).
    member_rankers: Arc<[open_ahead::Ranker]>,
}

/// The start of every schema line of the fixed layout.
const SCHEMA_LINE_START: &str = "{\"name\":";
/// How the fixed layout's line of how to call a container's members starts (see
/// [`Toolset::note_answer`], which rewrites it in a note).
const CALL_THEM: &str = "Call them through ";

/// What earlier results of a session show the model already (see [`Toolset::delivered`]).
#[derive(Debug, Default)]
pub(crate) struct Delivered {
    /// Schema lines of the fixed layout.
    schemas: std::collections::HashSet<String>,
    /// Deferred tools loaded by references.
    loaded: std::collections::HashSet<String>,
    /// Harnesses whose system-prompt section an earlier result carried.
    instructed: std::collections::HashSet<usize>,
    /// Every collapsed member counts as loaded (see [`Delivered::unseen`]).
    every_member: bool,
}

impl Delivered {
    /// What a caller that cannot see the conversation assumes, serving a request of the
    /// stateless MCP revision: in the layouts with a fixed list every collapsed member counts
    /// as loaded, as if the conversation held its container's result (which carries the
    /// member schemas and the container's instructions), so a call of one runs (its harness
    /// expands for the call), as a member the conversation holds does. Nothing counts as
    /// shown, so container results stay complete. In `hide` and `append`, whose members are
    /// reached only through an expanded tool list, it is the empty history.
    pub(crate) fn unseen() -> Self {
        Delivered {
            every_member: true,
            ..Delivered::default()
        }
    }

    /// Whether an earlier result carried the system-prompt section of harness `h`.
    pub(crate) fn instructed(&self, h: usize) -> bool {
        self.instructed.contains(&h)
    }
}

impl Toolset {
    /// Builds the set from harnesses in registration order.
    ///
    /// # Errors
    ///
    /// Two tools of one name, or two harnesses of one name.
    pub(crate) fn new(
        parts: Vec<Part>,
        settings: &CollapsingConfig,
    ) -> Result<Toolset, BuildError> {
        let mut catalog = Catalog::default();
        let mut extras = Vec::with_capacity(parts.len());
        for part in parts {
            catalog.layout.push(Slot::Group(catalog.groups.len()));
            catalog.groups.push(part.group);
            extras.push(part.extras);
        }
        Self::index(
            catalog,
            extras,
            settings.clone(),
            DeferredTools::Unsupported,
        )
    }

    /// The same set for a chat client with this form of deferred loading.
    pub(crate) fn with_native(mut self, native: DeferredTools) -> Toolset {
        self.native = native;
        self
    }

    /// The layout requests are laid out in.
    pub(crate) fn layout(&self) -> Layout {
        match self.settings.layout {
            CollapsingLayout::Append => Layout::Append,
            CollapsingLayout::Fixed => Layout::Fixed,
            CollapsingLayout::Native => match self.native {
                // The forms that add tools after the container's result lay out as the
                // references do; the provider writes the addition in its own form.
                DeferredTools::ToolReferences
                | DeferredTools::ToolAdditions
                | DeferredTools::AdditionalTools => Layout::References,
                DeferredTools::ToolSearch => Layout::Search,
                _ => Layout::Fixed,
            },
            _ => Layout::Hide,
        }
    }

    /// The layout's name as traces show it (`hpd_agent.collapsing.layout`): the one requests
    /// use, `fixed` where `native` falls back.
    pub(crate) fn layout_name(&self) -> &'static str {
        match self.layout() {
            Layout::Hide => "hide",
            Layout::Append => "append",
            Layout::Fixed => "fixed",
            Layout::References | Layout::Search => "native",
        }
    }

    /// Whether calls need no expansion state kept between them: with collapsing off, and in the
    /// layouts with a fixed list, where a call of a collapsed member can run in any request
    /// (see [`Delivered::unseen`]). Not in `hide` and `append`, whose tool list is the
    /// expansion state.
    #[cfg(feature = "mcp")]
    pub(crate) fn needs_no_expansion_state(&self) -> bool {
        !self.settings.enabled || self.layout().is_fixed_list()
    }

    /// Whether `native` was asked for and this client has no form of it, with containers to
    /// lay out: requests then use `fixed`.
    pub(crate) fn native_falls_back(&self) -> bool {
        self.settings.enabled
            && self.settings.layout == CollapsingLayout::Native
            && self.native == DeferredTools::Unsupported
            && self.containers.iter().any(Option::is_some)
    }

    /// The same set with more harnesses after everything registered.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub(crate) fn with_parts(self, parts: Vec<Part>) -> Result<Toolset, BuildError> {
        let Toolset {
            mut catalog,
            mut extras,
            settings,
            native,
            ..
        } = self;
        for part in parts {
            catalog.layout.push(Slot::Group(catalog.groups.len()));
            catalog.groups.push(part.group);
            extras.push(part.extras);
        }
        Self::index(catalog, extras, settings, native)
    }

    /// The same set with tools registered on their own; each comes with the number of harness
    /// registrations made before it, which places it in registration order.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub(crate) fn with_singles(
        self,
        singles: Vec<(usize, crate::tool::catalog::Single)>,
    ) -> Result<Toolset, BuildError> {
        let Toolset {
            mut catalog,
            extras,
            settings,
            native,
            ..
        } = self;
        let mut placed: Vec<(usize, usize)> = Vec::with_capacity(singles.len());
        for (position, single) in singles {
            placed.push((position, catalog.singles.len()));
            catalog.singles.push(single);
        }
        let mut layout = Vec::with_capacity(catalog.layout.len() + placed.len());
        let mut groups_seen = 0;
        for slot in std::mem::take(&mut catalog.layout) {
            if let Slot::Group(_) = slot {
                layout.extend(
                    placed
                        .iter()
                        .filter(|(position, _)| *position == groups_seen)
                        .map(|&(_, index)| Slot::Single(index)),
                );
                groups_seen += 1;
            }
            layout.push(slot);
        }
        layout.extend(
            placed
                .iter()
                .filter(|(position, _)| *position >= groups_seen)
                .map(|&(_, index)| Slot::Single(index)),
        );
        catalog.layout = layout;
        Self::index(catalog, extras, settings, native)
    }

    /// Whether a harness added for one run enters the run's set: not when the agent registers
    /// it already (the agent's registration is kept).
    ///
    /// # Errors
    ///
    /// A run-time harness that is not the agent's own has the name of one of the agent's
    /// harnesses.
    pub(crate) fn admits(&self, part: &Part) -> Result<bool, BuildError> {
        let Some(h) = self.harness_index(&part.group.name) else {
            return Ok(true);
        };
        let mine = self.extras[h].source.as_ref().map(|s| &s.harness);
        let theirs = part.extras.source.as_ref().map(|s| &s.harness);
        match (mine, theirs) {
            (None, None) => match clash(self.extras[h].declared_by, part.extras.declared_by) {
                Some(error) => Err(error),
                None => Ok(false),
            },
            (Some(a), Some(b)) if a.same_harness(b) => Ok(false),
            _ => Err(BuildError::DuplicateHarness {
                name: part.group.name.to_string(),
                first: describe(mine, &self.catalog.groups[h].name),
                second: describe(theirs, &part.group.name),
            }),
        }
    }

    /// The same set with more members: each `(harness, position, function)` is inserted at
    /// `position` among the harness's members (additions of one harness in ascending order).
    ///
    /// # Errors
    ///
    /// A new member's name is taken.
    pub(crate) fn with_members(
        self,
        additions: Vec<(usize, usize, Function)>,
    ) -> Result<Toolset, BuildError> {
        if additions.is_empty() {
            return Ok(self);
        }
        let Toolset {
            mut catalog,
            extras,
            settings,
            native,
            ..
        } = self;
        for (h, position, function) in additions {
            let members = &mut catalog.groups[h].members;
            members.insert(position.min(members.len()), function);
        }
        Self::index(catalog, extras, settings, native)
    }

    /// The same catalog with collapsing off: every registered member is a plain tool.
    pub(crate) fn flat(&self) -> Toolset {
        let mut settings = self.settings.clone();
        settings.enabled = false;
        // Without containers there are fewer names than in `self`, which indexed: nothing can
        // clash, so the fallback is never taken.
        Self::index(
            self.catalog.clone(),
            self.extras.clone(),
            settings,
            self.native,
        )
        .unwrap_or_else(|_| self.clone())
    }

    /// The same set as an MCP server serves it: MCP has no deferred loading, so `native` is
    /// `fixed` there. The set itself when that changes nothing (another layout, or a chat client
    /// without deferred loading), so that a server that prepares a session for every request of
    /// the stateless revision copies nothing.
    pub(crate) fn served(self: &Arc<Self>) -> Arc<Toolset> {
        if self.settings.layout != CollapsingLayout::Native
            || self.native == DeferredTools::Unsupported
        {
            return Arc::clone(self);
        }
        Arc::new((**self).clone().with_native(DeferredTools::Unsupported))
    }

    pub(super) fn index(
        mut catalog: Catalog,
        extras: Vec<GroupExtras>,
        settings: CollapsingConfig,
        native: DeferredTools,
    ) -> Result<Toolset, BuildError> {
        let mut by_name: HashMap<String, NameSlot, NameHash> = HashMap::default();
        let mut by_harness: HashMap<String, usize> = HashMap::new();
        let mut always_visible = Vec::new();
        let collapsed: Vec<bool> = catalog
            .groups
            .iter()
            .map(|g| {
                settings.enabled
                    && g.collapse.is_some()
                    && !settings.never_collapse.iter().any(|n| same(n, &g.name))
            })
            .collect();
        // Members of collapsed harnesses in the layouts with a fixed list are called through
        // the call tool, or by a name the request's tool list does not define: no provider's
        // strict decoding shaped their arguments, so they are checked against their schema
        // before they run. In `hide` and `append` with container notes, whose hints outline a
        // member's call for the model to fill in, they are checked too, so that an outline's
        // placeholder sent back is refused. Every member is set, since a catalog is indexed
        // again with other settings (collapsing off: `flat`).
        let notes_by_name = settings.container_notes
            && matches!(
                settings.layout,
                CollapsingLayout::Hide | CollapsingLayout::Append
            );
        let checked_layout = settings.enabled
            && (matches!(
                settings.layout,
                CollapsingLayout::Fixed | CollapsingLayout::Native
            ) || notes_by_name);
        for (group, &collapsed) in catalog.groups.iter_mut().zip(&collapsed) {
            for member in &mut group.members {
                member.set_argument_check(collapsed && checked_layout);
            }
        }
        let groups = &catalog.groups;
        let member_lists: Vec<String> = groups
            .iter()
            .map(|g| {
                g.members
                    .iter()
                    .map(Function::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        let containers: Vec<Option<Arc<ToolDefinition>>> = groups
            .iter()
            .zip(&collapsed)
            .zip(&member_lists)
            .map(|((g, &collapsed), list)| match &g.collapse {
                Some(text) if collapsed && !g.members.is_empty() => {
                    Some(Arc::new(ToolDefinition {
                        name: g.name.to_string(),
                        description: format!("{} (functions: {list})", text.description),
                        parameters: Arc::new(
                            serde_json::json!({"type": "object", "properties": {}}),
                        ),
                        output_schema: None,
                        annotations: ToolAnnotations::new(),
                    }))
                }
                _ => None,
            })
            .collect();
        let owner = |slot: &NameSlot| match *slot {
            NameSlot::Tool(Target::Member(h, _)) | NameSlot::Container(h) => {
                groups[h].name.to_string()
            }
            NameSlot::Tool(Target::Single(i)) => catalog.singles[i].label.clone(),
            NameSlot::Reserved => format!("the {} collapsing layout", settings.layout),
        };
        // The layouts with a fixed list reserve the names of their own tools first, so a
        // registered tool of that name is reported against them.
        let fixed_list = settings.enabled
            && matches!(
                settings.layout,
                CollapsingLayout::Fixed | CollapsingLayout::Native
            )
            && containers.iter().any(Option::is_some);
        if fixed_list {
            by_name.insert(CALL_TOOL.to_owned(), NameSlot::Reserved);
            if settings.layout == CollapsingLayout::Native {
                by_name.insert(SEARCH_TOOL.to_owned(), NameSlot::Reserved);
            }
        }
        for &slot in &catalog.layout {
            let h = match slot {
                Slot::Group(h) => h,
                Slot::Single(i) => {
                    let single = &catalog.singles[i];
                    let name = single.function.name();
                    if let Some(existing) = by_name.get(name) {
                        return Err(BuildError::DuplicateTool {
                            name: name.to_owned(),
                            first: owner(existing),
                            second: single.label.clone(),
                        });
                    }
                    by_name.insert(name.to_owned(), NameSlot::Tool(Target::Single(i)));
                    always_visible.push(Arc::clone(single.function.definition()));
                    continue;
                }
            };
            let group = &groups[h];
            if let Some(&first) = by_harness.get(&fold(&group.name)) {
                if let Some(error) = clash(extras[first].declared_by, extras[h].declared_by) {
                    return Err(error);
                }
                return Err(BuildError::DuplicateHarness {
                    name: group.name.to_string(),
                    first: describe(
                        extras[first].source.as_ref().map(|s| &s.harness),
                        &groups[first].name,
                    ),
                    second: describe(extras[h].source.as_ref().map(|s| &s.harness), &group.name),
                });
            }
            by_harness.insert(fold(&group.name), h);
            let mut slots: Vec<(String, NameSlot)> = group
                .members
                .iter()
                .enumerate()
                .map(|(f, function)| {
                    (
                        function.name().to_owned(),
                        NameSlot::Tool(Target::Member(h, f)),
                    )
                })
                .collect();
            if let Some(container) = &containers[h] {
                slots.push((container.name.clone(), NameSlot::Container(h)));
            }
            for (name, slot) in slots {
                if let Some(existing) = by_name.get(&name) {
                    return Err(BuildError::DuplicateTool {
                        name,
                        first: owner(existing),
                        second: group.name.to_string(),
                    });
                }
                by_name.insert(name, slot);
            }
            if !collapsed[h] {
                always_visible.extend(group.members.iter().map(|f| Arc::clone(f.definition())));
            }
        }
        let call_tool = fixed_list.then(|| Arc::new(call_tool_definition()));
        // A group reads like the container it stands for: `{description} (functions: ...)`.
        let deferred: Arc<[DeferredGroup]> = groups
            .iter()
            .zip(&containers)
            .filter_map(|(g, container)| {
                let container = container.as_ref()?;
                Some(DeferredGroup::new(
                    g.name.to_string(),
                    container.description.clone(),
                    g.members
                        .iter()
                        .map(|f| Arc::clone(f.definition()))
                        .collect(),
                ))
            })
            .collect();
        let schema_lines = groups
            .iter()
            .zip(&containers)
            .map(|(g, container)| match container {
                Some(_) if fixed_list => g
                    .members
                    .iter()
                    .map(|f| schema_line(f.definition()))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        // The hints of notes (every layout with a note: `fixed`, `hide`, `append`) and of
        // openings ahead (`fixed`).
        let hinted = (settings.enabled && notes_by_name)
            || (fixed_list && (settings.container_notes || settings.open_ahead.is_some()));
        // The containers are ranked for opening ahead, which happens only in the layouts with
        // a fixed list (`hide` and `append` would change the list, and with it the cached
        // prefix), and for a note's pointer to a container that fits the message better than
        // the one the model opened (see [`Toolset::better_container`]).
        let ranker = if hinted {
            open_ahead::Ranker::new(
                groups
                    .iter()
                    .zip(&containers)
                    .enumerate()
                    .filter(|(_, (_, container))| container.is_some())
                    .flat_map(|(h, (g, _))| {
                        let mut own = vec![g.name.to_string()];
                        if let Some(collapse) = &g.collapse {
                            own.push(collapse.description.clone());
                        }
                        std::iter::once((h, own)).chain(g.members.iter().map(move |member| {
                            let mut texts = vec![g.name.to_string()];
                            texts.extend(hint_texts(member));
                            (h, texts)
                        }))
                    })
                    .collect(),
            )
        } else {
            open_ahead::Ranker::default()
        };
        let member_rankers = if hinted {
            groups
                .iter()
                .map(|g| {
                    // Within a harness its own name tells no member from another; where some
                    // members carry it (an MCP server's `Memory_list_resources`, "of the MCP
                    // server 'Memory'"), it would rank them first for every request that
                    // names the harness ("Show me everything stored in memory").
                    open_ahead::Ranker::ignoring(
                        g.members
                            .iter()
                            .enumerate()
                            .map(|(f, member)| (f, hint_texts(member)))
                            .collect(),
                        &open_ahead::words(&g.name),
                    )
                })
                .collect()
        } else {
            Arc::from([])
        };
        Ok(Toolset {
            ranker: Arc::new(ranker),
            member_rankers,
            schema_lines,
            catalog,
            extras,
            settings,
            collapsed,
            containers,
            member_lists,
            always_visible,
            by_name,
            by_harness,
            native,
            call_tool,
            deferred,
        })
    }

    /// The harnesses, in registration order.
    pub(crate) fn groups(&self) -> &[Group] {
        &self.catalog.groups
    }

    /// Finds a harness by name, case-insensitively.
    pub(crate) fn harness_index(&self, name: &str) -> Option<usize> {
        self.by_harness.get(&fold(name)).copied()
    }

    /// Whether harness `h` is collapsed behind a container for this agent.
    pub(crate) fn is_collapsed(&self, h: usize) -> bool {
        self.collapsed[h]
    }

    /// Whether the members of `h` are visible given the expanded harness names.
    fn members_visible(&self, h: usize, expanded: &[String]) -> bool {
        !self.collapsed[h] || expanded.iter().any(|e| **e == *self.catalog.groups[h].name)
    }

    /// The visible tool definitions, in order.
    pub(crate) fn visible(&self, expanded: &[String]) -> Vec<Arc<ToolDefinition>> {
        let layout = self.layout();
        let mut tools = self.always_visible.clone();
        if layout == Layout::Search {
            // The containers are the namespaces of the deferred groups there.
            return tools;
        }
        for (group, container) in self.catalog.groups.iter().zip(&self.containers) {
            if let Some(container) = container
                && (layout != Layout::Hide || !expanded.iter().any(|e| **e == *group.name))
            {
                tools.push(Arc::clone(container));
            }
        }
        if layout.is_fixed_list() {
            tools.extend(
                self.call_tool
                    .iter()
                    .filter(|_| layout == Layout::Fixed)
                    .cloned(),
            );
            return tools;
        }
        for name in expanded {
            if let Some(h) = self.harness_index(name) {
                let group = &self.catalog.groups[h];
                if self.collapsed[h] && *group.name == **name {
                    tools.extend(group.members.iter().map(|f| Arc::clone(f.definition())));
                }
            }
        }
        tools
    }

    /// The names a call can reach directly in a request with this expansion state: the
    /// visible tools, then the members of expanded containers that the tool list does not
    /// show (the layouts with a fixed list), then, in those layouts, the members of other
    /// containers that `delivered` counts as loaded (every one for [`Delivered::unseen`]).
    pub(crate) fn callable_names(&self, expanded: &[String], delivered: &Delivered) -> Vec<String> {
        let mut names: Vec<String> = self
            .visible(expanded)
            .iter()
            .map(|t| t.name.clone())
            .collect();
        if self.layout().is_fixed_list() {
            for name in expanded {
                if let Some(h) = self.harness_index(name)
                    && self.collapsed[h]
                {
                    names.extend(
                        self.catalog.groups[h]
                            .members
                            .iter()
                            .map(|f| f.name().to_owned()),
                    );
                }
            }
            for (h, group) in self.catalog.groups.iter().enumerate() {
                if self.members_visible(h, expanded) {
                    continue;
                }
                names.extend(
                    group
                        .members
                        .iter()
                        .enumerate()
                        .filter(|&(f, _)| self.is_loaded(h, f, delivered))
                        .map(|(_, function)| function.name().to_owned()),
                );
            }
        }
        names
    }

    /// The deferred groups a request carries: every collapsed harness with a container, in
    /// the native layouts; none otherwise.
    pub(crate) fn deferred(&self) -> &[DeferredGroup] {
        match self.layout() {
            Layout::References | Layout::Search => &self.deferred,
            _ => &[],
        }
    }

    /// The name of the client-executed tool search requests carry (the Responses form of
    /// `native`); `None` in the other layouts.
    pub(crate) fn tool_search(&self) -> Option<&'static str> {
        (self.layout() == Layout::Search).then_some(SEARCH_TOOL)
    }

    /// The deferred tools a container or recovery result of harness `h` loads, in the native
    /// layouts: its registered members that the history has not loaded yet (the provider keeps
    /// those loaded; referencing them again would only repeat their definitions). Empty in the
    /// other layouts.
    pub(crate) fn references(&self, h: usize, delivered: &Delivered) -> Vec<String> {
        match self.layout() {
            Layout::References | Layout::Search => self.catalog.groups[h]
                .members
                .iter()
                .map(|f| f.name().to_owned())
                .filter(|name| !delivered.loaded.contains(name))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// What the history shows the model already: the member schema lines of earlier container
    /// results (fixed layout) and the deferred tools earlier results loaded (native layouts).
    /// Empty in the other layouts, and for an empty history.
    pub(crate) fn delivered(&self, history: &[ChatMessage]) -> Delivered {
        let mut delivered = Delivered::default();
        let layout = self.layout();
        if !layout.is_fixed_list() {
            return delivered;
        }
        let sections: Vec<(usize, String)> = (0..self.catalog.groups.len())
            .filter_map(|h| Some((h, self.carried_instructions(h)?)))
            .collect();
        for message in history {
            // The fixed layout opens ahead in the turn's user message (see `open_ahead`).
            let (content, references) = match message {
                ChatMessage::Tool {
                    content,
                    references,
                    ..
                } => (content, references.as_slice()),
                ChatMessage::User { content } if layout == Layout::Fixed => (content, &[][..]),
                _ => continue,
            };
            for (h, section) in &sections {
                if content.contains(section.as_str()) {
                    delivered.instructed.insert(*h);
                }
            }
            match layout {
                Layout::Fixed => delivered.schemas.extend(
                    content
                        .lines()
                        .filter(|line| line.starts_with(SCHEMA_LINE_START))
                        .map(str::to_owned),
                ),
                _ => delivered.loaded.extend(references.iter().cloned()),
            }
        }
        delivered
    }

    /// The containers to open ahead of the model for a turn that starts with `message` (see the
    /// `open_ahead` module): the [`OPEN_AHEAD_MAX`](crate::config::OPEN_AHEAD_MAX) best-ranked
    /// that score at least the configured score, less those expanded already and those whose
    /// every member the conversation holds. Empty when opening ahead
    /// is off, or in a layout whose openings would not append to the conversation.
    pub(crate) fn open_ahead(
        &self,
        message: &str,
        expanded: &[String],
        delivered: &Delivered,
    ) -> Vec<usize> {
        let Some(threshold) = self.settings.open_ahead.filter(|_| self.may_open_ahead()) else {
            return Vec::new();
        };
        // The best-ranked containers only: when the best is open already, the message is about
        // it, and the next one down is no better a guess than before.
        self.ranker
            .rank(message)
            .into_iter()
            .take(crate::config::OPEN_AHEAD_MAX)
            .take_while(|&(_, score)| score >= threshold)
            .map(|(h, _)| h)
            .filter(|&h| {
                !self.members_visible(h, expanded)
                    && !(0..self.catalog.groups[h].members.len())
                        .all(|f| self.is_loaded(h, f, delivered))
            })
            .collect()
    }

    /// Whether a turn can open anything ahead: the setting is on, collapsing is on with some
    /// container, and the layout is one whose openings append to the conversation (`fixed`, or
    /// `native` with tool references or additions).
    pub(crate) fn may_open_ahead(&self) -> bool {
        self.settings.open_ahead.is_some()
            && self.settings.enabled
            && self.containers.iter().any(Option::is_some)
            && matches!(self.layout(), Layout::Fixed | Layout::References)
    }

    /// Whether an opening ahead goes into the turn's user message rather than container calls
    /// and their results: in `fixed`, whose container results are text only.
    pub(crate) fn opens_ahead_in_a_note(&self) -> bool {
        self.layout() == Layout::Fixed
    }

    /// Whether the layout's answers to a response whose calls are all container calls go into
    /// a note in the user's turn instead of tool results (the `container_notes` setting, in
    /// `fixed`, `hide` and `append`: the layouts whose container results are text only; in
    /// the native forms a container's result is what loads its members).
    pub(crate) fn answers_in_a_note(&self) -> bool {
        self.settings.container_notes
            && matches!(self.layout(), Layout::Fixed | Layout::Hide | Layout::Append)
    }

    /// The tool at a target.
    pub(crate) fn function(&self, target: Target) -> &Function {
        match target {
            Target::Member(h, f) => &self.catalog.groups[h].members[f],
            Target::Single(i) => &self.catalog.singles[i].function,
        }
    }

    /// The tool `function` of harness `harness` (a sub-agent registered on its own is its own
    /// harness), by canonical names: where a paused call resumes.
    pub(crate) fn target_of(&self, harness: &str, function: &str) -> Option<Target> {
        if let Some(h) = self.harness_index(harness)
            && let Some(f) = self.catalog.groups[h]
                .members
                .iter()
                .position(|m| m.name() == function)
        {
            return Some(Target::Member(h, f));
        }
        self.catalog
            .singles
            .iter()
            .position(|s| s.function.name() == function && s.function.harness_name() == harness)
            .map(Target::Single)
    }

    /// The harness whose scoped pipeline guards a target.
    pub(crate) fn owner(&self, target: Target) -> Option<usize> {
        match target {
            Target::Member(h, _) => Some(h),
            Target::Single(_) => None,
        }
    }

    /// Resolves one call name against the expansion state of the request it answers and, when
    /// given, what the conversation already shows the model: a hidden member whose definition
    /// it holds is [`Loaded`](Resolution::Loaded), not recovered.
    pub(crate) fn resolve(
        &self,
        name: &str,
        expanded: &[String],
        delivered: Option<&Delivered>,
    ) -> Resolution {
        match self.by_name.get(name) {
            Some(&NameSlot::Tool(Target::Member(h, f))) => {
                return self.resolve_member(h, f, expanded, delivered);
            }
            Some(&NameSlot::Tool(target)) => return Resolution::Run(target),
            Some(&NameSlot::Container(h)) => return Resolution::Container(h),
            // The layout's own tools are unwrapped before resolution (see `call`); one that
            // reaches here (a call tool naming itself) names no tool.
            Some(&NameSlot::Reserved) => return Resolution::Unknown,
            None => {}
        }
        self.resolve_qualified(name, expanded, delivered)
    }

    /// What a call of member `f` of harness `h` resolves to: it runs when its harness's
    /// members are visible, or when the conversation holds its definition (which expands the
    /// harness again); otherwise it is recovered, or unknown with recovery off.
    fn resolve_member(
        &self,
        h: usize,
        f: usize,
        expanded: &[String],
        delivered: Option<&Delivered>,
    ) -> Resolution {
        if self.members_visible(h, expanded) {
            Resolution::Run(Target::Member(h, f))
        } else if delivered.is_some_and(|d| self.is_loaded(h, f, d)) {
            Resolution::Loaded(h, f)
        } else if self.settings.recovery {
            Resolution::Recover(h, f)
        } else {
            Resolution::Unknown
        }
    }

    /// Whether the conversation holds the definition of member `f` of harness `h`, so the model
    /// can call it without opening the container again: its schema line in an earlier result
    /// (`fixed`), or its deferred definition loaded by an earlier result (the native layouts).
    /// Never in `hide` and `append`, whose members are known only through the tool list.
    pub(crate) fn is_loaded(&self, h: usize, f: usize, delivered: &Delivered) -> bool {
        if !self.collapsed[h] {
            return false;
        }
        if delivered.every_member {
            return self.layout().is_fixed_list();
        }
        match self.layout() {
            Layout::Fixed => self.schema_lines[h]
                .get(f)
                .is_some_and(|line| delivered.schemas.contains(line)),
            Layout::References | Layout::Search => delivered
                .loaded
                .contains(self.catalog.groups[h].members[f].name()),
            Layout::Hide | Layout::Append => false,
        }
    }

    fn resolve_qualified(
        &self,
        name: &str,
        expanded: &[String],
        delivered: Option<&Delivered>,
    ) -> Resolution {
        let longest = self.by_harness.keys().map(String::len).max().unwrap_or(0);
        let candidates = qualified_splits(name, longest);
        let mut container = None;
        for (left, right) in candidates {
            if right.is_empty() {
                continue;
            }
            let Some(h) = self.harness_index(left) else {
                continue;
            };
            let member = self.catalog.groups[h]
                .members
                .iter()
                .position(|f| same(f.name(), right));
            match member {
                Some(f) => return self.resolve_member(h, f, expanded, delivered),
                None if self.containers[h].is_some() => {
                    container.get_or_insert(Resolution::Container(h));
                }
                None => {}
            }
        }
        // No split names a member: the first harness with a container takes the call.
        container.unwrap_or(Resolution::Unknown)
    }

    /// The text of a container call of harness `h`: `{Harness} expanded. Available functions:
    /// {list}`. In the native layouts, a result that loads every member (none was loaded
    /// before) says `{Harness} expanded. Its functions are loaded.` instead: the definitions it
    /// loads name every member, and a list beside them would be read again, from the cache, by
    /// every later request (`BENCHMARKS.md`, "Native results without the list of names"). In
    /// the fixed layout it also lists each member with its description and parameter schema,
    /// one JSON object a line, except those whose line the history already shows. When the
    /// history shows every member's line (the container is called again), the fixed layout
    /// says instead that the container is already open and that its functions run through
    /// [`CALL_TOOL`]: a small model that keeps calling the container, answered with the same
    /// text each time, otherwise never gets to a member.
    pub(crate) fn expansion_text(&self, h: usize, delivered: &Delivered) -> String {
        let group = &self.catalog.groups[h];
        let mut text = if self.layout() == Layout::Fixed && self.all_delivered(h, delivered) {
            format!(
                "{name} is already open: its functions are {list}, and their parameters are in \
                 an earlier result. Calling {name} again opens nothing new. Run the function \
                 you need now through {CALL_TOOL}: {call}.",
                name = group.name,
                list = self.member_lists[h],
                call = call_example("<function>", "{...}"),
            )
        } else if self.loads_every_member(h, delivered) {
            format!("{} expanded. Its functions are loaded.", group.name)
        } else {
            self.expanded_line(h)
        };
        if self.layout() == Layout::Fixed && !self.all_delivered(h, delivered) {
            text.push_str("\n\n");
            text.push_str(&self.member_schemas(h, delivered));
        }
        if let Some(result) = group
            .collapse
            .as_ref()
            .and_then(|c| c.function_result.as_deref())
        {
            text.push_str("\n\n");
            text.push_str(result);
        }
        text
    }

    /// A container answer of harness `h` as a note gives it (opening ahead, `container_notes`).
    /// In the fixed layout, an answer that carries every member's schema line drops its first
    /// line, `{Harness} expanded. Available functions: {list}`: the note has just named the
    /// opened containers, and the schema lines name every member. The line of how to call
    /// them takes the harness's name instead, so that a note of several containers still says
    /// whose functions follow:
    ///
    /// ```text
    /// Storage: call its functions through call_function, as {"name": "call_function", ...}:
    /// {"name":"list_folder","description":...,"parameters":...}
    /// ```
    ///
    /// A container is opened once or twice in a session, yet what a note adds to the
    /// conversation is read again, from the cache, by every later request: the list costs a
    /// session about as many tokens as the member names it repeats times the requests after
    /// it (`BENCHMARKS.md`, "Notes without the list of names"). Any other answer (another
    /// layout, a container opened again whose schemas the conversation holds, a text a
    /// middleware changed) is kept as it is.
    pub(crate) fn note_answer(&self, h: usize, answer: String) -> String {
        let lines = &self.schema_lines[h];
        if self.layout() != Layout::Fixed
            || lines.is_empty()
            || !lines.iter().all(|line| answer.contains(line.as_str()))
        {
            return answer;
        }
        let rest = answer
            .strip_prefix(self.expanded_line(h).as_str())
            .and_then(|rest| rest.strip_prefix("\n\n"))
            .and_then(|rest| rest.strip_prefix(CALL_THEM));
        match rest {
            Some(rest) => format!(
                "{}: call its functions through {rest}",
                self.catalog.groups[h].name
            ),
            None => answer,
        }
    }

    /// The first line of a container's answer: `{Harness} expanded. Available functions:
    /// {list}`.
    fn expanded_line(&self, h: usize) -> String {
        format!(
            "{} expanded. Available functions: {}",
            self.catalog.groups[h].name, self.member_lists[h]
        )
    }

    /// Whether a container result of harness `h` loads every member's definition: a native
    /// layout, and no member loaded by an earlier result.
    fn loads_every_member(&self, h: usize, delivered: &Delivered) -> bool {
        let members = &self.catalog.groups[h].members;
        matches!(self.layout(), Layout::References | Layout::Search)
            && !members.is_empty()
            && members.iter().all(|f| !delivered.loaded.contains(f.name()))
    }

    /// The text of a recovered call of member `function` of harness `h` (in the fixed layout
    /// with the member schemas, as a container call has them).
    pub(crate) fn recovery_text(&self, h: usize, function: &str, delivered: &Delivered) -> String {
        let mut text = format!(
            "{}. Call {function} again to run it.",
            self.expanded_line(h)
        );
        if self.layout() == Layout::Fixed {
            text.push_str("\n\n");
            text.push_str(&self.member_schemas(h, delivered));
        }
        text
    }

    /// For a container of harness `h` answered in a note (the `container_notes` setting and
    /// opening ahead, in `fixed`): the members whose name and description fit the turn's
    /// `message` best, each with the whole call that runs it. The members are ranked by BM25
    /// over the harness's members (see [`hint_texts`]); every member scoring at least half as
    /// well as the best is named, best first, up to [`HINTED_MEMBERS`], and a member whose
    /// description says it is deprecated is left out when another qualifies. For a message
    /// that [asks for no change](open_ahead::asks_for_change), the members whose annotations
    /// say they [change things](ToolAnnotations::changes_things) are not ranked while another
    /// member shares a word with the message. One member is
    /// named alone ("X fits the request best. Run it now: ..."); several are listed with the
    /// first sentence of their descriptions, for the model to run the one the request asks
    /// for. A harness with one member always names it. When the history already shows every
    /// member's schema (the container is called again, and its answer lists none), each named
    /// member's schema comes with it. `None` in the native forms, or when no member shares a
    /// word with the message.
    ///
    /// In `hide` and `append`, whose notes this writes too, an opened container's members are
    /// in the next request's tool list under their own names: the call is the member's own,
    /// `{"name": "<member>", "arguments": {...}}`, and no schema comes with it (the tool list
    /// has it).
    ///
    /// Why several: a lexical ranking puts the member the request needs first for most
    /// requests, but not for all ("Add an entity ... with the observation ..." ranks
    /// `add_observations` over `create_entities`), and a small model runs the one member a hint
    /// names. Where members score close, the model chooses among them by the request; on the
    /// requests of the repository's `open_ahead` bench written in other words than its tasks,
    /// the list names the needed member for 27 of 44 against 22 for one name (`BENCHMARKS.md`,
    /// "Tenth run", which also has what a small model made of it).
    ///
    /// The call is written out whole, `{"name": "call_function", "arguments": {"name": ...}}`:
    /// a small model that writes its calls as `{"name": ..., "arguments": ...}` reads the call
    /// tool's own `name`/`arguments` as its call's and calls the container again, and once it
    /// is shown the nesting it calls the member (`BENCHMARKS.md`, "Seventh run"). Its
    /// arguments outline the member's required parameters, each with a placeholder naming it
    /// (`{"repo_path": "<repo_path>", "revision": "<revision>"}`, nested objects and arrays
    /// outlined too), and the optional ones are named after the call: shown `{...}`, the
    /// model left out required arguments it wrote correctly with the tools listed flat, and
    /// shown only the required ones, it left out an optional one the request asked for
    /// (`BENCHMARKS.md`, "Ninth run").
    pub(crate) fn member_hint(
        &self,
        h: usize,
        message: &str,
        delivered: &Delivered,
    ) -> Option<String> {
        let direct = match self.layout() {
            Layout::Fixed => false,
            Layout::Hide | Layout::Append => true,
            Layout::References | Layout::Search => return None,
        };
        let members = &self.catalog.groups[h].members;
        let named: Vec<usize> = match members.len() {
            0 => return None,
            1 => vec![0],
            _ => {
                let mut ranked = self.member_rankers.get(h)?.rank(message);
                // For a message that asks for no change, a member that says it changes things
                // is no candidate while one that does not fits: a small model runs what the
                // hint names ("Show the last 3 commits" ranked `git_commit` first, and the
                // model committed).
                if ranked.iter().any(|&(f, _)| !changes_things(&members[f]))
                    && !open_ahead::asks_for_change(message)
                {
                    ranked.retain(|&(f, _)| !changes_things(&members[f]));
                }
                let &(_, best) = ranked.first()?;
                let close: Vec<usize> = ranked
                    .iter()
                    .filter(|&&(_, score)| score >= best / 2.0)
                    .map(|&(f, _)| f)
                    .collect();
                // A deprecated member's replacement serves the same requests with nearly the
                // same words, and the model runs what the hint names.
                let current: Vec<usize> = close
                    .iter()
                    .copied()
                    .filter(|&f| !says_deprecated(&members[f]))
                    .collect();
                let mut named = if current.is_empty() { close } else { current };
                named.truncate(HINTED_MEMBERS);
                named
            }
        };
        let harness = &self.catalog.groups[h].name;
        let with_schemas = !direct && self.all_delivered(h, delivered);
        let call = |f: usize| {
            let parameters = &members[f].definition().parameters;
            let outline = argument_outline(parameters);
            let mut call = if direct {
                own_call(members[f].name(), &outline)
            } else {
                call_example(members[f].name(), &outline)
            };
            let optional = optional_arguments(parameters);
            if !optional.is_empty() {
                let _ = write!(call, " (optional arguments: {})", optional.join(", "));
            }
            call
        };
        if let [f] = named[..] {
            let name = members[f].name();
            let call = call(f);
            return Some(if with_schemas {
                format!(
                    "Of the functions of {harness}, {name} fits the request best. Its parameters:\n\
                     {line}\nRun it now: {call}.",
                    line = self.schema_lines[h][f],
                )
            } else {
                format!(
                    "Of the functions of {harness}, {name} fits the request best. Run it now: {call}."
                )
            });
        }
        let mut text = format!("Of the functions of {harness}, these fit the request best:");
        for &f in &named {
            let call = call(f);
            if with_schemas {
                let _ = write!(
                    text,
                    "\n- {line}\n  Run it: {call}.",
                    line = self.schema_lines[h][f]
                );
            } else {
                let _ = write!(
                    text,
                    "\n- {name}: {summary} Run it: {call}.",
                    name = members[f].name(),
                    summary = first_sentence(members[f].description()),
                );
            }
        }
        text.push_str("\nRun now the one that does what the request asks.");
        Some(text)
    }

    /// For a note answering the containers a model `opened` itself: when another container
    /// fits the turn's `message` clearly better, a line that names it and says how to open it,
    /// so that a model that chose the wrong container can turn to the right one. "Clearly
    /// better": it ranks first against the message (as opening ahead ranks containers), scores
    /// at least the opening-ahead score (the configured one, or
    /// [`DEFAULT_OPEN_AHEAD`](crate::config::DEFAULT_OPEN_AHEAD) when opening ahead is off),
    /// and every opened container scores less than half as much. `None` otherwise, in the
    /// native forms (whose containers load by the model's own search or by references), and
    /// when that container's members are in the tool list already or the conversation holds
    /// them all.
    pub(crate) fn better_container(
        &self,
        opened: &[usize],
        message: &str,
        expanded: &[String],
        delivered: &Delivered,
    ) -> Option<String> {
        if !matches!(self.layout(), Layout::Fixed | Layout::Hide | Layout::Append) {
            return None;
        }
        let ranked = self.ranker.rank(message);
        let &(best, score) = ranked.first()?;
        let threshold = self
            .settings
            .open_ahead
            .unwrap_or(crate::config::DEFAULT_OPEN_AHEAD);
        let opened_score = ranked
            .iter()
            .filter(|(h, _)| opened.contains(h))
            .map(|&(_, s)| s)
            .fold(0.0, f64::max);
        if opened.contains(&best)
            || score < threshold
            || opened_score >= score / 2.0
            || self.members_visible(best, expanded)
            || (0..self.catalog.groups[best].members.len())
                .all(|f| self.is_loaded(best, f, delivered))
        {
            return None;
        }
        let group = &self.catalog.groups[best];
        let opened: Vec<&str> = opened
            .iter()
            .map(|&h| &*self.catalog.groups[h].name)
            .collect();
        let what = group
            .collapse
            .as_ref()
            .map(|c| c.description.trim().trim_end_matches('.'))
            .filter(|d| !d.is_empty())
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        Some(format!(
            "{name}{what} fits the request better than {opened}. If the request is for it, \
             open it: {call}.",
            name = group.name,
            opened = opened.join(" or "),
            call = own_call(&group.name, "{}"),
        ))
    }

    /// Whether harness `h` has members and the history shows the fixed layout's line of
    /// every one of them.
    fn all_delivered(&self, h: usize, delivered: &Delivered) -> bool {
        let lines = &self.schema_lines[h];
        !lines.is_empty() && lines.iter().all(|line| delivered.schemas.contains(line))
    }

    /// How the fixed layout presents the members of harness `h`: a line saying how to call
    /// them, then one compact JSON object a member with its `name`, `description` and
    /// `parameters` (the full schema), in declaration order. Members whose line the history
    /// already shows are left out (a line says so), so a container opened again in a session
    /// adds a few tokens, not its schemas again.
    fn member_schemas(&self, h: usize, delivered: &Delivered) -> String {
        let lines = &self.schema_lines[h];
        let fresh: Vec<&String> = lines
            .iter()
            .filter(|line| !delivered.schemas.contains(*line))
            .collect();
        let mut text = format!(
            "{CALL_THEM}{CALL_TOOL}, as {}",
            call_example("<function>", "{...}")
        );
        if fresh.is_empty() {
            text.push_str(". Their parameters are in an earlier result.");
            return text;
        }
        text.push(':');
        if fresh.len() < lines.len() {
            text.push_str(" (the others' parameters are in an earlier result)");
        }
        for line in fresh {
            text.push('\n');
            text.push_str(line);
        }
        text
    }

    /// In the layouts that keep the system text unchanged, the section a call result of
    /// harness `h` carries in its place: its system prompt under
    /// `## Active container instructions`; `None` in the hide layout or without a system
    /// prompt.
    pub(crate) fn carried_instructions(&self, h: usize) -> Option<String> {
        if !self.layout().carries_instructions() || !self.collapsed[h] {
            return None;
        }
        let prompt = self.system_prompt(h)?;
        Some(format!(
            "## Active container instructions\n\n### {}\n{prompt}",
            self.catalog.groups[h].name
        ))
    }

    /// The system prompt of harness `h`, when set and not blank.
    pub(crate) fn system_prompt(&self, h: usize) -> Option<&str> {
        self.catalog.groups[h]
            .collapse
            .as_ref()
            .and_then(|c| c.system_prompt.as_deref())
            .filter(|p| !p.trim().is_empty())
    }
}

/// A member's line in the fixed layout's container result: `{"name":..,"description":..,
/// "parameters":..}`, written by hand so the name comes first (a JSON map sorts its keys).
fn schema_line(definition: &ToolDefinition) -> String {
    format!(
        "{SCHEMA_LINE_START}{},\"description\":{},\"parameters\":{}}}",
        Value::String(definition.name.clone()),
        Value::String(definition.description.clone()),
        definition.parameters
    )
}

/// What a member is ranked by for [`Toolset::member_hint`]: its name twice, its description,
/// and the names and descriptions of its top-level parameters. A word of the name says more
/// than one of the description ("Multiply 6 by 7" is `multiply`'s, not `divide`'s "Divides a
/// by b"), and the parameters say what a function works on ("Add README.md to the staging
/// area" is `git_add`'s, whose parameter is `files`, not `git_commit`'s); the names' words side
/// by side count as pairs too (see the `open_ahead` module). How often the hint
/// names the member a task needs is measured by the repository's `open_ahead` benchmark
/// (`BENCHMARKS.md`, "Seventh run").
fn hint_texts(member: &Function) -> Vec<String> {
    let name = member.name().to_owned();
    let mut texts = vec![name.clone(), name, member.description().to_owned()];
    if let Some(properties) = member
        .definition()
        .parameters
        .get("properties")
        .and_then(Value::as_object)
    {
        for (key, property) in properties {
            texts.push(key.clone());
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                texts.push(description.to_owned());
            }
        }
    }
    texts
}

/// A whole call of [`CALL_TOOL`] that runs `function` with `arguments` (JSON text, or a
/// placeholder such as `{...}`), written as a model writes a call:
/// `{"name": "call_function", "arguments": {"name": "<function>", "arguments": {...}}}`.
fn call_example(function: &str, arguments: &str) -> String {
    own_call(CALL_TOOL, &own_call(function, arguments))
}

/// A whole call of `function` by its own name with `arguments` (JSON text), as a model writes
/// a call: `{"name": "<function>", "arguments": {...}}`.
fn own_call(function: &str, arguments: &str) -> String {
    format!("{{\"name\": \"{function}\", \"arguments\": {arguments}}}")
}

/// How many members a hint names at most (see [`Toolset::member_hint`]).
const HINTED_MEMBERS: usize = 3;

/// The first sentence of a description (up to the first `.` followed by a space or a line
/// break, not an abbreviation's such as "e.g.", or the first line break), with a full stop,
/// cut at a word after 160 characters with `...`.
fn first_sentence(description: &str) -> String {
    let description = description.trim();
    let mut end = description.len();
    // A sentence longer than the cut is cut anyway: the first 161 characters are enough.
    for (i, c) in description.char_indices().take(161) {
        if c == '\n' {
            end = i;
            break;
        }
        if c != '.'
            || !description[i + 1..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        {
            continue;
        }
        // Not the dot of an abbreviation such as "e.g." (a word with a dot inside).
        let start = description[..i]
            .rfind(char::is_whitespace)
            .map_or(0, |w| w + 1);
        if !description[start..i].contains('.') {
            end = i + 1;
            break;
        }
    }
    let sentence = description[..end].trim_end();
    if sentence.chars().count() > 160 {
        let cut: String = sentence.chars().take(160).collect();
        let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
        return format!("{cut}...");
    }
    if sentence.is_empty() || sentence.ends_with(['.', '!', '?']) {
        sentence.to_owned()
    } else {
        format!("{sentence}.")
    }
}

/// Whether `member`'s description says it is deprecated (the word, in any case), as servers
/// mark a function kept for old clients beside its replacement ("DEPRECATED: Use
/// read_text_file instead."). MCP has no annotation for it.
fn says_deprecated(member: &Function) -> bool {
    member
        .definition()
        .description
        .to_lowercase()
        .contains("deprecated")
}

/// Whether a member says it changes its environment ([`ToolAnnotations::changes_things`]).
fn changes_things(member: &Function) -> bool {
    member.definition().annotations.changes_things()
}

/// The names an object schema's `required` lists.
fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The names of a parameter schema's top-level properties that are not required.
fn optional_arguments(parameters: &Value) -> Vec<&str> {
    let required = required_names(parameters);
    parameters
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(key, _)| key.as_str())
        .filter(|key| !required.contains(key))
        .collect()
}

/// The arguments of a hint's call, outlined from a parameter schema: the required
/// properties, in name order (as the member's schema line has them), each with a placeholder
/// naming it (`"<path>"` for a string, `<count>` for a number, `<true or false>` for a
/// boolean), nested objects and
/// arrays outlined the same way (an array as one item); `{...}` for a schema whose properties
/// are all optional, `{}` for one without properties. A call that sends such a placeholder back
/// as its value is refused before the member runs (`crate::arguments`).
fn argument_outline(schema: &Value) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = required_names(schema);
    let fields: Vec<String> = properties
        .into_iter()
        .flatten()
        .filter(|(key, _)| required.contains(&key.as_str()))
        .map(|(key, property)| format!("{}: {}", Value::from(key.as_str()), outline(key, property)))
        .collect();
    if fields.is_empty() {
        // Shown `{}` for a member whose parameters are all optional, the model sent `{}` where
        // the request named a value ("Get 2 resource links").
        if properties.is_some_and(|p| !p.is_empty()) {
            "{...}"
        } else {
            "{}"
        }
        .to_owned()
    } else {
        format!("{{{}}}", fields.join(", "))
    }
}

/// The placeholder of one value of [`argument_outline`], named after its property. A schema
/// without a `type` that offers alternatives (`anyOf`, `oneOf`, as `Optional[str]` becomes)
/// reads as its first alternative that is not `null`; an object without properties (a
/// free-form map) as `{...}`.
fn outline(name: &str, schema: &Value) -> String {
    if schema.get("type").is_none()
        && let Some(alternatives) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        && let Some(alternative) = alternatives
            .iter()
            .find(|a| a.get("type").and_then(Value::as_str) != Some("null"))
    {
        return outline(name, alternative);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or(""),
        _ if schema.get("properties").is_some() => "object",
        _ => "",
    };
    match kind {
        "object"
            if schema
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(serde_json::Map::is_empty) =>
        {
            "{...}".to_owned()
        }
        "object" => argument_outline(schema),
        "array" => match schema.get("items") {
            Some(items) => format!("[{}]", outline(name, items)),
            None => format!("[<{name}>]"),
        },
        "string" => Value::String(format!("<{name}>")).to_string(),
        // Shown `<nextThoughtNeeded>`, a small model wrote `true` where the request said no
        // further thought was needed; the value's two choices leave less to guess.
        "boolean" => "<true or false>".to_owned(),
        _ => format!("<{name}>"),
    }
}

/// The call tool of the fixed layout.
fn call_tool_definition() -> ToolDefinition {
    // Kept short: it is in every request of the session. A container's result says how to
    // call it, with the functions' schemas.
    ToolDefinition {
        name: CALL_TOOL.to_owned(),
        description: "Calls a function of a container you called.".to_owned(),
        parameters: Arc::new(serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"]
        })),
        output_schema: None,
        annotations: ToolAnnotations::new(),
    }
}

/// The ways a call name may split into a harness name, a separator and a member name: every
/// split position of every separator (overlapping ones too: `a___b` splits as `a` + `_b` and
/// `a_` + `b`) whose left part is at most `longest` bytes, the length of the longest harness
/// name. A longer left part names no harness; leaving those out keeps the cost of a long name
/// (a model may send megabytes of dots) linear in its length instead of quadratic.
fn qualified_splits(name: &str, longest: usize) -> impl Iterator<Item = (&str, &str)> {
    const SEPARATORS: [&str; 5] = [".", ":", "/", "-", "__"];
    SEPARATORS.iter().flat_map(move |separator| {
        (1..name.len().min(longest.saturating_add(1)))
            .filter(move |&at| name.is_char_boundary(at) && name[at..].starts_with(separator))
            .map(move |at| (&name[..at], &name[at + separator.len()..]))
    })
}

/// How a duplicate-harness error names one side.
/// Two macro harnesses of different Rust types whose names are equal case-insensitively: the
/// registry error naming both types.
fn clash(
    first: Option<&'static HarnessInfo>,
    second: Option<&'static HarnessInfo>,
) -> Option<BuildError> {
    let (first, second) = (first?, second?);
    (first.rust_type() != second.rust_type()).then(|| {
        BuildError::Registry(RegistryError::DuplicateName {
            first_name: first.name(),
            first_type: first.rust_type(),
            second_name: second.name(),
            second_type: second.rust_type(),
        })
    })
}

fn describe(source: Option<&DynamicHarness>, name: &str) -> String {
    match source {
        Some(_) => format!("the harness '{name}' built at run time"),
        None => format!("the Rust harness '{name}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::{argument_outline, first_sentence, optional_arguments, qualified_splits};
    use serde_json::json;

    #[test]
    fn a_hint_outlines_the_required_arguments_and_names_the_optional_ones() {
        // Nested objects and arrays are outlined as their items; strings are quoted.
        let memory = json!({"type": "object", "properties": {"observations": {"type": "array",
            "items": {"type": "object", "properties": {
                "entityName": {"type": "string"},
                "contents": {"type": "array", "items": {"type": "string"}}},
            "required": ["entityName", "contents"]}}}, "required": ["observations"]});
        assert_eq!(
            argument_outline(&memory),
            r#"{"observations": [{"contents": ["<contents>"], "entityName": "<entityName>"}]}"#
        );
        // Only the required ones, in name order (as the schema line lists them); a nullable
        // type reads as its other.
        let listing = json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "sortBy": {"type": "string", "enum": ["name", "size"]},
            "depth": {"type": ["integer", "null"]}}, "required": ["path", "depth"]});
        assert_eq!(
            argument_outline(&listing),
            r#"{"depth": <depth>, "path": "<path>"}"#
        );
        assert_eq!(optional_arguments(&listing), ["sortBy"]);
        // No property: `{}`; only optional ones: `{...}`, to be filled in.
        assert_eq!(argument_outline(&json!({"type": "object"})), "{}");
        assert_eq!(
            argument_outline(&json!({"type": "object", "properties": {"n": {"type": "integer"}}})),
            "{...}"
        );
        assert!(optional_arguments(&json!({"type": "object"})).is_empty());
        // An optional string written as alternatives is a string; a free-form object is `{...}`.
        let loose = json!({"type": "object", "properties": {
            "since": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "headers": {"type": "object"}}, "required": ["since", "headers"]});
        assert_eq!(
            argument_outline(&loose),
            r#"{"headers": {...}, "since": "<since>"}"#
        );
        // A boolean's placeholder offers its two values.
        let flag = json!({"type": "object", "properties": {"more": {"type": "boolean"}},
            "required": ["more"]});
        assert_eq!(argument_outline(&flag), r#"{"more": <true or false>}"#);
        // A name that needs escaping keeps the outline valid JSON text around it.
        let quoted = json!({"type": "object", "properties": {"say \"hi\"": {"type": "string"}},
            "required": ["say \"hi\""]});
        assert_eq!(
            argument_outline(&quoted),
            r#"{"say \"hi\"": "<say \"hi\">"}"#
        );
    }

    #[test]
    fn a_listed_member_is_summed_up_by_its_first_sentence() {
        assert_eq!(
            first_sentence("Shows the commit logs. Accepts dates in ISO 8601."),
            "Shows the commit logs."
        );
        // A dot inside a word or a version ends nothing; a sentence gets its full stop.
        assert_eq!(
            first_sentence("Reads e.g. notes.txt with v1.2 rules\nSecond line."),
            "Reads e.g. notes.txt with v1.2 rules."
        );
        assert_eq!(first_sentence("  Shows the status  "), "Shows the status.");
        assert_eq!(first_sentence("Is it? Yes."), "Is it? Yes.");
        assert_eq!(first_sentence(""), "");
        // A long first sentence is cut at a word, within 160 characters.
        let long = format!("{} end.", "word ".repeat(40));
        let cut = first_sentence(&long);
        assert!(
            cut.ends_with("word...") && cut.chars().count() <= 163,
            "{cut}"
        );
    }

    #[test]
    fn qualified_splits_cover_every_separator_up_to_the_longest_harness_name() {
        let splits: Vec<_> = qualified_splits("Web-Tools__get.x", 64).collect();
        assert_eq!(
            splits,
            [
                ("Web-Tools__get", "x"),
                ("Web", "Tools__get.x"),
                ("Web-Tools", "get.x")
            ]
        );
        let splits: Vec<_> = qualified_splits("Web-Tools__get.x", 9).collect();
        assert_eq!(splits, [("Web", "Tools__get.x"), ("Web-Tools", "get.x")]);
        // Overlapping separators split both ways; multi-byte characters are never split.
        let splits: Vec<_> = qualified_splits("a___b", 64).collect();
        assert_eq!(splits, [("a", "_b"), ("a_", "b")]);
        assert_eq!(
            qualified_splits("é.é", 64).collect::<Vec<_>>(),
            [("é", "é")]
        );
    }

    /// Caught by running the `call_names` fuzz target on a hand-written 100 KB line of dots
    /// (it ran out of memory): every
    /// position of a long name was tried as a harness name, each lower-cased afresh.
    #[test]
    fn a_long_name_is_split_only_where_a_harness_name_fits() {
        let dots = ".".repeat(1 << 20);
        assert_eq!(qualified_splits(&dots, 8).count(), 8);
        assert_eq!(qualified_splits(&dots, 0).count(), 0);
    }
}
