//! Model options through the agent: set on the builder, per run and in config; tool choice
//! resolved against collapsing; finish reasons and reasoning through a run.

use std::sync::{Arc, Mutex};

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, AgentRunConfig, ChatMessage, ChatResponse, RunError,
    ScriptedChatClient, ToolCall, chat::ChatError, chat::FinishReason, chat::ModelOptions,
    chat::Reasoning, chat::ToolChoice,
};
use serde_json::json;

/// Arithmetic behind a container.
#[derive(Default)]
pub struct OptMath;

#[collapse("Math operations")]
impl OptMath {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// Always visible.
#[derive(Default)]
pub struct OptClock;

#[tool_harness]
impl OptClock {
    /// The time.
    #[ai_function]
    fn now(&self) -> String {
        "12:00".to_owned()
    }
}

/// An agent in the `hide` layout, whose forced choices name members directly (the call tool's
/// forced choices are in `hpd-agent-tests/tests/layouts.rs`).
fn math_agent(model: &ScriptedChatClient, options: ModelOptions) -> hpd_agent::Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<OptClock>()
        .with_tool_harness::<OptMath>()
        .with_model_options(options)
        .with_chat_client(model.clone())
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"))
}

fn choices(model: &ScriptedChatClient) -> Vec<Option<ToolChoice>> {
    model
        .requests()
        .iter()
        .map(|r| r.options.tool_choice.clone())
        .collect()
}

#[tokio::test]
async fn builder_options_reach_every_request_and_a_run_overrides_them() {
    let model =
        ScriptedChatClient::with_replies([ChatResponse::text("one"), ChatResponse::text("two")]);
    let agent = math_agent(
        &model,
        ModelOptions::new()
            .with_temperature(0.7)
            .with_seed(1)
            .with_extra("user", json!("a")),
    );
    agent.run("first").await.unwrap();
    let mut session = agent.session();
    session
        .run_with(
            "second",
            AgentRunConfig::new()
                .with_model_options(ModelOptions::new().with_temperature(0.0))
                .with_model_options(ModelOptions::new().with_extra("trace", json!(true))),
        )
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].options.temperature, Some(0.7));
    let second = &requests[1].options;
    assert_eq!((second.temperature, second.seed), (Some(0.0), Some(1)));
    assert_eq!(second.extra["user"], "a");
    assert_eq!(second.extra["trace"], true);
}

#[tokio::test]
async fn config_options_reach_the_requests() {
    let config = AgentConfig::from_json(
        r#"{"Model": {"Options": {"Temperature": 0, "MaxOutputTokens": 64, "Stop": "END",
                                  "ToolChoice": "none", "Extra": {"top_k": 5}}}}"#,
    )
    .unwrap();
    let model = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
    let agent = AgentBuilder::from_config(config)
        .with_model_options(ModelOptions::new().with_seed(9))
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    let options = &model.requests()[0].options;
    assert_eq!(
        *options,
        ModelOptions::new()
            .with_temperature(0.0)
            .with_max_output_tokens(64)
            .with_stop(["END"])
            .with_seed(9)
            .with_tool_choice(ToolChoice::None)
            .with_extra("top_k", json!(5))
    );
}

#[tokio::test]
async fn forcing_choices_hold_until_the_first_tool_call() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "now", "{}")]),
        ChatResponse::text("It is noon."),
    ]);
    let agent = math_agent(
        &model,
        ModelOptions::new().with_tool_choice(ToolChoice::Required),
    );
    agent.run("time?").await.unwrap();
    assert_eq!(
        choices(&model),
        [Some(ToolChoice::Required), Some(ToolChoice::Auto)]
    );

    // `None` holds for the whole turn.
    let model = ScriptedChatClient::with_replies([ChatResponse::text("no tools")]);
    let agent = math_agent(
        &model,
        ModelOptions::new().with_tool_choice(ToolChoice::None),
    );
    agent.run("time?").await.unwrap();
    assert_eq!(choices(&model), [Some(ToolChoice::None)]);
}

#[tokio::test]
async fn a_collapsed_harness_name_forces_its_container() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "OptMath", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "add", r#"{"a":1,"b":2}"#)]),
        ChatResponse::text("3"),
    ]);
    let agent = math_agent(
        &model,
        ModelOptions::new().with_tool_choice(ToolChoice::tool("optmath")),
    );
    let output = agent.run("1+2").await.unwrap();
    assert_eq!(output.text, "3");
    assert_eq!(
        choices(&model),
        [
            Some(ToolChoice::tool("OptMath")),
            Some(ToolChoice::Auto),
            Some(ToolChoice::Auto)
        ]
    );
    assert_eq!(model.requests()[0].tool_names(), ["now", "OptMath"]);
}

#[tokio::test]
async fn a_hidden_member_is_expanded_like_recovery_and_forced() {
    for name in ["add", "OptMath.add", "optmath__add"] {
        let model = ScriptedChatClient::with_replies([
            ChatResponse::tool_calls(vec![ToolCall::new("c1", "add", r#"{"a":1,"b":2}"#)]),
            ChatResponse::text("3"),
        ]);
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let agent = math_agent(
            &model,
            ModelOptions::new().with_tool_choice(ToolChoice::tool(name)),
        );
        let output = agent
            .session()
            .run_with(
                "1+2",
                AgentRunConfig::new().on_event(move |e| seen.lock().unwrap().push(e.clone())),
            )
            .await
            .unwrap();
        assert_eq!(output.text, "3");
        let requests = model.requests();
        assert_eq!(requests[0].tool_names(), ["now", "add"], "{name}");
        assert_eq!(
            requests[0].options.tool_choice,
            Some(ToolChoice::tool("add"))
        );
        assert_eq!(requests[1].tool_result("c1"), Some(("3", false)));
        let events = events.lock().unwrap();
        assert!(
            events.iter().any(|e| matches!(e,
                AgentEvent::ContainerExpanded { harness, recovery: true } if harness == "OptMath")),
            "{events:?}"
        );
    }
}

#[tokio::test]
async fn a_tool_choice_the_agent_does_not_have_fails_before_any_request() {
    let model = ScriptedChatClient::with_replies([ChatResponse::text("never")]);
    let agent = math_agent(
        &model,
        ModelOptions::new().with_tool_choice(ToolChoice::tool("nope")),
    );
    match agent.run("hi").await {
        Err(RunError::Chat(ChatError::Config(message))) => {
            assert!(message.contains("'nope'"), "{message}");
        }
        other => panic!("expected a config error, got {other:?}"),
    }
    assert!(model.requests().is_empty());

    // With recovery off, a hidden member is not reachable by name either.
    let model = ScriptedChatClient::with_replies([ChatResponse::text("never")]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<OptMath>()
        .configure_harness_collapsing(|c| c.recovery = false)
        .with_model_options(ModelOptions::new().with_tool_choice(ToolChoice::tool("add")))
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert!(matches!(
        agent.run("hi").await,
        Err(RunError::Chat(ChatError::Config(_)))
    ));
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_is_reported() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "now", "{")])
            .with_finish_reason(FinishReason::Length),
        ChatResponse::text("Once upon a").with_finish_reason(FinishReason::Length),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = math_agent(&model, ModelOptions::new().with_max_output_tokens(3));
    let output = agent
        .session()
        .run_with(
            "story",
            AgentRunConfig::new().on_event(move |e| seen.lock().unwrap().push(e.clone())),
        )
        .await
        .unwrap();
    assert_eq!(output.text, "Once upon a");
    assert_eq!(output.finish_reason, FinishReason::Length);
    let incomplete: Vec<AgentEvent> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, AgentEvent::ResponseIncomplete { .. }))
        .cloned()
        .collect();
    assert_eq!(
        incomplete,
        [
            AgentEvent::ResponseIncomplete {
                iteration: 1,
                finish_reason: FinishReason::Length,
                has_tool_calls: true
            },
            AgentEvent::ResponseIncomplete {
                iteration: 2,
                finish_reason: FinishReason::Length,
                has_tool_calls: false
            },
        ]
    );

    let model = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    let output = math_agent(&model, ModelOptions::new())
        .run("hi")
        .await
        .unwrap();
    assert_eq!(output.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn reasoning_is_kept_in_the_history_and_sent_back() {
    let thought = Reasoning::text("Call now.").with_signature("sig");
    let mut first = ChatResponse::tool_calls(vec![ToolCall::new("c1", "now", "{}")]);
    first.reasoning = vec![thought.clone()];
    let model = ScriptedChatClient::with_replies([first, ChatResponse::text("noon")]);
    let agent = math_agent(&model, ModelOptions::new());
    let mut session = agent.session();
    session.run("time?").await.unwrap();
    let expected = ChatMessage::Assistant {
        content: None,
        tool_calls: vec![ToolCall::new("c1", "now", "{}")],
        reasoning: vec![thought],
    };
    assert_eq!(session.history()[1], expected);
    assert_eq!(model.requests()[1].messages[1], expected);
    // And it survives a stored session.
    let stored = serde_json::to_string(session.state()).unwrap();
    assert!(stored.contains("\"signature\":\"sig\""), "{stored}");
}
