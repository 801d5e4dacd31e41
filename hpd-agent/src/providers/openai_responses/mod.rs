//! [`OpenAiResponsesClient`]: a [`ChatClient`] for the OpenAI Responses API
//! (`POST {base_url}/responses`).
//!
//! It works with api.openai.com and with servers that speak the same API (llama.cpp's
//! `/v1/responses`); the configuration is the one of [`OpenAiClient`](crate::OpenAiClient):
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL`.
//!
//! ```no_run
//! use hpd_agent::{ChatClient, ChatMessage, ChatRequest, OpenAiResponsesClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::ChatError> {
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
//! Error policy: as for [`OpenAiClient`](crate::OpenAiClient) (see [`crate::openai`]); in a
//! stream, `response.failed` and `error` events are [`ChatError::Status`], and a stream that
//! ends before `response.completed` (or `response.incomplete`) is [`ChatError::Transport`].

mod stream;
mod wire;

use std::fmt;

use async_trait::async_trait;
use reqwest::header::AUTHORIZATION;

use crate::chat::{ChatClient, ChatError, ChatRequest, ChatResponse, TextSink};
use crate::providers::http::{Transport, encode_body, env_var, parse_base_url};
use crate::providers::openai::DEFAULT_BASE_URL;

use stream::StreamAssembler;
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
///
/// Message items are always written with `"type": "message"` (llama.cpp rejects them
/// without).
///
/// [`ModelOptions`](crate::ModelOptions): `temperature`, `top_p`, `max_output_tokens`,
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
/// use hpd_agent::{AgentBuilder, OpenAiResponsesClient};
///
/// let client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-secret")?.with_store(false);
/// assert!(!format!("{client:?}").contains("sk-secret")); // the key is never printed
/// let agent = AgentBuilder::new().with_chat_client(client).build()?;
/// # drop(agent);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct OpenAiResponsesClient {
    model: String,
    base_url: String,
    transport: Transport,
    streaming: bool,
    store: bool,
}

impl fmt::Debug for OpenAiResponsesClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiResponsesClient")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &self
                    .transport
                    .has_header("authorization")
                    .then_some("<redacted>"),
            )
            .field("timeout", &self.transport.timeout)
            .field("retry", &self.transport.retry)
            .field("streaming", &self.streaming)
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
    /// use hpd_agent::OpenAiResponsesClient;
    ///
    /// let client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(client.model(), "gpt-4o-mini");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP
    /// header, or when the HTTP client cannot be initialised.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, ChatError> {
        let model = model.into();
        if model.trim().is_empty() {
            return Err(ChatError::Config("the model name is empty".into()));
        }
        let api_key = api_key.into();
        let (base_url, endpoint) =
            parse_base_url(DEFAULT_BASE_URL, "/responses", DEFAULT_BASE_URL)?;
        let mut transport = Transport::new("OpenAI responses", endpoint)?;
        if !api_key.trim().is_empty() {
            transport.set_secret_header(AUTHORIZATION, "Bearer ", api_key.trim())?;
        }
        Ok(OpenAiResponsesClient {
            model,
            base_url,
            transport,
            streaming: true,
            store: false,
        })
    }

    /// A client for `model` configured from `OPENAI_BASE_URL` and `OPENAI_API_KEY`, as
    /// [`OpenAiClient::from_env`](crate::OpenAiClient::from_env).
    ///
    /// ```no_run
    /// use hpd_agent::OpenAiResponsesClient;
    ///
    /// let _client = OpenAiResponsesClient::from_env("gpt-4o-mini")?;
    /// # Ok::<(), hpd_agent::ChatError>(())
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
        let key = env_var(lookup, "OPENAI_API_KEY");
        let base = env_var(lookup, "OPENAI_BASE_URL");
        let client = Self::new(model, key.clone().unwrap_or_default())?;
        let client = match base {
            Some(base) => client.with_base_url(&base).map_err(|e| match e {
                ChatError::Config(m) => ChatError::Config(format!("OPENAI_BASE_URL: {m}")),
                other => other,
            })?,
            None => client,
        };
        if key.is_none() && client.transport.endpoint.host_str() == Some("api.openai.com") {
            return Err(ChatError::Config(
                "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to a server that \
                 needs no key"
                    .into(),
            ));
        }
        Ok(client)
    }

    /// Sends requests to `{base_url}/responses` instead (a trailing `/` is ignored).
    ///
    /// ```
    /// use hpd_agent::OpenAiResponsesClient;
    ///
    /// let client = OpenAiResponsesClient::new("local", "")?.with_base_url("http://localhost:8080/v1")?;
    /// assert_eq!(client.base_url(), "http://localhost:8080/v1");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `base_url` is not an absolute `http` or `https` URL, or has a
    /// query or fragment.
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Result<Self, ChatError> {
        let (base_url, endpoint) =
            parse_base_url(base_url.as_ref(), "/responses", DEFAULT_BASE_URL)?;
        self.base_url = base_url;
        self.transport.endpoint = endpoint;
        Ok(self)
    }

    /// Sets `store` (default `false`: the server keeps no copy of the conversation).
    ///
    /// ```
    /// use hpd_agent::OpenAiResponsesClient;
    ///
    /// let _client = OpenAiResponsesClient::new("gpt-4o-mini", "sk-...")?.with_store(true);
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    super::http_setters!(
        OpenAiResponsesClient,
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
        let body = encode_body(
            &request_body(&self.model, request, self.streaming, self.store),
            &request.options.extra,
        )?;
        self.transport
            .exchange(
                &body,
                self.streaming,
                StreamAssembler::new,
                parse_response,
                text,
            )
            .await
    }
}

/// The response of a stream body given as the chunks it arrived in (status `http_status`),
/// without a connection.
///
/// # Errors
///
/// As [`complete`](ChatClient::complete) for a streamed answer.
pub(crate) fn parse_stream(
    chunks: &[&[u8]],
    http_status: u16,
    text: TextSink<'_>,
) -> Result<ChatResponse, ChatError> {
    crate::providers::http::parse_stream_chunks(StreamAssembler::new(http_status), chunks, text)
}

/// The response of a non-streamed body (status `http_status`), without a connection.
///
/// # Errors
///
/// As [`complete`](ChatClient::complete) for a JSON answer.
pub(crate) fn parse_body(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    parse_response(body, http_status)
}
