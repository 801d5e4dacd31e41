//! Agents: [`AgentBuilder`] builds an [`Agent`]; an agent runs turns in [`Session`]s.
//!
//! A run loops: model request, resolve and execute the response's tool calls, append their
//! results, request again, until the model answers without tool calls or `max_iterations`
//! requests have been made. See the [crate docs](crate) for the collapsing rules that decide
//! which tools each request carries.
//!
//! ```
//! use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi!"), ChatResponse::text("Bye!")]);
//! let agent = AgentBuilder::new().with_instructions("Be brief.").with_chat_client(model).build()?;
//! let mut session = agent.session();
//! session.run("Hello").await?;
//! let output = session.run_with("Goodbye", AgentRunConfig::new().with_max_iterations(2)).await?;
//! assert_eq!((output.text.as_str(), session.history().len()), ("Bye!", 4));
//! # Ok(())
//! # }
//! ```

pub mod budget;
mod builder;
mod call;
mod registration;
mod run;
mod stored;
mod sub_agent;
mod tool_session;

use std::sync::Arc;

use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::chat::{ChatClient, ChatMessage, FinishReason, ModelOptions, Usage};
use crate::collapse::LiveToolset;
use crate::config::{Limits, ModelConfig, RunConfigData, ToolHarnessReference};
use crate::error::{BuildError, RunError};
use crate::harness::{DynamicHarness, ToolHarness};
use crate::middleware::Middleware;
use crate::middleware::pipeline::ScopedPipeline;
use crate::output::{Mismatch, OutputSchema};
use crate::store::{SessionStore, StoreError, UnsavedTurn};
use serde::de::DeserializeOwned;

pub use crate::events::AgentEvent;
pub use crate::session::SessionState;
pub use budget::{ApproxTokens, Summarizer, TokenEstimator};
pub use builder::AgentBuilder;
#[cfg_attr(not(feature = "mcp"), allow(unused_imports))]
pub(crate) use builder::{Connect, PendingSource};
pub use registration::HarnessOptions;
#[cfg(feature = "mcp")]
pub(crate) use tool_session::Caller;
#[cfg(feature = "mcp")]
pub(crate) use tool_session::PreparedTools;
pub use tool_session::{ToolCallOutcome, ToolSession};

use crate::events::EventHandler;
use registration::Registrations;
use stored::{Binding, new_turn_id};

/// How many model requests a run may make when nothing else is set.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient, ToolCall};
/// use hpd_agent::agent::DEFAULT_MAX_ITERATIONS;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // A model that never stops calling tools ends the run after 16 requests.
/// let model = ScriptedChatClient::with_replies(
///     (0..DEFAULT_MAX_ITERATIONS).map(|i| ChatResponse::tool_calls(vec![ToolCall::new(format!("c{i}"), "nothing", "{}")])),
/// );
/// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
/// assert!(matches!(agent.run("Loop").await, Err(RunError::MaxIterations(16))));
/// assert_eq!(model.requests().len(), DEFAULT_MAX_ITERATIONS);
/// # Ok(())
/// # }
/// ```
pub const DEFAULT_MAX_ITERATIONS: usize = 16;

pub(crate) struct AgentInner {
    pub(crate) name: String,
    pub(crate) instructions: String,
    pub(crate) max_iterations: usize,
    pub(crate) client: Arc<dyn ChatClient>,
    pub(crate) model_options: ModelOptions,
    pub(crate) limits: Limits,
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    pub(crate) tools: LiveToolset,
    pub(crate) handlers: Vec<EventHandler>,
    /// 0 for a top-level agent; the nesting level of a sub-agent's child.
    pub(crate) depth: usize,
    /// The context budget, when one limits requests.
    pub(crate) budgeting: Option<budget::Budgeting>,
    /// Whether spans record messages, arguments and results (`otel` feature).
    pub(crate) trace_content: bool,
    /// The schema every run's final answer must match, when the agent has one.
    pub(crate) output: Option<OutputSchema>,
    /// How many times a mismatching answer is sent back (`None`: the default).
    pub(crate) output_retries: Option<usize>,
    /// Who answers its functions' asks (sampling, elicitation, roots) in its runs.
    pub(crate) asks: Arc<crate::tool::Handlers>,
}

/// The check of a typed run: whether the checked answer deserializes into the Rust type.
pub(crate) type TypedCheck = fn(&serde_json::Value) -> Result<(), Mismatch>;

fn typed_check<T: DeserializeOwned>(value: &serde_json::Value) -> Result<(), Mismatch> {
    deserialize_answer::<T>(value.clone()).map(drop)
}

fn deserialize_answer<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Mismatch> {
    serde_path_to_error::deserialize::<_, T>(value)
        .map_err(|e| Mismatch::from_serde(e.path(), e.inner().to_string()))
}

/// An agent: instructions, registered tools, middleware and a chat client.
///
/// Cheap to clone (one `Arc`), `Send + Sync`, and usable from many tasks at once: each run has
/// its own [`Session`] state.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([ChatResponse::text("one"), ChatResponse::text("two")]);
/// let agent = AgentBuilder::new().with_name("helper").with_chat_client(model).build()?;
/// // Clones share everything; each run or session has its own conversation.
/// let (a, b) = (agent.clone(), agent.clone());
/// let first = tokio::spawn(async move { a.run("first").await });
/// let second = b.run("second").await?;
/// let first = first.await??;
/// let mut answers = [first.text, second.text];
/// answers.sort();
/// assert_eq!(answers, ["one", "two"]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.inner.name)
            .field("harnesses", &self.harness_names())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts a builder.
    ///
    /// ```
    /// use hpd_agent::{Agent, ScriptedChatClient};
    ///
    /// let agent = Agent::builder().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.name(), "");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn builder() -> AgentBuilder {
        AgentBuilder::new()
    }

    /// The agent's name.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_name("support").with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.name(), "support");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The caps on tool results, tool arguments and concurrent calls this agent applies.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    /// use hpd_agent::config::Limits;
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.limits(), Limits::default());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The registered harness names, in registration order.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "A tool", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Files").with_tool(tool("read")).build()?)
    ///     .with_harness(HarnessBuilder::new("Mail").with_collapse("Mail").with_tool(tool("send")).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.harness_names(), ["Files", "Mail"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn harness_names(&self) -> Vec<String> {
        self.inner
            .tools
            .current()
            .groups()
            .iter()
            .map(|g| g.name.to_string())
            .collect()
    }

    /// The names of the tools the first request of a fresh session would carry (with the tool
    /// lists as they are now).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "A tool", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Files").with_tool(tool("read")).build()?)
    ///     .with_harness(HarnessBuilder::new("Mail").with_collapse("Mail").with_tool(tool("send")).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// // Plain functions first, then containers.
    /// assert_eq!(agent.initial_tool_names(), ["read", "Mail", "call_function"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn initial_tool_names(&self) -> Vec<String> {
        self.inner
            .tools
            .current()
            .visible(&[])
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// A new, empty session.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi Ada."), ChatResponse::text("You are Ada.")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let mut session = agent.session();
    /// session.run("I am Ada").await?;
    /// session.run("Who am I?").await?;
    /// // The second request carried the whole conversation.
    /// assert_eq!(model.requests()[1].messages.len(), 3);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn session(&self) -> Session {
        Session {
            agent: self.clone(),
            state: SessionState::default(),
            pipelines: Vec::new(),
            store: None,
            known_prompt: None,
            dropped: 0,
        }
    }

    /// A session resumed from stored state. Scoped middleware is created afresh.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::agent::SessionState;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Welcome back.")]))
    ///     .build()?;
    /// let state = SessionState::from_history(vec![ChatMessage::user("Hello")]);
    /// let mut session = agent.resume(state);
    /// session.run("I'm back").await?;
    /// assert_eq!(session.history().len(), 3);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn resume(&self, state: SessionState) -> Session {
        Session {
            agent: self.clone(),
            state,
            pipelines: Vec::new(),
            store: None,
            known_prompt: None,
            dropped: 0,
        }
    }

    /// Opens session `id` of `store`: loads it, or starts it empty when it is not stored, and
    /// binds it to the store, so every [`run`](Session::run) saves it at the end of the turn.
    /// See [`store`](crate::store) for the backends and what happens when two workers answer
    /// one conversation at once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(MemorySessionStore::new());
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hello!")]))
    ///     .build()?;
    /// let mut session = agent.open_session(store.clone(), "user-42").await?;
    /// assert!(session.history().is_empty());
    /// session.run("Hi").await?;
    /// assert_eq!(session.stored_version(), Some(1));
    /// let reopened = agent.open_session(store, "user-42").await?;
    /// assert_eq!(reopened.history(), session.history());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError`]: the store is unavailable, the stored record is
    /// corrupt (nothing is overwritten), or the id is invalid.
    pub async fn open_session(
        &self,
        store: Arc<dyn SessionStore>,
        id: impl Into<String>,
    ) -> Result<Session, StoreError> {
        let id = id.into();
        crate::store::validate_id(&id)?;
        let (state, version) = match store.load(&id).await? {
            Some(stored) => (stored.state, stored.version),
            None => (SessionState::default(), 0),
        };
        let saved_len = state.history.len();
        let saved_approvals = state.approvals.len();
        Ok(Session {
            agent: self.clone(),
            state,
            pipelines: Vec::new(),
            store: Some(Binding::loaded(
                store,
                id,
                version,
                saved_len,
                saved_approvals,
            )),
            known_prompt: None,
            dropped: 0,
        })
    }

    /// Runs one turn in a fresh session.
    ///
    /// # Errors
    ///
    /// See [`Session::run`].
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("4")]))
    ///     .build()?;
    /// let output = agent.run("2 + 2?").await?;
    /// assert_eq!((output.text.as_str(), output.iterations), ("4", 1));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run(&self, message: impl Into<String>) -> Result<RunOutput, RunError> {
        self.session().run(message).await
    }

    /// Runs one turn in a fresh session whose final answer is a `T`: see
    /// [`Session::run_typed`].
    ///
    /// # Errors
    ///
    /// As [`Session::run_typed`].
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Capital {
    ///     city: String,
    ///     country: String,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text(r#"{"city": "Paris", "country": "France"}"#)]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let capital: Capital = agent.run_typed("Capital of France?").await?;
    /// assert_eq!(capital, Capital { city: "Paris".into(), country: "France".into() });
    /// // The request carried the schema of `Capital`.
    /// assert_eq!(model.requests()[0].output.as_ref().unwrap().name(), "Capital");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_typed<T: DeserializeOwned + schemars::JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<T, RunError> {
        self.session().run_typed(message).await
    }
}

/// The result of a successful typed run ([`Session::run_typed_with`]): the answer and the run
/// around it.
///
/// ```
/// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
/// use hpd_agent::agent::TypedOutput;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([ChatResponse::text("[1, 2, 3]")]);
/// let agent = AgentBuilder::new().with_chat_client(model).build()?;
/// let output: TypedOutput<Vec<u32>> = agent.session().run_typed_with("Three numbers", AgentRunConfig::new()).await?;
/// assert_eq!(output.value, [1, 2, 3]);
/// assert_eq!(output.output.text, "[1, 2, 3]");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TypedOutput<T> {
    /// The answer.
    pub value: T,
    /// The run: the answer's text, its JSON ([`RunOutput::value`]), usage, iterations.
    pub output: RunOutput,
}

impl<T> TypedOutput<T> {
    /// The answer, without the run.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("true")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let yes = agent.session().run_typed_with::<bool>("Is water wet?", AgentRunConfig::new()).await?.into_value();
    /// assert!(yes);
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_value(self) -> T {
        self.value
    }
}

/// A conversation with an agent: history and expansion state kept across turns.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new()
///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hello!")]))
///     .build()?;
/// let mut session = agent.session();
/// session.run("Hi").await?;
/// assert_eq!(session.history()[0], ChatMessage::user("Hi"));
/// let state = session.into_state(); // serializable, see `Agent::resume`
/// assert_eq!(state.history.len(), 2);
/// # Ok(())
/// # }
/// ```
pub struct Session {
    agent: Agent,
    state: SessionState,
    /// Scoped pipelines kept across turns (only with `keep_expansions_across_turns`).
    pipelines: Vec<Arc<ScopedPipeline>>,
    /// Where the session is saved after each turn ([`Agent::open_session`]).
    store: Option<Binding>,
    /// The prompt tokens the provider reported for the latest request, for the budget.
    known_prompt: Option<budget::KnownPrompt>,
    /// Messages removed from the start of the history by the budget (`drop_trimmed`) during
    /// the current turn.
    pub(crate) dropped: usize,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("state", &self.state)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// The result of a successful run.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
/// use hpd_agent::chat::{FinishReason, Usage};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let usage = Usage::new(12, 3);
/// let reply = ChatResponse::text("Once upon a").with_usage(usage).with_finish_reason(FinishReason::Length);
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::with_replies([reply])).build()?;
/// let output = agent.run("Tell a story").await?;
/// assert_eq!(output.text, "Once upon a");
/// assert_eq!(output.usage.output_tokens, 3);
/// assert_eq!(output.iterations, 1);
/// assert!(output.finish_reason.is_truncated()); // cut off at the token limit
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutput {
    /// The model's final text.
    pub text: String,
    /// Token usage of the turn.
    pub usage: Usage,
    /// How many model requests the turn made.
    pub iterations: usize,
    /// Why the model stopped its final reply. [`FinishReason::Length`] means `text` was cut
    /// off at the output token limit
    /// ([`ModelOptions::max_output_tokens`](crate::chat::ModelOptions::max_output_tokens)); the run
    /// also reports it as [`AgentEvent::ResponseIncomplete`].
    pub finish_reason: FinishReason,
    /// The final answer as checked JSON, when the run had an output schema (a typed run, or
    /// an agent or run config with [`with_output_schema`](AgentRunConfig::with_output_schema));
    /// `None` otherwise.
    pub value: Option<serde_json::Value>,
    /// Empty when the model answered. Otherwise the run *paused*: the model's latest response
    /// called functions that need a person's approval, these calls wait (in call order), the
    /// other calls of that response ran, and `text` is the text that came with the calls
    /// (often empty). Resume with [`Session::decide`]; see [`approval`](crate::approval).
    pub pending_approvals: Vec<crate::approval::PendingApproval>,
    /// Empty unless the run paused because functions asked the user something and the
    /// elicitation handler deferred the questions
    /// ([`AskError::Deferred`](crate::tool::AskError::Deferred)): these calls wait for the
    /// answers (in call order). Answer with [`Session::decide`] and
    /// [`Approvals::answer`](crate::approval::Approvals::answer); see
    /// [deferred questions](crate::approval#deferred-questions).
    pub pending_elicitations: Vec<crate::approval::PendingElicitation>,
}

impl RunOutput {
    /// Whether the run paused for approval or for the answer to a deferred question instead
    /// of answering ([`pending_approvals`](Self::pending_approvals) or
    /// [`pending_elicitations`](Self::pending_elicitations) is not empty).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")])).build()?;
    /// assert!(!agent.run("Hello").await?.is_paused());
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn is_paused(&self) -> bool {
        !self.pending_approvals.is_empty() || !self.pending_elicitations.is_empty()
    }
}

impl Session {
    /// Runs one turn: sends `message`, lets the model call tools, returns its final answer.
    ///
    /// # Errors
    ///
    /// [`RunError`] when the provider fails, the run is cancelled, a middleware hook fails, or
    /// `max_iterations` is reached. The history stays valid (every tool call has a result) and
    /// the session can run again.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
    /// use hpd_agent::chat::ChatError;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut session = agent.session();
    /// assert_eq!(session.run("Hello").await?.text, "Hi");
    /// // The script is used up: the provider error ends the run, the session stays usable.
    /// let error = session.run("Again").await.unwrap_err();
    /// assert!(matches!(error, RunError::Chat(ChatError::ScriptExhausted(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run(&mut self, message: impl Into<String>) -> Result<RunOutput, RunError> {
        self.run_with(message, AgentRunConfig::new()).await
    }

    /// Runs one turn with extra settings for this run only.
    ///
    /// A session opened with [`Agent::open_session`] is saved at the end of the turn, also
    /// when the turn failed after changing the history.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); also when the run's harnesses cannot be registered, and
    /// [`RunError::Store`] when the turn ran but could not be saved: the turn stays in memory
    /// (its answer is the last message of [`history`](Self::history)) and the next run or
    /// [`save`](Self::save) saves it. When both the turn and the save fail, the turn's error
    /// is returned and [`is_saved`](Self::is_saved) tells that the save is still due.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Bonjour")]);
    /// let agent = AgentBuilder::new().with_instructions("Be brief.").with_chat_client(model.clone()).build()?;
    /// let run = AgentRunConfig::new().with_additional_instructions("Answer in French.");
    /// agent.session().run_with("Hello", run).await?;
    /// assert_eq!(model.requests()[0].instructions, "Be brief.\n\nAnswer in French.");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_with(
        &mut self,
        message: impl Into<String>,
        config: AgentRunConfig,
    ) -> Result<RunOutput, RunError> {
        use tracing::Instrument as _;
        let message = message.into();
        let mut config = config;
        let turn_id = config.turn_id.get_or_insert_with(new_turn_id).clone();
        let span = self.turn_span(&turn_id, &message);
        if let Some(binding) = self.store.as_mut() {
            binding.last_turn = Some((turn_id, message.clone()));
        }
        self.bound_turn(run::Start::Message(message), config, &span)
            .instrument(span.clone())
            .await
    }

    /// The `turn` span of a turn (`invoke_agent` with the `otel` feature).
    fn turn_span(&self, turn_id: &str, message: &str) -> tracing::Span {
        let agent = &self.agent.inner;
        crate::telemetry::turn_span(
            &agent.name,
            agent.client.model_info(),
            &self.turn_trace(),
            turn_id,
            message,
        )
    }

    /// What the spans of this session's turns share.
    fn turn_trace(&self) -> crate::telemetry::TurnTrace {
        crate::telemetry::TurnTrace {
            conversation: self.id().map(str::to_owned),
            content: self.agent.inner.trace_content,
        }
    }

    /// Runs a turn of `start` and saves the session when it is bound to a store.
    async fn bound_turn(
        &mut self,
        start: run::Start,
        config: AgentRunConfig,
        span: &tracing::Span,
    ) -> Result<RunOutput, RunError> {
        let agent = Arc::clone(&self.agent.inner);
        let before = self.change_mark();
        let trimmed_before = (self.state.trimmed, self.state.summary.clone());
        self.dropped = 0;
        let trace = self.turn_trace();
        let outcome = run::run_turn(&agent, self, start, config, trace).await;
        let changed = before != self.change_mark()
            || trimmed_before != (self.state.trimmed, self.state.summary.clone())
            || self.dropped > 0;
        if let Some(binding) = self.store.as_mut() {
            binding.saved_len = binding.saved_len.saturating_sub(self.dropped);
        }
        let outcome = match self.store.as_mut() {
            Some(binding) => binding.after_turn(&self.state, changed, outcome).await,
            None => outcome,
        };
        crate::telemetry::record_turn_end(
            span,
            outcome.as_ref().map(|output| output.text.as_str()),
            agent.trace_content,
        );
        outcome
    }

    /// What a turn changes when it changes the session (besides the budget's trimming). A
    /// paused turn is compared whole: a resumed call whose next question is deferred pauses
    /// the turn anew with the same history.
    fn change_mark(
        &self,
    ) -> (
        usize,
        Vec<String>,
        Option<crate::approval::PausedTurn>,
        usize,
    ) {
        (
            self.state.history.len(),
            self.state.expanded.clone(),
            self.state.paused.clone(),
            self.state.approvals.len(),
        )
    }

    /// Resumes a paused session with a decision for each waiting call
    /// ([`pending_approvals`](Self::pending_approvals)): approved calls run (with edited
    /// arguments where given), denied calls get a result that says so, every call of the
    /// paused response is answered in call order, and the turn goes on until the model
    /// answers, or pauses again. See [`approval`](crate::approval) for the texts and choices.
    ///
    /// A session opened with [`Agent::open_session`] is saved at the end, as after
    /// [`run`](Self::run).
    ///
    /// # Errors
    ///
    /// [`RunError::Approval`] before anything runs (nothing changes): the session is not
    /// paused, a waiting call has no decision, an id matches no waiting call or has two
    /// decisions, edited arguments are not a JSON object, or a waiting call's function is not
    /// registered for this agent. Otherwise as [`run`](Self::run).
    ///
    /// ```
    /// use hpd_agent::approval::Approvals;
    /// use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let send = Tool::new("send", "Sends a mail", json!({"type": "object"}), |_, _| async { ToolResult::ok("sent") })
    ///     .with_approval_required();
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "send", r#"{"to": "all@example.com"}"#)]),
    ///     ChatResponse::text("I did not send it."),
    /// ]);
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Mail").with_tool(send).build()?)
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// let mut session = agent.session();
    /// session.run("Mail everyone").await?;
    /// assert_eq!(session.pending_approvals().len(), 1);
    /// let output = session.decide(Approvals::new().deny("c1", "not to everyone")).await?;
    /// assert_eq!(output.text, "I did not send it.");
    /// let requests = model.requests();
    /// let (text, is_error) = requests[1].tool_result("c1").unwrap();
    /// assert_eq!((text, is_error), ("Function 'send' was denied by the user: not to everyone", true));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn decide(
        &mut self,
        approvals: crate::approval::Approvals,
    ) -> Result<RunOutput, RunError> {
        self.decide_with(approvals, AgentRunConfig::new()).await
    }

    /// [`decide`](Self::decide) with extra settings for the resumed run (give the harnesses
    /// the paused run added, if any; the turn id is the paused turn's).
    ///
    /// # Errors
    ///
    /// As [`decide`](Self::decide).
    ///
    /// ```
    /// use hpd_agent::approval::Approvals;
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let not_paused = agent.session().decide_with(Approvals::new(), AgentRunConfig::new().with_max_iterations(4)).await;
    /// assert!(matches!(not_paused, Err(RunError::Approval(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn decide_with(
        &mut self,
        approvals: crate::approval::Approvals,
        config: AgentRunConfig,
    ) -> Result<RunOutput, RunError> {
        use tracing::Instrument as _;
        let mut config = config;
        let span = match &self.state.paused {
            Some(paused) => self.turn_span(paused.turn_id(), paused.user_message()),
            None => self.turn_span(config.turn_id.as_deref().unwrap_or_default(), ""),
        };
        if let Some(paused) = &self.state.paused {
            config.turn_id = Some(paused.turn_id().to_owned());
            if let Some(binding) = self.store.as_mut() {
                binding.last_turn = Some((
                    paused.turn_id().to_owned(),
                    paused.user_message().to_owned(),
                ));
            }
        }
        self.bound_turn(run::Start::Resume(approvals), config, &span)
            .instrument(span.clone())
            .await
    }

    /// The calls waiting for approval, in call order; empty unless the session is paused (see
    /// [`decide`](Self::decide)).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert!(agent.session().pending_approvals().is_empty());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn pending_approvals(&self) -> &[crate::approval::PendingApproval] {
        self.state
            .paused
            .as_ref()
            .map_or(&[], |paused| paused.pending())
    }

    /// The calls whose deferred questions wait for an answer, in call order; empty unless the
    /// session is paused for them (see
    /// [deferred questions](crate::approval#deferred-questions)).
    ///
    /// ```
    /// # let agent = hpd_agent::AgentBuilder::new().with_chat_client(hpd_agent::ScriptedChatClient::new()).build()?;
    /// assert!(agent.session().pending_elicitations().is_empty());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn pending_elicitations(&self) -> &[crate::approval::PendingElicitation] {
        self.state
            .paused
            .as_ref()
            .map_or(&[], |paused| paused.elicitations())
    }

    /// Saves the session to its store now: retries a save that failed at the end of a turn.
    /// Does nothing when everything is saved.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unbound`] when the session was not opened with
    /// [`Agent::open_session`]; [`StoreError::Conflict`] when another writer saved the session
    /// since it was loaded (it carries the unsaved messages: see
    /// [`append_unsaved`](Self::append_unsaved)); [`StoreError::Unavailable`]
    /// when the store cannot be reached (the session stays as it is; try again later).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    /// use hpd_agent::store::StoreError;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// // A session without a store has nothing to save to.
    /// assert!(matches!(agent.session().save().await, Err(StoreError::Unbound)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn save(&mut self) -> Result<(), StoreError> {
        let binding = self.store.as_mut().ok_or(StoreError::Unbound)?;
        if !binding.pending {
            return Ok(());
        }
        binding.save(&self.state).await
    }

    /// Replaces the session with the one stored now (another writer's turns included),
    /// dropping whatever was not saved. The way on after a
    /// [`Conflict`](StoreError::Conflict) when the message is to be run again; see
    /// [After a conflict](crate::store#after-a-conflict).
    ///
    /// # Errors
    ///
    /// [`StoreError::Unbound`] for a session without a store; what
    /// [`SessionStore::load`] reports.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(MemorySessionStore::new());
    /// let model = ScriptedChatClient::with_replies(["a", "b", "c"].map(ChatResponse::text));
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut one = agent.open_session(store.clone(), "chat").await?;
    /// let mut two = agent.open_session(store.clone(), "chat").await?;
    /// one.run("first").await?;
    /// let Err(RunError::Store(conflict)) = two.run("second").await else { panic!("a conflict") };
    /// let turn = conflict.unsaved_turn().expect("the lost turn").clone();
    /// two.reload().await?;
    /// assert_eq!(two.history().len(), 2); // the other writer's turn
    /// let again = AgentRunConfig::new().with_turn_id(turn.turn_id);
    /// two.run_with(turn.user_message.unwrap_or_default(), again).await?;
    /// assert_eq!(two.stored_version(), Some(2));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn reload(&mut self) -> Result<(), StoreError> {
        let binding = self.store.as_mut().ok_or(StoreError::Unbound)?;
        let (state, version) = match binding.store.load(&binding.id).await? {
            Some(stored) => (stored.state, stored.version),
            None => (SessionState::default(), 0),
        };
        binding.version = version;
        binding.pending = false;
        binding.saved_len = state.history.len();
        binding.saved_approvals = state.approvals.len();
        self.state = state;
        self.pipelines = Vec::new();
        self.known_prompt = None;
        Ok(())
    }

    /// Keeps a turn that lost the race: reloads the stored session, appends the unsaved
    /// messages after it and saves. No tool runs again. This is the documented way on after a
    /// [`Conflict`](StoreError::Conflict); see
    /// [After a conflict](crate::store#after-a-conflict). A turn that paused for approval stays
    /// paused, with its waiting calls, and its approval decisions are kept. (When the other
    /// writer's stored session is itself paused, decide it with [`decide`](Self::decide) after
    /// [`reload`](Self::reload) and run the message again instead: two paused turns cannot
    /// follow each other.)
    ///
    /// # Errors
    ///
    /// As [`reload`](Self::reload) and [`save`](Self::save); a conflict again (a third writer
    /// was faster) carries the same messages, so the call can be repeated with it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    /// use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};
    /// use hpd_agent::store::StoreError;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = Arc::new(MemorySessionStore::new());
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut one = agent.open_session(store.clone(), "chat").await?;
    /// let mut two = agent.open_session(store.clone(), "chat").await?;
    /// one.run("first").await?;
    /// if let Err(RunError::Store(StoreError::Conflict { unsaved: Some(turn), .. })) = two.run("second").await {
    ///     two.append_unsaved(&turn).await?;
    /// }
    /// let stored = store.load("chat").await?.unwrap();
    /// assert_eq!(stored.state.history.len(), 4);
    /// assert!(two.is_saved());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn append_unsaved(&mut self, turn: &UnsavedTurn) -> Result<(), StoreError> {
        self.reload().await?;
        self.state.history.extend(turn.messages.iter().cloned());
        // A turn that paused for approval stays paused after the other writer's turns.
        if turn.paused.is_some() {
            self.state.paused.clone_from(&turn.paused);
        }
        self.state.approvals.extend(turn.approvals.iter().cloned());
        let binding = self.store.as_mut().ok_or(StoreError::Unbound)?;
        binding.last_turn = turn
            .user_message
            .clone()
            .map(|message| (turn.turn_id.clone(), message));
        binding.save(&self.state).await
    }

    /// Whether the in-memory session is saved: `true` for sessions without a store, `false`
    /// after a save that failed and has not been retried successfully.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
    ///     .build()?;
    /// assert!(agent.session().is_saved()); // no store: nothing due
    /// let mut session = agent.open_session(Arc::new(MemorySessionStore::new()), "s1").await?;
    /// session.run("Hello").await?;
    /// assert!(session.is_saved());
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn is_saved(&self) -> bool {
        self.store.as_ref().is_none_or(|b| !b.pending)
    }

    /// The id the session is stored under, for sessions opened with [`Agent::open_session`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// assert_eq!(agent.session().id(), None);
    /// let session = agent.open_session(Arc::new(MemorySessionStore::new()), "user-7").await?;
    /// assert_eq!(session.id(), Some("user-7"));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn id(&self) -> Option<&str> {
        self.store.as_ref().map(|b| b.id.as_str())
    }

    /// The version of the stored session this one last loaded or saved (0: not stored yet),
    /// for sessions opened with [`Agent::open_session`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::MemorySessionStore;
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut session = agent.open_session(Arc::new(MemorySessionStore::new()), "s").await?;
    /// assert_eq!(session.stored_version(), Some(0)); // not stored yet
    /// session.run("one").await?;
    /// session.run("two").await?;
    /// assert_eq!(session.stored_version(), Some(2)); // one save per turn
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn stored_version(&self) -> Option<u64> {
        self.store.as_ref().map(|b| b.version)
    }

    /// Runs one turn whose final answer is a `T`: every request carries `T`'s JSON Schema in
    /// the provider's structured output field, tools still run before the answer, and the
    /// answer is checked against the schema and deserialized into `T`. A mismatching answer is
    /// sent back to the model with the error (once by default, see
    /// [`AgentRunConfig::with_output_retries`]). The details per provider are in
    /// [`output`](crate::output).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`RunError::Output`] when the answer still does not match after
    /// the retries (it carries the raw text and the JSON path of the first mismatch) or the
    /// model refused; [`RunError::OutputSchema`] when `T`'s schema is not a valid JSON Schema.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
    ///
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict {
    ///     /// Whether the claim holds.
    ///     holds: bool,
    ///     reason: String,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::text(r#"{"holds": "yes"}"#),
    ///     ChatResponse::text(r#"{"holds": true, "reason": "2 + 2 = 4"}"#),
    /// ]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let mut session = agent.session();
    /// let verdict: Verdict = session.run_typed("Is 2 + 2 = 4?").await?;
    /// assert!(verdict.holds && verdict.reason == "2 + 2 = 4");
    /// // The first answer was sent back with what is wrong in it.
    /// let ChatMessage::User { content } = &model.requests()[1].messages[2] else { panic!() };
    /// assert!(content.starts_with("Your answer does not match the required JSON schema: at "), "{content}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_typed<T: DeserializeOwned + schemars::JsonSchema>(
        &mut self,
        message: impl Into<String>,
    ) -> Result<T, RunError> {
        self.run_typed_with(message, AgentRunConfig::new())
            .await
            .map(TypedOutput::into_value)
    }

    /// [`run_typed`](Self::run_typed) with extra settings for this run only; returns the
    /// answer with the run's usage and text. `T`'s schema replaces an output schema of the
    /// agent or of `config`; `config`'s retries apply.
    ///
    /// # Errors
    ///
    /// As [`run_typed`](Self::run_typed) and [`run_with`](Self::run_with).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("seven")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// // No retry: the first mismatch fails the run.
    /// let run = AgentRunConfig::new().with_output_retries(0);
    /// let Err(RunError::Output(error)) = agent.session().run_typed_with::<u8>("A number", run).await else { panic!() };
    /// assert_eq!((error.text.as_str(), error.path.as_str(), error.attempts), ("seven", "", 1));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_typed_with<T: DeserializeOwned + schemars::JsonSchema>(
        &mut self,
        message: impl Into<String>,
        config: AgentRunConfig,
    ) -> Result<TypedOutput<T>, RunError> {
        let config = config.typed::<T>()?;
        let output = self.run_with(message, config).await?;
        typed_output(output)
    }

    /// [`run_typed_with`](Self::run_typed_with), streaming the run's [`AgentEvent`]s as
    /// [`run_streamed`](Self::run_streamed) does.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use hpd_agent::{AgentBuilder, AgentEvent, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("many"), ChatResponse::text("[\"a\", \"b\"]")]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let mut session = agent.session();
    /// let (events, run) = session.run_typed_streamed::<Vec<String>>("Two letters", AgentRunConfig::new());
    /// let (events, output) = tokio::join!(events.collect::<Vec<_>>(), run);
    /// assert_eq!(output?.value, ["a", "b"]);
    /// assert!(events.iter().any(|e| matches!(e, AgentEvent::OutputRejected { retrying: true, .. })));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The future fails as [`run_typed_with`](Self::run_typed_with) does; the stream never
    /// fails.
    pub fn run_typed_streamed<T: DeserializeOwned + schemars::JsonSchema>(
        &mut self,
        message: impl Into<String>,
        config: AgentRunConfig,
    ) -> (
        impl Stream<Item = AgentEvent> + Send + 'static,
        impl Future<Output = Result<TypedOutput<T>, RunError>> + Send + '_,
    ) {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        let config = config.on_event(move |event| {
            let _ = sender.unbounded_send(event.clone());
        });
        let message = message.into();
        let run = async move {
            let config = config.typed::<T>()?;
            typed_output(self.run_with(message, config).await?)
        };
        (receiver, run)
    }

    /// Runs one turn and streams its [`AgentEvent`]s. Poll the stream and the returned future
    /// together (e.g. with `tokio::join!`); the stream ends when the run does.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use hpd_agent::{AgentBuilder, AgentEvent, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
    ///     .build()?;
    /// let mut session = agent.session();
    /// let (events, run) = session.run_streamed("Hello", AgentRunConfig::new());
    /// let (events, output) = tokio::join!(events.collect::<Vec<_>>(), run);
    /// assert_eq!(output?.text, "Hi");
    /// assert!(matches!(events.last(), Some(AgentEvent::TurnFinished { failed: false, .. })));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The future fails as [`run_with`](Self::run_with) does; the stream itself never fails.
    pub fn run_streamed(
        &mut self,
        message: impl Into<String>,
        config: AgentRunConfig,
    ) -> (
        impl Stream<Item = AgentEvent> + Send + 'static,
        impl Future<Output = Result<RunOutput, RunError>> + Send + '_,
    ) {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        let config = config.on_event(move |event| {
            let _ = sender.unbounded_send(event.clone());
        });
        let run = self.run_with(message.into(), config);
        (receiver, run)
    }

    /// The conversation so far.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hello!")]))
    ///     .build()?;
    /// let mut session = agent.session();
    /// session.run("Hi").await?;
    /// assert_eq!(session.history()[0], ChatMessage::user("Hi"));
    /// assert!(matches!(&session.history()[1], ChatMessage::Assistant { content: Some(text), .. } if text == "Hello!"));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn history(&self) -> &[ChatMessage] {
        &self.state.history
    }

    /// The serializable state.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::agent::SessionState;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hello!")]))
    ///     .build()?;
    /// let mut session = agent.session();
    /// session.run("Hi").await?;
    /// let json = serde_json::to_string(session.state())?;
    /// let back: SessionState = serde_json::from_str(&json)?;
    /// assert_eq!(&back, session.state());
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// Consumes the session, returning its state.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let state = agent.session().into_state();
    /// assert!(state.history.is_empty() && state.expanded.is_empty());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn into_state(self) -> SessionState {
        self.state
    }

    /// The agent this session talks to.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_name("a1").with_chat_client(ScriptedChatClient::new()).build()?;
    /// let session = agent.session();
    /// assert_eq!(session.agent().name(), "a1");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn agent(&self) -> &Agent {
        &self.agent
    }
}

/// Settings for one run: extra harnesses, additional instructions, `max_iterations`, a
/// cancellation token and event callbacks.
///
/// ```
/// use hpd_agent::AgentRunConfig;
///
/// let run = AgentRunConfig::from_json(r#"{"AdditionalInstructions": "Answer in French.", "max_iterations": 4}"#)
///     .unwrap();
/// # drop(run);
/// assert!(AgentRunConfig::from_json(r#"{"collapsing": {"enabled": false}}"#)
///     .unwrap_err()
///     .to_string()
///     .contains("collapsing belongs to AgentConfig, not AgentRunConfig"));
/// ```
#[derive(Default)]
#[must_use]
pub struct AgentRunConfig {
    registrations: Registrations,
    additional_instructions: Option<String>,
    max_iterations: Option<usize>,
    model_options: Option<ModelOptions>,
    cancellation: Option<CancellationToken>,
    handlers: Vec<EventHandler>,
    turn_id: Option<String>,
    output: Option<OutputSchema>,
    output_retries: Option<usize>,
    /// The Rust type's check of a typed run.
    typed: Option<TypedCheck>,
}

/// A typed run's answer as `T` (it passed `T`'s check in the run).
fn typed_output<T: DeserializeOwned + schemars::JsonSchema>(
    output: RunOutput,
) -> Result<TypedOutput<T>, RunError> {
    if output.is_paused() {
        let paused = Mismatch {
            path: String::new(),
            message: format!(
                "the run paused for the approval of {} call(s) (and the answers to {} deferred \
                 question(s)) before the answer; decide them with Session::decide_with (give it \
                 AgentRunConfig::with_output_schema to check the answer)",
                output.pending_approvals.len(),
                output.pending_elicitations.len()
            ),
        };
        return Err(RunError::Output(crate::output::OutputError::from_mismatch(
            &T::schema_name(),
            &output.text,
            paused,
        )));
    }
    let value = output.value.clone().unwrap_or(serde_json::Value::Null);
    match deserialize_answer::<T>(value) {
        Ok(value) => Ok(TypedOutput { value, output }),
        // Unreachable after the run's own check of the same value; kept as an error, never a
        // panic.
        Err(mismatch) => Err(RunError::Output(crate::output::OutputError::from_mismatch(
            &T::schema_name(),
            &output.text,
            mismatch,
        ))),
    }
}

impl std::fmt::Debug for AgentRunConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRunConfig")
            .field("additional_instructions", &self.additional_instructions)
            .field("max_iterations", &self.max_iterations)
            .field("model_options", &self.model_options)
            .field("turn_id", &self.turn_id)
            .field("output", &self.output.as_ref().map(OutputSchema::name))
            .field("output_retries", &self.output_retries)
            .finish_non_exhaustive()
    }
}

impl AgentRunConfig {
    /// Default settings.
    ///
    /// ```
    /// use hpd_agent::{AgentRunConfig, ScriptedChatClient, AgentBuilder, ChatResponse};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("ok")]))
    ///     .build()?;
    /// // The same as `Session::run`.
    /// agent.session().run_with("Hello", AgentRunConfig::new()).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses the JSON form: `tool_harnesses`, `additional_instructions`, `max_iterations`
    /// (keys normalised like [`AgentConfig`](crate::AgentConfig)'s).
    ///
    /// # Errors
    ///
    /// Invalid JSON, unknown keys, or a `collapsing` key (collapsing belongs to the agent).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hallo")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let run = AgentRunConfig::from_json(r#"{"additional_instructions": "Answer in German.", "max_iterations": 2}"#)?;
    /// agent.session().run_with("Hello", run).await?;
    /// assert!(model.requests()[0].instructions.ends_with("Answer in German."));
    /// assert!(AgentRunConfig::from_json(r#"{"max_iterations": "two"}"#).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_json(text: &str) -> Result<Self, crate::config::ConfigError> {
        let data = RunConfigData::from_json(text)?;
        let mut config = AgentRunConfig::new();
        for reference in &data.tool_harnesses {
            config = config.with_tool_harness_reference(reference);
        }
        config.additional_instructions = data.additional_instructions;
        config.max_iterations = data.max_iterations;
        Ok(config)
    }

    /// Adds every function of `T` for this run.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct RunOnlyClock;
    ///
    /// #[tool_harness]
    /// impl RunOnlyClock {
    ///     /// The time.
    ///     #[ai_function]
    ///     fn now(&self) -> String { "12:00".into() }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let mut session = agent.session();
    /// session.run_with("What time is it?", AgentRunConfig::new().with_tool_harness::<RunOnlyClock>()).await?;
    /// session.run("And now?").await?;
    /// assert_eq!(model.requests()[0].tool_names(), ["now"]);
    /// assert!(model.requests()[1].tools.is_empty()); // only for that run
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_tool_harness<T: ToolHarness>(mut self) -> Self {
        self.registrations.add_harness::<T>();
        self
    }

    /// Adds a harness built at run time for this run. It follows the visibility and collapsing
    /// rules after the agent's own harnesses; one the agent already registers keeps the agent's
    /// registration, and a different harness of the name of one of the agent's fails the run.
    ///
    /// ```
    /// use hpd_agent::{AgentRunConfig, HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let now = Tool::new("now", "The time", json!({"type": "object"}), |_, _| async {
    ///     ToolResult::ok("12:00")
    /// });
    /// let clock = HarnessBuilder::new("Clock").with_tool(now).build()?;
    /// let run = AgentRunConfig::new().with_harness(clock);
    /// # drop(run);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_harness(mut self, harness: DynamicHarness) -> Self {
        self.registrations.add_dynamic(harness);
        self
    }

    /// Adds `T` with options for this run.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct RunOnlyUnits;
    ///
    /// #[tool_harness]
    /// impl RunOnlyUnits {
    ///     /// Metres to feet.
    ///     #[ai_function]
    ///     fn to_feet(&self, metres: f64) -> f64 { metres * 3.28084 }
    ///     /// Feet to metres.
    ///     #[ai_function]
    ///     fn to_metres(&self, feet: f64) -> f64 { feet / 3.28084 }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// let run = AgentRunConfig::new().with_tool_harness_options::<RunOnlyUnits>(|o| o.with_functions(["to_feet"]));
    /// agent.session().run_with("Convert", run).await?;
    /// assert_eq!(model.requests()[0].tool_names(), ["to_feet"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_tool_harness_options<T: ToolHarness>(
        mut self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) -> Self {
        self.registrations.add_with(options);
        self
    }

    /// Renamed to [`with_tool_harness_options`](Self::with_tool_harness_options).
    #[deprecated(since = "0.1.0", note = "renamed to `with_tool_harness_options`")]
    pub fn with_tool_harness_with<T: ToolHarness>(
        self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) -> Self {
        self.with_tool_harness_options(options)
    }

    /// Adds a harness by config reference for this run.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, RunError, ScriptedChatClient};
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("ok")]))
    ///     .build()?;
    /// // References are resolved when the run starts; an unknown harness fails the run.
    /// let run = AgentRunConfig::new().with_tool_harness_reference(&ToolHarnessReference::new("NoSuchHarness"));
    /// assert!(matches!(agent.session().run_with("Hi", run).await, Err(RunError::Build(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_tool_harness_reference(mut self, reference: &ToolHarnessReference) -> Self {
        self.registrations.add_reference(reference);
        self
    }

    /// Appends instructions (after a blank line) for this run.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
    /// let agent = AgentBuilder::new().with_instructions("Be brief.").with_chat_client(model.clone()).build()?;
    /// let run = AgentRunConfig::new().with_additional_instructions("The user is Ada.");
    /// agent.session().run_with("Hi", run).await?;
    /// assert_eq!(model.requests()[0].instructions, "Be brief.\n\nThe user is Ada.");
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_additional_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.additional_instructions = Some(instructions.into());
        self
    }

    /// Overrides the agent's `max_iterations` for this run.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, RunError, ScriptedChatClient, ToolCall};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "missing", "{}")]),
    ///     ChatResponse::text("never reached"),
    /// ]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let run = AgentRunConfig::new().with_max_iterations(1);
    /// assert!(matches!(agent.session().run_with("Hi", run).await, Err(RunError::MaxIterations(1))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Overrides model options for this run: every field `options` sets replaces the agent's,
    /// `extra` is merged key by key (see [`ModelOptions::merged_with`]). Calling it again merges
    /// over the earlier call.
    ///
    /// ```
    /// use hpd_agent::AgentRunConfig;
    /// use hpd_agent::chat::{ModelOptions, ToolChoice};
    ///
    /// let run = AgentRunConfig::new()
    ///     .with_model_options(ModelOptions::new().with_temperature(0.0).with_tool_choice(ToolChoice::Required));
    /// # drop(run);
    /// ```
    pub fn with_model_options(mut self, options: ModelOptions) -> Self {
        self.model_options = Some(match self.model_options.take() {
            Some(earlier) => earlier.merged_with(&options),
            None => options,
        });
        self
    }

    /// Cancels the run when `token` is cancelled: the model request or the running functions
    /// are abandoned, every pending call gets `Error: run cancelled`, and the run fails with
    /// [`RunError::Cancelled`].
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, CancellationToken, ChatResponse, RunError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
    ///     .build()?;
    /// let token = CancellationToken::new();
    /// token.cancel(); // e.g. from another task when the user presses Stop
    /// let run = AgentRunConfig::new().with_cancellation(token);
    /// assert!(matches!(agent.session().run_with("Hello", run).await, Err(RunError::Cancelled)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// The id of this turn, which its functions see as
    /// [`FunctionContext::turn_id`](crate::FunctionContext::turn_id) and which goes into their
    /// [`idempotency_key`](crate::FunctionContext::idempotency_key). Default: a new random id
    /// (`turn-` and 32 hex digits). Give the id of a turn that lost a save race
    /// ([`UnsavedTurn::turn_id`](crate::store::UnsavedTurn::turn_id)) when running its message
    /// again, or an id of the application's own (the id of the inbound chat message).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let send = Tool::new("send", "Sends a mail", serde_json::json!({"type": "object"}), |_, ctx| async move {
    ///     ToolResult::ok(format!("{:?} {}", ctx.turn_id(), ctx.idempotency_key()))
    /// });
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "send", "{}")]),
    ///     ChatResponse::text("sent"),
    /// ]);
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Mail").with_tool(send).build()?)
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// agent.session().run_with("Mail Bob", AgentRunConfig::new().with_turn_id("msg-17")).await?;
    /// let requests = model.requests();
    /// let (text, _) = requests[1].tool_result("c1").unwrap();
    /// assert!(text.starts_with(r#"Some("msg-17") msg-17/send/"#), "{text}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_turn_id(mut self, turn_id: impl Into<String>) -> Self {
        self.turn_id = Some(turn_id.into());
        self
    }

    /// The schema this run's final answer must match (replacing the agent's, see
    /// [`AgentBuilder::with_output_schema`]); [`RunOutput::value`] carries the checked answer.
    /// [`Session::run_typed`] sets it from the Rust type.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::output::OutputSchema;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let schema = OutputSchema::new("tags", json!({"type": "array", "items": {"type": "string"}, "minItems": 1}))?;
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text(r#"["rust"]"#)]);
    /// let agent = AgentBuilder::new().with_chat_client(model).build()?;
    /// let output = agent.session().run_with("Tag it", AgentRunConfig::new().with_output_schema(schema)).await?;
    /// assert_eq!(output.value, Some(json!(["rust"])));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_output_schema(mut self, schema: OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// How many times this run sends a mismatching answer back to the model (default
    /// [`DEFAULT_OUTPUT_RETRIES`](crate::output::DEFAULT_OUTPUT_RETRIES), or the agent's); 0 fails at
    /// the first mismatch.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let replies = ["one", "two", "3"].map(ChatResponse::text);
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::with_replies(replies)).build()?;
    /// let run = AgentRunConfig::new().with_output_retries(2);
    /// let three = agent.session().run_typed_with::<u32>("Count", run).await?;
    /// assert_eq!((three.value, three.output.iterations), (3, 3));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_output_retries(mut self, retries: usize) -> Self {
        self.output_retries = Some(retries);
        self
    }

    /// This config for a typed run of `T`.
    fn typed<T: DeserializeOwned + schemars::JsonSchema>(mut self) -> Result<Self, RunError> {
        self.output = Some(OutputSchema::for_type::<T>()?);
        self.typed = Some(typed_check::<T>);
        Ok(self)
    }

    /// Calls `handler` with every event of this run.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use hpd_agent::{AgentBuilder, AgentEvent, AgentRunConfig, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_chat_client(ScriptedChatClient::with_replies([ChatResponse::text("Hi")]))
    ///     .build()?;
    /// let finished = Arc::new(Mutex::new(0));
    /// let count = finished.clone();
    /// let run = AgentRunConfig::new().on_event(move |event| {
    ///     if matches!(event, AgentEvent::TurnFinished { .. }) {
    ///         *count.lock().unwrap() += 1;
    ///     }
    /// });
    /// agent.session().run_with("Hello", run).await?;
    /// assert_eq!(*finished.lock().unwrap(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_event(mut self, handler: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.handlers.push(Arc::new(handler));
        self
    }
}

/// Creates a chat client from a model config. Providers (names match ASCII case-insensitively):
///
/// - `openai` (the default): [`OpenAiClient`](crate::providers::openai::OpenAiClient), OpenAI Chat Completions or
///   any compatible server; `OPENAI_API_KEY`, `OPENAI_BASE_URL`, model default `OPENAI_MODEL`.
/// - `openai_responses`: [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient), the same
///   variables.
/// - `anthropic`: [`AnthropicClient`](crate::providers::anthropic::AnthropicClient); `ANTHROPIC_API_KEY`,
///   `ANTHROPIC_BASE_URL`, model default `ANTHROPIC_MODEL`.
///
/// A `base_url` in the config replaces the base URL variable.
pub(crate) fn client_from_model(model: &ModelConfig) -> Result<Arc<dyn ChatClient>, BuildError> {
    crate::providers::client_from_config(
        model.provider.as_deref(),
        model.model.as_deref(),
        model.base_url.as_deref(),
        model.deferred_tools,
        &|name| std::env::var(name).ok(),
    )
    .map_err(BuildError::Client)
}
