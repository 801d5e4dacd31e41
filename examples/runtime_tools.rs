//! Tools that exist only at run time: a harness built from a JSON description of an API (as a
//! plugin host or an OpenAPI import would have it), collapsed behind one container, then the
//! same agent's tools driven without a model through a tool session.
//!
//! A scripted model plays the conversation, so the example runs offline.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example runtime_tools
//! ```

use hpd_agent::{
    AgentBuilder, AgentEvent, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall,
    ToolResult,
};
use serde_json::{Value, json};

/// What a plugin manifest might say about its tools.
const MANIFEST: &str = r#"[
  {"name": "create_ticket", "description": "Opens a support ticket",
   "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
  {"name": "close_ticket", "description": "Closes a ticket by id",
   "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
]"#;

/// One tool per manifest entry; the handler stands in for the call to the plugin.
fn tools_from_manifest(manifest: &str) -> Result<Vec<Tool>, serde_json::Error> {
    let entries: Vec<Value> = serde_json::from_str(manifest)?;
    Ok(entries
        .into_iter()
        .map(|entry| {
            let name = entry["name"].as_str().unwrap_or_default().to_owned();
            let description = entry["description"].as_str().unwrap_or_default().to_owned();
            let tool_name = name.clone();
            Tool::new(
                name,
                description,
                entry["parameters"].clone(),
                move |args, _ctx| {
                    let tool_name = tool_name.clone();
                    async move { ToolResult::ok(format!("{tool_name} done with {args}")) }
                },
            )
        })
        .collect())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tickets = HarnessBuilder::new("Tickets")
        .collapse("Support ticket operations")
        .system_prompt("Quote ticket ids exactly.")
        .tools(tools_from_manifest(MANIFEST)?)
        .build()?;

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Tickets", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c2",
            "create_ticket",
            json!({"title": "Printer on fire"}).to_string(),
        )]),
        ChatResponse::text("Ticket opened."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("You help with support tickets.")
        .with_harness(tickets)
        .with_chat_client(model.clone())
        .on_event(|event| match event {
            AgentEvent::IterationStarted {
                iteration,
                visible_tools,
            } => println!(
                "[request {iteration}] visible tools: {}",
                visible_tools.join(", ")
            ),
            AgentEvent::ToolCallFinished { name, result, .. } => {
                println!("  {name} -> {result}");
            }
            _ => {}
        })
        .build()?;
    let output = agent.run("The printer is on fire.").await?;
    println!("answer: {}\n", output.text);

    // The same tools without a model, as an MCP server would serve them (results are printed
    // by the event handler above).
    let session = agent.tool_session();
    println!(
        "tool session lists: {}",
        session.visible_tool_names().join(", ")
    );
    let recovered = session
        .call("Tickets.close_ticket", r#"{"id": 7}"#, "s1")
        .await?;
    println!("  (the list changed: {})", recovered.expanded);
    println!(
        "tool session lists: {}",
        session.visible_tool_names().join(", ")
    );
    let closed = session.call("close_ticket", r#"{"id": 7}"#, "s2").await?;
    assert!(!closed.result.is_error);
    Ok(())
}
