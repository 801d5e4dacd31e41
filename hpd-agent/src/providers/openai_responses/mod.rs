//! [`OpenAiResponsesClient`]: a [`ChatClient`] for the OpenAI Responses API
//! (`POST {base_url}/responses`).
//!
//! It works with api.openai.com and with servers that speak the same API (llama.cpp's
//! `/v1/responses`); the configuration is the one of [`OpenAiClient`](crate::providers::openai::OpenAiClient):
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL`.
//!
//! ```no_run
//! use hpd_agent::{ChatClient, ChatMessage};
//! use hpd_agent::chat::ChatRequest;
//! use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
//! let client = OpenAiResponsesClient::from_env("gpt-4o-mini")?;
//! let messages = [ChatMessage::user("Why is the sky blue?")];
//! let response = client
//!     .complete(ChatRequest::new("Be brief.", &messages, &[]), &|delta: &str| print!("{delta}"))
//!     .await?;
//! println!("\n{:?}", response.usage);
//! # Ok(())
//! # }
//! ```
//!
//! Error policy: as for [`OpenAiClient`](crate::providers::openai::OpenAiClient) (see [`crate::providers::openai`]); in a
//! stream, `response.failed` and `error` events are [`ChatError::Status`], and a stream that
//! ends before `response.completed` (or `response.incomplete`) is [`ChatError::Transport`].

mod stream;
mod wire;

use std::fmt;

use async_trait::async_trait;

use crate::chat::{ChatClient, ChatError, ChatRequest, ChatResponse, DeferredTools, TextSink};
use crate::providers::http::encode_body;
use crate::providers::openai::DEFAULT_BASE_URL;
use crate::providers::settings::{Api, HttpSettings};

pub(crate) use stream::StreamAssembler;
use wire::{parse_response, request_body};

/// A [`ChatClient`] for the OpenAI Responses API.
///
/// It streams by default. The whole conversation is sent with every request (`store: false`
/// by default, so the server keeps nothing; [`with_store`](Self::with_store) changes that but
/// the client still sends the whole history).
///
/// Mapping of the conversation:
///
/// | [`ChatRequest`] | Responses API |
/// |---|---|
/// | `instructions` | `instructions`, omitted when empty |
/// | [`ChatMessage::User`](crate::ChatMessage::User) | `{"type": "message", "role": "user", "content"}` |
/// | [`ChatMessage::Assistant`](crate::ChatMessage::Assistant) | its reasoning items that carry `encrypted_content` (the only form a server without stored items accepts), then `{"type": "message", "role": "assistant", "content"}` when it has text, then one `{"type": "function_call", "call_id", "name", "arguments"}` per call (empty arguments as `{}`) |
/// | [`ChatMessage::Tool`](crate::ChatMessage::Tool) | `{"type": "function_call_output", "call_id", "output"}`; `is_error` has no field and is dropped |
/// | `tools` | `[{"type": "function", "name", "description", "parameters"}]` |
/// | `deferred` (the native collapsing layout) | one `{"type": "namespace", "name", "description", "tools"}` a group, its functions with `"defer_loading": true`, and one client-executed `{"type": "tool_search", "execution": "client", "description", "parameters"}` whose `namespace` argument names a group |
///
/// With [`DeferredTools::AdditionalTools`] no namespace and no `tool_search` is sent: each
/// container is a function of `tools`, and the `function_call_output`s of a response whose
/// results load deferred functions are followed by one
/// `{"type": "additional_tools", "role": "developer", "tools": [...]}` item holding their
/// definitions as function tools (`name`, `description`, `parameters`, `strict`: `true` with
/// the schema closed where it qualifies), after which the model calls them by their own names
/// (no `namespace`). The item follows openai-python's `AdditionalTools` input item and
/// `FunctionToolParam` (`types/responses/response_input_item_param.py`, `function_tool_param.py`).
///
/// In the native layout a `tool_search_call` of the model becomes a [`ToolCall`](crate::ToolCall)
/// of the name the request gives as [`ChatRequest::tool_search`] (its `arguments` object as
/// text), which the agent answers like a
/// call of the container it names. Sent back, that call is a `tool_search_call` item again, and
/// its result a `tool_search_output` whose `tools` hold the loaded namespace (its description
/// followed by the result text, so a container's `function_result` and system prompt reach the
/// model). Calls of a loaded function go back with their `namespace`. The search is executed
/// by the client, not hosted, so that the agent sees each expansion: it creates the harness's
/// scoped middleware, emits its events and applies recovery, as in every other layout.
///
/// Message items are always written with `"type": "message"` (llama.cpp rejects them
/// without).
///
/// [`ModelOptions`](crate::chat::ModelOptions): `temperature`, `top_p`, `max_output_tokens`,
/// `tool_choice` (`auto` / `none` / `required` / `{"type": "function", "name"}`) and
/// `parallel_tool_calls` (both only with tools); the API has no `stop` and no `seed`: both
/// are ignored. `extra` is merged last; reasoning models return their reasoning encrypted
/// (to be sent back in tool loops) with `extra: {"include": ["reasoning.encrypted_content"]}`.
///
/// Finish reasons: `status: "incomplete"` with `max_output_tokens` is `Length`, with
/// `content_filter` `ContentFilter`; a completed response is `ToolCalls` when it has function
/// calls, else `Stop`. Usage: `input_tokens`, `output_tokens`,
/// `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`.
///
/// Cloning is cheap; the API key is never printed by `Debug` nor shown in an error.
///
/// ```
/// use hpd_agent::AgentBuilder;
/// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
///
/// let client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-secret")?.with_store(false);
/// assert!(!format!("{client:?}").contains("sk-secret")); // the key is never printed
/// let agent = AgentBuilder::new().with_chat_client(client).build()?;
/// # drop(agent);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct OpenAiResponsesClient {
    settings: HttpSettings,
    store: bool,
    /// Set by [`with_deferred_tools`](OpenAiResponsesClient::with_deferred_tools); `None`
    /// decides by the base URL's host and the model.
    deferred: Option<DeferredTools>,
    tool_images: crate::chat::ToolImages,
}

/// The Responses API, for the shared client plumbing.
static API: Api = Api {
    what: "OpenAI responses",
    default_base_url: DEFAULT_BASE_URL,
    path: "/responses",
    key_header: "authorization",
    key_prefix: "Bearer ",
    headers: &[],
    key_var: "OPENAI_API_KEY",
    base_url_var: "OPENAI_BASE_URL",
    keyed_host: "api.openai.com",
    missing_key: "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to a server that \
                  needs no key",
};

impl fmt::Debug for OpenAiResponsesClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.settings
            .debug_struct(f, "OpenAiResponsesClient")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl OpenAiResponsesClient {
    /// A client for `model` at the OpenAI API authenticating with `api_key` (empty: no
    /// `Authorization` header). Defaults: streaming on, `store: false`, timeout 120 s,
    /// 3 retries, backoff from 500 ms doubling up to 30 s.
    ///
    /// ```
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    ///
    /// let client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(client.model(), "gpt-4o-mini");
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP
    /// header, or when the HTTP client cannot be initialised.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, ChatError> {
        let settings = HttpSettings::new(&API, model.into(), &api_key.into())?;
        Ok(OpenAiResponsesClient {
            settings,
            store: false,
            deferred: None,
            tool_images: crate::chat::ToolImages::Send,
        })
    }

    /// A client for `model` configured from `OPENAI_BASE_URL` and `OPENAI_API_KEY`, as
    /// [`OpenAiClient::from_env`](crate::providers::openai::OpenAiClient::from_env).
    ///
    /// ```no_run
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    ///
    /// let _client = OpenAiResponsesClient::from_env("gpt-4o-mini")?;
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `OPENAI_API_KEY` is missing and the base URL is the OpenAI
    /// API, when `OPENAI_BASE_URL` is not an `http(s)` URL, or for the reasons of
    /// [`new`](Self::new).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ChatError> {
        Self::from_lookup(model.into(), &|name| std::env::var(name).ok())
    }

    pub(crate) fn from_lookup(
        model: String,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ChatError> {
        let settings = HttpSettings::from_lookup(&API, model, lookup)?;
        Ok(OpenAiResponsesClient {
            settings,
            store: false,
            deferred: None,
            tool_images: crate::chat::ToolImages::Send,
        })
    }

    /// Sends requests to `{base_url}/responses` instead (a trailing `/` is ignored).
    ///
    /// ```
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    ///
    /// let client = OpenAiResponsesClient::new("local", "")?.with_base_url("http://localhost:8080/v1")?;
    /// assert_eq!(client.base_url(), "http://localhost:8080/v1");
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

    /// The form of deferred tool loading requests use, which the
    /// [`native`](crate::config::CollapsingLayout::Native) collapsing layout maps onto; an
    /// explicit setting always wins over the default (a config sets it as the `deferred_tools`
    /// key of its `model` object).
    ///
    /// - [`DeferredTools::ToolSearch`]: namespaces of `defer_loading` functions and a
    ///   client-executed `tool_search`.
    /// - [`DeferredTools::AdditionalTools`]: each container's result is followed by an
    ///   `additional_tools` input item (role `developer`) with the definitions of the functions it
    ///   loads, which the model then calls by their own names; no namespace, no search.
    /// - [`DeferredTools::Unsupported`]: no deferral; the layout falls back to
    ///   [`fixed`](crate::config::CollapsingLayout::Fixed).
    ///
    /// A form of another API ([`ToolReferences`](DeferredTools::ToolReferences),
    /// [`ToolAdditions`](DeferredTools::ToolAdditions)) turns deferral off, with a warning.
    ///
    /// The default is [`ToolSearch`](DeferredTools::ToolSearch) for the OpenAI API itself (host
    /// `api.openai.com`) with a model of the `gpt-5.4` family or later ("gpt-5.4 and later
    /// models support tool_search", the tool search guide,
    /// <https://developers.openai.com/api/docs/guides/tools-tool-search>), and [`Unsupported`](DeferredTools::Unsupported)
    /// otherwise: other servers that speak the Responses API (llama.cpp's among them) have
    /// neither form, and older models reject the tools. `AdditionalTools` is never a default:
    /// the item's fields are confirmed by openai-python's request types, but no OpenAI page
    /// found says which models take it, so turn it on for a model and server known to; a
    /// gateway that forwards to the OpenAI API sets the form it forwards.
    ///
    /// ```
    /// use hpd_agent::ChatClient;
    /// use hpd_agent::chat::DeferredTools;
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    ///
    /// let openai = OpenAiResponsesClient::new("gpt-5.4", "sk-...")?;
    /// assert_eq!(openai.deferred_tools(), DeferredTools::ToolSearch);
    /// let older = OpenAiResponsesClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(older.deferred_tools(), DeferredTools::Unsupported);
    /// let local = OpenAiResponsesClient::new("local", "")?.with_base_url("http://127.0.0.1:8080/v1")?;
    /// assert_eq!(local.deferred_tools(), DeferredTools::Unsupported);
    /// let added = local.with_deferred_tools(DeferredTools::AdditionalTools);
    /// assert_eq!(added.deferred_tools(), DeferredTools::AdditionalTools);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_deferred_tools(mut self, form: DeferredTools) -> Self {
        self.deferred = Some(match form {
            DeferredTools::ToolSearch | DeferredTools::AdditionalTools => form,
            DeferredTools::Unsupported => form,
            other => {
                tracing::warn!(
                    form = ?other,
                    "the OpenAI Responses API has no {other:?} form of deferred tools; deferral is off"
                );
                DeferredTools::Unsupported
            }
        });
        self
    }

    /// What requests do with the images of tool results: `input_image` parts inside the `function_call_output` by default
    /// ([`ToolImages::Send`](crate::chat::ToolImages::Send)), or their text form
    /// ([`ToolImages::Describe`](crate::chat::ToolImages::Describe)) for a model or server that takes
    /// no images.
    ///
    /// ```
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// let client = OpenAiResponsesClient::new("gpt-4.1-mini", "sk-...")?;
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
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// assert_eq!(OpenAiResponsesClient::new("gpt-4.1-mini", "sk-...")?.tool_images(), ToolImages::Send);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn tool_images(&self) -> crate::chat::ToolImages {
        self.tool_images
    }

    /// Sets `store` (default `false`: the server keeps no copy of the conversation).
    ///
    /// ```
    /// use hpd_agent::providers::openai_responses::OpenAiResponsesClient;
    ///
    /// let _client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-...")?.with_store(true);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    super::http_setters!(
        OpenAiResponsesClient,
        "openai_responses",
        "OpenAiResponsesClient::new(\"gpt-4o-mini\", \"sk-...\")"
    );
}

#[async_trait]
impl ChatClient for OpenAiResponsesClient {
    /// Sends one Responses request (see [`OpenAiResponsesClient`] for the mapping).
    ///
    /// # Errors
    ///
    /// - [`ChatError::Status`]: a status other than 2xx (after retries for 429 and 5xx); a
    ///   `response.failed` or `error` event, or a failed response body.
    /// - [`ChatError::Transport`]: the connection failed (after retries), broke, or the stream
    ///   ended before its final response event.
    /// - [`ChatError::Timeout`]: see [`with_timeout`](OpenAiResponsesClient::with_timeout).
    /// - [`ChatError::Malformed`]: an event or body that is not the JSON the API defines, or a
    ///   function call without a name.
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let mut described = None;
        let request = super::with_tool_images(request, self.tool_images, &mut described);
        let additions = self.deferred_tools() == DeferredTools::AdditionalTools;
        let body = encode_body(
            &request_body(
                &self.settings.model,
                request,
                self.settings.streaming,
                self.store,
                additions,
            ),
            &request.options.extra,
        )?;
        let search = request.tool_search.unwrap_or(wire::SEARCH_CALL);
        self.settings
            .exchange(
                &body,
                |status| StreamAssembler::new(status).with_tool_search(search),
                |body, status| parse_response(body, status, search),
                text,
            )
            .await
    }

    fn model_info(&self) -> crate::chat::ModelInfo<'_> {
        crate::chat::ModelInfo::new("openai")
            .with_model(&self.settings.model)
            .with_base_url(&self.settings.base_url)
    }

    fn deferred_tools(&self) -> DeferredTools {
        self.deferred.unwrap_or_else(|| {
            let openai = self.settings.transport.endpoint.host_str() == Some("api.openai.com");
            if openai && super::model_at_least(&self.settings.model, "gpt-", (5, 4)) {
                DeferredTools::ToolSearch
            } else {
                DeferredTools::Unsupported
            }
        })
    }
}

// The parser of a non-streamed body, without a connection, for the fuzz targets (which feed
// streams to `StreamAssembler` through `http::parse_stream_chunks`).
#[cfg(feature = "fuzzing")]
pub(crate) fn parse_body(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    parse_response(body, http_status, wire::SEARCH_CALL)
}
