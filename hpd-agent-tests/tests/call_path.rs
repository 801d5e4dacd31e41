//! The one call routine: a model's call and a tool session's call of the same tool go the same
//! way (limits, unwrapping, routing, the pipeline, the cut), and a function's failure keeps one
//! form until the model sees it, with `on_error` seeing it where it happened.

use std::sync::{Arc, Mutex};

use hpd_agent::config::Limits;
use hpd_agent::error::RunError;
use hpd_agent::middleware::{FunctionCall, HookResult, MiddlewareError, Next};
use hpd_agent::tool::FunctionFailure;
use hpd_agent::{
    Agent, AgentBuilder, AgentEvent, ChatMessage, ChatResponse, HarnessBuilder, Middleware,
    ScriptedChatClient, Tool, ToolCall, ToolResult, async_trait,
};
use serde_json::json;

type Log = Arc<Mutex<Vec<String>>>;

/// An agent with a collapsed harness of run-time tools: one that works, one that fails with an
/// error result, one that panics, and one whose result is longer than the agent's limit.
fn agent(model: ScriptedChatClient, middleware: Option<Recorder>) -> Agent {
    let mut builder = builder(model);
    if let Some(recorder) = middleware {
        builder = builder.with_middleware(recorder);
    }
    builder.build().unwrap()
}

/// The builder of [`agent`].
fn builder(model: ScriptedChatClient) -> AgentBuilder {
    let echo = Tool::new(
        "echo",
        "Repeats a text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args, _| async move { ToolResult::ok(args["text"].as_str().unwrap_or_default()) },
    );
    let refuse = Tool::new(
        "refuse",
        "Always fails",
        json!({"type": "object"}),
        |_, _| async { ToolResult::error("Error: refused") },
    );
    let crash = Tool::new("crash", "Panics", json!({"type": "object"}), |_, _| async {
        panic!("boom")
    });
    let long = Tool::new(
        "long",
        "A long text",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("x".repeat(500)) },
    );
    let harness = HarnessBuilder::new("Kit")
        .with_collapse("Echo and friends")
        .with_tool(echo)
        .with_tool(refuse)
        .with_tool(crash)
        .with_tool(long)
        .build()
        .unwrap();
    AgentBuilder::new()
        .with_harness(harness)
        // The container's answer as a tool result, as the tool session gives it (not a note).
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_limits(
            Limits::default()
                .with_max_argument_bytes(64)
                .with_max_tool_result_bytes(100),
        )
        .with_chat_client(model)
}

/// The calls both paths make, in order: the container, each member, an unknown name, arguments
/// over the limit, arguments that do not fit.
fn calls() -> Vec<ToolCall> {
    let big = format!(r#"{{"text": "{}"}}"#, "y".repeat(80));
    [
        ("Kit", "{}".to_owned()),
        ("echo", r#"{"text": "hi"}"#.to_owned()),
        ("refuse", "{}".to_owned()),
        ("crash", "{}".to_owned()),
        ("long", "{}".to_owned()),
        ("nope", "{}".to_owned()),
        ("echo", big),
        ("echo", "[1]".to_owned()),
        // The layout's call tool, standing for the call it names, and with nothing named.
        (
            "call_function",
            r#"{"name": "echo", "arguments": {"text": "via"}}"#.to_owned(),
        ),
        ("call_function", "{}".to_owned()),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, arguments))| ToolCall::new(format!("c{i}"), name, arguments))
    .collect()
}

#[tokio::test]
async fn a_model_call_and_a_tool_session_call_get_the_same_result() {
    let calls = calls();
    let mut replies: Vec<ChatResponse> = calls
        .iter()
        .map(|call| ChatResponse::tool_calls(vec![call.clone()]))
        .collect();
    replies.push(ChatResponse::text("done"));
    let looped = agent(ScriptedChatClient::with_replies(replies), None);
    let mut session = looped.session();
    assert_eq!(session.run("go").await.unwrap().text, "done");
    let from_loop: Vec<(String, bool)> = session
        .history()
        .iter()
        .filter_map(|message| match message {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect();

    let served = agent(ScriptedChatClient::new(), None).tool_session();
    let mut from_session = Vec::new();
    for call in &calls {
        let outcome = served
            .call_tool(&call.id, &call.name, &call.arguments)
            .await
            .unwrap();
        from_session.push((outcome.result.text, outcome.result.is_error));
    }
    assert_eq!(from_loop.len(), calls.len());
    assert_eq!(from_loop, from_session);
    // What the steps did, once for both paths.
    assert!(!from_loop[0].1 && from_loop[0].0.contains("echo"));
    assert_eq!(from_loop[1], ("hi".to_owned(), false));
    assert_eq!(from_loop[2], ("Error: refused".to_owned(), true));
    assert_eq!(
        from_loop[3],
        ("Error: function 'crash' panicked".to_owned(), true)
    );
    assert!(from_loop[4].0.len() < 200 && from_loop[4].0.starts_with("xxx"));
    assert!(from_loop[5].1 && from_loop[5].0.starts_with("Function 'nope' not found."));
    assert!(from_loop[6].1 && from_loop[6].0.contains("the limit is 64 bytes"));
    assert!(from_loop[7].1 && from_loop[7].0.starts_with("Invalid arguments for 'echo': "));
    assert_eq!(from_loop[8], ("via".to_owned(), false));
    assert!(from_loop[9].1);
}

/// Logs the wrapper's way in and out, what the wrapper got, and what `on_error` saw.
#[derive(Clone)]
struct Recorder {
    log: Log,
    /// `on_error` fails with this message.
    fail_on_error: Option<&'static str>,
}

#[async_trait]
impl Middleware for Recorder {
    async fn wrap_function_call(
        &self,
        call: &FunctionCall,
        next: Next<'_>,
    ) -> Result<ToolResult, MiddlewareError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("wrap in: {}", call.function_name()));
        let result = next.run().await?;
        self.log.lock().unwrap().push(format!(
            "wrap out: {} ({})",
            call.function_name(),
            result.text
        ));
        Ok(result)
    }

    async fn on_error(&self, call: &FunctionCall, failure: &FunctionFailure) -> HookResult {
        let seen = match failure {
            FunctionFailure::Reported(result) => format!("reported {}", result.text),
            FunctionFailure::Panicked => "panicked".to_owned(),
            other => format!("{other:?}"),
        };
        self.log
            .lock()
            .unwrap()
            .push(format!("on_error: {} {seen}", call.function_name()));
        match self.fail_on_error {
            Some(message) => Err(MiddlewareError::new(message)),
            None => Ok(()),
        }
    }

    async fn after_function(&self, call: &FunctionCall, _result: &mut ToolResult) -> HookResult {
        self.log
            .lock()
            .unwrap()
            .push(format!("after: {}", call.function_name()));
        Ok(())
    }
}

#[tokio::test]
async fn on_error_sees_the_failure_where_it_happened_inside_the_wrappers() {
    let log: Log = Arc::default();
    let recorder = Recorder {
        log: log.clone(),
        fail_on_error: None,
    };
    let tools = agent(ScriptedChatClient::new(), Some(recorder)).tool_session();
    tools.call_tool("c0", "Kit", "{}").await.unwrap();
    for name in ["echo", "refuse", "crash"] {
        tools
            .call_tool("c1", name, r#"{"text": "hi"}"#)
            .await
            .unwrap();
    }
    // Invalid arguments never reach `on_error`; the body did not run.
    let bad = tools.call_tool("c2", "echo", "[1]").await.unwrap();
    assert!(bad.result.is_error);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "wrap in: echo",
            "wrap out: echo (hi)",
            "after: echo",
            "wrap in: refuse",
            // The handler's error result, as it is (not copied into a new one).
            "on_error: refuse reported Error: refused",
            "wrap out: refuse (Error: refused)",
            "after: refuse",
            "wrap in: crash",
            "on_error: crash panicked",
            "wrap out: crash (Error: function 'crash' panicked)",
            "after: crash",
            "wrap in: echo",
            "wrap out: echo (Invalid arguments for 'echo': expected a JSON object, found an array)",
            "after: echo",
        ]
    );
}

#[tokio::test]
async fn a_failing_on_error_hook_is_reported_as_on_error_on_both_paths() {
    let recorder = || Recorder {
        log: Arc::default(),
        fail_on_error: Some("the alert service is down"),
    };
    let served = agent(ScriptedChatClient::new(), Some(recorder())).tool_session();
    served.call_tool("c0", "Kit", "{}").await.unwrap();
    let error = served.call_tool("c1", "refuse", "{}").await.unwrap_err();
    assert!(
        matches!(&error, RunError::Middleware { hook: "on_error", message } if message == "the alert service is down"),
        "{error:?}"
    );

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c0", "Kit", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "refuse", "{}")]),
        ChatResponse::text("unreachable"),
    ]);
    let looped = agent(model, Some(recorder()));
    let mut session = looped.session();
    let error = session.run("go").await.unwrap_err();
    assert!(
        matches!(
            &error,
            RunError::Middleware {
                hook: "on_error",
                ..
            }
        ),
        "{error:?}"
    );
    // The call still has its one result in the history.
    let answered = session
        .history()
        .iter()
        .filter(|m| matches!(m, ChatMessage::Tool { call_id, .. } if call_id == "c1"))
        .count();
    assert_eq!(answered, 1);
}

#[tokio::test]
async fn both_paths_report_a_call_with_the_same_events() {
    let events: Arc<Mutex<Vec<AgentEvent>>> = Arc::default();
    let seen = events.clone();
    let via = r#"{"name": "echo", "arguments": {"text": "via"}}"#;
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c0", "Kit", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "long", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "call_function", via)]),
        ChatResponse::text("done"),
    ]);
    let looped = agent(model, None);
    let config = hpd_agent::AgentRunConfig::new().on_event(move |event| {
        if matches!(
            event,
            AgentEvent::ToolCallStarted { .. }
                | AgentEvent::ToolCallFinished { .. }
                | AgentEvent::ContainerExpanded { .. }
        ) {
            seen.lock().unwrap().push(event.clone());
        }
    });
    looped.session().run_with("go", config).await.unwrap();
    let from_loop = std::mem::take(&mut *events.lock().unwrap());

    let seen = events.clone();
    let tools = builder(ScriptedChatClient::new())
        .on_event(move |event| {
            if matches!(
                event,
                AgentEvent::ToolCallStarted { .. }
                    | AgentEvent::ToolCallFinished { .. }
                    | AgentEvent::ContainerExpanded { .. }
            ) {
                seen.lock().unwrap().push(event.clone());
            }
        })
        .build()
        .unwrap()
        .tool_session();
    tools.call_tool("c0", "Kit", "{}").await.unwrap();
    tools.call_tool("c1", "long", "{}").await.unwrap();
    tools.call_tool("c2", "call_function", via).await.unwrap();
    let from_session = std::mem::take(&mut *events.lock().unwrap());

    let shape = |events: &[AgentEvent]| -> Vec<String> {
        events
            .iter()
            .map(|event| match event {
                AgentEvent::ToolCallStarted { call_id, name, .. } => {
                    format!("started {call_id} {name}")
                }
                AgentEvent::ContainerExpanded { harness, recovery } => {
                    format!("expanded {harness} {recovery}")
                }
                AgentEvent::ToolCallFinished {
                    call_id,
                    name,
                    result,
                    is_error,
                    ..
                } => format!("finished {call_id} {name} {} {is_error}", result.len()),
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(shape(&from_loop), shape(&from_session));
    let shaped = shape(&from_session);
    assert_eq!(shaped[0], "started c0 Kit");
    assert_eq!(shaped[1], "expanded Kit false");
    assert_eq!(shaped[3], "started c1 long");
    // The finished event carries the result as the model gets it: cut to the limit.
    assert!(shaped[4].starts_with("finished c1 long ") && !shaped[4].contains(" 500 "));
    // A call of the call tool is reported as the call it names.
    assert_eq!(shaped[5], "started c2 echo");
    assert_eq!(shaped[6], "finished c2 echo 3 false");
}
