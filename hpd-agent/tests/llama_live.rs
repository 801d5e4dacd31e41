//! The three HTTP clients against a real llama.cpp server: one tool-calling turn each (tool
//! call parsed, function run, result accepted, final text returned, cached prompt tokens read).
//!
//! The server's base URL comes from `HPD_LLAMA_URL` (for example `http://127.0.0.1:8088`, as
//! printed by `.ci/llama-server.sh start`); without it every test here says it was skipped.
//! The model is tiny: temperature 0 and two worked examples of the tool in the history make it
//! call the tool.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, AnthropicClient, ChatClient, ChatMessage,
    FinishReason, ModelOptions, OpenAiClient, OpenAiResponsesClient, RunOutput, SessionState,
    ToolCall,
};

/// Says why a test is skipped, on the process's real stderr, and so in the output of a plain
/// `cargo test`: libtest captures what `print!` and `eprint!` write in a passing test, which
/// would hide the reason. `.ci/run` fails when a test of its run says it was skipped.
macro_rules! skip {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Weather lookups for the live turn.
#[derive(Default)]
pub struct LiveWeather;

#[tool_harness]
impl LiveWeather {
    /// Gets the current weather for a city.
    #[ai_function]
    fn get_weather(&self, #[ai_description("The city, e.g. Paris")] city: String) -> String {
        format!("Snowing, -3 C in {city}")
    }
}

const INSTRUCTIONS: &str = "You are a helpful assistant. Use the tools to answer.";

/// Two worked examples of the tool: question, call, result, answer.
fn few_shot() -> Vec<ChatMessage> {
    let mut history = Vec::new();
    for (n, city, weather) in [(1, "Paris", "Sunny, 20 C"), (2, "Rome", "Cloudy, 15 C")] {
        let id = format!("example_{n}");
        history.push(ChatMessage::user(format!("What is the weather in {city}?")));
        history.push(ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new(
                &id,
                "get_weather",
                format!(r#"{{"city": "{city}"}}"#),
            )],
            reasoning: vec![],
        });
        history.push(ChatMessage::Tool {
            call_id: id,
            content: weather.to_owned(),
            is_error: false,
        });
        history.push(ChatMessage::Assistant {
            content: Some(format!("It is {} in {city}.", weather.to_lowercase())),
            tool_calls: vec![],
            reasoning: vec![],
        });
    }
    history
}

/// The server's base URL, or `None` after saying why the test is skipped.
fn server(test: &str) -> Option<String> {
    match std::env::var("HPD_LLAMA_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_owned()),
        _ => {
            skip!(
                "{test}: skipped: HPD_LLAMA_URL is not set (start a server with \
                 `.ci/llama-server.sh start` and export the URL it prints)"
            );
            None
        }
    }
}

/// Runs the tool-calling turn through `client` and checks what the issue asks for.
async fn tool_turn(client: impl ChatClient + 'static) -> RunOutput {
    let agent = AgentBuilder::new()
        .with_instructions(INSTRUCTIONS)
        .with_tool_harness::<LiveWeather>()
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(64),
        )
        .with_chat_client(client)
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let mut session = agent.resume(SessionState {
        history: few_shot(),
        ..SessionState::default()
    });
    let output = session
        .run_with(
            "What is the weather in Oslo?",
            AgentRunConfig::new().on_event(move |e| seen.lock().unwrap().push(e.clone())),
        )
        .await
        .unwrap_or_else(|e| panic!("run: {e}"));
    let events = events.lock().unwrap().clone();
    let results: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                ..
            } if name == "get_weather" => Some((result.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert!(
        results
            .iter()
            .any(|(result, error)| !error && result.starts_with("Snowing, -3 C in")),
        "get_weather was called and ran: {results:?}\nevents: {events:?}"
    );
    assert!(output.iterations >= 2, "the result went back: {output:?}");
    assert!(!output.text.trim().is_empty(), "final text: {output:?}");
    assert_eq!(output.finish_reason, FinishReason::Stop, "{output:?}");
    assert!(
        output.usage.cached_input_tokens > 0,
        "the second request re-read the prefix from the cache: {:?}",
        output.usage
    );
    assert!(output.usage.input_tokens >= output.usage.cached_input_tokens);
    println!(
        "final text: {:?}; usage {:?}; {} requests",
        output.text, output.usage, output.iterations
    );
    output
}

#[tokio::test]
async fn openai_chat_completions_tool_turn() {
    let Some(url) = server("openai_chat_completions_tool_turn") else {
        return;
    };
    let client = OpenAiClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_timeout(Duration::from_secs(120));
    tool_turn(client).await;
}

#[tokio::test]
async fn openai_responses_tool_turn() {
    let Some(url) = server("openai_responses_tool_turn") else {
        return;
    };
    let client = OpenAiResponsesClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_timeout(Duration::from_secs(120));
    tool_turn(client).await;
}

#[tokio::test]
async fn anthropic_messages_tool_turn() {
    let Some(url) = server("anthropic_messages_tool_turn") else {
        return;
    };
    let client = AnthropicClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(&url))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_timeout(Duration::from_secs(120));
    tool_turn(client).await;
}

#[tokio::test]
async fn non_streamed_turns_work_too() {
    let Some(url) = server("non_streamed_turns_work_too") else {
        return;
    };
    let openai = OpenAiClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_streaming(false);
    tool_turn(openai).await;
    let responses = OpenAiResponsesClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_streaming(false);
    tool_turn(responses).await;
    let anthropic = AnthropicClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(&url))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_streaming(false);
    tool_turn(anthropic).await;
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_says_length() {
    let Some(url) = server("a_reply_cut_at_the_token_limit_says_length") else {
        return;
    };
    let clients: Vec<Box<dyn ChatClient>> = vec![
        Box::new(
            OpenAiClient::new("smollm2", "")
                .and_then(|c| c.with_base_url(format!("{url}/v1")))
                .unwrap_or_else(|e| panic!("{e}")),
        ),
        Box::new(
            AnthropicClient::new("smollm2", "")
                .and_then(|c| c.with_base_url(&url))
                .unwrap_or_else(|e| panic!("{e}")),
        ),
    ];
    for client in clients {
        let agent = AgentBuilder::new()
            .with_model_options(
                ModelOptions::new()
                    .with_temperature(0.0)
                    .with_max_output_tokens(3),
            )
            .with_chat_client(client)
            .build()
            .unwrap_or_else(|e| panic!("build: {e}"));
        let output = agent
            .run("Tell me a long story about a dragon.")
            .await
            .unwrap_or_else(|e| panic!("run: {e}"));
        assert_eq!(output.finish_reason, FinishReason::Length, "{output:?}");
        assert!(output.usage.output_tokens <= 3, "{output:?}");
    }
}
