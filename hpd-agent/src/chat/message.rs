//! The conversation: messages, tool calls, tool definitions, requests and responses.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentPart, FinishReason, ModelOptions, Usage};
use crate::output::OutputSchema;

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
#[non_exhaustive]
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
        /// The model's reasoning before this reply, kept so providers that need it back
        /// (Anthropic thinking blocks with their signatures, `reasoning_content` of
        /// OpenAI-compatible servers during tool loops) get it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
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
        /// Deferred tools this result loads (the [`native`](crate::config::CollapsingLayout::Native)
        /// collapsing layout), by name: the record of what the result made callable, in no
        /// provider's form. A provider with deferred loading writes them in its form when it
        /// sends the history (Anthropic `tool_reference` blocks in the result, or a
        /// `tool_addition` system message after the results; a Responses `tool_search_output`,
        /// or an `additional_tools` item after the results); others ignore them. Empty for
        /// every other result.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        references: Vec<String>,
        /// The result's ordered content parts when it is more than one text (images, audio,
        /// resources; see [`ToolResult`](crate::ToolResult)); empty for a plain text result,
        /// whose whole content is `content`. `content` is always the text form, which
        /// providers send where they cannot send a part. Sessions stored before parts existed
        /// have no such key and read as text results.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<ContentPart>,
    },
}

impl ChatMessage {
    /// A user message.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    ///
    /// let message = ChatMessage::user("Hello");
    /// assert_eq!(message, ChatMessage::User { content: "Hello".into() });
    /// assert_eq!(serde_json::to_string(&message).unwrap(), r#"{"role":"user","content":"Hello"}"#);
    /// ```
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage::User {
            content: content.into(),
        }
    }

    /// A tool result message answering the call `call_id`, loading no deferred tool.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    ///
    /// let result = ChatMessage::tool("c1", "5", false);
    /// assert!(matches!(result, ChatMessage::Tool { ref call_id, ref references, .. } if call_id == "c1" && references.is_empty()));
    /// ```
    #[must_use]
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        ChatMessage::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error,
            references: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// A tool result message answering the call `call_id` with `result`: its text form as
    /// `content` and its parts (with the structured value as a JSON text part, unless a text
    /// part already says the same) as `parts`.
    ///
    /// ```
    /// use hpd_agent::{ChatMessage, ToolResult};
    /// use hpd_agent::chat::ContentPart;
    /// use serde_json::json;
    ///
    /// let result = ToolResult::image("image/png", vec![1, 2]).with_structured(json!({"w": 1}));
    /// let ChatMessage::Tool { content, parts, .. } = ChatMessage::tool_result("c1", result) else { unreachable!() };
    /// assert_eq!(content, "[image: image/png, 2 bytes]\n{\"w\":1}");
    /// assert_eq!(parts[1], ContentPart::text(r#"{"w":1}"#));
    /// ```
    #[must_use]
    pub fn tool_result(call_id: impl Into<String>, result: crate::ToolResult) -> Self {
        let crate::ToolResult {
            text,
            is_error,
            mut parts,
            structured,
        } = result;
        if !parts.is_empty()
            && let Some(structured) = structured
            && !super::repeated_in(&parts, &structured)
        {
            parts.push(ContentPart::text(structured.to_string()));
        }
        ChatMessage::Tool {
            call_id: call_id.into(),
            content: text,
            is_error,
            references: Vec::new(),
            parts,
        }
    }

    /// The assistant message that records `response` in the history: its text, tool calls
    /// and reasoning.
    ///
    /// ```
    /// use hpd_agent::{ChatMessage, ChatResponse};
    ///
    /// let message = ChatMessage::assistant(&ChatResponse::text("hi"));
    /// assert_eq!(
    ///     message,
    ///     ChatMessage::Assistant { content: Some("hi".into()), tool_calls: vec![], reasoning: vec![] }
    /// );
    /// ```
    #[must_use]
    pub fn assistant(response: &ChatResponse) -> Self {
        ChatMessage::Assistant {
            content: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
            reasoning: response.reasoning.clone(),
        }
    }
}

/// Reasoning the model produced before its reply.
///
/// Which fields are set depends on the provider: OpenAI-compatible servers send `text` only
/// (`reasoning_content`); Anthropic sends `text` with a `signature` (a `thinking` block), or
/// only `redacted` data (a `redacted_thinking` block); the OpenAI Responses API sends a summary
/// as `text`, its item `id`, and its `encrypted_content` as `signature` when asked for it.
/// Signatures and redacted data are opaque: they are sent back exactly as they came.
///
/// ```
/// use hpd_agent::chat::Reasoning;
///
/// let thought = Reasoning::text("The user wants the sum.");
/// assert_eq!(thought.signature, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reasoning {
    /// The reasoning text (or its summary); may be empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The provider's signature or encrypted form of the reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Reasoning the provider only returns encrypted (Anthropic `redacted_thinking` data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// The provider's id of the reasoning item (OpenAI Responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Reasoning {
    /// Reasoning with only text.
    ///
    /// ```
    /// use hpd_agent::chat::Reasoning;
    ///
    /// let thought = Reasoning::text("Sum the two numbers first.");
    /// assert_eq!(thought.text, "Sum the two numbers first.");
    /// assert!(thought.signature.is_none() && thought.id.is_none());
    /// ```
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Reasoning {
            text: text.into(),
            ..Reasoning::default()
        }
    }

    /// Sets the provider's signature (or encrypted form) of the reasoning.
    ///
    /// ```
    /// use hpd_agent::chat::Reasoning;
    ///
    /// let thought = Reasoning::text("Call now.").with_signature("sig");
    /// assert_eq!(thought.signature.as_deref(), Some("sig"));
    /// ```
    #[must_use]
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Reasoning the provider returned only encrypted (Anthropic's `redacted_thinking`), kept to
    /// be sent back as it came.
    ///
    /// ```
    /// use hpd_agent::chat::Reasoning;
    ///
    /// let hidden = Reasoning::redacted("opaque-data");
    /// assert_eq!((hidden.text.as_str(), hidden.redacted.as_deref()), ("", Some("opaque-data")));
    /// ```
    #[must_use]
    pub fn redacted(data: impl Into<String>) -> Self {
        Reasoning {
            redacted: Some(data.into()),
            ..Reasoning::default()
        }
    }

    /// Sets the provider's id of the reasoning item (OpenAI Responses sends one).
    ///
    /// ```
    /// use hpd_agent::chat::Reasoning;
    ///
    /// let item = Reasoning::text("Look it up.").with_id("rs_1");
    /// assert_eq!(item.id.as_deref(), Some("rs_1"));
    /// ```
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// A tool call made by the model.
///
/// ```
/// use hpd_agent::ToolCall;
///
/// let call = ToolCall::new("call_1", "get_weather", r#"{"city": "Oslo"}"#);
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "get_weather"));
/// let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
/// assert_eq!(arguments["city"], "Oslo");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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
    ///
    /// ```
    /// use hpd_agent::ToolCall;
    ///
    /// // The arguments are kept as the model sent them, even when they are not valid JSON.
    /// let call = ToolCall::new("c1", "search", "{not json");
    /// assert_eq!(call.arguments, "{not json");
    /// ```
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
///
/// ```
/// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
/// let search = Tool::new("search", "Searches the web", schema.clone(), |_, _| async { ToolResult::ok("") });
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Web").with_tool(search).build()?)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// let definition = &agent.tool_session().visible_tools()[0];
/// assert_eq!((definition.name.as_str(), definition.description.as_str()), ("search", "Searches the web"));
/// assert_eq!(definition.parameters["required"], json!(["q"]));
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool name.
    pub name: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON schema of the parameters object.
    pub parameters: Arc<Value>,
    /// The JSON schema of the tool's structured result, when it declares one (a function
    /// returning a `Serialize + JsonSchema` type whose schema is an object; an MCP server's
    /// `outputSchema`). Providers do not send it; the MCP server (`McpServer`)
    /// advertises it as `outputSchema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<Value>>,
    /// What the tool does to its environment, as far as its author says
    /// ([`ToolAnnotations`]; empty when nothing is said). Providers do not send it; the MCP
    /// server advertises it as the tool's `annotations`, and a collapsed harness's hints use
    /// it (see [`ToolAnnotations`]).
    #[serde(skip_serializing_if = "ToolAnnotations::is_empty")]
    pub annotations: ToolAnnotations,
}

impl ToolDefinition {
    /// A definition of the tool `name` with its description and the JSON schema of its
    /// parameters object.
    ///
    /// ```
    /// use hpd_agent::chat::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let clock = ToolDefinition::new("now", "The current time", json!({"type": "object"}));
    /// assert_eq!(clock.name, "now");
    /// assert!(clock.output_schema.is_none());
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            parameters: Arc::new(parameters),
            output_schema: None,
            annotations: ToolAnnotations::new(),
        }
    }

    /// Sets the JSON schema of the tool's structured result.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Arc::new(schema));
        self
    }

    /// Sets what the tool does to its environment.
    ///
    /// ```
    /// use hpd_agent::chat::{ToolAnnotations, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let log = ToolDefinition::new("git_log", "Shows the commit logs", json!({"type": "object"}))
    ///     .with_annotations(ToolAnnotations::read_only());
    /// assert!(!log.annotations.changes_things());
    /// ```
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }
}

/// What a tool does to its environment, as its author says: the four hints of MCP's tool
/// annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`), each
/// `None` when not said.
///
/// They are hints, never guarantees, and the crate never lets them decide what runs: approval
/// is [`with_approval_required`](crate::Tool::with_approval_required)'s and
/// `#[ai_function(requires_approval)]`'s, whatever a tool says of itself.
/// What reads them:
/// - the MCP server (`McpServer`) advertises them as each tool's
///   `annotations`, and an MCP harness takes them from the server's `tools/list`, so a tool
///   served again keeps them;
/// - a collapsed harness's hints (its container notes and the answer of an opening ahead,
///   which name the members that fit the user's message): for a message that asks for no
///   change, a member that [changes things](ToolAnnotations::changes_things) is left out of
///   the hint when a member that does not fits too. A small model runs what a hint names, and
///   a lexical ranking cannot tell "Show the last 3 commits" from a request to commit
///   (`BENCHMARKS.md`, "Fifteenth run"). A server that calls a writing tool read-only only
///   gets the hint it would have had without annotations.
///
/// ```
/// use hpd_agent::chat::ToolAnnotations;
///
/// let reset = ToolAnnotations::new().with_read_only(false).with_destructive(true);
/// assert!(reset.changes_things());
/// assert!(!ToolAnnotations::read_only().changes_things());
/// // Nothing said: nothing assumed.
/// assert!(!ToolAnnotations::new().changes_things() && ToolAnnotations::new().is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// `true`: the tool does not change its environment (MCP's `readOnlyHint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// `true`: a change may destroy or overwrite what was there; `false`: it only adds (MCP's
    /// `destructiveHint`, meaningful when the tool is not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// `true`: a second call with the same arguments changes nothing more (MCP's
    /// `idempotentHint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// `true`: the tool reaches an open world of outside entities, as a web search does;
    /// `false`: a closed one, as a local store (MCP's `openWorldHint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Nothing said.
    #[must_use]
    pub const fn new() -> Self {
        ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// A tool that does not change its environment.
    #[must_use]
    pub const fn read_only() -> Self {
        ToolAnnotations::new().with_read_only(true)
    }

    /// Says whether the tool leaves its environment unchanged.
    #[must_use]
    pub const fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Says whether the tool's changes may destroy what was there.
    #[must_use]
    pub const fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Says whether a repeated call changes nothing more.
    #[must_use]
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Says whether the tool reaches outside entities.
    #[must_use]
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Whether nothing is said.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }

    /// Whether the annotations say the tool changes its environment: not read-only, or
    /// destructive without being said read-only. Nothing said is not a change: a tool without
    /// annotations is taken as it comes.
    #[must_use]
    pub const fn changes_things(&self) -> bool {
        matches!(self.read_only, Some(false))
            || (self.read_only.is_none() && matches!(self.destructive, Some(true)))
    }
}

/// One request to a model.
///
/// ```
/// use hpd_agent::ChatMessage;
/// use hpd_agent::chat::{ChatRequest, ModelOptions};
///
/// let messages = [ChatMessage::user("hi")];
/// let options = ModelOptions::new().with_temperature(0.0);
/// let request = ChatRequest::new("Be brief.", &messages, &[]).with_options(&options);
/// assert_eq!(request.options.temperature, Some(0.0));
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ChatRequest<'a> {
    /// The system instructions (may be empty).
    pub instructions: &'a str,
    /// The conversation so far, oldest first.
    pub messages: &'a [ChatMessage],
    /// The tools visible for this request, in the order the model should see them.
    pub tools: &'a [Arc<ToolDefinition>],
    /// Tools the provider should send deferred, grouped by collapsed harness, after `tools`
    /// (the [`native`](crate::config::CollapsingLayout::Native) collapsing layout with a client whose
    /// [`deferred_tools`](crate::ChatClient::deferred_tools) has a form). Empty otherwise.
    pub deferred: &'a [DeferredGroup],
    /// The name of the tool search the agent executes itself, when the request loads its
    /// deferred tools through one (the [`native`](crate::config::CollapsingLayout::Native)
    /// layout with [`DeferredTools::ToolSearch`](crate::chat::DeferredTools::ToolSearch)):
    /// the provider reports the model's search calls as [`ToolCall`]s of this name, and
    /// sends calls of this name in the history back as search calls. `None` otherwise.
    pub tool_search: Option<&'a str>,
    /// Generation settings; [`ModelOptions::none`] when none are set.
    pub options: &'a ModelOptions,
    /// The schema the model's final answer must match (a typed run, see
    /// [`output`](crate::output)); providers send it in their structured output field.
    pub output: Option<&'a OutputSchema>,
}

/// A collapsed harness whose members a request sends deferred: loaded into the model's
/// context only once a tool result references them (see [`ChatRequest::deferred`]).
///
/// ```
/// use std::sync::Arc;
/// use hpd_agent::chat::{DeferredGroup, ToolDefinition};
/// use serde_json::json;
///
/// let add = ToolDefinition::new("add", "Adds two integers.", json!({"type": "object"}));
/// let group = DeferredGroup::new("MathTools", "Math operations", vec![Arc::new(add)]);
/// assert_eq!(group.tools[0].name, "add");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DeferredGroup {
    /// The harness name (the container's name).
    pub name: String,
    /// The harness's collapse description.
    pub description: String,
    /// Its registered members, in declaration order.
    pub tools: Vec<Arc<ToolDefinition>>,
}

impl DeferredGroup {
    /// A group of deferred tools.
    ///
    /// ```
    /// use hpd_agent::chat::DeferredGroup;
    ///
    /// let group = DeferredGroup::new("Empty", "Nothing yet", Vec::new());
    /// assert!(group.tools.is_empty());
    /// ```
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        tools: Vec<Arc<ToolDefinition>>,
    ) -> Self {
        DeferredGroup {
            name: name.into(),
            description: description.into(),
            tools,
        }
    }
}

impl<'a> ChatRequest<'a> {
    /// A request without options.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    /// use hpd_agent::chat::{ChatRequest, ModelOptions};
    ///
    /// let messages = [ChatMessage::user("Hi")];
    /// let request = ChatRequest::new("Be brief.", &messages, &[]);
    /// assert_eq!(request.instructions, "Be brief.");
    /// assert!(request.options.is_empty());
    /// assert!(ModelOptions::none().is_empty());
    /// ```
    #[must_use]
    pub fn new(
        instructions: &'a str,
        messages: &'a [ChatMessage],
        tools: &'a [Arc<ToolDefinition>],
    ) -> Self {
        ChatRequest {
            instructions,
            messages,
            tools,
            deferred: &[],
            tool_search: None,
            options: ModelOptions::none(),
            output: None,
        }
    }

    /// The request with a schema for the final answer.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    /// use hpd_agent::chat::ChatRequest;
    /// use hpd_agent::output::OutputSchema;
    ///
    /// let schema = OutputSchema::new("answer", serde_json::json!({"type": "object"}))?;
    /// let messages = [ChatMessage::user("Hi")];
    /// let request = ChatRequest::new("", &messages, &[]).with_output(Some(&schema));
    /// assert_eq!(request.output.map(OutputSchema::name), Some("answer"));
    /// # Ok::<(), hpd_agent::output::OutputSchemaError>(())
    /// ```
    #[must_use]
    pub fn with_output(mut self, output: Option<&'a OutputSchema>) -> Self {
        self.output = output;
        self
    }

    /// The request with these deferred tools.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    /// use hpd_agent::chat::{ChatRequest, DeferredGroup};
    ///
    /// let messages = [ChatMessage::user("Hi")];
    /// let groups = [DeferredGroup::new("MathTools", "Math operations", Vec::new())];
    /// let request = ChatRequest::new("", &messages, &[]).with_deferred(&groups);
    /// assert_eq!(request.deferred[0].name, "MathTools");
    /// ```
    #[must_use]
    pub fn with_deferred(mut self, deferred: &'a [DeferredGroup]) -> Self {
        self.deferred = deferred;
        self
    }

    /// The request with a client-executed tool search of this name (see
    /// [`ChatRequest::tool_search`]).
    ///
    /// ```
    /// use hpd_agent::chat::ChatRequest;
    ///
    /// let request = ChatRequest::new("", &[], &[]).with_tool_search(Some("tool_search"));
    /// assert_eq!(request.tool_search, Some("tool_search"));
    /// assert_eq!(ChatRequest::new("", &[], &[]).tool_search, None);
    /// ```
    #[must_use]
    pub fn with_tool_search(mut self, name: Option<&'a str>) -> Self {
        self.tool_search = name;
        self
    }

    /// The definition of a deferred tool by name, if this request defers one of that name.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::chat::{ChatRequest, DeferredGroup, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let add = Arc::new(ToolDefinition::new("add", "", json!({})));
    /// let groups = [DeferredGroup::new("MathTools", "Math operations", vec![add])];
    /// let request = ChatRequest::new("", &[], &[]).with_deferred(&groups);
    /// assert_eq!(request.deferred_tool("add").map(|(g, _)| g.name.as_str()), Some("MathTools"));
    /// assert!(request.deferred_tool("sub").is_none());
    /// ```
    #[must_use]
    pub fn deferred_tool(
        &self,
        name: &str,
    ) -> Option<(&'a DeferredGroup, &'a Arc<ToolDefinition>)> {
        self.deferred
            .iter()
            .find_map(|g| g.tools.iter().find(|t| t.name == name).map(|t| (g, t)))
    }

    /// The request with these options.
    ///
    /// ```
    /// use hpd_agent::ChatMessage;
    /// use hpd_agent::chat::{ChatRequest, ModelOptions};
    ///
    /// let messages = [ChatMessage::user("Hi")];
    /// let options = ModelOptions::new().with_max_output_tokens(64);
    /// let request = ChatRequest::new("", &messages, &[]).with_options(&options);
    /// assert_eq!(request.options.max_output_tokens, Some(64));
    /// ```
    #[must_use]
    pub fn with_options(mut self, options: &'a ModelOptions) -> Self {
        self.options = options;
        self
    }
}

/// The model's answer to one request.
///
/// ```
/// use hpd_agent::{ChatResponse, ToolCall};
/// use hpd_agent::chat::{FinishReason, Usage};
///
/// let done = ChatResponse::text("It is sunny.");
/// assert_eq!((done.text.as_deref(), done.finish_reason.clone()), (Some("It is sunny."), FinishReason::Stop));
/// let calling = ChatResponse::tool_calls(vec![ToolCall::new("c1", "get_weather", "{}")])
///     .with_usage(Usage::new(50, 8));
/// assert_eq!(calling.finish_reason, FinishReason::ToolCalls);
/// assert_eq!(calling.usage.input_tokens, 50);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The text part, if any.
    pub text: Option<String>,
    /// The tool calls, in order. Empty when the model is done.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage of this request.
    pub usage: Usage,
    /// Why the model stopped. [`FinishReason::Length`] means the reply is cut off.
    pub finish_reason: FinishReason,
    /// The model's reasoning, in order, where the provider sends it.
    pub reasoning: Vec<Reasoning>,
}

impl ChatResponse {
    /// A response with only text.
    ///
    /// ```
    /// use hpd_agent::ChatResponse;
    /// use hpd_agent::chat::FinishReason;
    ///
    /// let response = ChatResponse::text("Done.");
    /// assert_eq!(response.text.as_deref(), Some("Done."));
    /// assert!(response.tool_calls.is_empty());
    /// assert_eq!(response.finish_reason, FinishReason::Stop);
    /// ```
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        ChatResponse {
            text: Some(text.into()),
            ..ChatResponse::default()
        }
    }

    /// A response with only tool calls (finish reason [`FinishReason::ToolCalls`]).
    ///
    /// ```
    /// use hpd_agent::{ChatResponse, ToolCall};
    ///
    /// let response = ChatResponse::tool_calls(vec![
    ///     ToolCall::new("c1", "get_weather", r#"{"city": "Oslo"}"#),
    ///     ToolCall::new("c2", "get_weather", r#"{"city": "Rome"}"#),
    /// ]);
    /// assert_eq!(response.tool_calls.len(), 2);
    /// assert_eq!(response.text, None);
    /// ```
    #[must_use]
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        ChatResponse {
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            ..ChatResponse::default()
        }
    }

    /// The response with this finish reason.
    ///
    /// ```
    /// use hpd_agent::ChatResponse;
    /// use hpd_agent::chat::FinishReason;
    ///
    /// let cut = ChatResponse::text("Once upon a").with_finish_reason(FinishReason::Length);
    /// assert!(cut.finish_reason.is_truncated());
    /// ```
    #[must_use]
    pub fn with_finish_reason(mut self, finish_reason: FinishReason) -> Self {
        self.finish_reason = finish_reason;
        self
    }

    /// Sets the model's reasoning, in order.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: Vec<Reasoning>) -> Self {
        self.reasoning = reasoning;
        self
    }

    /// Sets the text part (a response may carry text and tool calls together).
    ///
    /// ```
    /// use hpd_agent::{ChatResponse, ToolCall};
    ///
    /// let response = ChatResponse::tool_calls(vec![ToolCall::new("c1", "now", "{}")])
    ///     .with_text("Let me check the time.");
    /// assert_eq!(response.text.as_deref(), Some("Let me check the time."));
    /// ```
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// The response with this usage.
    ///
    /// ```
    /// use hpd_agent::ChatResponse;
    /// use hpd_agent::chat::Usage;
    ///
    /// let response = ChatResponse::text("Hi").with_usage(Usage::new(10, 2).with_cached_input_tokens(8));
    /// assert_eq!(response.usage.cached_input_tokens, 8);
    /// ```
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }
}
