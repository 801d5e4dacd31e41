//! The `fixed` collapsing layout against a real llama.cpp server: a few-shot history shows the
//! small model the pattern (call the container, then call the member through `call_function`),
//! the model follows it for a new question, and every request keeps the previous one in the
//! server's prompt cache, because the tool list and the system text never change and the
//! history only grows at its end.
//!
//! What is loaded stays loaded: once the conversation holds the member's definition, a later
//! turn calls it through `call_function` without opening the container again, and the call
//! runs, with no recovery answer: the turn takes one request fewer than a turn that opens the
//! container (two against three).
//!
//! The server's base URL comes from `HPD_LLAMA_URL` (as printed by `.ci/llama-server.sh
//! start`); without it the test says it was skipped.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatMessage, ChatResponse, ToolCall,
    agent::SessionState, async_trait, chat::ChatError, chat::ChatRequest, chat::ModelOptions,
    chat::TextSink, chat::Usage, config::CALL_TOOL, config::CollapsingLayout,
    providers::openai::OpenAiClient,
};

/// Weather lookups, collapsed behind one container.
#[derive(Default)]
pub struct LiveForecasts;

#[collapse("Weather lookups for cities")]
impl LiveForecasts {
    /// Gets the current weather for a city.
    #[ai_function]
    fn get_weather(&self, #[ai_description("The city, e.g. Paris")] city: String) -> String {
        format!("Snowing, -3 C in {city}")
    }
}

const INSTRUCTIONS: &str = "You are a helpful assistant. Use the tools to answer.";

/// How many tokens of the previous request a request may miss in the server's cache.
///
/// llama.cpp evaluates at least one token of every prompt: when a prompt is cached whole, it
/// takes the last token off the cache (its log says `need to evaluate at least 1 token for each
/// active slot (n_past = 731, task.n_tokens() = 731)`, `n_past was set to 730`), so a cached
/// count can be one short of the prompt it matches. And the previous prompt ends with the chat
/// template's generation prompt (`<|im_start|>assistant\n`), where the next prompt has the
/// assistant turn (`<|im_start|>assistant\n<tool_call>...`), which the tokenizer may split
/// differently at the `\n`. Four tokens covers both with room. A request whose tool list or
/// system text changed would miss hundreds: llama.cpp's template puts the tools in the system
/// message, before the whole conversation. (Measured on a quiet server: prompt / cached tokens
/// 731 / 730, 860 / 756, 925 / 903; the server also caches the tokens it generated, so a request
/// may keep more than the previous prompt.)
const SLACK: u64 = 4;

/// Forwards to the server and keeps the usage of every response.
struct Metered {
    inner: OpenAiClient,
    usage: Arc<Mutex<Vec<Usage>>>,
}

#[async_trait]
impl ChatClient for Metered {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let response = self.inner.complete(request, text).await?;
        self.usage.lock().expect("usage").push(response.usage);
        Ok(response)
    }
}

/// `fixed` as such: the model's container calls and their results stay in the history (no
/// notes, no opening ahead, both on by default), the pattern this test shows the model.
fn plain_fixed(c: &mut hpd_agent::config::CollapsingConfig) {
    c.container_notes = false;
    c.open_ahead = None;
}

/// The result text the container call gets in the fixed layout, read from the agent itself.
async fn container_text() -> String {
    let agent = AgentBuilder::new()
        .with_tool_harness::<LiveForecasts>()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(plain_fixed)
        .with_chat_client(hpd_agent::ScriptedChatClient::new())
        .build()
        .expect("agent builds");
    let session = agent.tool_session();
    let outcome = session
        .call_tool("c0", "LiveForecasts", "{}")
        .await
        .expect("container call");
    outcome.result.text
}

/// Worked examples of the pattern, one per city (question, member call through the call tool,
/// its result, answer; with a container call and its result first where `opens` is true),
/// written by the agent itself from scripted replies, so the history holds exactly what a
/// session of the fixed layout holds: a second container call is answered that the container
/// is already open, and a member call of a later turn runs because an earlier result showed
/// its schema.
async fn few_shot(examples: &[(&str, bool)]) -> Vec<ChatMessage> {
    let mut replies = Vec::new();
    for (n, (city, opens)) in examples.iter().enumerate() {
        if *opens {
            replies.push(ChatResponse::tool_calls(vec![ToolCall::new(
                format!("example_{n}_container"),
                "LiveForecasts",
                "{}",
            )]));
        }
        replies.push(ChatResponse::tool_calls(vec![ToolCall::new(
            format!("example_{n}_member"),
            CALL_TOOL,
            format!(r#"{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}"#),
        )]));
        replies.push(ChatResponse::text(format!(
            "It is snowing, -3 C in {city}."
        )));
    }
    let script = hpd_agent::ScriptedChatClient::with_replies(replies);
    let agent = AgentBuilder::new()
        .with_instructions(INSTRUCTIONS)
        .with_tool_harness::<LiveForecasts>()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(plain_fixed)
        .with_chat_client(script.clone())
        .build()
        .expect("agent builds");
    let mut session = agent.session();
    for (city, _) in examples {
        session
            .run(&format!("What is the weather in {city}?"))
            .await
            .unwrap_or_else(|e| panic!("scripted example for {city}: {e}"));
    }
    // The last request holds every example's call and result.
    let requests = script.requests();
    let last = requests.last().expect("the examples made requests");
    for (n, (city, _)) in examples.iter().enumerate() {
        let expected = format!("Snowing, -3 C in {city}");
        assert_eq!(
            last.tool_result(&format!("example_{n}_member")),
            Some((expected.as_str(), false)),
            "the example's member call for {city} ran"
        );
    }
    session.history().to_vec()
}

/// The base URL of the llama.cpp server from `HPD_LLAMA_URL`, or `None` after saying that
/// `test` was skipped.
fn server_url(test: &str) -> Option<String> {
    match std::env::var("HPD_LLAMA_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_owned()),
        _ => {
            hpd_agent_tests::skip!(
                "{test}: skipped: HPD_LLAMA_URL is not set (start a server with \
                 `.ci/llama-server.sh start` and export the URL it prints)"
            );
            None
        }
    }
}

/// What one live turn showed: its final text, the calls it made (the name events give, which
/// is the member for a call through the call tool; the result; whether it failed), whether a
/// container was expanded for recovery, the tools of each request, and each request's usage.
struct LiveTurn {
    text: String,
    iterations: usize,
    calls: Vec<(String, String, bool)>,
    recovered: bool,
    visible: Vec<Vec<String>>,
    usage: Vec<Usage>,
    history: Vec<ChatMessage>,
}

/// Asks the server about Oslo after `history`, in the fixed layout as such, at temperature 0.
async fn live_turn(url: &str, history: Vec<ChatMessage>) -> LiveTurn {
    let usage = Arc::new(Mutex::new(Vec::new()));
    let client = OpenAiClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .expect("client")
        .with_timeout(Duration::from_secs(900))
        .with_streaming(false);
    let agent = AgentBuilder::new()
        .with_instructions(INSTRUCTIONS)
        .with_tool_harness::<LiveForecasts>()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(plain_fixed)
        .with_max_iterations(5)
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(64),
        )
        .with_chat_client(Metered {
            inner: client,
            usage: Arc::clone(&usage),
        })
        .build()
        .expect("agent builds");
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let mut session = agent.resume(SessionState::from_history(history));
    let visible = Arc::new(Mutex::new(Vec::new()));
    let lists = Arc::clone(&visible);
    let output = session
        .run_with(
            "What is the weather in Oslo?",
            AgentRunConfig::new().on_event(move |e| {
                if let AgentEvent::IterationStarted { visible_tools, .. } = e {
                    lists.lock().expect("lists").push(visible_tools.clone());
                }
                seen.lock().expect("events").push(e.clone());
            }),
        )
        .await
        .unwrap_or_else(|e| panic!("run: {e}"));
    let events = events.lock().expect("events").clone();
    let calls = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                ..
            } => Some((name.clone(), result.clone(), *is_error)),
            _ => None,
        })
        .collect();
    let recovered = events
        .iter()
        .any(|e| matches!(e, AgentEvent::ContainerExpanded { recovery: true, .. }));
    let visible = visible.lock().expect("lists").clone();
    let usage = usage.lock().expect("usage").clone();
    LiveTurn {
        text: output.text,
        iterations: output.iterations,
        calls,
        recovered,
        visible,
        usage,
        history: session.history().to_vec(),
    }
}

/// The checks both tests share: the tool list never changed, one usage per request, and each
/// request kept the previous one cached; then the figures, printed.
fn assert_cache_kept(turn: &LiveTurn) {
    assert!(
        turn.visible.len() >= 2 && turn.visible.windows(2).all(|w| w[0] == w[1]),
        "every request had the same tools: {:?}",
        turn.visible
    );
    assert_eq!(
        turn.visible[0],
        ["LiveForecasts".to_owned(), CALL_TOOL.to_owned()]
    );
    let usage = &turn.usage;
    assert_eq!(usage.len(), turn.iterations, "one usage per request");
    for (i, pair) in usage.windows(2).enumerate() {
        let (previous, next) = (pair[0], pair[1]);
        assert!(
            next.cached_input_tokens + SLACK >= previous.input_tokens,
            "request {} had {} of its {} prompt tokens cached; the previous request had {} \
             prompt tokens (all usage: {usage:?})",
            i + 2,
            next.cached_input_tokens,
            next.input_tokens,
            previous.input_tokens
        );
    }
    println!(
        "{} requests; prompt/cached tokens: {:?}; final text {:?}",
        usage.len(),
        usage
            .iter()
            .map(|u| (u.input_tokens, u.cached_input_tokens))
            .collect::<Vec<_>>(),
        turn.text
    );
}

#[tokio::test]
async fn fixed_layout_follows_the_pattern_and_keeps_the_cache() {
    let Some(url) = server_url("fixed_layout_follows_the_pattern_and_keeps_the_cache") else {
        return;
    };
    let expansion = container_text().await;
    assert!(
        expansion.contains(CALL_TOOL) && expansion.contains("\"parameters\""),
        "the fixed layout's container result carries the call tool's usage and the schemas: {expansion}"
    );
    let turn = live_turn(&url, few_shot(&[("Paris", true), ("Rome", true)]).await).await;
    // The pattern: the container, then the member through the call tool (events name the
    // member a call-tool call stands for), which ran.
    let calls = &turn.calls;
    let container = calls
        .iter()
        .position(|(n, _, e)| n == "LiveForecasts" && !e);
    let member = calls
        .iter()
        .position(|(n, r, e)| n == "get_weather" && !e && r == "Snowing, -3 C in Oslo");
    assert!(
        matches!((container, member), (Some(c), Some(m)) if c < m),
        "the model called the container, then get_weather for Oslo: {calls:?}\nhistory: {:?}",
        turn.history
    );
    let member_call = turn.history.iter().find_map(|m| match m {
        ChatMessage::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|c| c.arguments.contains("get_weather"))
            .map(|c| c.name.clone()),
        _ => None,
    });
    assert_eq!(
        member_call.as_deref(),
        Some(CALL_TOOL),
        "the member was called through {CALL_TOOL} (history: {:?})",
        turn.history
    );
    assert!(turn.visible.len() >= 3, "requests: {:?}", turn.visible);
    assert_cache_kept(&turn);
}

/// What is loaded stays loaded, live: the history's latest example calls the member straight
/// through the call tool, since an earlier result showed its schema, and the model does the
/// same for Oslo. The call runs at once (no container call, no recovery answer), so the turn
/// takes two requests (the call, the answer) where opening the container again takes three.
#[tokio::test]
async fn fixed_layout_runs_a_loaded_member_without_a_round_trip() {
    let Some(url) = server_url("fixed_layout_runs_a_loaded_member_without_a_round_trip") else {
        return;
    };
    let turn = live_turn(
        &url,
        few_shot(&[("Paris", true), ("Rome", false), ("Madrid", false)]).await,
    )
    .await;
    assert_eq!(
        turn.calls,
        [(
            "get_weather".to_owned(),
            "Snowing, -3 C in Oslo".to_owned(),
            false
        )],
        "the model called get_weather for Oslo alone, and it ran (history: {:?})",
        turn.history
    );
    assert!(!turn.recovered, "no container was expanded for recovery");
    assert_eq!(
        turn.iterations, 2,
        "the member call and the answer: one request fewer than opening the container again \
         (history: {:?})",
        turn.history
    );
    assert_cache_kept(&turn);
}
