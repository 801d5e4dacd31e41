//! An MCP server's tools as a collapsed harness.
//!
//! `McpHarness::stdio(name, command, args)` starts an MCP server as a child process,
//! `McpHarness::http(name, url)` reaches one over HTTP; `connect` lists its tools and returns a
//! harness, collapsed by default: the model sees one container named after the server until
//! it opens it. (A JSON config's `"mcp_servers"` does the same from config.)
//!
//! To run offline, the example is its own server: started with `--serve`, it serves the
//! `UnitConverter` harness of `examples/harness-library` with `McpServer`, flat, on stdio.
//! Give another stdio server's command line after `--` to list its tools as well:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example mcp_client
//! cargo run -p hpd-agent-examples --example mcp_client -- target/debug/examples/mcp_server
//! ```

use harness_library::UnitConverter;
use hpd_agent::mcp::{McpHarness, McpServer};
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall, config::CALL_TOOL,
};

/// The server side: a harness served flat (no containers) on stdin and stdout.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let agent = AgentBuilder::new()
        .with_tool_harness::<UnitConverter>()
        .with_chat_client(ScriptedChatClient::new()) // a server only runs tools
        .build()?;
    McpServer::new(agent)
        .without_collapse()
        .serve_stdio()
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve") {
        return serve().await;
    }

    let me = std::env::current_exe()?;
    let units = McpHarness::stdio("Units", me.to_string_lossy(), ["--serve"])
        .with_collapse("Unit conversions")
        .connect()
        .await?;
    println!(
        "connected MCP server 'Units' over stdio: {}",
        units.tool_names().join(", ")
    );
    let mut builder = AgentBuilder::new().with_harness(units);

    if let Some((command, rest)) = args.split_first() {
        let other = McpHarness::stdio("Other", command.as_str(), rest)
            .connect()
            .await
            .map_err(|e| format!("cannot connect `{}`: {e}", args.join(" ")))?;
        println!(
            "connected '{}' as Other: {}",
            args.join(" "),
            other.tool_names().join(", ")
        );
        builder = builder.with_harness(other);
    }

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Units", "{}")]),
        // The container answered with its tools' schemas: call one through the call tool.
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c2",
            CALL_TOOL,
            r#"{"name": "kilometres_to_miles", "arguments": {"kilometres": 42.195}}"#,
        )]),
        ChatResponse::text("A marathon is about 26.2 miles."),
    ]);
    let agent = builder
        .with_chat_client(model)
        .on_event(|event| match event {
            AgentEvent::IterationStarted { visible_tools, .. } => {
                println!("  request: tools [{}]", visible_tools.join(", "));
            }
            AgentEvent::ToolCallFinished { name, result, .. } => {
                println!("  {name} -> {}", result.replace('\n', " "));
            }
            _ => {}
        })
        .build()?;

    println!("\nuser: How many miles is a marathon (42.195 km)?");
    let output = agent
        .run("How many miles is a marathon (42.195 km)?")
        .await?;
    println!("answer: {}", output.text);
    println!(
        "\nThe call crossed a process boundary: the model called kilometres_to_miles, \
         the server process ran it."
    );
    Ok(())
}
