//! Harnesses built at run time, what goes wrong: names and schemas refused by the build,
//! handlers that panic (before or inside their future), time out or report errors, and
//! arguments that are not JSON objects.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, Middleware, ScriptedChatClient, Tool, ToolCall,
    ToolResult, async_trait, middleware::FunctionCall, middleware::HookResult,
    tool::FunctionFailure,
};
use serde_json::{Value, json};
use support::counted;

#[test]
fn build_checks_names_schemas_and_collapse_options() {
    let tool = |name: &str, schema: Value| {
        Tool::new(name, "", schema, |_, _| async { ToolResult::ok("") })
    };
    let object = || json!({"type": "object"});
    let cases: Vec<(HarnessBuilder, &str)> = vec![
        (HarnessBuilder::new("a".repeat(65)), "invalid harness name"),
        (
            HarnessBuilder::new("Ok").with_tool(tool("has space", object())),
            "invalid tool name 'has space': names must match [A-Za-z0-9_-]{1,64}",
        ),
        (
            HarnessBuilder::new("Ok")
                .with_tool(tool("twin", object()))
                .with_tool(tool("twin", object())),
            "tool name 'twin' is registered twice: by 'Ok' and by 'Ok'",
        ),
        (
            HarnessBuilder::new("Ok").with_tool(tool("t", json!({"type": "string"}))),
            "the parameter schema of tool 't' is not a JSON object schema: \"type\" must be \"object\", found \"string\"",
        ),
        (
            HarnessBuilder::new("Ok").with_tool(tool("t", json!([1]))),
            "the parameter schema of tool 't' is not a JSON object schema: expected a JSON object",
        ),
        (
            HarnessBuilder::new("Ok").with_tool(tool("t", json!({"properties": {}}))),
            "\"type\": \"object\" is missing",
        ),
        (
            HarnessBuilder::new("Ok")
                .with_tool(tool("t", json!({"type": "object", "required": "x"}))),
            "\"required\" must be an array of strings",
        ),
        (
            HarnessBuilder::new("Ok").with_system_prompt("x"),
            "harness 'Ok' sets system_prompt but is not collapsed",
        ),
        (
            HarnessBuilder::new("Ok").with_function_result("x"),
            "harness 'Ok' sets function_result but is not collapsed",
        ),
    ];
    for (builder, expected) in cases {
        let error = builder.build().unwrap_err().to_string();
        assert!(
            error.contains(expected),
            "{error} does not contain {expected}"
        );
    }
    // A schema without `properties` gets an empty one.
    let h = HarnessBuilder::new("Ok")
        .with_tool(tool("t", object()))
        .build()
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(h)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let visible = agent.tool_session().visible_tools();
    assert_eq!(
        *visible[0].parameters,
        json!({"type": "object", "properties": {}})
    );
}

#[tokio::test]
async fn failing_handlers_and_bad_arguments_give_error_results() {
    let calls = Arc::new(AtomicUsize::new(0));
    let boom = Tool::new("boom", "", json!({"type": "object"}), |_, _| async {
        panic!("secret payload")
    });
    let eager = Tool::new(
        "eager",
        "",
        json!({"type": "object"}),
        |_, _| -> std::future::Ready<ToolResult> { panic!("before the future") },
    );
    let slow = Tool::new("slow", "", json!({"type": "object"}), |_, _| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        ToolResult::ok("late")
    })
    .with_timeout(Duration::from_millis(20));
    let refuse = Tool::new("refuse", "", json!({"type": "object"}), |_, _| async {
        ToolResult::error("no such city")
    });
    let harness = HarnessBuilder::new("Faulty")
        .with_tool(boom)
        .with_tool(eager)
        .with_tool(slow)
        .with_tool(refuse)
        .with_tool(counted("forecast", &calls))
        .build()
        .unwrap();
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "boom", "{}"),
            ToolCall::new("c2", "eager", ""),
            ToolCall::new("c3", "slow", "null"),
            ToolCall::new("c4", "refuse", "{}"),
            ToolCall::new("c5", "forecast", "[1, 2]"),
            ToolCall::new("c6", "forecast", "\"Oslo\""),
            ToolCall::new("c7", "forecast", "{not json"),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_middleware(FailureLog(Arc::clone(&failures)))
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(agent.run("go").await.unwrap().text, "done");
    let request = &model.requests()[1];
    assert_eq!(
        request.tool_result("c1"),
        Some(("Error: function 'boom' panicked", true))
    );
    assert_eq!(
        request.tool_result("c2"),
        Some(("Error: function 'eager' panicked", true))
    );
    assert_eq!(
        request.tool_result("c3"),
        Some(("Error: function 'slow' timed out after 20 ms", true))
    );
    assert_eq!(request.tool_result("c4"), Some(("no such city", true)));
    assert_eq!(
        request.tool_result("c5"),
        Some((
            "Invalid arguments for 'forecast': expected a JSON object, found an array",
            true
        ))
    );
    assert_eq!(
        request.tool_result("c6"),
        Some((
            "Invalid arguments for 'forecast': expected a JSON object, found a string",
            true
        ))
    );
    let (text, is_error) = request.tool_result("c7").unwrap();
    assert!(
        is_error
            && text.starts_with("Invalid arguments for 'forecast': arguments are not valid JSON"),
        "{text}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let mut failures = failures.lock().unwrap().clone();
    failures.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        failures,
        [
            ("boom".to_owned(), FunctionFailure::Panicked),
            ("eager".to_owned(), FunctionFailure::Panicked),
            (
                "refuse".to_owned(),
                FunctionFailure::Reported(ToolResult::error("no such city"))
            ),
            (
                "slow".to_owned(),
                FunctionFailure::TimedOut(Duration::from_millis(20))
            ),
        ]
    );
}

/// Records what `on_error` saw.
struct FailureLog(Arc<std::sync::Mutex<Vec<(String, FunctionFailure)>>>);

#[async_trait]
impl Middleware for FailureLog {
    async fn on_error(&self, call: &FunctionCall, failure: &FunctionFailure) -> HookResult {
        self.0
            .lock()
            .unwrap()
            .push((call.function_name().to_owned(), failure.clone()));
        Ok(())
    }
}

/// A `before_turn` hook that panics is contained: the turn runs with the tools as they are.
#[tokio::test]
async fn a_panicking_before_turn_hook_does_not_stop_the_turn() {
    let calls = Arc::new(AtomicUsize::new(0));
    let harness = HarnessBuilder::new("Flaky")
        .with_tool(counted("forecast", &calls))
        .before_turn(|| async { panic!("cannot reconnect") })
        .build()
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "forecast", r#"{"city": "Oslo"}"#)]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(agent.run("go").await.unwrap().text, "done");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!agent.tool_session().refresh().await);
}
