//! Serves the demo's harnesses over MCP, collapsed per session: the plain `get_weather`, the
//! collapsed `MathTools` (`add`, `multiply`) and a collapsed `TextTools` (`uppercase`,
//! `word_count`). An MCP client sees `get_weather`, `MathTools` and `TextTools`; calling a
//! container expands it for that client.
//!
//! Over stdio (the default), for clients that start the server as a child process:
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
//! The model is never used: an MCP server only runs tools. Logs go to stderr.

mod demo_tools;

use std::net::SocketAddr;

use demo_tools::{MathTools, WeatherTools};
use hpd_agent::mcp::McpServer;
use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, ScriptedChatClient};

/// Text utilities, collapsed behind one `TextTools` container.
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
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = AgentBuilder::new()
        .with_name("hpd-agent-demo")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<TextTools>()
        // Many MCP clients do not list the tools again after `list_changed`: run a call of a
        // hidden member right away instead of asking to call it again.
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    let server = McpServer::new(agent)
        .instructions("Demo tools. Call a container (MathTools, TextTools) to see its functions.");

    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await?,
        [flag, addr] if flag == "--http" => {
            let addr: SocketAddr = addr.parse()?;
            let token = std::env::var("HPD_MCP_TOKEN")
                .map_err(|_| "set HPD_MCP_TOKEN to the bearer token clients must send")?;
            let running = server.bearer_token(token).serve_http(addr).await?;
            eprintln!("serving MCP on {}", running.url());
            running.wait().await;
        }
        _ => return Err("usage: mcp_server [--http 127.0.0.1:PORT]".into()),
    }
    Ok(())
}
