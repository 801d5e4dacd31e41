//! [`OpenAiClient`]: a [`ChatClient`] for the OpenAI Chat Completions API, with tools.
//!
//! It works with api.openai.com and with the servers that speak the same API (Ollama, vLLM,
//! llama.cpp, LM Studio...): point [`OpenAiClient::with_base_url`] or `OPENAI_BASE_URL` at them.
//!
//! ```no_run
//! use std::time::Duration;
//! use hpd_agent::{ChatClient, ChatMessage, ChatRequest, OpenAiClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::ChatError> {
//! // A local Ollama server: no key needed.
//! let client = OpenAiClient::new("llama3.2", "")?
//!     .with_base_url("http://localhost:11434/v1")?
//!     .with_timeout(Duration::from_secs(300));
//! let messages = [ChatMessage::user("Why is the sky blue?")];
//! let request = ChatRequest { instructions: "", messages: &messages, tools: &[] };
//! let response = client.complete(request, &|delta: &str| print!("{delta}")).await?;
//! assert!(response.tool_calls.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! Entry points: [`OpenAiClient::new`], [`OpenAiClient::from_env`], the `with_*` setters, and
//! [`ChatClient::complete`].
//!
//! Error policy:
//!
//! - HTTP 429, HTTP 5xx and failures to connect are retried with exponential backoff (with
//!   jitter), honouring `Retry-After` / `retry-after-ms` capped at the maximum backoff, up to
//!   [`max_retries`](OpenAiClient::with_max_retries) times. Then the last failure is returned:
//!   [`ChatError::Status`] with the provider's `error.message`, or [`ChatError::Transport`].
//! - Other statuses are not retried.
//! - A connection that breaks after the request was sent (closed or reset before the response
//!   or during it) is [`ChatError::Transport`] and is not retried: the server may already have
//!   processed the request, and a retry could run it, and bill it, twice.
//! - Timeouts ([`ChatError::Timeout`]) are not retried: the request may still be running on the
//!   provider's side and a retry would pay for it twice.
//! - A stream is never retried once a response has started: its text already reached the
//!   [`TextSink`].
//! - An error the server reports inside a 200 response is [`ChatError::Status`] with the
//!   server's message (and its numeric `code` as the status when it has one): an `error` object
//!   in the body or in a stream chunk, an `event: error` event, or the `error:` field llama.cpp
//!   sends its stream errors in.
//! - A stream that ends before `[DONE]` and without a `finish_reason` is an error
//!   ([`ChatError::Transport`]), never a truncated success; a stream that sends `[DONE]` before
//!   any chunk is [`ChatError::Malformed`], never an empty success. A chunk that is not the JSON
//!   the API defines is [`ChatError::Malformed`], naming the JSON path that was wrong.
//! - A 200 response whose `Content-Type` is neither `text/event-stream` nor JSON (an HTML page
//!   from a web UI or a captive proxy at the base URL) is read whole as a body: unless it is a
//!   chat completion after all, it is [`ChatError::Malformed`] naming its content type and
//!   quoting its start.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::pin::pin;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::{Instant, timeout, timeout_at};

use crate::chat::{ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, TextSink};
use crate::chat::{ToolCall, Usage};

/// The base URL used when none is given: the OpenAI API.
///
/// ```
/// use hpd_agent::OpenAiClient;
/// use hpd_agent::openai::DEFAULT_BASE_URL;
///
/// assert_eq!(OpenAiClient::new("gpt-4o-mini", "sk-...")?.base_url(), DEFAULT_BASE_URL);
/// # Ok::<(), hpd_agent::ChatError>(())
/// ```
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_MAX_RETRIES: u32 = 3;
const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Longest body text kept in an error message.
const MAX_ERROR_TEXT: usize = 2000;
/// Longest excerpt of a bad chunk quoted in a [`ChatError::Malformed`].
const MAX_EXCERPT: usize = 200;

/// A [`ChatClient`] for the OpenAI Chat Completions API (`POST {base_url}/chat/completions`).
///
/// It streams by default (server-sent events): text deltas reach the [`TextSink`] as they arrive
/// and tool calls are assembled from their deltas. Requests are retried on HTTP 429, 5xx and
/// connection failures (see the [module docs](crate::openai) for the whole error policy).
///
/// Mapping of the conversation to the wire format:
///
/// | [`ChatRequest`] | Chat Completions |
/// |---|---|
/// | `instructions` | a leading `system` message, omitted when empty |
/// | [`ChatMessage::User`] | `{"role": "user", "content"}` |
/// | [`ChatMessage::Assistant`] | `{"role": "assistant", "content", "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}`; `content` is `null` when there is no text but there are tool calls; empty arguments are sent as `{}` |
/// | [`ChatMessage::Tool`] | `{"role": "tool", "tool_call_id", "content"}`; the `is_error` flag has no field in this API and is dropped (the result text already says `Error: ...`) |
/// | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]`, omitted when empty |
///
/// Cloning is cheap: clones share one connection pool. The API key is never printed by `Debug`.
///
/// ```no_run
/// use hpd_agent::{ChatClient, ChatMessage, ChatRequest, OpenAiClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::ChatError> {
/// let client = OpenAiClient::from_env("gpt-4o-mini")?;
/// let messages = [ChatMessage::user("Say hello")];
/// let request = ChatRequest { instructions: "Be brief.", messages: &messages, tools: &[] };
/// let response = client.complete(request, &|delta: &str| print!("{delta}")).await?;
/// println!("\n{:?}", response.usage);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    model: String,
    authorization: Option<HeaderValue>,
    base_url: String,
    endpoint: reqwest::Url,
    timeout: Duration,
    max_retries: u32,
    backoff: Duration,
    max_backoff: Duration,
    streaming: bool,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("max_backoff", &self.max_backoff)
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

impl OpenAiClient {
    /// A client for `model` at the OpenAI API ([`DEFAULT_BASE_URL`]) authenticating with
    /// `api_key`.
    ///
    /// An empty `api_key` sends no `Authorization` header, for local servers that need none (set
    /// their address with [`with_base_url`](Self::with_base_url)). Defaults: streaming on,
    /// timeout 120 s, 3 retries, backoff from 500 ms doubling up to 30 s.
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// let client = OpenAiClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(client.model(), "gpt-4o-mini");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP header
    /// (control characters, line breaks), or when the HTTP client cannot be initialised.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, ChatError> {
        let model = model.into();
        if model.trim().is_empty() {
            return Err(ChatError::Config("the model name is empty".into()));
        }
        let api_key = api_key.into();
        let authorization = authorization_header(api_key.trim())?;
        let http = reqwest::Client::builder()
            .user_agent(concat!("hpd-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ChatError::Config(format!("HTTP client: {}", error_chain(&e))))?;
        let (base_url, endpoint) = parse_base_url(DEFAULT_BASE_URL)?;
        Ok(OpenAiClient {
            http,
            model,
            authorization,
            base_url,
            endpoint,
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff: DEFAULT_BACKOFF,
            max_backoff: DEFAULT_MAX_BACKOFF,
            streaming: true,
        })
    }

    /// A client for `model` configured from the environment.
    ///
    /// - `OPENAI_BASE_URL`: the API's base URL, default [`DEFAULT_BASE_URL`]. Point it at a local
    ///   server such as Ollama (`http://localhost:11434/v1`), vLLM (`http://localhost:8000/v1`)
    ///   or llama.cpp (`http://localhost:8080/v1`).
    /// - `OPENAI_API_KEY`: the key. Required for api.openai.com; optional for any other base URL
    ///   (no `Authorization` header is sent without it).
    ///
    /// Empty variables count as unset.
    ///
    /// ```no_run
    /// use hpd_agent::OpenAiClient;
    ///
    /// let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    /// let _client = OpenAiClient::from_env(model)?;
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `OPENAI_API_KEY` is missing and the base URL is the OpenAI
    /// API, when `OPENAI_BASE_URL` is not an `http(s)` URL, or for the reasons of
    /// [`new`](Self::new).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ChatError> {
        Self::from_lookup(model.into(), |name| std::env::var(name).ok())
    }

    fn from_lookup(
        model: String,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ChatError> {
        let var = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let key = var("OPENAI_API_KEY");
        let base = var("OPENAI_BASE_URL");
        let client = Self::new(model, key.clone().unwrap_or_default())?;
        let client = match base {
            Some(base) => client.with_base_url(&base).map_err(|e| match e {
                ChatError::Config(m) => ChatError::Config(format!("OPENAI_BASE_URL: {m}")),
                other => other,
            })?,
            None => client,
        };
        if key.is_none() && client.endpoint.host_str() == Some("api.openai.com") {
            return Err(ChatError::Config(
                "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to a server that \
                 needs no key (Ollama, vLLM, llama.cpp)"
                    .into(),
            ));
        }
        Ok(client)
    }

    /// Sends requests to `base_url` instead: `{base_url}/chat/completions` (a trailing `/` is
    /// ignored).
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// // Ollama needs no key.
    /// let client = OpenAiClient::new("llama3.2", "")?.with_base_url("http://localhost:11434/v1/")?;
    /// assert_eq!(client.base_url(), "http://localhost:11434/v1");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `base_url` is not an absolute `http` or `https` URL, or has a
    /// query or fragment.
    pub fn with_base_url(mut self, base_url: impl AsRef<str>) -> Result<Self, ChatError> {
        let (base_url, endpoint) = parse_base_url(base_url.as_ref())?;
        self.base_url = base_url;
        self.endpoint = endpoint;
        Ok(self)
    }

    /// Sets the timeout (default 120 s): the longest wait for the response headers (including
    /// the error body of a failed attempt) and, when streaming, the longest gap between two
    /// reads from the connection. Any bytes count, keep-alive comments (`: PROCESSING`)
    /// included, so a long stream that keeps sending anything is never cut. A non-streamed
    /// answer must arrive whole within it. Each retry gets a fresh timeout; a timeout itself is
    /// not retried.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::OpenAiClient;
    ///
    /// let _client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_timeout(Duration::from_secs(30));
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many times a request is retried after HTTP 429, HTTP 5xx or a connection failure
    /// (default 3; 0 never retries).
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// let _client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_max_retries(5);
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first retry's delay (default 500 ms). Retry `n` waits about `backoff * 2^n`
    /// (between half and all of it, at random), at most the [maximum
    /// backoff](Self::with_max_backoff). A `Retry-After` or `retry-after-ms` header replaces the
    /// computed delay.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::OpenAiClient;
    ///
    /// let _client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_backoff(Duration::from_millis(10));
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the longest wait between two attempts (default 30 s), for the computed backoff and
    /// for the provider's `Retry-After` alike.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::OpenAiClient;
    ///
    /// let _client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_max_backoff(Duration::from_secs(5));
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// Turns streaming on or off (default on). Off, the client reads one JSON body and calls the
    /// [`TextSink`] once with the whole text.
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// let client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_streaming(false);
    /// assert!(!client.is_streaming());
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model name sent with each request.
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// assert_eq!(OpenAiClient::new("gpt-4o", "sk-...")?.model(), "gpt-4o");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL, without a trailing `/`.
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// assert_eq!(OpenAiClient::new("gpt-4o", "sk-...")?.base_url(), "https://api.openai.com/v1");
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether responses are streamed.
    ///
    /// ```
    /// use hpd_agent::OpenAiClient;
    ///
    /// assert!(OpenAiClient::new("gpt-4o", "sk-...")?.is_streaming());
    /// # Ok::<(), hpd_agent::ChatError>(())
    /// ```
    #[must_use]
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// Sends `body`, retrying as the module docs say. Returns a successful response and the
    /// deadline of the attempt that produced it.
    async fn send(&self, body: &[u8]) -> Result<(reqwest::Response, Instant), ChatError> {
        let mut attempt: u32 = 0;
        loop {
            let deadline = Instant::now() + self.timeout;
            let mut request = self
                .http
                .post(self.endpoint.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
            if self.streaming {
                request = request.header(ACCEPT, "text/event-stream");
            }
            if let Some(authorization) = &self.authorization {
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            let (error, retry_after) = match timeout_at(deadline, request.send()).await {
                Err(_) => return Err(ChatError::Timeout(self.timeout)),
                Ok(Ok(response)) if response.status().is_success() => {
                    return Ok((response, deadline));
                }
                Ok(Ok(response)) => {
                    let status = response.status();
                    let retry_after = retry_after(response.headers());
                    let message = match timeout_at(deadline, response.text()).await {
                        Ok(Ok(text)) => provider_message(&text),
                        Ok(Err(e)) => format!("(the body could not be read: {})", error_chain(&e)),
                        Err(_) => "(the body did not arrive within the timeout)".into(),
                    };
                    let error = ChatError::Status {
                        status: status.as_u16(),
                        message,
                    };
                    if !(status.as_u16() == 429 || status.is_server_error()) {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Ok(Err(e)) if e.is_timeout() => return Err(ChatError::Timeout(self.timeout)),
                Ok(Err(e)) if e.is_connect() => (ChatError::Transport(error_chain(&e)), None),
                Ok(Err(e)) => return Err(ChatError::Transport(error_chain(&e))),
            };
            if attempt >= self.max_retries {
                return Err(error);
            }
            let delay = match retry_after {
                Some(wait) => wait.min(self.max_backoff),
                None => self.backoff_delay(attempt),
            };
            attempt += 1;
            tracing::warn!(
                attempt,
                max_retries = self.max_retries,
                ?delay,
                %error,
                "retrying OpenAI chat completion request"
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// The delay before retry `attempt + 1`: `backoff * 2^attempt` capped, with equal jitter.
    fn backoff_delay(&self, attempt: u32) -> Duration {
        let full = self
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(self.max_backoff);
        let half = full / 2;
        half + random_up_to(full.saturating_sub(half))
    }

    /// Reads a `text/event-stream` response. The timeout applies to each read of the raw body,
    /// before decoding, so keep-alive comments count as traffic.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let mut assembler = StreamAssembler::new(response.status().as_u16());
        let mut decoder = SseDecoder::default();
        let mut bytes = pin!(response.bytes_stream());
        loop {
            let chunk = match timeout(self.timeout, bytes.next()).await {
                Err(_) => return Err(ChatError::Timeout(self.timeout)),
                // An event left unfinished at the end is dropped, as the format says.
                Ok(None) => return assembler.finish(false),
                Ok(Some(Ok(chunk))) => chunk,
                Ok(Some(Err(e))) => {
                    if e.is_timeout() {
                        return Err(ChatError::Timeout(self.timeout));
                    }
                    return Err(ChatError::Transport(format!(
                        "the stream was interrupted: {}",
                        error_chain(&e)
                    )));
                }
            };
            let flow = decoder.push(&chunk, &mut |event| assembler.feed_event(&event, text))?;
            if flow == Flow::Done {
                return assembler.finish(true);
            }
        }
    }

    async fn read_body(
        &self,
        response: reqwest::Response,
        deadline: Instant,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let status = response.status().as_u16();
        let bytes = match timeout_at(deadline, response.bytes()).await {
            Err(_) => return Err(ChatError::Timeout(self.timeout)),
            Ok(Err(e)) if e.is_timeout() => return Err(ChatError::Timeout(self.timeout)),
            Ok(Err(e)) => {
                return Err(ChatError::Transport(format!(
                    "reading the response body failed: {}",
                    error_chain(&e)
                )));
            }
            Ok(Ok(bytes)) => bytes,
        };
        let body = std::str::from_utf8(&bytes).map_err(|e| {
            ChatError::Malformed(format!("the response body is not valid UTF-8: {e}"))
        })?;
        let response = parse_completion(body, status)?;
        if let Some(whole) = &response.text {
            text(whole);
        }
        Ok(response)
    }
}

#[async_trait]
impl ChatClient for OpenAiClient {
    /// Sends one Chat Completions request (see [`OpenAiClient`] for the mapping) and returns the
    /// text, tool calls and usage of the first choice.
    ///
    /// When streaming, `text` receives each text delta as it arrives; otherwise it is called
    /// once with the whole text (not at all when there is none). A response whose
    /// `Content-Type` says JSON or `text/event-stream` is read as such whatever was asked, so a
    /// server that ignores `stream` still works. A response of any other content type is read
    /// whole as a body (a stream without a `Content-Type` is still read as a stream).
    ///
    /// # Errors
    ///
    /// - [`ChatError::Status`]: a status other than 2xx (after retries for 429 and 5xx), with
    ///   the provider's `error.message` or the body text; also an error sent inside a 200
    ///   response or stream (with its numeric `code` when it has one): an `error` object, an
    ///   `event: error` event or an `error:` field.
    /// - [`ChatError::Transport`]: the connection could not be made (after retries), broke after
    ///   the request was sent (not retried) or mid-stream, or the stream ended before `[DONE]`
    ///   and without a `finish_reason`.
    /// - [`ChatError::Timeout`]: see [`with_timeout`](OpenAiClient::with_timeout).
    /// - [`ChatError::Malformed`]: the body or a chunk is not the JSON the API defines (the
    ///   message names the JSON path), the stream sent `[DONE]` before any chunk, the body is
    ///   neither an event stream nor JSON (the message names its content type and quotes its
    ///   start), or a tool call has no function name.
    /// - [`ChatError::Config`]: the request could not be encoded as JSON.
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let body = serde_json::to_vec(&WireRequest::new(&self.model, request, self.streaming))
            .map_err(|e| ChatError::Config(format!("the request cannot be encoded: {e}")))?;
        let (response, deadline) = self.send(&body).await?;
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream")
            || (self.streaming && content_type.is_empty())
        {
            return self.read_stream(response, text).await;
        }
        let result = self.read_body(response, deadline, text).await;
        if content_type.is_empty() || content_type.contains("json") {
            return result;
        }
        // Not an API response at all, most likely: say what it was.
        result.map_err(|e| match e {
            ChatError::Malformed(message) => ChatError::Malformed(format!(
                "the server answered with `{}`, neither an event stream nor JSON: {message}",
                shorten(&content_type, MAX_EXCERPT)
            )),
            other => other,
        })
    }
}

fn authorization_header(api_key: &str) -> Result<Option<HeaderValue>, ChatError> {
    if api_key.is_empty() {
        return Ok(None);
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {api_key}")).map_err(|_| {
        ChatError::Config("the API key contains characters not allowed in an HTTP header".into())
    })?;
    value.set_sensitive(true);
    Ok(Some(value))
}

/// Checks a base URL and returns it without a trailing `/`, with the completions endpoint.
fn parse_base_url(base_url: &str) -> Result<(String, reqwest::Url), ChatError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let url = reqwest::Url::parse(trimmed)
        .map_err(|e| ChatError::Config(format!("invalid base URL '{base_url}': {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ChatError::Config(format!(
            "invalid base URL '{base_url}': expected an http or https URL such as {DEFAULT_BASE_URL}"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ChatError::Config(format!(
            "invalid base URL '{base_url}': it must not have a query or fragment"
        )));
    }
    let endpoint = reqwest::Url::parse(&format!("{trimmed}/chat/completions"))
        .map_err(|e| ChatError::Config(format!("invalid base URL '{base_url}': {e}")))?;
    Ok((trimmed.to_owned(), endpoint))
}

/// An error and its sources, `outer: inner: innermost`, skipping repeats.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The provider's wait before a retry: `retry-after-ms` (OpenAI), else `Retry-After` in seconds.
/// The HTTP-date form of `Retry-After` is not read; the computed backoff applies then.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = |name: &str, scale: f64| {
        let value: f64 = headers.get(name)?.to_str().ok()?.trim().parse().ok()?;
        Duration::try_from_secs_f64(value / scale).ok()
    };
    seconds("retry-after-ms", 1000.0).or_else(|| seconds(RETRY_AFTER.as_str(), 1.0))
}

/// A random duration in `0..=max`, without a random number crate: `RandomState` is seeded from
/// the OS once per thread and advanced on each call.
fn random_up_to(max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    let random = RandomState::new().hash_one(std::time::Instant::now());
    Duration::from_nanos(random % nanos.saturating_add(1).max(1))
}

/// The message of an error body: `error.message`, `error` as a string, or a top-level `message`;
/// else the body text (shortened).
fn provider_message(body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<Value>(body)
        && let Some(message) = json_error_message(&json)
    {
        return message;
    }
    let body = body.trim();
    if body.is_empty() {
        "(empty response body)".into()
    } else {
        shorten(body, MAX_ERROR_TEXT)
    }
}

fn json_error_message(json: &Value) -> Option<String> {
    match json.get("error") {
        Some(Value::String(message)) => Some(message.clone()),
        Some(Value::Object(error)) => Some(match error.get("message") {
            Some(Value::String(message)) => message.clone(),
            _ => Value::Object(error.clone()).to_string(),
        }),
        _ => json
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// An `error` object found inside a 200 response: [`ChatError::Status`] with its numeric `code`
/// when it has one, else the HTTP status.
fn embedded_error(error: &Value, http_status: u16) -> ChatError {
    let code = error
        .get("code")
        .and_then(|c| c.as_u64().or_else(|| c.as_str()?.parse().ok()))
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (100..=599).contains(c));
    let wrapped = serde_json::json!({ "error": error });
    ChatError::Status {
        status: code.unwrap_or(http_status),
        message: json_error_message(&wrapped).unwrap_or_default(),
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// Deserializes `text`, naming the JSON path of the first problem.
fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            inner.to_string()
        } else {
            format!("at `{path}`: {inner}")
        }
    })?;
    deserializer.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// Tool arguments as the model sent them. Some servers send an object instead of JSON text.
fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

// ---- request ----

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionDefinition<'a>,
}

#[derive(Serialize)]
struct WireFunctionDefinition<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> WireRequest<'a> {
    fn new(model: &'a str, request: ChatRequest<'a>, streaming: bool) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.instructions.is_empty() {
            messages.push(WireMessage::System {
                content: request.instructions,
            });
        }
        messages.extend(request.messages.iter().map(|message| {
            match message {
                ChatMessage::User { content } => WireMessage::User { content },
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                } => WireMessage::Assistant {
                    // The API rejects an assistant message with neither content nor tool calls.
                    content: match content {
                        Some(text) => Some(text.as_str()),
                        None if tool_calls.is_empty() => Some(""),
                        None => None,
                    },
                    tool_calls: tool_calls
                        .iter()
                        .map(|call| WireToolCall {
                            id: &call.id,
                            kind: "function",
                            function: WireFunctionCall {
                                name: &call.name,
                                // Servers that parse the arguments reject "".
                                arguments: if call.arguments.trim().is_empty() {
                                    "{}"
                                } else {
                                    &call.arguments
                                },
                            },
                        })
                        .collect(),
                },
                // `is_error` has no field in this API: the result text carries it.
                ChatMessage::Tool {
                    call_id, content, ..
                } => WireMessage::Tool {
                    tool_call_id: call_id,
                    content,
                },
            }
        }));
        WireRequest {
            model,
            messages,
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    kind: "function",
                    function: WireFunctionDefinition {
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                    },
                })
                .collect(),
            stream: streaming,
            stream_options: streaming.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

// ---- response ----

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Option<Vec<CompletionChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CompletionChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<CompletionMessage>,
}

#[derive(Deserialize)]
struct CompletionMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CompletionToolCall>>,
}

#[derive(Deserialize)]
struct CompletionToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionPart>,
}

#[derive(Deserialize)]
struct FunctionPart {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Parses a non-streamed body.
fn parse_completion(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    let completion: Completion = parse_json(body).map_err(|e| {
        ChatError::Malformed(format!(
            "the response body is not a chat completion ({e}): {}",
            shorten(body.trim(), MAX_EXCERPT)
        ))
    })?;
    if let Some(error) = &completion.error
        && !error.is_null()
    {
        return Err(embedded_error(error, http_status));
    }
    let choices = completion.choices.unwrap_or_default();
    let choice = choices
        .into_iter()
        .find(|c| c.index.unwrap_or(0) == 0)
        .ok_or_else(|| ChatError::Malformed("the response has no choices".into()))?;
    let message = choice.message.ok_or_else(|| {
        ChatError::Malformed("the response's first choice has no `message`".into())
    })?;
    let mut tool_calls = Vec::new();
    for (position, call) in message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let function = call.function.unwrap_or(FunctionPart {
            name: None,
            arguments: None,
        });
        let name = function.name.unwrap_or_default();
        if name.is_empty() {
            return Err(ChatError::Malformed(format!(
                "tool call {position} of the response has no function name"
            )));
        }
        tool_calls.push(ToolCall {
            id: call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{position}")),
            name,
            arguments: arguments_text(function.arguments),
        });
    }
    let text = message
        .content
        .filter(|t| !t.is_empty())
        .or_else(|| message.refusal.filter(|t| !t.is_empty()));
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: completion.usage.map(Usage::from).unwrap_or_default(),
    })
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionPart>,
}

#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Done,
}

/// A tool call being assembled from stream deltas.
#[derive(Debug)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Builds a [`ChatResponse`] from the `data` of the events of a stream.
#[derive(Debug)]
struct StreamAssembler {
    http_status: u16,
    chunks: usize,
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    finish_reason_seen: bool,
}

impl StreamAssembler {
    fn new(http_status: u16) -> Self {
        StreamAssembler {
            http_status,
            chunks: 0,
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            finish_reason_seen: false,
        }
    }

    /// Feeds one server-sent event: an error it carries (an `error` field or an `error` event)
    /// ends the stream as the provider's error; otherwise its `data` is a chunk.
    fn feed_event(&mut self, event: &SseEvent, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        if let Some(error) = &event.error {
            return Err(self.stream_error(error));
        }
        if event.event == "error" {
            return Err(self.stream_error(&event.data));
        }
        self.feed(&event.data, sink)
    }

    /// The error carried by an `error:` field or an `error` event: JSON such as llama.cpp's
    /// `{"code": 400, "message": ...}` or `{"error": {...}}`, or plain text.
    fn stream_error(&self, text: &str) -> ChatError {
        let text = text.trim();
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => match object.get("error") {
                Some(error) if !error.is_null() => embedded_error(error, self.http_status),
                _ => embedded_error(&Value::Object(object), self.http_status),
            },
            Ok(Value::String(message)) => ChatError::Status {
                status: self.http_status,
                message: shorten(&message, MAX_ERROR_TEXT),
            },
            _ => ChatError::Status {
                status: self.http_status,
                message: if text.is_empty() {
                    "(the stream reported an error without a message)".into()
                } else {
                    shorten(text, MAX_ERROR_TEXT)
                },
            },
        }
    }

    /// Feeds the `data` of one event.
    fn feed(&mut self, data: &str, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        self.chunks += 1;
        let chunk: Chunk = parse_json(data).map_err(|e| {
            ChatError::Malformed(format!(
                "stream chunk {} is not a chat completion chunk ({e}): {}",
                self.chunks,
                shorten(data, MAX_EXCERPT)
            ))
        })?;
        if let Some(error) = &chunk.error
            && !error.is_null()
        {
            return Err(embedded_error(error, self.http_status));
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into();
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                for part in [delta.content, delta.refusal].into_iter().flatten() {
                    if !part.is_empty() {
                        sink(&part);
                        self.text.push_str(&part);
                    }
                }
                let mut routed = Vec::new();
                for call in delta.tool_calls.unwrap_or_default() {
                    let position = self.add_call_delta(call, &routed);
                    routed.push(position);
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason_seen = true;
            }
        }
        Ok(Flow::Continue)
    }

    /// Routes a delta to its call and returns the call's position. With an `index`: the last
    /// call at that index, starting a new call when a different `id` arrives at an index already
    /// used (some servers reuse index 0). Without `index`: the last call with the same `id`
    /// among all calls so far; else the last call, when the delta has no `id` or that call has
    /// none yet; else a new call. `routed` holds the calls earlier elements of the same
    /// `tool_calls` array went to: an element without `index` is not merged into one of them
    /// except by `id`, since the elements of one array are different calls.
    fn add_call_delta(&mut self, delta: ToolCallDelta, routed: &[usize]) -> usize {
        let id = delta.id.filter(|id| !id.is_empty());
        let position = match delta.index {
            Some(index) => self.calls.iter().rposition(|call| {
                call.index == Some(index)
                    && id
                        .as_deref()
                        .is_none_or(|id| call.id.is_empty() || call.id == id)
            }),
            None => id
                .as_deref()
                .and_then(|id| self.calls.iter().rposition(|call| call.id == id))
                .or_else(|| {
                    let last = self.calls.len().checked_sub(1)?;
                    let open = id.is_none() || self.calls[last].id.is_empty();
                    (open && !routed.contains(&last)).then_some(last)
                }),
        };
        let position = position.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index: delta.index,
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                // Servers send the whole name once; a few repeat it in later deltas.
                if call.name.is_empty() || call.name != name {
                    if name.starts_with(&call.name) || call.name.is_empty() {
                        call.name = name;
                    } else {
                        call.name.push_str(&name);
                    }
                }
            }
            call.arguments.push_str(&arguments_text(function.arguments));
        }
        position
    }

    /// The response, once the stream has ended (`done`: with `[DONE]`).
    fn finish(self, done: bool) -> Result<ChatResponse, ChatError> {
        if !done && !self.finish_reason_seen {
            return Err(ChatError::Transport(format!(
                "the stream ended before [DONE] and without a finish_reason after {} chunk(s); \
                 the response is incomplete",
                self.chunks
            )));
        }
        if self.chunks == 0 {
            return Err(ChatError::Malformed(
                "the stream sent [DONE] before any chunk: the server sent no response".into(),
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (position, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(ChatError::Malformed(format!(
                    "tool call {position} of the stream (id '{}') has no function name",
                    call.id
                )));
            }
            tool_calls.push(ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{position}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            });
        }
        Ok(ChatResponse {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls,
            usage: self.usage,
        })
    }
}

/// One server-sent event, with the fields this client reads.
#[derive(Debug, Default, PartialEq, Eq)]
struct SseEvent {
    /// The `event` field; empty when absent.
    event: String,
    /// The `data` fields, joined with `\n`.
    data: String,
    /// The non-standard `error` fields (llama.cpp's stream errors), joined with `\n`.
    error: Option<String>,
}

/// Decodes server-sent events (the WHATWG `text/event-stream` format) from raw byte chunks.
///
/// Hand-written because it must keep the non-standard `error:` field that llama.cpp sends its
/// stream errors in, which standard decoders drop. Comments and the `id` and `retry` fields are
/// ignored. Lines end with `\r\n`, `\n` or `\r`, and may be split anywhere between chunks.
#[derive(Debug, Default)]
struct SseDecoder {
    /// The bytes of the unfinished line.
    line: Vec<u8>,
    /// The last byte was `\r`: a `\n` right after it ends no second line.
    after_cr: bool,
    /// The first line was seen (a byte order mark is only skipped there).
    started: bool,
    /// The event being built.
    event: SseEvent,
    has_data: bool,
    has_fields: bool,
}

impl SseDecoder {
    /// Decodes `bytes`, passing each complete event to `on_event`; stops at the first
    /// [`Flow::Done`] or error and returns it.
    fn push(
        &mut self,
        mut bytes: &[u8],
        on_event: &mut dyn FnMut(SseEvent) -> Result<Flow, ChatError>,
    ) -> Result<Flow, ChatError> {
        while let Some(&first) = bytes.first() {
            if std::mem::take(&mut self.after_cr) && first == b'\n' {
                bytes = &bytes[1..];
                continue;
            }
            let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.line.extend_from_slice(bytes);
                break;
            };
            self.line.extend_from_slice(&bytes[..end]);
            self.after_cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            let line = std::mem::take(&mut self.line);
            let event = self.end_line(&line);
            self.line = line;
            self.line.clear();
            if let Some(event) = event?
                && on_event(event)? == Flow::Done
            {
                return Ok(Flow::Done);
            }
        }
        Ok(Flow::Continue)
    }

    /// Interprets one complete line; returns the event an empty line completes.
    fn end_line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, ChatError> {
        let mut line = std::str::from_utf8(line).map_err(|e| {
            ChatError::Malformed(format!("the event stream is not valid UTF-8: {e}"))
        })?;
        if !std::mem::replace(&mut self.started, true) {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            self.has_data = false;
            return Ok(std::mem::take(&mut self.has_fields).then_some(event));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if std::mem::replace(&mut self.has_data, true) {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
            }
            "event" => value.clone_into(&mut self.event.event),
            "error" => match &mut self.event.error {
                Some(error) => {
                    error.push('\n');
                    error.push_str(value);
                }
                None => self.event.error = Some(value.to_owned()),
            },
            _ => return Ok(None),
        }
        self.has_fields = true;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    fn config_message(result: Result<OpenAiClient, ChatError>) -> String {
        match result {
            Err(ChatError::Config(message)) => message,
            other => panic!("expected a Config error, got {other:?}"),
        }
    }

    #[test]
    fn from_env_requires_a_key_for_the_openai_api_only() {
        let message = config_message(OpenAiClient::from_lookup("m".into(), lookup(&[])));
        assert!(message.contains("OPENAI_API_KEY is not set"), "{message}");
        let message = config_message(OpenAiClient::from_lookup(
            "m".into(),
            lookup(&[
                ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                ("OPENAI_API_KEY", "  "),
            ]),
        ));
        assert!(message.contains("OPENAI_API_KEY is not set"), "{message}");

        let local = OpenAiClient::from_lookup(
            "llama3.2".into(),
            lookup(&[("OPENAI_BASE_URL", "http://localhost:11434/v1/")]),
        )
        .unwrap();
        assert_eq!(local.base_url(), "http://localhost:11434/v1");
        assert_eq!(
            local.endpoint.as_str(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert!(local.authorization.is_none());

        let keyed =
            OpenAiClient::from_lookup("m".into(), lookup(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(keyed.base_url(), DEFAULT_BASE_URL);
        assert_eq!(
            keyed.authorization.unwrap().to_str().unwrap(),
            "Bearer sk-1"
        );
    }

    #[test]
    fn bad_configuration_is_a_config_error() {
        let message = config_message(OpenAiClient::from_lookup(
            "m".into(),
            lookup(&[("OPENAI_BASE_URL", "localhost:11434")]),
        ));
        assert!(
            message.starts_with("OPENAI_BASE_URL: invalid base URL"),
            "{message}"
        );
        for url in ["not a url", "ftp://host/v1", "http://host/v1?x=1", ""] {
            let result = OpenAiClient::new("m", "").unwrap().with_base_url(url);
            assert!(
                matches!(result, Err(ChatError::Config(_))),
                "{url}: {result:?}"
            );
        }
        assert!(config_message(OpenAiClient::new(" ", "k")).contains("model"));
        assert!(config_message(OpenAiClient::new("m", "bad\nkey")).contains("API key"));
    }

    #[test]
    fn debug_does_not_print_the_key() {
        let client = OpenAiClient::new("m", "sk-secret").unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("sk-secret"), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
    }

    #[test]
    fn retry_after_reads_milliseconds_then_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        for bad in ["-1", "NaN", "inf", "1e300", "Wed, 21 Oct 2015 07:28:00 GMT"] {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, HeaderValue::from_static(bad));
            assert_eq!(retry_after(&headers), None, "{bad}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let client = OpenAiClient::new("m", "")
            .unwrap()
            .with_backoff(Duration::from_millis(100))
            .with_max_backoff(Duration::from_millis(350));
        for _ in 0..50 {
            let first = client.backoff_delay(0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = client.backoff_delay(1);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let capped = client.backoff_delay(40);
            assert!(capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350));
        }
    }

    #[test]
    fn provider_messages() {
        assert_eq!(
            provider_message(r#"{"error":{"message":"Rate limit reached","type":"x"}}"#),
            "Rate limit reached"
        );
        assert_eq!(
            provider_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            provider_message(r#"{"object":"error","message":"bad"}"#),
            "bad"
        );
        assert_eq!(
            provider_message("  <html>oops</html>\n"),
            "<html>oops</html>"
        );
        assert_eq!(provider_message(""), "(empty response body)");
        let long = "x".repeat(5000);
        assert_eq!(provider_message(&long).chars().count(), MAX_ERROR_TEXT + 3);
        assert_eq!(shorten("héllo", 2), "hé...");
    }

    fn feed_all(chunks: &[&str]) -> (Result<ChatResponse, ChatError>, Vec<String>) {
        let seen = Mutex::new(Vec::new());
        let sink = |delta: &str| seen.lock().unwrap().push(delta.to_owned());
        let mut assembler = StreamAssembler::new(200);
        let mut done = false;
        for chunk in chunks {
            match assembler.feed(chunk, &sink) {
                Ok(Flow::Done) => {
                    done = true;
                    break;
                }
                Ok(Flow::Continue) => {}
                Err(e) => return (Err(e), seen.into_inner().unwrap()),
            }
        }
        (assembler.finish(done), seen.into_inner().unwrap())
    }

    #[test]
    fn tool_calls_are_routed_by_index_id_or_position() {
        let (response, _) = feed_all(&[
            // Index 0 then 1, interleaved.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}"#,
            // Index 0 reused with a new id: a third call.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"h","arguments":{"y":2}}}]}}]}"#,
            // No index, no id: the last call; no id at all: a synthesized one.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"i"}}]}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let response = response.unwrap();
        assert_eq!(response.text, None);
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("a", "f", "{}"),
                ToolCall::new("b", "g", r#"{"x":1}"#),
                ToolCall::new("c", "hi", r#"{"y":2}"#),
            ]
        );

        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            response.unwrap().tool_calls,
            vec![ToolCall::new("call_0", "f", "{}")]
        );
    }

    #[test]
    fn index_less_deltas_are_routed_by_id_then_array_position() {
        let (response, _) = feed_all(&[
            // By id across all calls, not only the last one.
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":":1}"}}]}}]}"#,
            // Two elements of one array without index or id: two calls; the first one continues
            // the last call (b), the second starts a new call.
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""}},{"function":{"name":"h","arguments":"[]"}}]}}]}"#,
            // An element with a new id never joins a call an earlier element of its array went
            // to, even one without an id yet...
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"!"}},{"id":"d","function":{"name":"i"}}]}}]}"#,
            // ...but an id-less call from an earlier array adopts the id.
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""}},{"function":{"name":"j"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"e","function":{"arguments":"{}"}}]}}]}"#,
            // The same id twice in one array: one call.
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":"?"}},{"id":"a","function":{"arguments":"?"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            response.unwrap().tool_calls,
            vec![
                ToolCall::new("a", "f", r#"{"x":1}??"#),
                ToolCall::new("b", "g", "{}"),
                ToolCall::new("call_2", "h", "[]!"),
                ToolCall::new("d", "i", ""),
                ToolCall::new("e", "j", "{}"),
            ]
        );
    }

    #[test]
    fn done_before_any_chunk_is_malformed() {
        for chunks in [&["[DONE]"][..], &["", "[DONE]"][..]] {
            let (response, _) = feed_all(chunks);
            match response {
                Err(ChatError::Malformed(message)) => {
                    assert!(message.contains("before any chunk"), "{message}");
                }
                other => panic!("expected Malformed, got {other:?}"),
            }
        }
        let (response, _) = feed_all(&[r#"{"choices":[]}"#, "[DONE]"]);
        assert_eq!(response.unwrap(), ChatResponse::default());
    }

    /// Decodes `body` split into pieces of `size` bytes.
    fn decode(body: &[u8], size: usize) -> (Result<Flow, ChatError>, Vec<SseEvent>) {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for piece in body.chunks(size) {
            let flow = decoder.push(piece, &mut |event| {
                let done = event.data == "[DONE]";
                events.push(event);
                Ok(if done { Flow::Done } else { Flow::Continue })
            });
            if !matches!(flow, Ok(Flow::Continue)) {
                return (flow, events);
            }
        }
        (Ok(Flow::Continue), events)
    }

    fn event(event: &str, data: &str, error: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn sse_decoder_reads_fields_across_any_split() {
        let body = "\u{feff}: comment\r\ndata: {\"a\":\r\ndata:1}\r\nid: 7\r\nretry: 10\r\n\r\n\
                    event: error\rdata: é\r\r\
                    error: {\"message\":\"x\"}\n\n\
                    unknown: y\n\n\
                    event: ping\n\n\
                    data\n\n\
                    data: [DONE]\n\ndata: after\n\n";
        for size in 1..=body.len() {
            let (flow, events) = decode(body.as_bytes(), size);
            assert_eq!(flow.unwrap(), Flow::Done, "pieces of {size}");
            assert_eq!(
                events,
                [
                    event("", "{\"a\":\n1}", None),
                    event("error", "é", None),
                    event("", "", Some("{\"message\":\"x\"}")),
                    event("ping", "", None),
                    event("", "", None),
                    event("", "[DONE]", None),
                ],
                "pieces of {size}"
            );
        }
        // An event without its closing empty line is not dispatched.
        let (flow, events) = decode(b"data: 1\n\ndata: 2\n", 4);
        assert_eq!(flow.unwrap(), Flow::Continue);
        assert_eq!(events, [event("", "1", None)]);
        // A byte order mark is only skipped at the very start.
        let (_, events) = decode("data: 1\n\n\u{feff}data: 2\n\n".as_bytes(), 3);
        assert_eq!(events, [event("", "1", None)]);
        let (flow, _) = decode(b"data: \xff\n\n", 100);
        assert!(matches!(flow, Err(ChatError::Malformed(_))), "{flow:?}");
    }

    #[test]
    fn error_fields_and_events_are_the_providers_error() {
        let sink = |_: &str| {};
        let cases = [
            (
                event(
                    "",
                    "",
                    Some(r#"{"code":400,"message":"too long","type":"x"}"#),
                ),
                400,
                "too long",
            ),
            (
                event(
                    "error",
                    r#"{"error":{"message":"overloaded","code":"503"}}"#,
                    None,
                ),
                503,
                "overloaded",
            ),
            (event("error", r#"{"error":"gone"}"#, None), 200, "gone"),
            (event("error", r#""quoted""#, None), 200, "quoted"),
            (event("error", " plain text ", None), 200, "plain text"),
            (
                event("error", "", None),
                200,
                "(the stream reported an error without a message)",
            ),
            // The error field wins over data.
            (event("", r#"{"choices":[]}"#, Some("a\nb")), 200, "a\nb"),
        ];
        for (event, status, message) in cases {
            let mut assembler = StreamAssembler::new(200);
            match assembler.feed_event(&event, &sink) {
                Err(ChatError::Status {
                    status: got_status,
                    message: got,
                }) => assert_eq!((got_status, got.as_str()), (status, message), "{event:?}"),
                other => panic!("{event:?}: expected Status, got {other:?}"),
            }
        }
        let mut assembler = StreamAssembler::new(200);
        assert_eq!(
            assembler
                .feed_event(&event("message", "[DONE]", None), &sink)
                .unwrap(),
            Flow::Done
        );
    }

    #[test]
    fn a_tool_call_without_a_name_is_malformed() {
        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        match response {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("no function name"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn stream_end_needs_done_or_finish_reason() {
        let (response, seen) = feed_all(&[r#"{"choices":[{"delta":{"content":"Hel"}}]}"#]);
        assert!(
            matches!(response, Err(ChatError::Transport(_))),
            "{response:?}"
        );
        assert_eq!(seen, ["Hel"]);
        let (response, _) =
            feed_all(&[r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#]);
        assert_eq!(response.unwrap().text.as_deref(), Some("Hi"));
    }

    #[test]
    fn errors_inside_a_stream_are_status_errors() {
        let (response, _) =
            feed_all(&[r#"{"error":{"message":"overloaded","code":503}}"#, "[DONE]"]);
        match response {
            Err(ChatError::Status { status, message }) => {
                assert_eq!((status, message.as_str()), (503, "overloaded"));
            }
            other => panic!("expected Status, got {other:?}"),
        }
        let (response, _) = feed_all(&[r#"{"error":{"message":"bad","code":"invalid"}}"#]);
        assert!(
            matches!(response, Err(ChatError::Status { status: 200, .. })),
            "{response:?}"
        );
    }

    #[test]
    fn malformed_chunks_name_the_path() {
        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"content":"ok"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"zero"}]}}]}"#,
        ]);
        match response {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("stream chunk 2"), "{message}");
                assert!(
                    message.contains("choices[0].delta.tool_calls[0].index"),
                    "{message}"
                );
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
        let (response, _) = feed_all(&[r#"{"choices":[]} trailing"#]);
        assert!(
            matches!(response, Err(ChatError::Malformed(_))),
            "{response:?}"
        );
    }

    #[test]
    fn non_streamed_bodies() {
        let response = parse_completion(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,
                "tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
                              {"type":"function","function":{"name":"g","arguments":{"b":2}}}]},
                "finish_reason":"tool_calls"}],
               "usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
            200,
        )
        .unwrap();
        assert_eq!(
            response,
            ChatResponse {
                text: None,
                tool_calls: vec![
                    ToolCall::new("x", "f", r#"{"a":1}"#),
                    ToolCall::new("call_1", "g", r#"{"b":2}"#),
                ],
                usage: Usage {
                    input_tokens: 7,
                    output_tokens: 3
                },
            }
        );
        assert!(matches!(
            parse_completion(r#"{"choices":[]}"#, 200),
            Err(ChatError::Malformed(_))
        ));
        assert!(matches!(
            parse_completion(r#"{"error":{"message":"no"}}"#, 200),
            Err(ChatError::Status { status: 200, .. })
        ));
        match parse_completion(r#"{"choices":[{"message":{"content":5}}]}"#, 200) {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("choices[0].message.content"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    mod no_panics {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;
        use proptest::sample::select;
        use serde_json::json;

        const KEYS: &[&str] = &[
            "choices",
            "index",
            "delta",
            "message",
            "content",
            "refusal",
            "tool_calls",
            "id",
            "type",
            "function",
            "name",
            "arguments",
            "finish_reason",
            "usage",
            "prompt_tokens",
            "completion_tokens",
            "error",
            "code",
        ];

        /// JSON whose keys are mostly the API's, so parsing gets past the first level.
        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                (0u64..4).prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                "[a-z{}\\[\\]\":,]{0,6}".prop_map(Value::from),
            ];
            leaf.prop_recursive(5, 48, 5, |inner| {
                prop_oneof![
                    vec(inner.clone(), 0..4).prop_map(Value::Array),
                    vec((select(KEYS), inner), 0..5).prop_map(|fields| {
                        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                    }),
                ]
            })
        }

        /// Well-shaped tool call deltas with optional parts, to exercise the routing.
        fn tool_call_chunk() -> impl Strategy<Value = Value> {
            let call = (
                proptest::option::of(0u64..3),
                proptest::option::of(select(&["", "a", "b", "c"][..])),
                proptest::option::of(select(&["", "f", "g", "fg"][..])),
                proptest::option::of("[{}\":a-z0-9]{0,5}"),
            )
                .prop_map(|(index, id, name, arguments)| {
                    json!({"index": index, "id": id,
                           "function": {"name": name, "arguments": arguments}})
                });
            (
                vec(call, 0..3),
                proptest::option::of(select(&["stop", "tool_calls"][..])),
            )
                .prop_map(|(calls, finish)| {
                    json!({"choices": [{"index": 0,
                                        "delta": {"content": "x", "tool_calls": calls},
                                        "finish_reason": finish}]})
                })
        }

        fn check(chunks: &[String]) {
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let (result, _) = feed_all(&chunks);
            if let Ok(response) = result {
                for call in &response.tool_calls {
                    assert!(!call.id.is_empty() && !call.name.is_empty(), "{call:?}");
                }
            }
            for chunk in chunks {
                let _ = parse_completion(chunk, 200);
                let _ = provider_message(chunk);
            }
        }

        proptest! {
            #[test]
            fn arbitrary_chunks_give_a_response_or_an_error(
                chunks in vec(
                    prop_oneof![
                        json().prop_map(|v| v.to_string()),
                        any::<String>(),
                        Just("[DONE]".to_owned()),
                    ],
                    0..8,
                )
            ) {
                check(&chunks);
            }

            #[test]
            fn sse_decoding_does_not_depend_on_how_the_bytes_are_split(
                tokens in vec(
                    select(&["data", "event", "error", "id", ":", " ", "x", "é", "[DONE]",
                             "\n", "\r", "\r\n", "\u{feff}"][..]),
                    0..40,
                ),
                size in 1usize..8,
            ) {
                let body = tokens.concat();
                let whole = decode(body.as_bytes(), body.len().max(1));
                let split = decode(body.as_bytes(), size);
                prop_assert_eq!(format!("{whole:?}"), format!("{split:?}"));
            }

            #[test]
            fn arbitrary_tool_call_deltas_give_named_calls_or_an_error(
                chunks in vec(tool_call_chunk().prop_map(|v| v.to_string()), 0..8),
                done in any::<bool>(),
            ) {
                let mut chunks = chunks;
                if done {
                    chunks.push("[DONE]".to_owned());
                }
                check(&chunks);
            }
        }
    }
}
