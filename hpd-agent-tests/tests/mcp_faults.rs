//! MCP servers that misbehave: one that exits mid-turn, one that stops answering, one with a
//! malformed tool list (from the start and after a change), one with a huge result, one whose
//! tool list changes, one whose tool names are not valid tool names. The fault server is
//! `hpd-agent/tests/mcp_fixtures/fault_server.py` (standard library only), run with
//! `HPD_MCP_PYTHON` or `python3`.
//!
//! In every case the run goes on, each call gets a result (so the history stays valid), and
//! errors name the server.

mod mcp_common;

use std::path::PathBuf;
use std::time::Duration;

use hpd_agent::mcp::{McpError, McpHarness};
use hpd_agent::{
    AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall, harness::DynamicHarness,
};
use mcp_common::{fixture, process_alive, python, temp_dir};

/// The fault server in `mode`, logging its starts to a fresh file.
fn fault(mode: &str) -> Option<(McpHarness, PathBuf)> {
    let python = python(false)?;
    let log = temp_dir(mode).join("starts.log");
    let harness = McpHarness::stdio(
        "Fault",
        python,
        [fixture("fault_server.py"), mode.to_owned()],
    )
    .with_env("FAULT_SERVER_LOG", log.to_string_lossy())
    .with_timeout(Duration::from_secs(20));
    Some((harness, log))
}

fn starts(log: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn agent(harness: DynamicHarness, model: &ScriptedChatClient) -> hpd_agent::Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap()
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_mid_turn_gets_error_results_and_is_restarted_next_turn() {
    let Some((harness, log)) = fault("crash") else {
        return;
    };
    let harness = harness.without_collapse().connect().await.unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "crash", "{}")]),
        call("c2", "echo", r#"{"text": "after the crash"}"#),
        ChatResponse::text("the server crashed"),
        // Second turn: the server was restarted.
        call("c3", "echo", r#"{"text": "back again"}"#),
        ChatResponse::text("fine again"),
    ]);
    let agent = agent(harness, &model);
    let mut session = agent.session();
    let first = session.run("crash it").await.unwrap();
    assert_eq!(first.text, "the server crashed");
    let requests = model.take_requests();
    let (crashed, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(is_error);
    assert!(
        crashed.starts_with("Error: MCP server 'Fault' stopped during 'crash'"),
        "{crashed}"
    );
    assert!(
        crashed.contains("crashing on purpose"),
        "the server's stderr is quoted: {crashed}"
    );
    let (after, is_error) = requests[2].tool_result("c2").unwrap();
    assert!(is_error);
    assert!(
        after.starts_with("Error: MCP server 'Fault' is unavailable"),
        "{after}"
    );
    assert_eq!(starts(&log).len(), 1);

    let second = session.run("again").await.unwrap();
    assert_eq!(second.text, "fine again");
    let requests = model.take_requests();
    assert_eq!(requests[1].tool_result("c3"), Some(("back again", false)));
    assert_eq!(starts(&log).len(), 2, "restarted once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_times_out_and_is_restarted_next_turn() {
    let Some((harness, log)) = fault("hang") else {
        return;
    };
    let harness = harness
        .with_timeout(Duration::from_millis(1500))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "hang", "{}"),
        call("c2", "echo", r#"{"text": "x"}"#),
        ChatResponse::text("it hung"),
        call("c3", "echo", r#"{"text": "answering again"}"#),
        ChatResponse::text("ok"),
    ]);
    let agent = agent(harness, &model);
    let mut session = agent.session();
    session.run("hang it").await.unwrap();
    let requests = model.take_requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Error: MCP server 'Fault' did not answer 'hang' within 1500 ms; it stopped answering and will be restarted at the next turn",
            true
        ))
    );
    let (after, is_error) = requests[2].tool_result("c2").unwrap();
    assert!(
        is_error && after.contains("is unavailable (it stopped answering)"),
        "{after}"
    );

    session.run("again").await.unwrap();
    let requests = model.take_requests();
    assert_eq!(
        requests[1].tool_result("c3"),
        Some(("answering again", false))
    );
    let started = starts(&log);
    assert_eq!(started.len(), 2);
    // The hung process was ended when its connection was replaced.
    let old_pid = started[0].rsplit(' ').next().unwrap().to_owned();
    let mut ended = false;
    for _ in 0..100 {
        if !process_alive(&old_pid) {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ended, "the hung server {old_pid} still runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_tool_list_fails_connect_clearly() {
    let Some((harness, _)) = fault("malformed") else {
        return;
    };
    let error = harness.connect().await.unwrap_err();
    assert!(matches!(error, McpError::ListTools { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("MCP server 'Fault': listing its tools failed"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_that_turns_malformed_gives_error_results_and_the_run_goes_on() {
    let Some((harness, _)) = fault("malformed-later") else {
        return;
    };
    let harness = harness.without_collapse().connect().await.unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "break_list", "{}"),
        ChatResponse::text("broken"),
        call("c2", "echo", r#"{"text": "x"}"#),
        ChatResponse::text("still running"),
    ]);
    let agent = agent(harness, &model);
    let mut session = agent.session();
    session.run("break it").await.unwrap();
    notification_delivered().await;
    let requests = model.take_requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("tool list broken", false))
    );

    let output = session.run("and now?").await.unwrap();
    assert_eq!(output.text, "still running");
    let requests = model.take_requests();
    // The turn keeps the last good list, and calls say what is wrong.
    assert_eq!(requests[0].tool_names(), ["echo", "break_list"]);
    let (text, is_error) = requests[1].tool_result("c2").unwrap();
    assert!(is_error);
    assert!(
        text.starts_with(
            "Error: MCP server 'Fault' is unavailable (MCP server 'Fault': listing its tools failed"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_result_is_an_error_result() {
    let Some((harness, _)) = fault("huge") else {
        return;
    };
    let harness = harness.without_collapse().connect().await.unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "huge", r#"{"size": 2000000}"#),
            ToolCall::new("c2", "huge", r#"{"size": 10}"#),
        ]),
        ChatResponse::text("too big"),
    ]);
    let agent = agent(harness, &model);
    agent.run("big").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Error: the result of 'huge' from MCP server 'Fault' has 2000000 characters, more than the limit of 100000; it was not passed on",
            true
        ))
    );
    assert_eq!(requests[1].tool_result("c2"), Some(("xxxxxxxxxx", false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_applies_from_the_next_turn() {
    let Some((harness, _)) = fault("list-changed") else {
        return;
    };
    let harness = harness.connect().await.unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "Fault", "{}"),
        call("c2", "add_tool", "{}"),
        ChatResponse::text("added"),
        call("c3", "Fault", "{}"),
        call("c4", "extra", "{}"),
        ChatResponse::text("ran it"),
    ]);
    let agent = agent(harness.clone(), &model);
    let mut session = agent.session();
    session.run("add a tool").await.unwrap();
    notification_delivered().await;
    let requests = model.take_requests();
    assert_eq!(requests[1].tool_names(), ["echo", "add_tool"]);
    // The turn keeps its list after the notification.
    assert_eq!(requests[2].tool_names(), ["echo", "add_tool"]);

    session.run("use it").await.unwrap();
    let requests = model.take_requests();
    assert_eq!(requests[1].tool_names(), ["echo", "add_tool", "extra"]);
    assert_eq!(requests[2].tool_result("c4"), Some(("extra ran", false)));
    assert_eq!(harness.tool_names(), ["echo", "add_tool", "extra"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tool_names_are_exposed_as_harness_underscore_tool() {
    let Some((harness, _)) = fault("names") else {
        return;
    };
    let harness = harness.without_collapse().connect().await.unwrap();
    let long = format!("Fault_{}", "n".repeat(58));
    assert_eq!(long.len(), 64);
    assert_eq!(
        harness.tool_names(),
        ["echo", "Fault_read_file", "Fault_two_words", long.as_str()]
    );
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new(
                "c1",
                "Fault_two_words",
                r#"{"text": "sent as 'two words'"}"#,
            ),
            ToolCall::new("c2", &long, r#"{"text": "long"}"#),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = agent(harness, &model);
    agent.run("names").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("sent as 'two words'", false))
    );
    assert_eq!(requests[1].tool_result("c2"), Some(("long", false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_clone_ends_the_server_process() {
    let Some((harness, log)) = fault("list-changed") else {
        return;
    };
    let harness = harness.connect().await.unwrap();
    let clone = harness.clone();
    let model = ScriptedChatClient::with_replies([ChatResponse::text("hi")]);
    let agent = agent(clone, &model);
    agent.run("hi").await.unwrap();
    let pid = starts(&log)[0].rsplit(' ').next().unwrap().to_owned();
    drop(harness);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(process_alive(&pid), "the agent still holds a clone");
    drop(agent);
    let mut ended = false;
    for _ in 0..100 {
        if !process_alive(&pid) {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ended,
        "the server {pid} still runs after the last clone was dropped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tools_that_still_collide_after_renaming_fail_connect_naming_both() {
    let Some((harness, _)) = fault("clash") else {
        return;
    };
    let error = harness.connect().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP server 'Fault': its tools 'x/y' and 'x.y' both need the name 'Fault_x_y'"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_calls_emit_the_events_of_any_harness() {
    use std::sync::{Arc, Mutex};
    let Some((harness, _)) = fault("list-changed") else {
        return;
    };
    let harness = harness.connect().await.unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let model = ScriptedChatClient::with_replies([
        call("c1", "Fault", "{}"),
        call("c2", "echo", r#"{"text": "evented"}"#),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .on_event(move |event| {
            let line = match event {
                hpd_agent::AgentEvent::ContainerExpanded { harness, recovery } => {
                    format!("expanded {harness} {recovery}")
                }
                hpd_agent::AgentEvent::ToolCallStarted {
                    name, arguments, ..
                } => {
                    format!("started {name} {arguments}")
                }
                hpd_agent::AgentEvent::ToolCallFinished {
                    name,
                    result,
                    is_error,
                    ..
                } => format!("finished {name} {result} {is_error}"),
                _ => return,
            };
            seen.lock().unwrap().push(line);
        })
        .build()
        .unwrap();
    agent.run("events").await.unwrap();
    let events = events.lock().unwrap().clone();
    assert_eq!(
        events,
        [
            "started Fault {}",
            "expanded Fault false",
            "finished Fault Fault expanded. Available functions: echo, add_tool false",
            r#"started echo {"text": "evented"}"#,
            "finished echo evented false",
        ]
    );
}

/// A server's `notifications/tools/list_changed` reaches the client's handler on a task of its
/// own, so it can be handled after the tool result sent behind it. A turn sees the changed list
/// when the notification was handled before the turn starts; give it that time, as a user whose
/// next message comes later would.
async fn notification_delivered() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}
