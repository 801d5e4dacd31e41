//! Sessions that outlive the process: the [`SessionStore`] trait and its backends.
//!
//! [`Agent::open_session`](crate::Agent::open_session) loads a session from a store (or starts it
//! empty) and binds it to the store: at the end of every [`run`](crate::Session::run) the
//! session's whole state (history and expansion state) is written in one atomic write. Many
//! workers can serve one conversation: each write names the version it read
//! (optimistic concurrency), so when two workers answer the same conversation at once, one write
//! wins and the other gets [`StoreError::Conflict`] instead of silently dropping a turn.
//!
//! ```
//! use std::sync::Arc;
//! use hpd_agent::store::{MemorySessionStore, SessionStore};
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::new());
//! let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi!"), ChatResponse::text("Still here.")]);
//! let agent = AgentBuilder::new().with_chat_client(model).build()?;
//!
//! let mut session = agent.open_session(store.clone(), "user-42").await?;
//! session.run("Hello").await?; // saved at the end of the turn
//! drop(session);
//!
//! // Another worker (here: the same agent) picks the conversation up.
//! let mut session = agent.open_session(store.clone(), "user-42").await?;
//! assert_eq!(session.history().len(), 2);
//! session.run("Are you there?").await?;
//! assert_eq!(store.load("user-42").await?.unwrap().state.history.len(), 4);
//! # Ok(())
//! # }
//! ```
//!
//! # Backends
//!
//! | type | feature | what |
//! |---|---|---|
//! | [`MemorySessionStore`] | always | a map in the process; tests, single-process tools |
//! | `SqliteSessionStore` | `sqlite` (default) | the embedded default: one SQLite file, WAL mode, no server |
//! | `PostgresSessionStore` | `postgres` | a PostgreSQL table, for many workers on many machines |
//! | `RedisSessionStore` | `redis` | a Redis hash per session, optional time to live |
//!
//! The PostgreSQL backend is built on `tokio-postgres` rather than `sqlx`: with only its
//! PostgreSQL driver and Tokio runtime enabled, `sqlx` still brings about 110 crates (its
//! connection pool, URL parsing with Unicode normalisation, its own query machinery) against
//! about 60 for `tokio-postgres`, and the store needs nothing more than five fixed statements on
//! one pipelined connection, which `tokio-postgres` does directly.
//!
//! # What is stored
//!
//! Each session is one record: its id, a version (1 after the first save, +1 for each save), and
//! the state as JSON in an envelope with a format number:
//! `{"format":1,"state":{"history":[...],"expanded":[...]}}`. A record whose format this build
//! does not know, or that does not decode, is reported as [`StoreError::Corrupt`] naming the
//! session; nothing is overwritten. The state holds the conversation, the names of expanded
//! containers, and for a session paused for approval the waiting calls with the results of the
//! calls that ran, and the log of approval decisions ([`approval`](crate::approval)): never the
//! agent's configuration, API keys or store URLs. A paused session is saved at the end of the
//! run that paused it, and [`Session::decide`](crate::Session::decide) on the loaded session
//! goes on from there in any process.
//!
//! Every backend creates its tables (or keys) on first use and records a schema version; a store
//! whose schema version this build does not know is refused with
//! [`StoreError::UnknownSchema`], never migrated silently.
//!
//! # Failures
//!
//! A save that fails (the store is down, another writer saved first) makes
//! [`Session::run`](crate::Session::run) return [`RunError::Store`](crate::RunError::Store); the
//! turn itself is kept in memory. The next `run`, or
//! [`Session::save`](crate::Session::save), writes it again. After a
//! [`Conflict`](StoreError::Conflict) a retry cannot succeed; see below. Errors and `Debug`
//! output never show a password from a store URL.
//!
//! Every call of the SQLite, PostgreSQL and Redis stores has a deadline (their `with_timeout`,
//! default [`DEFAULT_TIMEOUT`]): a server that hangs makes the call fail with
//! [`StoreError::Unavailable`] in that time, naming the call; the connection is dropped then,
//! and the next call opens a new one, as it does after the server closed the connection. (The
//! memory store never waits.) PostgreSQL and Redis connections can use TLS, chosen in the URL
//! (`sslmode=disable|require|verify-full`, `sslrootcert=FILE`; `rediss://` for Redis): see
//! each store.
//!
//! # After a conflict
//!
//! When a session's save loses the race, [`StoreError::Conflict`] carries the turn that was
//! not saved ([`UnsavedTurn`]: the user's message, the tool calls and their results, the
//! answer), and the session keeps it in memory too. Nothing is written, and nothing is lost.
//!
//! **The tool calls of that turn have already run.** Their side effects (a booking, an email)
//! happened, whatever becomes of the turn.
//!
//! The way to continue, chosen for this crate: **hand the unsaved turn back and keep it**.
//! [`Session::append_unsaved`](crate::Session::append_unsaved) reloads the stored history (the
//! other writer's turn) and appends the unsaved messages after it, then saves. The history
//! stays valid for every provider (each turn starts with a user message and every tool call
//! keeps its result), no tool runs twice, and the answer the user already saw is the one
//! stored. The two turns were concurrent; the stored order is the order of their saves.
//!
//! ```
//! use std::sync::Arc;
//! use hpd_agent::store::{MemorySessionStore, SessionStore};
//! use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
//! use hpd_agent::store::StoreError;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(MemorySessionStore::new());
//! let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
//! let agent = AgentBuilder::new().with_chat_client(model).build()?;
//! let mut one = agent.open_session(store.clone(), "chat").await?;
//! let mut two = agent.open_session(store.clone(), "chat").await?;
//! one.run("first").await?;
//! match two.run("second").await {
//!     Err(RunError::Store(StoreError::Conflict { unsaved: Some(turn), .. })) => {
//!         two.append_unsaved(&turn).await?; // the other turn, then this one
//!     }
//!     other => panic!("expected a conflict, got {other:?}"),
//! }
//! assert_eq!(store.load("chat").await?.unwrap().state.history.len(), 4);
//! # Ok(())
//! # }
//! ```
//!
//! The other way: [`Session::reload`](crate::Session::reload), then run the user's message
//! again, so the answer takes the other writer's turn into account. Its tools then run again:
//! pass the unsaved turn's [`turn_id`](UnsavedTurn::turn_id) to
//! [`AgentRunConfig::with_turn_id`](crate::AgentRunConfig::with_turn_id), and let
//! side-effecting tools (or a middleware) skip work they have done before under the same
//! [`FunctionContext::idempotency_key`](crate::FunctionContext::idempotency_key) (the turn id,
//! the function and its arguments; also on
//! [`FunctionCall::idempotency_key`](crate::middleware::FunctionCall::idempotency_key)).

mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "postgres", feature = "redis"))]
mod tls;

use std::fmt;
use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::session::SessionState;

pub use memory::MemorySessionStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::PostgresSessionStore;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::RedisSessionStore;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteSessionStore;

/// The format number of stored records this build writes and reads.
///
/// ```
/// use hpd_agent::agent::SessionState;
/// use hpd_agent::store::{MemorySessionStore, SessionStore, RECORD_FORMAT};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
/// let store = MemorySessionStore::new();
/// store.save("s", &SessionState::default(), 0).await?;
/// let (_, text) = store.raw("s").unwrap();
/// assert!(text.starts_with(&format!(r#"{{"format":{RECORD_FORMAT},"#)));
/// # Ok(())
/// # }
/// ```
pub const RECORD_FORMAT: u32 = 1;

/// The schema version of the tables and keys the backends create.
///
/// ```
/// use hpd_agent::store::SCHEMA_VERSION;
///
/// // A store set up with another schema version is refused with `StoreError::UnknownSchema`.
/// assert_eq!(SCHEMA_VERSION, 1);
/// ```
pub const SCHEMA_VERSION: u32 = 1;

/// The longest session id, in bytes.
///
/// ```
/// use hpd_agent::store::{validate_id, MAX_ID_LEN};
///
/// assert!(validate_id(&"a".repeat(MAX_ID_LEN)).is_ok());
/// assert!(validate_id(&"a".repeat(MAX_ID_LEN + 1)).is_err());
/// ```
pub const MAX_ID_LEN: usize = 512;

/// A session as stored: its state and the version it was stored at.
///
/// ```
/// use hpd_agent::ChatMessage;
/// use hpd_agent::agent::SessionState;
/// use hpd_agent::store::{MemorySessionStore, SessionStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
/// let store = MemorySessionStore::new();
/// let state = SessionState::from_history(vec![ChatMessage::user("Hi")]);
/// store.save("s", &state, 0).await?;
/// let stored = store.load("s").await?.unwrap();
/// assert_eq!((stored.state, stored.version), (state, 1));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredSession {
    /// The session's state.
    pub state: SessionState,
    /// The version: 1 after the first save, one more after each save.
    pub version: u64,
}

/// Storage for session state, shared by many workers.
///
/// Implementations are `Send + Sync` and used through `Arc<dyn SessionStore>`. A save is one
/// atomic write that succeeds only when the stored version is the one the writer read.
///
/// ```
/// use hpd_agent::agent::SessionState;
/// use hpd_agent::store::{MemorySessionStore, SessionStore, StoreError};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), StoreError> {
/// let store = MemorySessionStore::new();
/// let state = SessionState::default();
/// assert_eq!(store.save("a", &state, 0).await?, 1); // 0: not stored yet
/// assert_eq!(store.save("a", &state, 1).await?, 2);
/// assert!(matches!(store.save("a", &state, 1).await, Err(StoreError::Conflict { .. })));
/// assert_eq!(store.load("a").await?.unwrap().version, 2);
/// assert_eq!(store.list("").await?, ["a"]);
/// assert!(store.delete("a").await?);
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait SessionStore: Send + Sync + fmt::Debug {
    /// Loads a session, `None` when it is not stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when the record does not decode, [`StoreError::Unavailable`]
    /// when the store cannot be reached, [`StoreError::InvalidId`] for an id that no backend
    /// accepts.
    ///
    /// ```
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = MemorySessionStore::new();
    /// assert!(store.load("never-saved").await?.is_none());
    /// # Ok(())
    /// # }
    /// ```
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError>;

    /// Stores `state` if the stored version is `expected` (0: the session must not be stored
    /// yet) and returns the new version, `expected + 1`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`] when the stored version is not `expected` (another writer saved
    /// or deleted the session); nothing is written. [`StoreError::Unavailable`] when the store
    /// cannot be reached.
    ///
    /// ```
    /// use hpd_agent::agent::SessionState;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore, StoreError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), StoreError> {
    /// let store = MemorySessionStore::new();
    /// let state = SessionState::default();
    /// let v1 = store.save("s", &state, 0).await?;
    /// assert_eq!(v1, 1);
    /// // A writer that still believes the session is new is refused.
    /// assert!(matches!(store.save("s", &state, 0).await, Err(StoreError::Conflict { expected: 0, .. })));
    /// # Ok(())
    /// # }
    /// ```
    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError>;

    /// Deletes a session; `true` when it was stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the store cannot be reached.
    ///
    /// ```
    /// use hpd_agent::agent::SessionState;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = MemorySessionStore::new();
    /// store.save("s", &SessionState::default(), 0).await?;
    /// assert!(store.delete("s").await?);
    /// assert!(!store.delete("s").await?); // already gone
    /// # Ok(())
    /// # }
    /// ```
    async fn delete(&self, id: &str) -> Result<bool, StoreError>;

    /// The ids of the stored sessions that start with `prefix`, sorted.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the store cannot be reached.
    ///
    /// ```
    /// use hpd_agent::agent::SessionState;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = MemorySessionStore::new();
    /// for id in ["user-2/a", "user-1/b", "user-1/a"] {
    ///     store.save(id, &SessionState::default(), 0).await?;
    /// }
    /// assert_eq!(store.list("user-1/").await?, ["user-1/a", "user-1/b"]);
    /// # Ok(())
    /// # }
    /// ```
    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError>;
}

/// Why a store operation failed.
///
/// ```
/// use std::sync::Arc;
/// use hpd_agent::store::MemorySessionStore;
/// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
/// use hpd_agent::store::StoreError;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = Arc::new(MemorySessionStore::new());
/// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
/// let agent = AgentBuilder::new().with_chat_client(model).build()?;
/// // Two workers open the same conversation; the second to save loses.
/// let mut first = agent.open_session(store.clone(), "chat").await?;
/// let mut second = agent.open_session(store.clone(), "chat").await?;
/// first.run("from worker 1").await?;
/// let error = second.run("from worker 2").await.unwrap_err();
/// assert!(matches!(error, RunError::Store(StoreError::Conflict { .. })));
/// assert!(matches!(agent.open_session(store, "").await, Err(StoreError::InvalidId { .. })));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer saved (or deleted) the session after it was loaded; nothing was written.
    ///
    /// From a [`Session`](crate::Session), `unsaved` holds the turn that lost the race (see
    /// [After a conflict](crate::store#after-a-conflict)); from a bare
    /// [`SessionStore::save`] it is `None`.
    #[error(
        "session '{session}' was changed by another writer since version {expected} was loaded; nothing was written{}",
        conflict_hint(unsaved.as_deref())
    )]
    Conflict {
        /// The session id.
        session: String,
        /// The version the write expected.
        expected: u64,
        /// The messages that were not saved, when a session's save lost the race.
        unsaved: Option<Box<UnsavedTurn>>,
    },
    /// The store cannot be reached (connection refused or lost, server shutting down, timeout).
    #[error("session store {store} is unavailable: {message}")]
    Unavailable {
        /// The store, with any password removed.
        store: String,
        /// What failed.
        message: String,
    },
    /// A stored record does not decode; it was left as it is.
    #[error("stored session '{session}' is corrupt: {reason}")]
    Corrupt {
        /// The session id.
        session: String,
        /// Why it does not decode.
        reason: String,
    },
    /// The store was set up by a version of this crate with another schema.
    #[error(
        "session store {store} has schema version {found}; this build knows only version {supported}"
    )]
    UnknownSchema {
        /// The store, with any password removed.
        store: String,
        /// The schema version found.
        found: String,
        /// The schema version this build knows.
        supported: u32,
    },
    /// The session id cannot be stored.
    #[error("invalid session id '{id}': {reason}")]
    InvalidId {
        /// The id, shortened when long.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The store URL or option is invalid.
    #[error("invalid session store configuration: {0}")]
    Config(String),
    /// The store answered with an error that is neither a conflict nor an outage.
    #[error("session store {store} failed: {message}")]
    Backend {
        /// The store, with any password removed.
        store: String,
        /// The backend's message.
        message: String,
    },
    /// [`Session::save`](crate::Session::save) was called on a session that is not bound to a
    /// store.
    #[error("this session is not bound to a store; open it with Agent::open_session to persist it")]
    Unbound,
}

/// The end of a conflict's message: what the error holds and how to continue.
fn conflict_hint(unsaved: Option<&UnsavedTurn>) -> String {
    match unsaved {
        Some(turn) => format!(
            "; the error holds the {} unsaved messages of turn {}: Session::append_unsaved puts \
             them after the stored history, or Session::reload and run the message again",
            turn.messages.len(),
            turn.turn_id
        ),
        None => "; load the session again to continue".to_owned(),
    }
}

impl StoreError {
    /// A conflict of a bare save: session `id`, the `expected` version, no unsaved turn.
    pub(crate) fn conflict(id: &str, expected: u64) -> Self {
        StoreError::Conflict {
            session: id.to_owned(),
            expected,
            unsaved: None,
        }
    }

    /// The turn a [`Conflict`](Self::Conflict) handed back, if any.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(MemorySessionStore::new());
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut first = agent.open_session(store.clone(), "chat").await?;
    /// let mut second = agent.open_session(store.clone(), "chat").await?;
    /// first.run("one").await?;
    /// let Err(RunError::Store(conflict)) = second.run("two").await else { panic!("a conflict") };
    /// let turn = conflict.unsaved_turn().expect("the lost turn");
    /// assert_eq!(turn.user_message.as_deref(), Some("two"));
    /// assert_eq!(turn.messages.len(), 2); // the message and the answer "b"
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn unsaved_turn(&self) -> Option<&UnsavedTurn> {
        match self {
            StoreError::Conflict {
                unsaved: Some(turn),
                ..
            } => Some(turn),
            _ => None,
        }
    }

    /// A backend's failure: [`Unavailable`](Self::Unavailable) when the store cannot be
    /// reached, else [`Backend`](Self::Backend).
    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
    pub(crate) fn failure(unavailable: bool, store: String, message: String) -> Self {
        if unavailable {
            StoreError::Unavailable { store, message }
        } else {
            StoreError::Backend { store, message }
        }
    }
}

/// What a session had not saved when its save lost the race to another writer: carried by
/// [`StoreError::Conflict`], so nothing of the turn is lost.
///
/// The tool calls in `messages` have already run (their results are there too). See
/// [After a conflict](crate::store#after-a-conflict) for the ways to continue.
///
/// ```
/// use hpd_agent::store::UnsavedTurn;
///
/// /// What an application tells its user when a save lost the race.
/// fn report(turn: &UnsavedTurn) -> String {
///     match &turn.user_message {
///         Some(message) => format!("not saved: {message:?} ({} messages)", turn.messages.len()),
///         None => format!("not saved: the resumed turn {}", turn.turn_id),
///     }
/// }
/// # let _ = report;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnsavedTurn {
    /// The id of the latest unsaved turn, as its functions saw it
    /// ([`FunctionContext::turn_id`](crate::FunctionContext::turn_id)). Pass it to
    /// [`AgentRunConfig::with_turn_id`](crate::AgentRunConfig::with_turn_id) when running the
    /// message again, so idempotency keys repeat.
    pub turn_id: String,
    /// The user's message of the latest unsaved turn (`None` when the session was saved
    /// without a turn, by [`Session::save`](crate::Session::save)).
    pub user_message: Option<String>,
    /// Every message added since the session was last loaded or saved, in order: the user's
    /// message, tool calls with their results, the answer. When earlier saves failed too, the
    /// earlier turns come first.
    pub messages: Vec<ChatMessage>,
    /// The expanded containers after the turn.
    pub expanded: Vec<String>,
    /// Set when the turn paused for approval: its waiting calls (the last of `messages` is the
    /// assistant message that made them). See [`approval`](crate::approval).
    pub paused: Option<crate::approval::PausedTurn>,
    /// Approval decisions made since the session was last loaded or saved.
    pub approvals: Vec<crate::approval::ApprovalRecord>,
}

/// Checks a session id: non-empty, at most [`MAX_ID_LEN`] bytes, no control characters.
///
/// # Errors
///
/// [`StoreError::InvalidId`] saying what is wrong.
///
/// ```
/// use hpd_agent::store::validate_id;
///
/// assert!(validate_id("user-42/chat-7").is_ok());
/// assert_eq!(
///     validate_id("line\nbreak").unwrap_err().to_string(),
///     "invalid session id 'line\\nbreak': it contains a control character"
/// );
/// assert!(validate_id("").is_err());
/// ```
pub fn validate_id(id: &str) -> Result<(), StoreError> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.len() > MAX_ID_LEN {
        "it is longer than 512 bytes"
    } else if id.chars().any(char::is_control) {
        "it contains a control character"
    } else {
        return Ok(());
    };
    let mut shown: String = id.chars().take(64).collect();
    if shown.len() < id.len() {
        shown.push_str("...");
    }
    Err(StoreError::InvalidId {
        id: shown.escape_debug().to_string(),
        reason,
    })
}

#[derive(Serialize)]
struct RecordOut<'a> {
    format: u32,
    state: &'a SessionState,
}

#[derive(Deserialize)]
struct RecordIn {
    format: u32,
    state: serde_json::Value,
}

/// Encodes a state as a stored record (JSON with the format number).
///
/// ```
/// use hpd_agent::ChatMessage;
/// use hpd_agent::agent::SessionState;
/// use hpd_agent::store::{decode_record, encode_record};
///
/// let state = SessionState::from_history(vec![ChatMessage::user("hi")]);
/// let text = encode_record(&state);
/// assert_eq!(text, r#"{"format":1,"state":{"history":[{"role":"user","content":"hi"}]}}"#);
/// assert_eq!(decode_record("s", &text).unwrap(), state);
/// ```
#[must_use]
pub fn encode_record(state: &SessionState) -> String {
    let record = RecordOut {
        format: RECORD_FORMAT,
        state,
    };
    // Strings, vectors and derived enums only: serializing cannot fail.
    serde_json::to_string(&record).unwrap_or_else(|e| unreachable!("session state: {e}"))
}

/// Decodes a stored record of session `id`.
///
/// # Errors
///
/// [`StoreError::Corrupt`] naming the session when the text is not a record, has a format this
/// build does not know, or holds a state that does not decode (with the JSON path).
///
/// ```
/// use hpd_agent::store::StoreError;
/// use hpd_agent::store::decode_record;
///
/// let state = decode_record("s", r#"{"format":1,"state":{"history":[]}}"#)?;
/// assert!(state.history.is_empty());
/// let error = decode_record("s", r#"{"format":99,"state":{}}"#).unwrap_err();
/// assert!(matches!(error, StoreError::Corrupt { .. }));
/// # Ok::<(), StoreError>(())
/// ```
pub fn decode_record(id: &str, text: &str) -> Result<SessionState, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        session: id.to_owned(),
        reason,
    };
    let record: RecordIn =
        serde_json::from_str(text).map_err(|e| corrupt(format!("not a session record: {e}")))?;
    if record.format != RECORD_FORMAT {
        return Err(corrupt(format!(
            "record format {} is not known to this build (it knows format {RECORD_FORMAT})",
            record.format
        )));
    }
    serde_path_to_error::deserialize(record.state)
        .map_err(|e| corrupt(format!("invalid state at '{}': {}", e.path(), e.inner())))
}

/// The deadline of every call of the server and file backends unless their `with_timeout`
/// says otherwise.
///
/// ```
/// use std::time::Duration;
/// use hpd_agent::store::DEFAULT_TIMEOUT;
///
/// assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(10));
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `work` within `timeout`; past it the call is abandoned and reported as
/// [`StoreError::Unavailable`] of `store`, naming `what` was tried.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres", feature = "redis")),
    allow(dead_code)
)]
pub(crate) async fn within<T>(
    timeout: Duration,
    store: &str,
    what: &str,
    work: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(StoreError::Unavailable {
            store: store.to_owned(),
            message: format!(
                "{what} got no answer within {timeout:?} (the server may be hung or unreachable); \
                 the call was abandoned and the next call starts on a new connection"
            ),
        }),
    }
}

pub use crate::credentials::redact_url;
#[cfg_attr(
    not(any(feature = "postgres", feature = "redis")),
    allow(unused_imports)
)]
pub(crate) use crate::credentials::url_password;

/// The message of `error` with its sources (drivers often keep the cause, e.g. "connection
/// refused", in a source), with `secret` removed (drivers may echo parts of a URL).
#[cfg_attr(not(any(feature = "postgres", feature = "redis")), allow(dead_code))]
pub(crate) fn scrub(error: &dyn std::error::Error, secret: Option<&str>) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    match secret {
        Some(secret) if !secret.is_empty() => message.replace(secret, "***"),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_in_every_form() {
        assert_eq!(
            redact_url("postgresql://u:p%40ss@h/db?sslmode=disable"),
            "postgresql://u:***@h/db?sslmode=disable"
        );
        assert_eq!(redact_url("redis://h:6379/0"), "redis://h:6379/0");
        assert_eq!(redact_url("redis://user@h"), "redis://user@h");
        assert_eq!(
            redact_url("postgres://h/db?user=u&password=pw"),
            "postgres://h/db?user=u&password=***"
        );
        assert_eq!(redact_url("host=h PASSWORD=pw"), "host=h PASSWORD=***");
        // An `@` inside the password: the last `@` of the authority ends it.
        assert_eq!(redact_url("redis://:a@b@h/0"), "redis://:***@h/0");
    }

    #[test]
    fn passwords_are_found_for_scrubbing() {
        assert_eq!(url_password("postgres://u:pw@h/db"), Some("pw"));
        assert_eq!(url_password("redis://h/0"), None);
        assert_eq!(url_password("host=h password=pw"), Some("pw"));
    }

    #[test]
    fn ids_are_checked() {
        assert!(validate_id("user-42").is_ok());
        assert!(validate_id("").is_err());
        assert!(
            validate_id("a\nb")
                .unwrap_err()
                .to_string()
                .contains("control")
        );
        assert!(validate_id(&"x".repeat(513)).is_err());
    }

    #[test]
    fn unknown_formats_are_corrupt() {
        let err = decode_record("s1", r#"{"format":2,"state":{}}"#).unwrap_err();
        assert!(err.to_string().contains("'s1'"), "{err}");
        assert!(err.to_string().contains("format 2"), "{err}");
        let err =
            decode_record("s1", r#"{"format":1,"state":{"history":[{"role":"x"}]}}"#).unwrap_err();
        assert!(err.to_string().contains("history[0]"), "{err}");
    }
}
