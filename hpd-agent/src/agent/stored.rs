//! A session bound to a [`SessionStore`]: saved at the end of every turn that changed it.

use std::fmt;
use std::sync::Arc;

use crate::error::RunError;
use crate::session::SessionState;
use crate::store::{SessionStore, StoreError, UnsavedTurn};

use super::RunOutput;

/// The binding of a [`Session`](crate::Session) to a store: where it is saved, the version it
/// was last read or written at, and whether the in-memory state has changes not yet saved.
pub(crate) struct Binding {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) id: String,
    pub(crate) version: u64,
    pub(crate) pending: bool,
    /// How many messages of the history are stored (at `version`); the rest is unsaved.
    pub(crate) saved_len: usize,
    /// How many entries of the approval log are stored (at `version`).
    pub(crate) saved_approvals: usize,
    /// The id and user message of the latest turn, for the unsaved turn of a conflict.
    pub(crate) last_turn: Option<(String, String)>,
}

impl Binding {
    /// A binding to the session `id` as it was just loaded.
    pub(crate) fn loaded(
        store: Arc<dyn SessionStore>,
        id: String,
        version: u64,
        saved_len: usize,
        saved_approvals: usize,
    ) -> Self {
        Binding {
            store,
            id,
            version,
            pending: false,
            saved_len,
            saved_approvals,
            last_turn: None,
        }
    }

    /// Saves `state` with the expected version; on success the binding moves to the new
    /// version, on failure it keeps the old one and stays pending. A conflict carries the
    /// messages not saved.
    pub(crate) async fn save(&mut self, state: &SessionState) -> Result<(), StoreError> {
        self.pending = true;
        let version = match self.store.save(&self.id, state, self.version).await {
            Ok(version) => version,
            Err(StoreError::Conflict {
                session, expected, ..
            }) => {
                let (turn_id, user_message) = match &self.last_turn {
                    Some((turn_id, message)) => (turn_id.clone(), Some(message.clone())),
                    None => (String::new(), None),
                };
                let messages = state
                    .history
                    .get(self.saved_len..)
                    .unwrap_or_default()
                    .to_vec();
                return Err(StoreError::Conflict {
                    session,
                    expected,
                    unsaved: Some(Box::new(UnsavedTurn {
                        turn_id,
                        user_message,
                        messages,
                        expanded: state.expanded.clone(),
                        paused: state.paused.clone(),
                        approvals: state
                            .approvals
                            .get(self.saved_approvals..)
                            .unwrap_or_default()
                            .to_vec(),
                    })),
                });
            }
            Err(other) => return Err(other),
        };
        self.version = version;
        self.pending = false;
        self.saved_len = state.history.len();
        self.saved_approvals = state.approvals.len();
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
            .field("saved_len", &self.saved_len)
            .finish()
    }
}

/// A new turn id: `turn-` and 32 hex digits, random (the OS-seeded `RandomState` mixed with the
/// time, the process id and a counter), so ids of different processes do not repeat.
pub(crate) fn new_turn_id() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};

    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = (nanos, std::process::id(), count);
    let high = RandomState::new().hash_one(seed);
    let low = RandomState::new().hash_one((seed, high));
    format!("turn-{high:016x}{low:016x}")
}
