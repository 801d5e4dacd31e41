//! The HTTP client of the streamable-HTTP MCP transport: `rmcp`'s own `reqwest` client, with
//! requests the server closed under them sent again.
//!
//! `rmcp` retries nothing of a request (its `RetryConfig` covers only reconnecting the
//! server's event stream), so a POST that met a connection the server or a load balancer closed
//! or reset before answering would fail the MCP call. [`RetryingHttpClient`] wraps the
//! `reqwest::Client` implementation of `rmcp`'s [`StreamableHttpClient`] and sends such a
//! request again on a fresh connection, as the crate's [`RetryPolicy`] says (default: 3 times,
//! with backoff). Any other failure, and every answer the server sent, goes to `rmcp`
//! unchanged.
//!
//! Like `rmcp`'s default client, this one keeps no idle connection in its pool, so a request
//! rarely meets a stale one; the retry covers the requests that still do (a proxy's keep-alive
//! connection to the client is not the client's to choose), and a server that closes a fresh
//! connection before answering.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use backon::Retryable as _;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use crate::providers::http::{error_chain, is_closed_connection};
use crate::providers::retry::RetryPolicy;

/// Longest chain of same-origin redirects followed, as `rmcp`'s default client does.
const MAX_REDIRECTS: usize = 10;

/// `rmcp`'s `reqwest` client, retrying requests whose connection was closed before the answer.
#[derive(Clone)]
pub(crate) struct RetryingHttpClient {
    inner: reqwest::Client,
    retry: RetryPolicy,
    /// The server's name, for the retry trace.
    server: Arc<str>,
}

impl RetryingHttpClient {
    /// A client for the server named `server`, configured as `rmcp`'s default one: no idle
    /// connections kept, same-origin 307 and 308 redirects followed (they keep the method and
    /// the body), anything else returned as it is.
    pub(crate) fn new(server: &str, retry: RetryPolicy) -> Result<Self, String> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            if same_origin && keeps_body && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map_err(|e| format!("the HTTP client cannot be built: {e}"))?;
        Ok(RetryingHttpClient {
            inner,
            retry,
            server: server.into(),
        })
    }

    /// Runs `send` until it succeeds, fails otherwise than on a closed connection, or the
    /// retry policy is spent.
    async fn with_retries<T, F, Fut>(
        &self,
        what: &str,
        send: F,
    ) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut attempt: u32 = 0;
        let result = send
            .retry(self.retry.backoff_builder())
            .when(|error| {
                matches!(error, StreamableHttpError::Client(cause) if is_closed_connection(cause))
            })
            .notify(|error, delay| {
                attempt += 1;
                tracing::warn!(
                    target: "hpd_agent::mcp",
                    server = %self.server,
                    attempt,
                    max_retries = self.retry.max_retries,
                    ?delay,
                    %error,
                    "the connection was closed before the answer; sending the {what} again"
                );
            })
            .await;
        match result {
            // A closed connection still, once the policy is spent: `reqwest`'s text does not
            // name the cause; this one does, and what was tried.
            Err(StreamableHttpError::Client(cause)) if is_closed_connection(&cause) => {
                Err(StreamableHttpError::UnexpectedServerResponse(
                    format!(
                        "the server closed the connection before it answered the {what}, {} \
                         times (sent again on a fresh connection {attempt} times): {}",
                        attempt + 1,
                        error_chain(&cause)
                    )
                    .into(),
                ))
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for RetryingHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        // The struct is non-exhaustive: set the one field on the defaults.
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.with_retries("request", || {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.with_retries("session deletion", || {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    // Reconnecting the event stream is `rmcp`'s (its `RetryConfig`); a GET is sent once here.
    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// Longest wait, after the handshake, for the session's event stream to open.
pub(crate) const EVENT_STREAM_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Where the session's standalone event stream (the GET `rmcp` opens once the server gave a
/// session id) stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventStream {
    /// No answer carried a session id: no stream is opened.
    NoSession,
    /// The server gave a session id; the GET has not been answered yet.
    Opening,
    /// The GET was answered (a stream, or a refusal such as 405).
    Settled,
}

/// Tells when the session's event stream is open.
///
/// `rmcp` opens the stream in the background once `initialize` is answered, so the first
/// request can reach the server before it. A server that sends a request of its own there
/// right away (an elicitation during the first tool call, say) would find no stream and, as
/// the transport allows, drop the message; the call would then wait for an answer that never
/// comes. [`connect`](super::connection) waits for [`settled`](Self::settled) before it calls
/// the session connected.
#[derive(Clone)]
pub(crate) struct EventStreamGate(Arc<tokio::sync::watch::Sender<EventStream>>);

impl Default for EventStreamGate {
    fn default() -> Self {
        EventStreamGate(Arc::new(tokio::sync::watch::Sender::new(
            EventStream::NoSession,
        )))
    }
}

impl EventStreamGate {
    fn session_given(&self) {
        self.0.send_if_modified(|state| {
            let first = *state == EventStream::NoSession;
            if first {
                *state = EventStream::Opening;
            }
            first
        });
    }

    fn answered(&self) {
        self.0.send_replace(EventStream::Settled);
    }

    /// Waits, at most `bound`, until the event stream the session opens is answered. Returns at
    /// once when no session id was given. `false` when the bound passed first.
    pub(crate) async fn settled(&self, bound: std::time::Duration) -> bool {
        let mut state = self.0.subscribe();
        if *state.borrow_and_update() == EventStream::NoSession {
            return true;
        }
        tokio::time::timeout(bound, state.wait_for(|s| *s == EventStream::Settled))
            .await
            .is_ok_and(|answer| answer.is_ok())
    }
}

/// A streamable-HTTP client that reports to an [`EventStreamGate`]: an answer with a session
/// id, and the answer to the GET that opens the session's event stream. Everything else goes
/// to the inner client unchanged.
#[derive(Clone)]
pub(crate) struct GatedHttpClient<C> {
    inner: C,
    gate: EventStreamGate,
}

impl<C> GatedHttpClient<C> {
    pub(crate) fn new(inner: C, gate: EventStreamGate) -> Self {
        GatedHttpClient { inner, gate }
    }

    fn saw_post<E>(&self, answer: &Result<StreamableHttpPostResponse, E>) {
        if let Ok(
            StreamableHttpPostResponse::Json(_, Some(_))
            | StreamableHttpPostResponse::Sse(_, Some(_)),
        ) = answer
        {
            self.gate.session_given();
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for GatedHttpClient<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.saw_post(&answer);
        answer
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.saw_post(&answer);
        answer
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.saw_post(&answer);
        answer
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let answer = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.gate.answered();
        answer
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let answer = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.gate.answered();
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::model::{ClientRequest, PingRequest, ServerJsonRpcMessage, ServerResult};

    use super::*;

    /// A server that gives a session id (or none) and answers the GET after `get_delay`.
    #[derive(Clone)]
    struct SlowStream {
        session: bool,
        get_delay: Duration,
    }

    impl StreamableHttpClient for SlowStream {
        type Error = std::io::Error;

        async fn post_message(
            &self,
            _uri: Arc<str>,
            _message: ClientJsonRpcMessage,
            _session_id: Option<Arc<str>>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            let answer = ServerJsonRpcMessage::response(
                ServerResult::empty(()),
                rmcp::model::NumberOrString::Number(1),
            );
            Ok(StreamableHttpPostResponse::Json(
                answer,
                self.session.then(|| "s-1".to_owned()),
            ))
        }

        async fn delete_session(
            &self,
            _uri: Arc<str>,
            _session_id: Arc<str>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            Ok(())
        }

        async fn get_stream(
            &self,
            _uri: Arc<str>,
            _session_id: Option<Arc<str>>,
            _last_event_id: Option<String>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<
            BoxStream<'static, Result<sse_stream::Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        > {
            tokio::time::sleep(self.get_delay).await;
            Err(StreamableHttpError::ServerDoesNotSupportSse)
        }
    }

    fn ping() -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(PingRequest::default()),
            rmcp::model::NumberOrString::Number(1),
        )
    }

    async fn post(client: &GatedHttpClient<SlowStream>) {
        client
            .post_message("http://x/mcp".into(), ping(), None, None, HashMap::new())
            .await
            .expect("the fake answers");
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_waits_for_its_event_stream_to_be_answered() {
        let gate = EventStreamGate::default();
        let client = GatedHttpClient::new(
            SlowStream {
                session: true,
                get_delay: Duration::from_millis(300),
            },
            gate.clone(),
        );
        post(&client).await;
        let opening = tokio::spawn({
            let client = client.clone();
            async move {
                client
                    .get_stream(
                        "http://x/mcp".into(),
                        Some("s-1".into()),
                        None,
                        None,
                        HashMap::new(),
                    )
                    .await
                    .is_err()
            }
        });
        let started = tokio::time::Instant::now();
        assert!(gate.settled(Duration::from_secs(2)).await);
        assert_eq!(started.elapsed(), Duration::from_millis(300));
        assert!(opening.await.unwrap(), "the refusal reaches rmcp unchanged");
    }

    #[tokio::test(start_paused = true)]
    async fn no_session_no_wait_and_a_silent_stream_is_waited_for_only_so_long() {
        let gate = EventStreamGate::default();
        let client = GatedHttpClient::new(
            SlowStream {
                session: false,
                get_delay: Duration::ZERO,
            },
            gate.clone(),
        );
        post(&client).await;
        let started = tokio::time::Instant::now();
        assert!(gate.settled(Duration::from_secs(2)).await);
        assert_eq!(started.elapsed(), Duration::ZERO);

        // A session whose GET is never answered: the wait ends at its bound.
        let gate = EventStreamGate::default();
        let client = GatedHttpClient::new(
            SlowStream {
                session: true,
                get_delay: Duration::ZERO,
            },
            gate.clone(),
        );
        post(&client).await;
        assert!(!gate.settled(Duration::from_secs(2)).await);
        assert_eq!(started.elapsed(), Duration::from_secs(2));
    }
}
