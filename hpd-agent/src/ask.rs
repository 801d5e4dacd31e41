//! What a function can ask of whoever called it (sampling, elicitation, roots); documented in
//! [`tool`](crate::tool#asking-the-caller).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chat::{ChatClient, ChatMessage, ChatRequest, ModelOptions};
pub use crate::roots::Root;

/// A completion asked of the caller's model.
///
/// ```
/// use hpd_agent::tool::SamplingRequest;
///
/// let request = SamplingRequest::new("Summarise: the sky is blue.", 200)
///     .with_system_prompt("Be brief.")
///     .with_key("summary");
/// assert_eq!(request.max_tokens, 200);
/// assert_eq!(request.key.as_deref(), Some("summary"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The conversation: user and assistant messages with text (other messages are refused).
    pub messages: Vec<ChatMessage>,
    /// The system prompt, if any.
    pub system_prompt: Option<String>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// The sampling temperature, if the function cares.
    pub temperature: Option<f64>,
    /// The name of this input in a 2026-07-28 `input_required` result; `sampling-{n}` (the
    /// call's n-th ask) when `None`.
    pub key: Option<String>,
}

impl SamplingRequest {
    /// One user message, answered in at most `max_tokens` tokens.
    #[must_use]
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest::from_messages(vec![ChatMessage::user(prompt)], max_tokens)
    }

    /// A conversation of user and assistant messages.
    ///
    /// ```
    /// use hpd_agent::{ChatMessage, ChatResponse};
    /// use hpd_agent::tool::SamplingRequest;
    ///
    /// let request = SamplingRequest::from_messages(
    ///     vec![ChatMessage::user("Hi"), ChatMessage::assistant(&ChatResponse::text("Hello")), ChatMessage::user("Name a colour")],
    ///     20,
    /// );
    /// assert_eq!(request.messages.len(), 3);
    /// ```
    #[must_use]
    pub fn from_messages(messages: Vec<ChatMessage>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages,
            system_prompt: None,
            max_tokens,
            temperature: None,
            key: None,
        }
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Names this input in a 2026-07-28 `input_required` result.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// What the caller's model answered.
///
/// ```
/// use hpd_agent::tool::SamplingReply;
///
/// let reply = SamplingReply::new("Paris", "gpt-4o-mini");
/// assert_eq!((reply.text.as_str(), reply.stop_reason), ("Paris", None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingReply {
    /// The answer's text.
    pub text: String,
    /// The model that answered, as the caller names it.
    pub model: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, ...), when the caller says.
    pub stop_reason: Option<String>,
}

impl SamplingReply {
    /// An answer of `model`.
    #[must_use]
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        SamplingReply {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// Sets why the model stopped.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

/// What an elicitation asks of the caller's user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ElicitationKind {
    /// Fill in a form: a flat JSON object schema of primitive properties (strings, numbers,
    /// booleans, enums), as MCP's elicitation allows.
    Form {
        /// The schema the answer's content must match.
        schema: Value,
    },
    /// Visit a URL (a sign-in, a payment): the answer only says whether the user agreed to go;
    /// what happens there does not pass through the caller.
    Url {
        /// Where to send the user.
        url: String,
        /// The id that ties the visit to this request.
        elicitation_id: String,
    },
}

/// Input asked of the caller's user.
///
/// ```
/// use hpd_agent::tool::{Elicitation, ElicitationKind};
/// use serde_json::json;
///
/// let form = Elicitation::form(
///     "Which city?",
///     json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
/// );
/// assert!(matches!(form.kind, ElicitationKind::Form { .. }));
/// let visit = Elicitation::url("Sign in to the calendar", "https://example.com/login", "login-1");
/// assert!(matches!(visit.kind, ElicitationKind::Url { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Elicitation {
    /// What the user is told.
    pub message: String,
    /// A form or a URL.
    pub kind: ElicitationKind,
    /// The name of this input in a 2026-07-28 `input_required` result; `elicitation-{n}` (the
    /// call's n-th ask) when `None`.
    pub key: Option<String>,
}

impl Elicitation {
    /// A form: `schema` is a JSON object schema of primitive properties.
    #[must_use]
    pub fn form(message: impl Into<String>, schema: Value) -> Self {
        Elicitation {
            message: message.into(),
            kind: ElicitationKind::Form { schema },
            key: None,
        }
    }

    /// A URL to visit.
    #[must_use]
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Elicitation {
            message: message.into(),
            kind: ElicitationKind::Url {
                url: url.into(),
                elicitation_id: elicitation_id.into(),
            },
            key: None,
        }
    }

    /// Names this input in a 2026-07-28 `input_required` result.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted the form (or agreed to visit the URL).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed the request without choosing.
    Cancel,
}

/// The user's answer to an elicitation.
///
/// ```
/// use hpd_agent::tool::{ElicitAction, ElicitationAnswer};
/// use serde_json::json;
///
/// let answer = ElicitationAnswer::accept(json!({"city": "Oslo"}).as_object().unwrap().clone());
/// assert_eq!(answer.action, ElicitAction::Accept);
/// assert_eq!(answer.field("city"), Some(&json!("Oslo")));
/// assert_eq!(ElicitationAnswer::decline().field("city"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationAnswer {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's content, when the user accepted a form.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationAnswer {
    /// The user accepted, with this content (empty for a URL).
    #[must_use]
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitationAnswer {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// The user declined.
    #[must_use]
    pub fn decline() -> Self {
        ElicitationAnswer {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// The user dismissed the request.
    #[must_use]
    pub fn cancel() -> Self {
        ElicitationAnswer {
            action: ElicitAction::Cancel,
            content: None,
        }
    }

    /// One field of the accepted content.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.content.as_ref()?.get(name)
    }
}

/// The caller's roots, asked for with [`FunctionContext::roots`](crate::FunctionContext::roots).
///
/// ```
/// use hpd_agent::tool::RootsRequest;
///
/// assert_eq!(RootsRequest::new().with_key("client_roots").key.as_deref(), Some("client_roots"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RootsRequest {
    /// The name of this input in a 2026-07-28 `input_required` result; `roots-{n}` (the call's
    /// n-th ask) when `None`.
    pub key: Option<String>,
}

impl RootsRequest {
    /// The roots request.
    #[must_use]
    pub fn new() -> Self {
        RootsRequest::default()
    }

    /// Names this input in a 2026-07-28 `input_required` result.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// Why an ask got no answer.
///
/// ```
/// use hpd_agent::tool::AskError;
///
/// let error = AskError::NoHandler { what: "elicitation" };
/// assert_eq!(error.to_string(), "nobody answers elicitation here: no handler is set");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// Nobody answers this kind of ask: an agent without the handler, a call outside any run.
    #[error("nobody answers {what} here: no handler is set")]
    NoHandler {
        /// `sampling`, `elicitation` or `roots`.
        what: &'static str,
    },
    /// The MCP client did not declare the capability, so it is not asked.
    #[error("the MCP client did not declare {what}, so it cannot be asked")]
    NotDeclared {
        /// The capability (`sampling`, `elicitation (form)`, `elicitation (url)`, `roots`).
        what: &'static str,
    },
    /// The handler or a policy refused, with its reason.
    #[error("refused: {0}")]
    Refused(String),
    /// Asking failed: the model or the transport failed, the handler returned an error.
    #[error("asking failed: {0}")]
    Failed(String),
    /// The answer is not what was asked: the wrong kind, or content that does not fit the
    /// form's schema.
    #[error("the answer is invalid: {0}")]
    InvalidAnswer(String),
    /// An [`ElicitationHandler`]'s answer that means "later": the user is not there now. In
    /// an agent's own run the run then *pauses* with the question saved in the session, and
    /// the call goes on when the answer is given
    /// ([`Session::decide`](crate::Session::decide) with
    /// [`Approvals::answer`](crate::approval::Approvals::answer); see
    /// [deferred questions](crate::approval#deferred-questions)). Where nothing can wait for
    /// a later answer (a sub-agent's run, a [`ToolSession`](crate::agent::ToolSession), an MCP
    /// server's request on a session revision) the function gets this error instead.
    #[error(
        "the question was deferred to the user, and this call cannot wait for the answer (only a top-level agent's run can pause for it)"
    )]
    Deferred,
}

/// Answers the sampling asks of functions: an application's own policy or model.
///
/// ```
/// use hpd_agent::async_trait;
/// use hpd_agent::tool::{AskError, SamplingHandler, SamplingReply, SamplingRequest};
///
/// struct Canned;
///
/// #[async_trait]
/// impl SamplingHandler for Canned {
///     async fn sample(&self, request: &SamplingRequest) -> Result<SamplingReply, AskError> {
///         if request.max_tokens > 1000 {
///             return Err(AskError::Refused("too long".into()));
///         }
///         Ok(SamplingReply::new("42", "canned"))
///     }
/// }
/// # let _ = Canned;
/// ```
#[async_trait]
pub trait SamplingHandler: Send + Sync {
    /// Answers one request.
    ///
    /// # Errors
    ///
    /// Why there is no answer; the function gets it.
    async fn sample(&self, request: &SamplingRequest) -> Result<SamplingReply, AskError>;
}

/// Answers the elicitation asks of functions: the application's way of asking its user.
///
/// A handler whose user is not there now returns [`AskError::Deferred`]: an agent's run then
/// pauses until the answer is given (see [deferred questions](crate::approval#deferred-questions)).
///
/// ```
/// use hpd_agent::async_trait;
/// use hpd_agent::tool::{AskError, Elicitation, ElicitationAnswer, ElicitationHandler};
/// use serde_json::json;
///
/// struct AlwaysOslo;
///
/// #[async_trait]
/// impl ElicitationHandler for AlwaysOslo {
///     async fn elicit(&self, _request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
///         Ok(ElicitationAnswer::accept(json!({"city": "Oslo"}).as_object().unwrap().clone()))
///     }
/// }
/// # let _ = AlwaysOslo;
/// ```
#[async_trait]
pub trait ElicitationHandler: Send + Sync {
    /// Answers one request.
    ///
    /// # Errors
    ///
    /// Why there is no answer; the function gets it. [`AskError::Deferred`] pauses an
    /// agent's run instead, where it can pause.
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError>;
}

/// Sampling with a [`ChatClient`]: the request's messages, system prompt, token limit and
/// temperature go to the model, without tools; its text is the answer. An agent answers its
/// functions' sampling this way with its own model unless told otherwise, and an
/// [`McpHarness`](crate::mcp::McpHarness) answers its server's sampling this way.
///
/// ```
/// use hpd_agent::{ChatResponse, ScriptedChatClient};
/// use hpd_agent::tool::{ModelSampling, SamplingHandler, SamplingRequest};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::tool::AskError> {
/// let model = ScriptedChatClient::with_replies([ChatResponse::text("Paris")]);
/// let sampling = ModelSampling::new(model.clone());
/// let reply = sampling.sample(&SamplingRequest::new("Capital of France?", 10)).await?;
/// assert_eq!(reply.text, "Paris");
/// assert_eq!(model.requests()[0].options.max_output_tokens, Some(10));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ModelSampling {
    client: Arc<dyn ChatClient>,
}

impl fmt::Debug for ModelSampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelSampling").finish_non_exhaustive()
    }
}

impl ModelSampling {
    /// Sampling with `client`.
    #[must_use]
    pub fn new(client: impl ChatClient + 'static) -> Self {
        ModelSampling {
            client: Arc::new(client),
        }
    }

    /// Sampling with a shared client.
    #[must_use]
    pub fn shared(client: Arc<dyn ChatClient>) -> Self {
        ModelSampling { client }
    }
}

#[async_trait]
impl SamplingHandler for ModelSampling {
    async fn sample(&self, request: &SamplingRequest) -> Result<SamplingReply, AskError> {
        for message in &request.messages {
            if !matches!(
                message,
                ChatMessage::User { .. } | ChatMessage::Assistant { .. }
            ) {
                return Err(AskError::InvalidAnswer(
                    "sampling takes user and assistant messages only".to_owned(),
                ));
            }
        }
        let mut options = ModelOptions::new();
        options.max_output_tokens = Some(request.max_tokens);
        options.temperature = request.temperature;
        let chat = ChatRequest::new(
            request.system_prompt.as_deref().unwrap_or_default(),
            &request.messages,
            &[],
        )
        .with_options(&options);
        let response = self
            .client
            .complete(chat, &|_| {})
            .await
            .map_err(|e| AskError::Failed(format!("the model failed: {e}")))?;
        // The model's name, else the provider's, as the client's `model_info` says.
        let info = self.client.model_info();
        let model = info.model.or(info.provider).unwrap_or("unknown").to_owned();
        Ok(SamplingReply {
            text: response.text.unwrap_or_default(),
            model,
            stop_reason: Some("endTurn".to_owned()),
        })
    }
}

/// One ask of a function.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    Sampling(SamplingRequest),
    Elicitation(Elicitation),
    Roots(RootsRequest),
}

impl Input {
    /// `sampling`, `elicitation` or `roots`.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Input::Sampling(_) => "sampling",
            Input::Elicitation(_) => "elicitation",
            Input::Roots(_) => "roots",
        }
    }

    /// The key the function gave, if any.
    pub(crate) fn key(&self) -> Option<&str> {
        match self {
            Input::Sampling(request) => request.key.as_deref(),
            Input::Elicitation(request) => request.key.as_deref(),
            Input::Roots(request) => request.key.as_deref(),
        }
    }
}

/// The answer to one [`Input`]; saved with a deferred question, so the call's earlier asks
/// get the same answers when it goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "answer", rename_all = "snake_case")]
pub(crate) enum Answer {
    Sampling(SamplingReply),
    Elicitation(ElicitationAnswer),
    Roots(Vec<Root>),
}

/// Whoever answers a call's asks: the agent's handlers, an MCP session, an `input_required`
/// round.
#[async_trait]
pub(crate) trait Asker: Send + Sync {
    /// Answers one ask. An asker that can pause its call ([`pause`](Self::pause)) pauses it
    /// when the elicitation handler defers: the future then never resolves.
    async fn ask(&self, input: Input) -> Result<Answer, AskError>;

    /// The function said the call may continue as an MCP task from here
    /// ([`FunctionContext::continue_as_task`](crate::FunctionContext::continue_as_task)); only
    /// the asker of a served call that gathers its input first does something with it.
    fn continue_as_task(&self) {}
    /// Answers one ask that cannot wait (an MCP server's request on a session revision): a
    /// deferral is [`AskError::Deferred`].
    #[cfg(feature = "mcp")]
    async fn ask_now(&self, input: Input) -> Result<Answer, AskError> {
        self.ask(input).await
    }

    /// The pause of the call, when its run can pause (the top-level agent's run).
    #[cfg(feature = "mcp")]
    fn pause(&self) -> Option<&CallPause> {
        None
    }
}

/// The asks of one call (a function's, a served prompt's): who answers them, and how many
/// were made, for their default keys (`sampling-1`, `elicitation-2`, ...), which an
/// `input_required` round matches answers by.
#[derive(Clone, Default)]
pub(crate) struct Asking {
    asker: Option<Arc<dyn Asker>>,
    asks: Arc<std::sync::atomic::AtomicUsize>,
}

impl Asking {
    /// The asks of a call answered by `asker` (none answered when `None`).
    #[cfg(feature = "mcp")]
    pub(crate) fn new(asker: Option<Arc<dyn Asker>>) -> Self {
        Asking {
            asker,
            asks: Arc::default(),
        }
    }

    /// The same asks answered by `asker` from now on (the count goes on).
    pub(crate) fn set_asker(&mut self, asker: Option<Arc<dyn Asker>>) {
        self.asker = asker;
    }

    /// Who answers, when anyone does.
    pub(crate) fn asker(&self) -> Option<&Arc<dyn Asker>> {
        self.asker.as_ref()
    }

    /// Asks `input` with its default key set: [`AskError::NoHandler`] when nobody answers.
    pub(crate) async fn ask(&self, mut input: Input) -> Result<Answer, AskError> {
        let what = input.what();
        let Some(asker) = &self.asker else {
            return Err(AskError::NoHandler { what });
        };
        let n = self.asks.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if input.key().is_none() {
            let key = Some(format!("{what}-{n}"));
            match &mut input {
                Input::Sampling(request) => request.key = key,
                Input::Elicitation(request) => request.key = key,
                Input::Roots(request) => request.key = key,
            }
        }
        asker.ask(input).await
    }

    /// Asks for a completion.
    pub(crate) async fn sample(&self, request: SamplingRequest) -> Result<SamplingReply, AskError> {
        match self.ask(Input::Sampling(request)).await? {
            Answer::Sampling(reply) => Ok(reply),
            _ => Err(AskError::InvalidAnswer(
                "the answer to a sampling request is no completion".to_owned(),
            )),
        }
    }

    /// Asks for input, checking accepted form content against the form's schema.
    pub(crate) async fn elicit(&self, request: Elicitation) -> Result<ElicitationAnswer, AskError> {
        let asked = request.clone();
        match self.ask(Input::Elicitation(request)).await? {
            Answer::Elicitation(answer) => {
                check_answer(&asked, &answer)?;
                Ok(answer)
            }
            _ => Err(AskError::InvalidAnswer(
                "the answer to an elicitation is no elicitation result".to_owned(),
            )),
        }
    }

    /// Asks for the roots.
    pub(crate) async fn roots(&self, request: RootsRequest) -> Result<Vec<Root>, AskError> {
        match self.ask(Input::Roots(request)).await? {
            Answer::Roots(roots) => Ok(roots),
            _ => Err(AskError::InvalidAnswer(
                "the answer to a roots request is no list of roots".to_owned(),
            )),
        }
    }
}

/// A question a handler deferred, with what the call's going on needs.
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    /// The question, its key set.
    pub(crate) request: Elicitation,
    /// The answers of the call's earlier asks, by key.
    pub(crate) answered: std::collections::BTreeMap<String, Answer>,
    /// An MCP client's `input_required` round the question came in (see
    /// `mcp::connection`), to be answered when the call goes on.
    pub(crate) round: Option<Value>,
}

/// The pause of one call in an agent's run: the answers it replays when it goes on after a
/// pause, the answers it got, and the question a handler deferred.
#[derive(Debug, Default)]
pub(crate) struct CallPause {
    /// Answers given before (earlier asks, and the deferred question's answer), by key.
    replay: std::collections::BTreeMap<String, Answer>,
    /// The saved `input_required` round, until the MCP client takes it.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    round: std::sync::Mutex<Option<Value>>,
    /// Every answer the call used, by key.
    used: std::sync::Mutex<std::collections::BTreeMap<String, Answer>>,
    deferred: std::sync::Mutex<Option<Deferred>>,
    wake: tokio::sync::Notify,
}

impl CallPause {
    /// The pause of a call that goes on with these answers (empty for a first run) and the
    /// saved round, if any.
    pub(crate) fn new(
        replay: std::collections::BTreeMap<String, Answer>,
        round: Option<Value>,
    ) -> Self {
        CallPause {
            replay,
            round: std::sync::Mutex::new(round),
            ..CallPause::default()
        }
    }

    /// The answer given before to the ask `key`, if any (it counts as used).
    pub(crate) fn replayed(&self, key: &str) -> Option<Answer> {
        let answer = self.replay.get(key).cloned()?;
        self.record(key, &answer);
        Some(answer)
    }

    /// Keeps the answer of ask `key`, for the call's going on after a later deferral.
    pub(crate) fn record(&self, key: &str, answer: &Answer) {
        self.used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.to_owned(), answer.clone());
    }

    /// The saved `input_required` round, once.
    #[cfg(feature = "mcp")]
    pub(crate) fn take_round(&self) -> Option<Value> {
        self.round
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Records the deferred question (the first one, when several are asked at once) and
    /// never resolves: the run drops the call and pauses.
    pub(crate) async fn defer(&self, request: Elicitation, round: Option<Value>) -> ! {
        let answered = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(Deferred {
                request,
                answered,
                round,
            });
        self.wake.notify_one();
        std::future::pending().await
    }

    /// Resolves when a question was deferred.
    pub(crate) async fn deferred(&self) {
        self.wake.notified().await;
    }

    /// The deferred question.
    pub(crate) fn take_deferred(&self) -> Option<Deferred> {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

/// The asker of one call in an agent's own run: the agent's handlers, with a pause.
pub(crate) struct PausingAsker {
    pub(crate) handlers: Arc<dyn Asker>,
    pub(crate) pause: CallPause,
}

#[async_trait]
impl Asker for PausingAsker {
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        let key = input.key().unwrap_or(input.what()).to_owned();
        if let Some(answer) = self.pause.replayed(&key) {
            return Ok(answer);
        }
        let request = match &input {
            Input::Elicitation(request) => Some(request.clone()),
            _ => None,
        };
        match self.handlers.ask(input).await {
            Ok(answer) => {
                self.pause.record(&key, &answer);
                Ok(answer)
            }
            Err(AskError::Deferred) => match request {
                Some(request) => self.pause.defer(request, None).await,
                None => Err(AskError::Deferred),
            },
            Err(error) => Err(error),
        }
    }

    #[cfg(feature = "mcp")]
    async fn ask_now(&self, input: Input) -> Result<Answer, AskError> {
        self.handlers.ask(input).await
    }

    #[cfg(feature = "mcp")]
    fn pause(&self) -> Option<&CallPause> {
        Some(&self.pause)
    }
}

/// The asks of an agent's own run: its handlers, its model for sampling by default.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<[Root]>>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

#[async_trait]
impl Asker for Handlers {
    async fn ask(&self, input: Input) -> Result<Answer, AskError> {
        let what = input.what();
        match input {
            Input::Sampling(request) => match &self.sampling {
                Some(handler) => handler.sample(&request).await.map(Answer::Sampling),
                None => Err(AskError::NoHandler { what }),
            },
            Input::Elicitation(request) => match &self.elicitation {
                Some(handler) => handler.elicit(&request).await.map(Answer::Elicitation),
                None => Err(AskError::NoHandler { what }),
            },
            Input::Roots(_) => match &self.roots {
                Some(roots) => Ok(Answer::Roots(roots.to_vec())),
                None => Err(AskError::NoHandler { what }),
            },
        }
    }
}

/// Checks an accepted form answer against the form's schema (with the `argument-validation`
/// feature; without it only that the content is there).
pub(crate) fn check_answer(
    request: &Elicitation,
    answer: &ElicitationAnswer,
) -> Result<(), AskError> {
    let ElicitationKind::Form { schema } = &request.kind else {
        return Ok(());
    };
    if answer.action != ElicitAction::Accept {
        return Ok(());
    }
    let Some(content) = &answer.content else {
        return Err(AskError::InvalidAnswer(
            "the form was accepted without content".to_owned(),
        ));
    };
    let text = Value::Object(content.clone()).to_string();
    match crate::arguments::ArgumentCheck::new("elicitation", schema).mismatch(&text) {
        Some(mismatch) => Err(AskError::InvalidAnswer(format!(
            "the content does not fit the form: {mismatch}"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Elicitation {
        Elicitation::form(
            "How many?",
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}),
        )
    }

    fn content(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn accepted_forms_are_checked_against_their_schema() {
        assert_eq!(
            check_answer(
                &form(),
                &ElicitationAnswer::accept(content(json!({"n": 2})))
            ),
            Ok(())
        );
        // Declined answers carry no content to check.
        assert_eq!(check_answer(&form(), &ElicitationAnswer::decline()), Ok(()));
        let accepted_without_content = ElicitationAnswer {
            action: ElicitAction::Accept,
            content: None,
        };
        assert!(matches!(
            check_answer(&form(), &accepted_without_content),
            Err(AskError::InvalidAnswer(message)) if message.contains("without content")
        ));
        #[cfg(feature = "argument-validation")]
        {
            let missing = check_answer(&form(), &ElicitationAnswer::accept(Map::new()));
            assert!(
                matches!(&missing, Err(AskError::InvalidAnswer(m)) if m.contains("does not fit the form")),
                "{missing:?}"
            );
            let too_small = check_answer(
                &form(),
                &ElicitationAnswer::accept(content(json!({"n": 0}))),
            );
            assert!(
                matches!(&too_small, Err(AskError::InvalidAnswer(m)) if m.contains("at $.n")),
                "{too_small:?}"
            );
        }
        // A URL has no form to fit.
        let visit = Elicitation::url("Go", "https://example.com", "v1");
        assert_eq!(
            check_answer(&visit, &ElicitationAnswer::accept(Map::new())),
            Ok(())
        );
    }

    #[tokio::test]
    async fn model_sampling_refuses_tool_messages_and_reports_model_failures() {
        use crate::{ChatResponse, ScriptedChatClient, ToolResult};
        let sampling = ModelSampling::new(ScriptedChatClient::new());
        let request = SamplingRequest::from_messages(
            vec![ChatMessage::tool_result("c1", ToolResult::ok("x"))],
            5,
        );
        assert!(matches!(
            sampling.sample(&request).await,
            Err(AskError::InvalidAnswer(_))
        ));
        // A scripted client without replies fails: the ask fails with the model's error.
        let failed = sampling.sample(&SamplingRequest::new("hi", 5)).await;
        assert!(
            matches!(&failed, Err(AskError::Failed(m)) if m.starts_with("the model failed")),
            "{failed:?}"
        );
        let model = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
        let reply = ModelSampling::new(model)
            .sample(&SamplingRequest::new("hi", 5))
            .await;
        assert_eq!(
            reply.map(|r| (r.text, r.model)),
            Ok(("ok".to_owned(), "scripted".to_owned()))
        );
    }

    #[tokio::test]
    async fn handlers_without_one_refuse_with_no_handler() {
        let handlers = Handlers::default();
        for (input, what) in [
            (Input::Sampling(SamplingRequest::new("x", 1)), "sampling"),
            (Input::Elicitation(form()), "elicitation"),
            (Input::Roots(RootsRequest::new()), "roots"),
        ] {
            assert!(
                matches!(handlers.ask(input).await, Err(AskError::NoHandler { what: w }) if w == what)
            );
        }
    }
}
