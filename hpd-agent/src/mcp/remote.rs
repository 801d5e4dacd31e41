//! [`McpClient`]: what the application (rather than the model) reaches of a connected MCP
//! server: its resources, prompts and completion, next to the harness of its tools.

use std::sync::Arc;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, GetPromptRequestParams, Reference,
};
use serde_json::Value;

use super::source::Source;
use super::{
    CompletionRequest, McpError, PromptArgument, PromptMessage, ResourceInfo, ResourceTemplateInfo,
    resource_tools,
};
use crate::chat::ContentPart;
use crate::harness::DynamicHarness;

/// A prompt as a server lists it.
///
/// ```
/// use hpd_agent::mcp::PromptInfo;
///
/// let info = PromptInfo::new("review");
/// assert!(info.arguments.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptInfo {
    /// Its name, for [`McpClient::get_prompt`].
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
}

impl PromptInfo {
    /// A prompt with a name and nothing else.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        PromptInfo {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
        }
    }
}

/// A prompt as [`McpClient::get_prompt`] returns it: its messages, to put into a conversation.
///
/// ```
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::mcp::{PromptMessage, PromptMessages};
///
/// let prompt = PromptMessages::new(vec![PromptMessage::user(ContentPart::text("Hi"))]);
/// assert_eq!(prompt.messages.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptMessages {
    /// What the server says the prompt is.
    pub description: Option<String>,
    /// Its messages, in order.
    pub messages: Vec<PromptMessage>,
}

impl PromptMessages {
    /// Messages without a description.
    #[must_use]
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        PromptMessages {
            description: None,
            messages,
        }
    }
}

/// What [`McpClient::complete`] completes an argument of.
///
/// ```
/// use hpd_agent::mcp::CompletionTarget;
///
/// let target = CompletionTarget::Prompt("plan_trip".into());
/// assert_ne!(target, CompletionTarget::ResourceTemplate("users://{id}".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// An argument of the prompt of this name.
    Prompt(String),
    /// A variable of the resource template with this URI template.
    ResourceTemplate(String),
}

/// The values a server suggests for an argument.
///
/// ```
/// use hpd_agent::mcp::Completions;
///
/// let none = Completions::default();
/// assert!(none.values.is_empty() && !none.has_more);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Completions {
    /// The suggestions, most relevant first (at most 100).
    pub values: Vec<String>,
    /// How many there are in all, when the server says.
    pub total: Option<u32>,
    /// Whether there are more than `values` holds.
    pub has_more: bool,
}

/// A connected MCP server for the application: its tools as a harness
/// ([`harness`](Self::harness)), and its resources, prompts and completion as methods, which
/// a program (a prompt picker, an `@`-mention of a resource) calls itself.
///
/// Made by [`McpHarness::connect_client`](super::McpHarness::connect_client). The client and
/// its harness share one connection (with its restarts); it stays open while either is held.
///
/// ```
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::mcp::{McpHarness, McpServer, PromptArgument, PromptMessage, ServedPrompt};
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let greet = ServedPrompt::new("greet", "Greets someone", |request| async move {
///     let name = request.argument("name").unwrap_or_default().to_owned();
///     Ok(vec![PromptMessage::user(ContentPart::text(format!("Say hello to {name}.")))])
/// })
/// .with_argument(PromptArgument::required("name", "Who to greet"));
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// let server = McpServer::new(agent).with_prompt(greet).with_bearer_token("t").serve_http("127.0.0.1:0".parse()?).await?;
///
/// let client = McpHarness::http("Prompts", server.url()).with_header("Authorization", "Bearer t").connect_client().await?;
/// assert_eq!(client.list_prompts().await?[0].name, "greet");
/// let prompt = client.get_prompt("greet", [("name", "Ada")]).await?;
/// assert_eq!(prompt.messages, [PromptMessage::user(ContentPart::text("Say hello to Ada."))]);
/// let agent = AgentBuilder::new().with_harness(client.harness()).with_chat_client(ScriptedChatClient::new()).build()?;
/// # drop(agent);
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpClient {
    harness: DynamicHarness,
    source: Arc<Source>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.source.name())
            .finish_non_exhaustive()
    }
}

impl McpClient {
    pub(super) fn new(harness: DynamicHarness, source: Arc<Source>) -> Self {
        McpClient { harness, source }
    }

    /// The harness of the server's tools (and of its resources, see
    /// [`McpHarness::without_resources`](super::McpHarness::without_resources)), to register
    /// with an agent.
    #[must_use]
    pub fn harness(&self) -> DynamicHarness {
        self.harness.clone()
    }

    /// The server's name (the harness name).
    #[must_use]
    pub fn name(&self) -> &str {
        self.source.name()
    }

    /// Fails with a clear error when the server did not declare `capability`.
    fn require(&self, method: &str, capability: &str, declared: bool) -> Result<(), McpError> {
        if declared {
            Ok(())
        } else {
            Err(McpError::Request {
                server: self.source.name().to_owned(),
                method: method.to_owned(),
                message: format!("the server does not offer {capability}"),
                code: None,
            })
        }
    }

    fn capabilities(&self, method: &str) -> Result<rmcp::model::ServerCapabilities, McpError> {
        Ok(self
            .source
            .connection(method)?
            .capabilities()
            .unwrap_or_default())
    }

    /// The server's resources (`resources/list`, every page).
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when the server offers no resources or answers with an error,
    /// [`McpError::Timeout`] when it does not answer in time.
    pub async fn list_resources(&self) -> Result<Vec<ResourceInfo>, McpError> {
        let capabilities = self.capabilities("resources/list")?;
        self.require(
            "resources/list",
            "resources",
            capabilities.resources.is_some(),
        )?;
        resource_tools::list_resources(&self.source).await
    }

    /// The server's resource templates (`resources/templates/list`, every page).
    ///
    /// # Errors
    ///
    /// As [`list_resources`](Self::list_resources).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, McpError> {
        let capabilities = self.capabilities("resources/templates/list")?;
        self.require(
            "resources/templates/list",
            "resources",
            capabilities.resources.is_some(),
        )?;
        resource_tools::list_templates(&self.source).await
    }

    /// Reads a resource (`resources/read`): text as [`ContentPart::Resource`] with text, images
    /// as [`ContentPart::Image`], other binary data as [`ContentPart::Resource`] with a blob.
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when the server offers no resources or answers with an error
    /// (for a URI it does not have: code `-32002`, or `-32602` from 2026-07-28 on),
    /// [`McpError::Timeout`] when it does not answer in time.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ContentPart>, McpError> {
        let capabilities = self.capabilities("resources/read")?;
        self.require(
            "resources/read",
            "resources",
            capabilities.resources.is_some(),
        )?;
        resource_tools::read(&self.source, uri).await
    }

    /// The server's prompts (`prompts/list`, every page).
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when the server offers no prompts or answers with an error,
    /// [`McpError::Timeout`] when it does not answer in time.
    pub async fn list_prompts(&self) -> Result<Vec<PromptInfo>, McpError> {
        let capabilities = self.capabilities("prompts/list")?;
        self.require("prompts/list", "prompts", capabilities.prompts.is_some())?;
        let connection = self.source.connection("prompts/list")?;
        let prompts = connection
            .request("prompts/list", self.source.timeout(), |peer| async move {
                peer.list_all_prompts().await
            })
            .await?;
        Ok(prompts
            .iter()
            .map(|prompt| PromptInfo {
                name: prompt.name.clone(),
                title: prompt.title.clone(),
                description: prompt.description.clone(),
                arguments: prompt
                    .arguments
                    .iter()
                    .flatten()
                    .map(PromptArgument::from_mcp)
                    .collect(),
            })
            .collect())
    }

    /// Gets a prompt with its arguments (`prompts/get`).
    ///
    /// A prompt that asks (2026-07-28 `input_required` rounds; on the session revisions the
    /// server's requests) is answered by the harness's own handlers: its elicitation handler
    /// ([`McpHarness::with_elicitation_handler`](super::McpHarness::with_elicitation_handler)),
    /// its roots, and for sampling the model of an agent whose call of this server is in
    /// flight, if any. The application's call has no run that could pause, so a deferred
    /// question fails it.
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when the server offers no prompts or answers with an error (an
    /// unknown prompt, a missing required argument: code `-32602`), or asks for input this
    /// client cannot give; [`McpError::Timeout`] when it does not answer in time.
    pub async fn get_prompt<I, K, V>(
        &self,
        name: &str,
        arguments: I,
    ) -> Result<PromptMessages, McpError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let capabilities = self.capabilities("prompts/get")?;
        self.require("prompts/get", "prompts", capabilities.prompts.is_some())?;
        let arguments: serde_json::Map<String, Value> = arguments
            .into_iter()
            .map(|(key, value)| (key.into(), Value::String(value.into())))
            .collect();
        let connection = self.source.connection("prompts/get")?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        let result = connection.get_prompt(params, self.source.timeout()).await?;
        Ok(PromptMessages {
            description: result.description.clone(),
            messages: result
                .messages
                .iter()
                .map(PromptMessage::from_mcp)
                .collect(),
        })
    }

    /// Asks for values of a prompt argument or a resource-template variable
    /// (`completion/complete`); the request's context carries arguments already chosen.
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when the server offers no completion or answers with an error,
    /// [`McpError::Timeout`] when it does not answer in time.
    pub async fn complete(
        &self,
        target: CompletionTarget,
        request: CompletionRequest,
    ) -> Result<Completions, McpError> {
        let capabilities = self.capabilities("completion/complete")?;
        self.require(
            "completion/complete",
            "completion",
            capabilities.completions.is_some(),
        )?;
        let reference = match target {
            CompletionTarget::Prompt(name) => Reference::for_prompt(name),
            CompletionTarget::ResourceTemplate(uri) => Reference::for_resource(uri),
        };
        let mut params = CompleteRequestParams::new(
            reference,
            ArgumentInfo::new(request.argument, request.value),
        );
        if !request.context.is_empty() {
            params = params.with_context(CompletionContext::with_arguments(
                request.context.into_iter().collect(),
            ));
        }
        let connection = self.source.connection("completion/complete")?;
        let result = connection
            .request("completion/complete", self.source.timeout(), |peer| {
                let params = params.clone();
                async move { peer.complete(params).await }
            })
            .await?;
        Ok(Completions {
            values: result.completion.values,
            total: result.completion.total,
            has_more: result.completion.has_more.unwrap_or(false),
        })
    }
}
