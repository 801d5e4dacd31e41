//! Harness configs, metadata and middleware configs from JSON: arbitrary values always give a
//! built agent or a clear build error, never a panic; and the errors name the harness, the
//! type and the JSON path.

use hpd_agent::{
    AgentBuilder, AgentConfig, BuildError, ScriptedChatClient, config::ToolHarnessReference,
};
use hpd_agent_tests as _; // links the fixture harnesses, which this file names only in JSON
use proptest::prelude::*;
use serde_json::{Value, json};

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u32>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-zA-Z ]{0,8}".prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("MaxResults".to_owned()),
        Just("DefaultProvider".to_owned()),
        Just("HasTavilyProvider".to_owned()),
        Just("AllowWrites".to_owned()),
        Just("AuditLevel".to_owned()),
        "[a-zA-Z]{1,6}",
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(keys.clone(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn build(reference: ToolHarnessReference) -> Result<hpd_agent::Agent, BuildError> {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness_reference(&reference)
        .with_chat_client(ScriptedChatClient::new())
        .build()
}

proptest! {
    #[test]
    fn arbitrary_harness_config_never_panics(config in arbitrary_json()) {
        let result = build(ToolHarnessReference::new("SearchTools").with_config(config.clone()));
        if let Err(error) = result {
            let text = error.to_string();
            prop_assert!(text.contains("SearchTools") && text.contains("SearchToolsConfig"), "{}", text);
        }
        // A harness without a config constructor refuses every config.
        let error = build(ToolHarnessReference::new("WeatherTools").with_config(config)).unwrap_err();
        prop_assert_eq!(error.to_string(), "harness 'WeatherTools' takes no config (it has no config constructor)");
    }

    #[test]
    fn arbitrary_metadata_never_panics(metadata in arbitrary_json()) {
        if let Err(error) = build(ToolHarnessReference::new("SearchTools").with_metadata(metadata.clone())) {
            prop_assert!(error.to_string().contains("SearchMetadata"), "{}", error);
        }
        if let Err(error) = build(ToolHarnessReference::new("FileTools").with_metadata(metadata)) {
            prop_assert!(error.to_string().contains("FileMetadata"), "{}", error);
        }
    }

    #[test]
    fn arbitrary_middleware_config_never_panics(config in arbitrary_json()) {
        let reference = ToolHarnessReference::new("DatabaseTools")
            .with_middleware_config("DbAuditMiddleware", config);
        if let Err(error) = build(reference) {
            prop_assert!(error.to_string().contains("DbAuditMiddleware"), "{}", error);
        }
    }

    #[test]
    fn arbitrary_agent_config_documents_never_panic(document in arbitrary_json()) {
        let text = json!({ "tool_harnesses": [ { "name": "SearchTools", "config": document.clone(), "metadata": document } ] }).to_string();
        if let Ok(config) = AgentConfig::from_json(&text) {
            let _ = AgentBuilder::from_config(config).with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide).with_chat_client(ScriptedChatClient::new()).build();
        }
    }
}

#[test]
fn config_errors_name_the_harness_the_type_and_the_path() {
    let error =
        build(ToolHarnessReference::new("SearchTools").with_config(json!({"MaxResults": "many"})))
            .unwrap_err();
    let text = error.to_string();
    for needle in [
        "SearchTools",
        "SearchToolsConfig",
        "MaxResults",
        "invalid type: string \"many\"",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    let error = build(
        ToolHarnessReference::new("SearchTools")
            .with_metadata(json!({"DefaultProvider": "brave", "HasTavilyProvider": "yes"})),
    )
    .unwrap_err();
    let text = error.to_string();
    for needle in ["SearchTools", "SearchMetadata", "HasTavilyProvider"] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    let error = build(
        ToolHarnessReference::new("DatabaseTools")
            .with_middleware_config("dbauditmiddleware", json!({"AuditLevel": 3})),
    )
    .unwrap_err();
    let text = error.to_string();
    for needle in ["DatabaseTools", "DbAuditMiddleware", "AuditLevel"] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    let error =
        build(ToolHarnessReference::new("DatabaseTools").with_middleware_config("Nope", json!({})))
            .unwrap_err();
    assert_eq!(
        error.to_string(),
        "harness 'DatabaseTools' has no configurable scoped middleware 'Nope'"
    );
    let error =
        build(ToolHarnessReference::new("WeatherTools").with_metadata(json!({}))).unwrap_err();
    assert!(error.to_string().contains("WeatherTools"), "{error}");
}

/// The reference example of an agent config, and the same in PascalCase (shared with the
/// config tests of `hpd-agent`).
const EXAMPLE: &str = include_str!("../../hpd-agent/tests/config_support/example.json");

const EXAMPLE_PASCAL: &str =
    include_str!("../../hpd-agent/tests/config_support/example_pascal.json");

#[tokio::test]
async fn the_spec_example_round_trips_and_builds_a_working_agent() {
    use hpd_agent::{ChatResponse, ToolCall};

    let config = AgentConfig::from_json(EXAMPLE).unwrap();
    assert_eq!(AgentConfig::from_json(EXAMPLE_PASCAL).unwrap(), config);
    let canonical = config.to_json();
    assert_eq!(AgentConfig::from_json(&canonical).unwrap(), config);
    assert_eq!(
        AgentConfig::from_json(&canonical).unwrap().to_json(),
        canonical
    );

    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "search", r#"{"query":"rust"}"#)]),
        ChatResponse::text("ok"),
    ]);
    let agent = AgentBuilder::from_config(AgentConfig::from_json(&canonical).unwrap())
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    assert_eq!(agent.name(), "assistant");
    agent.run("find rust").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests[0].instructions, "Be brief.");
    assert_eq!(
        requests[0].tool_names(),
        ["get_weather", "get_forecast", "search", "DatabaseTools"]
    );
    let search = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "search")
        .unwrap();
    assert_eq!(search.description, "Search the web with brave.");
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("3 results for 'rust'", false))
    );
}
