//! The MCP HTTP client (`McpHarness::http`) when connections are closed under its requests: a
//! real `McpServer` on loopback behind a hand-written TCP proxy (a Tokio listener) that closes
//! some connections as a request arrives on them, as a load balancer whose idle timer fires
//! does. A `tools/call` that met a closed connection is sent again on a fresh one within the
//! retry policy (3 retries by default): the tool runs once and the call succeeds; when every
//! attempt meets a closed connection the call is an error result, and the agent goes on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A served agent with one tool, `add`, counting its runs.
async fn served(runs: Arc<AtomicUsize>) -> McpHttpServer {
    let add = Tool::new(
        "add",
        "Adds two integers",
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
               "required": ["a", "b"]}),
        move |args, _ctx| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                ToolResult::ok(sum.to_string())
            }
        },
    );
    let agent = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Math").with_tool(add).build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    McpServer::new(agent)
        .with_unauthenticated_access()
        .serve_http(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
}

/// Reads one whole HTTP request (head and `content-length` body) from `stream`; `None` when the
/// connection ended first.
async fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return Some(buffer);
            }
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// A proxy to `upstream` that closes, without an answer, the connections of the first `drops`
/// `tools/call` requests; every other connection is passed through. Returns its URL (with the
/// upstream's path) and the count of closed connections.
async fn closing_proxy(upstream: &str, drops: usize) -> (String, Arc<AtomicUsize>) {
    let target: plain_url::Target = upstream.parse().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{}", listener.local_addr().unwrap(), target.path);
    let dropped = Arc::new(AtomicUsize::new(0));
    let seen = dropped.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            let address = target.address.clone();
            tokio::spawn(async move {
                let Some(request) = read_request(&mut client).await else {
                    return;
                };
                let is_call = request.windows(10).any(|w| w == b"tools/call");
                if is_call
                    && seen
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                            (n < drops).then_some(n + 1)
                        })
                        .is_ok()
                {
                    // Closed as the request arrived: the server never sees it.
                    return;
                }
                let Ok(mut server) = TcpStream::connect(&address).await else {
                    return;
                };
                if server.write_all(&request).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (url, dropped)
}

/// Splits `http://host:port/path` without an HTTP library.
mod plain_url {
    pub struct Target {
        pub address: String,
        pub path: String,
    }

    impl std::str::FromStr for Target {
        type Err = String;

        fn from_str(url: &str) -> Result<Self, String> {
            let rest = url
                .strip_prefix("http://")
                .ok_or_else(|| format!("not an http URL: {url}"))?;
            let (address, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            Ok(Target {
                address: address.to_owned(),
                path: path.to_owned(),
            })
        }
    }
}

/// Runs one `add` call through an agent whose `Math` harness reaches the server through a
/// proxy that drops `drops` call connections. Returns the call's result, the tool's runs and
/// the connections the proxy closed.
async fn call_through_proxy(drops: usize) -> ((String, bool), usize, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = served(runs.clone()).await;
    let (url, dropped) = closing_proxy(&server.url(), drops).await;
    let math = McpHarness::http("Math", url)
        .without_collapse()
        .connect()
        .await
        .unwrap_or_else(|e| panic!("connecting through the proxy failed: {e}"));
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "add", r#"{"a": 2, "b": 3}"#)]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(math)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let answer = agent.run("2 + 3").await.unwrap();
    assert_eq!(answer.text, "done");
    let requests = model.requests();
    let (text, is_error) = requests[1]
        .tool_result("c1")
        .map(|(text, error)| (text.to_owned(), error))
        .unwrap_or_else(|| panic!("the call has no result: {:?}", requests[1]));
    server.shutdown().await;
    (
        (text, is_error),
        runs.load(Ordering::SeqCst),
        dropped.load(Ordering::SeqCst),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_connection_was_closed_is_sent_again_and_runs_once() {
    let (result, runs, dropped) = call_through_proxy(2).await;
    assert_eq!(result, ("5".to_owned(), false));
    assert_eq!(dropped, 2, "two connections were closed under the call");
    assert_eq!(runs, 1, "the tool ran once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_meets_only_closed_connections_is_an_error_result() {
    // The first attempt and all 3 retries of the default policy.
    let (result, runs, dropped) = call_through_proxy(usize::MAX).await;
    assert!(result.1, "an error result: {result:?}");
    assert!(
        result
            .0
            .contains("the server closed the connection before it answered the request, 4 times")
            && result
                .0
                .contains("connection closed before message completed"),
        "{result:?}"
    );
    assert_eq!(dropped, 4, "one attempt and three retries");
    assert_eq!(runs, 0);
}
