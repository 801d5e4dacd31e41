//! A session bound to a [`SessionStore`]: saved at the end of every turn that changed it.

use std::fmt;
use std::sync::Arc;

use crate::error::RunError;
use crate::session::SessionState;
use crate::store::{SessionStore, StoreError};

use super::RunOutput;

/// The binding of a [`Session`](crate::Session) to a store: where it is saved, the version it
/// was last read or written at, and whether the in-memory state has changes not yet saved.
pub(crate) struct Binding {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) id: String,
    pub(crate) version: u64,
    pub(crate) pending: bool,
}

impl Binding {
    /// Saves `state` with the expected version; on success the binding moves to the new
    /// version, on failure it keeps the old one and stays pending.
    pub(crate) async fn save(&mut self, state: &SessionState) -> Result<(), StoreError> {
        self.pending = true;
        let version = self.store.save(&self.id, state, self.version).await?;
        self.version = version;
        self.pending = false;
        Ok(())
    }
}

impl Binding {
    /// Saves the session at the end of a turn when the turn changed it (or an earlier save is
    /// still due) and combines the outcomes: a failed turn's error wins over a failed save's.
    pub(crate) async fn after_turn(
        &mut self,
        state: &SessionState,
        changed: bool,
        outcome: Result<RunOutput, RunError>,
    ) -> Result<RunOutput, RunError> {
        if !changed && !self.pending {
            return outcome;
        }
        match (outcome, self.save(state).await) {
            (Ok(output), Ok(())) => Ok(output),
            (Ok(_), Err(error)) => Err(RunError::Store(error)),
            (Err(error), Ok(())) => Err(error),
            (Err(error), Err(store_error)) => {
                tracing::warn!(target: "hpd_agent", error = %store_error, "session not saved after a failed turn");
                Err(error)
            }
        }
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("store", &self.store)
            .field("id", &self.id)
            .field("version", &self.version)
            .field("pending", &self.pending)
            .finish()
    }
}
