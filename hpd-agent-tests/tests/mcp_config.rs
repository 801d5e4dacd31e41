//! MCP servers from the agent config (`mcp_servers`) and from `with_mcp_server`, connected by
//! `AgentBuilder::build_async`; names that collide with other tools are renamed. The servers
//! are the fault server of `hpd-agent/tests/mcp_fixtures` (run with `HPD_MCP_PYTHON` or
//! `python3`).

mod mcp_common;

use hpd_agent::mcp::McpHarness;
use hpd_agent::{
    AgentBuilder, AgentConfig, BuildError, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool,
    ToolCall, ToolResult,
};
use mcp_common::{fixture, python};
use serde_json::json;

fn local_echo() -> hpd_agent::harness::DynamicHarness {
    let echo = Tool::new(
        "echo",
        "Local echo",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("local") },
    );
    HarnessBuilder::new("Local")
        .with_tool(echo)
        .build()
        .unwrap()
}

#[test]
fn build_refuses_mcp_servers_and_points_to_build_async() {
    let config = AgentConfig::from_json(
        r#"{"mcp_servers": [{"name": "Files", "command": "x"}, {"name": "Web", "url": "http://127.0.0.1:1/mcp"}]}"#,
    )
    .unwrap();
    let error = AgentBuilder::from_config(config)
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP servers (Files, Web) are connected by AgentBuilder::build_async().await, not by build()"
    );
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_mcp_server(McpHarness::stdio("Code", "x", Vec::<String>::new()))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::McpNeedsBuildAsync { .. }),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_servers_connect_and_colliding_names_become_harness_underscore_tool() {
    let Some(python) = python(false) else { return };
    let script = fixture("fault_server.py");
    let config = AgentConfig::from_value(json!({
        "instructions": "Use the tools.",
        "McpServers": [
            {"Name": "One", "Command": python, "Args": [script, "list-changed"], "Collapse": false},
            {"name": "Two", "command": python, "args": [script, "list-changed"],
             "description": "The second server", "functions": ["echo"], "timeout_ms": 20000}
        ]
    }))
    .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "echo", "{}"),
            ToolCall::new("c2", "One_echo", r#"{"text": "from one"}"#),
            ToolCall::new("c3", "Two", "{}"),
        ]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c4",
            "Two_echo",
            r#"{"text": "from two"}"#,
        )]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(local_echo())
        .with_chat_client(model.clone())
        .build_async()
        .await
        .unwrap();
    assert_eq!(
        agent.initial_tool_names(),
        ["echo", "One_echo", "add_tool", "Two"]
    );
    agent.run("echo everywhere").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[1].tool_result("c1"), Some(("local", false)));
    assert_eq!(requests[1].tool_result("c2"), Some(("from one", false)));
    assert!(requests[1].tool_names().contains(&"Two_echo"));
    assert_eq!(requests[2].tool_result("c4"), Some(("from two", false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_harness_that_collides_fails_the_build_naming_both() {
    let Some(python) = python(false) else { return };
    let server = McpHarness::stdio(
        "Remote",
        python,
        [fixture("fault_server.py"), "list-changed".to_owned()],
    )
    .without_collapse()
    .connect()
    .await
    .unwrap();
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(local_echo())
        .with_harness(server)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name 'echo' is registered twice: by 'Local' and by 'Remote'"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_fails_build_async_naming_it() {
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_mcp_server(McpHarness::stdio(
            "Ghost",
            "/nonexistent/hpd-mcp-ghost",
            Vec::<String>::new(),
        ))
        .with_chat_client(ScriptedChatClient::new())
        .build_async()
        .await
        .unwrap_err();
    let BuildError::McpServer { server, message } = &error else {
        panic!("expected BuildError::McpServer, got {error}");
    };
    assert_eq!(server, "Ghost");
    assert!(
        message.starts_with("MCP server 'Ghost': could not start `/nonexistent/hpd-mcp-ghost`"),
        "{message}"
    );
}
