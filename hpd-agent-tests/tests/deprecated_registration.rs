//! The registration methods kept one release as deprecated forwarders register exactly what
//! their replacements register.
#![allow(deprecated)]

use hpd_agent::config::ToolHarnessReference;
use hpd_agent::{Agent, AgentBuilder, BuildError, ScriptedChatClient};
use hpd_agent_tests::{MathTools, WeatherTools};

fn built(builder: AgentBuilder) -> Result<Agent, BuildError> {
    builder.with_chat_client(ScriptedChatClient::new()).build()
}

fn tools(builder: AgentBuilder) -> Vec<String> {
    let agent = built(builder.without_harness_collapsing()).unwrap();
    agent
        .tool_session()
        .visible_tools()
        .into_iter()
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn with_tool_is_with_functions() {
    let old = tools(
        AgentBuilder::new()
            .with_tool::<MathTools>("multiply")
            .with_tool::<WeatherTools>("WeatherTools.get_weather"),
    );
    let new = tools(
        AgentBuilder::new()
            .with_tool_harness_options::<MathTools>(|o| o.with_functions(["multiply"]))
            .with_tool_harness_options::<WeatherTools>(|o| {
                o.with_functions(["WeatherTools.get_weather"])
            }),
    );
    assert_eq!(old, ["multiply", "get_weather"]);
    assert_eq!(old, new);
}

#[test]
fn with_tool_ref_is_a_reference_with_functions() {
    let old = tools(AgentBuilder::new().with_tool_ref("MathTools.add"));
    let new = tools(AgentBuilder::new().with_tool_harness_reference(
        &ToolHarnessReference::new("MathTools").with_functions(["add"]),
    ));
    assert_eq!(old, ["add"]);
    assert_eq!(old, new);
    // A reference that is not `Harness.function` still fails the build with its own error.
    let error = built(AgentBuilder::new().with_tool_ref("no_dot_here")).unwrap_err();
    assert!(
        matches!(error, BuildError::InvalidReference { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn with_tool_harness_instance_is_with_instance() {
    let old = built(AgentBuilder::new().with_tool_harness_instance(MathTools)).unwrap();
    let new = built(
        AgentBuilder::new().with_tool_harness_options::<MathTools>(|o| o.with_instance(MathTools)),
    )
    .unwrap();
    assert_eq!(old.initial_tool_names(), new.initial_tool_names());
    let session = old.tool_session();
    session.call_tool("c0", "MathTools", "{}").await.unwrap();
    let sum = session
        .call_tool("c1", "add", r#"{"a": 2, "b": 3}"#)
        .await
        .unwrap();
    assert_eq!(sum.result.text, "5");
}
