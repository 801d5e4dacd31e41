//! The three HTTP clients against a real llama.cpp server: one tool-calling turn each (tool
//! call parsed, function run, result accepted, final text returned, cached prompt tokens read),
//! and typed answers (`run_typed`) through the server's `response_format` support.
//!
//! The server's base URL comes from `HPD_LLAMA_URL` (for example `http://127.0.0.1:8088`, as
//! printed by `.ci/llama-server.sh start`); without it every test here says it was skipped.
//! The model is tiny: temperature 0 and two worked examples of the tool in the history make it
//! call the tool.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatMessage, RunOutput, ToolCall,
    agent::SessionState, chat::FinishReason, chat::ModelOptions,
    providers::anthropic::AnthropicClient, providers::openai::OpenAiClient,
    providers::openai_responses::OpenAiResponsesClient,
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
        history.push(ChatMessage::tool(id, weather.to_owned(), false));
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
    let mut session = agent.resume(SessionState::from_history(few_shot()));
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

/// A tool call cut off at the output limit (its arguments are not JSON) gets an error result,
/// and the session goes on through every client: the next request, whose history holds the cut
/// call, is accepted. llama.cpp parses the arguments of the history's calls and answers HTTP
/// 500 to text that does not parse, so the clients send such arguments back as `{}`.
#[tokio::test]
async fn a_session_goes_on_after_a_call_cut_at_the_token_limit() {
    let Some(url) = server("a_session_goes_on_after_a_call_cut_at_the_token_limit") else {
        return;
    };
    let cut = r#"{"city": "Oslo", "units": "#;
    // The history a session has after the model's call was cut: written by the agent itself.
    let scripted = hpd_agent::ScriptedChatClient::with_replies([
        hpd_agent::ChatResponse::tool_calls(vec![ToolCall::new("cut_1", "get_weather", cut)])
            .with_finish_reason(FinishReason::Length),
        hpd_agent::ChatResponse::text("I could not look it up."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions(INSTRUCTIONS)
        .with_tool_harness::<LiveWeather>()
        .with_chat_client(scripted)
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let mut session = agent.resume(SessionState::from_history(few_shot()));
    session
        .run("What is the weather in Oslo?")
        .await
        .unwrap_or_else(|e| panic!("scripted run: {e}"));
    let history = session.history().to_vec();
    let (call, result) = history
        .iter()
        .enumerate()
        .find_map(|(i, m)| match m {
            ChatMessage::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == "cut_1") =>
            {
                Some((&tool_calls[0], &history[i + 1]))
            }
            _ => None,
        })
        .expect("the cut call is in the history");
    assert_eq!(call.arguments, cut, "the history keeps what the model sent");
    assert!(
        matches!(result, ChatMessage::Tool { is_error: true, .. }),
        "the cut call got an error result: {result:?}"
    );
    let clients: Vec<(&str, Box<dyn ChatClient>)> = vec![
        (
            "chat completions",
            Box::new(
                OpenAiClient::new("smollm2", "")
                    .and_then(|c| c.with_base_url(format!("{url}/v1")))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .with_timeout(Duration::from_secs(120)),
            ),
        ),
        (
            "responses",
            Box::new(
                OpenAiResponsesClient::new("smollm2", "")
                    .and_then(|c| c.with_base_url(format!("{url}/v1")))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .with_timeout(Duration::from_secs(120)),
            ),
        ),
        (
            "messages",
            Box::new(
                AnthropicClient::new("smollm2", "")
                    .and_then(|c| c.with_base_url(&url))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .with_timeout(Duration::from_secs(120)),
            ),
        ),
    ];
    for (api, client) in clients {
        let agent = AgentBuilder::new()
            .with_instructions(INSTRUCTIONS)
            .with_tool_harness::<LiveWeather>()
            .with_max_iterations(3)
            .with_model_options(
                ModelOptions::new()
                    .with_temperature(0.0)
                    .with_max_output_tokens(32),
            )
            .with_chat_client(client)
            .build()
            .unwrap_or_else(|e| panic!("build: {e}"));
        let mut live = agent.resume(SessionState::from_history(history.clone()));
        // The model may go on calling the tool; what counts is that the server accepted
        // every request, so a run that used up its iterations passes too.
        match live.run("What is the weather in Rome?").await {
            Ok(_) | Err(hpd_agent::RunError::MaxIterations(_)) => {}
            Err(e) => panic!("{api}: a request after the cut call failed: {e}"),
        }
        assert!(
            live.history().len() > history.len(),
            "{api}: the run added to the history"
        );
        assert_valid(live.history());
    }
}

/// The context size of one slot of the server, from its `/props`.
async fn context_size(url: &str) -> usize {
    let props: serde_json::Value = reqwest::get(format!("{url}/props"))
        .await
        .and_then(reqwest::Response::error_for_status)
        .unwrap_or_else(|e| panic!("GET {url}/props: {e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("the props of {url}: {e}"));
    props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .or_else(|| props["n_ctx"].as_u64())
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or_else(|| panic!("no n_ctx in the props of {url}: {props}"))
}

/// Every tool call of `history` has its result, and it starts with a user message.
fn assert_valid(history: &[ChatMessage]) {
    assert!(matches!(history.first(), Some(ChatMessage::User { .. })));
    let mut open: Vec<&str> = Vec::new();
    for message in history {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "unanswered calls {open:?}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => open.retain(|id| id != call_id),
            ChatMessage::User { .. } => assert!(open.is_empty(), "unanswered calls {open:?}"),
            other => panic!("a message kind this check does not know: {other:?}"),
        }
    }
}

/// A session a third longer than the server's context runs turn after turn within a context
/// budget; the same history sent whole is refused by the server. Meant for a server of its own
/// with one slot (`.ci/run` starts one with 2048 tokens and passes it as `HPD_LLAMA_SMALL_URL`;
/// without that variable the test uses `HPD_LLAMA_URL`): a server whose slots share their
/// context with other clients' requests can run out of it under any budget.
#[tokio::test]
async fn a_long_session_stays_within_a_small_context() {
    // A server of its own when `.ci/run` started one (HPD_LLAMA_SMALL_URL: one slot of 2048
    // tokens), so that the other live tests keep a context that fits their tool lists.
    let small = std::env::var("HPD_LLAMA_SMALL_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .map(|u| u.trim().trim_end_matches('/').to_owned());
    let Some(url) = small.or_else(|| server("a_long_session_stays_within_a_small_context")) else {
        return;
    };
    let n_ctx = context_size(&url).await;
    let client = || {
        OpenAiClient::new("smollm2", "")
            .and_then(|c| c.with_base_url(format!("{url}/v1")))
            .map(|c| c.with_timeout(Duration::from_secs(120)))
            .unwrap_or_else(|e| panic!("client: {e}"))
    };
    let options = ModelOptions::new()
        .with_temperature(0.0)
        .with_max_output_tokens(32);
    // Room for the answer and for the estimate being off by a little.
    let budget = hpd_agent::config::ContextBudget::tokens(n_ctx - 32 - 128);
    let agent = AgentBuilder::new()
        .with_instructions("You are a helpful assistant. Answer in one short sentence.")
        .with_model_options(options.clone())
        .with_context_budget(budget)
        .with_chat_client(client())
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let mut session = agent.session();
    let filler = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(6);
    // About 130 tokens a turn: the history ends a third longer than the context.
    let turns = n_ctx * 4 / 3 / 130 + 2;
    let mut largest_prompt = 0;
    for turn in 0..turns {
        let message = format!("Note {turn}: {filler} What number was this note?");
        let output = session
            .run(message)
            .await
            .unwrap_or_else(|e| panic!("turn {turn} of {turns} (n_ctx {n_ctx}): {e}"));
        largest_prompt = largest_prompt.max(output.usage.input_tokens);
        assert_valid(&session.history()[session.state().trimmed..]);
    }
    let state = session.state().clone();
    println!(
        "{turns} turns, {} messages, {} trimmed, largest prompt {largest_prompt} of {n_ctx} tokens",
        state.history.len(),
        state.trimmed
    );
    assert!(state.trimmed > 0, "the history outgrew the context");
    assert!(largest_prompt <= n_ctx as u64);

    // Without the budget the server refuses the same history.
    let unbounded = AgentBuilder::new()
        .with_model_options(options)
        .with_chat_client(client())
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let error = unbounded
        .resume(SessionState::from_history(state.history))
        .run("And the last one?")
        .await
        .expect_err("the whole history does not fit the server's context");
    println!("without a budget: {error}");
    assert!(
        matches!(
            error,
            hpd_agent::RunError::Chat(hpd_agent::chat::ChatError::Status { .. })
        ),
        "{error:?}"
    );
}

/// What the typed live turns ask for: strings of bounded length, a boolean, an enum, a list.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Capital {
    /// The capital city.
    #[schemars(length(max = 24))]
    city: String,
    /// The country it is the capital of.
    #[schemars(length(max = 24))]
    country: String,
    /// Whether the city lies on the sea.
    coastal: bool,
    continent: Continent,
    /// Up to three landmarks.
    #[schemars(length(max = 3))]
    landmarks: Vec<Landmark>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
enum Continent {
    Africa,
    America,
    Asia,
    Europe,
    Oceania,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Landmark {
    #[schemars(length(max = 24))]
    name: String,
}

fn typed_agent(url: &str) -> hpd_agent::Agent {
    let client = OpenAiClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_timeout(Duration::from_secs(120));
    AgentBuilder::new()
        .with_instructions(INSTRUCTIONS)
        .with_tool_harness::<LiveWeather>()
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(256),
        )
        .with_output_retries(0)
        .with_chat_client(client)
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"))
}

/// `run_typed` against llama.cpp's `response_format` support: the server turns the schema
/// into a grammar, so even this tiny model's answer parses and matches, with no retry.
#[tokio::test]
async fn chat_completions_typed_answer_follows_the_schema() {
    let Some(url) = server("chat_completions_typed_answer_follows_the_schema") else {
        return;
    };
    let agent = typed_agent(&url);
    let output = agent
        .session()
        .run_typed_with::<Capital>(
            "Describe the capital of France as JSON.",
            AgentRunConfig::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("typed run: {e}"));
    let capital = &output.value;
    assert!(
        !capital.city.is_empty() && capital.city.chars().count() <= 24,
        "{capital:?}"
    );
    assert!(capital.country.chars().count() <= 24, "{capital:?}");
    assert!(capital.landmarks.len() <= 3, "{capital:?}");
    assert!(
        capital
            .landmarks
            .iter()
            .all(|l| l.name.chars().count() <= 24),
        "{capital:?}"
    );
    println!(
        "coastal: {}, continent: {:?}",
        capital.coastal, capital.continent
    );
    assert_eq!(
        output.output.iterations, 1,
        "no retry was needed: {output:?}"
    );
    println!(
        "typed answer: {capital:?} from {:?}; usage {:?}",
        output.output.text, output.output.usage
    );
}

/// A tool turn first, then the typed answer in the same session: llama.cpp applies a
/// `response_format` grammar to every reply of its request, so tools run in a plain turn and
/// the structured summary comes after (see `hpd_agent::output`).
#[tokio::test]
async fn chat_completions_typed_answer_after_a_tool_turn() {
    let Some(url) = server("chat_completions_typed_answer_after_a_tool_turn") else {
        return;
    };
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct Weather {
        #[schemars(length(max = 24))]
        city: String,
        snowing: bool,
        celsius: i64,
    }
    let agent = typed_agent(&url);
    let mut session = agent.resume(SessionState::from_history(few_shot()));
    let plain = session
        .run("What is the weather in Oslo?")
        .await
        .unwrap_or_else(|e| panic!("run: {e}"));
    assert!(plain.iterations >= 2, "the tool ran: {plain:?}");
    let weather: Weather = session
        .run_typed("Give that weather report for Oslo as JSON.")
        .await
        .unwrap_or_else(|e| panic!("typed run: {e}"));
    assert!(weather.city.chars().count() <= 24, "{weather:?}");
    println!(
        "typed weather: {} snowing {} at {} C",
        weather.city, weather.snowing, weather.celsius
    );
}
