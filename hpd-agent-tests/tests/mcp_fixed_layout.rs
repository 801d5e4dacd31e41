//! `McpServer` serving the `fixed` collapsing layout: `tools/list` shows the plain tools, the
//! containers and the call tool, a container call answers with its members' schemas, calls go
//! through the call tool, and no `notifications/tools/list_changed` is ever sent, so the MCP
//! host's tool list (and its own prompt cache) never changes. `McpHarness` reaches such a server
//! over the stateless 2026-07-28 revision (it asks for it first, and a `fixed` server offers
//! it), so the container call and the call through the call tool are two requests with no
//! session between them. The `hide` layout, served the same way, keeps its expansions in a
//! 2025-11-25 session and sends one: the check can see it.
//!
//! The client logs each notification it receives through `tracing`; a recording subscriber,
//! installed for the whole process (the notification is handled on a task of its own), counts
//! them per client.

mod support;

use std::time::Duration;

use hpd_agent::mcp::{McpHarness, McpServer};
use hpd_agent::{
    AgentBuilder, ScriptedChatClient, chat::DeferredTools, config::CALL_TOOL,
    config::CollapsingLayout,
};
use hpd_agent_tests::{MathTools, WeatherTools};
use support::Recorder;

const TOKEN: &str = "fixed-layout-token-91c2";

async fn served(
    layout: CollapsingLayout,
    deferred: DeferredTools,
) -> hpd_agent::mcp::McpHttpServer {
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_collapsing_layout(layout)
        // The model is not used for serving; a native form must not reach MCP, which has none.
        .with_chat_client(ScriptedChatClient::new().with_deferred_tools(deferred))
        .build()
        .unwrap();
    McpServer::new(agent)
        .with_bearer_token(TOKEN)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

fn notifications(recorder: &Recorder, client: &str) -> usize {
    recorder
        .lines()
        .iter()
        .filter(|l| l.contains("tool list changed") && l.contains(&format!("server={client}")))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_is_served_without_list_changed_and_hide_sends_it() {
    let recorder = Recorder::leak();
    tracing::subscriber::set_global_default(recorder)
        .expect("the only subscriber of this test binary");

    for (layout, deferred) in [
        (CollapsingLayout::Fixed, DeferredTools::Unsupported),
        // `native` is served as `fixed`, whatever the agent's own client could do.
        (CollapsingLayout::Native, DeferredTools::ToolReferences),
    ] {
        let server = served(layout, deferred).await;
        let name = format!("Fixed{layout}");
        let client = McpHarness::http(name.clone(), server.url())
            .with_header("Authorization", format!("Bearer {TOKEN}"))
            .without_collapse()
            .connect()
            .await
            .unwrap();
        // The served call tool keeps its server name on the wire; the client exposes it as
        // `{harness}_call_function`, since an agent's own `fixed` layout has a `call_function`.
        let call_tool = format!("{name}_{CALL_TOOL}");
        let list = [
            "get_weather",
            "get_forecast",
            "MathTools",
            call_tool.as_str(),
        ];
        let names = client.tool_names();
        assert_eq!(names, list, "{layout}");
        let tools = hpd_agent::AgentBuilder::new()
            .with_harness(client.clone())
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap()
            .tool_session();
        let opened = tools.call_tool("m1", list[2], "{}").await.unwrap();
        assert!(!opened.result.is_error, "{}", opened.result.text);
        assert!(
            opened.result.text.starts_with("MathTools expanded. Available functions: add, multiply, divide\n\nCall them through call_function"),
            "{}",
            opened.result.text
        );
        let sum = tools
            .call_tool(
                "m2",
                list[3],
                r#"{"name": "add", "arguments": {"a": 40, "b": 2}}"#,
            )
            .await
            .unwrap();
        assert_eq!(sum.result.text, "42");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(client.tool_names(), list, "{layout}");
        assert_eq!(
            notifications(recorder, &name),
            0,
            "{layout}: {:#?}",
            recorder.lines()
        );
        server.shutdown().await;
    }

    let server = served(CollapsingLayout::Hide, DeferredTools::Unsupported).await;
    let client = McpHarness::http("Hidden", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let tools = hpd_agent::AgentBuilder::new()
        .with_harness(client.clone())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap()
        .tool_session();
    assert_eq!(
        client.tool_names(),
        ["get_weather", "get_forecast", "MathTools"]
    );
    tools.call_tool("h1", "MathTools", "{}").await.unwrap();
    let mut waited = 0;
    while notifications(recorder, "Hidden") == 0 && waited < 50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(
        notifications(recorder, "Hidden"),
        1,
        "{:#?}",
        recorder.lines()
    );
    server.shutdown().await;
}
