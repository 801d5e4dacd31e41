//! An MCP server as a collapsed harness. Works offline: the example starts itself with
//! `--serve` as the MCP server (the demo's tools served flat over stdio by `McpServer`), then
//! connects to it with `McpHarness`, so the model sees one `Demo` container whose members are
//! the server's tools.
//!
//! When `HPD_MCP_FILESYSTEM` names the command of `@modelcontextprotocol/server-filesystem`
//! (`.ci/mcp-servers.sh` installs it and prints the variable), the example also connects it,
//! allowed to read the current directory, as a second container `Files`.
//!
//! Offline (no `OPENAI_API_KEY`) a scripted model opens `Demo` and calls `multiply`; with
//! `OPENAI_API_KEY` set it talks to the OpenAI-compatible API (`OPENAI_BASE_URL`,
//! `OPENAI_MODEL`).
//!
//! ```text
//! cargo run -p hpd-agent-examples --example mcp_client
//! ```

mod demo_tools;

use demo_tools::{MathTools, WeatherTools};
use hpd_agent::mcp::{McpHarness, McpServer};
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatResponse, OpenAiClient,
    ScriptedChatClient, ToolCall,
};

const QUESTION: &str = "What is 17 * 23?";

/// The server side: the demo's tools, served flat (no containers) on stdin and stdout.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    McpServer::new(agent).flat(true).serve_stdio().await?;
    Ok(())
}

fn print_event(event: &AgentEvent) {
    match event {
        AgentEvent::IterationStarted {
            iteration,
            visible_tools,
        } => println!(
            "\n[request {iteration}] visible tools: {}",
            visible_tools.join(", ")
        ),
        AgentEvent::ToolCallStarted {
            name, arguments, ..
        } => println!("  call   {name}({arguments})"),
        AgentEvent::ToolCallFinished {
            name,
            result,
            is_error,
            ..
        } => {
            let marker = if *is_error { "error " } else { "result" };
            println!("  {marker} {name} -> {}", result.replace('\n', " "));
        }
        _ => {}
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        return serve().await;
    }

    let me = std::env::current_exe()?;
    let demo = McpHarness::stdio("Demo", me.to_string_lossy(), ["--serve"])
        .description("Weather and arithmetic")
        .connect()
        .await?;
    println!("connected Demo: {}", demo.tool_names().join(", "));
    let mut builder = AgentBuilder::new()
        .with_instructions("You are a helpful assistant. Use the tools to answer.")
        .with_harness(demo);

    if let Ok(command) = std::env::var("HPD_MCP_FILESYSTEM") {
        let mut parts = command.split_whitespace().map(str::to_owned);
        if let Some(program) = parts.next() {
            let mut args: Vec<String> = parts.collect();
            args.push(std::env::current_dir()?.to_string_lossy().into_owned());
            let files = McpHarness::stdio("Files", program, args)
                .description("Read files of the current directory")
                .functions(["read_text_file", "list_directory"])
                .connect()
                .await?;
            println!("connected Files: {}", files.tool_names().join(", "));
            builder = builder.with_harness(files);
        }
    }

    let client: Box<dyn ChatClient> = if std::env::var_os("OPENAI_API_KEY").is_some() {
        let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
        println!("online: using model {model} through the OpenAI-compatible API");
        Box::new(OpenAiClient::from_env(model)?)
    } else {
        println!("offline: OPENAI_API_KEY is not set, so a scripted model plays the conversation");
        Box::new(ScriptedChatClient::with_replies([
            ChatResponse::tool_calls(vec![ToolCall::new("call_1", "Demo", "{}")]),
            ChatResponse::tool_calls(vec![ToolCall::new(
                "call_2",
                "multiply",
                r#"{"a": 17, "b": 23}"#,
            )]),
            ChatResponse::text("17 × 23 = 391."),
        ]))
    };
    let agent = builder.with_chat_client(client).build()?;

    println!("user: {QUESTION}");
    let output = agent
        .session()
        .run_with(QUESTION, AgentRunConfig::new().on_event(print_event))
        .await?;
    println!("\nanswer: {}", output.text);
    Ok(())
}
