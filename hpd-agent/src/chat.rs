//! The conversation model and the [`ChatClient`] trait that providers implement.
//!
//! A provider turns one [`ChatRequest`] (system instructions, the conversation so far, the tool
//! definitions visible for this request) into one [`ChatResponse`] (text and/or tool calls, token
//! usage). The agent loop in [`crate::agent`] owns everything else: which tools are visible,
//! running calls, appending results.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
///
/// The history of a [`Session`](crate::Session) is a `Vec<ChatMessage>`; it serializes with serde
/// so a session can be stored and resumed elsewhere.
///
/// ```
/// use hpd_agent::ChatMessage;
/// let m = ChatMessage::user("hello");
/// assert_eq!(m, ChatMessage::User { content: "hello".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// A message from the user.
    User {
        /// The text.
        content: String,
    },
    /// A reply of the model: text, tool calls, or both.
    Assistant {
        /// The text part, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The tool calls the model made, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answering the call with the same id.
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The result text the model sees.
        content: String,
        /// Whether the result reports an error. Providers whose wire format has no such field
        /// drop it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl ChatMessage {
    /// A user message.
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage::User {
            content: content.into(),
        }
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the result message carries it back.
    pub id: String,
    /// The tool name as the model sent it (it may name no visible tool).
    pub name: String,
    /// The arguments as the model sent them: JSON text, possibly malformed or empty.
    pub arguments: String,
}

impl ToolCall {
    /// A tool call with arguments given as JSON text.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// A tool as offered to the model: name, description and JSON schema of its parameters.
///
/// Definitions are built once (at agent build, or once per harness for schemas) and shared by
/// reference between requests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The tool name.
    pub name: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON schema of the parameters object.
    pub parameters: Arc<Value>,
}

/// One request to a model.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// The system instructions (may be empty).
    pub instructions: &'a str,
    /// The conversation so far, oldest first.
    pub messages: &'a [ChatMessage],
    /// The tools visible for this request, in the order the model should see them.
    pub tools: &'a [Arc<ToolDefinition>],
}

/// Token usage reported by a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub input_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
    }
}

/// The model's answer to one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatResponse {
    /// The text part, if any.
    pub text: Option<String>,
    /// The tool calls, in order. Empty when the model is done.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage of this request.
    pub usage: Usage,
}

impl ChatResponse {
    /// A response with only text.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        ChatResponse {
            text: Some(text.into()),
            ..ChatResponse::default()
        }
    }

    /// A response with only tool calls.
    #[must_use]
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        ChatResponse {
            tool_calls: calls,
            ..ChatResponse::default()
        }
    }
}

/// Receives text as a provider streams it. Providers that do not stream call it once with the
/// whole text, or not at all.
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// An error of a chat provider.
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
/// use hpd_agent::{async_trait, ChatClient, ChatError, ChatRequest, ChatResponse, TextSink};
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
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError>;
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
}
