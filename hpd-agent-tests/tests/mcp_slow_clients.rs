//! Slow and idle clients of `McpServer::serve_http`, tried as an attacker would: thousands of
//! half-open connections (request headers that never finish) are dropped at the header-read
//! timeout while a normal client is served throughout; silent connections are dropped at the
//! idle timeout; connections beyond the cap are closed at once, with a log line. The 4 MiB
//! body limit still answers 413.

mod support;

use std::time::{Duration, Instant};

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const TOKEN: &str = "slow-clients-token";
const HALF_OPEN: usize = 3000;

fn server(configure: impl FnOnce(McpServer) -> McpServer) -> McpServer {
    let ping = Tool::new(
        "ping",
        "Answers pong",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("pong") },
    );
    let agent = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Net").with_tool(ping).build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    configure(McpServer::new(agent).with_bearer_token(TOKEN))
}

/// A normal client: connects, lists and calls `ping`.
async fn normal_call(server: &McpHttpServer) -> Duration {
    let started = Instant::now();
    let harness = McpHarness::http("Net", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .flat_tool_session()
        .call_tool("c1", "ping", "{}")
        .await
        .unwrap();
    assert_eq!(outcome.result.text, "pong");
    started.elapsed()
}

/// Whether the server closed `stream` (end of stream or a reset) within `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 256];
    loop {
        match tokio::time::timeout(wait, stream.read(&mut buffer)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            // A 408 or similar before the close is fine; read on.
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_are_dropped_at_the_header_timeout_and_others_are_served() {
    let served = server(|s| {
        s.with_header_read_timeout(Duration::from_secs(2))
            .with_idle_timeout(Duration::from_secs(30))
            .with_max_connections(HALF_OPEN + 100)
    })
    .serve_http("127.0.0.1:0".parse().unwrap())
    .await
    .unwrap();
    let addr = served.local_addr();
    let opened = Instant::now();
    let mut attackers = Vec::with_capacity(HALF_OPEN);
    for _ in 0..HALF_OPEN {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
            .await
            .unwrap();
        attackers.push(stream);
    }
    // Served while the half-open connections are held.
    let took = normal_call(&served).await;
    assert!(took < Duration::from_secs(5), "a normal call took {took:?}");

    // Every one of them is closed by the header-read timeout (2 s), well before 10 s.
    for stream in &mut attackers {
        let left = Duration::from_secs(10).saturating_sub(opened.elapsed());
        assert!(
            closed_within(stream, left).await,
            "a half-open connection outlived the timeout"
        );
    }
    let all_closed = opened.elapsed();
    assert!(all_closed < Duration::from_secs(10), "{all_closed:?}");
    // And the server goes on serving.
    normal_call(&served).await;
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_dropped_at_the_idle_timeout() {
    let served = server(|s| {
        s.with_header_read_timeout(Duration::from_secs(2))
            .with_idle_timeout(Duration::from_secs(1))
    })
    .serve_http("127.0.0.1:0".parse().unwrap())
    .await
    .unwrap();
    let started = Instant::now();
    let mut silent = TcpStream::connect(served.local_addr()).await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(5)).await);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900),
        "closed before the idle timeout: {took:?}"
    );
    // A connection that is used lives on past it while it is used.
    normal_call(&served).await;
    served.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn connections_beyond_the_cap_are_closed_with_a_log_line() {
    let recorder = support::Recorder::leak();
    let _guard = tracing::subscriber::set_default(recorder);
    let served = server(|s| s.with_max_connections(8))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = served.local_addr();
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    // Let the server accept them.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = TcpStream::connect(addr).await.unwrap();
    assert!(closed_within(&mut extra, Duration::from_secs(2)).await);
    let lines = recorder.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("at its connection limit (8)")),
        "{lines:#?}"
    );
    // Once a held connection ends, a new one is served again.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = TcpStream::connect(addr).await.unwrap();
    again
        .write_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 12];
    again.read_exact(&mut answer).await.unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 "), "{answer:?}");
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_body_limit_still_answers_413() {
    let served = server(|s| s)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut stream = TcpStream::connect(served.local_addr()).await.unwrap();
    let body = vec![b' '; 4 * 1024 * 1024 + 1];
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer before it has read the whole body.
    let _ = stream.write_all(&body).await;
    let mut answer = [0u8; 12];
    stream.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 413");
    served.shutdown().await;
}
