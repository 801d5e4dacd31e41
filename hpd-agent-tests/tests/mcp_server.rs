//! Agents served over MCP with `McpServer`: streamable HTTP on loopback, reached by this
//! crate's own MCP client (`McpHarness::http`) and by raw HTTP requests for the security
//! checks (bearer token, `Origin`).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::chat::ToolAnnotations;
use hpd_agent::mcp::{McpError, McpHarness, McpHttpServer, McpServer};
use hpd_agent::{
    Agent, AgentBuilder, ChatResponse, HarnessBuilder, Middleware, ScriptedChatClient, Tool,
    ToolCall, ToolResult, async_trait, harness::DynamicHarness, middleware::FunctionCall,
    middleware::HookResult,
};
use serde_json::json;

const TOKEN: &str = "test-token-7f3a";

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// Marks results of the harness it is scoped to.
#[derive(Default)]
struct Audit;

#[async_trait]
impl Middleware for Audit {
    async fn after_function(&self, _call: &FunctionCall, result: &mut ToolResult) -> HookResult {
        result.text.push_str(" [audited]");
        Ok(())
    }
}

/// A collapsed `Math` harness (with the `Audit` scoped middleware) whose `add` counts its runs,
/// and a plain `Echo` harness.
fn harnesses(runs: Arc<AtomicUsize>) -> (DynamicHarness, DynamicHarness) {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]
    });
    let add = Tool::new("add", "Adds two integers", schema, move |args, _ctx| {
        let runs = Arc::clone(&runs);
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            match (args["a"].as_i64(), args["b"].as_i64()) {
                (Some(a), Some(b)) => ToolResult::ok((a + b).to_string()),
                _ => ToolResult::error("Error: a and b must be integers"),
            }
        }
    })
    .with_annotations(ToolAnnotations::read_only().with_open_world(false));
    let math = HarnessBuilder::new("Math")
        .with_collapse("Arithmetic")
        .with_tool(add)
        .with_scoped_middleware(Audit)
        .build()
        .unwrap();
    let echo = Tool::new(
        "echo",
        "Repeats a text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args, _ctx| async move { ToolResult::ok(args["text"].as_str().unwrap_or_default()) },
    );
    let plain = HarnessBuilder::new("Echo").with_tool(echo).build().unwrap();
    (math, plain)
}

fn served_agent(runs: Arc<AtomicUsize>) -> Agent {
    let (math, echo) = harnesses(runs);
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(echo)
        .with_harness(math)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap()
}

/// [`served_agent`] served flat over HTTP on loopback, behind [`TOKEN`].
async fn serve_flat(runs: &Arc<AtomicUsize>) -> McpHttpServer {
    McpServer::new(served_agent(Arc::clone(runs)))
        .without_collapse()
        .with_bearer_token(TOKEN)
        .serve_http(loopback())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_needs_a_token_unless_told_otherwise() {
    let agent = served_agent(Arc::default());
    let error = McpServer::new(agent.clone())
        .serve_http(loopback())
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Invalid { .. }));
    assert!(
        error
            .to_string()
            .contains("serve_http needs a bearer token"),
        "{error}"
    );

    let empty = McpServer::new(agent.clone())
        .with_bearer_token(" ")
        .serve_http(loopback())
        .await
        .unwrap_err();
    assert!(
        empty.to_string().contains("the bearer token is empty"),
        "{empty}"
    );

    let origin = McpServer::new(agent.clone())
        .with_bearer_token(TOKEN)
        .with_allowed_origin("app.example.com")
        .serve_http(loopback())
        .await
        .unwrap_err();
    assert!(
        origin
            .to_string()
            .contains("is not of the form scheme://host[:port]"),
        "{origin}"
    );

    let open = McpServer::new(agent)
        .with_unauthenticated_access()
        .serve_http(loopback())
        .await
        .unwrap();
    let harness = McpHarness::http("Open", open.url())
        .connect()
        .await
        .unwrap();
    assert_eq!(harness.tool_names(), ["echo", "Math"]);
    open.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_served_flat_over_http_is_a_harness_of_another_agent() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = serve_flat(&runs).await;
    let remote = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect()
        .await
        .unwrap();
    assert_eq!(remote.tool_names(), ["echo", "add"]);

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Remote", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("c3", "echo", r#"{"text": "over MCP"}"#),
            ToolCall::new("c4", "add", r#"{"a": "x"}"#),
        ]),
        ChatResponse::text("5"),
    ]);
    let client = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(remote)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    client.run("2 + 3").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["Remote"]);
    // The served harness's scoped middleware ran for the MCP call.
    assert_eq!(requests[2].tool_result("c2"), Some(("5 [audited]", false)));
    assert_eq!(requests[2].tool_result("c3"), Some(("over MCP", false)));
    // An error result of the served tool stays an error result for the client.
    assert_eq!(
        requests[2].tool_result("c4"),
        Some(("Error: a and b must be integers [audited]", true))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // What each tool says of itself went out as its MCP `annotations` and came back into the
    // client's definitions; a tool that says nothing is listed without any.
    let annotations: Vec<(&str, ToolAnnotations)> = requests[1]
        .tools
        .iter()
        .map(|tool| (tool.name.as_str(), tool.annotations))
        .collect();
    assert_eq!(
        annotations,
        [
            ("echo", ToolAnnotations::new()),
            ("add", ToolAnnotations::read_only().with_open_world(false))
        ]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collapsing_is_per_session_and_expansion_sends_list_changed() {
    let server = McpServer::new(served_agent(Arc::default()))
        .with_bearer_token(TOKEN)
        .serve_http(loopback())
        .await
        .unwrap();
    let connect = |name: &'static str| {
        McpHarness::http(name, server.url())
            .with_header("Authorization", format!("Bearer {TOKEN}"))
            .without_collapse()
            .connect()
    };
    let first = connect("First").await.unwrap();
    let second = connect("Second").await.unwrap();
    assert_eq!(first.tool_names(), ["echo", "Math"]);

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Math", "{}")]),
        ChatResponse::text("expanded"),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "add", r#"{"a": 20, "b": 22}"#)]),
        ChatResponse::text("42"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(first.clone())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session.run("open Math").await.unwrap();
    // list_changed reaches the client's handler on a task of its own; give it time to be
    // handled before the next turn starts.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let requests = model.take_requests();
    let (listing, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(!is_error);
    assert!(
        listing.starts_with("Math expanded. Available functions: add"),
        "{listing}"
    );
    assert!(
        listing.contains(r#"- add: Adds two integers Parameters (JSON schema): {"#),
        "the container result lists members with schemas: {listing}"
    );
    // The turn kept its list; the server's list_changed is applied from the next turn.
    assert_eq!(requests[1].tool_names(), ["echo", "Math"]);

    session.run("add").await.unwrap();
    let requests = model.take_requests();
    assert_eq!(requests[0].tool_names(), ["echo", "add"]);
    assert_eq!(requests[1].tool_result("c2"), Some(("42 [audited]", false)));
    assert_eq!(first.tool_names(), ["echo", "add"]);
    // The other session did not expand anything.
    assert_eq!(second.tool_names(), ["echo", "Math"]);
    server.shutdown().await;
}

/// A request that must be rejected: what it lacks, its headers, the expected status.
type Rejected<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);

/// One raw HTTP/1.1 request; returns the status code, the headers (lower-cased names) and the
/// body.
fn http_post(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> (u16, Vec<(String, String)>, String) {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    // SSE responses stay open until the server ends them; read what arrives in time.
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                response.extend_from_slice(&buffer[..n]);
                if String::from_utf8_lossy(&response).contains("\"result\"") {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    (status, headers, rest.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_or_from_a_foreign_origin_run_no_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = serve_flat(&runs).await;
    let addr = server.local_addr();
    let bearer = format!("Bearer {TOKEN}");
    let result = tokio::task::spawn_blocking(move || {
        // An authorized session, so that the rejected calls below would otherwise reach a tool.
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}});
        let (status, headers, _) = http_post(addr, &[("Authorization", &bearer)], &initialize);
        assert_eq!(status, 200);
        let session = headers
            .iter()
            .find(|(name, _)| name == "mcp-session-id")
            .map(|(_, value)| value.clone())
            .expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = http_post(
            addr,
            &[("Authorization", &bearer), ("Mcp-Session-Id", &session)],
            &initialized,
        );
        assert_eq!(status, 202);

        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
        let wrong = "Bearer not-the-token".to_owned();
        let rejected: [Rejected; 4] = [
            ("no token", vec![("Mcp-Session-Id", &session)], 401),
            (
                "wrong token",
                vec![("Authorization", &wrong), ("Mcp-Session-Id", &session)],
                401,
            ),
            (
                "token without Bearer",
                vec![("Authorization", TOKEN), ("Mcp-Session-Id", &session)],
                401,
            ),
            (
                "foreign origin",
                vec![
                    ("Authorization", &bearer),
                    ("Mcp-Session-Id", &session),
                    ("Origin", "http://evil.example"),
                ],
                403,
            ),
        ];
        for (what, headers, expected) in &rejected {
            let (status, response_headers, _) = http_post(addr, headers, &call);
            assert_eq!(status, *expected, "{what}");
            if *expected == 401 {
                assert!(
                    response_headers
                        .iter()
                        .any(|(name, value)| name == "www-authenticate" && value == "Bearer"),
                    "{what}"
                );
            }
        }
        let runs_after_rejections = runs.load(Ordering::SeqCst);

        // The same call with the token and a loopback origin runs the tool.
        let (status, _, body) = http_post(
            addr,
            &[
                ("Authorization", &bearer),
                ("Mcp-Session-Id", &session),
                ("Origin", "http://localhost:3000"),
            ],
            &call,
        );
        (
            runs_after_rejections,
            status,
            body,
            runs.load(Ordering::SeqCst),
        )
    })
    .await
    .unwrap();
    let (runs_after_rejections, status, body, runs_after_call) = result;
    assert_eq!(
        runs_after_rejections, 0,
        "no tool ran for a rejected request"
    );
    assert_eq!(status, 200);
    assert!(body.contains(r#""text":"3 [audited]""#), "{body}");
    assert_eq!(runs_after_call, 1);
    server.shutdown().await;
}
