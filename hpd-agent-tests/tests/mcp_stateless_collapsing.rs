//! A collapsing `McpServer` in the `fixed` layout serves the stateless 2026-07-28 revision:
//! `McpHarness` (which asks for it first) reaches it without a session, and every request is
//! handled on its own. A container call answers with its members' schemas and instructions;
//! `call_function` runs any collapsed member, checked against its schema, with its harness's
//! scoped middleware created for that call (and no instructions after the result: the member
//! counts as loaded, as if the client's conversation held the container's result, which has
//! them); an unknown name gets an error that lists every name that can be called. A scoped
//! middleware that counts the calls of its own instance shows the difference: over 2026-07-28
//! every call meets a fresh instance (no state survives a request), while a 2025-11-25
//! session keeps the instance its expansion created. Without a session to notify, a changed
//! tool list reaches 2026-07-28 clients on their `subscriptions/listen` streams.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::middleware::{FunctionCall, HookResult};
use hpd_agent::{
    AgentBuilder, HarnessBuilder, Middleware, ScriptedChatClient, Tool, ToolResult,
    agent::ToolSession, async_trait,
};
use hpd_agent_tests::{MathTools, WeatherTools};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

/// The instructions section a `MathTools` container result carries.
const MATH_INSTRUCTIONS: &str = "\n\n## Active container instructions\n\n### MathTools\nUse exact arithmetic and show units when relevant.";

/// Counts the calls that went through this one instance and says so after the result.
#[derive(Default)]
struct PerPipeline {
    calls: AtomicUsize,
}

#[async_trait]
impl Middleware for PerPipeline {
    async fn after_function(&self, _call: &FunctionCall, result: &mut ToolResult) -> HookResult {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        result.text = format!("{} (call {n} of this pipeline)", result.text);
        Ok(())
    }
}

/// Serves a plain harness and two collapsed ones (`MathTools` with instructions, `Counter` with a
/// scoped middleware made afresh for each expansion) in the default `fixed` layout.
async fn serve() -> McpHttpServer {
    let bump = Tool::new(
        "bump",
        "Bumps the counter",
        json!({"type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]}),
        |args, _| async move { ToolResult::ok(format!("bumped by {}", args["by"])) },
    );
    let counter = HarnessBuilder::new("Counter")
        .with_collapse("A counter")
        .with_tool(bump)
        .with_scoped_middleware_factory(PerPipeline::default)
        .build()
        .unwrap();
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_harness(counter)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    McpServer::new(agent)
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// The tools of an agent whose only harness is `McpHarness` `name` on `server`, with the
/// server's tools as they are (no collapsing on the client's side).
async fn remote(server: &McpHttpServer, name: &str) -> ToolSession {
    let harness = McpHarness::http(name, server.url())
        .without_collapse()
        .connect()
        .await
        .unwrap();
    AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap()
        .tool_session()
}

/// Calls the served `call_function` (exposed as `{client}_call_function`) with `arguments`.
async fn call(tools: &ToolSession, client: &str, arguments: serde_json::Value) -> ToolResult {
    tools
        .call_tool(
            "c",
            &format!("{client}_call_function"),
            &arguments.to_string(),
        )
        .await
        .unwrap()
        .result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_server_serves_2026_07_28_without_session_state() {
    let server = serve().await;
    let tools = remote(&server, "Remote").await;
    assert_eq!(
        tools.visible_tool_names(),
        [
            "get_weather",
            "get_forecast",
            "MathTools",
            "Counter",
            "Remote_call_function"
        ]
    );

    // A member runs without its container having been called: the server cannot know what the
    // client's conversation holds.
    let sum = call(
        &tools,
        "Remote",
        json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
    )
    .await;
    assert!(!sum.is_error, "{}", sum.text);
    assert_eq!(sum.text, "42");

    // The container call: the members' schemas and the instructions, complete every time.
    for _ in 0..2 {
        let opened = tools
            .call_tool("c", "MathTools", "{}")
            .await
            .unwrap()
            .result;
        assert!(
            opened.text.starts_with(
                "MathTools expanded. Available functions: add, multiply, divide\n\nCall them through call_function, as {\"name\": \"call_function\", \"arguments\": {\"name\": \"<function>\", \"arguments\": {...}}}:\n{\"name\":\"add\""
            ),
            "{}",
            opened.text
        );
        assert!(opened.text.ends_with(MATH_INSTRUCTIONS), "{}", opened.text);
    }

    // Arguments are checked against the member's schema before it runs.
    let bad = call(
        &tools,
        "Remote",
        json!({"name": "add", "arguments": {"a": "forty", "b": 2}}),
    )
    .await;
    assert!(bad.is_error);
    assert!(
        bad.text
            .starts_with("Invalid arguments for 'add': at $.a: "),
        "{}",
        bad.text
    );

    // An unknown name lists what can be called: the listed tools, then every member.
    let unknown = call(&tools, "Remote", json!({"name": "sqrt", "arguments": {}})).await;
    assert!(unknown.is_error);
    assert_eq!(
        unknown.text,
        "Function 'sqrt' not found. Available functions: get_weather, get_forecast, MathTools, Counter, call_function, add, multiply, divide, bump"
    );

    // No state survives a request: every call meets a scoped middleware of its own.
    for by in 1..=3 {
        let bumped = call(
            &tools,
            "Remote",
            json!({"name": "bump", "arguments": {"by": by}}),
        )
        .await;
        assert_eq!(
            bumped.text,
            format!("bumped by {by} (call 1 of this pipeline)")
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_session_keeps_its_expansions() {
    let server = serve().await;
    let client = ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
        .serve(StreamableHttpClientTransport::from_uri(server.url()))
        .await
        .unwrap();
    assert_eq!(
        client.peer().peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_11_25
    );
    let call = |name: &'static str, arguments: serde_json::Value| {
        let peer = client.peer().clone();
        async move {
            let mut params = CallToolRequestParams::new(name);
            if let serde_json::Value::Object(map) = arguments {
                params = params.with_arguments(map);
            }
            let result = peer.call_tool(params).await.unwrap();
            result.content[0].as_text().unwrap().text.clone()
        }
    };
    let opened = call("Counter", json!({})).await;
    assert!(opened.starts_with("Counter expanded."), "{opened}");
    // The session's expansion created one scoped middleware, which its calls share.
    for n in 1..=2 {
        let bumped = call(
            "call_function",
            json!({"name": "bump", "arguments": {"by": n}}),
        )
        .await;
        assert_eq!(bumped, format!("bumped by {n} (call {n} of this pipeline)"));
    }
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_call_at_once_and_share_nothing() {
    let server = serve().await;
    let clients = [
        Arc::new(remote(&server, "First").await),
        Arc::new(remote(&server, "Second").await),
    ];
    let mut calls = tokio::task::JoinSet::new();
    for (c, tools) in clients.iter().enumerate() {
        let client = ["First", "Second"][c];
        for i in 0..8_i64 {
            let tools = Arc::clone(tools);
            calls.spawn(async move {
                // Only the first client ever calls the container; the second's calls run all
                // the same.
                if c == 0 && i == 0 {
                    let opened = tools.call_tool("c", "MathTools", "{}").await.unwrap();
                    assert!(opened.result.text.starts_with("MathTools expanded."));
                }
                let a = 100 * c as i64 + i;
                let sum = call(
                    &tools,
                    client,
                    json!({"name": "multiply", "arguments": {"a": a, "b": 3}}),
                )
                .await;
                assert_eq!(sum.text, (a * 3).to_string(), "{client}");
                let bumped = call(
                    &tools,
                    client,
                    json!({"name": "bump", "arguments": {"by": a}}),
                )
                .await;
                assert_eq!(
                    bumped.text,
                    format!("bumped by {a} (call 1 of this pipeline)"),
                    "{client}"
                );
            });
        }
    }
    let mut finished = 0;
    while let Some(joined) = calls.join_next().await {
        joined.unwrap();
        finished += 1;
    }
    assert_eq!(finished, 16);
    server.shutdown().await;
}

/// A tool named `name` that answers "`name` ran", for the harnesses whose tool list changes.
fn tool(name: &'static str) -> Tool {
    Tool::new(
        name,
        "A tool",
        json!({"type": "object"}),
        move |_, _| async move { ToolResult::ok(format!("{name} ran")) },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_announces_a_changed_tool_list() {
    let live = HarnessBuilder::new("Live")
        .with_collapse("Tools that change")
        .with_tool(tool("one"))
        .build()
        .unwrap();
    let updater = live.updater();
    let agent = AgentBuilder::new()
        .with_harness(live)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent)
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"))
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url()),
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            },
        )
        .await
        .unwrap();
    // Only tool list changes are offered, whatever else is asked for.
    let mut stream = client
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(
        stream.acknowledged(),
        &SubscriptionFilter::builder().tools_list_changed().build()
    );
    updater.replace(vec![tool("one"), tool("two")]).unwrap();
    let announced = tokio::time::timeout(std::time::Duration::from_secs(10), stream.next())
        .await
        .expect("no notification within 10 s")
        .unwrap();
    assert!(
        matches!(
            announced,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{announced:?}"
    );
    let listed = client.peer().list_all_tools().await.unwrap();
    assert_eq!(
        listed[0].description.as_deref(),
        Some("Tools that change (functions: one, two)")
    );
    drop(stream);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

/// A flat server prepares its served toolset once and shares it between stateless requests;
/// a harness that gets a new tool list is served with it from the next request on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flat_server_serves_a_changed_tool_list_from_the_next_request() {
    let live = HarnessBuilder::new("Live")
        .with_tool(tool("one"))
        .build()
        .unwrap();
    let updater = live.updater();
    let agent = AgentBuilder::new()
        .with_harness(live)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent)
        .without_collapse()
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    // Several requests, each a session of its own, over the one prepared set.
    for _ in 0..3 {
        assert_eq!(
            names(client.peer().list_all_tools().await.unwrap()),
            ["one"]
        );
    }
    updater.replace(vec![tool("one"), tool("two")]).unwrap();
    assert_eq!(
        names(client.peer().list_all_tools().await.unwrap()),
        ["one", "two"]
    );
    let ran = client
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new("two"))
        .await
        .unwrap();
    assert_eq!(
        ran.content[0].as_text().map(|t| t.text.as_str()),
        Some("two ran")
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}
