//! The main demo: an agent with a collapsed `MathTools` harness and a plain `WeatherTools`
//! harness. For every model request it prints the visible tools, then each tool call with its
//! result, then the final answer.
//!
//! The provider comes from the environment, and the demo prints which one it uses:
//!
//! - `HPD_PROVIDER=openai` (OpenAI Chat Completions or any compatible server),
//!   `HPD_PROVIDER=openai_responses` (OpenAI Responses) or `HPD_PROVIDER=anthropic` (Anthropic
//!   Messages) picks one; each reads its own variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//!   `OPENAI_MODEL`, default `gpt-4o-mini`; `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
//!   `ANTHROPIC_MODEL`, default `claude-sonnet-4-5`). A local server needs no key.
//! - Without `HPD_PROVIDER`: Anthropic when `ANTHROPIC_API_KEY` is set, else OpenAI Chat
//!   Completions when `OPENAI_API_KEY` is set.
//! - Otherwise a scripted model plays the conversation offline.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example demo
//! HPD_PROVIDER=anthropic ANTHROPIC_BASE_URL=http://127.0.0.1:8080 cargo run -p hpd-agent-examples --example demo
//! ```

mod demo_tools;

use demo_tools::{MathTools, WeatherTools};
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, AnthropicClient, ChatClient, ChatResponse,
    ModelOptions, OpenAiClient, OpenAiResponsesClient, ScriptedChatClient, ToolCall,
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

/// A variable's value, `None` when unset or empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The provider the environment asks for (see the file's docs), and a line saying which.
fn chat_client() -> Result<(Box<dyn ChatClient>, String), Box<dyn std::error::Error>> {
    let provider = match var("HPD_PROVIDER") {
        Some(provider) => provider.to_ascii_lowercase(),
        None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
        None if var("OPENAI_API_KEY").is_some() => "openai".to_owned(),
        None => {
            return Ok((
                Box::new(scripted_model()),
                "offline: no HPD_PROVIDER, ANTHROPIC_API_KEY or OPENAI_API_KEY, so a scripted \
                 model plays the conversation"
                    .to_owned(),
            ));
        }
    };
    let openai_model = || var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
    Ok(match provider.as_str() {
        "openai" => {
            let client = OpenAiClient::from_env(openai_model())?;
            let line = format!(
                "provider openai (Chat Completions) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        "openai_responses" => {
            let client = OpenAiResponsesClient::from_env(openai_model())?;
            let line = format!(
                "provider openai_responses (Responses API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        "anthropic" => {
            let model = var("ANTHROPIC_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
            let client = AnthropicClient::from_env(model)?;
            let line = format!(
                "provider anthropic (Messages API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        other => {
            return Err(format!(
                "HPD_PROVIDER is '{other}'; expected openai, openai_responses or anthropic"
            )
            .into());
        }
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client, which) = chat_client()?;
    println!("{which}");

    let agent = AgentBuilder::new()
        .with_instructions("You are a helpful assistant. Use the tools to answer.")
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<WeatherTools>()
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(1024),
        )
        .with_chat_client(client)
        .build()?;

    println!("user: {QUESTION}");
    let output = agent
        .session()
        .run_with(QUESTION, AgentRunConfig::new().on_event(print_event))
        .await?;
    println!(
        "\nanswer: {}\n({} requests, {} input tokens ({} from the prompt cache), {} output tokens, finished: {})",
        output.text,
        output.iterations,
        output.usage.input_tokens,
        output.usage.cached_input_tokens,
        output.usage.output_tokens,
        output.finish_reason
    );
    Ok(())
}
