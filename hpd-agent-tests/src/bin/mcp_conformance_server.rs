//! The MCP server under test of the official conformance suite
//! (npm `@modelcontextprotocol/conformance`, `conformance server --url ...`), run by
//! `.ci/mcp-conformance.sh`.
//!
//! It serves the suite's fixture tools through the project's own API: a [`HarnessBuilder`]
//! harness of [`Tool`]s, served by [`McpServer::serve_http`]. Fixture tools whose results the
//! project cannot express (see `.ci/mcp-conformance/*.yaml`) are not served.
//!
//! ```text
//! mcp_conformance_server [ADDR]    # default 127.0.0.1:0; prints the endpoint URL on stdout
//! ```

use std::net::SocketAddr;

use hpd_agent::mcp::McpServer;
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::json;

fn no_arguments() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

fn fixture_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_simple_text",
            "Returns a simple text response",
            no_arguments(),
            |_, _| async { ToolResult::ok("This is a simple text response for testing.") },
        ),
        Tool::new(
            "test_error_handling",
            "Always fails with an error result",
            no_arguments(),
            |_, _| async {
                ToolResult::error("This tool intentionally returns an error for testing")
            },
        ),
    ]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        Some(addr) => addr.parse()?,
        None => "127.0.0.1:0".parse()?,
    };
    let harness = HarnessBuilder::new("Conformance")
        .tools(fixture_tools())
        .build()?;
    let agent = AgentBuilder::new()
        .with_name("hpd-agent-conformance")
        .with_harness(harness)
        // The model is never asked: the server only runs the tools.
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    // The suite sends no credentials; the port is on loopback and lives for one run.
    let server = McpServer::new(agent)
        .allow_unauthenticated()
        .serve_http(addr)
        .await?;
    println!("{}", server.url());
    server.wait().await;
    Ok(())
}
