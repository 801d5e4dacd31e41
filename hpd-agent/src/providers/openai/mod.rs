//! [`OpenAiClient`]: a [`ChatClient`] for the OpenAI Chat Completions API, with tools.
//!
//! It works with api.openai.com and with the servers that speak the same API (Ollama, vLLM,
//! llama.cpp, LM Studio...): point [`OpenAiClient::with_base_url`] or `OPENAI_BASE_URL` at them.
//!
//! ```no_run
//! use std::time::Duration;
//! use hpd_agent::{ChatClient, ChatMessage};
//! use hpd_agent::chat::ChatRequest;
//! use hpd_agent::providers::openai::OpenAiClient;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
//! // A local Ollama server: no key needed.
//! let client = OpenAiClient::new("llama3.2", "")?
//!     .with_base_url("http://localhost:11434/v1")?
//!     .with_timeout(Duration::from_secs(300));
//! let messages = [ChatMessage::user("Why is the sky blue?")];
//! let request = ChatRequest::new("", &messages, &[]);
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
//!   jitter), honouring `retry-after-ms` or `Retry-After` (seconds or an HTTP date) capped at
//!   the maximum backoff, up to
//!   [`max_retries`](OpenAiClient::with_max_retries) times. Then the last failure is returned:
//!   [`ChatError::Status`] with the provider's `error.message`, or [`ChatError::Transport`].
//! - Other statuses are not retried.
//! - A connection that the server closes or resets before its answer arrives (hyper's
//!   "connection closed before message completed", a reset, a broken pipe) is retried like a
//!   failure to connect, on a fresh connection. This is what a request meets on a pooled
//!   keep-alive connection that the server or a load balancer closed while it was idle or
//!   right after its last response; the official OpenAI and Anthropic SDKs retry it too. A
//!   server that did process the request and then closed without answering could run it twice;
//!   [`with_max_retries(0)`](OpenAiClient::with_max_retries) turns every retry off. A whole
//!   (not streamed) body cut by a closed connection is retried too: no one saw it.
//! - Timeouts ([`ChatError::Timeout`]) are not retried: the request may still be running on the
//!   provider's side and a retry would pay for it twice.
//! - A stream is never retried once bytes of its body have arrived: its text may already have
//!   reached the [`TextSink`]. A stream cut by the connection is [`ChatError::Transport`] saying
//!   how many bytes had arrived and that the request is not sent again; the turn fails and the
//!   session keeps its history, so the application can run it again.
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
mod stream;
mod wire;

use std::fmt;

use async_trait::async_trait;

use crate::chat::{ChatClient, ChatError, ChatRequest, ChatResponse, TextSink};
use crate::providers::http::encode_body;
use crate::providers::settings::{Api, HttpSettings};

pub(crate) use stream::StreamAssembler;
use wire::{WireRequest, parse_completion};

/// The base URL used when none is given: the OpenAI API.
///
/// ```
/// use hpd_agent::providers::openai::OpenAiClient;
/// use hpd_agent::providers::openai::DEFAULT_BASE_URL;
///
/// assert_eq!(OpenAiClient::new("gpt-4o-mini", "sk-...")?.base_url(), DEFAULT_BASE_URL);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A [`ChatClient`] for the OpenAI Chat Completions API (`POST {base_url}/chat/completions`).
///
/// It streams by default (server-sent events): text deltas reach the [`TextSink`] as they arrive
/// and tool calls are assembled from their deltas. Requests are retried on HTTP 429, 5xx and
/// connection failures (see the [module docs](crate::providers::openai) for the whole error policy).
///
/// Mapping of the conversation to the wire format:
///
/// | [`ChatRequest`] | Chat Completions |
/// |---|---|
/// | `instructions` | a leading `system` message, omitted when empty |
/// | [`ChatMessage::User`](crate::ChatMessage::User) | `{"role": "user", "content"}` |
/// | [`ChatMessage::Assistant`](crate::ChatMessage::Assistant) | `{"role": "assistant", "content", "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}`; `content` is `null` when there is no text but there are tool calls; empty arguments are sent as `{}` |
/// | [`ChatMessage::Tool`](crate::ChatMessage::Tool) | `{"role": "tool", "tool_call_id", "content"}`; the `is_error` flag has no field in this API and is dropped (the result text already says `Error: ...`) |
/// | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]`, omitted when empty |
///
/// [`ModelOptions`](crate::chat::ModelOptions): `temperature`, `top_p`, `max_output_tokens` as
/// `max_completion_tokens`, `stop`, `seed`, `tool_choice` (`"auto"`, `"none"`, `"required"`,
/// `{"type": "function", "function": {"name"}}`) and `parallel_tool_calls` (both sent only with
/// tools, since the API rejects them without); nothing is ignored. `extra` is merged into the
/// body last (`{"max_tokens": 256}` for an older server that does not know
/// `max_completion_tokens`, `{"reasoning_effort": "low"}`...).
///
/// What comes back: `finish_reason` `stop`, `tool_calls` (or the older `function_call`),
/// `length` and `content_filter` map to their [`FinishReason`](crate::chat::FinishReason), anything
/// else to `Other`; usage reads `prompt_tokens_details.cached_tokens` and
/// `completion_tokens_details.reasoning_tokens`; `reasoning_content` (llama.cpp, vLLM,
/// DeepSeek) becomes [`Reasoning`](crate::chat::Reasoning) text, not answer text, and is sent back
/// on assistant messages with tool calls (servers that think need it inside a tool loop).
///
/// Cloning is cheap: clones share one connection pool. The API key is never printed by `Debug`
/// nor shown in an error (a key the server echoes in its message is replaced by
/// `<redacted>`).
///
/// ```no_run
/// use hpd_agent::{ChatClient, ChatMessage};
/// use hpd_agent::chat::ChatRequest;
/// use hpd_agent::providers::openai::OpenAiClient;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::chat::ChatError> {
/// let client = OpenAiClient::from_env("gpt-4o-mini")?;
/// let messages = [ChatMessage::user("Say hello")];
/// let request = ChatRequest::new("Be brief.", &messages, &[]);
/// let response = client.complete(request, &|delta: &str| print!("{delta}")).await?;
/// println!("\n{:?}", response.usage);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OpenAiClient {
    settings: HttpSettings,
    tool_images: crate::chat::ToolImages,
}

/// The Chat Completions API, for the shared client plumbing.
static API: Api = Api {
    what: "OpenAI chat completion",
    default_base_url: DEFAULT_BASE_URL,
    path: "/chat/completions",
    key_header: "authorization",
    key_prefix: "Bearer ",
    headers: &[],
    key_var: "OPENAI_API_KEY",
    base_url_var: "OPENAI_BASE_URL",
    keyed_host: "api.openai.com",
    missing_key: "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL to a server that \
                  needs no key (Ollama, vLLM, llama.cpp)",
};

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.settings
            .debug_struct(f, "OpenAiClient")
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
    /// use hpd_agent::providers::openai::OpenAiClient;
    ///
    /// let client = OpenAiClient::new("gpt-4o-mini", "sk-...")?;
    /// assert_eq!(client.model(), "gpt-4o-mini");
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChatError::Config`] when `model` is empty, when the key cannot be sent in an HTTP header
    /// (control characters, line breaks), or when the HTTP client cannot be initialised.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, ChatError> {
        let settings = HttpSettings::new(&API, model.into(), &api_key.into())?;
        Ok(OpenAiClient {
            settings,
            tool_images: crate::chat::ToolImages::Send,
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
    /// use hpd_agent::providers::openai::OpenAiClient;
    ///
    /// let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    /// let _client = OpenAiClient::from_env(model)?;
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
        Ok(OpenAiClient {
            settings,
            tool_images: crate::chat::ToolImages::Send,
        })
    }

    /// Sends requests to `base_url` instead: `{base_url}/chat/completions` (a trailing `/` is
    /// ignored).
    ///
    /// ```
    /// use hpd_agent::providers::openai::OpenAiClient;
    ///
    /// // Ollama needs no key.
    /// let client = OpenAiClient::new("llama3.2", "")?.with_base_url("http://localhost:11434/v1/")?;
    /// assert_eq!(client.base_url(), "http://localhost:11434/v1");
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

    /// What requests do with the images of tool results: a `user` message with `image_url` parts after the tool messages (tool messages take text only) by default
    /// ([`ToolImages::Send`](crate::chat::ToolImages::Send)), or their text form
    /// ([`ToolImages::Describe`](crate::chat::ToolImages::Describe)) for a model or server that takes
    /// no images.
    ///
    /// ```
    /// use hpd_agent::providers::openai::OpenAiClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// let client = OpenAiClient::new("gpt-4o-mini", "sk-...")?;
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
    /// use hpd_agent::providers::openai::OpenAiClient;
    /// use hpd_agent::chat::ToolImages;
    ///
    /// assert_eq!(OpenAiClient::new("gpt-4o-mini", "sk-...")?.tool_images(), ToolImages::Send);
    /// # Ok::<(), hpd_agent::chat::ChatError>(())
    /// ```
    #[must_use]
    pub fn tool_images(&self) -> crate::chat::ToolImages {
        self.tool_images
    }

    super::http_setters!(
        OpenAiClient,
        "openai",
        "OpenAiClient::new(\"gpt-4o-mini\", \"sk-...\")"
    );
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
        let mut described = None;
        let request = super::with_tool_images(request, self.tool_images, &mut described);
        let body = encode_body(
            &WireRequest::new(&self.settings.model, request, self.settings.streaming),
            &request.options.extra,
        )?;
        self.settings
            .exchange(&body, StreamAssembler::new, parse_completion, text)
            .await
    }

    fn model_info(&self) -> crate::chat::ModelInfo<'_> {
        crate::chat::ModelInfo::new("openai")
            .with_model(&self.settings.model)
            .with_base_url(&self.settings.base_url)
    }
}

// The parser of a non-streamed body, without a connection, for the fuzz targets (which feed
// streams to `StreamAssembler` through `http::parse_stream_chunks`).
#[cfg(feature = "fuzzing")]
pub(crate) use wire::parse_completion as parse_body;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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
        let message = config_message(OpenAiClient::from_lookup("m".into(), &lookup(&[])));
        assert!(message.contains("OPENAI_API_KEY is not set"), "{message}");
        let message = config_message(OpenAiClient::from_lookup(
            "m".into(),
            &lookup(&[
                ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                ("OPENAI_API_KEY", "  "),
            ]),
        ));
        assert!(message.contains("OPENAI_API_KEY is not set"), "{message}");

        let local = OpenAiClient::from_lookup(
            "llama3.2".into(),
            &lookup(&[("OPENAI_BASE_URL", "http://localhost:11434/v1/")]),
        )
        .unwrap();
        assert_eq!(local.base_url(), "http://localhost:11434/v1");
        assert_eq!(
            local.settings.transport.endpoint.as_str(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert!(!local.settings.transport.has_header("authorization"));

        let keyed =
            OpenAiClient::from_lookup("m".into(), &lookup(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(keyed.base_url(), DEFAULT_BASE_URL);
        assert_eq!(
            keyed.settings.transport.header("authorization").unwrap(),
            "Bearer sk-1"
        );
    }

    #[test]
    fn bad_configuration_is_a_config_error() {
        let message = config_message(OpenAiClient::from_lookup(
            "m".into(),
            &lookup(&[("OPENAI_BASE_URL", "localhost:11434")]),
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
}
