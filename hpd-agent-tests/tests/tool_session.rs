//! [`ToolSession`]: an agent's tools driven without a model, as an MCP server drives them:
//! visible tools in model order, container calls, recovery, unknown names, global and scoped
//! middleware, sub-agents, flat mode, and picking up a changed tool list.

use std::sync::{Arc, Mutex};

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatResponse, HarnessBuilder, Middleware, RunError,
    ScriptedChatClient, SubAgent, Tool, ToolResult, middleware::FunctionCall,
    middleware::HookResult,
};
use hpd_agent_tests::{DatabaseTools, MathTools, WeatherTools};
use serde_json::json;

/// Logs `{label}:{hook}:{function}` for function hooks; blocks `blocked`.
struct Log {
    label: &'static str,
    lines: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Middleware for Log {
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        self.push("before", call.function_name());
        if call.function_name() == "multiply" {
            call.block_default();
        }
        Ok(())
    }

    async fn after_function(&self, call: &FunctionCall, _result: &mut ToolResult) -> HookResult {
        self.push("after", call.function_name());
        Ok(())
    }
}

impl Log {
    fn push(&self, hook: &str, function: &str) {
        self.lines
            .lock()
            .unwrap()
            .push(format!("{}:{hook}:{function}", self.label));
    }
}

fn agent(lines: &Arc<Mutex<Vec<String>>>) -> hpd_agent::Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness_options::<DatabaseTools>(|o| {
            o.with_scoped_middleware(Log {
                label: "db",
                lines: Arc::clone(lines),
            })
        })
        .with_middleware(Log {
            label: "global",
            lines: Arc::clone(lines),
        })
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap()
}

#[tokio::test]
async fn calls_go_as_a_model_turn_would_go() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let agent = agent(&lines);
    let tools = agent.tool_session();
    assert!(!tools.is_flat());
    assert_eq!(
        tools.visible_tool_names(),
        ["get_weather", "get_forecast", "MathTools", "DatabaseTools"]
    );
    assert_eq!(
        tools.visible_tools()[2].description,
        "Math operations (functions: add, multiply, divide)"
    );

    // A container call expands and says so.
    let opened = tools.call_tool("c1", "MathTools", "{}").await.unwrap();
    assert!(opened.expanded);
    assert_eq!(
        opened.result,
        ToolResult::ok(
            "MathTools expanded. Available functions: add, multiply, divide\n\nMath tools are active."
        )
    );
    assert_eq!(
        tools.visible_tool_names(),
        [
            "get_weather",
            "get_forecast",
            "DatabaseTools",
            "add",
            "multiply",
            "divide"
        ]
    );
    let names = |outcome: &hpd_agent::agent::ToolCallOutcome| -> Vec<String> {
        outcome.revealed.iter().map(|t| t.name.clone()).collect()
    };
    assert_eq!(names(&opened), ["add", "multiply", "divide"]);
    assert_eq!(opened.revealed[0].parameters["required"], json!(["a", "b"]));
    let again = tools.call_tool("c2", "MathTools", "").await.unwrap();
    assert!(!again.expanded);
    assert_eq!(
        names(&again),
        ["add", "multiply", "divide"],
        "also when expanded already"
    );

    // A member runs through global middleware; a blocked one is blocked.
    let sum = tools
        .call_tool("c3", "add", r#"{"a": 2, "b": 3}"#)
        .await
        .unwrap();
    assert!(sum.revealed.is_empty());
    assert_eq!((sum.result, sum.expanded), (ToolResult::ok("5"), false));
    let blocked = tools
        .call_tool("c4", "multiply", r#"{"a": 2, "b": 3}"#)
        .await
        .unwrap();
    assert_eq!(
        blocked.result,
        ToolResult::error("Function 'multiply' was blocked")
    );

    // A hidden member of another container, qualified: recovery expands it.
    let recovered = tools
        .call_tool("c5", "databasetools.query", r#"{"sql": "x"}"#)
        .await
        .unwrap();
    assert!(recovered.expanded);
    assert_eq!(
        recovered.result,
        ToolResult::ok(
            "DatabaseTools expanded. Available functions: query. Call query again to run it."
        )
    );
    assert_eq!(names(&recovered), ["query"]);
    assert_eq!(tools.expanded(), ["MathTools", "DatabaseTools"]);
    // Now it runs through its scoped pipeline, innermost.
    let ran = tools
        .call_tool("c6", "query", r#"{"sql": "select 1"}"#)
        .await
        .unwrap();
    assert!(!ran.result.is_error, "{:?}", ran.result);

    let unknown = tools.call_tool("c7", "nope", "{}").await.unwrap();
    assert!(unknown.result.is_error);
    assert!(
        unknown.result.text.starts_with(
            "Function 'nope' not found. Available functions: get_weather, get_forecast, add"
        ),
        "{}",
        unknown.result.text
    );
    let invalid = tools.call_tool("c8", "add", "[1]").await.unwrap();
    assert_eq!(
        invalid.result,
        ToolResult::error("Invalid arguments for 'add': expected a JSON object, found an array")
    );

    assert_eq!(
        *lines.lock().unwrap(),
        [
            "global:before:add",
            "global:after:add",
            "global:before:multiply",
            "global:after:multiply",
            "global:before:query",
            "db:before:query",
            "db:after:query",
            "global:after:query",
            "global:before:add",
            "global:after:add",
        ]
    );

    tools.collapse_all();
    assert!(tools.expanded().is_empty());
    assert_eq!(
        tools.visible_tool_names(),
        ["get_weather", "get_forecast", "MathTools", "DatabaseTools"]
    );
}

#[tokio::test]
async fn sessions_are_independent_and_flat_mode_lists_everything() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let agent = agent(&lines);
    let one = agent.tool_session();
    let two = agent.tool_session();
    one.call_tool("c1", "MathTools", "{}").await.unwrap();
    assert_eq!(one.expanded(), ["MathTools"]);
    assert!(two.expanded().is_empty());

    let flat = agent.flat_tool_session();
    assert!(flat.is_flat());
    assert_eq!(
        flat.visible_tool_names(),
        [
            "get_weather",
            "get_forecast",
            "add",
            "multiply",
            "divide",
            "query"
        ]
    );
    let container = flat.call_tool("c1", "MathTools", "{}").await.unwrap();
    assert!(container.result.is_error && !container.expanded);
    // Scoped middleware of a harness visible without expansion applies all along.
    flat.call_tool("c2", "query", r#"{"sql": "x"}"#)
        .await
        .unwrap();
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "global:before:query",
            "db:before:query",
            "db:after:query",
            "global:after:query"
        ]
    );
}

#[tokio::test]
async fn events_are_emitted_and_sub_agents_run() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let model = ScriptedChatClient::with_replies([ChatResponse::text("child answer")]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .with_sub_agent(SubAgent::new("helper", "Helps", AgentConfig::default()))
        .with_chat_client(model)
        .on_event(move |event| seen.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    let tools = agent.tool_session();
    assert_eq!(tools.visible_tool_names(), ["helper", "MathTools"]);
    let answer = tools
        .call_tool("c1", "helper", r#"{"input": "hi"}"#)
        .await
        .unwrap();
    assert_eq!(answer.result, ToolResult::ok("child answer"));
    tools
        .call_tool("c2", "add", r#"{"a": 1, "b": 1}"#)
        .await
        .unwrap();
    let events = events.lock().unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::SubAgent { name, depth: 1, .. } if name == "helper"))
    );
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ContainerExpanded { harness, recovery: true } if harness == "MathTools"
    )));
    let finished = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCallFinished { .. }))
        .count();
    assert_eq!(finished, 2);
}

#[tokio::test]
async fn refresh_picks_up_a_changed_tool_list_and_cancellation_stops_calls() {
    let tool = |name: &str| {
        Tool::new(name, "", json!({"type": "object"}), |_, ctx| async move {
            ctx.cancellation_token().cancelled().await;
            ToolResult::ok("cancelled")
        })
    };
    let remote = HarnessBuilder::new("Remote")
        .with_collapse("Remote tools")
        .with_tool(tool("a"))
        .build()
        .unwrap();
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(remote.clone())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let tools = agent.tool_session().with_cancellation(token.clone());
    tools.call_tool("c1", "Remote", "{}").await.unwrap();
    assert_eq!(tools.visible_tool_names(), ["a"]);
    assert!(!tools.refresh().await);

    remote
        .updater()
        .replace(vec![tool("a"), tool("b")])
        .unwrap();
    assert_eq!(tools.visible_tool_names(), ["a"], "applied only on refresh");
    assert!(tools.refresh().await);
    assert_eq!(
        tools.visible_tool_names(),
        ["a", "b"],
        "the expansion stays"
    );

    let call = tools.call_tool("c2", "b", "{}");
    let cancel = async {
        tokio::task::yield_now().await;
        token.cancel();
    };
    let (outcome, ()) = tokio::join!(call, cancel);
    assert!(matches!(outcome, Err(RunError::Cancelled)), "{outcome:?}");
}

/// A server keeps one session per client and calls it from many tasks.
#[test]
fn tool_sessions_and_their_calls_are_send() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let lines = Arc::new(Mutex::new(Vec::new()));
    let tools = agent(&lines).tool_session();
    send_sync(&tools);
    let call = tools.call_tool("c1", "add", "{}");
    send(&call);
    let refresh = tools.refresh();
    send(&refresh);
}
