//! An MCP server: an agent's harnesses served to any MCP client, collapsing per client session.
//!
//! `McpServer` serves the tools of an `Agent` (the model is never used: an MCP server only runs
//! tools), in the agent's collapsing layout: here the default, `fixed`. A client lists
//! `get_weather`, `MathTools`, `TextTools` and the call tool `call_function`, and that list never
//! changes, so the host's own prompt cache keeps it. Calling a container expands it for that
//! client's session and answers with the members and their schemas; the client then calls them
//! through `call_function`. Calling a hidden member by its name runs it right away here
//! (`execute_recovered_calls`). In the `hide` layout (`.with_collapsing_layout(
//! CollapsingLayout::Hide)`) an expansion changes the list instead and the server sends
//! `notifications/tools/list_changed`.
//!
//! Over stdio (the default), for clients that start the server as a child process, such as
//! the `mcp_client` example, Claude Desktop or an editor:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example mcp_server
//! ```
//!
//! Over streamable HTTP on loopback, with the bearer token from `HPD_MCP_TOKEN`:
//!
//! ```text
//! HPD_MCP_TOKEN=secret cargo run -p hpd-agent-examples --example mcp_server -- --http 127.0.0.1:8931
//! ```
//!
//! stdout carries the protocol, so the server writes what it does to stderr.

use std::net::SocketAddr;
use std::process::ExitCode;

use hpd_agent::mcp::McpServer;
use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, ScriptedChatClient};

/// Weather lookups, always listed.
#[derive(Default)]
pub struct WeatherTools;

#[tool_harness]
impl WeatherTools {
    /// Gets the current weather for a city.
    #[ai_function(name = "get_weather")]
    fn get_weather(&self, #[ai_description("The city.")] city: String) -> String {
        format!("It is sunny in {city}.")
    }
}

/// Arithmetic, behind one `MathTools` container.
#[derive(Default)]
pub struct MathTools;

#[collapse("Math operations", system_prompt = "Use exact arithmetic.")]
impl MathTools {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Multiplies two integers.
    #[ai_function]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        a * b
    }
}

/// Text utilities, behind one `TextTools` container.
#[derive(Default)]
pub struct TextTools;

#[collapse("Text utilities")]
impl TextTools {
    /// Returns the text in upper case.
    #[ai_function]
    fn uppercase(&self, #[ai_description("The text to convert.")] text: String) -> String {
        text.to_uppercase()
    }

    /// Counts the words of a text.
    #[ai_function]
    fn word_count(&self, #[ai_description("The text to count.")] text: String) -> usize {
        text.split_whitespace().count()
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // The error's own text (`Display`), not `main`'s default `Debug` output.
            eprintln!("mcp_server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Builds the agent and serves its tools until the client goes away.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let agent = AgentBuilder::new()
        .with_name("hpd-agent-example")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<TextTools>()
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    let tools = agent.initial_tool_names().join(", ");
    let server = McpServer::new(agent)
        .with_instructions("Call a container (MathTools, TextTools) to see its functions.");

    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            eprintln!("mcp_server: serving MCP on stdin/stdout; tools: {tools}");
            eprintln!("mcp_server: an MCP client starts this program and talks on its stdio");
            server.serve_stdio().await?;
        }
        [flag, addr] if flag == "--http" => {
            let addr: SocketAddr = addr.parse()?;
            let token = std::env::var("HPD_MCP_TOKEN")
                .map_err(|_| "set HPD_MCP_TOKEN to the bearer token clients must send")?;
            let running = server.with_bearer_token(token).serve_http(addr).await?;
            // The only line: tests and scripts read it to find the port, then may stop reading.
            eprintln!("serving MCP on {}", running.url());
            running.wait().await;
        }
        _ => return Err("usage: mcp_server [--http 127.0.0.1:PORT]".into()),
    }
    Ok(())
}
