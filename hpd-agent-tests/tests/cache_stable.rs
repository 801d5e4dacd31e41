//! Behaviour of the `append` collapsing layout (the seed's `collapsing.cache_stable`): every request of a
//! turn starts with the previous one (tools, then system text, then messages), expanded
//! containers stay in the tool list with their members appended, and container system prompts
//! travel in call results instead of the system text.

use hpd_agent::{
    AgentBuilder, AgentConfig, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall,
    chat::ModelOptions, chat::ToolChoice, config::CollapsingConfig, config::CollapsingLayout,
    providers::scripted::RecordedRequest,
};
use hpd_agent_tests::{DatabaseTools, FileTools, MathTools, WeatherTools};

const MATH_SECTION: &str = "## Active container instructions\n\n### MathTools\n\
                            Use exact arithmetic and show units when relevant.";
const FILE_SECTION: &str =
    "## Active container instructions\n\n### FileTools\nPaths are relative to the workspace.";
const MATH_EXPANDED: &str =
    "MathTools expanded. Available functions: add, multiply, divide\n\nMath tools are active.";
const FIRST: [&str; 5] = [
    "get_weather",
    "get_forecast",
    "MathTools",
    "DatabaseTools",
    "FileTools",
];

/// The fixtures, with container answers as tool results: container notes, on by default, are
/// off, so that the layout's own requests show.
fn builder(client: &ScriptedChatClient) -> AgentBuilder {
    AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<DatabaseTools>()
        .with_tool_harness::<FileTools>()
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_chat_client(client.clone())
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

/// Two expansions and two member calls in one turn: five requests.
fn script_two_expansions(client: &ScriptedChatClient) {
    client.push(call("c1", "MathTools", "{}"));
    client.push(call("c2", "add", r#"{"a": 2, "b": 3}"#));
    client.push(call("c3", "FileTools", "{}"));
    client.push(call("c4", "read_file", r#"{"path": "a.txt"}"#));
    client.push(ChatResponse::text("done"));
}

/// Asserts that each request starts with the previous one: its tool list, its system text and
/// its messages.
fn assert_prefix_stable(requests: &[RecordedRequest]) {
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        assert!(
            after.tool_names().starts_with(&before.tool_names()),
            "{:?} does not start with {:?}",
            after.tool_names(),
            before.tool_names()
        );
        assert_eq!(after.instructions, before.instructions);
        assert!(after.messages.starts_with(&before.messages));
    }
}

#[tokio::test]
async fn expanded_containers_stay_and_members_are_appended() {
    let client = ScriptedChatClient::new();
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .build()
        .unwrap();
    script_two_expansions(&client);
    assert_eq!(agent.run("go").await.unwrap().text, "done");
    let requests = client.requests();
    assert_eq!(requests.len(), 5);
    let names: Vec<Vec<&str>> = requests.iter().map(RecordedRequest::tool_names).collect();
    let math = [&FIRST[..], &["add", "multiply", "divide"]].concat();
    let files = [&math[..], &["read_file", "write_file"]].concat();
    assert_eq!(names, [&FIRST[..], &math, &math, &files, &files]);
    assert_prefix_stable(&requests);
    for request in &requests {
        assert_eq!(request.instructions, "Base.");
    }
    // The container results carry the instructions the system text no longer has.
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((format!("{MATH_EXPANDED}\n\n{MATH_SECTION}").as_str(), false))
    );
    assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
    assert_eq!(
        requests[3].tool_result("c3"),
        Some((
            format!(
                "FileTools expanded. Available functions: read_file, write_file\n\n{FILE_SECTION}"
            )
            .as_str(),
            false
        ))
    );
}

#[test]
fn without_a_layout_the_default_is_native() {
    assert_eq!(CollapsingConfig::default().layout, CollapsingLayout::Native);
    assert_eq!(CollapsingLayout::default(), CollapsingLayout::Native);
    for text in [
        r#"{}"#,
        r#"{"collapsing": {}}"#,
        r#"{"collapsing": {"recovery": true}}"#,
    ] {
        let config = AgentConfig::from_json(text).unwrap();
        assert_eq!(config.collapsing.layout, CollapsingLayout::Native, "{text}");
    }
}

/// The seed's `cache_stable: false` named its default, `hide`, and still does.
#[tokio::test]
async fn cache_stable_false_is_the_hide_layout() {
    let config = AgentConfig::from_json(r#"{"collapsing": {"cache_stable": false}}"#).unwrap();
    assert_eq!(config.collapsing.layout, CollapsingLayout::Hide);
    let client = ScriptedChatClient::new();
    let agent = builder(&client)
        .with_collapsing_layout(config.collapsing.layout)
        .build()
        .unwrap();
    script_two_expansions(&client);
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[1].tool_names(),
        [
            "get_weather",
            "get_forecast",
            "DatabaseTools",
            "FileTools",
            "add",
            "multiply",
            "divide"
        ]
    );
    assert_eq!(requests[1].tool_result("c1"), Some((MATH_EXPANDED, false)));
    assert_eq!(requests[1].instructions, format!("Base.\n\n{MATH_SECTION}"));
}

#[tokio::test]
async fn a_second_container_call_does_not_repeat_the_instructions() {
    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", "{}"),
        call("c2", "MathTools", "{}"),
        ChatResponse::text("done"),
    ]);
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[2].tool_result("c1"),
        Some((format!("{MATH_EXPANDED}\n\n{MATH_SECTION}").as_str(), false))
    );
    assert_eq!(requests[2].tool_result("c2"), Some((MATH_EXPANDED, false)));
    assert_prefix_stable(&requests);
}

#[tokio::test]
async fn a_recovered_call_carries_the_instructions() {
    let client = ScriptedChatClient::with_replies([
        call("c1", "multiply", r#"{"a": 3, "b": 4}"#),
        ChatResponse::text("done"),
    ]);
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            format!(
                "MathTools expanded. Available functions: add, multiply, divide. \
                 Call multiply again to run it.\n\n{MATH_SECTION}"
            )
            .as_str(),
            false
        ))
    );
    assert_eq!(
        requests[1].tool_names(),
        [&FIRST[..], &["add", "multiply", "divide"]].concat()
    );
    assert_prefix_stable(&requests);
}

#[tokio::test]
async fn an_executed_recovered_call_carries_the_instructions_once() {
    let client = ScriptedChatClient::with_replies([
        call("c1", "multiply", r#"{"a": 3, "b": 4}"#),
        call("c2", "add", r#"{"a": 1, "b": 1}"#),
        ChatResponse::text("done"),
    ]);
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((format!("12\n\n{MATH_SECTION}").as_str(), false))
    );
    assert_eq!(requests[2].tool_result("c2"), Some(("2", false)));
    assert_prefix_stable(&requests);
}

#[tokio::test]
async fn a_forced_tool_choice_expansion_puts_the_instructions_in_the_first_member_result() {
    let client = ScriptedChatClient::with_replies([
        call("c1", "multiply", r#"{"a": 3, "b": 4}"#),
        ChatResponse::text("done"),
    ]);
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .with_model_options(
            ModelOptions::default().with_tool_choice(ToolChoice::Tool("multiply".into())),
        )
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests[0].instructions, "Base.");
    assert_eq!(
        requests[0].tool_names(),
        [&FIRST[..], &["add", "multiply", "divide"]].concat()
    );
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((format!("12\n\n{MATH_SECTION}").as_str(), false))
    );
}

#[tokio::test]
async fn turn_end_collapses_and_the_next_turn_delivers_again() {
    let client = ScriptedChatClient::new();
    let agent = builder(&client)
        .with_collapsing_layout(CollapsingLayout::Append)
        .build()
        .unwrap();
    let mut session = agent.session();
    client.push(call("c1", "MathTools", "{}"));
    client.push(ChatResponse::text("one"));
    session.run("first").await.unwrap();
    client.push(call("c2", "MathTools", "{}"));
    client.push(ChatResponse::text("two"));
    session.run("second").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests.len(), 4);
    // The second turn starts from the collapsed list and the unchanged system text.
    assert_eq!(requests[2].tool_names(), FIRST);
    assert_eq!(requests[2].instructions, "Base.");
    assert_eq!(
        requests[3].tool_result("c2"),
        Some((format!("{MATH_EXPANDED}\n\n{MATH_SECTION}").as_str(), false))
    );
    // The first turn's result stays in the history.
    assert!(requests[3].messages.starts_with(&requests[1].messages));
}

#[tokio::test]
async fn persisted_expansions_keep_the_list_and_the_system_text() {
    let client = ScriptedChatClient::new();
    let agent = builder(&client)
        .configure_harness_collapsing(|c| {
            c.layout = CollapsingLayout::Append;
            c.keep_expansions_across_turns = true;
        })
        .build()
        .unwrap();
    let mut session = agent.session();
    client.push(call("c1", "MathTools", "{}"));
    client.push(ChatResponse::text("one"));
    session.run("first").await.unwrap();
    assert_eq!(session.state().expanded, ["MathTools"]);
    client.push(call("c2", "MathTools", "{}"));
    client.push(ChatResponse::text("two"));
    session.run("second").await.unwrap();
    let requests = client.requests();
    let math = [&FIRST[..], &["add", "multiply", "divide"]].concat();
    assert_eq!(requests[1].tool_names(), math);
    assert_eq!(requests[2].tool_names(), math);
    assert_eq!(requests[2].instructions, "Base.");
    // Already expanded and delivered in the first turn: not repeated.
    assert_eq!(requests[3].tool_result("c2"), Some((MATH_EXPANDED, false)));
    // With persistence, every request of the session starts with the one before.
    assert_prefix_stable(&requests[1..]);
    assert!(matches!(
        requests[2].messages.last(),
        Some(ChatMessage::User { content }) if content == "second"
    ));
}

#[tokio::test]
async fn the_json_key_round_trips_and_configures_the_agent() {
    let config = AgentConfig::from_json(r#"{"collapsing": {"cacheStable": true}}"#).unwrap();
    assert_eq!(
        config.collapsing,
        CollapsingConfig::default().with_layout(CollapsingLayout::Append)
    );
    // Written back under its current name.
    assert_eq!(
        config.to_json(),
        "{\n  \"collapsing\": {\n    \"layout\": \"append\"\n  }\n}"
    );
    assert_eq!(AgentConfig::from_json(&config.to_json()).unwrap(), config);
    assert!(
        AgentConfig::from_json(r#"{"collapsing": {"cache_stable": "yes"}}"#)
            .unwrap_err()
            .to_string()
            .contains("cache_stable")
    );

    let client = ScriptedChatClient::with_replies([
        call("c1", "MathTools", "{}"),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_instructions("Base.")
        .with_tool_harness::<MathTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[1].tool_names(),
        ["MathTools", "add", "multiply", "divide"]
    );
    assert_eq!(requests[1].instructions, "Base.");
}
