//! The serializable state of a session, shared by the agent (which runs it) and the session
//! stores (which keep it).

use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;

/// The serializable state of a [`Session`](crate::Session): the conversation and the expansion state.
///
/// Store it (e.g. as JSON) and [`Agent::resume`](crate::Agent::resume) it later, on any machine with the same agent,
/// or let a [`SessionStore`](crate::store::SessionStore) do it ([`Agent::open_session`](crate::Agent::open_session)).
///
/// ```
/// use hpd_agent::{ChatMessage, SessionState};
///
/// let state = SessionState { history: vec![ChatMessage::user("Hi")], expanded: vec![] };
/// let json = serde_json::to_string(&state)?;
/// assert_eq!(json, r#"{"history":[{"role":"user","content":"Hi"}]}"#);
/// assert_eq!(serde_json::from_str::<SessionState>(&json)?, state);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// The conversation, oldest first.
    pub history: Vec<ChatMessage>,
    /// Expanded containers, in expansion order (kept across turns only with
    /// `persist_system_prompt_injections`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expanded: Vec<String>,
}
