//! Prompts: what a server lists and serves, and what a client gets.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{PromptArgument as McpPromptArgument, PromptMessage as McpPromptMessage, Role};

use super::{Completer, ProviderError};
use crate::ask::{
    AskError, Asker, Asking, Elicitation, ElicitationAnswer, Root, RootsRequest, SamplingReply,
    SamplingRequest,
};
use crate::chat::ContentPart;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type PromptHandler = Arc<
    dyn Fn(PromptRequest) -> BoxFuture<Result<Vec<PromptMessage>, ProviderError>> + Send + Sync,
>;

/// An argument of a prompt, as a server declares it and a client lists it.
///
/// ```
/// use hpd_agent::mcp::PromptArgument;
///
/// let city = PromptArgument::required("city", "Where to travel");
/// assert!(city.required);
/// assert!(!PromptArgument::optional("days", "How long").required);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    pub required: bool,
}

impl PromptArgument {
    /// An argument every `prompts/get` must give.
    #[must_use]
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            required: true,
        }
    }

    /// An argument that may be left out.
    #[must_use]
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name, description)
        }
    }

    pub(crate) fn from_mcp(argument: &McpPromptArgument) -> Self {
        PromptArgument {
            name: argument.name.clone(),
            title: argument.title.clone(),
            description: argument.description.clone(),
            required: argument.required.unwrap_or(false),
        }
    }

    pub(crate) fn to_mcp(&self) -> McpPromptArgument {
        let mut argument = McpPromptArgument::new(self.name.clone()).with_required(self.required);
        argument.title.clone_from(&self.title);
        argument.description.clone_from(&self.description);
        argument
    }
}

/// Who says a [`PromptMessage`].
///
/// ```
/// use hpd_agent::mcp::PromptRole;
///
/// assert_ne!(PromptRole::User, PromptRole::Assistant);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt: a role and one content part (text, an image, audio, an embedded
/// resource or a resource link).
///
/// ```
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::mcp::{PromptMessage, PromptRole};
///
/// let ask = PromptMessage::user(ContentPart::text("Summarize the notes."));
/// assert_eq!(ask.role, PromptRole::User);
/// let notes = PromptMessage::user(ContentPart::text_resource("docs://notes", Some("text/markdown"), "# Notes"));
/// # drop(notes);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: PromptRole,
    /// What is said.
    pub content: ContentPart,
}

impl PromptMessage {
    /// A message of `role`.
    #[must_use]
    pub fn new(role: PromptRole, content: ContentPart) -> Self {
        PromptMessage { role, content }
    }

    /// A user message.
    #[must_use]
    pub fn user(content: ContentPart) -> Self {
        PromptMessage::new(PromptRole::User, content)
    }

    /// An assistant message.
    #[must_use]
    pub fn assistant(content: ContentPart) -> Self {
        PromptMessage::new(PromptRole::Assistant, content)
    }

    pub(crate) fn from_mcp(message: &McpPromptMessage) -> Self {
        PromptMessage {
            role: match message.role {
                Role::Assistant => PromptRole::Assistant,
                _ => PromptRole::User,
            },
            content: super::content::part_of(&message.content),
        }
    }

    pub(crate) fn to_mcp(&self) -> McpPromptMessage {
        let role = match self.role {
            PromptRole::User => Role::User,
            PromptRole::Assistant => Role::Assistant,
        };
        McpPromptMessage::new(role, super::content::block_of(&self.content))
    }
}

/// What a prompt is asked: its arguments (the required ones are always there), and a way to
/// ask the client while the prompt is made.
///
/// ```
/// use hpd_agent::mcp::PromptRequest;
///
/// let request = PromptRequest::new("plan_trip").with_argument("city", "Paris");
/// assert_eq!(request.argument("city"), Some("Paris"));
/// ```
///
/// # Asking the client
///
/// A prompt can ask the client as a function can ([`FunctionContext`](crate::FunctionContext)):
/// for a completion of its model ([`sample`](Self::sample)), for input from its user
/// ([`elicit`](Self::elicit)), for its roots ([`roots`](Self::roots)). On the session
/// revisions (2025-06-18, 2025-11-25) each ask is a request to the client while `prompts/get`
/// waits. On 2026-07-28 the first ask without an answer ends the request with an
/// `input_required` result that asks for it; the client sends `prompts/get` again with the
/// answers, and the prompt runs again from the start, its earlier asks now answered (so a
/// prompt that asks should do nothing else it would mind repeating). The answers of earlier
/// rounds come back sealed in the `requestState`, bound to the prompt and its arguments.
/// Asks are matched to answers by key: give each ask its own with `with_key`, or they are
/// `elicitation-1`, `sampling-2`, ... in the order the prompt asks. Outside a server (a
/// request made with [`new`](Self::new)) nobody answers: [`AskError::NoHandler`].
///
/// ```
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::mcp::{PromptMessage, ServedPrompt};
/// use hpd_agent::tool::{ElicitAction, Elicitation};
/// use serde_json::json;
///
/// let review = ServedPrompt::new("review", "Reviews with the user's focus", |request| async move {
///     let form = Elicitation::form(
///         "What should the review focus on?",
///         json!({"type": "object", "properties": {"focus": {"type": "string"}}, "required": ["focus"]}),
///     )
///     .with_key("focus");
///     let focus = match request.elicit(form).await {
///         Ok(answer) if answer.action == ElicitAction::Accept => {
///             answer.field("focus").and_then(|v| v.as_str()).unwrap_or("anything").to_owned()
///         }
///         // Declined, or a client that cannot be asked: a prompt without the focus.
///         _ => "anything".to_owned(),
///     };
///     Ok(vec![PromptMessage::user(ContentPart::text(format!("Review the change; focus on {focus}.")))])
/// });
/// # drop(review);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct PromptRequest {
    /// The prompt's name.
    pub name: String,
    /// The arguments the client gave.
    pub arguments: BTreeMap<String, String>,
    /// Who answers the prompt's asks: the client of the request being served.
    asking: Asking,
}

impl std::fmt::Debug for PromptRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptRequest")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// Two requests are equal when they ask the same prompt with the same arguments.
impl PartialEq for PromptRequest {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.arguments == other.arguments
    }
}

impl Eq for PromptRequest {}

impl PromptRequest {
    /// A request without arguments (for testing a prompt); nobody answers its asks.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        PromptRequest {
            name: name.into(),
            arguments: BTreeMap::new(),
            asking: Asking::default(),
        }
    }

    /// The request a server makes, its asks answered by `asker`.
    pub(crate) fn served(
        name: impl Into<String>,
        arguments: BTreeMap<String, String>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Self {
        PromptRequest {
            name: name.into(),
            arguments,
            asking: Asking::new(asker),
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments.insert(name.into(), value.into());
        self
    }

    /// An argument's value.
    #[must_use]
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }

    /// Asks the client's model for a completion (MCP sampling); see
    /// [asking the client](Self#asking-the-client).
    ///
    /// # Errors
    ///
    /// An [`AskError`]: nobody answers here, the client did not declare sampling, it refused
    /// or failed.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingReply, AskError> {
        self.asking.sample(request).await
    }

    /// Asks the client's user for input, a form (accepted content is checked against its
    /// schema) or a URL to visit (MCP elicitation); see
    /// [asking the client](Self#asking-the-client).
    ///
    /// # Errors
    ///
    /// An [`AskError`]: nobody answers here, the client did not declare the mode, it failed,
    /// accepted content does not fit the schema.
    pub async fn elicit(&self, request: Elicitation) -> Result<ElicitationAnswer, AskError> {
        self.asking.elicit(request).await
    }

    /// Asks the client for its roots (MCP roots); see
    /// [asking the client](Self#asking-the-client).
    ///
    /// # Errors
    ///
    /// An [`AskError`]: nobody answers here, the client did not declare roots, asking failed.
    pub async fn roots(&self, request: RootsRequest) -> Result<Vec<Root>, AskError> {
        self.asking.roots(request).await
    }
}

/// A prompt an [`McpServer`](super::McpServer) serves; see
/// [`McpServer::with_prompt`](super::McpServer::with_prompt).
///
/// `prompts/get` with a required argument missing, or with an argument the prompt does not
/// declare, is answered with `-32602` (invalid params) naming it, before the prompt runs.
///
/// ```
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::mcp::{Completer, PromptArgument, PromptMessage, ServedPrompt};
///
/// let plan = ServedPrompt::new("plan_trip", "Plans a trip", |request| async move {
///     let city = request.argument("city").unwrap_or_default().to_owned();
///     Ok(vec![PromptMessage::user(ContentPart::text(format!("Plan three days in {city}.")))])
/// })
/// .with_argument(PromptArgument::required("city", "Where to go"))
/// .with_completion("city", Completer::values(["Paris", "Prague", "Porto"]));
/// # drop(plan);
/// ```
#[derive(Clone)]
#[must_use]
pub struct ServedPrompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) handler: PromptHandler,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl std::fmt::Debug for ServedPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedPrompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("completions", &self.completers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ServedPrompt {
    /// A prompt whose messages `get` makes from the request's arguments.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, get: F) -> Self
    where
        F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, ProviderError>> + Send + 'static,
    {
        ServedPrompt {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            handler: Arc::new(move |request| Box::pin(get(request))),
            completers: BTreeMap::new(),
        }
    }

    /// A title for people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Declares an argument, listed in this order.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Completes the argument `argument` (serving fails to start when the prompt declares no
    /// such argument). Arguments without a completer complete to nothing.
    pub fn with_completion(mut self, argument: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(argument.into(), completer);
        self
    }

    /// The prompt's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}
