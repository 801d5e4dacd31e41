//! Sub-agents: a tool that runs a child agent built from its own config.

use std::sync::{Arc, Mutex, PoisonError};

use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, AgentRunConfig, ChatClient, ChatResponse,
    ScriptedChatClient, SubAgent, ToolCall, async_trait, chat::ChatError, chat::ChatRequest,
    chat::TextSink,
};
use hpd_agent_tests::{DatabaseTools, WeatherTools};

fn researcher_config() -> AgentConfig {
    AgentConfig::from_json(r#"{"Instructions": "Research.", "ToolHarnesses": ["WeatherTools"]}"#)
        .unwrap()
}

#[tokio::test]
async fn a_sub_agent_runs_a_child_agent_with_its_own_tools() {
    let client = ScriptedChatClient::with_replies([
        // parent
        ChatResponse::tool_calls(vec![ToolCall::new(
            "p1",
            "researcher",
            r#"{"input": "Weather in Oslo?"}"#,
        )]),
        // child
        ChatResponse::tool_calls(vec![ToolCall::new(
            "k1",
            "get_weather",
            r#"{"city": "Oslo"}"#,
        )]),
        ChatResponse::text("Sunny in Oslo."),
        // parent again
        ChatResponse::text("The researcher says: sunny."),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_instructions("Delegate.")
        .with_sub_agent(SubAgent::new(
            "researcher",
            "Researches a question.",
            researcher_config(),
        ))
        .with_chat_client(client.clone())
        .on_event(move |e| {
            seen.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(e.clone());
        })
        .build()
        .unwrap();
    let out = agent.run("How is the weather?").await.unwrap();
    assert_eq!(out.text, "The researcher says: sunny.");

    let requests = client.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].tool_names(), ["researcher"]);
    assert_eq!(requests[0].tools[0].description, "Researches a question.");
    assert_eq!(
        requests[0].tools[0].parameters["required"],
        serde_json::json!(["input"])
    );
    assert_eq!(requests[1].instructions, "Research.");
    assert_eq!(requests[1].tool_names(), ["get_weather", "get_forecast"]);
    assert_eq!(
        requests[1].messages,
        [hpd_agent::ChatMessage::user("Weather in Oslo?")]
    );
    assert_eq!(
        requests[2].tool_result("k1"),
        Some(("It is sunny in Oslo.", false))
    );
    assert_eq!(requests[3].instructions, "Delegate.");
    assert_eq!(
        requests[3].tool_result("p1"),
        Some(("Sunny in Oslo.", false))
    );

    let events = events.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::SubAgent { name, depth: 1, event }
            if name == "researcher"
                && matches!(&**event, AgentEvent::ToolCallFinished { name, .. } if name == "get_weather"))));
}

#[tokio::test]
async fn parent_functions_run_through_their_scoped_pipeline_in_the_child() {
    let _ = hpd_agent_tests::take_middleware_log();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "p1",
            "analyst",
            r#"{"input": "count"}"#,
        )]),
        ChatResponse::tool_calls(vec![ToolCall::new("k1", "query", r#"{"sql": "select 1"}"#)]),
        ChatResponse::text("1 row"),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<DatabaseTools>()
        .with_sub_agent(
            SubAgent::new("analyst", "Analyses data.", AgentConfig::default())
                .with_parent_functions(["DatabaseTools.query"]),
        )
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    // Sub-agents are always visible, before containers.
    assert_eq!(requests[0].tool_names(), ["analyst", "DatabaseTools"]);
    assert_eq!(
        requests[1].tool_names(),
        ["query"],
        "handed functions are plain tools"
    );
    assert_eq!(requests[2].tool_result("k1"), Some(("result", false)));
    let log = hpd_agent_tests::middleware_log();
    assert!(
        log.iter().any(|l| l.ends_with("]:before_function:query")),
        "the DbAudit pipeline guards the handed function: {log:#?}"
    );
}

/// Fails every request whose instructions are `Research.` (the child's).
struct ChildFails(ScriptedChatClient);

#[async_trait]
impl ChatClient for ChildFails {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        if request.instructions == "Research." {
            return Err(ChatError::Transport("connection reset".to_owned()));
        }
        self.0.complete(request, text).await
    }
}

#[tokio::test]
async fn child_failures_and_bad_input_are_error_results() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("p1", "researcher", r#"{"input": "x"}"#),
            ToolCall::new("p2", "researcher", "{}"),
        ]),
        ChatResponse::text("sorry"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_sub_agent(SubAgent::new(
            "researcher",
            "Researches.",
            researcher_config(),
        ))
        .with_chat_client(ChildFails(client.clone()))
        .build()
        .unwrap();
    assert_eq!(agent.run("go").await.unwrap().text, "sorry");
    let request = &client.requests()[1];
    assert_eq!(
        request.tool_result("p1"),
        Some((
            "Error: sub-agent 'researcher' failed: provider request failed: connection reset",
            true
        ))
    );
    let (text, is_error) = request.tool_result("p2").unwrap();
    assert!(is_error);
    assert!(
        text.starts_with("Invalid arguments for 'researcher': "),
        "{text}"
    );
    assert!(text.contains("input"), "{text}");
}

#[test]
fn sub_agents_from_json_config_and_their_errors() {
    let config = AgentConfig::from_json(
        r#"{
            "tool_harnesses": ["DatabaseTools"],
            "sub_agents": [{
                "name": "analyst",
                "description": "Analyses data.",
                "config": {"instructions": "Analyse.", "tool_harnesses": ["MathTools"]},
                "parent_functions": ["DatabaseTools.query"]
            }]
        }"#,
    )
    .unwrap();
    let agent = AgentBuilder::from_config(config)
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(agent.initial_tool_names(), ["analyst", "DatabaseTools"]);

    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<WeatherTools>()
        .with_sub_agent(
            SubAgent::new("analyst", "Analyses.", AgentConfig::default())
                .with_parent_functions(["WeatherTools.nope"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "sub-agent 'analyst': function 'nope' not found in harness 'WeatherTools'; available: get_weather, get_forecast"
    );

    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_sub_agent(
            SubAgent::new("analyst", "Analyses.", AgentConfig::default())
                .with_parent_functions(["MathTools.add"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("sub-agent 'analyst': harness 'MathTools' not found"),
        "{error}"
    );
}

#[test]
fn nesting_is_bounded_by_max_depth() {
    fn nested(levels: usize) -> AgentConfig {
        let mut config = AgentConfig::default();
        for level in (0..levels).rev() {
            let mut parent = AgentConfig::default();
            parent
                .sub_agents
                .push(hpd_agent::config::SubAgentConfig::new(
                    format!("level{level}"),
                    "Goes deeper.",
                    config,
                ));
            config = parent;
        }
        config
    }
    let build = |levels| {
        AgentBuilder::from_config(nested(levels))
            .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
            .with_chat_client(ScriptedChatClient::new())
            .build()
    };
    build(3).expect("three levels are allowed");
    let error = build(4).unwrap_err();
    assert_eq!(
        error.to_string(),
        "sub-agent 'level0': sub-agent 'level1': sub-agent 'level2': sub-agent 'level3': sub-agents nest deeper than max_depth (3)"
    );
}

#[tokio::test]
async fn sub_agent_runs_can_be_cancelled_with_the_parent() {
    let token = hpd_agent::CancellationToken::new();
    token.cancel();
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_sub_agent(SubAgent::new(
            "researcher",
            "Researches.",
            researcher_config(),
        ))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let error = agent
        .session()
        .run_with("go", AgentRunConfig::new().with_cancellation(token))
        .await
        .unwrap_err();
    assert!(matches!(error, hpd_agent::RunError::Cancelled), "{error}");
}

#[test]
fn handing_a_function_the_parent_does_not_register_fails() {
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness_options::<WeatherTools>(|o| o.with_functions(["get_weather"]))
        .with_sub_agent(
            SubAgent::new("analyst", "Analyses.", AgentConfig::default())
                .with_parent_functions(["WeatherTools.get_forecast"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "sub-agent 'analyst': function 'get_forecast' of harness 'WeatherTools' is not registered for the parent agent"
    );
}
