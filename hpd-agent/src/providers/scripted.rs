//! [`ScriptedChatClient`]: a chat client that replays scripted responses and records requests.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::chat::{
    ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, ModelOptions, TextSink,
    ToolDefinition,
};

/// A copy of one request a [`ScriptedChatClient`] received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The system instructions.
    pub instructions: String,
    /// The conversation sent with the request.
    pub messages: Vec<ChatMessage>,
    /// The visible tool definitions, in order.
    pub tools: Vec<Arc<ToolDefinition>>,
    /// The model options sent with the request.
    pub options: ModelOptions,
}

impl RecordedRequest {
    /// The names of the visible tools, in order.
    #[must_use]
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The tool result message answering `call_id`, as `(content, is_error)`.
    #[must_use]
    pub fn tool_result(&self, call_id: &str) -> Option<(&str, bool)> {
        self.messages.iter().find_map(|m| match m {
            ChatMessage::Tool {
                call_id: id,
                content,
                is_error,
            } if id == call_id => Some((content.as_str(), *is_error)),
            _ => None,
        })
    }
}

#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<ChatResponse>,
    requests: Vec<RecordedRequest>,
}

/// A [`ChatClient`] that answers with queued responses, in order, and records every request.
///
/// It is meant for tests and offline demos. Clones share the same queue and record.
///
/// ```
/// use hpd_agent::{ChatResponse, ScriptedChatClient, ToolCall};
///
/// let client = ScriptedChatClient::new();
/// client.push(ChatResponse::tool_calls(vec![ToolCall::new("c1", "add", r#"{"a":1,"b":2}"#)]));
/// client.push(ChatResponse::text("3"));
/// assert_eq!(client.remaining(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScriptedChatClient {
    script: Arc<Mutex<Script>>,
}

impl ScriptedChatClient {
    /// A client with no replies queued.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A client with these replies queued.
    #[must_use]
    pub fn with_replies(replies: impl IntoIterator<Item = ChatResponse>) -> Self {
        let client = Self::new();
        for reply in replies {
            client.push(reply);
        }
        client
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A panic while holding the lock cannot leave the script half-updated.
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues one reply.
    pub fn push(&self, reply: ChatResponse) {
        self.lock().replies.push_back(reply);
    }

    /// How many queued replies have not been used.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    /// Drops the queued replies that were not used.
    pub fn clear_replies(&self) {
        self.lock().replies.clear();
    }

    /// Every request received so far, oldest first.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Takes the recorded requests, leaving the record empty.
    #[must_use]
    pub fn take_requests(&self) -> Vec<RecordedRequest> {
        std::mem::take(&mut self.lock().requests)
    }
}

#[async_trait]
impl ChatClient for ScriptedChatClient {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let reply = {
            let mut script = self.lock();
            script.requests.push(RecordedRequest {
                instructions: request.instructions.to_owned(),
                messages: request.messages.to_vec(),
                tools: request.tools.to_vec(),
                options: request.options.clone(),
            });
            let n = script.requests.len();
            script
                .replies
                .pop_front()
                .ok_or(ChatError::ScriptExhausted(n))?
        };
        if let Some(t) = &reply.text {
            text(t);
        }
        Ok(reply)
    }
}
