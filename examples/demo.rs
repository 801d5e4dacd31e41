//! The main demo: an agent with a collapsed `MathTools` harness and a plain `WeatherTools`
//! harness. For every model request it prints the visible tools, then each tool call with its
//! result, then the final answer.
//!
//! Offline (no `OPENAI_API_KEY`) a scripted model plays the conversation. With
//! `OPENAI_API_KEY` set it talks to the OpenAI Chat Completions API, or to any compatible
//! server named by `OPENAI_BASE_URL` (Ollama, vLLM, llama.cpp), with the model `OPENAI_MODEL`
//! (default `gpt-4o-mini`).
//!
//! ```text
//! cargo run -p hpd-agent-examples --example demo
//! ```

mod demo_tools;

use demo_tools::{MathTools, WeatherTools};
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatResponse, OpenAiClient,
    ScriptedChatClient, ToolCall,
};

const QUESTION: &str = "What is 17 * 23, and what is the weather in Oslo?";

/// The conversation the scripted model plays offline: it opens the math container, calls
/// `multiply` and `get_weather` together, then answers.
fn scripted_model() -> ScriptedChatClient {
    ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("call_1", "MathTools", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("call_2", "multiply", r#"{"a": 17, "b": 23}"#),
            ToolCall::new("call_3", "get_weather", r#"{"city": "Oslo"}"#),
        ]),
        ChatResponse::text("17 × 23 = 391, and it is sunny in Oslo."),
    ])
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
        AgentEvent::ContainerExpanded { harness, recovery } => {
            let how = if *recovery { " (recovered)" } else { "" };
            println!("  expanded {harness}{how}");
        }
        _ => {}
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client: Box<dyn ChatClient> = if std::env::var_os("OPENAI_API_KEY").is_some() {
        let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
        println!("online: using model {model} through the OpenAI-compatible API");
        Box::new(OpenAiClient::from_env(model)?)
    } else {
        println!("offline: OPENAI_API_KEY is not set, so a scripted model plays the conversation");
        Box::new(scripted_model())
    };

    let agent = AgentBuilder::new()
        .with_instructions("You are a helpful assistant. Use the tools to answer.")
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(client)
        .build()?;

    println!("user: {QUESTION}");
    let output = agent
        .session()
        .run_with(QUESTION, AgentRunConfig::new().on_event(print_event))
        .await?;
    println!(
        "\nanswer: {}\n({} requests, {} input and {} output tokens)",
        output.text, output.iterations, output.usage.input_tokens, output.usage.output_tokens
    );
    Ok(())
}
