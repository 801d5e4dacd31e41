//! Typed final answers: `run_typed::<PackingList>` gets a checked Rust value instead of text.
//!
//! The agent has one tool (`get_weather`). The run sends the JSON Schema of `PackingList` with
//! every request, in the provider's structured output field (`response_format` on Chat
//! Completions and llama.cpp, `text.format` on Responses, `output_config.format` on Anthropic),
//! lets the model call the tool first, checks the answer against the schema, and sends a
//! mismatching answer back once with the JSON path of what is wrong.
//!
//! The provider comes from the environment, as in the demo:
//!
//! - `HPD_PROVIDER=openai` (Chat Completions or any compatible server: llama.cpp, Ollama,
//!   vLLM), `HPD_PROVIDER=openai_responses` or `HPD_PROVIDER=anthropic`, each with its own
//!   variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`, default `gpt-4o-mini`;
//!   `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`, default
//!   `claude-sonnet-4-5`);
//! - without `HPD_PROVIDER`: Anthropic when `ANTHROPIC_API_KEY` is set, else Chat Completions
//!   when `OPENAI_API_KEY` is set;
//! - otherwise a scripted model plays the turn offline: it calls the tool, answers once with a
//!   quantity the schema forbids, and corrects it when asked.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example typed_answer
//! ```
//!
//! On llama.cpp's server the schema becomes a grammar for every reply of the request, so the
//! model cannot call the tool while it is set: there, run the tool turn with `Session::run`
//! and ask for the typed answer after it (see the `hpd_agent::output` docs).

use std::sync::Arc;

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatResponse, ScriptedChatClient,
    ToolCall, chat::ModelOptions, output::OutputSchema, providers::anthropic::AnthropicClient,
    providers::openai::OpenAiClient, providers::openai_responses::OpenAiResponsesClient,
};
use serde::Deserialize;

/// A packing list for a day trip.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PackingList {
    /// The city of the trip.
    city: String,
    /// The weather the list is for, as the tool reported it.
    weather: String,
    /// What to bring, most important first.
    #[schemars(length(min = 1, max = 8))]
    items: Vec<Item>,
    /// Whether an umbrella is needed.
    umbrella: bool,
}

/// One thing to pack.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Item {
    /// What it is.
    name: String,
    /// How many to bring.
    #[schemars(range(min = 1, max = 20))]
    quantity: u32,
}

/// The weather tool.
#[derive(Default)]
pub struct Weather;

#[tool_harness]
impl Weather {
    /// Gets tomorrow's weather for a city.
    #[ai_function]
    fn get_weather(&self, #[ai_description("The city, e.g. Bergen")] city: String) -> String {
        format!("Rain showers, 12 C in {city}")
    }
}

const QUESTION: &str = "We are 3 people going on a day trip to Bergen tomorrow. Check the \
                        weather and make us a packing list.";

/// The offline model: a tool call, an answer with a quantity of 0, the corrected answer.
fn scripted_model() -> ScriptedChatClient {
    ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city": "Bergen"}"#,
        )]),
        ChatResponse::text(
            r#"{"city": "Bergen", "weather": "Rain showers, 12 C", "umbrella": true,
                "items": [{"name": "rain jacket", "quantity": 3}, {"name": "sunglasses", "quantity": 0}]}"#,
        ),
        ChatResponse::text(
            r#"{"city": "Bergen", "weather": "Rain showers, 12 C", "umbrella": true,
                "items": [{"name": "rain jacket", "quantity": 3}, {"name": "thermos", "quantity": 1},
                          {"name": "umbrella", "quantity": 3}]}"#,
        ),
    ])
}

/// A variable's value, `None` when unset or empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The provider the environment asks for (see the file's docs), and a line saying which.
fn chat_client() -> Result<(Arc<dyn ChatClient>, String), Box<dyn std::error::Error>> {
    let provider = match var("HPD_PROVIDER") {
        Some(provider) => provider.to_ascii_lowercase(),
        None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
        None if var("OPENAI_API_KEY").is_some() => "openai".to_owned(),
        None => {
            return Ok((
                Arc::new(scripted_model()),
                "a scripted model plays the turn: no API key needed".to_owned(),
            ));
        }
    };
    let openai_model = || var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
    Ok(match provider.as_str() {
        "openai" => {
            let client = OpenAiClient::from_env(openai_model())?;
            let line = format!(
                "openai (Chat Completions, response_format) at {}",
                client.base_url()
            );
            (Arc::new(client), line)
        }
        "openai_responses" => {
            let client = OpenAiResponsesClient::from_env(openai_model())?;
            let line = format!(
                "openai_responses (Responses, text.format) at {}",
                client.base_url()
            );
            (Arc::new(client), line)
        }
        "anthropic" => {
            let model = var("ANTHROPIC_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
            let client = AnthropicClient::from_env(model)?;
            let line = format!(
                "anthropic (Messages, output_config.format) at {}",
                client.base_url()
            );
            (Arc::new(client), line)
        }
        other => {
            return Err(format!(
                "HPD_PROVIDER is '{other}'; expected openai, openai_responses or anthropic"
            )
            .into());
        }
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client, line) = chat_client()?;
    println!("provider: {line}");
    let schema = OutputSchema::for_type::<PackingList>()?;
    let sent = schema.openai_schema();
    println!(
        "schema: {} (strict: {}), required {}",
        schema.name(),
        schema.openai_strict(),
        sent["required"]
    );

    let agent = AgentBuilder::new()
        .with_instructions("Use the tools, then answer with the packing list.")
        .with_tool_harness::<Weather>()
        .with_model_options(ModelOptions::new().with_temperature(0.0))
        .with_chat_client(client)
        .build()?;

    let run = AgentRunConfig::new().on_event(|event| {
        let line = match event {
            AgentEvent::IterationStarted {
                iteration,
                visible_tools,
            } => format!("request {iteration}: tools {visible_tools:?}"),
            AgentEvent::ToolCallFinished { name, result, .. } => {
                format!("  tool {name} -> {result}")
            }
            AgentEvent::OutputRejected {
                path,
                message,
                retrying,
                ..
            } => format!(
                "  answer rejected at '{path}': {message}{}",
                if *retrying { " (asking again)" } else { "" }
            ),
            _ => return,
        };
        println!("{line}");
    });
    let mut session = agent.session();
    let typed = session.run_typed_with::<PackingList>(QUESTION, run).await?;
    let list = &typed.value;
    println!("typed answer after {} requests:", typed.output.iterations);
    println!("  city: {}", list.city);
    println!("  weather: {}", list.weather);
    println!("  umbrella: {}", list.umbrella);
    for item in &list.items {
        println!("  - {} x {}", item.quantity, item.name);
    }
    Ok(())
}
