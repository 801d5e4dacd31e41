//! `#[sub_agent]` members: a sub-agent declared by a harness method lives inside its harness,
//! is listed by its container, appears once the container expands, is recovered like a hidden
//! function, can be selected, and runs a child agent built when the parent is built.

use hpd_agent::harness::HarnessInfo;
use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall,
};

#[derive(Default)]
struct Research;

#[collapse("Research helpers", system_prompt = "Delegate long questions.")]
impl Research {
    /// Looks a topic up.
    #[ai_function]
    fn lookup(&self, topic: String) -> String {
        format!("facts about {topic}")
    }

    /// Not used: the sub-agent's own description is what the model reads.
    #[sub_agent(name = "researcher")]
    fn research_agent(&self) -> SubAgent {
        SubAgent::new(
            "ignored-name",
            "Researches a question thoroughly.",
            AgentConfig::from_json(r#"{"instructions": "Be thorough."}"#).unwrap(),
        )
    }

    #[sub_agent]
    fn summarizer(&self) -> SubAgent {
        SubAgent::new(
            "summarizer",
            "Summarizes with facts.",
            AgentConfig::default(),
        )
        .with_parent_functions(["Research.lookup"])
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

#[test]
fn the_registry_lists_sub_agents_among_the_members() {
    let info = HarnessInfo::find("Research").unwrap();
    assert_eq!(
        info.function_names().collect::<Vec<_>>(),
        ["lookup", "researcher", "summarizer"]
    );
    // Only functions are callable without an agent.
    let functions = HarnessInfo::of::<Research>().functions().unwrap();
    assert_eq!(functions.len(), 1);
}

#[tokio::test]
async fn a_sub_agent_inside_a_collapsed_harness_is_listed_expanded_and_run() {
    let model = ScriptedChatClient::with_replies([
        call("c1", "Research", "{}"),
        call("c2", "researcher", r#"{"input": "Why is the sky blue?"}"#),
        // The child's only request.
        ChatResponse::text("Rayleigh scattering."),
        ChatResponse::text("done"),
    ]);
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<Research>()
        .with_chat_client(model.clone())
        .on_event(move |e| seen.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    assert_eq!(agent.run("question").await.unwrap().text, "done");
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["Research"]);
    assert_eq!(
        requests[0].tools[0].description,
        "Research helpers (functions: lookup, researcher, summarizer)"
    );
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Research expanded. Available functions: lookup, researcher, summarizer",
            false
        ))
    );
    assert_eq!(
        requests[1].tool_names(),
        ["lookup", "researcher", "summarizer"]
    );
    let researcher = &requests[1].tools[1];
    assert_eq!(researcher.description, "Researches a question thoroughly.");
    assert_eq!(
        researcher.parameters["required"],
        serde_json::json!(["input"])
    );
    // The child agent: its own instructions, no tools.
    assert_eq!(requests[2].instructions, "Be thorough.");
    assert!(requests[2].tools.is_empty());
    assert_eq!(
        requests[3].tool_result("c2"),
        Some(("Rayleigh scattering.", false))
    );
    assert!(events.lock().unwrap().iter().any(|e| matches!(
        e,
        AgentEvent::SubAgent { name, depth: 1, .. } if name == "researcher"
    )));
}

#[tokio::test]
async fn a_hidden_sub_agent_is_recovered_and_parent_functions_are_handed() {
    let model = ScriptedChatClient::with_replies([
        call("c1", "Research.summarizer", r#"{"input": "x"}"#),
        call("c2", "summarizer", r#"{"input": "sum up rust"}"#),
        // The child calls the handed parent function, then answers.
        call("k1", "lookup", r#"{"topic": "rust"}"#),
        ChatResponse::text("Rust is fast."),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<Research>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Research expanded. Available functions: lookup, researcher, summarizer. Call summarizer again to run it.",
            false
        ))
    );
    assert_eq!(requests[2].tool_names(), ["lookup"]);
    assert_eq!(
        requests[3].tool_result("k1"),
        Some(("facts about rust", false))
    );
    assert_eq!(
        requests[4].tool_result("c2"),
        Some(("Rust is fast.", false))
    );
}

#[test]
fn sub_agent_members_can_be_selected_and_uncollapsed() {
    let selected = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness_options::<Research>(|o| o.with_functions(["researcher"]))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let tools = selected.tool_session();
    assert_eq!(
        tools.visible_tools()[0].description,
        "Research helpers (functions: researcher)"
    );
    let flat = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<Research>()
        .without_harness_collapsing()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(
        flat.initial_tool_names(),
        ["lookup", "researcher", "summarizer"]
    );
    // A sub-agent member's name counts for the duplicate-name rules.
    let clash = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<Research>()
        .with_sub_agent(SubAgent::new("researcher", "", AgentConfig::default()))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        clash.to_string(),
        "tool name 'researcher' is registered twice: by 'Research' and by 'sub-agent researcher'"
    );
}

/// Logs the sub-agent calls its harness's scoped pipeline sees.
#[derive(Default)]
struct Watch;

static WATCHED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

#[async_trait]
impl hpd_agent::Middleware for Watch {
    async fn before_function(
        &self,
        call: &mut hpd_agent::middleware::FunctionCall,
    ) -> hpd_agent::middleware::HookResult {
        WATCHED
            .lock()
            .unwrap()
            .push(format!("{}/{}", call.harness_name(), call.function_name()));
        Ok(())
    }
}

#[derive(Default)]
struct Guarded;

#[collapse("Guarded delegation", middlewares = [Watch])]
impl Guarded {
    #[sub_agent]
    fn delegate(&self) -> SubAgent {
        SubAgent::new("delegate", "Delegates.", AgentConfig::default())
    }
}

#[tokio::test]
async fn a_sub_agent_member_runs_through_its_harness_scoped_middleware() {
    let model = ScriptedChatClient::with_replies([
        call("c1", "Guarded", "{}"),
        call("c2", "delegate", r#"{"input": "x"}"#),
        ChatResponse::text("child"),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<Guarded>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(*WATCHED.lock().unwrap(), ["Guarded/delegate"]);
    assert_eq!(
        model.requests()[3].tool_result("c2"),
        Some(("child", false))
    );
}
