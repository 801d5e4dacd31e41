//! The HTTP front of `serve_http`: who does what.
//!
//! - rmcp's [`StreamableHttpService`] is the MCP transport: sessions, event streams, the
//!   `Host` check against the allowed hosts, and the request body limit (413).
//! - [`Front`] in front of it checks every request's `Origin` and bearer token before the
//!   transport sees it (so a rejected request runs no tool), and, with OAuth, answers the
//!   protected-resource metadata (RFC 9728: GET and HEAD; 405 with `Allow` otherwise) and
//!   checks the access token of every other request.
//! - `subtle` compares the static bearer token in constant time.
//!
//! Three pieces stay written here, each with its reason where it is: the rule of which origins
//! are allowed ([`Guard::check`]), the dispatch of a request ([`Front`]), and the accept loop
//! ([`serve`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::{Either, FutureExt as _};
use futures::stream::{FuturesUnordered, StreamExt as _};
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use subtle::ConstantTimeEq as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::resource_server::BoundResource;

/// What a request must show to reach the MCP transport.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// The bearer token every request must carry; `None` only after an explicit opt-out.
    pub(crate) token: Option<String>,
    /// Origins allowed besides loopback ones, normalised by [`parse_origin`].
    pub(crate) allowed_origins: Vec<Origin>,
    /// OAuth: access tokens checked by a verifier, and the metadata served.
    pub(crate) oauth: Option<BoundResource>,
}

/// A browser origin: scheme, host and port (the scheme's default port when none is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

/// Parses `scheme://host[:port]` (lower-cased; `http` and `https` only; a trailing `/` is
/// allowed). `None` for anything else, including the opaque origin `null` and anything with a
/// path, query, fragment or user info. The URI grammar is `http`'s; what an origin may hold
/// besides is checked here.
pub(crate) fn parse_origin(text: &str) -> Option<Origin> {
    let text = text.trim().to_ascii_lowercase();
    // `http::Uri` drops a fragment without a word; an origin never has one.
    if text.contains('#') {
        return None;
    }
    let uri = http::Uri::try_from(text.as_str()).ok()?;
    let port = match uri.scheme_str()? {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return None;
    }
    let authority = uri.authority()?;
    let host = authority.host();
    // No user info, and the port (when given) a number: `http` takes `host:name` as an
    // authority too, with no port.
    let port = match authority.as_str().strip_prefix(host)? {
        "" => port,
        after => after.strip_prefix(':')?.parse().ok()?,
    };
    if host.is_empty() {
        return None;
    }
    Some(Origin {
        scheme: uri.scheme_str()?.to_owned(),
        host: host.to_owned(),
        port,
    })
}

impl Origin {
    fn is_loopback(&self) -> bool {
        matches!(self.host.as_str(), "localhost" | "[::1]") || self.host.starts_with("127.")
    }
}

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// 403: the `Origin` header names a site that is not allowed.
    Origin(String),
    /// 401: no bearer token, or a wrong one.
    Unauthorized,
    /// OAuth refused the token: 401 (`invalid_token`, or no token) or 403
    /// (`insufficient_scope`), with the `WWW-Authenticate` challenge; `reason` is logged (it
    /// never contains the token).
    OAuth {
        status: StatusCode,
        challenge: String,
        reason: String,
    },
}

/// The credentials of `Authorization: Bearer <token>`.
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, credentials) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| credentials.trim())
        })
}

impl BoundResource {
    /// Checks a request's access token: verified, and granting every required scope.
    pub(crate) async fn check(&self, headers: &http::HeaderMap) -> Result<(), Rejection> {
        let Some(token) = bearer(headers) else {
            return Err(Rejection::OAuth {
                status: StatusCode::UNAUTHORIZED,
                challenge: self.challenge(None),
                reason: "no bearer token".to_owned(),
            });
        };
        let verified = self
            .config
            .verifier
            .verify(token, &self.resource)
            .await
            .map_err(|rejected| Rejection::OAuth {
                status: StatusCode::UNAUTHORIZED,
                challenge: self.challenge(Some("invalid_token")),
                reason: rejected.to_string(),
            })?;
        let missing: Vec<&String> = self
            .config
            .required_scopes
            .iter()
            .filter(|scope| !verified.has_scope(scope))
            .collect();
        if !missing.is_empty() {
            return Err(Rejection::OAuth {
                status: StatusCode::FORBIDDEN,
                challenge: self.challenge(Some("insufficient_scope")),
                reason: format!("the token lacks the scopes {missing:?}"),
            });
        }
        Ok(())
    }
}

impl Guard {
    /// Checks a request's headers. A request without `Origin` (not sent by a browser) passes
    /// the origin check; one with an origin must be loopback or listed.
    ///
    /// The origin rule is written here rather than left to a library. tower-http's CORS layer
    /// answers CORS (preflights and `Access-Control-*` headers); it does not turn a request
    /// from a forbidden origin away with 403, which the MCP transport spec asks of a server.
    /// rmcp's own `allowed_origins` check runs inside the transport, after this token check
    /// (a foreign page without the token would get 401, not 403), and has no way to say "every
    /// loopback origin on any port", which is the default here (`127.0.0.0/8`, `localhost` and
    /// `[::1]`).
    pub(crate) fn check(&self, headers: &http::HeaderMap) -> Result<(), Rejection> {
        for value in headers.get_all(header::ORIGIN) {
            let text = value.to_str().unwrap_or("");
            let allowed = parse_origin(text).is_some_and(|origin| {
                origin.is_loopback() || self.allowed_origins.contains(&origin)
            });
            if !allowed {
                return Err(Rejection::Origin(text.to_owned()));
            }
        }
        if let Some(token) = &self.token {
            let presented = bearer(headers);
            if !presented.is_some_and(|presented| constant_time_eq(presented, token)) {
                return Err(Rejection::Unauthorized);
            }
        }
        Ok(())
    }
}

/// Compares two secrets in time that depends only on their lengths (`subtle`).
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// The responses of the front: the transport's body type, which the front's own answers
/// (refusals, the metadata document) share.
pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// A response with `body` (of a fixed length) and a content type.
fn plain(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> HttpResponse {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn rejection_response(rejection: &Rejection) -> HttpResponse {
    let (status, text, challenge) = match rejection {
        Rejection::OAuth {
            status, challenge, ..
        } => {
            let text = if *status == StatusCode::FORBIDDEN {
                "Forbidden: the access token lacks a required scope"
            } else {
                "Unauthorized: a valid access token is required"
            };
            (
                *status,
                text.to_owned(),
                HeaderValue::from_str(challenge).ok(),
            )
        }
        Rejection::Origin(origin) => (
            StatusCode::FORBIDDEN,
            format!("Forbidden: the origin '{origin}' is not allowed"),
            None,
        ),
        Rejection::Unauthorized => (
            StatusCode::UNAUTHORIZED,
            "Unauthorized: a valid bearer token is required".to_owned(),
            Some(HeaderValue::from_static("Bearer")),
        ),
    };
    let mut response = plain(status, "text/plain; charset=utf-8", text);
    if let Some(challenge) = challenge {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The protected-resource metadata document (it is public): GET, and HEAD with GET's headers
/// and no body; 405 with `Allow` for every other method.
fn metadata_response(oauth: &BoundResource, method: &Method) -> HttpResponse {
    if method != Method::GET && method != Method::HEAD {
        let mut refused = plain(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "");
        refused
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
        return refused;
    }
    let document = oauth.metadata().to_string();
    let length = HeaderValue::from(document.len());
    let body = if method == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from(document)
    };
    let mut response = plain(StatusCode::OK, "application/json", body);
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, length);
    response
}

/// Logs a rejection with the peer it came from.
fn rejected(peer: SocketAddr, rejection: &Rejection) -> HttpResponse {
    tracing::info!(target: "hpd_agent::mcp", %peer, ?rejection, "request rejected");
    rejection_response(rejection)
}

/// What every request of one server goes through: the origin and static-token check of
/// `guard`; with OAuth, the metadata document on its paths and the access-token check of every
/// other request; then the MCP transport.
///
/// Written as one function over rmcp's [`StreamableHttpService::handle`] rather than as a
/// router with middleware layers: the `bench/mcp_load` profile showed a router costing a clone
/// of the transport service (its configuration included) and several boxed futures on every
/// request, for a dispatch this small. The metadata paths are matched here, not as router
/// paths: they come from the resource URL the operator gives, which a route syntax would read
/// (or refuse) as captures.
pub(crate) struct Front<S: ServerHandler + Send + 'static> {
    transport: StreamableHttpService<S, LocalSessionManager>,
    guard: Guard,
}

impl<S: ServerHandler + Send + 'static> Front<S> {
    pub(crate) fn new(
        transport: StreamableHttpService<S, LocalSessionManager>,
        guard: Guard,
    ) -> Self {
        Front { transport, guard }
    }

    /// Answers one request that came from `peer`.
    pub(crate) async fn respond(
        &self,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> HttpResponse {
        if let Err(rejection) = self.guard.check(request.headers()) {
            return rejected(peer, &rejection);
        }
        if let Some(oauth) = &self.guard.oauth {
            if oauth.is_metadata_path(request.uri().path()) {
                return metadata_response(oauth, request.method());
            }
            if let Err(rejection) = oauth.check(request.headers()).await {
                return rejected(peer, &rejection);
            }
        }
        self.transport.handle(request).await
    }
}

/// How long a connection may take and how many there may be (see
/// [`McpServer::with_header_read_timeout`](super::McpServer::with_header_read_timeout),
/// [`idle_timeout`](super::McpServer::with_idle_timeout) and
/// [`max_connections`](super::McpServer::with_max_connections)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    /// The time a request's headers may take to arrive, from its first byte.
    pub(crate) header_read: Duration,
    /// The time a connection may go without a byte read or written.
    pub(crate) idle: Duration,
    /// Connections open at once; more are closed as they arrive.
    pub(crate) max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            max_connections: 1024,
        }
    }
}

/// A TCP stream that notes when a byte last went through it, for the idle timeout.
struct Watched {
    stream: TcpStream,
    started: Instant,
    /// Milliseconds after `started` of the last read or write.
    last: Arc<AtomicU64>,
}

impl Watched {
    fn touch(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Waits until nothing went through the connection for `idle`.
async fn idle_for(started: Instant, last: &AtomicU64, idle: Duration) {
    loop {
        let last = Duration::from_millis(last.load(Ordering::Relaxed));
        let quiet_until = started + last + idle;
        if Instant::now() >= quiet_until {
            return;
        }
        tokio::time::sleep_until(quiet_until.into()).await;
    }
}

/// How a connection's driving ended.
enum Ended {
    /// The connection ended by itself.
    Closed(Result<(), hyper::Error>),
    /// Nothing went through it for the idle timeout.
    Idle,
    /// The server shuts down.
    Shutdown,
}

/// Drives `connection` until it ends, goes idle for `idle`, or `shutdown` is cancelled.
///
/// The idle timer and the shutdown token are polled only when they wake, not on every wake of
/// the connection (as a `select!` over the three would, several times per request): they sit
/// in a `FuturesUnordered`, which polls only the futures whose own waker fired.
async fn until_stopped<C>(
    connection: Pin<&mut C>,
    started: Instant,
    last: &AtomicU64,
    idle: Duration,
    shutdown: &CancellationToken,
) -> Ended
where
    C: Future<Output = Result<(), hyper::Error>>,
{
    let stop = async {
        tokio::select! {
            () = idle_for(started, last, idle) => Ended::Idle,
            () = shutdown.cancelled() => Ended::Shutdown,
        }
    };
    let mut racing = FuturesUnordered::new();
    racing.push(Either::Left(connection.map(Ended::Closed)));
    racing.push(Either::Right(stop));
    racing.next().await.unwrap_or(Ended::Shutdown)
}

/// Serves `front` on `listener` until `shutdown` is cancelled.
///
/// The accept loop is hyper's connection builder driven by hand, not `axum::serve` or
/// hyper-util's server: those have no cap on open connections, no idle timeout that counts
/// bytes in both directions (an event stream's keep-alive pings keep its connection, a client
/// that stopped reading loses it), and `axum::serve` no header-read timeout. Here a connection
/// over [`ConnectionLimits::max_connections`] is closed as it arrives, each has hyper's
/// header-read timeout and the idle timeout, and on shutdown each is ended gracefully (the
/// response under way is finished).
pub(crate) async fn serve<S: ServerHandler + Send + 'static>(
    listener: TcpListener,
    front: Arc<Front<S>>,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    // The "limit reached" line is logged once per stretch of refusals, not per connection.
    let mut at_limit = false;
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(target: "hpd_agent::mcp", %error, "accepting a connection failed");
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !at_limit {
                tracing::warn!(
                    target: "hpd_agent::mcp",
                    max_connections = limits.max_connections,
                    %peer,
                    "MCP HTTP server at its connection limit ({}): closing new connections until one ends",
                    limits.max_connections
                );
                at_limit = true;
            }
            drop(stream);
            continue;
        };
        if at_limit {
            tracing::info!(target: "hpd_agent::mcp", "MCP HTTP server below its connection limit again");
            at_limit = false;
        }
        let started = Instant::now();
        let last = Arc::new(AtomicU64::new(0));
        let stream = Watched {
            stream,
            started,
            last: last.clone(),
        };
        let front = front.clone();
        let connection_shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let front = front.clone();
                async move { Ok::<_, Infallible>(front.respond(request, peer).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read)
                .serve_connection(TokioIo::new(stream), handler);
            tokio::pin!(connection);
            match until_stopped(
                connection.as_mut(),
                started,
                &last,
                limits.idle,
                &connection_shutdown,
            )
            .await
            {
                Ended::Closed(Ok(())) => {}
                Ended::Closed(Err(error)) => {
                    tracing::debug!(target: "hpd_agent::mcp", %peer, %error, "connection ended with an error");
                }
                // Nothing read or written for the idle timeout (an SSE stream's keep-alive
                // pings count): the connection is dropped, and with it the socket.
                Ended::Idle => {
                    tracing::debug!(target: "hpd_agent::mcp", %peer, "idle connection closed");
                }
                Ended::Shutdown => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, http::HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn guard(token: Option<&str>, origins: &[&str]) -> Guard {
        Guard {
            token: token.map(str::to_owned),
            allowed_origins: origins.iter().filter_map(|o| parse_origin(o)).collect(),
            oauth: None,
        }
    }

    #[test]
    fn origins_parse_with_default_ports() {
        let origin = parse_origin("HTTPS://App.Example.com").unwrap();
        assert_eq!(
            origin,
            parse_origin("https://app.example.com:443/").unwrap()
        );
        assert_eq!(parse_origin("http://[::1]:8080").unwrap().host, "[::1]");
        assert!(parse_origin("null").is_none());
        assert!(parse_origin("file://x").is_none());
        assert!(parse_origin("http://x/path").is_none());
        assert!(parse_origin("http://:80").is_none());
        assert!(parse_origin("http://x:notaport").is_none());
        for not_an_origin in [
            "http://user@x",
            "http://x:",
            "http://x:99999",
            "http://x?q",
            "http://x/#f",
            "http://x#f",
            "ws://x",
            "x",
            "",
        ] {
            assert!(parse_origin(not_an_origin).is_none(), "{not_an_origin}");
        }
        assert_eq!(parse_origin("http://127.0.0.1:5173").unwrap().port, 5173);
        assert_eq!(parse_origin(" http://x ").unwrap().port, 80);
    }

    #[test]
    fn the_token_is_required() {
        let g = guard(Some("s3cret"), &[]);
        assert_eq!(g.check(&headers(&[])), Err(Rejection::Unauthorized));
        let wrong = headers(&[("authorization", "Bearer nope")]);
        assert_eq!(g.check(&wrong), Err(Rejection::Unauthorized));
        let prefix = headers(&[("authorization", "Bearer s3cre")]);
        assert_eq!(g.check(&prefix), Err(Rejection::Unauthorized));
        let basic = headers(&[("authorization", "Basic s3cret")]);
        assert_eq!(g.check(&basic), Err(Rejection::Unauthorized));
        let right = headers(&[("authorization", "bearer s3cret")]);
        assert_eq!(g.check(&right), Ok(()));
        assert_eq!(guard(None, &[]).check(&headers(&[])), Ok(()));
    }

    #[test]
    fn foreign_origins_are_rejected() {
        let g = guard(Some("t"), &["https://app.example.com"]);
        let auth = ("authorization", "Bearer t");
        let evil = headers(&[auth, ("origin", "http://evil.example")]);
        assert_eq!(
            g.check(&evil),
            Err(Rejection::Origin("http://evil.example".to_owned()))
        );
        let null = headers(&[auth, ("origin", "null")]);
        assert!(matches!(g.check(&null), Err(Rejection::Origin(_))));
        for allowed in [
            "http://localhost:5173",
            "http://127.0.0.1:9",
            "https://app.example.com:443",
        ] {
            assert_eq!(
                g.check(&headers(&[auth, ("origin", allowed)])),
                Ok(()),
                "{allowed}"
            );
        }
        // A foreign origin is rejected even with the right token.
        let wrong_port = headers(&[auth, ("origin", "https://app.example.com:8443")]);
        assert!(matches!(g.check(&wrong_port), Err(Rejection::Origin(_))));
    }

    #[test]
    fn secrets_compare_exactly() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "abcd"));
        assert!(!constant_time_eq("", "a"));
        assert!(constant_time_eq("", ""));
    }
}
