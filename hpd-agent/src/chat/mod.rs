//! The conversation model and the [`ChatClient`] trait that providers implement.
//!
//! A provider turns one [`ChatRequest`] (system instructions, the conversation so far, the tool
//! definitions visible for this request) into one [`ChatResponse`] (text and/or tool calls, token
//! usage). The agent loop in [`crate::agent`] owns everything else: which tools are visible,
//! running calls, appending results.
//!
//! - [`ChatMessage`], [`ToolCall`], [`ToolDefinition`]: the conversation (module `message`).
//! - [`ChatRequest`], [`ChatResponse`]: one exchange with the model.
//! - [`ModelOptions`], [`ToolChoice`]: generation settings of a request.
//! - [`Usage`], [`FinishReason`], [`Reasoning`]: what comes back besides text and tool calls.
//! - [`ChatClient`], [`ChatError`], [`TextSink`]: the provider contract.
//!
//! ```
//! use hpd_agent::{ChatClient, ChatMessage, ChatResponse, ScriptedChatClient};
//! use hpd_agent::chat::{ChatRequest, ModelOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
//! // What an agent does for every model request, by hand.
//! let client = ScriptedChatClient::with_replies([ChatResponse::text("Paris")]);
//! let messages = [ChatMessage::user("Capital of France?")];
//! let options = ModelOptions::new().with_temperature(0.0);
//! let request = ChatRequest::new("Answer in one word.", &messages, &[]).with_options(&options);
//! let response = client.complete(request, &|_delta| {}).await?;
//! assert_eq!(response.text.as_deref(), Some("Paris"));
//! # Ok(())
//! # }
//! ```

mod content;
mod message;
mod options;
mod usage;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

pub use content::{ContentPart, ResourceContents, ToolImages};
pub(crate) use content::{base64, data_url, parts_to_send, repeated_in, sendable_image, text_form};
pub use message::{
    ChatMessage, ChatRequest, ChatResponse, DeferredGroup, Reasoning, ToolAnnotations, ToolCall,
    ToolDefinition,
};
pub use options::{ModelOptions, ToolChoice};
pub use usage::{FinishReason, Usage};

/// Receives text as a provider streams it. Providers that do not stream call it once with the
/// whole text, or not at all.
///
/// ```
/// use std::sync::Mutex;
/// use hpd_agent::{ChatClient, ChatMessage, ChatResponse, ScriptedChatClient};
/// use hpd_agent::chat::{ChatRequest, TextSink};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
/// let client = ScriptedChatClient::with_replies([ChatResponse::text("Hello")]);
/// let received = Mutex::new(String::new());
/// let sink: TextSink<'_> = &|delta: &str| received.lock().unwrap().push_str(delta);
/// let messages = [ChatMessage::user("Hi")];
/// client.complete(ChatRequest::new("", &messages, &[]), sink).await?;
/// assert_eq!(*received.lock().unwrap(), "Hello");
/// # Ok(())
/// # }
/// ```
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// An error of a chat provider.
///
/// ```
/// use hpd_agent::{AgentBuilder, RunError, ScriptedChatClient};
/// use hpd_agent::chat::ChatError;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// match agent.run("Hi").await {
///     Err(RunError::Chat(ChatError::ScriptExhausted(n))) => assert_eq!(n, 1),
///     other => panic!("unexpected: {other:?}"),
/// }
/// let error = ChatError::Status { status: 429, message: "slow down".into() };
/// assert_eq!(error.to_string(), "provider returned HTTP 429: slow down");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    /// The provider answered with an error status.
    #[error("provider returned HTTP {status}: {message}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The provider's error message, or the body when it has none.
        message: String,
    },
    /// The request could not be sent or the connection failed.
    #[error("provider request failed: {0}")]
    Transport(String),
    /// The request took longer than the configured timeout.
    #[error("provider request timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The provider's answer could not be understood.
    #[error("malformed provider response: {0}")]
    Malformed(String),
    /// The client is not set up correctly (missing key, bad URL...).
    #[error("provider configuration error: {0}")]
    Config(String),
    /// A scripted client ran out of replies.
    #[error("scripted chat client has no reply left for request {0}")]
    ScriptExhausted(usize),
}

/// A chat model provider: one request in, one response out.
///
/// Implementations must be `Send + Sync`; an [`Agent`](crate::Agent) shares one client between
/// all its sessions.
///
/// ```
/// use hpd_agent::{async_trait, ChatClient, ChatResponse};
/// use hpd_agent::chat::{ChatError, ChatRequest, TextSink};
///
/// struct Echo;
///
/// #[async_trait]
/// impl ChatClient for Echo {
///     async fn complete(&self, request: ChatRequest<'_>, _text: TextSink<'_>) -> Result<ChatResponse, ChatError> {
///         let last = format!("{:?}", request.messages.last());
///         Ok(ChatResponse::text(last))
///     }
/// }
///
/// let client: Box<dyn ChatClient> = Box::new(Echo);
/// # drop(client);
/// ```
#[async_trait]
pub trait ChatClient: Send + Sync {
    /// Sends one request and returns the model's response.
    ///
    /// `text` receives text deltas as they arrive, for streaming providers.
    ///
    /// # Errors
    ///
    /// A [`ChatError`] when the provider fails; the run ends with it and the session keeps its
    /// history.
    ///
    /// ```
    /// use hpd_agent::{ChatClient, ChatMessage, ChatResponse, ScriptedChatClient};
    /// use hpd_agent::chat::ChatRequest;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
    /// let client = ScriptedChatClient::with_replies([ChatResponse::text("Hi there")]);
    /// let messages = [ChatMessage::user("Hi")];
    /// let response = client.complete(ChatRequest::new("Be brief.", &messages, &[]), &|_| {}).await?;
    /// assert_eq!(response.text.as_deref(), Some("Hi there"));
    /// # Ok(())
    /// # }
    /// ```
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError>;

    /// The provider's own form of deferred tool loading, which the
    /// [`native`](crate::config::CollapsingLayout::Native) collapsing layout maps onto; the default,
    /// [`DeferredTools::Unsupported`], makes that layout fall back to
    /// [`fixed`](crate::config::CollapsingLayout::Fixed).
    ///
    /// ```
    /// use hpd_agent::{ChatClient, ScriptedChatClient};
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    /// use hpd_agent::chat::DeferredTools;
    ///
    /// assert_eq!(ScriptedChatClient::new().deferred_tools(), DeferredTools::Unsupported);
    /// let claude = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?;
    /// assert_eq!(claude.deferred_tools(), DeferredTools::ToolReferences);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    fn deferred_tools(&self) -> DeferredTools {
        DeferredTools::Unsupported
    }

    /// Who answers: the provider, the model and the server, as traces name them (the
    /// OpenTelemetry GenAI attributes `gen_ai.provider.name`, `gen_ai.request.model`,
    /// `server.address` and `server.port`; see the `otel` feature). The default says nothing:
    /// spans then name the provider `unknown` and no model.
    ///
    /// ```
    /// use hpd_agent::{ChatClient, ScriptedChatClient};
    /// use hpd_agent::chat::ModelInfo;
    /// use hpd_agent::providers::openai::OpenAiClient;
    ///
    /// let gpt = OpenAiClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(gpt.model_info(), ModelInfo::new("openai").with_model("gpt-4o-mini").with_base_url("https://api.openai.com/v1"));
    /// assert_eq!(ScriptedChatClient::new().model_info().provider, Some("scripted"));
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    fn model_info(&self) -> ModelInfo<'_> {
        ModelInfo::default()
    }
}

/// What [`ChatClient::model_info`] says about a client.
///
/// ```
/// use hpd_agent::chat::ModelInfo;
///
/// let info = ModelInfo::new("anthropic").with_model("claude-sonnet-4-5");
/// assert_eq!((info.provider, info.model, info.base_url), (Some("anthropic"), Some("claude-sonnet-4-5"), None));
/// assert_eq!(ModelInfo::default().provider, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelInfo<'a> {
    /// The provider, by the well-known values of `gen_ai.provider.name` where one applies
    /// (`openai`, `anthropic`, ...): the API the client speaks, also when an OpenAI-compatible
    /// server of someone else answers.
    pub provider: Option<&'a str>,
    /// The model name sent with each request.
    pub model: Option<&'a str>,
    /// The base URL requests go to. Traces show only its host and port, never a password
    /// it may carry.
    pub base_url: Option<&'a str>,
}

impl<'a> ModelInfo<'a> {
    /// Names the provider.
    #[must_use]
    pub fn new(provider: &'a str) -> Self {
        ModelInfo {
            provider: Some(provider),
            ..ModelInfo::default()
        }
    }

    /// Names the model.
    #[must_use]
    pub fn with_model(mut self, model: &'a str) -> Self {
        self.model = Some(model);
        self
    }

    /// Names the base URL.
    #[must_use]
    pub fn with_base_url(mut self, base_url: &'a str) -> Self {
        self.base_url = Some(base_url);
        self
    }
}

/// How a provider loads tool definitions on demand (see [`ChatClient::deferred_tools`]).
///
/// Every form keeps the members of a collapsed harness out of the request's tool list until the
/// model calls the harness's container; its result then makes them callable by their own
/// names. The forms differ in how the provider is told: [`ToolReferences`](Self::ToolReferences)
/// and [`ToolSearch`](Self::ToolSearch) load them through the container's result,
/// [`ToolAdditions`](Self::ToolAdditions) and [`AdditionalTools`](Self::AdditionalTools) add
/// them to the conversation right after it, in the vendors' forms for changing the tools
/// mid-conversation without invalidating the cached prefix.
///
/// A config names a form by its snake-case name (`"none"`, `"tool_references"`,
/// `"tool_additions"`, `"tool_search"`, `"additional_tools"`), as the `deferred_tools` key of
/// its `model` object.
///
/// ```
/// use hpd_agent::chat::DeferredTools;
///
/// assert_eq!(DeferredTools::default(), DeferredTools::Unsupported);
/// let form: DeferredTools = serde_json::from_str(r#""tool_additions""#).unwrap();
/// assert_eq!(form, DeferredTools::ToolAdditions);
/// assert_eq!(serde_json::to_string(&DeferredTools::Unsupported).unwrap(), r#""none""#);
/// ```
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeferredTools {
    /// No deferred loading: every tool the model may call is in the request's tool list.
    #[default]
    #[serde(rename = "none")]
    Unsupported,
    /// Anthropic's form: tools sent with `defer_loading: true` stay out of the model's context
    /// until a tool result carries `tool_reference` blocks naming them.
    ToolReferences,
    /// The OpenAI Responses form: deferred functions grouped in `namespace` tools, loaded
    /// through a client-executed `tool_search` whose output carries their definitions.
    ToolSearch,
    /// Anthropic's mid-conversation tool changes (beta
    /// `mid-conversation-tool-changes-2026-07-01`): tools sent with `defer_loading: true`
    /// are added after the container's result by a `{"role": "system"}` message of
    /// `tool_addition` blocks, and called by their own names.
    ToolAdditions,
    /// The OpenAI Responses `additional_tools` input item: the definitions of the loaded tools
    /// follow the container's result as an item of role `developer`, and the model calls
    /// them by their own names (no namespace, no search).
    AdditionalTools,
}

impl fmt::Debug for dyn ChatClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("dyn ChatClient")
    }
}

#[async_trait]
impl<C: ChatClient + ?Sized> ChatClient for Box<C> {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        (**self).complete(request, text).await
    }

    fn deferred_tools(&self) -> DeferredTools {
        (**self).deferred_tools()
    }

    fn model_info(&self) -> ModelInfo<'_> {
        (**self).model_info()
    }
}

#[async_trait]
impl<C: ChatClient + ?Sized> ChatClient for Arc<C> {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        (**self).complete(request, text).await
    }

    fn deferred_tools(&self) -> DeferredTools {
        (**self).deferred_tools()
    }

    fn model_info(&self) -> ModelInfo<'_> {
        (**self).model_info()
    }
}
