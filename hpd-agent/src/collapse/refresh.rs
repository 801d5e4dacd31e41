//! Harnesses whose tool list changes at run time: their `before_turn` hooks, and a toolset
//! rebuilt with the current lists.

use std::sync::{Arc, Mutex, PoisonError};

use super::Toolset;
use crate::error::BuildError;

/// An agent's toolset, replaced when the tool list of a harness built at run time changes.
/// Each turn takes one snapshot, so a turn sees one stable list.
pub(crate) struct LiveToolset {
    current: Mutex<Arc<Toolset>>,
}

impl LiveToolset {
    pub(crate) fn new(tools: Toolset) -> Self {
        LiveToolset {
            current: Mutex::new(Arc::new(tools)),
        }
    }

    /// The toolset with the current tool lists (rebuilt when one changed), without running
    /// hooks. A changed list whose names clash with other tools is not applied: the previous
    /// toolset stays and the clash is reported through `tracing`.
    pub(crate) fn current(&self) -> Arc<Toolset> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.is_stale() {
            match current.refreshed() {
                Ok(fresh) => *current = Arc::new(fresh),
                Err(error) => {
                    tracing::warn!(
                        target: "hpd_agent",
                        %error,
                        "a changed tool list was not applied; the previous tools stay"
                    );
                    // Remember the generations seen, so the clash is reported once.
                    *current = Arc::new(current.acknowledged());
                }
            }
        }
        Arc::clone(&current)
    }

    /// Runs the `before_turn` hooks, then returns [`current`](Self::current).
    pub(crate) async fn for_turn(&self) -> Arc<Toolset> {
        let tools = Arc::clone(&self.current.lock().unwrap_or_else(PoisonError::into_inner));
        tools.before_turn().await;
        self.current()
    }
}

impl Toolset {
    /// Runs the `before_turn` hooks of the harnesses built at run time, in registration order.
    pub(crate) async fn before_turn(&self) {
        for extras in &self.extras {
            if let Some(source) = &extras.source
                && source.harness.has_before_turn()
            {
                source.harness.before_turn().await;
            }
        }
    }

    /// Whether the tool list of a harness built at run time changed since this set was built.
    pub(crate) fn is_stale(&self) -> bool {
        self.extras.iter().any(|extras| {
            extras
                .source
                .as_ref()
                .is_some_and(|s| s.harness.generation() != s.generation)
        })
    }

    /// The same set, marked as built from the current generations of the tool lists (their
    /// tools unchanged).
    fn acknowledged(&self) -> Toolset {
        let mut tools = self.clone();
        for extras in &mut tools.extras {
            if let Some(source) = &mut extras.source {
                source.generation = source.harness.generation();
            }
        }
        tools
    }

    /// The same set with the current tool lists of the harnesses built at run time.
    ///
    /// # Errors
    ///
    /// A new tool name clashes with another registered tool.
    pub(crate) fn refreshed(&self) -> Result<Toolset, BuildError> {
        let mut catalog = self.catalog.clone();
        let mut extras = self.extras.clone();
        for (group, extras) in catalog.groups.iter_mut().zip(&mut extras) {
            let Some(source) = &mut extras.source else {
                continue;
            };
            let (generation, members, declared) =
                source.harness.functions(source.selection.as_deref());
            group.members = members;
            group.declared = declared.into();
            source.generation = generation;
        }
        Toolset::index(catalog, extras, self.settings.clone(), self.native)
    }
}
