//! Behaviour tests of the agent runtime beyond the conformance scenarios: concurrency, session
//! state, cancellation, timeouts, failing middleware and providers, events, duplicate names.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, BuildError, ChatClient, ChatMessage, ChatResponse,
    Middleware, RunError, ScriptedChatClient, ToolCall, agent::SessionState, chat::ChatError,
    chat::ChatRequest, chat::TextSink, middleware::FunctionCall, middleware::MiddlewareError,
    middleware::TurnInfo, middleware::TurnOutcome,
};
use hpd_agent_tests::{DatabaseTools, FaultTools, MathTools, RecordingMiddleware, WeatherTools};

/// Every history must answer each tool call exactly once, right after the assistant message.
fn assert_history_valid(history: &[ChatMessage]) {
    let mut pending: Vec<&str> = Vec::new();
    for message in history {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(pending.is_empty(), "unanswered calls {pending:?}");
                pending = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                assert_eq!(
                    pending.first().copied(),
                    Some(call_id.as_str()),
                    "results out of order"
                );
                pending.remove(0);
            }
            ChatMessage::User { .. } => assert!(pending.is_empty(), "unanswered calls {pending:?}"),
            other => panic!("a message kind this check does not know: {other:?}"),
        }
    }
    assert!(pending.is_empty(), "unanswered calls {pending:?}");
}

/// A model that answers from the request alone: a new user message gets an `echo` call of the
/// message; a tool result gets a text listing every user message of the conversation.
struct EchoModel;

#[async_trait]
impl ChatClient for EchoModel {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        tokio::task::yield_now().await;
        match request.messages.last() {
            Some(ChatMessage::User { content }) => {
                Ok(ChatResponse::tool_calls(vec![ToolCall::new(
                    format!("call-{content}"),
                    "echo",
                    serde_json::json!({ "text": content }).to_string(),
                )]))
            }
            _ => {
                let users: Vec<&str> = request
                    .messages
                    .iter()
                    .filter_map(|m| match m {
                        ChatMessage::User { content } => Some(content.as_str()),
                        _ => None,
                    })
                    .collect();
                Ok(ChatResponse::text(users.join("|")))
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_sessions_keep_their_own_history() {
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<FaultTools>()
        .with_chat_client(EchoModel)
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..200)
        .map(|n| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let mut session = agent.session();
                let mut texts = Vec::new();
                for turn in 0..3 {
                    let out = session.run(format!("s{n}t{turn}")).await.unwrap();
                    texts.push(out.text);
                }
                (n, texts, session.into_state())
            })
        })
        .collect();
    for task in tasks {
        let (n, texts, state) = task.await.unwrap();
        assert_eq!(texts[2], format!("s{n}t0|s{n}t1|s{n}t2"));
        assert_eq!(state.history.len(), 3 * 4);
        assert_history_valid(&state.history);
        for message in &state.history {
            if let ChatMessage::Tool { content, .. } = message {
                assert!(
                    content.starts_with(&format!("s{n}t")),
                    "session {n} saw {content}"
                );
            }
        }
    }
}

#[tokio::test]
async fn session_state_round_trips_and_resumes_expansions() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "MathTools", "{}")]),
        ChatResponse::text("open"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_instructions("Base.")
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<DatabaseTools>()
        .configure_harness_collapsing(|c| c.keep_expansions_across_turns = true)
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session.run("open math").await.unwrap();
    let json = serde_json::to_string(session.state()).unwrap();
    let state: SessionState = serde_json::from_str(&json).unwrap();
    assert_eq!(&state, session.state());
    assert_eq!(state.expanded, ["MathTools"]);

    client.push(ChatResponse::tool_calls(vec![ToolCall::new(
        "c2",
        "multiply",
        r#"{"a":3,"b":4}"#,
    )]));
    client.push(ChatResponse::text("12"));
    let mut resumed = agent.resume(state);
    assert_eq!(resumed.run("3*4").await.unwrap().text, "12");
    let requests = client.requests();
    assert_eq!(
        requests[2].tool_names(),
        ["DatabaseTools", "add", "multiply", "divide"]
    );
    assert!(
        requests[2]
            .instructions
            .ends_with("### MathTools\nUse exact arithmetic and show units when relevant.")
    );
    assert_eq!(requests[3].tool_result("c2"), Some(("12", false)));
    assert_history_valid(resumed.history());
}

/// Slow and time-limited functions.
#[derive(Default)]
pub struct SlowTools {
    started: AtomicUsize,
}

#[tool_harness]
impl SlowTools {
    /// Sleeps for a long time unless cancelled.
    #[ai_function]
    async fn wait(&self, token: CancellationToken) -> String {
        self.started.fetch_add(1, Ordering::SeqCst);
        tokio::select! {
            () = token.cancelled() => "cancelled".to_owned(),
            () = tokio::time::sleep(Duration::from_secs(30)) => "slept".to_owned(),
        }
    }

    /// Takes longer than its timeout.
    #[ai_function(timeout_ms = 50)]
    async fn too_slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "never".to_owned()
    }

    /// Reports who called it.
    #[ai_function]
    fn whoami(&self, ctx: &FunctionContext) -> String {
        format!(
            "{}/{}/{}",
            ctx.harness_name(),
            ctx.function_name(),
            ctx.call_id()
        )
    }
}

#[tokio::test]
async fn timeouts_and_context() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "too_slow", ""),
            ToolCall::new("c2", "whoami", "{}"),
        ]),
        ChatResponse::text("ok"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<SlowTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let functions = hpd_agent::harness::HarnessInfo::of::<SlowTools>()
        .functions()
        .unwrap();
    let wait = functions.iter().find(|f| f.name() == "wait").unwrap();
    assert_eq!(
        wait.schema()["properties"],
        serde_json::json!({}),
        "the token is not a parameter"
    );
    agent.run("go").await.unwrap();
    let request = &client.requests()[1];
    assert_eq!(
        request.tool_result("c1"),
        Some(("Error: function 'too_slow' timed out after 50 ms", true))
    );
    assert_eq!(
        request.tool_result("c2"),
        Some(("SlowTools/whoami/c2", false))
    );
}

#[tokio::test]
async fn cancellation_answers_every_call_and_keeps_the_session() {
    let client = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        ToolCall::new("c1", "wait", "{}"),
        ToolCall::new("c2", "whoami", "{}"),
    ])]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<SlowTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let mut session = agent.session();
    let error = session
        .run_with("go", AgentRunConfig::new().with_cancellation(token))
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Cancelled), "{error}");
    assert_history_valid(session.history());
    let results: Vec<(&str, bool)> = session
        .history()
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0], ("Error: run cancelled", true));

    client.push(ChatResponse::text("still here"));
    assert_eq!(session.run("again").await.unwrap().text, "still here");
}

/// Fails in `before_function` for `echo`, and records `after_message_turn`.
struct Failing {
    turns_ended: Arc<AtomicUsize>,
}

#[async_trait]
impl Middleware for Failing {
    async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
        if call.function_name() == "echo" {
            return Err(MiddlewareError::new("echo is forbidden today"));
        }
        Ok(())
    }

    async fn after_message_turn(
        &self,
        _turn: &TurnInfo,
        outcome: TurnOutcome<'_>,
    ) -> Result<(), MiddlewareError> {
        assert!(matches!(
            outcome,
            TurnOutcome::Failed(RunError::Middleware { .. })
        ));
        self.turns_ended.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn failing_middleware_ends_the_run_but_answers_every_call() {
    let turns_ended = Arc::new(AtomicUsize::new(0));
    let client = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        ToolCall::new("c1", "ping", ""),
        ToolCall::new("c2", "echo", r#"{"text":"x"}"#),
    ])]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<FaultTools>()
        .with_middleware(Failing {
            turns_ended: Arc::clone(&turns_ended),
        })
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    let error = session.run("go").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "middleware failed in before_function: echo is forbidden today"
    );
    assert_eq!(turns_ended.load(Ordering::SeqCst), 1);
    assert_history_valid(session.history());
    assert!(session.history().iter().any(|m| matches!(m,
        ChatMessage::Tool { call_id, content, is_error: true, .. }
            if call_id == "c2" && content == "Error: run aborted by middleware")));
    assert!(session.history().iter().any(|m| matches!(m,
        ChatMessage::Tool { call_id, content, is_error: false, .. }
            if call_id == "c1" && content == "pong")));
}

/// A provider that always fails.
struct Down;

#[async_trait]
impl ChatClient for Down {
    async fn complete(
        &self,
        _request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        Err(ChatError::Status {
            status: 503,
            message: "overloaded".to_owned(),
        })
    }
}

#[tokio::test]
async fn provider_errors_keep_the_history() {
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(Down)
        .build()
        .unwrap();
    let mut session = agent.session();
    let error = session.run("hi").await.unwrap_err();
    assert_eq!(error.to_string(), "provider returned HTTP 503: overloaded");
    assert_eq!(session.history(), [ChatMessage::user("hi")]);
}

#[tokio::test]
async fn events_report_the_run() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "MathTools.add",
            r#"{"a":1,"b":2}"#,
        )]),
        ChatResponse::text("3"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .with_chat_client(client)
        .build()
        .unwrap();
    let mut session = agent.session();
    let (events, run) = session.run_streamed("1+2", AgentRunConfig::new());
    let (out, events) = tokio::join!(run, futures::StreamExt::collect::<Vec<_>>(events));
    assert_eq!(out.unwrap().text, "3");
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            AgentEvent::IterationStarted {
                iteration,
                visible_tools,
            } => {
                format!("iteration {iteration}: {}", visible_tools.join(","))
            }
            AgentEvent::TextDelta { text } => format!("text {text}"),
            AgentEvent::ToolCallStarted { name, .. } => format!("call {name}"),
            AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                ..
            } => {
                format!("result {name}={result} error={is_error}")
            }
            AgentEvent::ContainerExpanded { harness, recovery } => {
                format!("expanded {harness} recovery={recovery}")
            }
            AgentEvent::TurnFinished { failed, .. } => format!("finished failed={failed}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "iteration 1: MathTools",
            "call MathTools.add",
            "expanded MathTools recovery=true",
            "result MathTools.add=3 error=false",
            "iteration 2: add,multiply,divide",
            "text 3",
            "finished failed=false",
        ]
    );
}

/// Names a function like the `MathTools` container and like `WeatherTools::get_weather`.
#[derive(Default)]
pub struct Clashing;

#[tool_harness]
impl Clashing {
    /// Clashes with a container.
    #[ai_function(name = "MathTools")]
    fn math(&self) {}

    /// Clashes with a function.
    #[ai_function]
    fn get_weather(&self) {}
}

#[test]
fn duplicate_tool_names_fail_the_build() {
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .with_tool_harness_options::<Clashing>(|o| o.with_functions(["MathTools"]))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name 'MathTools' is registered twice: by 'MathTools' and by 'Clashing'"
    );
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness_options::<Clashing>(|o| o.with_functions(["get_weather"]))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::DuplicateTool { .. }), "{error}");
    // Without collapsing there is no container, so no clash.
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .with_tool_harness_options::<Clashing>(|o| o.with_functions(["MathTools"]))
        .without_harness_collapsing()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
}

#[tokio::test]
async fn hook_order_of_a_parallel_batch() {
    // The only test of this binary that writes the middleware log or creates DbAudit instances.
    hpd_agent_tests::reset_logs();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "DatabaseTools", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "query", r#"{"sql":"a"}"#),
            ToolCall::new("c3", "ping", ""),
        ]),
        ChatResponse::text("ok"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<DatabaseTools>()
        .with_tool_harness::<FaultTools>()
        .with_middleware(RecordingMiddleware::new("A"))
        .with_middleware(RecordingMiddleware::new("B"))
        .with_chat_client(client)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let log = hpd_agent_tests::middleware_log();
    let expected_in_order = [
        "A:before_message_turn",
        "B:before_message_turn",
        "A:before_iteration",
        "B:before_iteration",
        "A:before_tool_execution",
        "B:before_tool_execution",
        "B:after_iteration",
        "A:after_iteration",
        "A:before_iteration",
        "B:before_iteration",
        "DbAudit#1[Basic]:before_iteration",
        "A:before_tool_execution",
        "B:before_tool_execution",
        "DbAudit#1[Basic]:before_tool_execution",
        "A:before_parallel_batch",
        "B:before_parallel_batch",
        "DbAudit#1[Basic]:before_parallel_batch",
        "DbAudit#1[Basic]:after_iteration",
        "B:after_iteration",
        "A:after_iteration",
        "DbAudit#1[Basic]:after_message_turn",
        "B:after_message_turn",
        "A:after_message_turn",
    ];
    let mut position = 0;
    for line in expected_in_order {
        let found = log[position..].iter().position(|l| l == line);
        assert!(
            found.is_some(),
            "{line} missing after position {position} in {log:#?}"
        );
        position += found.unwrap_or_default() + 1;
    }
    let query_hooks: Vec<&String> = log.iter().filter(|l| l.ends_with(":query")).collect();
    assert_eq!(
        query_hooks,
        [
            "A:before_function:query",
            "B:before_function:query",
            "DbAudit#1[Basic]:before_function:query",
            "A:wrap_function_call:query",
            "B:wrap_function_call:query",
            "DbAudit#1[Basic]:wrap_function_call:query",
            "DbAudit#1[Basic]:after_function:query",
            "B:after_function:query",
            "A:after_function:query",
        ]
    );
    assert!(
        !log.iter()
            .any(|l| l.starts_with("DbAudit") && l.ends_with(":ping"))
    );
}

#[test]
fn agents_are_send_sync_and_cheap_to_clone_and_sessions_are_send() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    fn movable<T: Send + 'static>() {}
    shared::<hpd_agent::Agent>();
    movable::<hpd_agent::Session>();
    movable::<hpd_agent::agent::SessionState>();
    shared::<ScriptedChatClient>();
    shared::<hpd_agent::providers::openai::OpenAiClient>();
}
