//! The tool list of a harness built at run time, which can be replaced while agents use it, and
//! [`ToolListUpdater`], the handle that replaces it.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use super::tool::{Tool, checked};
use crate::error::BuildError;

pub(crate) struct ListState {
    pub(crate) generation: u64,
    pub(crate) tools: Arc<[Tool]>,
}

/// The current tool list of a dynamic harness, shared by the harness and its updaters.
pub(crate) struct ToolList {
    pub(crate) state: Mutex<ListState>,
}

impl ToolList {
    pub(crate) fn snapshot(&self) -> (u64, Arc<[Tool]>) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (state.generation, Arc::clone(&state.tools))
    }
}

/// Replaces the tool list of a [`DynamicHarness`](crate::harness::DynamicHarness); agents use the new
/// list from their next turn on.
///
/// An updater holds the list weakly: it keeps neither the harness nor its tools alive, so the
/// code that learns about changes (a notification handler owned by a connection the tools use)
/// can hold one without keeping that connection alive in a cycle. Once every clone of the
/// harness and every agent using it are gone, [`replace`](Self::replace) returns `Ok(false)`.
///
/// ```
/// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
/// use serde_json::json;
///
/// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
/// let harness = HarnessBuilder::new("Remote").with_tool(tool("a")).build().unwrap();
/// let updater = harness.updater();
/// updater.replace(vec![tool("a"), tool("b")]).unwrap();
/// assert_eq!(harness.tool_names(), ["a", "b"]);
/// assert_eq!(harness.generation(), 1);
/// assert!(updater.replace(vec![tool("a"), tool("a")]).is_err());
/// drop(harness);
/// assert_eq!(updater.replace(vec![tool("c")]).unwrap(), false);
/// ```
#[derive(Clone)]
pub struct ToolListUpdater {
    pub(crate) list: Weak<ToolList>,
    pub(crate) harness: Arc<str>,
}

impl fmt::Debug for ToolListUpdater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolListUpdater")
            .field("harness", &self.harness)
            .finish_non_exhaustive()
    }
}

impl ToolListUpdater {
    /// Replaces the tool list, checked as
    /// [`HarnessBuilder::build`](crate::HarnessBuilder::build) checks it. Returns whether the
    /// harness still exists (`false`: nothing to replace).
    ///
    /// # Errors
    ///
    /// As [`HarnessBuilder::build`](crate::HarnessBuilder::build) for the tools; the list is
    /// left unchanged then.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let remote = HarnessBuilder::new("Remote").with_tool(tool("a")).build()?;
    /// let updater = remote.updater();
    /// assert!(updater.replace(vec![tool("bad name")]).is_err());
    /// assert_eq!(remote.tool_names(), ["a"]); // a rejected list changes nothing
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn replace(&self, tools: Vec<Tool>) -> Result<bool, BuildError> {
        let tools = checked(&self.harness, tools)?;
        let Some(list) = self.list.upgrade() else {
            return Ok(false);
        };
        let mut state = list.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.generation += 1;
        state.tools = tools;
        Ok(true)
    }

    /// How many times the tool list was replaced; `None` once the harness is gone.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let remote = HarnessBuilder::new("Remote").build()?;
    /// let updater = remote.updater();
    /// updater.replace(vec![tool("a")])?;
    /// assert_eq!(updater.generation(), Some(1));
    /// drop(remote);
    /// assert_eq!(updater.generation(), None); // the harness is gone
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn generation(&self) -> Option<u64> {
        self.list.upgrade().map(|list| list.snapshot().0)
    }
}
