//! The catalog: every tool an agent registered, as [`Function`] entries grouped by harness, in
//! registration order. What is visible when, and what a call name resolves to, is decided by
//! the `collapse` module over this catalog.

use std::sync::Arc;

use super::function::Function;

/// The collapse texts of a harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CollapseText {
    /// The container description.
    pub(crate) description: String,
    /// Appended to the container call's result.
    pub(crate) function_result: Option<String>,
    /// Active while the container is expanded.
    pub(crate) system_prompt: Option<String>,
}

/// A harness as registered for an agent: its name, collapse texts and registered members.
#[derive(Clone)]
pub(crate) struct Group {
    pub(crate) name: Arc<str>,
    /// Set when the harness is declared collapsed (whether it collapses for this agent is the
    /// collapsing settings' decision).
    pub(crate) collapse: Option<Arc<CollapseText>>,
    /// Registered members, in declaration order.
    pub(crate) members: Vec<Function>,
    /// Every member name the harness declares, registered or not, in declaration order.
    pub(crate) declared: Arc<[String]>,
}

impl Group {
    /// The member named exactly `name`.
    pub(crate) fn member(&self, name: &str) -> Option<&Function> {
        self.members.iter().find(|f| f.name() == name)
    }
}

/// A tool registered on its own rather than as a member of a harness (a sub-agent given to
/// `with_sub_agent`): always visible.
#[derive(Clone)]
pub(crate) struct Single {
    pub(crate) function: Function,
    /// How errors name who registered it, e.g. `sub-agent researcher`.
    pub(crate) label: String,
}

/// One registration, in registration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Group(usize),
    Single(usize),
}

/// Every tool of an agent (or of one run).
#[derive(Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) groups: Vec<Group>,
    pub(crate) singles: Vec<Single>,
    pub(crate) layout: Vec<Slot>,
}
