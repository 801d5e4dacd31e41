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
