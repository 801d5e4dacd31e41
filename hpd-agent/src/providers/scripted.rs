//! [`ScriptedChatClient`]: a chat client that replays scripted responses and records requests.
//!
//! ```
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A test of an agent: script the model's side, then check what the agent sent it.
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "missing_tool", "{}")]),
//!     ChatResponse::text("I could not find that tool."),
//! ]);
//! let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
//! assert_eq!(agent.run("Use the tool").await?.text, "I could not find that tool.");
//! assert_eq!(model.requests()[1].tool_result("c1").map(|(_, is_error)| is_error), Some(true));
//! # Ok(())
//! # }
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::chat::{
    ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, DeferredGroup, DeferredTools,
    ModelOptions, TextSink, ToolDefinition,
};
use crate::output::OutputSchema;

/// A copy of one request a [`ScriptedChatClient`] received.
///
/// ```
/// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi")]);
/// let agent = AgentBuilder::new().with_instructions("Be kind.").with_chat_client(model.clone()).build()?;
/// agent.run("Hello").await?;
/// let request = &model.requests()[0];
/// assert_eq!(request.instructions, "Be kind.");
/// assert_eq!(request.messages, [ChatMessage::user("Hello")]);
/// assert!(request.tools.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The system instructions.
    pub instructions: String,
    /// The conversation sent with the request.
    pub messages: Vec<ChatMessage>,
    /// The visible tool definitions, in order.
    pub tools: Vec<Arc<ToolDefinition>>,
    /// The deferred tools sent with the request (the native collapsing layout, with
    /// [`ScriptedChatClient::with_deferred_tools`]).
    pub deferred: Vec<DeferredGroup>,
    /// The name of the client-executed tool search the request carried (the native layout
    /// with [`DeferredTools::ToolSearch`]).
    pub tool_search: Option<String>,
    /// The model options sent with the request.
    pub options: ModelOptions,
    /// The schema the final answer had to match (a typed run).
    pub output: Option<OutputSchema>,
}

impl RecordedRequest {
    /// The names of the visible tools, in order.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi")]);
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Net").with_collapse("Network").with_tool(ping).build()?)
    ///     .with_chat_client(model.clone())
    ///     .build()?;
    /// agent.run("Hello").await?;
    /// assert_eq!(model.requests()[0].tool_names(), ["Net", "call_function"]);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The tool result message answering `call_id`, as `(content, is_error)`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "nothing", "{}")]),
    ///     ChatResponse::text("Sorry."),
    /// ]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// agent.run("Do it").await?;
    /// let requests = model.requests();
    /// let (text, is_error) = requests[1].tool_result("c1").unwrap();
    /// assert!(is_error && text.starts_with("Function 'nothing' not found"));
    /// assert_eq!(requests[1].tool_result("c9"), None);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn tool_result(&self, call_id: &str) -> Option<(&str, bool)> {
        self.messages.iter().find_map(|m| match m {
            ChatMessage::Tool {
                call_id: id,
                content,
                is_error,
                ..
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
    deferred: DeferredTools,
    model: Option<String>,
}

impl ScriptedChatClient {
    /// A client with no replies queued.
    ///
    /// ```
    /// use hpd_agent::ScriptedChatClient;
    ///
    /// let client = ScriptedChatClient::new();
    /// assert_eq!(client.remaining(), 0);
    /// assert!(client.requests().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A client with these replies queued.
    ///
    /// ```
    /// use hpd_agent::{ChatResponse, ScriptedChatClient};
    ///
    /// let client = ScriptedChatClient::with_replies((1..=3).map(|n| ChatResponse::text(n.to_string())));
    /// assert_eq!(client.remaining(), 3);
    /// ```
    #[must_use]
    pub fn with_replies(replies: impl IntoIterator<Item = ChatResponse>) -> Self {
        let client = Self::new();
        for reply in replies {
            client.push(reply);
        }
        client
    }

    /// A client that says it has this form of deferred tool loading, to try the
    /// [`native`](crate::config::CollapsingLayout::Native) collapsing layout offline: requests then carry
    /// [`ChatRequest::deferred`], recorded in [`RecordedRequest::deferred`].
    ///
    /// ```
    /// use hpd_agent::{ChatClient, ScriptedChatClient};
    /// use hpd_agent::chat::DeferredTools;
    ///
    /// let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    /// assert_eq!(client.deferred_tools(), DeferredTools::ToolReferences);
    /// ```
    #[must_use]
    pub fn with_deferred_tools(mut self, deferred: DeferredTools) -> Self {
        self.deferred = deferred;
        self
    }

    /// A client that names a model in [`model_info`](ChatClient::model_info) (its provider is
    /// `scripted`), as traces show it; the replies do not depend on it.
    ///
    /// ```
    /// use hpd_agent::{ChatClient, ScriptedChatClient};
    /// use hpd_agent::chat::ModelInfo;
    ///
    /// let client = ScriptedChatClient::new().with_model("scripted-1");
    /// assert_eq!(client.model_info(), ModelInfo::new("scripted").with_model("scripted-1"));
    /// ```
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A panic while holding the lock cannot leave the script half-updated.
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues one reply.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::new();
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// model.push(ChatResponse::text("queued after the build")); // clones share the queue
    /// assert_eq!(agent.run("Hi").await?.text, "queued after the build");
    /// # Ok(())
    /// # }
    /// ```
    pub fn push(&self, reply: ChatResponse) {
        self.lock().replies.push_back(reply);
    }

    /// How many queued replies have not been used.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// agent.run("Hi").await?;
    /// assert_eq!(model.remaining(), 1);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    /// Drops the queued replies that were not used.
    ///
    /// ```
    /// use hpd_agent::{ChatResponse, ScriptedChatClient};
    ///
    /// let client = ScriptedChatClient::with_replies([ChatResponse::text("unused")]);
    /// client.clear_replies();
    /// assert_eq!(client.remaining(), 0);
    /// ```
    pub fn clear_replies(&self) {
        self.lock().replies.clear();
    }

    /// Every request received so far, oldest first.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// agent.run("one").await?;
    /// agent.run("two").await?;
    /// assert_eq!(model.requests().len(), 2);
    /// assert_eq!(model.requests().len(), 2); // reading does not consume
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Takes the recorded requests, leaving the record empty.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a")]);
    /// let agent = AgentBuilder::new().with_chat_client(model.clone()).build()?;
    /// agent.run("one").await?;
    /// assert_eq!(model.take_requests().len(), 1);
    /// assert!(model.requests().is_empty());
    /// # Ok(())
    /// # }
    /// ```
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
                deferred: request.deferred.to_vec(),
                tool_search: request.tool_search.map(str::to_owned),
                options: request.options.clone(),
                output: request.output.cloned(),
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

    fn deferred_tools(&self) -> DeferredTools {
        self.deferred
    }

    fn model_info(&self) -> crate::chat::ModelInfo<'_> {
        let info = crate::chat::ModelInfo::new("scripted");
        match &self.model {
            Some(model) => info.with_model(model),
            None => info,
        }
    }
}
