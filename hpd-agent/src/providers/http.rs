//! What the HTTP providers share: the [`Transport`] (sending with retries, reading a stream or
//! a body within the timeout), base URLs, error texts of provider bodies, and the redaction of
//! secrets.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use backon::Retryable as _;
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::{Instant, timeout, timeout_at};

use crate::chat::{ChatError, ChatResponse, TextSink};

use super::retry::{RetryPolicy, retry_after};
use super::sse::{Flow, SseDecoder, SseEvent};

/// Longest body text kept in an error message.
pub(crate) const MAX_ERROR_TEXT: usize = 2000;
/// Longest excerpt of a bad chunk quoted in a [`ChatError::Malformed`].
pub(crate) const MAX_EXCERPT: usize = 200;
/// Secrets shorter than this are not redacted from error texts.
const MIN_SECRET_LEN: usize = 6;
/// The default timeout of every HTTP provider.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Builds a [`ChatResponse`] from the events of one stream.
pub(crate) trait StreamParser {
    /// Feeds one event.
    fn feed_event(&mut self, event: &SseEvent, sink: TextSink<'_>) -> Result<Flow, ChatError>;
    /// The response once the stream ended (`done`: the parser said [`Flow::Done`]).
    fn finish(self, done: bool) -> Result<ChatResponse, ChatError>;
}

/// Sends requests to one endpoint, retrying as the [`RetryPolicy`] says, and reads answers
/// within the timeout.
#[derive(Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    /// A client that keeps no idle connection, made on first need: an attempt after one that
    /// died on a closed connection goes through it, so it cannot meet another stale pooled
    /// connection (after a server restart every idle one is stale).
    fresh: Arc<OnceLock<reqwest::Client>>,
    pub(crate) endpoint: reqwest::Url,
    headers: HeaderMap,
    /// Texts that never appear in an error (the API key).
    secrets: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    /// What a request is, for the retry trace ("OpenAI chat completion").
    what: &'static str,
}

impl Transport {
    pub(crate) fn new(what: &'static str, endpoint: reqwest::Url) -> Result<Self, ChatError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("hpd-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ChatError::Config(format!("HTTP client: {}", error_chain(&e))))?;
        Ok(Transport {
            http,
            fresh: Arc::default(),
            endpoint,
            headers: HeaderMap::new(),
            secrets: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            what,
        })
    }

    /// Adds a header holding a secret (`value` is `prefix` + `secret`): marked sensitive, and
    /// `secret` is redacted from every error.
    pub(crate) fn set_secret_header(
        &mut self,
        name: HeaderName,
        prefix: &str,
        secret: &str,
    ) -> Result<(), ChatError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{secret}")).map_err(|_| {
            ChatError::Config(
                "the API key contains characters not allowed in an HTTP header".into(),
            )
        })?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        // Shorter texts are no real secret, and replacing them would garble messages.
        if secret.chars().count() >= MIN_SECRET_LEN {
            self.secrets.push(secret.to_owned());
        }
        Ok(())
    }

    /// Adds a plain header.
    pub(crate) fn set_header(&mut self, name: HeaderName, value: HeaderValue) {
        self.headers.insert(name, value);
    }

    pub(crate) fn has_header(&self, name: &str) -> bool {
        self.headers.contains_key(name)
    }

    /// A plain header's value, when set and text.
    pub(crate) fn header(&self, name: impl reqwest::header::AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Sends `body` and reads the answer: a `text/event-stream` through `parser`, a body
    /// through `parse_body`. A response whose `Content-Type` says JSON or event stream is read
    /// as such whatever was asked; one of any other type is read whole as a body (a stream
    /// without a `Content-Type` is still read as a stream). Secrets are redacted from errors.
    ///
    /// An attempt that fails before any of the answer was read (HTTP 429 or 5xx, a failure to
    /// connect, a connection the server closed or reset, a body cut before it was complete) is
    /// sent again as the [`RetryPolicy`] says; after a closed connection, every further attempt
    /// goes on a new connection (not another pooled one, which may be stale too). A stream that breaks after some of it arrived is not sent again
    /// (its text may already be on the user's screen): the error says so.
    pub(crate) async fn exchange<P: StreamParser + Send>(
        &self,
        body: &[u8],
        streaming: bool,
        parser: impl Fn(u16) -> P,
        parse_body: impl Fn(&str, u16) -> Result<ChatResponse, ChatError>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        // After a closed connection, every further attempt goes on a fresh one.
        let fresh = AtomicBool::new(false);
        let mut attempt: u32 = 0;
        let result = (|| async {
            let result = self
                .attempt(
                    body,
                    streaming,
                    fresh.load(Ordering::Relaxed),
                    &parser,
                    &parse_body,
                    text,
                )
                .await;
            if let Err(Failure::Retryable { closed: true, .. }) = &result {
                fresh.store(true, Ordering::Relaxed);
            }
            // Redacted here, so that the retry trace shows no secret either.
            result.map_err(|failure| match failure {
                Failure::Retryable {
                    error,
                    server_wait,
                    closed,
                } => Failure::Retryable {
                    error: self.redact(error),
                    server_wait,
                    closed,
                },
                Failure::Final(error) => Failure::Final(self.redact(error)),
            })
        })
        .retry(self.retry.backoff_builder())
        .when(|failure| matches!(failure, Failure::Retryable { .. }))
        // The wait the server asked for replaces the computed one (not the count of retries:
        // when the policy is spent, `next` is `None` and so is this).
        .adjust(|failure, next| match failure {
            Failure::Retryable {
                server_wait: Some(wait),
                ..
            } => next.map(|_| self.retry.server_delay(*wait)),
            _ => next,
        })
        .notify(|failure, delay| {
            attempt += 1;
            if let Failure::Retryable { error, .. } = failure {
                tracing::warn!(
                    attempt,
                    max_retries = self.retry.max_retries,
                    ?delay,
                    %error,
                    "retrying {} request",
                    self.what
                );
            }
        })
        .await;
        result.map_err(|failure| match failure {
            Failure::Retryable { error, .. } | Failure::Final(error) => error,
        })
    }

    /// One attempt of [`exchange`](Self::exchange).
    async fn attempt<P: StreamParser + Send>(
        &self,
        body: &[u8],
        streaming: bool,
        fresh: bool,
        parser: &impl Fn(u16) -> P,
        parse_body: &impl Fn(&str, u16) -> Result<ChatResponse, ChatError>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, Failure> {
        let (response, deadline) = self.send(body, streaming, fresh).await?;
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let status = response.status().as_u16();
        if content_type.starts_with("text/event-stream") || (streaming && content_type.is_empty()) {
            let mut parser = parser(status);
            let done = self
                .read_stream(response, &mut |event| parser.feed_event(&event, text))
                .await?;
            return parser.finish(done).map_err(Failure::Final);
        }
        let body = self.read_body(response, deadline).await?;
        let result = parse_body(&body, status);
        if let Ok(response) = &result
            && let Some(whole) = &response.text
        {
            text(whole);
        }
        if content_type.is_empty() || content_type.contains("json") {
            return result.map_err(Failure::Final);
        }
        // Not an API response at all, most likely: say what it was.
        result.map_err(|e| {
            Failure::Final(match e {
                ChatError::Malformed(message) => ChatError::Malformed(format!(
                    "the server answered with `{}`, neither an event stream nor JSON: {message}",
                    shorten(&content_type, MAX_EXCERPT)
                )),
                other => other,
            })
        })
    }

    /// Replaces every secret in the error's text by `<redacted>`.
    pub(crate) fn redact(&self, error: ChatError) -> ChatError {
        let clean = |text: String| {
            self.secrets.iter().fold(text, |text, secret| {
                text.replace(secret.as_str(), "<redacted>")
            })
        };
        match error {
            ChatError::Status { status, message } => ChatError::Status {
                status,
                message: clean(message),
            },
            ChatError::Transport(m) => ChatError::Transport(clean(m)),
            ChatError::Malformed(m) => ChatError::Malformed(clean(m)),
            ChatError::Config(m) => ChatError::Config(clean(m)),
            other => other,
        }
    }

    /// The client of an attempt: the pooled one, or with `fresh` one that opens a new
    /// connection for every request (built on first need; the pooled one if that fails).
    fn client(&self, fresh: bool) -> &reqwest::Client {
        if !fresh {
            return &self.http;
        }
        if let Some(client) = self.fresh.get() {
            return client;
        }
        match reqwest::Client::builder()
            .user_agent(concat!("hpd-agent/", env!("CARGO_PKG_VERSION")))
            .pool_max_idle_per_host(0)
            .build()
        {
            Ok(client) => self.fresh.get_or_init(|| client),
            Err(_) => &self.http,
        }
    }

    /// Sends `body` once (with `fresh`, on a new connection). Returns a successful response and
    /// the deadline of the attempt.
    async fn send(
        &self,
        body: &[u8],
        streaming: bool,
        fresh: bool,
    ) -> Result<(reqwest::Response, Instant), Failure> {
        let deadline = Instant::now() + self.timeout;
        let mut request = self
            .client(fresh)
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if streaming {
            request = request.header(ACCEPT, "text/event-stream");
        }
        match timeout_at(deadline, request.send()).await {
            Err(_) => Err(Failure::Final(ChatError::Timeout(self.timeout))),
            Ok(Ok(response)) if response.status().is_success() => Ok((response, deadline)),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let server_wait = retry_after(response.headers());
                let message = match timeout_at(deadline, response.text()).await {
                    Ok(Ok(text)) => provider_message(&text),
                    Ok(Err(e)) => format!("(the body could not be read: {})", error_chain(&e)),
                    Err(_) => "(the body did not arrive within the timeout)".into(),
                };
                let error = ChatError::Status { status, message };
                if self.retry.is_retryable_status(status) {
                    Err(Failure::Retryable {
                        error,
                        server_wait,
                        closed: false,
                    })
                } else {
                    Err(Failure::Final(error))
                }
            }
            Ok(Err(e)) if e.is_timeout() => Err(Failure::Final(ChatError::Timeout(self.timeout))),
            Ok(Err(e)) if e.is_connect() => Err(Failure::Retryable {
                error: ChatError::Transport(error_chain(&e)),
                server_wait: None,
                closed: false,
            }),
            Ok(Err(e)) if is_closed_connection(&e) => Err(Failure::Retryable {
                error: ChatError::Transport(format!(
                    "the server closed the connection before it answered (most often a pooled \
                     keep-alive connection it had just closed; the request is sent again on a \
                     fresh connection while the retry policy allows): {}",
                    error_chain(&e)
                )),
                server_wait: None,
                closed: true,
            }),
            Ok(Err(e)) => Err(Failure::Final(ChatError::Transport(error_chain(&e)))),
        }
    }

    /// Reads a `text/event-stream` response, passing each event to `on_event`. The timeout
    /// applies to each read of the raw body, before decoding, so keep-alive comments count as
    /// traffic. Returns whether `on_event` ended the stream ([`Flow::Done`]) rather than the
    /// connection.
    ///
    /// A connection closed before the first byte of the body can be retried; once bytes have
    /// arrived, a broken stream is final and its error says that it was not sent again.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        on_event: &mut (dyn FnMut(SseEvent) -> Result<Flow, ChatError> + Send),
    ) -> Result<bool, Failure> {
        let mut decoder = SseDecoder::default();
        let mut bytes = pin!(response.bytes_stream());
        let mut received: usize = 0;
        loop {
            let chunk = match timeout(self.timeout, bytes.next()).await {
                Err(_) => return Err(Failure::Final(ChatError::Timeout(self.timeout))),
                // An event left unfinished at the end is dropped, as the format says.
                Ok(None) => return Ok(false),
                Ok(Some(Ok(chunk))) => chunk,
                Ok(Some(Err(e))) => {
                    if e.is_timeout() {
                        return Err(Failure::Final(ChatError::Timeout(self.timeout)));
                    }
                    if received == 0 && is_closed_connection(&e) {
                        return Err(Failure::Retryable {
                            error: ChatError::Transport(format!(
                                "the server closed the connection before the stream's first \
                                 byte: {}",
                                error_chain(&e)
                            )),
                            server_wait: None,
                            closed: true,
                        });
                    }
                    return Err(Failure::Final(ChatError::Transport(format!(
                        "the stream was interrupted after {received} bytes of it had arrived; \
                         the request is not sent again, because what was streamed may already \
                         have been delivered: {}",
                        error_chain(&e)
                    ))));
                }
            };
            received = received.saturating_add(chunk.len());
            if decoder.push(&chunk, on_event).map_err(Failure::Final)? == Flow::Done {
                return Ok(true);
            }
        }
    }

    /// Reads a whole body as UTF-8 text within the attempt's deadline. A body cut by a closed
    /// connection was seen by no one, so the attempt can be retried.
    async fn read_body(
        &self,
        response: reqwest::Response,
        deadline: Instant,
    ) -> Result<String, Failure> {
        let bytes = match timeout_at(deadline, response.bytes()).await {
            Err(_) => return Err(Failure::Final(ChatError::Timeout(self.timeout))),
            Ok(Err(e)) if e.is_timeout() => {
                return Err(Failure::Final(ChatError::Timeout(self.timeout)));
            }
            Ok(Err(e)) => {
                let error = ChatError::Transport(format!(
                    "reading the response body failed: {}",
                    error_chain(&e)
                ));
                return Err(if is_closed_connection(&e) {
                    Failure::Retryable {
                        error,
                        server_wait: None,
                        closed: true,
                    }
                } else {
                    Failure::Final(error)
                });
            }
            Ok(Ok(bytes)) => bytes,
        };
        String::from_utf8(bytes.to_vec()).map_err(|e| {
            Failure::Final(ChatError::Malformed(format!(
                "the response body is not valid UTF-8: {e}"
            )))
        })
    }
}

/// Why an attempt failed, and whether it may be sent again.
pub(crate) enum Failure {
    /// Sent again while the retry policy allows; `server_wait` is the wait the server asked for,
    /// `closed` whether the connection was closed under the attempt (the next goes on a new
    /// one).
    Retryable {
        error: ChatError,
        server_wait: Option<Duration>,
        closed: bool,
    },
    /// Returned as it is.
    Final(ChatError),
}

impl From<ChatError> for Failure {
    fn from(error: ChatError) -> Self {
        Failure::Final(error)
    }
}

/// Whether `error` says the connection was closed or reset under a request: hyper's
/// "connection closed before message completed" (an incomplete message), or a reset, aborted
/// or broken connection, or an early end of file, anywhere in its sources. These are what a
/// request meets on a pooled keep-alive connection that the server (or a load balancer) closed
/// while it was idle, or right after its last response.
pub(crate) fn is_closed_connection(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(cause) = current {
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_canceled())
        {
            return true;
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        current = cause.source();
    }
    false
}

/// Builds the response of a stream from its raw body, given as the chunks it arrived in,
/// without a connection: what [`Transport`] does with the bytes of a `text/event-stream`
/// answer (an event left unfinished at the end is dropped; the parser sees whether the stream
/// ended itself).
///
/// # Errors
///
/// What the decoder or the parser reports.
#[cfg(feature = "fuzzing")]
pub(crate) fn parse_stream_chunks<P: StreamParser>(
    mut parser: P,
    chunks: &[&[u8]],
    text: TextSink<'_>,
) -> Result<ChatResponse, ChatError> {
    let mut decoder = SseDecoder::default();
    for chunk in chunks {
        if decoder.push(chunk, &mut |event| parser.feed_event(&event, text))? == Flow::Done {
            return parser.finish(true);
        }
    }
    parser.finish(false)
}

/// Checks a base URL and returns it without a trailing `/`, with the endpoint `{base}{path}`.
/// `example` is named in the error.
pub(crate) fn parse_base_url(
    base_url: &str,
    path: &str,
    example: &str,
) -> Result<(String, reqwest::Url), ChatError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let url = reqwest::Url::parse(trimmed)
        .map_err(|e| ChatError::Config(format!("invalid base URL '{base_url}': {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ChatError::Config(format!(
            "invalid base URL '{base_url}': expected an http or https URL such as {example}"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ChatError::Config(format!(
            "invalid base URL '{base_url}': it must not have a query or fragment"
        )));
    }
    let endpoint = reqwest::Url::parse(&format!("{trimmed}{path}"))
        .map_err(|e| ChatError::Config(format!("invalid base URL '{base_url}': {e}")))?;
    Ok((trimmed.to_owned(), endpoint))
}

/// An error and its sources, `outer: inner: innermost`, skipping repeats.
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
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

/// The message of an error body: `error.message`, `error` as a string, or a top-level `message`;
/// else the body text (shortened).
pub(crate) fn provider_message(body: &str) -> String {
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

pub(crate) fn json_error_message(json: &Value) -> Option<String> {
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
pub(crate) fn embedded_error(error: &Value, http_status: u16) -> ChatError {
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

/// The error carried by an `error:` field or an `error` event: JSON such as llama.cpp's
/// `{"code": 400, "message": ...}` or `{"error": {...}}`, or plain text.
pub(crate) fn stream_error(text: &str, http_status: u16) -> ChatError {
    let text = text.trim();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => match object.get("error") {
            Some(error) if !error.is_null() => embedded_error(error, http_status),
            _ => embedded_error(&Value::Object(object), http_status),
        },
        Ok(Value::String(message)) => ChatError::Status {
            status: http_status,
            message: shorten(&message, MAX_ERROR_TEXT),
        },
        _ => ChatError::Status {
            status: http_status,
            message: if text.is_empty() {
                "(the stream reported an error without a message)".into()
            } else {
                shorten(text, MAX_ERROR_TEXT)
            },
        },
    }
}

pub(crate) fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// Deserializes `text`, naming the JSON path of the first problem.
pub(crate) fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
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
pub(crate) fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

/// The arguments of a tool call of the history as a request sends them back: the model's text
/// when it is a JSON object, `{}` otherwise. Arguments that are not an object (empty, malformed,
/// or cut off at the output limit; the call's result already told the model so) would make
/// servers that parse them refuse the whole request (llama.cpp answers HTTP 500 "Failed to parse
/// tool call arguments as JSON"), and the session could not go on. The session's history keeps
/// the model's text unchanged; only the request carries `{}`. (The Anthropic client applies the
/// same rule to the `input` object of its `tool_use` blocks.)
pub(crate) fn arguments_to_send(arguments: &str) -> &str {
    let object = arguments.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok();
    if object { arguments } else { "{}" }
}

/// Encodes a request body: `body` as JSON with the fields of `extra` merged into its top level
/// (replacing fields of the same name).
pub(crate) fn encode_body(
    body: &impl serde::Serialize,
    extra: &serde_json::Map<String, Value>,
) -> Result<Vec<u8>, ChatError> {
    let encode_error =
        |e: serde_json::Error| ChatError::Config(format!("the request cannot be encoded: {e}"));
    if extra.is_empty() {
        return serde_json::to_vec(body).map_err(encode_error);
    }
    let mut value = serde_json::to_value(body).map_err(encode_error)?;
    if let Value::Object(object) = &mut value {
        for (key, field) in extra {
            object.insert(key.clone(), field.clone());
        }
    }
    serde_json::to_vec(&value).map_err(encode_error)
}

/// The error a server-sent event reports beside its `data`, for the APIs whose events carry
/// their `type` in `data` (`E` is such an event): an `error:` field (llama.cpp), or an `error`
/// event whose data is not an `E` (its data is then the error). `None` when the data is to be
/// read as an event.
pub(crate) fn event_error<E: DeserializeOwned>(
    event: &SseEvent,
    http_status: u16,
) -> Option<ChatError> {
    if let Some(error) = &event.error {
        return Some(stream_error(error, http_status));
    }
    if event.event == "error" && serde_json::from_str::<E>(&event.data).is_err() {
        return Some(stream_error(&event.data, http_status));
    }
    None
}

/// Reads `name` from `lookup`, trimmed; empty counts as unset.
pub(crate) fn env_var(lookup: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_that_are_not_an_object_go_back_as_an_empty_one() {
        assert_eq!(
            arguments_to_send(r#"{"city": "Oslo"}"#),
            r#"{"city": "Oslo"}"#
        );
        assert_eq!(arguments_to_send(" {}\n"), " {}\n");
        for sent in [
            "",
            "  ",
            r#"{"name": "get_weather", "arguments": {"city": "Oslo","#,
            r#"["Oslo"]"#,
            r#""Oslo""#,
            "null",
            r#"{"city": "Oslo"} trailing"#,
        ] {
            assert_eq!(arguments_to_send(sent), "{}", "{sent:?}");
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
            provider_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
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

    #[test]
    fn secrets_are_redacted_from_every_error_text() {
        let endpoint = reqwest::Url::parse("http://127.0.0.1:1/x").unwrap();
        let mut transport = Transport::new("test", endpoint).unwrap();
        transport
            .set_secret_header(reqwest::header::AUTHORIZATION, "Bearer ", "sk-secret")
            .unwrap();
        let cases = [
            ChatError::Status {
                status: 401,
                message: "Incorrect API key provided: sk-secret.".into(),
            },
            ChatError::Transport("sk-secret".into()),
            ChatError::Malformed("x sk-secret y".into()),
            ChatError::Config("sk-secretsk-secret".into()),
        ];
        for error in cases {
            let text = transport.redact(error).to_string();
            assert!(!text.contains("sk-secret"), "{text}");
            assert!(text.contains("<redacted>"), "{text}");
        }
    }
}
