//! Pooled keep-alive connections that the server closes, for every HTTP client (OpenAI Chat,
//! Anthropic, OpenAI Responses), against a hand-written HTTP/1.1 server on a Tokio listener
//! that closes connections the way llama.cpp's server and load balancers do:
//!
//! - an idle timeout that fires as the next request arrives on the connection (the request
//!   meets a closed or reset connection: hyper's "connection closed before message completed");
//! - a close right after a response that did not say `Connection: close`.
//!
//! The request is sent again on a fresh connection within the retry policy, also when every
//! pooled connection is stale (and fails with a clear error when the policy allows no retry); a stream cut after part of it arrived is not
//! sent again, and its error says so.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::faults::Provider;
use crate::support::*;

/// How the server treats a connection after its first answer.
#[derive(Clone, Copy, Debug)]
enum Closing {
    /// A request arriving after the connection was idle this long is not answered: the
    /// connection is closed (FIN) as the request arrives, as when the server's idle timer
    /// fires while the request is in flight.
    IdleTimeout(Duration),
    /// As `IdleTimeout`, but the connection is reset (RST) instead of closed.
    IdleReset(Duration),
    /// The connection is closed right after each response (which keeps the HTTP/1.1 default
    /// of keep-alive, so the client pools it).
    AfterResponse,
}

/// What the server saw.
#[derive(Default)]
struct Counts {
    connections: AtomicUsize,
    requests: AtomicUsize,
    answered: AtomicUsize,
}

impl Counts {
    fn get(&self) -> (usize, usize, usize) {
        (
            self.connections.load(Ordering::SeqCst),
            self.requests.load(Ordering::SeqCst),
            self.answered.load(Ordering::SeqCst),
        )
    }
}

/// Reads one request (head, and a `content-length` body); false when the connection ended
/// first.
async fn read_request(reader: &mut BufReader<tokio::net::TcpStream>) -> bool {
    let mut length = 0;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line).await {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.is_ok()
}

/// A server on a free loopback port answering every request it answers with `response` (a
/// whole HTTP response), closing connections as `closing` says.
async fn closing_server(response: String, closing: Closing) -> (String, Arc<Counts>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"));
    let counts = Arc::new(Counts::default());
    let seen = counts.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            seen.connections.fetch_add(1, Ordering::SeqCst);
            let seen = seen.clone();
            let response = response.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                let mut last_answer: Option<Instant> = None;
                while read_request(&mut reader).await {
                    seen.requests.fetch_add(1, Ordering::SeqCst);
                    let idle = last_answer.map(|at| at.elapsed());
                    match (closing, idle) {
                        (Closing::IdleTimeout(limit), Some(idle)) if idle >= limit => return,
                        (Closing::IdleReset(limit), Some(idle)) if idle >= limit => {
                            let _ = reader.get_ref().set_zero_linger();
                            return;
                        }
                        _ => {}
                    }
                    let stream = reader.get_mut();
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = stream.flush().await;
                    seen.answered.fetch_add(1, Ordering::SeqCst);
                    last_answer = Some(Instant::now());
                    if matches!(closing, Closing::AfterResponse) {
                        let _ = stream.shutdown().await;
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{address}"), counts)
}

/// A whole `text/event-stream` response with a `content-length`, so the connection stays
/// usable after it.
fn stream_response(provider: Provider, text: &str) -> String {
    let body = provider.text_reply(text);
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn messages() -> Vec<ChatMessage> {
    vec![ChatMessage::user("Hi")]
}

async fn ask_once(client: &dyn ChatClient) -> Result<ChatResponse, ChatError> {
    let messages = messages();
    client
        .complete(ChatRequest::new("", &messages, &[]), &|_| {})
        .await
}

/// Two requests, the second after `pause`: both answered, the second after the client sent it
/// again on a fresh connection.
async fn second_request_recovers(provider: Provider, closing: Closing, pause: Duration) {
    let (base, counts) = closing_server(stream_response(provider, "hello"), closing).await;
    let client = provider.client(&base, 2, Duration::from_millis(5));
    let first = ask_once(client.as_ref())
        .await
        .unwrap_or_else(|e| panic!("{provider:?}: the first request failed: {e}"));
    assert_eq!(first.text.as_deref(), Some("hello"), "{provider:?}");
    tokio::time::sleep(pause).await;
    let second = ask_once(client.as_ref())
        .await
        .unwrap_or_else(|e| panic!("{provider:?} {closing:?}: the second request failed: {e}"));
    assert_eq!(second.text.as_deref(), Some("hello"), "{provider:?}");
    let (connections, requests, answered) = counts.get();
    assert_eq!(answered, 2, "{provider:?} {closing:?}: answers");
    assert_eq!(
        connections, 2,
        "{provider:?} {closing:?}: a fresh connection for the retry"
    );
    match closing {
        // The request that met the closing connection, and its retry.
        Closing::IdleTimeout(_) | Closing::IdleReset(_) => {
            assert_eq!(requests, 3, "{provider:?} {closing:?}: requests");
        }
        // The client may see the close before it reuses the connection, or send on it.
        Closing::AfterResponse => assert!(
            (2..=3).contains(&requests),
            "{provider:?} {closing:?}: {requests} requests"
        ),
    }
}

async fn idle_close_is_retried(provider: Provider) {
    let idle = Duration::from_millis(50);
    second_request_recovers(provider, Closing::IdleTimeout(idle), idle * 3).await;
}

async fn idle_reset_is_retried(provider: Provider) {
    let idle = Duration::from_millis(50);
    second_request_recovers(provider, Closing::IdleReset(idle), idle * 3).await;
}

async fn close_after_response_is_survived(provider: Provider) {
    // Straight away, and after the close had time to reach the client.
    second_request_recovers(provider, Closing::AfterResponse, Duration::ZERO).await;
    second_request_recovers(provider, Closing::AfterResponse, Duration::from_millis(50)).await;
}

/// Four pooled connections, all stale after the server's idle timeout (as after a restart of
/// the server or the balancer): with one retry allowed, the retry must not take another pooled
/// connection; it goes on a new one and succeeds.
async fn every_pooled_connection_stale(provider: Provider) {
    let idle = Duration::from_millis(50);
    let (base, counts) = closing_server(
        stream_response(provider, "hello"),
        Closing::IdleTimeout(idle),
    )
    .await;
    let client = provider.client(&base, 1, Duration::from_millis(5));
    let opened = futures::future::join_all((0..4).map(|_| ask_once(client.as_ref()))).await;
    for result in opened {
        result.unwrap_or_else(|e| panic!("{provider:?}: a first request failed: {e}"));
    }
    let (pooled, _, _) = counts.get();
    assert!(pooled >= 2, "{provider:?}: {pooled} connections pooled");
    tokio::time::sleep(idle * 3).await;
    let answer = ask_once(client.as_ref())
        .await
        .unwrap_or_else(|e| panic!("{provider:?}: the retry met a stale connection: {e}"));
    assert_eq!(answer.text.as_deref(), Some("hello"));
    let (connections, _, _) = counts.get();
    assert_eq!(
        connections,
        pooled + 1,
        "{provider:?}: one new connection for the retry"
    );
}

/// With no retry allowed, the request that met the closed connection fails, and the error says
/// what happened and what was tried.
async fn no_retry_without_policy(provider: Provider) {
    let idle = Duration::from_millis(30);
    let (base, counts) = closing_server(
        stream_response(provider, "hello"),
        Closing::IdleTimeout(idle),
    )
    .await;
    let client = provider.client(&base, 0, Duration::from_millis(5));
    ask_once(client.as_ref())
        .await
        .unwrap_or_else(|e| panic!("{provider:?}: the first request failed: {e}"));
    tokio::time::sleep(idle * 3).await;
    let error = ask_once(client.as_ref())
        .await
        .map(|r| r.text)
        .expect_err("the request on the closed connection was not retried, so it fails");
    let text = error.to_string();
    assert!(
        matches!(error, ChatError::Transport(_)),
        "{provider:?}: {error:?}"
    );
    assert!(
        text.contains("closed the connection before it answered")
            && text.contains("connection closed before message completed"),
        "{provider:?}: {text}"
    );
    assert_eq!(counts.get(), (1, 2, 1), "{provider:?}");
}

/// A stream cut after some of it arrived fails with an error saying it was not sent again;
/// the text that arrived was delivered, and the server saw one request.
async fn partial_stream_is_not_retried(provider: Provider) {
    let body = provider.text_reply("partial text");
    // Everything but the end of the stream, then the connection closes mid-body.
    let cut = &body[..body.len() * 3 / 4];
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{cut}",
        body.len()
    );
    let (base, counts) = closing_server(response, Closing::AfterResponse).await;
    let client = provider.client(&base, 3, Duration::from_millis(5));
    let deltas = Deltas::default();
    let messages = messages();
    let sink = deltas.sink();
    let error = client
        .complete(ChatRequest::new("", &messages, &[]), &sink)
        .await
        .map(|r| r.text)
        .expect_err("a cut stream fails");
    let text = error.to_string();
    assert!(
        text.contains("the stream was interrupted after")
            && text.contains("the request is not sent again"),
        "{provider:?}: {text}"
    );
    assert_eq!(deltas.take().concat(), "partial text", "{provider:?}");
    assert_eq!(counts.get(), (1, 1, 1), "{provider:?}: never sent again");
}

/// A whole (not streamed) body cut by a closed connection reached no one: sent again.
async fn cut_body_is_retried() {
    let body = json!({"choices": [{"message": {"role": "assistant", "content": "whole"},
                      "finish_reason": "stop"}]})
    .to_string();
    let cut = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        body.len(),
        &body[..10]
    );
    let whole = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // The first connection sends a cut body and closes; later connections answer in full.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((stream, _)) = listener.accept().await {
            let mut reader = BufReader::new(stream);
            if !read_request(&mut reader).await {
                continue;
            }
            seen.fetch_add(1, Ordering::SeqCst);
            let answer = if first { &cut } else { &whole };
            first = false;
            let stream = reader.get_mut();
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    let client = OpenAiClient::new("test-model", "sk-test")
        .and_then(|c| c.with_base_url(format!("http://{address}/v1")))
        .map(|c| {
            c.with_streaming(false)
                .with_backoff(Duration::from_millis(5))
                .with_timeout(Duration::from_secs(5))
        })
        .unwrap_or_else(|e| panic!("client setup failed: {e}"));
    let answer = ask_once(&client)
        .await
        .unwrap_or_else(|e| panic!("the cut body was not retried: {e}"));
    assert_eq!(answer.text.as_deref(), Some("whole"));
    assert_eq!(requests.load(Ordering::SeqCst), 2);
}

macro_rules! for_every_provider {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                #[tokio::test]
                async fn openai() {
                    super::$name(Provider::OpenAi).await;
                }

                #[tokio::test]
                async fn anthropic() {
                    super::$name(Provider::Anthropic).await;
                }

                #[tokio::test]
                async fn responses() {
                    super::$name(Provider::Responses).await;
                }
            }
        )*
    };
}

for_every_provider!(
    idle_close_is_retried,
    idle_reset_is_retried,
    close_after_response_is_survived,
    no_retry_without_policy,
    partial_stream_is_not_retried,
    every_pooled_connection_stale,
);

#[tokio::test]
async fn cut_whole_body_is_retried() {
    cut_body_is_retried().await;
}
