//! The serializable state of a session, shared by the agent (which runs it) and the session
//! stores (which keep it).

use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalRecord, PausedTurn};
use crate::chat::ChatMessage;

/// The serializable state of a [`Session`](crate::Session): the conversation and the expansion state.
///
/// Store it (e.g. as JSON) and [`Agent::resume`](crate::Agent::resume) it later, on any machine with the same agent,
/// or let a [`SessionStore`](crate::store::SessionStore) do it ([`Agent::open_session`](crate::Agent::open_session)).
///
/// ```
/// use hpd_agent::ChatMessage;
/// use hpd_agent::agent::SessionState;
///
/// let state = SessionState::from_history(vec![ChatMessage::user("Hi")]);
/// let json = serde_json::to_string(&state)?;
/// assert_eq!(json, r#"{"history":[{"role":"user","content":"Hi"}]}"#);
/// assert_eq!(serde_json::from_str::<SessionState>(&json)?, state);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionState {
    /// The conversation, oldest first.
    pub history: Vec<ChatMessage>,
    /// Expanded containers, in expansion order (kept across turns only with
    /// `keep_expansions_across_turns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expanded: Vec<String>,
    /// How many messages at the start of `history` are trimmed: kept (and stored) but no
    /// longer sent to the model, because an agent's
    /// [`ContextBudget`](crate::config::ContextBudget) left them out. Always the start of a turn.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trimmed: usize,
    /// The summary that stands for the trimmed messages in requests, when the agent has a
    /// [`Summarizer`](crate::agent::Summarizer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Set while the session is paused: a turn stopped before calls that need a person's
    /// approval ran (see [`approval`](crate::approval)). The history then ends with the
    /// assistant message that made those calls; their results come when the session resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PausedTurn>,
    /// Every decision made on a call that needed approval, oldest first: which call, the
    /// arguments the model sent, and the decision (with edited arguments or the reason of a
    /// denial).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<ApprovalRecord>,
}

impl SessionState {
    /// A state holding only this conversation: nothing expanded, trimmed, paused or decided.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    /// use hpd_agent::agent::SessionState;
    ///
    /// let state = SessionState::from_history(vec![ChatMessage::user("Hi")]);
    /// assert_eq!(state.history.len(), 1);
    /// assert!(state.paused.is_none());
    /// ```
    #[must_use]
    pub fn from_history(history: Vec<ChatMessage>) -> Self {
        SessionState {
            history,
            ..SessionState::default()
        }
    }
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde passes a reference"
)]
fn is_zero(value: &usize) -> bool {
    *value == 0
}
