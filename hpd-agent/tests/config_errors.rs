//! JSON configuration: every error with its text and JSON path.

use hpd_agent::{AgentConfig, BuildError, config::ConfigErrorKind, config::ToolHarnessReference};
use serde_json::json;

mod config_support;
use config_support::*;

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn invalid_json_reports_serde_json_position() {
    let err = parse_err(r#"{"ToolHarnesses": ["#);
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert_eq!(err.document(), "AgentConfig");
    assert_eq!(
        err.to_string(),
        "invalid AgentConfig JSON: EOF while parsing a list at line 1 column 19"
    );
    assert_eq!((err.line(), err.column()), (Some(1), Some(19)));

    let err = AgentConfig::from_json("{\n  \"name\": \"x\",\n  oops\n}").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(
        err.to_string()
            .starts_with("invalid AgentConfig JSON: key must be a string at line 3"),
        "{err}"
    );

    let err = AgentConfig::from_json("{} trailing").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(
        err.to_string()
            .contains("trailing characters at line 1 column 4"),
        "{err}"
    );

    let err = AgentConfig::from_json("").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(
        err.to_string().starts_with("invalid AgentConfig JSON: EOF"),
        "{err}"
    );
}

#[test]
fn syntax_errors_win_over_earlier_config_mistakes() {
    // The unknown key comes first in the text, but the text is not JSON.
    let err = parse_err(r#"{"colapsing": 1, "name": "#);
    assert_eq!(err.kind(), ConfigErrorKind::Syntax, "{err}");
    assert!(
        err.to_string().starts_with("invalid AgentConfig JSON: "),
        "{err}"
    );
}

#[test]
fn collapsing_null_is_rejected() {
    let err = parse_err(r#"{"collapsing": null, "ToolHarnesses": ["MathTools"]}"#);
    assert_invalid(
        &err,
        "collapsing",
        "collapsing must be an object; omit it to use the default",
    );
    assert_eq!(
        err.to_string(),
        "invalid AgentConfig at 'collapsing' (line 1, column 19): \
         collapsing must be an object; omit it to use the default"
    );
    // The path names the key as written; from a value there is no position.
    let err = AgentConfig::from_value(json!({"Collapsing": null})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid AgentConfig at 'Collapsing': collapsing must be an object; omit it to use the default"
    );
    assert_eq!((err.line(), err.column()), (None, None));
}

#[test]
fn collapsing_of_the_wrong_type_is_rejected() {
    let err = parse_err(r#"{"collapsing": false}"#);
    assert_invalid(
        &err,
        "collapsing",
        r#"invalid type: boolean `false`, expected a collapsing object such as {"enabled": false}"#,
    );
    let err = parse_err(r#"{"collapsing": {"enabled": "no"}}"#);
    assert_invalid(
        &err,
        "collapsing.enabled",
        "invalid type: string \"no\", expected a boolean",
    );
    let err = parse_err(r#"{"collapsing": {"NeverCollapse": "MathTools"}}"#);
    assert_invalid(
        &err,
        "collapsing.NeverCollapse",
        "invalid type: string \"MathTools\", expected a list of harness names",
    );
}

#[test]
fn empty_functions_are_rejected_with_their_path() {
    let err = parse_err(
        r#"{"tool_harnesses": ["WeatherTools", {"name": "MathTools", "functions": []}]}"#,
    );
    assert_invalid(
        &err,
        "tool_harnesses[1].functions",
        "functions is empty; omit it to expose all functions",
    );
    // The path uses the spelling of the document.
    let err = AgentConfig::from_value(json!({"ToolHarnesses": [{"Name": "M", "Functions": []}]}))
        .unwrap_err();
    assert_invalid(
        &err,
        "ToolHarnesses[0].Functions",
        "functions is empty; omit it to expose all functions",
    );
}

#[test]
fn a_reference_needs_a_non_empty_name() {
    let err = parse_err(r#"{"tool_harnesses": [{"functions": ["add"]}]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0]",
        "missing key 'name' in ToolHarnessReference",
    );
    let err = parse_err(r#"{"tool_harnesses": ["A", ""]}"#);
    assert_invalid(&err, "tool_harnesses[1]", "harness name is empty");
    let err = parse_err(r#"{"tool_harnesses": [{"name": ""}]}"#);
    assert_invalid(&err, "tool_harnesses[0].name", "harness name is empty");
    let err = parse_err(r#"{"tool_harnesses": [{"name": null}]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0].name",
        "invalid type: null, expected a string",
    );
    let err = parse_err(r#"{"tool_harnesses": [42]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0]",
        "invalid type: integer `42`, expected a harness name or a harness reference object with a name",
    );
}

#[test]
fn wrong_types_get_serde_messages_and_paths() {
    let err = parse_err(r#"{"max_iterations": "x"}"#);
    assert_invalid(
        &err,
        "max_iterations",
        "invalid type: string \"x\", expected usize",
    );
    assert_eq!(
        err.to_string(),
        "invalid AgentConfig at 'max_iterations' (line 1, column 22): \
         invalid type: string \"x\", expected usize"
    );

    let err = parse_err(r#"{"name": 1}"#);
    assert_invalid(&err, "name", "invalid type: integer `1`, expected a string");
    assert_eq!((err.line(), err.column()), (Some(1), Some(10)));

    let err = parse_err(r#"{"tool_harnesses": {"name": "x"}}"#);
    assert_invalid(
        &err,
        "tool_harnesses",
        "invalid type: map, expected a list of harness references",
    );
    let err = parse_err(r#"{"tool_harnesses": null}"#);
    assert_invalid(
        &err,
        "tool_harnesses",
        "invalid type: null, expected a list of harness references",
    );
    let err = parse_err(r#"{"tool_harnesses": [{"name": "x", "functions": ["a", 2]}]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0].functions[1]",
        "invalid type: integer `2`, expected a string",
    );
    let err = parse_err(r#"{"tool_harnesses": [{"name": "x", "middleware_configs": []}]}"#);
    assert_invalid(
        &err,
        "tool_harnesses[0].middleware_configs",
        "expected an object mapping middleware type names to their configs",
    );
    let err = parse_err(r#"{"model": "gpt-4o"}"#);
    assert_invalid(
        &err,
        "model",
        "expected a model object (provider, model, base_url, deferred_tools)",
    );
    let err = parse_err(r#"{"model": {"deferred_tools": "tool_refs"}}"#);
    assert_invalid(
        &err,
        "model.deferred_tools",
        "unknown variant `tool_refs`, expected one of `none`, `tool_references`, \
         `tool_search`, `tool_additions`, `additional_tools`",
    );
    let err = parse_err("[]");
    assert_invalid(
        &err,
        ".",
        "invalid type: sequence, expected an AgentConfig object",
    );
    let err = parse_err("null");
    assert_invalid(
        &err,
        ".",
        "invalid type: null, expected an AgentConfig object",
    );
}

#[test]
fn nested_errors_carry_the_full_path() {
    let err = parse_err(
        r#"{"sub_agents": [{"name": "a", "description": "d",
            "config": {"tool_harnesses": ["X", {"name": "Y", "functions": []}]}}]}"#,
    );
    assert_invalid(
        &err,
        "sub_agents[0].config.tool_harnesses[1].functions",
        "functions is empty; omit it to expose all functions",
    );
    assert_eq!(err.line(), Some(2));
    let err = parse_err(
        r#"{"sub_agents": [{"name": "a", "description": "d", "config": {"collapsing": null}}]}"#,
    );
    assert_invalid(
        &err,
        "sub_agents[0].config.collapsing",
        "collapsing must be an object; omit it to use the default",
    );
}

#[test]
fn sub_agent_entries_need_name_and_description() {
    let err = parse_err(r#"{"sub_agents": [{"description": "d"}]}"#);
    assert_invalid(
        &err,
        "sub_agents[0]",
        "missing key 'name' in SubAgentConfig",
    );
    let err = parse_err(r#"{"sub_agents": [{"name": "a"}]}"#);
    assert_invalid(
        &err,
        "sub_agents[0]",
        "missing key 'description' in SubAgentConfig",
    );
    let err = parse_err(r#"{"sub_agents": [{"name": "", "description": "d"}]}"#);
    assert_invalid(&err, "sub_agents[0].name", "sub-agent name is empty");
    let err = parse_err(r#"{"sub_agents": [{"name": "a", "description": "d", "config": null}]}"#);
    assert_invalid(
        &err,
        "sub_agents[0].config",
        "invalid type: null, expected an AgentConfig object",
    );
    let err = parse_err(
        r#"{"sub_agents": [{"name": "a", "description": "d", "parent_functions": "X.y"}]}"#,
    );
    assert_invalid(
        &err,
        "sub_agents[0].parent_functions",
        "expected a list of 'Harness.function' references",
    );
}

#[test]
fn unknown_keys_are_named_at_every_level_with_the_known_keys() {
    let cases: [(&str, &str, &str, &str); 7] = [
        (
            r#"{"colapsing": {"enabled": false}, "ToolHarnesses": ["MathTools"]}"#,
            ".",
            "unknown key 'colapsing' in AgentConfig (did you mean 'collapsing'?); ",
            AGENT_KNOWN,
        ),
        (
            r#"{"collapsing": {"Enable": false}}"#,
            "collapsing",
            "unknown key 'Enable' in CollapsingConfig (did you mean 'enabled'?); ",
            COLLAPSING_KNOWN,
        ),
        (
            r#"{"model": {"name": "gpt"}}"#,
            "model",
            "unknown key 'name' in ModelConfig; ",
            MODEL_KNOWN,
        ),
        (
            r#"{"tool_harnesses": ["A", {"name": "B", "Fucntions": ["x"]}]}"#,
            "tool_harnesses[1]",
            "unknown key 'Fucntions' in ToolHarnessReference (did you mean 'functions'?); ",
            REFERENCE_KNOWN,
        ),
        (
            r#"{"sub_agents": [{"name": "a", "description": "d", "tools": []}]}"#,
            "sub_agents[0]",
            "unknown key 'tools' in SubAgentConfig; ",
            SUB_AGENT_KNOWN,
        ),
        (
            r#"{"sub_agents": [{"name": "a", "description": "d", "config": {"parent_functions": []}}]}"#,
            "sub_agents[0].config",
            "unknown key 'parent_functions' in AgentConfig; ",
            AGENT_KNOWN,
        ),
        (
            r#"{"tool-harnesses": []}"#,
            ".",
            "unknown key 'tool-harnesses' in AgentConfig",
            AGENT_KNOWN,
        ),
    ];
    for (text, path, message, known) in cases {
        let err = parse_err(text);
        assert_invalid(&err, path, message);
        assert!(err.message().contains(known), "{err}");
    }
}

#[test]
fn keys_that_normalise_alike_are_an_error_naming_both() {
    let cases: [(&str, &str, &str); 8] = [
        (
            r#"{"ToolHarnesses": [], "tool_harnesses": []}"#,
            ".",
            "duplicate key in AgentConfig: 'ToolHarnesses' and 'tool_harnesses' both mean 'tool_harnesses'",
        ),
        (
            r#"{"name": "a", "name": "b"}"#,
            ".",
            "duplicate key in AgentConfig: 'name' appears twice",
        ),
        (
            r#"{"collapsing": {"Enabled": true, "enabled": false}}"#,
            "collapsing",
            "duplicate key in CollapsingConfig: 'Enabled' and 'enabled' both mean 'enabled'",
        ),
        (
            r#"{"model": {"base_url": "a", "BaseUrl": "b"}}"#,
            "model",
            "duplicate key in ModelConfig: 'base_url' and 'BaseUrl' both mean 'base_url'",
        ),
        (
            r#"{"tool_harnesses": [{"Name": "A", "name": "B"}]}"#,
            "tool_harnesses[0]",
            "duplicate key in ToolHarnessReference: 'Name' and 'name' both mean 'name'",
        ),
        (
            r#"{"sub_agents": [{"name": "a", "description": "d", "ParentFunctions": [], "parentfunctions": []}]}"#,
            "sub_agents[0]",
            "duplicate key in SubAgentConfig: 'ParentFunctions' and 'parentfunctions' both mean 'parent_functions'",
        ),
        (
            r#"{"tool_harnesses": [{"name": "A", "middleware_configs": {"DbAudit": {}, "dbaudit": {}}}]}"#,
            "tool_harnesses[0].middleware_configs",
            "duplicate key in middleware_configs: 'DbAudit' and 'dbaudit' name the same middleware",
        ),
        (
            r#"{"tool_harnesses": [{"name": "A", "middleware_configs": {"DbAudit": {}, "DbAudit": 1}}]}"#,
            "tool_harnesses[0].middleware_configs",
            "duplicate key in middleware_configs: 'DbAudit' appears twice",
        ),
    ];
    for (text, path, message) in cases {
        assert_invalid(&parse_err(text), path, message);
    }
}

#[test]
fn config_errors_convert_into_build_errors() {
    fn parse(text: &str) -> Result<AgentConfig, BuildError> {
        Ok(AgentConfig::from_json(text)?)
    }
    let err = parse(r#"{"collapsing": null}"#).unwrap_err();
    assert!(matches!(err, BuildError::ConfigParse(_)));
    assert!(
        err.to_string()
            .contains("collapsing must be an object; omit it to use the default")
    );
    let source: &dyn std::error::Error = &AgentConfig::from_json("{").unwrap_err();
    assert!(source.to_string().starts_with("invalid AgentConfig JSON: "));
}

#[test]
fn from_value_has_the_nesting_limit_of_json_text() {
    for depth in 100..140 {
        let mut deep = serde_json::json!(1);
        for _ in 0..depth {
            deep = serde_json::json!([deep]);
        }
        let value = serde_json::json!({"tool_harnesses": [{"name": "H", "config": deep}]});
        if let Ok(config) = AgentConfig::from_value(value) {
            assert_eq!(
                AgentConfig::from_json(&config.to_json()),
                Ok(config),
                "depth {depth}"
            );
        } else {
            assert!(depth > 120, "depth {depth} rejected");
        }
    }
    let mut deep = serde_json::json!(1);
    for _ in 0..200 {
        deep = serde_json::json!([deep]);
    }
    let error = AgentConfig::from_value(
        serde_json::json!({"tool_harnesses": [{"name": "H", "config": deep}]}),
    )
    .unwrap_err();
    assert!(error.to_string().contains("nested too deeply"), "{error}");
    assert!(
        error.path().starts_with("tool_harnesses[0].config[0]"),
        "{}",
        error.path()
    );
}

#[test]
fn middleware_config_keys_fold_ascii_like_the_build() {
    let reference = ToolHarnessReference::from_json(
        r#"{"name": "H", "middleware_configs": {"Ämw": {}, "ämw": {}}}"#,
    );
    assert!(reference.is_ok(), "{reference:?}");
    let duplicate = ToolHarnessReference::from_json(
        r#"{"name": "H", "middleware_configs": {"Audit": {}, "AUDIT": {}}}"#,
    );
    assert!(duplicate.is_err());
}

// ---------------------------------------------------------------------------------------------
// Limits

#[test]
fn limits_errors_carry_their_paths() {
    let err = parse_err(r#"{"limits": null}"#);
    assert_invalid(
        &err,
        "limits",
        "limits must be an object; omit it to use the defaults",
    );

    let err = parse_err(r#"{"Limits": {"MaxParallelCalls": 0}}"#);
    assert_invalid(
        &err,
        "Limits.MaxParallelCalls",
        "max_parallel_calls must be at least 1",
    );

    let err = parse_err(r#"{"limits": {"max_tool_result_bytes": -5}}"#);
    assert_invalid(
        &err,
        "limits.max_tool_result_bytes",
        "invalid value: integer `-5`",
    );

    let err = parse_err(r#"{"limits": {"max_argument_bytes": "big"}}"#);
    assert_invalid(
        &err,
        "limits.max_argument_bytes",
        "invalid type: string \"big\"",
    );

    let err = parse_err(r#"{"limits": {"max_parallel_call": 3}}"#);
    assert_invalid(
        &err,
        "limits",
        "unknown key 'max_parallel_call' in Limits (did you mean 'max_parallel_calls'?); \
         known keys: max_tool_result_bytes, max_tool_result_media_bytes, max_argument_bytes, \
         max_parallel_calls",
    );

    let err = parse_err(r#"{"limits": {"maxParallelCalls": 3, "max_parallel_calls": 4}}"#);
    assert_invalid(
        &err,
        "limits",
        "duplicate key in Limits: 'maxParallelCalls' and 'max_parallel_calls' both mean 'max_parallel_calls'",
    );

    let err = parse_err(r#"{"limits": [1]}"#);
    assert_invalid(&err, "limits", "expected a limits object");

    // `limits` is listed among the agent's keys.
    let err = parse_err(r#"{"limit": {}}"#);
    assert!(err.message().contains("did you mean 'limits'?"), "{err}");
}

#[test]
fn limits_round_trip_in_canonical_form() {
    use hpd_agent::config::Limits;
    let config = {
        let mut config = AgentConfig::default();
        config.limits = Limits::default().with_max_parallel_calls(3);
        config
    };
    let json = config.to_json();
    assert_eq!(
        json,
        "{\n  \"limits\": {\n    \"max_parallel_calls\": 3\n  }\n}"
    );
    assert_eq!(AgentConfig::from_json(&json), Ok(config));
    // The defaults are left out, also when written explicitly.
    let explicit = AgentConfig::from_json(
        r#"{"limits": {"max_tool_result_bytes": 65536, "max_argument_bytes": 262144, "max_parallel_calls": 16}}"#,
    )
    .unwrap();
    assert!(explicit.limits.is_default());
    assert_eq!(explicit.to_json(), "{}");
}

#[test]
fn output_schema_errors_name_the_path() {
    // A schema that is not a JSON Schema: the message carries the pointer into the schema.
    let err = parse_err(
        r#"{"output_schema": {"name": "weather", "schema": {"type": "object", "properties": {"celsius": {"type": "float"}}}}}"#,
    );
    #[cfg(feature = "output-validation")]
    {
        assert_invalid(&err, "output_schema.schema", "not a valid JSON Schema: ");
        assert!(
            err.message().ends_with("(at /properties/celsius/type)"),
            "{err}"
        );
    }
    #[cfg(not(feature = "output-validation"))]
    drop(err);
    // A schema that is not an object.
    let err = parse_err(r#"{"OutputSchema": {"Name": "weather", "Schema": "a string"}}"#);
    assert_invalid(
        &err,
        "OutputSchema.Schema",
        "a JSON Schema is an object (or a boolean)",
    );
    // The name the OpenAI APIs accept.
    let err = parse_err(r#"{"output_schema": {"name": "the weather", "schema": {}}}"#);
    assert_invalid(
        &err,
        "output_schema.name",
        "output schema name 'the weather' is invalid; use 1 to 64 of A-Z a-z 0-9 _ -",
    );
    // Missing parts, unknown keys, wrong types.
    let err = parse_err(r#"{"output_schema": {"name": "weather"}}"#);
    assert_invalid(
        &err,
        "output_schema",
        "missing key 'schema' in OutputSchema; give the answer's JSON Schema",
    );
    let err = parse_err(r#"{"output_schema": {"schema": {}}}"#);
    assert_invalid(
        &err,
        "output_schema",
        "missing key 'name' in OutputSchema; name the answer's format",
    );
    let err = parse_err(r#"{"output_schema": {"name": "w", "schema": {}, "retrys": 2}}"#);
    assert_invalid(
        &err,
        "output_schema",
        "unknown key 'retrys' in OutputSchema (did you mean 'retries'?); known keys: name, schema, description, strict, retries",
    );
    let err = parse_err(r#"{"output_schema": {"name": "w", "schema": {}, "retries": -1}}"#);
    assert_invalid(&err, "output_schema.retries", "invalid value: integer `-1`");
    let err = parse_err(r#"{"output_schema": "weather"}"#);
    assert_invalid(
        &err,
        "output_schema",
        "expected an OutputSchema object with 'name' and 'schema'",
    );
}

#[test]
fn output_schema_round_trips_and_reaches_the_agent() {
    let text = "{\n  \"output_schema\": {\n    \"name\": \"weather\",\n    \"schema\": {\n      \"type\": \"object\"\n    },\n    \"strict\": false,\n    \"retries\": 3\n  }\n}";
    let config = AgentConfig::from_json(text).unwrap();
    assert_eq!(config.to_json(), text);
    let output = config.output_schema.clone().unwrap();
    assert_eq!(
        (output.name.as_str(), output.strict, output.retries),
        ("weather", false, Some(3))
    );
    assert!(!output.to_schema().unwrap().is_strict());
    // A schema the builder cannot use is a build error, not a panic (built in code).
    let mut bad = config;
    bad.output_schema = Some(hpd_agent::config::OutputSchemaConfig::new("w", json!(7)));
    let error = hpd_agent::AgentBuilder::from_config(bad)
        .with_chat_client(hpd_agent::ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::OutputSchema(_)), "{error}");
    assert_eq!(
        error.to_string(),
        "invalid output schema: a JSON Schema is an object (or a boolean)"
    );
}
