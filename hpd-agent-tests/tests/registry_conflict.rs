//! Two harnesses whose names differ only in case, linked into one program: an agent that uses
//! neither, or one of them by type, builds; an agent that uses both, or names one in its config
//! (ambiguous), fails with an error naming both Rust types. Its own test binary, so that the
//! clash is there for every test of the file and for none of the others.

use hpd_agent::config::ToolHarnessReference;
use hpd_agent::harness::HarnessInfo;
use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentRunConfig, BuildError, ChatResponse, RunError,
    ScriptedChatClient, error::RegistryError,
};

/// One harness.
#[derive(Default)]
pub struct First;

#[tool_harness(name = "CaseTools")]
impl First {
    /// Pings.
    #[ai_function]
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

/// Another harness with a name that differs only in case.
#[derive(Default)]
pub struct Second;

#[tool_harness(name = "casetools")]
impl Second {
    /// Pongs.
    #[ai_function]
    fn pong(&self) -> String {
        "ping".to_owned()
    }
}

/// A harness with a name of its own.
#[derive(Default)]
pub struct Bystander;

#[tool_harness]
impl Bystander {
    /// Waves.
    #[ai_function]
    fn wave(&self) -> String {
        "hello".to_owned()
    }
}

/// The clash error names both types, in either order.
fn assert_names_both_types(error: &BuildError) {
    let BuildError::Registry(RegistryError::DuplicateName {
        first_type,
        second_type,
        ..
    }) = error
    else {
        panic!("unexpected error {error}");
    };
    let mut types = [*first_type, *second_type];
    types.sort_unstable();
    assert_eq!(
        types,
        ["registry_conflict::First", "registry_conflict::Second"]
    );
    let text = error.to_string();
    assert!(
        text.contains("registry_conflict::First") && text.contains("registry_conflict::Second"),
        "{text}"
    );
    assert!(text.contains("equal case-insensitively"), "{text}");
}

#[test]
fn agents_that_use_neither_or_one_by_type_build() {
    let bystander = AgentBuilder::new()
        .with_tool_harness::<Bystander>()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(bystander.initial_tool_names(), ["wave"]);
    for (agent, tool) in [
        (AgentBuilder::new().with_tool_harness::<First>(), "ping"),
        (AgentBuilder::new().with_tool_harness::<Second>(), "pong"),
    ] {
        let agent = agent
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap();
        assert_eq!(agent.initial_tool_names(), [tool]);
    }
    // A type resolves from itself, whatever else has its name.
    assert_eq!(HarnessInfo::of::<First>().name(), "CaseTools");
    assert_eq!(HarnessInfo::of::<Second>().name(), "casetools");
}

#[test]
fn an_agent_that_uses_both_fails_naming_both_types() {
    let error = AgentBuilder::new()
        .with_tool_harness::<First>()
        .with_tool_harness::<Second>()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_names_both_types(&error);
}

#[test]
fn a_lookup_by_name_is_ambiguous_and_fails_naming_both_types() {
    assert_names_both_types(&HarnessInfo::find("CASETOOLS").unwrap_err());
    let config = AgentConfig::from_json(r#"{"tool_harnesses": ["CaseTools"]}"#).unwrap();
    let error = AgentBuilder::from_config(config)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_names_both_types(&error);
    let error = AgentBuilder::new()
        .with_tool_harness_reference(
            &ToolHarnessReference::new("casetools").with_functions(["ping"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_names_both_types(&error);
}

#[tokio::test]
async fn a_run_config_adding_the_other_type_fails_naming_both_types() {
    let model = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<First>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let error = agent
        .session()
        .run_with("hi", AgentRunConfig::new().with_tool_harness::<Second>())
        .await
        .unwrap_err();
    let RunError::Build(error) = &error else {
        panic!("unexpected error {error}");
    };
    assert_names_both_types(error);
    assert!(model.requests().is_empty(), "no request was sent");
    // The same type again in the run config is the agent's own registration.
    let output = agent
        .session()
        .run_with("hi", AgentRunConfig::new().with_tool_harness::<First>())
        .await
        .unwrap();
    assert_eq!(output.text, "done");
}
