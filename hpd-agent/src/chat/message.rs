//! The conversation: messages, tool calls, tool definitions, requests and responses.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Usage;

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
