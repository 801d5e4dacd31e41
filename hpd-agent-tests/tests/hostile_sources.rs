//! Hostile tool sources: an MCP server that advertises thousands of tools, names tools with odd
//! characters, gives schemas that are not object schemas, or returns many megabytes; a dynamic
//! tool whose handler never returns. Each gets a clear error or a bounded result, never a hang
//! or a crash. The MCP server is `hpd-agent/tests/mcp_fixtures/fault_server.py` (standard
//! library only), run with `HPD_MCP_PYTHON` or `python3`.

mod mcp_common;

use std::time::{Duration, Instant};

use hpd_agent::mcp::McpHarness;
use hpd_agent::{
    AgentBuilder, CancellationToken, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool,
    ToolCall, ToolResult, config::Limits, harness::DynamicHarness,
};
use serde_json::json;

fn fault(mode: &str) -> Option<McpHarness> {
    let python = mcp_common::python(false)?;
    Some(
        McpHarness::stdio(
            "Fault",
            python,
            [mcp_common::fixture("fault_server.py"), mode.to_owned()],
        )
        .with_timeout(Duration::from_secs(30)),
    )
}

/// An agent in the `hide` layout (the `fixed` one has a test of its own below).
fn agent(harness: DynamicHarness, model: &ScriptedChatClient, limits: Limits) -> hpd_agent::Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness)
        .with_limits(limits)
        .with_chat_client(model.clone())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_thousands_of_tools_is_usable_and_its_container_answer_is_bounded() {
    let Some(harness) = fault("many") else {
        return;
    };
    let harness = harness.connect().await.unwrap();
    assert_eq!(harness.tool_names().len(), 5001);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Fault", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "tool_4999", "{}"),
            ToolCall::new("c3", "tool_0", "{}"),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent(
        harness,
        &model,
        Limits::default().with_max_tool_result_bytes(8192),
    );
    assert_eq!(agent.initial_tool_names(), ["Fault"]);
    agent.run("use them").await.unwrap();
    let requests = model.take_requests();
    // The expansion answer lists 5,001 names: cut to the limit, with the marker.
    let (listing, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(!is_error);
    assert!(listing.len() <= 8192, "{}", listing.len());
    assert!(listing.starts_with("Fault expanded. Available functions: echo, tool_0, tool_1"));
    assert!(listing.contains("bytes dropped]"), "{listing}");
    // Every tool is visible after the expansion and callable.
    assert_eq!(requests[1].tools.len(), 5001);
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("tool 4999 ran", false))
    );
    assert_eq!(requests[2].tool_result("c3"), Some(("tool 0 ran", false)));
}

/// The default `fixed` layout: the container answers with 5,001 schemas, cut to the limit like
/// any result; the tool list never grows, and every member is reachable through the call tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_fixed_layout_a_container_of_thousands_of_tools_answers_within_the_limit() {
    let Some(harness) = fault("many") else {
        return;
    };
    let harness = harness.connect().await.unwrap();
    let through = |id: &str, name: &str| {
        ToolCall::new(
            id,
            hpd_agent::config::CALL_TOOL,
            format!(r#"{{"name": "{name}", "arguments": {{}}}}"#),
        )
    };
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Fault", "{}")]),
        ChatResponse::tool_calls(vec![through("c2", "tool_4999"), through("c3", "tool_0")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(harness)
        // The container's answer as a tool result, where the result limit applies.
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_limits(Limits::default().with_max_tool_result_bytes(8192))
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(
        agent.initial_tool_names(),
        ["Fault", hpd_agent::config::CALL_TOOL]
    );
    agent.run("use them").await.unwrap();
    let requests = model.take_requests();
    let (listing, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(!is_error);
    assert!(listing.len() <= 8192, "{}", listing.len());
    assert!(listing.starts_with("Fault expanded. Available functions: echo, tool_0, tool_1"));
    assert!(listing.contains("bytes dropped]"), "{listing}");
    for request in &requests {
        assert_eq!(
            request.tool_names(),
            ["Fault", hpd_agent::config::CALL_TOOL]
        );
    }
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("tool 4999 ran", false))
    );
    assert_eq!(requests[2].tool_result("c3"), Some(("tool 0 ran", false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_with_odd_names_are_renamed_to_valid_names_and_called_by_their_own() {
    let Some(harness) = fault("odd-names") else {
        return;
    };
    let harness = harness.without_collapse().connect().await.unwrap();
    let names = harness.tool_names();
    for name in &names {
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name:?}"
        );
    }
    assert_eq!(names.len(), 10, "{names:?}");
    let renamed = |original: &str| {
        let mut name: String = format!("Fault_{original}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        name.truncate(64);
        name
    };
    let calls: Vec<ToolCall> = [
        "",
        "日本語ツール",
        "nul\u{0}byte",
        &"x".repeat(10_000),
        "../../etc/passwd",
    ]
    .iter()
    .enumerate()
    .map(|(n, original)| {
        ToolCall::new(
            format!("c{n}"),
            renamed(original),
            json!({ "text": format!("reached {n}") }).to_string(),
        )
    })
    .collect();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(calls),
        ChatResponse::text("done"),
    ]);
    agent(harness, &model, Limits::default())
        .run("odd")
        .await
        .unwrap();
    let requests = model.take_requests();
    for n in 0..5 {
        assert_eq!(
            requests[1].tool_result(&format!("c{n}")),
            Some((format!("reached {n}").as_str(), false)),
            "call {n}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_whose_schemas_are_not_object_schemas_are_left_out() {
    let Some(harness) = fault("schemas") else {
        return;
    };
    let harness = match harness.without_collapse().connect().await {
        Ok(harness) => harness,
        Err(error) => panic!("connect: {error}"),
    };
    assert_eq!(harness.tool_names(), ["echo"]);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "schema_string", "{}"),
            ToolCall::new("c2", "echo", r#"{"text": "still here"}"#),
        ]),
        ChatResponse::text("done"),
    ]);
    agent(harness, &model, Limits::default())
        .run("schemas")
        .await
        .unwrap();
    let requests = model.take_requests();
    // The listing was read leniently: `echo`'s boolean hints are kept, the one that is not a
    // boolean is left unsaid.
    assert_eq!(
        requests[0].tools[0].annotations,
        hpd_agent::chat::ToolAnnotations::read_only().with_open_world(false)
    );
    let (missing, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(is_error);
    assert!(
        missing.starts_with("Function 'schema_string' not found"),
        "{missing}"
    );
    assert_eq!(requests[1].tool_result("c2"), Some(("still here", false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_of_many_megabytes_is_bounded() {
    // 12 MB: the client's own cap gives an error result; lifted, the agent's cut applies.
    for lifted in [false, true] {
        let Some(mut harness) = fault("huge") else {
            return;
        };
        if lifted {
            harness = harness.with_max_result_chars(50_000_000);
        }
        let harness = harness.without_collapse().connect().await.unwrap();
        let model = ScriptedChatClient::with_replies([
            ChatResponse::tool_calls(vec![ToolCall::new("c1", "huge", r#"{"size": 12000000}"#)]),
            ChatResponse::text("done"),
        ]);
        agent(harness, &model, Limits::default())
            .run("big")
            .await
            .unwrap();
        let requests = model.take_requests();
        let (text, is_error) = requests[1].tool_result("c1").unwrap();
        assert!(text.len() <= hpd_agent::config::DEFAULT_MAX_TOOL_RESULT_BYTES);
        if lifted {
            assert!(!is_error);
            assert!(
                text.ends_with("of 12000000 bytes dropped]"),
                "{}",
                &text[text.len() - 60..]
            );
        } else {
            assert!(is_error);
            assert!(
                text.contains("has 12000000 characters, more than the limit"),
                "{text}"
            );
        }
    }

    // 20 MB is over the transport's 16 MiB message limit: the message is dropped unread, so
    // the call ends at its timeout with an error result, and the run goes on.
    let Some(harness) = fault("huge") else {
        return;
    };
    let harness = harness
        .with_timeout(Duration::from_secs(2))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "huge", r#"{"size": 20000000}"#)]),
        ChatResponse::text("done"),
    ]);
    let started = Instant::now();
    agent(harness, &model, Limits::default())
        .run("bigger")
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let requests = model.take_requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Error: MCP server 'Fault' did not answer 'huge' within 2000 ms",
            true
        ))
    );
}

fn never_returns(timeout: Option<Duration>) -> DynamicHarness {
    let mut tool = Tool::new(
        "stuck",
        "Never returns",
        json!({"type": "object"}),
        |_, _| async {
            std::future::pending::<()>().await;
            ToolResult::ok("unreachable")
        },
    );
    if let Some(timeout) = timeout {
        tool = tool.with_timeout(timeout);
    }
    let quick = Tool::new(
        "quick",
        "Returns at once",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("quick done") },
    );
    HarnessBuilder::new("Stuck")
        .with_tool(tool)
        .with_tool(quick)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_dynamic_handler_that_never_returns_times_out_and_the_other_calls_finish() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "stuck", "{}"),
            ToolCall::new("c2", "quick", "{}"),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent(
        never_returns(Some(Duration::from_millis(200))),
        &model,
        Limits::default(),
    );
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text, "done");
    assert!(started.elapsed() < Duration::from_secs(10));
    let requests = model.take_requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("Error: function 'stuck' timed out after 200 ms", true))
    );
    assert_eq!(requests[1].tool_result("c2"), Some(("quick done", false)));
}

#[tokio::test]
async fn without_a_timeout_cancellation_ends_a_handler_that_never_returns() {
    let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        ToolCall::new("c1", "stuck", "{}"),
        ToolCall::new("c2", "quick", "{}"),
    ])]);
    let agent = agent(never_returns(None), &model, Limits::default());
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let mut session = agent.session();
    let error = session
        .run_with(
            "go",
            hpd_agent::AgentRunConfig::new().with_cancellation(token),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, hpd_agent::RunError::Cancelled), "{error}");
    // Every call is answered: the stuck one as cancelled, the quick one with its result.
    let results: Vec<(String, String)> = session
        .history()
        .iter()
        .filter_map(|m| match m {
            hpd_agent::ChatMessage::Tool {
                call_id, content, ..
            } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1".to_owned(), "Error: run cancelled".to_owned()),
            ("c2".to_owned(), "quick done".to_owned())
        ]
    );
}
