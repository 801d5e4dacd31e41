//! A served function that asks the client's model (MCP sampling), answered by the agent that
//! uses the server, with its own model.
//!
//! The serving side: a `Notes` harness whose `summarize` function calls
//! `FunctionContext::sample` instead of having a model of its own, served by `McpServer` on
//! loopback. The using side: an agent holding the server as an `McpHarness`; when its model
//! calls `summarize`, the server asks the client for a completion, the harness's
//! `SamplingPolicy` caps the request's tokens, and the agent's model writes the summary. Both
//! revision families run: a server collapsing in the `hide` layout, whose expansions live in
//! the session, speaks 2025-11-25 (the ask is a `sampling/createMessage` request to the
//! client); a flat one speaks 2026-07-28 (the ask is an `input_required` result, and the client
//! sends the call again with the answer), as would one in the default layout.
//!
//! Offline: both models are `ScriptedChatClient`s.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example mcp_sampling
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::mcp::{McpHarness, McpServer, SamplingPolicy};
use hpd_agent::tool::{AskError, SamplingRequest};
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
    async_trait,
};
use serde_json::json;

const TOKEN: &str = "example-sampling-token";

/// The harness's policy: at most 64 tokens for a server's request, whatever it asked.
struct AtMost64;

#[async_trait]
impl SamplingPolicy for AtMost64 {
    async fn review(
        &self,
        server: &str,
        mut request: SamplingRequest,
    ) -> Result<SamplingRequest, AskError> {
        println!(
            "client: {server} asks for a completion of up to {} tokens; capped at 64",
            request.max_tokens
        );
        request.max_tokens = request.max_tokens.min(64);
        Ok(request)
    }
}

/// The serving side: `summarize` asks the caller's model. `runs` counts its body's runs.
async fn serve(
    flat: bool,
    runs: Arc<AtomicUsize>,
) -> Result<hpd_agent::mcp::McpHttpServer, Box<dyn std::error::Error>> {
    let summarize = Tool::new(
        "summarize",
        "Summarises a text in one sentence",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        move |args, ctx| {
            let runs = runs.clone();
            async move {
                let run = runs.fetch_add(1, Ordering::SeqCst) + 1;
                println!("server: summarize runs (run {run}) and asks the client's model");
                let text = args["text"].as_str().unwrap_or_default();
                let request =
                    SamplingRequest::new(format!("Summarise in one sentence: {text}"), 500)
                        .with_system_prompt("You write one-sentence summaries.");
                match ctx.sample(request).await {
                    Ok(reply) => {
                        ToolResult::ok(format!("Summary ({}): {}", reply.model, reply.text))
                    }
                    Err(error) => ToolResult::error(format!("no summary: {error}")),
                }
            }
        },
    );
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(HarnessBuilder::new("Notes").with_tool(summarize).build()?)
        // The serving side's own model is never asked: the function asks the client's.
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    let mut server = McpServer::new(agent).with_bearer_token(TOKEN);
    if flat {
        server = server.without_collapse();
    }
    Ok(server.serve_http("127.0.0.1:0".parse()?).await?)
}

async fn round_trip(flat: bool) -> Result<(), Box<dyn std::error::Error>> {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = serve(flat, runs.clone()).await?;
    let notes = McpHarness::http("Notes", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .with_sampling_policy(AtMost64)
        .connect()
        .await?;
    // The agent's model: it calls `summarize`, then writes the summary the server asks for,
    // then answers.
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "summarize",
            r#"{"text": "MCP lets a server ask its client for a completion, for input or for roots."}"#,
        )]),
        ChatResponse::text("Servers can ask their clients for help."),
        ChatResponse::text("The note says servers can ask their clients for help."),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(notes)
        .with_chat_client(model.clone())
        .build()?;
    let output = agent.run("Summarise my note").await?;
    let requests = model.requests();
    let sampling = &requests[1];
    println!(
        "client: the agent's model got the server's request: system {:?}, max tokens {:?}, no tools: {}",
        sampling.instructions,
        sampling.options.max_output_tokens,
        sampling.tools.is_empty()
    );
    if let Some((text, _)) = requests[2].tool_result("c1") {
        println!("client: summarize -> {text}");
    }
    println!("answer: {}", output.text);
    println!("the function ran {} time(s)", runs.load(Ordering::SeqCst));
    server.shutdown().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("== 2025-11-25: the server asks the client with a request");
    round_trip(false).await?;
    println!("== 2026-07-28: the server answers input_required, the client calls again");
    round_trip(true).await?;
    Ok(())
}
