//! JSON configuration: what values mean (`null`, omitted keys, nested sub-agents, other serde
//! formats, nesting limits) and the run config.

use std::collections::BTreeMap;

use hpd_agent::{
    AgentConfig, config::CollapsingConfig, config::ConfigErrorKind, config::ModelConfig,
    config::RunConfigData, config::SubAgentConfig, config::ToolHarnessReference,
};
use serde_json::{Value, json};

mod config_support;
use config_support::*;

// ---------------------------------------------------------------------------------------------
// Values

#[test]
fn functions_null_or_omitted_is_all_functions() {
    for text in [
        r#"{"tool_harnesses": [{"name": "MathTools", "functions": null}]}"#,
        r#"{"tool_harnesses": [{"name": "MathTools"}]}"#,
        r#"{"tool_harnesses": ["MathTools"]}"#,
    ] {
        let config = AgentConfig::from_json(text).unwrap();
        assert_eq!(config.tool_harnesses[0].functions, None, "{text}");
    }
}

#[test]
fn null_is_absent_for_optional_values() {
    let config = AgentConfig::from_json(
        r#"{"name": null, "instructions": null, "model": null, "max_iterations": null,
            "tool_harnesses": [{"name": "X", "config": null, "metadata": null}]}"#,
    )
    .unwrap();
    // `config` and `metadata` belong to the user's types: `null` is kept for them.
    assert_eq!(config, {
        let mut config = AgentConfig::default();
        config.tool_harnesses = vec![
            ToolHarnessReference::new("X")
                .with_config(Value::Null)
                .with_metadata(Value::Null),
        ];
        config
    });
    assert_eq!(
        config.to_json(),
        "{\n  \"tool_harnesses\": [\n    {\n      \"name\": \"X\",\n      \"config\": null,\n      \"metadata\": null\n    }\n  ]\n}"
    );
    let model = AgentConfig::from_json(r#"{"model": {"provider": null, "Model": "m"}}"#).unwrap();
    assert_eq!(
        model.model,
        Some(ModelConfig {
            model: Some("m".into()),
            ..ModelConfig::default()
        })
    );
}

#[test]
fn collapsing_disabled_opts_out() {
    let config = AgentConfig::from_json(r#"{"collapsing": {"enabled": false}}"#).unwrap();
    assert_eq!(config.collapsing, {
        let mut collapsing = CollapsingConfig::default();
        collapsing.enabled = false;
        collapsing
    });
    assert!(AgentConfig::default().collapsing.enabled);
    assert!(AgentConfig::default().collapsing.recovery);
    assert!(!AgentConfig::default().collapsing.execute_recovered_calls);
    assert!(
        !AgentConfig::default()
            .collapsing
            .keep_expansions_across_turns
    );
    assert!(AgentConfig::default().collapsing.never_collapse.is_empty());
}

#[test]
fn sub_agents_with_nested_config_and_parent_functions() {
    let config = AgentConfig::from_json(
        r#"{"SubAgents": [
            {"Name": "researcher", "Description": "Looks things up.",
             "Config": {"Instructions": "Be thorough.",
                        "Collapsing": {"Enabled": false},
                        "ToolHarnesses": [{"Name": "SearchTools", "Functions": ["search"]}],
                        "SubAgents": [{"name": "deeper", "description": "d",
                                       "config": {"max_iterations": 2}}]},
             "ParentFunctions": ["DatabaseTools.query", "MathTools.add"]},
            {"name": "bare", "description": "No config."}
        ]}"#,
    )
    .unwrap();
    let expected = vec![
        SubAgentConfig::new("researcher", "Looks things up.", {
            let mut config = AgentConfig::default();
            config.instructions = Some("Be thorough.".into());
            config.collapsing = {
                let mut collapsing = CollapsingConfig::default();
                collapsing.enabled = false;
                collapsing
            };
            config.tool_harnesses =
                vec![ToolHarnessReference::new("SearchTools").with_functions(["search"])];
            config.sub_agents = vec![SubAgentConfig::new("deeper", "d", {
                let mut config = AgentConfig::default();
                config.max_iterations = Some(2);
                config
            })];
            config
        })
        .with_parent_functions(["DatabaseTools.query", "MathTools.add"]),
        SubAgentConfig::new("bare", "No config.", AgentConfig::default()),
    ];
    assert_eq!(config.sub_agents, expected);
    assert_eq!(AgentConfig::from_json(&config.to_json()).unwrap(), config);
}

#[test]
fn from_str_is_from_json() {
    let parsed: AgentConfig = EXAMPLE.parse().unwrap();
    assert_eq!(parsed, spec_example_expected());
    assert!("{".parse::<AgentConfig>().is_err());
}

#[test]
fn builder_helpers_fill_the_fields() {
    let reference = ToolHarnessReference::new("H")
        .with_functions(vec![String::from("a")])
        .with_functions(["b", "c"])
        .with_config(json!(1))
        .with_metadata(json!(2))
        .with_middleware_config("M", json!(3))
        .with_middleware_config("m", json!(4))
        .with_middleware_config("Other", json!(5));
    assert_eq!(
        reference,
        ToolHarnessReference {
            name: "H".into(),
            functions: Some(vec!["b".into(), "c".into()]),
            config: Some(json!(1)),
            metadata: Some(json!(2)),
            middleware_configs: BTreeMap::from([
                ("m".to_owned(), json!(4)),
                ("Other".to_owned(), json!(5))
            ]),
            requires_approval: Vec::new(),
        }
    );
    assert!(!reference.is_name_only());
    assert_eq!(
        ToolHarnessReference::from("H"),
        ToolHarnessReference::new("H")
    );
    assert_eq!(
        ToolHarnessReference::from(String::from("H")),
        ToolHarnessReference::new("H")
    );
    let sub = SubAgentConfig::new("s", "d", AgentConfig::default()).with_parent_functions(["X.y"]);
    assert_eq!(sub.parent_functions, ["X.y"]);
    assert_eq!(*sub.config, AgentConfig::default());
}

#[test]
fn deserializes_from_other_serde_formats() {
    use serde::Deserialize;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error as ValueError, MapDeserializer};

    // serde's own value deserializers stand in for another self-describing format. (They
    // cannot produce `Option`s from plain values, for derived types too, so only lists, maps
    // and booleans are fed here.)
    let collapsing = MapDeserializer::<_, ValueError>::new(
        [("Enabled", false), ("executeRecoveredCalls", true)].into_iter(),
    );
    let config = AgentConfig::deserialize(MapDeserializer::<_, ValueError>::new(
        [("Collapsing", collapsing)].into_iter(),
    ))
    .unwrap();
    assert_eq!(config.collapsing, {
        let mut collapsing = CollapsingConfig::default();
        collapsing.enabled = false;
        collapsing.execute_recovered_calls = true;
        collapsing
    });

    let harnesses = MapDeserializer::<_, ValueError>::new(
        [("toolHarnesses", vec!["WeatherTools", "MathTools"])].into_iter(),
    );
    let config = AgentConfig::deserialize(harnesses).unwrap();
    assert_eq!(
        config.tool_harnesses,
        [
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("MathTools")
        ]
    );

    let bad_name = MapDeserializer::<_, ValueError>::new(
        [("Name", vec!["x"]), ("Functions", Vec::new())].into_iter(),
    );
    let err = ToolHarnessReference::deserialize(bad_name).unwrap_err();
    assert_eq!(err.to_string(), "invalid type: sequence, expected a string");

    let duplicate = MapDeserializer::<_, ValueError>::new(
        [("ToolHarnesses", vec!["A"]), ("tool_harnesses", vec!["B"])].into_iter(),
    );
    let err = AgentConfig::deserialize(duplicate).unwrap_err();
    assert_eq!(
        err.to_string(),
        "duplicate key in AgentConfig: 'ToolHarnesses' and 'tool_harnesses' both mean 'tool_harnesses'"
    );

    let unknown = MapDeserializer::<_, ValueError>::new([("colapsing", "x")].into_iter());
    let err = AgentConfig::deserialize(unknown).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unknown key 'colapsing' in AgentConfig"),
        "{err}"
    );

    let name_only: ToolHarnessReference = Deserialize::deserialize(
        IntoDeserializer::<ValueError>::into_deserializer("MathTools"),
    )
    .unwrap();
    assert_eq!(name_only, ToolHarnessReference::new("MathTools"));
}

/// `levels` sub-agents nested in each other's `config`.
fn nested_sub_agents(levels: usize) -> String {
    let mut text = String::from(r#"{"name": "leaf"}"#);
    for _ in 0..levels {
        text =
            format!(r#"{{"sub_agents": [{{"name": "a", "description": "d", "config": {text}}}]}}"#);
    }
    text
}

#[test]
fn deep_nesting_parses_up_to_serde_json_limit_and_fails_cleanly_beyond() {
    // Each level nests three JSON containers; serde_json allows 128.
    let deepest = nested_sub_agents(42);
    let config = AgentConfig::from_json(&deepest).unwrap();
    let mut depth = 0;
    let mut current = &config;
    while let Some(sub) = current.sub_agents.first() {
        depth += 1;
        current = &sub.config;
    }
    assert_eq!(depth, 42);
    assert_eq!(current.name.as_deref(), Some("leaf"));
    assert_eq!(AgentConfig::from_json(&config.to_json()).unwrap(), config);
    let value: Value = serde_json::from_str(&deepest).unwrap();
    assert_eq!(AgentConfig::from_value(value).unwrap(), config);

    let err = AgentConfig::from_json(&nested_sub_agents(43)).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(
        err.to_string().contains("recursion limit exceeded"),
        "{err}"
    );
}

#[test]
fn a_reference_parses_on_its_own() {
    let reference = ToolHarnessReference::from_json(
        r#"{"Name": "WeatherTools", "Functions": ["get_forecast"]}"#,
    )
    .unwrap();
    assert_eq!(
        reference,
        ToolHarnessReference::new("WeatherTools").with_functions(["get_forecast"])
    );
    assert_eq!(
        ToolHarnessReference::from_json(r#""MathTools""#).unwrap(),
        ToolHarnessReference::new("MathTools")
    );
    let err = ToolHarnessReference::from_json(r#"{"name": "A", "functions": []}"#).unwrap_err();
    assert_eq!(err.document(), "ToolHarnessReference");
    assert_invalid(
        &err,
        "functions",
        "functions is empty; omit it to expose all functions",
    );
    let err = ToolHarnessReference::from_json(r#"{"name": "A""#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid ToolHarnessReference JSON: "),
        "{err}"
    );
    let err = ToolHarnessReference::from_value(json!({"Nme": "A"})).unwrap_err();
    assert_invalid(
        &err,
        ".",
        "unknown key 'Nme' in ToolHarnessReference (did you mean 'name'?)",
    );
    assert_eq!(
        ToolHarnessReference::from_value(json!({"name": "A", "config": {"k": 1}})).unwrap(),
        ToolHarnessReference::new("A").with_config(json!({"k": 1}))
    );
}

// ---------------------------------------------------------------------------------------------
// Run config

#[test]
fn run_config_parses_in_every_spelling() {
    let snake = json!({
        "tool_harnesses": ["WeatherTools", {"name": "MathTools", "functions": ["add"]}],
        "additional_instructions": "Answer in French.",
        "max_iterations": 3
    });
    let expected = RunConfigData {
        tool_harnesses: vec![
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("MathTools").with_functions(["add"]),
        ],
        additional_instructions: Some("Answer in French.".into()),
        max_iterations: Some(3),
    };
    for style in STYLES {
        let respelled = respell(&snake, Object::Run, &mut |key| spell(key, style));
        let parsed = RunConfigData::from_json(&respelled.to_string())
            .unwrap_or_else(|e| panic!("{style:?}: {e}"));
        assert_eq!(parsed, expected, "{style:?}");
        assert_eq!(RunConfigData::from_value(respelled).unwrap(), expected);
    }
    let canonical = expected.to_json();
    assert_eq!(
        canonical,
        r#"{
  "tool_harnesses": [
    "WeatherTools",
    {
      "name": "MathTools",
      "functions": [
        "add"
      ]
    }
  ],
  "additional_instructions": "Answer in French.",
  "max_iterations": 3
}"#
    );
    assert_eq!(RunConfigData::from_json(&canonical).unwrap(), expected);
    assert_eq!(
        RunConfigData::from_json("{}").unwrap(),
        RunConfigData::default()
    );
    assert_eq!(RunConfigData::default().to_json(), "{}");
}

#[test]
fn run_config_rejects_collapsing() {
    for key in ["collapsing", "Collapsing", "COLLAPSING", "_collapsing"] {
        let err = run_err(&format!(r#"{{"{key}": {{"enabled": false}}}}"#));
        assert_invalid(
            &err,
            ".",
            "collapsing belongs to AgentConfig, not AgentRunConfig",
        );
        assert_eq!(err.document(), "AgentRunConfig");
    }
    // Also when the value is not an object, and after valid keys.
    let err = run_err(r#"{"max_iterations": 2, "collapsing": null}"#);
    assert!(
        err.to_string()
            .contains("collapsing belongs to AgentConfig, not AgentRunConfig")
    );
}

#[test]
fn run_config_errors() {
    let err = run_err(r#"{"tool_harnesses": ["#);
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(
        err.to_string().starts_with("invalid AgentRunConfig JSON: "),
        "{err}"
    );
    assert!(err.to_string().contains("line 1 column"), "{err}");

    let err = run_err(r#"{"instructions": "x"}"#);
    assert_invalid(&err, ".", "unknown key 'instructions' in AgentRunConfig");
    assert!(err.message().contains(RUN_KNOWN), "{err}");

    let err = run_err(r#"{"MaxIterations": 1, "max_iterations": 2}"#);
    assert_invalid(
        &err,
        ".",
        "duplicate key in AgentRunConfig: 'MaxIterations' and 'max_iterations' both mean 'max_iterations'",
    );

    let err = run_err(r#"{"tool_harnesses": [{"name": "X", "functions": []}]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0].functions",
        "functions is empty; omit it to expose all functions",
    );

    let err = RunConfigData::from_value(json!({"max_iterations": -1})).unwrap_err();
    assert_invalid(&err, "max_iterations", "invalid value: integer `-1`");
    assert_eq!(err.line(), None);
}
