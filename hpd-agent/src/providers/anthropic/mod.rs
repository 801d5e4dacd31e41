//! [`AnthropicClient`]: a [`ChatClient`] for the Anthropic Messages API, with tools, prompt
//! caching and extended thinking.
//!
//! It works with api.anthropic.com and with servers that speak the same API (llama.cpp's
//! `/v1/messages`): point [`AnthropicClient::with_base_url`] or `ANTHROPIC_BASE_URL` at them.
//!
//! ```no_run
//! use hpd_agent::{ChatClient, ChatMessage};
//! use hpd_agent::providers::anthropic::AnthropicClient;
//! use hpd_agent::chat::ChatRequest;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
//! let client = AnthropicClient::from_env("claude-sonnet-4-5")?;
//! let messages = [ChatMessage::user("Why is the sky blue?")];
//! let response = client
//!     .complete(ChatRequest::new("Be brief.", &messages, &[]), &|delta: &str| print!("{delta}"))
//!     .await?;
//! println!("\n{:?}", response.usage);
//! # Ok(())
//! # }
//! ```
//!
//! Error policy: as for [`OpenAiClient`](crate::providers::openai::OpenAiClient) (see [`crate::providers::openai`]): HTTP
//! 429, 529 (overloaded), other 5xx, failures to connect and connections closed before the
//! answer (a stale pooled connection) are retried with backoff and jitter, honouring
//! `retry-after`; a stream of which bytes have arrived is never retried; an `error`
//! event inside a stream is [`ChatError::Status`] with the status its error type stands for
//! (`overloaded_error` 529, `rate_limit_error` 429, `api_error` 500, ...); a stream that ends
//! before `message_stop` and without a stop reason is [`ChatError::Transport`].

mod stream;
mod wire;

use std::fmt;

use async_trait::async_trait;

use crate::chat::{ChatClient, ChatError, ChatRequest, ChatResponse, DeferredTools, TextSink};
use crate::providers::http::encode_body;
use crate::providers::settings::{Api, HttpSettings};

pub(crate) use stream::StreamAssembler;
use wire::{Settings, TOOL_CHANGES_BETA, parse_message, request_body};

/// The base URL used when none is given: the Anthropic API (requests go to
/// `{base_url}/v1/messages`).
///
/// ```
/// use hpd_agent::providers::anthropic::AnthropicClient;
/// use hpd_agent::providers::anthropic::DEFAULT_BASE_URL;
///
/// assert_eq!(AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?.base_url(), DEFAULT_BASE_URL);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header every request carries.
///
/// ```
/// assert_eq!(hpd_agent::providers::anthropic::API_VERSION, "2023-06-01");
/// ```
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when [`ModelOptions::max_output_tokens`](crate::chat::ModelOptions::max_output_tokens)
/// is not set (the API requires one).
///
/// ```
/// use hpd_agent::providers::anthropic::AnthropicClient;
/// use hpd_agent::providers::anthropic::DEFAULT_MAX_TOKENS;
///
/// assert_eq!(DEFAULT_MAX_TOKENS, 4096);
/// // Replies of this client may be longer unless a run sets `max_output_tokens`.
/// let client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?.with_default_max_tokens(8192);
/// # drop(client);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A [`ChatClient`] for the Anthropic Messages API (`POST {base_url}/v1/messages`).
///
/// It streams by default; text deltas reach the [`TextSink`] as they arrive and tool inputs
/// are assembled from their `input_json_delta` pieces. Requests carry `x-api-key` and
/// `anthropic-version` headers.
///
/// Mapping of the conversation:
///
/// | [`ChatRequest`] | Messages API |
/// |---|---|
/// | `instructions` | top-level `system` (one text block), omitted when empty |
/// | [`ChatMessage::User`](crate::ChatMessage::User) | a `user` message with one text block |
/// | [`ChatMessage::Assistant`](crate::ChatMessage::Assistant) | an `assistant` message: its signed `thinking` (and `redacted_thinking`) blocks first, then the text, then one `tool_use` block per call with the arguments parsed as `input` (`{}` when they are not a JSON object) |
/// | [`ChatMessage::Tool`](crate::ChatMessage::Tool) | a `tool_result` block with `is_error` when set; the results of one response go in one `user` message (consecutive messages of one role are merged) |
/// | `tools` | `[{"name", "description", "input_schema"}]` |
/// | `deferred` (the native collapsing layout) | appended to `tools`, each with `"defer_loading": true`; a [`ChatMessage::Tool`](crate::ChatMessage::Tool) with `references` is a `tool_result` whose `content` is its text block followed by one `{"type": "tool_reference", "tool_name"}` block per reference |
/// | the same with [`DeferredTools::ToolAdditions`] | the deferred tools as above, with `"strict": true` and their schema closed where it qualifies; results with `references` are plain `tool_result`s, and the `user` message of a response's results is followed by `{"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name"}}, ...]}` naming the tools they load (those the request defers); every request that declares a deferred tool carries `anthropic-beta: mid-conversation-tool-changes-2026-07-01` |
///
/// The native layout follows the tool search page of the Messages API documentation, with
/// the client doing the search: a container is an ordinary tool (so at least one tool is not
/// deferred, as the API requires), its members are deferred, and the container's result
/// references them, so the API expands their definitions at that point of the conversation and
/// the cached prefix (tools, system text, earlier messages) stays as it was. The result keeps
/// its text before the references (the SDK's `tool_result` content type allows text and
/// reference blocks together): that text carries the container's `function_result` and system
/// prompt. A deferred tool never carries a `cache_control` breakpoint (the API refuses that);
/// the breakpoint stays on the last tool that is not deferred. Tool search is generally
/// available and needs no beta header; [`with_beta`](Self::with_beta) adds one where a platform
/// still asks for it.
///
/// The tool additions follow the request types of Anthropic's SDK (anthropic-sdk-python:
/// `BetaMessageParam` with role `system`, `BetaRequestToolAdditionBlockParam`,
/// `BetaToolChangeToolReferenceParam`, the `strict` and `defer_loading` of `BetaToolParam`, and
/// the beta name of `AnthropicBetaParam`) and the mid-conversation system messages page
/// (<https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages>),
/// whose availability note gives the models of the default. The members are declared deferred
/// from the first request on: Anthropic is reported (a measurement, not the documentation) to
/// add hidden scaffolding to the prompt as soon as any tool is deferred, which would otherwise
/// change the cached prefix when the first addition arrives.
/// A later beta (`inline-tools-2026-09-15`) is reported to let a `tool_addition` define a tool
/// by value; it appears in neither the SDK's beta names nor its block types, so this client
/// does not use it: an added tool is always one the request declares.
///
/// Prompt caching (on by default, [`with_prompt_caching`](Self::with_prompt_caching)): a
/// `cache_control` breakpoint goes on the last tool, on the system text and on the last block
/// of the last message, so each request of a tool loop re-reads the prefix the previous one
/// wrote. [`Usage::input_tokens`](crate::chat::Usage::input_tokens) counts the whole prompt (the
/// API's `input_tokens` plus `cache_read_input_tokens` and `cache_creation_input_tokens`);
/// `cached_input_tokens` is `cache_read_input_tokens`.
///
/// [`ModelOptions`](crate::chat::ModelOptions): `max_output_tokens` is `max_tokens` (default
/// [`DEFAULT_MAX_TOKENS`]), `temperature`, `top_p`, `stop` as `stop_sequences`, `tool_choice`
/// as `auto` / `none` / `any` / `{"type": "tool", "name"}`, `parallel_tool_calls: false` as
/// `disable_parallel_tool_use` (sent only with tools); `seed` has no counterpart and is
/// ignored. `extra` is merged last: extended thinking is
/// `extra: {"thinking": {"type": "enabled", "budget_tokens": 2048}}`; its blocks come back as
/// [`Reasoning`](crate::chat::Reasoning) with their signatures and are sent back with the assistant
/// message, as the API requires during tool loops.
///
/// Stop reasons: `end_turn` and `stop_sequence` are `Stop`, `tool_use` is `ToolCalls`,
/// `max_tokens` and `model_context_window_exceeded` are `Length`, `refusal` is
/// `ContentFilter`, anything else `Other`.
///
/// Cloning is cheap; the API key is never printed by `Debug` nor shown in an error.
///
/// ```
/// use hpd_agent::AgentBuilder;
/// use hpd_agent::providers::anthropic::AnthropicClient;
///
/// let client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-secret")?
///     .with_base_url("http://127.0.0.1:8080")?; // e.g. llama.cpp's Anthropic endpoint
/// assert!(!format!("{client:?}").contains("sk-ant-secret")); // the key is never printed
/// let agent = AgentBuilder::new().with_chat_client(client).build()?;
/// # drop(agent);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct AnthropicClient {
    settings: HttpSettings,
    prompt_caching: bool,
    default_max_tokens: u32,
    /// Set by [`with_deferred_tools`](AnthropicClient::with_deferred_tools); `None` decides by
    /// the base URL's host and the model.
    deferred: Option<DeferredTools>,
    tool_images: crate::chat::ToolImages,
}

/// The model names (prefixes) with mid-conversation system messages, as the availability note
/// of the mid-conversation system messages page lists them
/// (<https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages>):
/// Opus 4.8, Opus 5 and 5.5, Sonnet 5.5, Haiku 5.5, Fable 5 and 5.1, Mythos 5 and 5.1; not
/// Sonnet 5.
const TOOL_CHANGE_MODELS: &[&str] = &[
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-fable-5",
    "claude-mythos-5",
];

/// The Messages API, for the shared client plumbing.
static API: Api = Api {
    what: "Anthropic messages",
    default_base_url: DEFAULT_BASE_URL,
    path: "/v1/messages",
    key_header: "x-api-key",
    key_prefix: "",
    headers: &[("anthropic-version", API_VERSION)],
    key_var: "ANTHROPIC_API_KEY",
    base_url_var: "ANTHROPIC_BASE_URL",
    keyed_host: "api.anthropic.com",
    missing_key: "ANTHROPIC_API_KEY is not set; set it, or set ANTHROPIC_BASE_URL to a server \
                  that needs no key",
};

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.settings
            .debug_struct(f, "AnthropicClient")
            .field("prompt_caching", &self.prompt_caching)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("deferred_tools", &self.deferred_tools())
            .finish_non_exhaustive()
    }
}

impl AnthropicClient {
    /// A client for `model` at the Anthropic API ([`DEFAULT_BASE_URL`]) authenticating with
    /// `api_key`.
    ///
    /// An empty `api_key` sends no `x-api-key` header, for local servers that need none.
    /// Defaults: streaming and prompt caching on, timeout 120 s, 3 retries, backoff from
    /// 500 ms doubling up to 30 s.
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?;
    /// assert_eq!(client.model(), "claude-sonnet-4-5");
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP
    /// header, or when the HTTP client cannot be initialised.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, ChatError> {
        let settings = HttpSettings::new(&API, model.into(), &api_key.into())?;
        Ok(AnthropicClient::with_settings(settings))
    }

    /// A client for `model` configured from the environment.
    ///
    /// - `ANTHROPIC_BASE_URL`: the API's base URL, default [`DEFAULT_BASE_URL`] (without
    ///   `/v1`; a llama.cpp server is `http://localhost:8080`).
    /// - `ANTHROPIC_API_KEY`: the key. Required for api.anthropic.com; optional for any other
    ///   base URL.
    ///
    /// Empty variables count as unset.
    ///
    /// ```no_run
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let _client = AnthropicClient::from_env("claude-sonnet-4-5")?;
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `ANTHROPIC_API_KEY` is missing and the base URL is the
    /// Anthropic API, when `ANTHROPIC_BASE_URL` is not an `http(s)` URL, or for the reasons of
    /// [`new`](Self::new).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ChatError> {
        Self::from_lookup(model.into(), &|name| std::env::var(name).ok())
    }

    pub(crate) fn from_lookup(
        model: String,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ChatError> {
        let settings = HttpSettings::from_lookup(&API, model, lookup)?;
        Ok(AnthropicClient::with_settings(settings))
    }

    /// A client with `settings` and the Anthropic defaults: prompt caching on,
    /// [`DEFAULT_MAX_TOKENS`].
    fn with_settings(settings: HttpSettings) -> Self {
        AnthropicClient {
            settings,
            prompt_caching: true,
            default_max_tokens: DEFAULT_MAX_TOKENS,
            deferred: None,
            tool_images: crate::chat::ToolImages::Send,
        }
    }

    /// The form of deferred tool loading requests use, which the
    /// [`native`](crate::config::CollapsingLayout::Native) collapsing layout maps onto; an
    /// explicit setting always wins over the default (a config sets it as the `deferred_tools`
    /// key of its `model` object).
    ///
    /// - [`DeferredTools::ToolReferences`]: the members are declared with
    ///   `defer_loading: true`, and a container's result carries `tool_reference` blocks naming
    ///   them (tool search, generally available, no beta header).
    /// - [`DeferredTools::ToolAdditions`]: the members are declared the same way (`strict`
    ///   where their schema qualifies), and a container's results are followed by a
    ///   `{"role": "system"}` message of `tool_addition` blocks naming them (the
    ///   mid-conversation tool changes; requests then carry
    ///   `anthropic-beta: mid-conversation-tool-changes-2026-07-01`).
    /// - [`DeferredTools::Unsupported`]: no deferral; the layout falls back to
    ///   [`fixed`](crate::config::CollapsingLayout::Fixed).
    ///
    /// A form of another API ([`ToolSearch`](DeferredTools::ToolSearch),
    /// [`AdditionalTools`](DeferredTools::AdditionalTools)) turns deferral off, with a warning.
    ///
    /// The default depends on the host and the model. On the Anthropic API itself (host
    /// `api.anthropic.com`) it is `ToolAdditions` for the models the mid-conversation system
    /// messages page lists (Claude Opus 4.8, Opus 5, Opus 5.5, Sonnet 5.5, Haiku 5.5, Fable 5
    /// and 5.1, Mythos 5 and 5.1: model names starting `claude-opus-4-8`, `claude-opus-5`,
    /// `claude-sonnet-5-5`, `claude-haiku-5-5`, `claude-fable-5`, `claude-mythos-5`) and
    /// `ToolReferences` for every other model. Elsewhere it is `Unsupported`: servers that
    /// speak the Messages API without these features drop the fields silently (llama.cpp's
    /// server does). A gateway that forwards to the Anthropic API, or a server that takes
    /// `defer_loading` and `tool_reference` blocks (vLLM and SGLang are reported to), sets the
    /// form it has.
    ///
    /// ```
    /// use hpd_agent::ChatClient;
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    /// use hpd_agent::chat::DeferredTools;
    ///
    /// let claude = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?;
    /// assert_eq!(claude.deferred_tools(), DeferredTools::ToolReferences);
    /// let opus = AnthropicClient::new("claude-opus-4-8", "sk-ant-...")?;
    /// assert_eq!(opus.deferred_tools(), DeferredTools::ToolAdditions);
    /// let local = AnthropicClient::new("local", "")?.with_base_url("http://127.0.0.1:8080")?;
    /// assert_eq!(local.deferred_tools(), DeferredTools::Unsupported);
    /// let gateway = local.with_deferred_tools(DeferredTools::ToolReferences);
    /// assert_eq!(gateway.deferred_tools(), DeferredTools::ToolReferences);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_deferred_tools(mut self, form: DeferredTools) -> Self {
        self.deferred = Some(match form {
            DeferredTools::ToolReferences | DeferredTools::ToolAdditions => form,
            DeferredTools::Unsupported => form,
            other => {
                tracing::warn!(
                    form = ?other,
                    "the Anthropic Messages API has no {other:?} form of deferred tools; deferral is off"
                );
                DeferredTools::Unsupported
            }
        });
        self
    }

    /// What requests do with the images of tool results: `image` blocks inside the `tool_result` by default
    /// ([`ToolImages::Send`](crate::chat::ToolImages::Send)), or their text form
    /// ([`ToolImages::Describe`](crate::chat::ToolImages::Describe)) for a model or server that takes
    /// no images.
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// let client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?;
    /// assert_eq!(client.tool_images(), ToolImages::Send);
    /// let blind = client.with_tool_images(ToolImages::Describe);
    /// assert_eq!(blind.tool_images(), ToolImages::Describe);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_tool_images(mut self, mode: crate::chat::ToolImages) -> Self {
        self.tool_images = mode;
        self
    }

    /// What requests do with the images of tool results (see
    /// [`with_tool_images`](Self::with_tool_images)).
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// assert_eq!(AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?.tool_images(), ToolImages::Send);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn tool_images(&self) -> crate::chat::ToolImages {
        self.tool_images
    }

    /// Sends `anthropic-beta: {beta}` with every request (several calls send a comma-separated
    /// list), for features a platform still gates behind a beta header.
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let _client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?
    ///     .with_beta("tool-search-tool-2025-10-19")?;
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `beta` cannot be sent in an HTTP header.
    pub fn with_beta(mut self, beta: &str) -> Result<Self, ChatError> {
        let name = reqwest::header::HeaderName::from_static("anthropic-beta");
        let value = match self.settings.transport.header(&name) {
            Some(existing) => format!("{existing},{beta}"),
            None => beta.to_owned(),
        };
        let value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            ChatError::Config(format!(
                "the beta name '{beta}' cannot be sent in an HTTP header"
            ))
        })?;
        self.settings.transport.set_header(name, value);
        Ok(self)
    }

    /// Whether `anthropic-beta` already names `beta`.
    fn has_beta(&self, beta: &str) -> bool {
        let name = reqwest::header::HeaderName::from_static("anthropic-beta");
        self.settings
            .transport
            .header(&name)
            .is_some_and(|list| list.split(',').any(|b| b.trim() == beta))
    }

    /// Sends requests to `{base_url}/v1/messages` instead (a trailing `/` is ignored).
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let client = AnthropicClient::new("local", "")?.with_base_url("http://localhost:8080/")?;
    /// assert_eq!(client.base_url(), "http://localhost:8080");
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `base_url` is not an absolute `http` or `https` URL, or has a
    /// query or fragment.
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Result<Self, ChatError> {
        self.settings.set_base_url(base_url.as_ref())?;
        Ok(self)
    }

    /// Turns the `cache_control` breakpoints on or off (default on).
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let _client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?.with_prompt_caching(false);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_prompt_caching(mut self, prompt_caching: bool) -> Self {
        self.prompt_caching = prompt_caching;
        self
    }

    /// Sets the `max_tokens` sent when the request's options set none (default
    /// [`DEFAULT_MAX_TOKENS`]).
    ///
    /// ```
    /// use hpd_agent::providers::anthropic::AnthropicClient;
    ///
    /// let _client = AnthropicClient::new("claude-sonnet-4-5", "sk-ant-...")?.with_default_max_tokens(1024);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_default_max_tokens(mut self, max_tokens: u32) -> Self {
        self.default_max_tokens = max_tokens;
        self
    }

    super::http_setters!(
        AnthropicClient,
        "anthropic",
        "AnthropicClient::new(\"claude-sonnet-4-5\", \"sk-ant-...\")"
    );
}

#[async_trait]
impl ChatClient for AnthropicClient {
    /// Sends one Messages request (see [`AnthropicClient`] for the mapping) and returns the
    /// text, tool calls, thinking, usage and stop reason.
    ///
    /// # Errors
    ///
    /// - [`ChatError::Status`]: a status other than 2xx (after retries for 429, 529 and 5xx)
    ///   with the API's `error.message`; an `error` event or error body inside a 200 answer.
    /// - [`ChatError::Transport`]: the connection failed (after retries), broke, or the stream
    ///   ended before `message_stop` without a stop reason.
    /// - [`ChatError::Timeout`]: see [`with_timeout`](AnthropicClient::with_timeout).
    /// - [`ChatError::Malformed`]: an event or body that is not the JSON the API defines, a
    ///   stream without `message_start`, a delta for a block never started, a `tool_use`
    ///   without a name.
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let additions = self.deferred_tools() == DeferredTools::ToolAdditions;
        let settings = Settings {
            model: &self.settings.model,
            streaming: self.settings.streaming,
            prompt_caching: self.prompt_caching,
            default_max_tokens: self.default_max_tokens,
            additions,
        };
        let mut described = None;
        let request = super::with_tool_images(request, self.tool_images, &mut described);
        let body = encode_body(&request_body(request, &settings), &request.options.extra)?;
        if additions && !request.deferred.is_empty() && !self.has_beta(TOOL_CHANGES_BETA) {
            // The beta goes with every request that declares deferred tools, from the first
            // one, so the requests of a conversation differ only by what they append.
            let with_beta = self.clone().with_beta(TOOL_CHANGES_BETA)?;
            return with_beta
                .settings
                .exchange(&body, StreamAssembler::new, parse_message, text)
                .await;
        }
        self.settings
            .exchange(&body, StreamAssembler::new, parse_message, text)
            .await
    }

    fn model_info(&self) -> crate::chat::ModelInfo<'_> {
        crate::chat::ModelInfo::new("anthropic")
            .with_model(&self.settings.model)
            .with_base_url(&self.settings.base_url)
    }

    fn deferred_tools(&self) -> DeferredTools {
        self.deferred.unwrap_or_else(|| {
            if self.settings.transport.endpoint.host_str() != Some("api.anthropic.com") {
                DeferredTools::Unsupported
            } else if TOOL_CHANGE_MODELS
                .iter()
                .any(|prefix| self.settings.model.starts_with(prefix))
            {
                DeferredTools::ToolAdditions
            } else {
                DeferredTools::ToolReferences
            }
        })
    }
}

// The parser of a non-streamed body, without a connection, for the fuzz targets (which feed
// streams to `StreamAssembler` through `http::parse_stream_chunks`).
#[cfg(feature = "fuzzing")]
pub(crate) use wire::parse_message as parse_body;
