//! The tool list of a harness built at run time, which can be replaced while agents use it, and
//! [`ToolListUpdater`], the handle that replaces it.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use super::tool::{Tool, checked};
use crate::error::BuildError;

pub(crate) struct ListState {
    pub(crate) generation: u64,
    pub(crate) tools: Arc<[Tool]>,
}

/// The current tool list of a dynamic harness, shared by the harness and its updaters.
pub(crate) struct ToolList {
    pub(crate) harness: String,
    pub(crate) state: Mutex<ListState>,
}

impl ToolList {
    pub(crate) fn snapshot(&self) -> (u64, Arc<[Tool]>) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (state.generation, Arc::clone(&state.tools))
    }
}

/// Replaces the tool list of a [`DynamicHarness`]; agents use the new list from their next
/// turn on. Holding an updater does not keep the harness alive.
///
/// ```
/// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
/// use serde_json::json;
///
/// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
/// let harness = HarnessBuilder::new("Remote").tool(tool("a")).build().unwrap();
/// let updater = harness.updater();
/// updater.replace(vec![tool("a"), tool("b")]).unwrap();
/// assert_eq!(harness.tool_names(), ["a", "b"]);
/// assert_eq!(harness.generation(), 1);
/// assert!(updater.replace(vec![tool("a"), tool("a")]).is_err());
/// ```
#[derive(Clone)]
pub struct ToolListUpdater {
    pub(crate) list: Arc<ToolList>,
}

impl fmt::Debug for ToolListUpdater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolListUpdater")
            .field("harness", &self.list.harness)
            .finish_non_exhaustive()
    }
}

impl ToolListUpdater {
    /// Replaces the tool list, checked as [`HarnessBuilder::build`] checks it.
    ///
    /// # Errors
    ///
    /// As [`HarnessBuilder::build`] for the tools; the list is left unchanged then.
    pub fn replace(&self, tools: Vec<Tool>) -> Result<(), BuildError> {
        let tools = checked(&self.list.harness, tools)?;
        let mut state = self
            .list
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.generation += 1;
        state.tools = tools;
        Ok(())
    }

    /// How many times the tool list was replaced.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.list.snapshot().0
    }
}
