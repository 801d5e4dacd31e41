//! A dynamic harness: tools that exist only at run time, collapsed like any Rust harness.
//!
//! Tools read from a plugin manifest, an OpenAPI document or an MCP server are not Rust
//! methods. `HarnessBuilder` makes a harness of them: each `Tool` is a name, a description, a
//! JSON parameter schema and an async handler. The harness collapses, recovers and takes
//! scoped middleware exactly like a `#[collapse]` harness. `build` checks names and schemas.
//!
//! The second half drives the same agent's tools without a model, through a tool session (what
//! serving an agent's tools over MCP uses). A scripted model plays the conversation:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example runtime_tools
//! ```

use hpd_agent::{
    AgentBuilder, AgentEvent, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall,
    ToolResult, config::CALL_TOOL,
};
use serde::Deserialize;
use serde_json::Value;

/// What a plugin manifest says about its tools, as it might arrive at run time.
const MANIFEST: &str = r#"[
  {"name": "create_ticket", "description": "Opens a support ticket",
   "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
  {"name": "close_ticket", "description": "Closes a ticket by id",
   "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
]"#;

/// One entry of the manifest.
#[derive(Deserialize)]
struct ManifestTool {
    name: String,
    description: String,
    parameters: Value,
}

/// One tool per manifest entry; the handler stands in for the call to the plugin.
fn tools_from_manifest(manifest: &str) -> Result<Vec<Tool>, serde_json::Error> {
    let entries: Vec<ManifestTool> = serde_json::from_str(manifest)?;
    Ok(entries
        .into_iter()
        .map(|entry| {
            let name = entry.name.clone();
            Tool::new(
                entry.name,
                entry.description,
                entry.parameters,
                move |args, _ctx| {
                    let done = format!("{name} done with {args}");
                    async move { ToolResult::ok(done) }
                },
            )
        })
        .collect())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tickets = HarnessBuilder::new("Tickets")
        .with_collapse("Support ticket operations")
        .with_system_prompt("Quote ticket ids exactly.")
        .with_tools(tools_from_manifest(MANIFEST)?)
        .build()?;
    println!(
        "harness Tickets from the manifest: {}",
        tickets.tool_names().join(", ")
    );

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Tickets", "{}")]),
        // The container answered with its tools' schemas: call one through the call tool.
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c2",
            CALL_TOOL,
            r#"{"name": "create_ticket", "arguments": {"title": "Printer on fire"}}"#,
        )]),
        ChatResponse::text("Ticket opened."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("You help with support tickets.")
        .with_harness(tickets)
        .with_chat_client(model)
        .on_event(|event| match event {
            AgentEvent::IterationStarted { visible_tools, .. } => {
                println!("  request: tools [{}]", visible_tools.join(", "));
            }
            AgentEvent::ToolCallFinished { name, result, .. } => {
                println!("  {name} -> {result}");
            }
            _ => {}
        })
        .build()?;
    println!("\nuser: The printer is on fire.");
    let output = agent.run("The printer is on fire.").await?;
    println!("answer: {}", output.text);

    // The same tools without a model; the event handler above prints the results.
    println!("\nA tool session, no model: a qualified call of a hidden tool recovers it");
    let session = agent.tool_session();
    println!("  lists: {}", session.visible_tool_names().join(", "));
    let recovered = session
        .call_tool("s1", "Tickets.close_ticket", r#"{"id": 7}"#)
        .await?;
    println!("  the container expanded: {}", recovered.expanded);
    println!("  lists: {}", session.visible_tool_names().join(", "));
    session
        .call_tool("s2", "close_ticket", r#"{"id": 7}"#)
        .await?;

    println!("\nA tool whose name a model could not call fails the build:");
    let broken = Tool::new("close ticket", "", r#"{"type": "object"}"#, |_, _| async {
        ToolResult::ok("")
    });
    if let Err(error) = HarnessBuilder::new("Broken").with_tool(broken).build() {
        println!("  {error}");
    }
    Ok(())
}
