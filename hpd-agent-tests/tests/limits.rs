//! Agent-wide [`Limits`]: long tool results are cut with a marker, oversized arguments are
//! answered with an error before anything parses them, and the calls of one response run with
//! bounded concurrency (5,000 calls, results in call order, every call answered), for every
//! tool kind (macro, dynamic, MCP, sub-agent) and for [`ToolSession`] calls; set in code and in
//! JSON config.

mod mcp_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hpd_agent::mcp::McpHarness;
use hpd_agent::prelude::*;
use hpd_agent::{
    Agent, AgentBuilder, AgentConfig, BuildError, ChatMessage, ChatResponse, HarnessBuilder,
    ScriptedChatClient, SubAgent, Tool, ToolCall, ToolResult, config::Limits,
    harness::DynamicHarness,
};
use serde_json::json;

/// How often `LimitTools::count` ran.
static COUNTED: AtomicUsize = AtomicUsize::new(0);

/// A macro harness whose results can be made long.
#[derive(Debug, Default)]
pub struct LimitTools;

#[tool_harness]
impl LimitTools {
    /// Returns `size` copies of `unit`.
    #[ai_function]
    fn repeat(&self, unit: String, size: usize) -> String {
        unit.repeat(size)
    }

    /// Counts its runs and returns the length of `text`.
    #[ai_function]
    fn count(&self, text: String) -> usize {
        COUNTED.fetch_add(1, Ordering::SeqCst);
        text.len()
    }
}

fn call(id: &str, name: &str, arguments: impl Into<String>) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn agent_with(
    limits: Limits,
    model: &ScriptedChatClient,
    harness: Option<DynamicHarness>,
) -> Agent {
    let mut builder = AgentBuilder::new()
        .with_tool_harness::<LimitTools>()
        .with_limits(limits)
        .with_chat_client(model.clone());
    if let Some(harness) = harness {
        builder = builder.with_harness(harness);
    }
    builder.build().unwrap()
}

/// The marker's dropped and total byte counts, and the kept text.
fn marker(text: &str) -> (usize, usize, &str) {
    let at = text.rfind("\n[truncated: ").expect("a truncation marker");
    let tail = text[at..]
        .strip_prefix("\n[truncated: ")
        .and_then(|t| t.strip_suffix(" bytes dropped]"))
        .expect("the marker's form");
    let (dropped, total) = tail.split_once(" of ").unwrap();
    (
        dropped.parse().unwrap(),
        total.parse().unwrap(),
        &text[..at],
    )
}

#[tokio::test]
async fn long_results_are_cut_at_a_character_boundary_with_a_marker() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            // 3-byte characters, 30,000 bytes.
            call("c1", "repeat", r#"{"unit": "€", "size": 10000}"#),
            call("c2", "repeat", r#"{"unit": "ab", "size": 100}"#),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent_with(
        Limits::default().with_max_tool_result_bytes(1000),
        &model,
        None,
    );
    let mut session = agent.session();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let config = hpd_agent::AgentRunConfig::new().on_event(move |e| {
        if let hpd_agent::AgentEvent::ToolCallFinished { result, .. } = e {
            seen.lock().unwrap().push(result.clone());
        }
    });
    session.run_with("go", config).await.unwrap();
    let requests = model.take_requests();
    let (cut, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(!is_error);
    assert!(cut.len() <= 1000, "{}", cut.len());
    let (dropped, total, kept) = marker(cut);
    assert_eq!(total, 30_000);
    assert_eq!(dropped + kept.len(), total);
    assert!(kept.chars().all(|c| c == '€'));
    assert!(
        kept.len() > 900,
        "the marker takes little room: {}",
        kept.len()
    );
    // Short results are untouched.
    assert_eq!(requests[1].tool_result("c2").unwrap().0, "ab".repeat(100));
    // The event carries what the model got.
    assert_eq!(events.lock().unwrap()[0], cut);
}

#[tokio::test]
async fn oversized_arguments_are_rejected_before_parsing_for_macro_and_dynamic_tools() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let tool = Tool::new(
        "dyn_count",
        "Counts its runs",
        json!({"type": "object"}),
        move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { ToolResult::ok("ran") }
        },
    );
    let harness = HarnessBuilder::new("DynLimits")
        .with_tool(tool)
        .build()
        .unwrap();
    let big = format!(r#"{{"text": "{}"}}"#, "y".repeat(2000));
    // Not even JSON: nothing parses it, so the size is the only complaint.
    let broken = format!("{{{}", "z".repeat(5000));
    let before = COUNTED.load(Ordering::SeqCst);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call("c1", "count", big.clone()),
            call("c2", "dyn_count", big.clone()),
            call("c3", "count", broken.clone()),
            call("c4", "count", r#"{"text": "small"}"#),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent_with(
        Limits::default().with_max_argument_bytes(1024),
        &model,
        Some(harness),
    );
    agent.run("go").await.unwrap();
    let requests = model.take_requests();
    for (id, name, len) in [
        ("c1", "count", big.len()),
        ("c2", "dyn_count", big.len()),
        ("c3", "count", broken.len()),
    ] {
        let (text, is_error) = requests[1].tool_result(id).unwrap();
        assert!(is_error);
        assert_eq!(
            text,
            format!("Error: the arguments of '{name}' are {len} bytes; the limit is 1024 bytes")
        );
    }
    assert_eq!(requests[1].tool_result("c4").unwrap(), ("5", false));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(COUNTED.load(Ordering::SeqCst) - before, 1);
}

#[tokio::test]
async fn a_huge_model_supplied_name_is_shortened_in_the_rejection() {
    let name = "n".repeat(100_000);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", &name, "x".repeat(2000))]),
        ChatResponse::text("done"),
    ]);
    let agent = agent_with(Limits::default().with_max_argument_bytes(10), &model, None);
    agent.run("go").await.unwrap();
    let requests = model.take_requests();
    let (text, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(is_error);
    assert!(text.len() < 300, "{text}");
    assert!(
        text.contains(&format!("'{}...'", "n".repeat(128))),
        "{text}"
    );
}

/// A dynamic harness whose `work` tool tracks how many of its calls run at once.
fn gauge() -> (DynamicHarness, Arc<AtomicUsize>) {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (Arc::clone(&running), Arc::clone(&peak));
    let tool = Tool::new(
        "work",
        "Works a little",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        move |arguments, _| {
            let (running, peak) = (Arc::clone(&r), Arc::clone(&p));
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                // Yield a few times so other calls get a chance to start.
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                running.fetch_sub(1, Ordering::SeqCst);
                ToolResult::ok(format!("done {}", arguments["n"]))
            }
        },
    );
    let harness = HarnessBuilder::new("Gauge")
        .with_tool(tool)
        .build()
        .unwrap();
    (harness, peak)
}

#[tokio::test]
async fn five_thousand_calls_run_with_bounded_concurrency_in_call_order() {
    const CALLS: usize = 5000;
    let (harness, peak) = gauge();
    let calls: Vec<ToolCall> = (0..CALLS)
        .map(|n| {
            // Every 100th call names an unknown tool: it is answered too, in its place.
            let name = if n % 100 == 99 { "missing" } else { "work" };
            call(&format!("c{n}"), name, format!(r#"{{"n": {n}}}"#))
        })
        .collect();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(calls),
        ChatResponse::text("all done"),
    ]);
    let agent = agent_with(
        Limits::default().with_max_parallel_calls(8),
        &model,
        Some(harness),
    );
    let mut session = agent.session();
    assert_eq!(session.run("go").await.unwrap().text, "all done");
    let peak = peak.load(Ordering::SeqCst);
    assert!(peak <= 8, "at most 8 at once, saw {peak}");
    assert!(peak >= 2, "calls overlap, saw {peak}");
    let results: Vec<(&str, &str, bool)> = session
        .history()
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.as_str(), content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), CALLS);
    for (n, (id, content, is_error)) in results.iter().enumerate() {
        assert_eq!(*id, format!("c{n}"));
        if n % 100 == 99 {
            assert!(*is_error && content.starts_with("Function 'missing' not found"));
        } else {
            assert_eq!((*content, *is_error), (format!("done {n}").as_str(), false));
        }
    }
}

#[tokio::test]
async fn the_default_concurrency_is_bounded_too() {
    let (harness, peak) = gauge();
    let calls = (0..200)
        .map(|n| call(&format!("c{n}"), "work", format!(r#"{{"n": {n}}}"#)))
        .collect();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(calls),
        ChatResponse::text("ok"),
    ]);
    let agent = agent_with(Limits::default(), &model, Some(harness));
    agent.run("go").await.unwrap();
    assert!(peak.load(Ordering::SeqCst) <= hpd_agent::config::DEFAULT_MAX_PARALLEL_CALLS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_session_calls_follow_the_limits() {
    let (harness, peak) = gauge();
    let model = ScriptedChatClient::new();
    let agent = agent_with(
        Limits::default()
            .with_max_parallel_calls(3)
            .with_max_argument_bytes(100)
            .with_max_tool_result_bytes(200),
        &model,
        Some(harness),
    );
    let tools = Arc::new(agent.tool_session());
    let tasks: Vec<_> = (0..60)
        .map(|n| {
            let tools = Arc::clone(&tools);
            tokio::spawn(async move {
                tools
                    .call_tool(&format!("c{n}"), "work", &format!(r#"{{"n": {n}}}"#))
                    .await
            })
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        let outcome = task.await.unwrap().unwrap();
        assert_eq!(outcome.result.text, format!("done {n}"));
    }
    assert!(peak.load(Ordering::SeqCst) <= 3);

    let rejected = tools
        .call_tool("big", "count", &"a".repeat(101))
        .await
        .unwrap();
    assert!(rejected.result.is_error);
    assert_eq!(
        rejected.result.text,
        "Error: the arguments of 'count' are 101 bytes; the limit is 100 bytes"
    );
    let long = tools
        .call_tool("long", "repeat", r#"{"unit": "é", "size": 1000}"#)
        .await
        .unwrap();
    assert!(long.result.text.len() <= 200);
    let (dropped, total, kept) = marker(&long.result.text);
    assert_eq!((total, dropped + kept.len()), (2000, 2000));
}

#[tokio::test]
async fn sub_agent_calls_follow_the_parents_limits() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call(
                "c1",
                "helper",
                json!({"input": "x".repeat(500)}).to_string(),
            ),
            call("c2", "helper", r#"{"input": "write a lot"}"#),
        ]),
        // The child's reply to c2 (c1 never reaches it).
        ChatResponse::text("w".repeat(5000)),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_sub_agent(SubAgent::new("helper", "Helps.", AgentConfig::default()))
        .with_limits(
            Limits::default()
                .with_max_argument_bytes(200)
                .with_max_tool_result_bytes(300),
        )
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = model.take_requests();
    assert_eq!(requests.len(), 3, "one child request, for c2 only");
    let last = &requests[2];
    let (rejected, is_error) = last.tool_result("c1").unwrap();
    assert!(is_error);
    assert!(
        rejected.starts_with("Error: the arguments of 'helper' are"),
        "{rejected}"
    );
    let (cut, _) = last.tool_result("c2").unwrap();
    assert!(cut.len() <= 300);
    assert_eq!(marker(cut).1, 5000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_results_and_arguments_follow_the_limits() {
    let Some(python) = mcp_common::python(false) else {
        return;
    };
    let harness = McpHarness::stdio(
        "HugeLimits",
        python,
        [mcp_common::fixture("fault_server.py"), "huge".to_owned()],
    )
    .with_timeout(Duration::from_secs(30))
    // The client's own cap (an error result beyond it) is lifted: the agent's cut applies.
    .with_max_result_chars(10_000_000)
    .without_collapse()
    .connect()
    .await
    .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call("c1", "huge", r#"{"size": 8000000}"#),
            call("c2", "echo", json!({"text": "t".repeat(5000)}).to_string()),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent_with(
        Limits::default()
            .with_max_tool_result_bytes(4096)
            .with_max_argument_bytes(1000),
        &model,
        Some(harness),
    );
    agent.run("go").await.unwrap();
    let requests = model.take_requests();
    let (huge, _) = requests[1].tool_result("c1").unwrap();
    assert!(huge.len() <= 4096);
    let (dropped, total, kept) = marker(huge);
    assert_eq!((total, dropped + kept.len()), (8_000_000, 8_000_000));
    let (echo, is_error) = requests[1].tool_result("c2").unwrap();
    assert!(is_error);
    assert!(
        echo.starts_with("Error: the arguments of 'echo' are"),
        "{echo}"
    );
}

#[tokio::test]
async fn limits_come_from_json_config() {
    let config = AgentConfig::from_json(
        r#"{"tool_harnesses": ["LimitTools"],
            "Limits": {"MaxToolResultBytes": 100, "max_argument_bytes": 50, "maxParallelCalls": 2,
                       "max_tool_result_media_bytes": 4096}}"#,
    )
    .unwrap();
    assert_eq!(config.limits, {
        let mut limits = Limits::default();
        limits.max_tool_result_bytes = 100;
        limits.max_tool_result_media_bytes = 4096;
        limits.max_argument_bytes = 50;
        limits.max_parallel_calls = 2;
        limits
    });
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call("c1", "repeat", r#"{"unit": "q", "size": 1000}"#),
            call("c2", "count", "w".repeat(51)),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(agent.limits().max_parallel_calls, 2);
    agent.run("go").await.unwrap();
    let requests = model.take_requests();
    assert!(requests[1].tool_result("c1").unwrap().0.len() <= 100);
    assert!(requests[1].tool_result("c2").unwrap().1);
}

#[test]
fn a_zero_limit_fails_the_build() {
    for (limits, field) in [
        (
            Limits::default().with_max_parallel_calls(0),
            "max_parallel_calls",
        ),
        (
            Limits::default().with_max_argument_bytes(0),
            "max_argument_bytes",
        ),
        (
            Limits::default().with_max_tool_result_bytes(0),
            "max_tool_result_bytes",
        ),
    ] {
        let err = AgentBuilder::new()
            .with_limits(limits)
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap_err();
        assert!(
            matches!(err, BuildError::ZeroLimit(f) if f == field),
            "{err}"
        );
        assert_eq!(err.to_string(), format!("{field} must be at least 1"));
    }
}
