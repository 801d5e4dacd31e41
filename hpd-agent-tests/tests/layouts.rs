//! Behaviour of the `fixed` and `native` collapsing layouts: the tools and system text of each
//! request over whole sessions, the history, recovery, the call tool's path through middleware,
//! events and limits, scoped pipelines, selective registration, the fallback of `native`, and
//! tool sessions (what an MCP server serves).

use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, BuildError, ChatMessage, ChatResponse, HarnessBuilder,
    Middleware, ScriptedChatClient, Tool, ToolCall, ToolResult, async_trait, chat::DeferredTools,
    chat::ToolAnnotations, config::CALL_TOOL, config::CollapsingLayout, config::Limits,
    harness::DynamicHarness, middleware::FunctionCall, middleware::HookResult,
    middleware::IterationInfo, providers::scripted::RecordedRequest,
};
use hpd_agent_tests::{DatabaseTools, FileTools, MathTools, WeatherTools, executions, reset_logs};
use serde_json::json;

/// The fixture logs are process-wide: tests that read them run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments.to_string())])
}

fn through(id: &str, member: &str, arguments: serde_json::Value) -> ChatResponse {
    call(
        id,
        CALL_TOOL,
        json!({"name": member, "arguments": arguments}),
    )
}

/// Every request after the first starts with the one before: the same tools, the same system
/// text, and its messages followed by more.
fn assert_continuations(requests: &[RecordedRequest]) {
    for (i, pair) in requests.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        assert_eq!(
            after.tool_names(),
            before.tool_names(),
            "tools of request {}",
            i + 2
        );
        assert_eq!(
            after.deferred,
            before.deferred,
            "deferred tools of request {}",
            i + 2
        );
        assert_eq!(
            after.instructions,
            before.instructions,
            "system text of request {}",
            i + 2
        );
        assert!(
            after.messages.starts_with(&before.messages),
            "request {} does not continue request {}",
            i + 2,
            i + 1
        );
    }
}

/// An agent of the fixtures in `layout` as such: opening ahead and container notes, on by
/// default, are off unless a test turns them on.
fn agent(client: &ScriptedChatClient, layout: CollapsingLayout) -> AgentBuilder {
    AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<FileTools>()
        .with_tool_harness::<DatabaseTools>()
        .with_collapsing_layout(layout)
        .configure_harness_collapsing(|c| {
            c.open_ahead = None;
            c.container_notes = false;
        })
        .with_chat_client(client.clone())
}

/// [`agent`] with container notes on, and the ids of the calls reported finished, in order.
fn noted(
    client: &ScriptedChatClient,
    layout: CollapsingLayout,
) -> (AgentBuilder, Arc<Mutex<Vec<String>>>) {
    let completed = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&completed);
    let builder = agent(client, layout)
        .configure_harness_collapsing(|c| c.container_notes = true)
        .on_event(move |event| {
            if let AgentEvent::ToolCallFinished { call_id, .. } = event {
                seen.lock().unwrap().push(call_id.clone());
            }
        });
    (builder, completed)
}

const FIXED_LIST: [&str; 6] = [
    "get_weather",
    "get_forecast",
    "MathTools",
    "FileTools",
    "DatabaseTools",
    CALL_TOOL,
];

#[tokio::test]
async fn fixed_keeps_every_request_of_a_session_a_continuation_of_the_last() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        through("c2", "add", json!({"a": 2, "b": 3})),
        ChatResponse::text("5"),
        call("c3", "FileTools", json!({})),
        through("c4", "read_file", json!({"path": "a.txt"})),
        through("c5", "FileTools.read_file", json!({"path": "b.txt"})),
        ChatResponse::text("read"),
        // A member of a container of an earlier turn: its schema is in the history, so the
        // call runs at once (what is loaded stays loaded).
        through("c6", "multiply", json!({"a": 2, "b": 4})),
        ChatResponse::text("8"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let built = agent(&client, CollapsingLayout::Fixed)
        .on_event(move |e| {
            let line = match e {
                AgentEvent::ToolCallStarted {
                    name, arguments, ..
                } => {
                    format!("start {name} {arguments}")
                }
                AgentEvent::ToolCallFinished {
                    name,
                    result,
                    is_error,
                    ..
                } => {
                    format!(
                        "finish {name} {is_error} {}",
                        result.lines().next().unwrap_or("")
                    )
                }
                AgentEvent::ContainerExpanded { harness, recovery } => {
                    format!("expanded {harness} {recovery}")
                }
                _ => return,
            };
            seen.lock().unwrap().push(line);
        })
        .build()
        .unwrap();
    let mut session = built.session();
    assert_eq!(session.run("add").await.unwrap().text, "5");
    assert_eq!(session.run("read").await.unwrap().text, "read");
    assert_eq!(session.run("multiply").await.unwrap().text, "8");
    let requests = client.requests();
    assert_eq!(requests.len(), 9);
    assert_eq!(requests[0].tool_names(), FIXED_LIST);
    assert_eq!(requests[0].instructions, "Base.");
    assert!(requests[0].deferred.is_empty());
    assert_continuations(&requests);
    assert_eq!(
        executions(),
        [
            "MathTools.add",
            "FileTools.read_file",
            "FileTools.read_file",
            "MathTools.multiply"
        ]
    );
    // The file container's result carries its system prompt, since the system text never does.
    let (opened, _) = requests[4].tool_result("c3").unwrap();
    assert!(opened.starts_with(
        "FileTools expanded. Available functions: read_file, write_file\n\nCall them through call_function"
    ));
    assert!(opened.ends_with(
        "## Active container instructions\n\n### FileTools\nPaths are relative to the workspace."
    ));
    assert_eq!(
        requests[5].tool_result("c4"),
        Some(("contents of a.txt", false))
    );
    // The history keeps the model's calls as it made them.
    assert!(matches!(
        &requests[2].messages[3],
        ChatMessage::Assistant { tool_calls, .. } if tool_calls[0].name == CALL_TOOL
    ));
    // Events name the call that runs.
    let events = events.lock().unwrap().clone();
    assert_eq!(
        &events[..5],
        [
            "start MathTools {}",
            "expanded MathTools false",
            "finish MathTools false MathTools expanded. Available functions: add, multiply, divide",
            "start add {\"a\":2,\"b\":3}",
            "finish add false 5",
        ]
    );
    // MathTools expands again for the later turn's call, which is no recovery.
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("expanded MathTools"))
            .collect::<Vec<_>>(),
        ["expanded MathTools false", "expanded MathTools false"]
    );
    assert_eq!(
        requests[8].tool_result("c6"),
        Some(("8", false)),
        "the result carries no instructions the history holds"
    );
}

/// Records the calls hooks see.
struct Spy(Arc<Mutex<Vec<String>>>);

#[async_trait]
impl Middleware for Spy {
    async fn before_tool_execution(&self, _: &IterationInfo, calls: &[ToolCall]) -> HookResult {
        for c in calls {
            self.0
                .lock()
                .unwrap()
                .push(format!("batch {} {}", c.name, c.arguments));
        }
        Ok(())
    }

    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        self.0.lock().unwrap().push(format!(
            "before {}.{} {}",
            call.harness_name(),
            call.function_name(),
            call.arguments()
        ));
        if call.function_name() == "divide" {
            call.block("Error: no division today");
        }
        Ok(())
    }
}

#[tokio::test]
async fn the_call_tool_takes_the_path_of_a_direct_call() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let log = Arc::new(Mutex::new(Vec::new()));
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        ChatResponse::tool_calls(vec![
            ToolCall::new(
                "c2",
                CALL_TOOL,
                json!({"name": "divide", "arguments": {"a": 1, "b": 2}}).to_string(),
            ),
            ToolCall::new(
                "c3",
                CALL_TOOL,
                json!({"name": "add", "arguments": {"a": "x"}}).to_string(),
            ),
            ToolCall::new(
                "c4",
                CALL_TOOL,
                json!({"name": "multiply", "arguments": {"a": 3, "b": 3}}).to_string(),
            ),
            // A big arguments text is refused before anything is unwrapped.
            ToolCall::new(
                "c5",
                CALL_TOOL,
                json!({"name": "add", "arguments": {"a": 1, "b": 1, "pad": "x".repeat(300)}})
                    .to_string(),
            ),
        ]),
        ChatResponse::text("done"),
    ]);
    let built = agent(&client, CollapsingLayout::Fixed)
        .with_middleware(Spy(Arc::clone(&log)))
        .with_limits({
            let mut limits = Limits::default();
            limits.max_argument_bytes = 200;
            limits
        })
        .build()
        .unwrap();
    built.run("math").await.unwrap();
    let last = client.requests().pop().unwrap();
    assert_eq!(
        last.tool_result("c2"),
        Some(("Error: no division today", true))
    );
    let (invalid, is_error) = last.tool_result("c3").unwrap();
    assert!(
        invalid.starts_with("Invalid arguments for 'add': "),
        "{invalid}"
    );
    assert!(is_error);
    assert_eq!(last.tool_result("c4"), Some(("9", false)));
    let (refused, is_error) = last.tool_result("c5").unwrap();
    assert!(is_error && refused.contains("200"), "{refused}");
    assert_eq!(executions(), ["MathTools.multiply"]);
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "batch MathTools {}",
            "batch divide {\"a\":1,\"b\":2}",
            "batch add {\"a\":\"x\"}",
            "batch multiply {\"a\":3,\"b\":3}",
            // The refused call is seen as the model sent it.
            &format!(
                "batch {CALL_TOOL} {}",
                json!({"name": "add", "arguments": {"a": 1, "b": 1, "pad": "x".repeat(300)}})
            ),
            "before MathTools.divide {\"a\":1,\"b\":2}",
            "before MathTools.add {\"a\":\"x\"}",
            "before MathTools.multiply {\"a\":3,\"b\":3}",
        ]
    );
}

#[tokio::test]
async fn fixed_with_executed_recovery_and_selected_functions() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new(
                "c1",
                CALL_TOOL,
                json!({"name": "add", "arguments": {"a": 1, "b": 2}}).to_string(),
            ),
            // Not selected for this agent: never run, whatever the name.
            ToolCall::new(
                "c2",
                CALL_TOOL,
                json!({"name": "MathTools.multiply", "arguments": {"a": 1, "b": 2}}).to_string(),
            ),
        ]),
        ChatResponse::text("3"),
    ]);
    let built = AgentBuilder::new()
        .with_tool_harness_options::<MathTools>(|o| o.with_functions(["add"]))
        .configure_harness_collapsing(|c| {
            c.layout = CollapsingLayout::Fixed;
            c.execute_recovered_calls = true;
        })
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    built.run("x").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests[0].tool_names(), ["MathTools", CALL_TOOL]);
    // The executed recovered call runs at once, and its result carries the system prompt.
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "3\n\n## Active container instructions\n\n### MathTools\nUse exact arithmetic and show units when relevant.",
            false
        ))
    );
    // A qualified name of a function the agent does not have is a call of its container (it
    // lists only the selected function); the function never runs.
    let (opened, is_error) = requests[1].tool_result("c2").unwrap();
    assert!(!is_error);
    assert!(
        opened.starts_with("MathTools expanded. Available functions: add\n\n"),
        "{opened}"
    );
    assert!(!opened.contains("multiply"), "{opened}");
    assert_eq!(executions(), ["MathTools.add"]);
}

#[test]
fn a_tool_named_like_the_call_tool_is_a_clash() {
    let ping = Tool::new(CALL_TOOL, "Mine", json!({"type": "object"}), |_, _| async {
        ToolResult::ok("")
    });
    let error = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Mine").with_tool(ping).build().unwrap())
        .with_tool_harness::<MathTools>()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::DuplicateTool { .. }));
    assert_eq!(
        error.to_string(),
        "tool name 'call_function' is registered twice: by 'the fixed collapsing layout' and by 'Mine'"
    );
    // Without containers the layout has no call tool, and the name is free.
    let ping = Tool::new(CALL_TOOL, "Mine", json!({"type": "object"}), |_, _| async {
        ToolResult::ok("")
    });
    assert!(
        AgentBuilder::new()
            .with_harness(HarnessBuilder::new("Mine").with_tool(ping).build().unwrap())
            .with_collapsing_layout(CollapsingLayout::Fixed)
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn native_without_a_native_client_falls_back_to_fixed_and_says_so_once() {
    let _serial = SERIAL.lock().await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        through("c2", "add", json!({"a": 1, "b": 1})),
        ChatResponse::text("2"),
    ]);
    let built = agent(&client, CollapsingLayout::Native)
        .on_event(move |e| {
            if let AgentEvent::LayoutFallback {
                requested,
                used,
                reason,
            } = e
            {
                seen.lock()
                    .unwrap()
                    .push(format!("{requested} -> {used}: {reason}"));
            }
        })
        .build()
        .unwrap();
    built.run("one").await.unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        ["native -> fixed: the chat client has no deferred tool loading"]
    );
    let requests = client.requests();
    assert_eq!(requests[0].tool_names(), FIXED_LIST);
    assert_eq!(requests[2].tool_result("c2"), Some(("2", false)));
    assert_continuations(&requests);
}

#[tokio::test]
async fn native_with_tool_references_defers_members_and_loads_them_from_results() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    for reply in [
        call("c1", "FileTools", json!({})),
        call("c2", "read_file", json!({"path": "x"})),
        ChatResponse::text("ok"),
        // Next turn: loaded from the history, collapsed again: recovery answers, loading again.
        call("c3", "query", json!({"sql": "select 1"})),
        call("c4", "query", json!({"sql": "select 1"})),
        ChatResponse::text("ok"),
    ] {
        client.push(reply);
    }
    let built = agent(&client, CollapsingLayout::Native).build().unwrap();
    let mut session = built.session();
    session.run("read").await.unwrap();
    session.run("query").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[0].tool_names(),
        [
            "get_weather",
            "get_forecast",
            "MathTools",
            "FileTools",
            "DatabaseTools"
        ]
    );
    let groups: Vec<(&str, Vec<&str>)> = requests[0]
        .deferred
        .iter()
        .map(|g| {
            (
                g.name.as_str(),
                g.tools.iter().map(|t| t.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("MathTools", vec!["add", "multiply", "divide"]),
            ("FileTools", vec!["read_file", "write_file"]),
            ("DatabaseTools", vec!["query"]),
        ]
    );
    assert_continuations(&requests);
    let references = |request: &RecordedRequest, id: &str| -> Vec<String> {
        request
            .messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::Tool {
                    call_id,
                    references,
                    ..
                } if call_id == id => Some(references.clone()),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(references(&requests[1], "c1"), ["read_file", "write_file"]);
    assert!(references(&requests[2], "c2").is_empty());
    assert_eq!(references(&requests[4], "c3"), ["query"]);
    let (recovered, _) = requests[4].tool_result("c3").unwrap();
    assert_eq!(
        recovered,
        "DatabaseTools expanded. Available functions: query. Call query again to run it."
    );
    assert_eq!(executions(), ["FileTools.read_file", "DatabaseTools.query"]);
}

#[tokio::test]
async fn native_with_tool_search_answers_searches_by_name_or_words() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolSearch);
    for reply in [
        ChatResponse::tool_calls(vec![
            ToolCall::new("s1", "tool_search", r#"{"namespace": "mathtools"}"#),
            ToolCall::new(
                "s2",
                "tool_search",
                r#"{"goal": "read a file from the workspace"}"#,
            ),
            ToolCall::new("s3", "tool_search", r#"{"goal": "zzz"}"#),
        ]),
        call("c1", "multiply", json!({"a": 6, "b": 7})),
        ChatResponse::text("42"),
    ] {
        client.push(reply);
    }
    let built = agent(&client, CollapsingLayout::Native).build().unwrap();
    built.run("x").await.unwrap();
    let requests = client.requests();
    // The containers are the namespaces there: only the plain tools are functions.
    assert_eq!(requests[0].tool_names(), ["get_weather", "get_forecast"]);
    assert_eq!(requests[0].deferred.len(), 3);
    assert_continuations(&requests);
    assert!(
        requests[1]
            .tool_result("s1")
            .unwrap()
            .0
            .starts_with("MathTools expanded.")
    );
    assert!(
        requests[1]
            .tool_result("s2")
            .unwrap()
            .0
            .starts_with("FileTools expanded.")
    );
    assert_eq!(
        requests[1].tool_result("s3"),
        Some((
            "No container matches the search. Containers: MathTools, FileTools, DatabaseTools",
            true
        ))
    );
    assert_eq!(requests[2].tool_result("c1"), Some(("42", false)));
    assert_eq!(executions(), ["MathTools.multiply"]);
}

#[tokio::test]
async fn tool_sessions_in_fixed_never_change_their_list() {
    let _serial = SERIAL.lock().await;
    let built = agent(&ScriptedChatClient::new(), CollapsingLayout::Fixed)
        .build()
        .unwrap();
    let tools = built.tool_session();
    assert_eq!(tools.visible_tool_names(), FIXED_LIST);
    let opened = tools.call_tool("m1", "MathTools", "{}").await.unwrap();
    assert!(opened.expanded && !opened.tools_changed);
    assert!(
        opened
            .result
            .text
            .contains(r#"{"name":"add","description":"Adds two integers.""#)
    );
    assert_eq!(tools.visible_tool_names(), FIXED_LIST);
    let sum = tools
        .call_tool(
            "m2",
            CALL_TOOL,
            r#"{"name": "add", "arguments": {"a": 20, "b": 22}}"#,
        )
        .await
        .unwrap();
    assert_eq!(sum.result.text, "42");
    let bad = tools.call_tool("m3", CALL_TOOL, "{}").await.unwrap();
    assert!(
        bad.result.is_error
            && bad
                .result
                .text
                .starts_with("Invalid arguments for 'call_function'")
    );
    // In the hide layout the same call changes the list.
    let hide = agent(&ScriptedChatClient::new(), CollapsingLayout::Hide)
        .build()
        .unwrap()
        .tool_session();
    assert!(
        hide.call_tool("h1", "MathTools", "{}")
            .await
            .unwrap()
            .tools_changed
    );
}

#[test]
fn the_layout_in_json_config() {
    let config = AgentConfig::from_json(r#"{"Collapsing": {"Layout": "Fixed"}}"#).unwrap();
    assert_eq!(config.collapsing.layout, CollapsingLayout::Fixed);
    assert_eq!(
        config.to_json(),
        "{\n  \"collapsing\": {\n    \"layout\": \"fixed\"\n  }\n}"
    );
    // The default layout is left out.
    let config = AgentConfig::from_json(r#"{"Collapsing": {"Layout": "Native"}}"#).unwrap();
    assert_eq!(config.collapsing.layout, CollapsingLayout::Native);
    assert_eq!(config.to_json(), "{}");
    let error = AgentConfig::from_json(r#"{"collapsing": {"layout": "flat"}}"#).unwrap_err();
    assert!(
        error.to_string().contains(
            "unknown collapsing layout 'flat'; expected one of hide, append, fixed, native"
        ),
        "{error}"
    );
    assert!(error.to_string().contains("collapsing.layout"), "{error}");
    let error =
        AgentConfig::from_json(r#"{"collapsing": {"layout": "fixed", "cache_stable": true}}"#)
            .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("cache_stable (true) contradicts layout \"fixed\""),
        "{error}"
    );
    let same =
        AgentConfig::from_json(r#"{"collapsing": {"layout": "append", "cache_stable": true}}"#)
            .unwrap();
    assert_eq!(same.collapsing.layout, CollapsingLayout::Append);
}

#[tokio::test]
async fn a_forced_member_goes_through_what_the_list_shows() {
    let _serial = SERIAL.lock().await;
    let options = hpd_agent::chat::ModelOptions::new()
        .with_tool_choice(hpd_agent::chat::ToolChoice::Tool("add".into()));
    let client = ScriptedChatClient::with_replies([
        through("c1", "add", json!({"a": 1, "b": 2})),
        ChatResponse::text("3"),
    ]);
    agent(&client, CollapsingLayout::Fixed)
        .with_model_options(options.clone())
        .build()
        .unwrap()
        .run("x")
        .await
        .unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[0].options.tool_choice,
        Some(hpd_agent::chat::ToolChoice::Tool(CALL_TOOL.into()))
    );
    // Forcing expanded the container first, as recovery would, so the call runs.
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "3\n\n## Active container instructions\n\n### MathTools\nUse exact arithmetic and show units when relevant.",
            false
        ))
    );
    assert_eq!(
        requests[1].options.tool_choice,
        Some(hpd_agent::chat::ToolChoice::Auto)
    );

    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolSearch);
    client.push(ChatResponse::text("no"));
    agent(&client, CollapsingLayout::Native)
        .with_model_options(options)
        .build()
        .unwrap()
        .run("x")
        .await
        .unwrap();
    assert_eq!(
        client.requests()[0].options.tool_choice,
        Some(hpd_agent::chat::ToolChoice::Required)
    );
}

#[tokio::test]
async fn a_container_opened_again_in_a_session_does_not_repeat_what_the_history_shows() {
    let _serial = SERIAL.lock().await;
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        ChatResponse::text("open"),
        call("c2", "MathTools", json!({})),
        ChatResponse::text("open again"),
    ]);
    let built = agent(&client, CollapsingLayout::Fixed).build().unwrap();
    let mut session = built.session();
    session.run("one").await.unwrap();
    session.run("two").await.unwrap();
    let requests = client.requests();
    let (first, _) = requests[1].tool_result("c1").unwrap();
    assert!(first.contains(r#"{"name":"add","#) && first.contains("### MathTools"));
    let (again, _) = requests[3].tool_result("c2").unwrap();
    assert_eq!(
        again,
        "MathTools is already open: its functions are add, multiply, divide, and their \
         parameters are in an earlier result. Calling MathTools again opens nothing new. Run the \
         function you need now through call_function: {\"name\": \"call_function\", \
         \"arguments\": {\"name\": \"<function>\", \"arguments\": {...}}}.\n\nMath tools are active."
    );
    assert_continuations(&requests);

    // Native: members already loaded are not referenced again.
    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    for reply in [
        call("c1", "MathTools", json!({})),
        ChatResponse::text("open"),
        call("c2", "MathTools", json!({})),
        ChatResponse::text("open again"),
    ] {
        client.push(reply);
    }
    let mut session = agent(&client, CollapsingLayout::Native)
        .build()
        .unwrap()
        .session();
    session.run("one").await.unwrap();
    session.run("two").await.unwrap();
    let loaded: Vec<Vec<String>> = session
        .history()
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { references, .. } => Some(references.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(loaded, [vec!["add", "multiply", "divide"], vec![]]);
}

/// In `fixed`, a model that calls a container again in the same turn (as a small model does,
/// repeating its last call) is told the container is already open and how to run its
/// functions, not given the opening text again; its next call through the call tool runs.
#[tokio::test]
async fn fixed_says_a_container_called_again_in_a_turn_is_already_open() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        call("c2", "MathTools", json!({})),
        through("c3", "add", json!({"a": 1, "b": 2})),
        ChatResponse::text("3"),
    ]);
    let out = agent(&client, CollapsingLayout::Fixed)
        .build()
        .unwrap()
        .run("add 1 and 2")
        .await
        .unwrap();
    assert_eq!(out.text, "3");
    let requests = client.requests();
    let (first, _) = requests[1].tool_result("c1").unwrap();
    assert!(
        first.starts_with("MathTools expanded. Available functions: add, multiply, divide\n\n")
            && first.contains(r#"{"name":"add","#),
        "{first}"
    );
    let (again, error) = requests[2].tool_result("c2").unwrap();
    assert!(!error);
    assert!(
        again.starts_with("MathTools is already open: its functions are add, multiply, divide,")
            && again.contains("Run the function you need now through call_function: ")
            && !again.contains(r#"{"name":"add","#),
        "{again}"
    );
    assert_eq!(executions(), ["MathTools.add"]);
    assert_continuations(&requests);
}

/// What is loaded stays loaded: in `fixed`, a member whose schema an earlier result showed runs
/// in a later turn through the call tool and by its own name, with its scoped pipeline created
/// afresh and no recovery answer; a member never shown is still recovered; an unknown name's
/// result lists the members the history shows among the names that can be called.
#[tokio::test]
async fn fixed_runs_members_the_history_shows_in_later_turns() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        ChatResponse::text("open"),
        // Turn two: no container call, straight to the members.
        ChatResponse::tool_calls(vec![
            through("c2", "add", json!({"a": 1, "b": 2})).tool_calls[0].clone(),
            ToolCall::new("c3", "multiply", json!({"a": 2, "b": 3}).to_string()),
            ToolCall::new("c4", "query", json!({"sql": "select 1"}).to_string()),
            ToolCall::new("c5", "sqrt", json!({"x": 4}).to_string()),
        ]),
        ChatResponse::text("done"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let built = agent(&client, CollapsingLayout::Fixed)
        .on_event(move |event| {
            if let AgentEvent::ContainerExpanded { harness, recovery } = event {
                seen.lock().unwrap().push((harness.clone(), *recovery));
            }
        })
        .build()
        .unwrap();
    let mut session = built.session();
    session.run("one").await.unwrap();
    let out = session.run("two").await.unwrap();
    assert_eq!(out.text, "done");
    let requests = client.requests();
    assert_eq!(requests.len(), 4, "one request fewer than with recovery");
    assert_eq!(requests[3].tool_result("c2"), Some(("3", false)));
    assert_eq!(requests[3].tool_result("c3"), Some(("6", false)));
    let (recovered, _) = requests[3].tool_result("c4").unwrap();
    assert!(
        recovered.starts_with(
            "DatabaseTools expanded. Available functions: query. Call query again to run it."
        ),
        "{recovered}"
    );
    assert_eq!(
        requests[3].tool_result("c5"),
        Some((
            "Function 'sqrt' not found. Available functions: get_weather, get_forecast, MathTools, FileTools, DatabaseTools, call_function, add, multiply, divide",
            true
        ))
    );
    assert_eq!(executions(), ["MathTools.add", "MathTools.multiply"]);
    // MathTools expands again (not a recovery) for the first call that needs it, once.
    assert_eq!(
        *events.lock().unwrap(),
        [
            ("MathTools".to_owned(), false),
            ("MathTools".to_owned(), false),
            ("DatabaseTools".to_owned(), true),
        ]
    );
    assert_continuations(&requests);
}

/// The model's call that opens `FileTools` in a native form: a search for it, or its container.
fn open_files(form: DeferredTools, id: &str) -> ChatResponse {
    match form {
        DeferredTools::ToolSearch => call(id, "tool_search", json!({"query": "FileTools"})),
        _ => call(id, "FileTools", json!({})),
    }
}

/// Runs two turns of a `native` session of the fixtures with the model's `replies`.
async fn two_native_turns(
    client: &ScriptedChatClient,
    replies: impl IntoIterator<Item = ChatResponse>,
) -> hpd_agent::Session {
    for reply in replies {
        client.push(reply);
    }
    let mut session = agent(client, CollapsingLayout::Native)
        .build()
        .unwrap()
        .session();
    session.run("one").await.unwrap();
    session.run("two").await.unwrap();
    session
}

/// In the native forms, a member loaded by an earlier result is called by its own name in a
/// later turn and runs, loading nothing again; its arguments are checked against its schema.
#[tokio::test]
async fn native_runs_members_loaded_in_earlier_turns() {
    let _serial = SERIAL.lock().await;
    for form in [DeferredTools::ToolReferences, DeferredTools::ToolSearch] {
        reset_logs();
        let client = ScriptedChatClient::new().with_deferred_tools(form);
        let session = two_native_turns(
            &client,
            [
                open_files(form, "c1"),
                ChatResponse::text("open"),
                ChatResponse::tool_calls(vec![
                    ToolCall::new("c2", "read_file", json!({"path": "a.txt"}).to_string()),
                    ToolCall::new("c3", "read_file", json!({"path": 5}).to_string()),
                ]),
                ChatResponse::text("done"),
            ],
        )
        .await;
        let requests = client.requests();
        assert_eq!(requests.len(), 4, "{form:?}");
        assert_eq!(
            requests[3].tool_result("c2"),
            Some(("contents of a.txt", false)),
            "{form:?}"
        );
        assert_eq!(
            requests[3].tool_result("c3"),
            Some((
                "Invalid arguments for 'read_file': at $.path: 5 is not of type \"string\"",
                true
            )),
            "{form:?}"
        );
        let loaded: Vec<Vec<String>> = session
            .history()
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool { references, .. } => Some(references.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            loaded,
            [
                vec!["read_file".to_owned(), "write_file".to_owned()],
                vec![],
                vec![]
            ],
            "{form:?}: nothing is loaded twice"
        );
        assert_eq!(executions(), ["FileTools.read_file"], "{form:?}");
        assert_continuations(&requests);
    }
}

/// In the native forms a container result that loads every member says so without listing them
/// (the definitions it loads name them); one that loads nothing new, as the container called
/// again in a later turn, lists them as before, since only the earlier result showed them.
#[tokio::test]
async fn a_native_result_that_loads_every_member_lists_none() {
    let _serial = SERIAL.lock().await;
    for form in [DeferredTools::ToolReferences, DeferredTools::ToolSearch] {
        let client = ScriptedChatClient::new().with_deferred_tools(form);
        two_native_turns(
            &client,
            [
                open_files(form, "c1"),
                ChatResponse::text("open"),
                open_files(form, "c2"),
                ChatResponse::text("open again"),
            ],
        )
        .await;
        let requests = client.requests();
        let (first, _) = requests[1].tool_result("c1").unwrap();
        assert!(
            first.starts_with(
                "FileTools expanded. Its functions are loaded.\n\n## Active container instructions"
            ) && !first.contains("Available functions"),
            "{form:?}: {first}"
        );
        let (again, _) = requests[3].tool_result("c2").unwrap();
        assert!(
            again.starts_with("FileTools expanded. Available functions: read_file, write_file"),
            "{form:?}: {again}"
        );
        assert_continuations(&requests);
    }
}

/// `hide` and `append` keep the seed's turn end: their members reach the model only through the
/// tool list, so a member called in a later turn is recovered.
#[tokio::test]
async fn hide_and_append_recover_members_after_turn_end() {
    let _serial = SERIAL.lock().await;
    for layout in [CollapsingLayout::Hide, CollapsingLayout::Append] {
        reset_logs();
        let client = ScriptedChatClient::with_replies([
            call("c1", "MathTools", json!({})),
            call("c2", "add", json!({"a": 1, "b": 2})),
            ChatResponse::text("3"),
            call("c3", "add", json!({"a": 1, "b": 2})),
            ChatResponse::text("again"),
        ]);
        let mut session = agent(&client, layout).build().unwrap().session();
        session.run("one").await.unwrap();
        session.run("two").await.unwrap();
        let requests = client.requests();
        let (recovered, _) = requests[4].tool_result("c3").unwrap();
        assert!(
            recovered.starts_with(
                "MathTools expanded. Available functions: add, multiply, divide. Call add again \
                 to run it."
            ),
            "{layout}: {recovered}"
        );
        assert_eq!(executions(), ["MathTools.add"], "{layout}");
    }
}

/// A definition the context budget trimmed away is no longer in the model's view: the member is
/// recovered again; with expansions kept across turns it runs all the same.
#[tokio::test]
async fn a_trimmed_definition_is_recovered_unless_expansions_are_kept() {
    let _serial = SERIAL.lock().await;
    for keep in [false, true] {
        reset_logs();
        let client = ScriptedChatClient::with_replies([
            call("c1", "MathTools", json!({})),
            ChatResponse::text("open"),
            ChatResponse::text("chat"),
            through("c2", "add", json!({"a": 1, "b": 2})),
            ChatResponse::text("done"),
        ]);
        let mut session = agent(&client, CollapsingLayout::Fixed)
            .configure_harness_collapsing(|c| c.keep_expansions_across_turns = keep)
            .with_context_budget(hpd_agent::config::ContextBudget::messages(3))
            .build()
            .unwrap()
            .session();
        session.run("one").await.unwrap();
        session.run("two").await.unwrap();
        session.run("three").await.unwrap();
        let requests = client.requests();
        let last = requests.last().unwrap();
        assert!(
            last.messages.iter().all(|m| !matches!(
                m,
                ChatMessage::Tool { call_id, .. } if call_id == "c1"
            )),
            "the budget trimmed the container result"
        );
        let (text, _) = last.tool_result("c2").unwrap();
        if keep {
            assert_eq!(text, "3");
            assert_eq!(executions(), ["MathTools.add"]);
        } else {
            assert!(text.contains("Call add again to run it."), "{text}");
            assert!(executions().is_empty());
        }
    }
}

/// Opening ahead: the container the user's message names is opened before the first request
/// (in `fixed`, its answer is added to the user's message; in `native`, as the model's own call
/// would have opened it), so the model calls the member at once; a later turn does not open it
/// again, and `hide` never opens ahead.
#[tokio::test]
async fn open_ahead_opens_the_container_the_message_needs() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        through("c1", "multiply", json!({"a": 6, "b": 7})),
        ChatResponse::text("42"),
        through("c2", "add", json!({"a": 1, "b": 1})),
        ChatResponse::text("2"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let mut session = agent(&client, CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(1.0))
        .on_event(move |event| {
            if let AgentEvent::ContainerExpanded { harness, recovery } = event {
                seen.lock().unwrap().push((harness.clone(), *recovery));
            }
        })
        .build()
        .unwrap()
        .session();
    assert_eq!(
        session.run("Multiply 6 by 7, please.").await.unwrap().text,
        "42"
    );
    assert_eq!(
        session
            .run("Now add one and one: multiply no more.")
            .await
            .unwrap()
            .text,
        "2"
    );
    let requests = client.requests();
    assert_eq!(requests.len(), 4, "no container round trip");
    // The first request already holds the opening, in the user's message: the container's
    // answer with the members' schemas, after the user's own text. No container call is in
    // the history, so the model has none to repeat.
    let first = &requests[0].messages;
    assert_eq!(first.len(), 1, "{first:?}");
    let ChatMessage::User { content } = &first[0] else {
        panic!("the user's message: {first:?}");
    };
    let (own, opened) = content
        .split_once("\n\nOpened for this message, so there is no need to call them: MathTools.\n\n")
        .expect("the opening follows the user's text");
    assert_eq!(own, "Multiply 6 by 7, please.");
    assert!(
        // The note named the container, and the schema lines name its members: the
        // container's own first line, with their list, is left out.
        opened.starts_with(
            "MathTools: call its functions through call_function, as {\"name\": \
             \"call_function\", \"arguments\": {\"name\": \"<function>\", \"arguments\": \
             {...}}}:\n{\"name\":\"add\","
        ) && !opened.contains("Available functions")
            && opened.contains(r#"{"name":"multiply","#)
            // "by" is in `divide`'s description too ("Divides a by b"), but a function word
            // ranks nothing: `multiply` is named alone.
            && opened.ends_with(
                "\n\nOf the functions of MathTools, multiply fits the request best. Run it now: \
                 {\"name\": \"call_function\", \"arguments\": {\"name\": \"multiply\", \
                 \"arguments\": {\"a\": <a>, \"b\": <b>}}}.\n\nThe request again: Multiply 6 by \
                 7, please."
            ),
        "{opened}"
    );
    // The second turn names MathTools again: its schemas are in the history, so nothing more
    // is opened, and `add` runs at once.
    assert_eq!(requests[2].messages.len(), requests[1].messages.len() + 2);
    assert_eq!(requests[3].tool_result("c2"), Some(("2", false)));
    assert_eq!(executions(), ["MathTools.multiply", "MathTools.add"]);
    assert_eq!(
        *events.lock().unwrap(),
        [
            ("MathTools".to_owned(), false),
            ("MathTools".to_owned(), false)
        ]
    );
    assert_continuations(&requests);

    // Native with tool references: the opening's result loads the members.
    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    client.push(call("c1", "read_file", json!({"path": "a.txt"})));
    client.push(ChatResponse::text("read"));
    let mut session = agent(&client, CollapsingLayout::Native)
        .configure_harness_collapsing(|c| c.open_ahead = Some(1.0))
        .build()
        .unwrap()
        .session();
    session.run("Read the file a.txt").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    let loaded: Vec<Vec<String>> = requests[0]
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { references, .. } => Some(references.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(loaded, [vec!["read_file", "write_file"]]);
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("contents of a.txt", false))
    );

    // `hide` changes the tool list on an expansion: it never opens ahead, nor does a message
    // that names no container well enough.
    for (layout, message) in [
        (CollapsingLayout::Hide, "Multiply 6 by 7"),
        (CollapsingLayout::Fixed, "What a nice day"),
    ] {
        let client = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
        agent(&client, layout)
            .configure_harness_collapsing(|c| c.open_ahead = Some(1.0))
            .build()
            .unwrap()
            .run(message)
            .await
            .unwrap();
        assert_eq!(
            client.requests()[0].messages.len(),
            1,
            "{layout}: {message}"
        );
    }
}

#[test]
fn open_ahead_in_json_config() {
    let read = |text: &str| AgentConfig::from_json(text).map(|c| c.collapsing.open_ahead);
    assert_eq!(
        read(r#"{}"#).unwrap(),
        Some(hpd_agent::config::DEFAULT_OPEN_AHEAD)
    );
    assert_eq!(
        read(r#"{"collapsing": {"open_ahead": 2.5}}"#).unwrap(),
        Some(2.5)
    );
    assert_eq!(
        read(r#"{"collapsing": {"open_ahead": true}}"#).unwrap(),
        Some(hpd_agent::config::DEFAULT_OPEN_AHEAD)
    );
    assert_eq!(
        read(r#"{"collapsing": {"open_ahead": false}}"#).unwrap(),
        None
    );
    let error = read(r#"{"collapsing": {"open_ahead": -1}}"#).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("open_ahead must be a score of 0 or more"),
        "{error}"
    );
    let error = read(r#"{"collapsing": {"open_ahead": "yes"}}"#).unwrap_err();
    assert!(
        error.to_string().contains("collapsing.open_ahead"),
        "{error}"
    );
    // Written back as read.
    let mut config = AgentConfig::default();
    config.collapsing.open_ahead = Some(2.5);
    let text = config.to_json();
    assert!(text.contains(r#""open_ahead": 2.5"#), "{text}");
    assert_eq!(AgentConfig::from_json(&text).unwrap(), config);
    // Off, against the default, is written as `false`; the default is not written.
    config.collapsing.open_ahead = None;
    let text = config.to_json();
    assert!(text.contains(r#""open_ahead": false"#), "{text}");
    assert_eq!(AgentConfig::from_json(&text).unwrap(), config);
    assert!(!AgentConfig::default().to_json().contains("open_ahead"));
}

/// `container_notes` in `fixed`: a response whose calls are all answered by the layout (a
/// container opened, a member recovered) leaves a note in the user's turn instead of the calls
/// and their results, so the model has no container call of its own to repeat; the calls are
/// still reported; what the note shows stays loaded in later turns; a response that also runs a
/// function keeps its calls and results; `hide` is unchanged.
#[tokio::test]
async fn container_notes_answer_container_calls_in_the_users_turn() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        // Called again: a note says it is open and names the member that fits the message.
        call("c1b", "MathTools", json!({})),
        through("c2", "add", json!({"a": 1, "b": 2})),
        ChatResponse::text("3"),
        // Turn two: a member shown by the note runs at once; one never shown is recovered
        // in a note of its own, with the assistant's words kept.
        through("c3", "query", json!({"sql": "select 1"})).with_text("Let me look."),
        ChatResponse::tool_calls(vec![
            through("c4", "query", json!({"sql": "select 1"})).tool_calls[0].clone(),
            ToolCall::new("c5", "multiply", json!({"a": 2, "b": 3}).to_string()),
        ]),
        ChatResponse::text("done"),
        // Turn three: a container call beside a function that runs: tool results as always.
        ChatResponse::tool_calls(vec![
            ToolCall::new("c6", "FileTools", "{}"),
            ToolCall::new("c7", "get_weather", json!({"city": "Oslo"}).to_string()),
        ]),
        ChatResponse::text("ok"),
    ]);
    let (builder, completed) = noted(&client, CollapsingLayout::Fixed);
    let mut session = builder.build().unwrap().session();
    assert_eq!(session.run("Add 1 and 2.").await.unwrap().text, "3");
    assert_eq!(
        session.run("Query and multiply.").await.unwrap().text,
        "done"
    );
    assert_eq!(session.run("Files and weather.").await.unwrap().text, "ok");
    let requests = client.requests();
    assert_eq!(requests.len(), 9);

    // The second request: the user's message, then the note; no container call, no result.
    let second = &requests[1].messages;
    assert_eq!(second.len(), 2, "{second:?}");
    let ChatMessage::User { content: note } = &second[1] else {
        panic!("a note in the user's turn: {second:?}");
    };
    let opened = note
        .strip_prefix("Opened for this message, so there is no need to call them: MathTools.\n\n")
        .expect("the note names the container");
    assert!(
        opened.starts_with("MathTools: call its functions through call_function, as ")
            && !opened.contains("Available functions")
            && opened.contains(r#"{"name":"add","#)
            && opened.ends_with(
                "\n\nOf the functions of MathTools, add fits the request best. Run it now: \
                 {\"name\": \"call_function\", \"arguments\": {\"name\": \"add\", \
                 \"arguments\": {\"a\": <a>, \"b\": <b>}}}.\n\nThe request again: Add 1 and 2."
            ),
        "{opened}"
    );
    let third = &requests[2].messages;
    assert_eq!(third.len(), 3, "{third:?}");
    let ChatMessage::User { content: again } = &third[2] else {
        panic!("a second note: {third:?}");
    };
    assert!(
        again.starts_with(
            "Opened for this message, so there is no need to call them: MathTools.\n\n\
             MathTools is already open: its functions are add, multiply, divide,"
        ) && again.contains(
            "\n\nOf the functions of MathTools, add fits the request best. Its parameters:\n\
             {\"name\":\"add\",\"description\":\"Adds two integers.\","
        ) && again.contains(
            "Run it now: {\"name\": \"call_function\", \"arguments\": {\"name\": \"add\", \
             \"arguments\": {\"a\": <a>, \"b\": <b>}}}.\n\nThe request again: Add 1 and 2."
        ),
        "{again}"
    );
    assert_eq!(requests[3].tool_result("c2"), Some(("3", false)));

    // Turn two's recovery: the assistant's text stays, its call gives way to the note.
    let fifth = &requests[5].messages;
    let tail = &fifth[fifth.len() - 3..];
    assert_eq!(tail[0], ChatMessage::user("Query and multiply."));
    assert_eq!(
        tail[1],
        ChatMessage::Assistant {
            content: Some("Let me look.".to_owned()),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        }
    );
    let ChatMessage::User { content: recovered } = &tail[2] else {
        panic!("a note: {tail:?}");
    };
    assert!(
        recovered.starts_with(
            "Opened for this message, so there is no need to call them: DatabaseTools.\n\n\
             DatabaseTools expanded. Available functions: query. Call query again to run it."
        ) && recovered.ends_with("The request again: Query and multiply."),
        "{recovered}"
    );
    assert_eq!(requests[6].tool_result("c4"), Some(("result", false)));
    // `multiply`'s schema came with the first note: it runs in turn two without opening.
    assert_eq!(requests[6].tool_result("c5"), Some(("6", false)));

    // Turn three: the container's answer is a tool result beside the weather's.
    let (files, _) = requests[8].tool_result("c6").unwrap();
    assert!(files.starts_with("FileTools expanded."), "{files}");
    assert!(requests[8].tool_result("c7").is_some());

    assert_eq!(
        executions(),
        [
            "MathTools.add",
            "DatabaseTools.query",
            "MathTools.multiply",
            "WeatherTools.get_weather"
        ]
    );
    // Every call was reported finished, the noted ones too.
    assert_eq!(
        *completed.lock().unwrap(),
        ["c1", "c1b", "c2", "c3", "c4", "c5", "c6", "c7"]
    );
    assert_continuations(&requests);
}

/// In `fixed`, a note of two containers gives each one's schema lines under a line that names
/// its harness, and neither container's list of members (the note names the containers, the
/// schema lines the members); what the history shows of them stays loaded.
#[tokio::test]
async fn a_note_of_two_containers_says_whose_functions_follow() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "MathTools", "{}"),
            ToolCall::new("c2", "DatabaseTools", "{}"),
        ]),
        through("c3", "add", json!({"a": 2, "b": 2})),
        ChatResponse::text("4"),
    ]);
    let (builder, _) = noted(&client, CollapsingLayout::Fixed);
    let mut session = builder.build().unwrap().session();
    assert_eq!(session.run("Add 2 and 2.").await.unwrap().text, "4");
    let requests = client.requests();
    let ChatMessage::User { content: note } = &requests[1].messages[1] else {
        panic!("a note: {:?}", requests[1].messages);
    };
    let opened = note
        .strip_prefix(
            "Opened for this message, so there is no need to call them: MathTools, \
             DatabaseTools.\n\n",
        )
        .expect("the note names both containers");
    let math = "MathTools: call its functions through call_function, as {\"name\": \
                \"call_function\", \"arguments\": {\"name\": \"<function>\", \"arguments\": \
                {...}}}:\n{\"name\":\"add\",";
    assert!(opened.starts_with(math), "{opened}");
    let database = opened
        .find("\n\nDatabaseTools: call its functions through call_function, as ")
        .expect("the second container's line names it");
    assert!(
        opened[database..].contains("}}}:\n{\"name\":\"query\","),
        "{opened}"
    );
    // Each harness's schema lines come before the next harness's line.
    let multiply = opened.find(r#"{"name":"multiply","#).unwrap();
    assert!(multiply < database, "{opened}");
    assert!(!opened.contains("Available functions"), "{opened}");
    assert!(
        opened.ends_with("The request again: Add 2 and 2."),
        "{opened}"
    );
    assert_eq!(requests[2].tool_result("c3"), Some(("4", false)));
    assert_continuations(&requests);
}

/// In `hide` and `append` a note answers a response of container calls as in `fixed`, and its
/// hint is the member's own call (the members are in the next request's tool list under their
/// own names); a call that sends the hint's placeholder back is refused before the member
/// runs, and the same call with values runs. With notes off, the container call and its
/// result stay.
#[tokio::test]
async fn container_notes_in_hide_and_append_name_the_members_own_call() {
    let _serial = SERIAL.lock().await;
    for layout in [CollapsingLayout::Hide, CollapsingLayout::Append] {
        reset_logs();
        let client = ScriptedChatClient::with_replies([
            call("c1", "MathTools", json!({})),
            call("c2", "add", json!({"a": "<a>", "b": 2})),
            call("c3", "add", json!({"a": 1, "b": 2})),
            ChatResponse::text("3"),
        ]);
        let (builder, completed) = noted(&client, layout);
        let answer = builder.build().unwrap().run("Add 1 and 2.").await.unwrap();
        assert_eq!(answer.text, "3", "{layout}");
        let requests = client.requests();
        assert_eq!(requests.len(), 4, "{layout}");
        let second = &requests[1].messages;
        assert_eq!(second.len(), 2, "{layout}: {second:?}");
        let ChatMessage::User { content: note } = &second[1] else {
            panic!("{layout}: a note in the user's turn: {second:?}");
        };
        // The container's system prompt: in `append` carried by its answer, so by the note; in
        // `hide` in the system text.
        let instructions = "## Active container instructions\n\n### MathTools\n\
                            Use exact arithmetic and show units when relevant.\n\n";
        let carried = if layout == CollapsingLayout::Append {
            instructions
        } else {
            assert!(
                requests[1].instructions.ends_with(instructions.trim_end()),
                "{layout}: {}",
                requests[1].instructions
            );
            ""
        };
        assert_eq!(
            *note,
            format!(
                "Opened for this message, so there is no need to call them: MathTools.\n\n\
                 MathTools expanded. Available functions: add, multiply, divide\n\n\
                 Math tools are active.\n\n{carried}\
                 Of the functions of MathTools, add fits the request best. Run it now: \
                 {{\"name\": \"add\", \"arguments\": {{\"a\": <a>, \"b\": <b>}}}}.\n\n\
                 The request again: Add 1 and 2."
            ),
            "{layout}"
        );
        // The members are in the list from the request after the note.
        let names = requests[1].tool_names();
        assert!(names.contains(&"add"), "{layout}: {names:?}");
        assert!(!requests[0].tool_names().contains(&"add"), "{layout}");
        let (refused, is_error) = requests[2].tool_result("c2").unwrap();
        assert!(
            is_error && refused.contains("at $.a: \"<a>\" is the placeholder of an outlined call"),
            "{layout}: {refused}"
        );
        assert_eq!(
            requests[3].tool_result("c3"),
            Some(("3", false)),
            "{layout}"
        );
        assert_eq!(executions(), ["MathTools.add"], "{layout}");
        assert_eq!(*completed.lock().unwrap(), ["c1", "c2", "c3"], "{layout}");

        // Notes off: the container call and its result stay.
        let client = ScriptedChatClient::with_replies([
            call("c1", "MathTools", json!({})),
            ChatResponse::text("open"),
        ]);
        agent(&client, layout)
            .build()
            .unwrap()
            .run("Add 1 and 2.")
            .await
            .unwrap();
        let requests = client.requests();
        let (expanded, _) = requests[1].tool_result("c1").unwrap();
        assert!(
            expanded.starts_with("MathTools expanded."),
            "{layout}: {expanded}"
        );
    }
}

#[tokio::test]
async fn a_note_names_the_container_that_fits_the_request_when_the_model_opened_another() {
    let _serial = SERIAL.lock().await;
    let note_of = |requests: &[RecordedRequest]| -> String {
        let messages = &requests[1].messages;
        let Some(ChatMessage::User { content }) = messages.last() else {
            panic!("a note in the user's turn: {messages:?}");
        };
        content.clone()
    };
    let pointer = "FileTools (File operations) fits the request better than MathTools. If the \
                   request is for it, open it: {\"name\": \"FileTools\", \"arguments\": {}}.";
    for layout in [
        CollapsingLayout::Hide,
        CollapsingLayout::Append,
        CollapsingLayout::Fixed,
    ] {
        reset_logs();
        // The model opens MathTools for a request that is FileTools': the note points to it,
        // after MathTools' answer, and before the request again.
        let client = ScriptedChatClient::with_replies([
            call("c1", "MathTools", json!({})),
            call("c2", "FileTools", json!({})),
            ChatResponse::text("done"),
        ]);
        let (builder, _) = noted(&client, layout);
        let message = "Read the file notes.txt and show its text.";
        builder.build().unwrap().run(message).await.unwrap();
        let requests = client.requests();
        let note = note_of(&requests);
        assert!(
            note.contains(&format!("{pointer}\n\nThe request again: {message}")),
            "{layout}: {note}"
        );
        assert!(
            note.starts_with(
                "Opened for this message, so there is no need to call them: MathTools."
            ),
            "{layout}: {note}"
        );
        // Opened as it says, FileTools is answered in a note without a pointer: it fits.
        let last = requests[2].messages.last();
        let Some(ChatMessage::User { content: second }) = last else {
            panic!("{layout}: a second note: {last:?}");
        };
        assert!(
            second.contains("FileTools") && !second.contains("fits the request better"),
            "{layout}: {second}"
        );

        // A request for the container the model opened gets no pointer, nor one that fits no
        // container well enough.
        for message in ["Add 1 and 2.", "Write a haiku about autumn."] {
            let client = ScriptedChatClient::with_replies([
                call("c1", "MathTools", json!({})),
                ChatResponse::text("done"),
            ]);
            let (builder, _) = noted(&client, layout);
            builder.build().unwrap().run(message).await.unwrap();
            let note = note_of(&client.requests());
            assert!(
                !note.contains("fits the request better"),
                "{layout}, {message}: {note}"
            );
        }
    }

    // Without notes the container's result stays as the model made it, with no pointer.
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        ChatResponse::text("done"),
    ]);
    agent(&client, CollapsingLayout::Hide)
        .build()
        .unwrap()
        .run("Read the file notes.txt and show its text.")
        .await
        .unwrap();
    let requests = client.requests();
    let (result, _) = requests[1].tool_result("c1").unwrap();
    assert!(!result.contains("fits the request better"), "{result}");
}

#[test]
fn container_notes_in_json_config() {
    let read = |text: &str| AgentConfig::from_json(text).map(|c| c.collapsing.container_notes);
    assert!(read(r#"{}"#).unwrap());
    assert!(read(r#"{"collapsing": {"container_notes": true}}"#).unwrap());
    assert!(!read(r#"{"collapsing": {"container_notes": false}}"#).unwrap());
    let error = read(r#"{"collapsing": {"container_notes": "yes"}}"#).unwrap_err();
    assert!(
        error.to_string().contains("collapsing.container_notes"),
        "{error}"
    );
    let mut config = AgentConfig::default();
    config.collapsing.container_notes = false;
    let text = config.to_json();
    assert!(text.contains(r#""container_notes": false"#), "{text}");
    assert_eq!(AgentConfig::from_json(&text).unwrap(), config);
    assert!(!AgentConfig::default().to_json().contains("container_notes"));
}

/// The defaults: `native` with opening ahead from `DEFAULT_OPEN_AHEAD` and container answers
/// as notes. On a client without deferred loading (`fixed`), a container call leaves a note in
/// the user's turn; a message that ranks no container that high opens nothing; with tool
/// references the container's result stays a tool result that loads the members, and no note
/// is written.
#[tokio::test]
async fn the_default_is_native_with_notes_and_opening_ahead() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let defaults = hpd_agent::config::CollapsingConfig::default();
    assert_eq!(defaults.layout, CollapsingLayout::Native);
    assert_eq!(
        defaults.open_ahead,
        Some(hpd_agent::config::DEFAULT_OPEN_AHEAD)
    );
    assert!(defaults.container_notes);
    let fixtures = |client: &ScriptedChatClient| {
        AgentBuilder::new()
            .with_tool_harness::<MathTools>()
            .with_tool_harness::<FileTools>()
            .with_chat_client(client.clone())
    };

    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", json!({})),
        through("c2", "add", json!({"a": 2, "b": 3})),
        ChatResponse::text("5"),
    ]);
    let out = fixtures(&client)
        .build()
        .unwrap()
        .run("What is 2 + 3?")
        .await;
    assert_eq!(out.unwrap().text, "5");
    let requests = client.requests();
    // Nothing ranked high enough: the first request is the user's message alone.
    assert_eq!(requests[0].messages, [ChatMessage::user("What is 2 + 3?")]);
    let ChatMessage::User { content } = &requests[1].messages[1] else {
        panic!(
            "a note follows the user's message: {:?}",
            requests[1].messages
        );
    };
    assert!(
        content
            .starts_with("Opened for this message, so there is no need to call them: MathTools.")
            && content.contains(r#"{"name":"add","#)
            && content.ends_with("The request again: What is 2 + 3?"),
        "{content}"
    );
    assert_eq!(requests[1].tool_result("c1"), None);
    assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
    assert_eq!(executions(), ["MathTools.add"]);

    let client = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    client.push(call("c1", "MathTools", json!({})));
    client.push(call("c2", "add", json!({"a": 2, "b": 3})));
    client.push(ChatResponse::text("5"));
    fixtures(&client)
        .build()
        .unwrap()
        .run("What is 2 + 3?")
        .await
        .unwrap();
    let requests = client.requests();
    assert!(
        requests[1]
            .tool_result("c1")
            .is_some_and(|(text, _)| text.starts_with("MathTools expanded.")),
        "{:?}",
        requests[1].messages
    );
    assert!(requests[1].messages.iter().all(|m| match m {
        ChatMessage::User { content } => !content.contains("Opened for this message"),
        _ => true,
    }));
    assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
}

/// In `fixed`, a call through the call tool that writes `null` for an optional parameter
/// whose schema rejects `null` runs without that key (the form small models and strict modes
/// write for "left out"); a `null` for a required parameter is still a mismatch, and the
/// function never runs with it. A note's hint for a member that takes no parameters gives
/// `"arguments": {}` in its call.
#[tokio::test]
async fn fixed_drops_the_nulls_of_optional_parameters_and_hints_whole_calls() {
    let _serial = SERIAL.lock().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let think = Tool::new(
        "think",
        "Records one thought.",
        json!({
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "branch": {"type": "integer", "minimum": 1}
            },
            "required": ["thought"],
            "additionalProperties": false
        }),
        move |arguments, _| {
            sink.lock().unwrap().push(arguments.to_string());
            async { ToolResult::ok("noted") }
        },
    );
    let graph = Tool::new(
        "read_graph",
        "Reads the whole knowledge graph.",
        json!({"type": "object", "properties": {}}),
        |_, _| async { ToolResult::ok("graph") },
    );
    let notes = HarnessBuilder::new("Notes")
        .with_collapse("Thoughts and the knowledge graph")
        .with_tool(think)
        .with_tool(graph)
        .build()
        .unwrap();
    let client = ScriptedChatClient::with_replies([
        through("c1", "think", json!({"thought": "a", "branch": null})),
        through("c2", "think", json!({"thought": null})),
        ChatResponse::text("done"),
    ]);
    let out = AgentBuilder::new()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(0.1))
        .with_harness(notes)
        .with_chat_client(client.clone())
        .build()
        .unwrap()
        .run("Read the knowledge graph.")
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    let requests = client.requests();
    let ChatMessage::User { content } = &requests[0].messages[0] else {
        panic!("the user's message: {:?}", requests[0].messages);
    };
    assert!(
        content.ends_with(
            "\n\nOf the functions of Notes, read_graph fits the request best. Run it now: \
             {\"name\": \"call_function\", \"arguments\": {\"name\": \"read_graph\", \
             \"arguments\": {}}}.\n\nThe request again: Read the knowledge graph."
        ),
        "{content}"
    );
    assert_eq!(requests[1].tool_result("c1"), Some(("noted", false)));
    assert_eq!(
        requests[2].tool_result("c2"),
        Some((
            "Invalid arguments for 'think': at $.thought: null is not of type \"string\"",
            true
        ))
    );
    // The body saw the arguments without the dropped key, once.
    assert_eq!(*seen.lock().unwrap(), [r#"{"thought":"a"}"#]);
    assert_continuations(&requests);
}

/// A note's hint outlines the arguments of the call it shows: the required parameters with
/// placeholders naming them (nested arrays and objects too), then the optional ones by name.
/// A small model copies the hint's call, so `{...}` lost required arguments and the required
/// ones alone lost an optional one the request asked for (`BENCHMARKS.md`, "Ninth run").
#[tokio::test]
async fn fixed_hints_outline_the_arguments_of_their_call() {
    let _serial = SERIAL.lock().await;
    let observe = Tool::new(
        "add_observations",
        "Adds observations to entities of the knowledge graph.",
        json!({
            "type": "object",
            "properties": {
                "observations": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "entityName": {"type": "string"},
                        "contents": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["entityName", "contents"]
                }},
                "source": {"type": "string"},
                "confidence": {"type": "number"}
            },
            "required": ["observations"]
        }),
        |_, _| async { ToolResult::ok("added") },
    );
    let list = Tool::new(
        "list_entities",
        "Lists the entities.",
        json!({"type": "object", "properties": {}}),
        |_, _| async { ToolResult::ok("none") },
    );
    let graph = HarnessBuilder::new("Graph")
        .with_collapse("The knowledge graph")
        .with_tool(observe)
        .with_tool(list)
        .build()
        .unwrap();
    let client = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    AgentBuilder::new()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(0.1))
        .with_harness(graph)
        .with_chat_client(client.clone())
        .build()
        .unwrap()
        .run("Add the observation 'born in 1815' to the entity Ada.")
        .await
        .unwrap();
    let requests = client.requests();
    let ChatMessage::User { content } = &requests[0].messages[0] else {
        panic!("the user's message: {:?}", requests[0].messages);
    };
    assert!(
        content.contains(
            "Of the functions of Graph, add_observations fits the request best. Run it now: \
             {\"name\": \"call_function\", \"arguments\": {\"name\": \"add_observations\", \
             \"arguments\": {\"observations\": [{\"contents\": [\"<contents>\"], \
             \"entityName\": \"<entityName>\"}]}}} (optional arguments: confidence, source).\
             \n\nThe request again:"
        ),
        "{content}"
    );
}

/// A model that copies the hint's outlined call without filling it in (`{"path": "<path>"}`)
/// gets an error naming the placeholder's path, and the member does not run on the name it made
/// up; the call written with the request's value then runs.
#[tokio::test]
async fn fixed_refuses_a_hints_placeholder_sent_back_as_a_value() {
    let _serial = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        through("c1", "read_file", json!({"path": "<path>"})),
        through("c2", "read_file", json!({"path": "a.txt"})),
        ChatResponse::text("done"),
    ]);
    let built = agent(&client, CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(0.1))
        .build()
        .unwrap();
    assert_eq!(
        built.run("Read the file a.txt.").await.unwrap().text,
        "done"
    );
    let requests = client.requests();
    let ChatMessage::User { content } = &requests[0].messages[0] else {
        panic!("the user's message: {:?}", requests[0].messages);
    };
    assert!(
        content.contains(r#""arguments": {"path": "<path>"}"#),
        "the hint outlines the call: {content}"
    );
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Invalid arguments for 'read_file': at $.path: \"<path>\" is the placeholder of an \
             outlined call, not a value: write in its place the value the request gives",
            true
        ))
    );
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("contents of a.txt", false))
    );
    assert_eq!(executions(), ["FileTools.read_file"]);
}

/// A note's hint does not name a member whose description says it is deprecated while another
/// member fits the message at least half as well: the deprecated twin of a function (same
/// words, "DEPRECATED: Use ... instead") ranks as high as its replacement, and the model runs
/// whatever the hint names. When the deprecated member is the only one that fits well, the
/// hint names it.
#[tokio::test]
async fn fixed_hints_never_name_a_deprecated_member_beside_its_replacement() {
    let _serial = SERIAL.lock().await;
    let reader = |name: &str, description: &str| {
        Tool::new(
            name,
            description,
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            |_, _| async { ToolResult::ok("text") },
        )
    };
    let files = || {
        HarnessBuilder::new("Files")
            .with_collapse("Reading files")
            .with_tool(reader(
                "read_file",
                "Read the complete contents of a file as text. DEPRECATED: Use read_text_file \
                 instead.",
            ))
            .with_tool(reader(
                "read_text_file",
                "Read the complete contents of a file from the file system as text. Handles \
                 various text encodings and provides detailed error messages if the file \
                 cannot be read. Only works within allowed directories.",
            ))
            .with_tool(reader(
                "list_archive",
                "List an old archive, deprecated format.",
            ))
            .build()
            .unwrap()
    };
    let hint = |message: &'static str| async move { opened_ahead_hint(files(), message).await };
    // `read_file` ranks first on these words (its name is two of them, and its document is
    // the shortest), yet the hint names its replacement.
    assert_eq!(
        hint_names(&hint("Read the text file notes.txt.").await),
        ["read_text_file"]
    );
    // The deprecated member is the one that fits (the others share only "the"): it is named.
    assert_eq!(
        hint_names(&hint("List the archive.").await),
        ["list_archive"]
    );
}

/// For a message that asks for no change, a hint does not name a member annotated as changing
/// things while a member that is not fits the message: the Git server's `git_commit` ranked
/// first for "Show the last 3 commits" (the plural reads as "commit"), and a small model ran
/// it. A message that asks for the change still gets the member that makes it, and a member
/// without annotations is taken as it comes.
#[tokio::test]
async fn hints_leave_out_members_that_change_things_for_a_request_that_only_reads() {
    let _serial = SERIAL.lock().await;
    let git = |annotated: bool| {
        let member = |name: &str, description: &str, annotations: ToolAnnotations| {
            let tool = Tool::new(
                name,
                description,
                json!({"type": "object", "properties": {"repo_path": {"type": "string"}}}),
                |_, _| async { ToolResult::ok("done") },
            );
            if annotated {
                tool.with_annotations(annotations)
            } else {
                tool
            }
        };
        let writes = ToolAnnotations::new().with_read_only(false);
        HarnessBuilder::new("Git")
            .with_collapse("Git repository tools")
            .with_tool(member(
                "git_commit",
                "Records changes to the repository",
                writes,
            ))
            .with_tool(member(
                "git_log",
                "Shows the commit logs",
                ToolAnnotations::read_only(),
            ))
            .with_tool(member(
                "git_reset",
                "Unstages all staged changes",
                writes.with_destructive(true),
            ))
            .with_tool(member(
                "git_status",
                "Shows the working tree status",
                ToolAnnotations::new(),
            ))
            .build()
            .unwrap()
    };
    let hint = |annotated: bool, message: &'static str| async move {
        hint_names(&opened_ahead_hint(git(annotated), message).await)
    };
    let reading = "Show the last 3 commits of the repository at /tmp/repo.";
    // Unannotated, the writer ranks first on the request's words.
    assert_eq!(
        hint(false, reading).await.first().map(String::as_str),
        Some("git_commit")
    );
    let named = hint(true, reading).await;
    assert!(!named.iter().any(|n| n == "git_commit"), "{named:?}");
    assert!(named.iter().any(|n| n == "git_log"), "{named:?}");
    // Asked for, the change is named.
    assert_eq!(
        hint(true, "Commit the changes of the repository at /tmp/repo.")
            .await
            .first()
            .map(String::as_str),
        Some("git_commit")
    );
    // Where only members that change things fit, they are named rather than none.
    let named = hint(true, "Unstaged changes, please.").await;
    assert!(named.iter().any(|n| n == "git_reset"), "{named:?}");
}

/// The note (with its hint) that opening ahead adds to the user's `message` for `harness`,
/// its only harness, in `fixed`.
async fn opened_ahead_hint(harness: DynamicHarness, message: &str) -> String {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    AgentBuilder::new()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(0.1))
        .with_harness(harness)
        .with_chat_client(client.clone())
        .build()
        .unwrap()
        .run(message)
        .await
        .unwrap();
    let requests = client.requests();
    let ChatMessage::User { content } = &requests[0].messages[0] else {
        panic!("the user's message: {:?}", requests[0].messages);
    };
    content.clone()
}

/// The members a hint in `content` names, best first: one named alone ("X fits the request
/// best"), or the listed ones ("these fit the request best:" then "- X: ...").
fn hint_names(content: &str) -> Vec<String> {
    let (_, rest) = content
        .split_once("Of the functions of ")
        .unwrap_or_else(|| panic!("no hint in {content}"));
    let (_, rest) = rest.split_once(", ").expect("the harness's name ends");
    if let Some((name, _)) = rest.split_once(" fits the request best") {
        return vec![name.to_owned()];
    }
    let list = rest
        .strip_prefix("these fit the request best:")
        .unwrap_or_else(|| panic!("a hint of an unknown form: {rest}"));
    // The list starts on the line after the colon.
    list.lines()
        .skip(1)
        .map_while(|line| line.strip_prefix("- "))
        .map(|line| line.split_once(':').expect("a listed member").0.to_owned())
        .collect()
}

/// Where several members score close on the request's words, the hint lists them (up to
/// three, best first, each with the first sentence of its description and its call) for the
/// model to choose: a lexical ranking put `add_observations` first for "Add an entity ...
/// with the observation ...", and a small model runs the one member a hint names
/// (`BENCHMARKS.md`, "Tenth run"). One member far ahead is named alone, and the harness's own
/// name, which some members carry (an MCP server's `Memory_list_resources`), ranks no member.
/// The request's verb, "Record", is neither member's, so both are listed, the one with the
/// shorter description first (BM25 weighs a word of a shorter text more); "Add" reads as
/// `create` in the ranking and names `create_relations` alone.
#[tokio::test]
async fn fixed_hints_list_the_members_that_fit_close_to_the_best() {
    let _serial = SERIAL.lock().await;
    let tool = |name: &str, description: &str| {
        Tool::new(
            name,
            description,
            json!({"type": "object", "properties": {"from": {"type": "string"},
                "to": {"type": "string"}, "undo": {"type": "boolean"}},
                "required": ["from", "to", "undo"]}),
            |_, _| async { ToolResult::ok("done") },
        )
    };
    let memory = || {
        HarnessBuilder::new("Memory")
            .with_collapse("A knowledge graph")
            .with_tool(tool(
                "create_relations",
                "Create relations between entities. In active voice.",
            ))
            .with_tool(tool(
                "delete_relations",
                "Delete relations between entities",
            ))
            .with_tool(tool("read_graph", "Read the whole graph."))
            .with_tool(tool(
                "Memory_list_resources",
                "Lists the resources of the MCP server 'Memory'.",
            ))
            .build()
            .unwrap()
    };
    let content =
        opened_ahead_hint(memory(), "Record a relation in memory from Ada to Babbage.").await;
    let call = |name: &str| {
        format!(
            "{{\"name\": \"call_function\", \"arguments\": {{\"name\": \"{name}\", \
             \"arguments\": {{\"from\": \"<from>\", \"to\": \"<to>\", \"undo\": <true or false>}}}}}}"
        )
    };
    assert!(
        content.contains(&format!(
            "Of the functions of Memory, these fit the request best:\n\
             - delete_relations: Delete relations between entities. Run it: {}.\n\
             - create_relations: Create relations between entities. Run it: {}.\n\
             Run now the one that does what the request asks.\n\nThe request again:",
            call("delete_relations"),
            call("create_relations")
        )),
        "{content}"
    );
    assert_eq!(
        hint_names(&opened_ahead_hint(memory(), "Read the whole graph of memory.").await),
        ["read_graph"]
    );
}
