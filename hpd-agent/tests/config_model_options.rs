//! `model.options` in JSON config: every key spelling, the values, errors with their texts and
//! paths, and the canonical form.

use hpd_agent::{
    AgentConfig, chat::ModelOptions, chat::ToolChoice, config::ConfigError,
    config::ConfigErrorKind, config::ModelConfig,
};
use serde_json::json;

fn options(text: &str) -> ModelOptions {
    let config = AgentConfig::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    config
        .model
        .and_then(|m| m.options)
        .unwrap_or_else(|| panic!("{text}: no options"))
}

fn error(text: &str) -> ConfigError {
    match AgentConfig::from_json(text) {
        Ok(config) => panic!("expected an error for {text}, got {config:?}"),
        Err(err) => err,
    }
}

fn assert_invalid(text: &str, path: &str, message: &str) {
    let err = error(text);
    assert_eq!(err.kind(), ConfigErrorKind::Invalid, "{err}");
    assert_eq!(err.path(), path, "{err}");
    assert!(err.message().contains(message), "{err}");
}

fn full() -> ModelOptions {
    ModelOptions::new()
        .with_temperature(0.25)
        .with_top_p(0.5)
        .with_max_output_tokens(256)
        .with_stop(["\n\n", "END"])
        .with_seed(-3)
        .with_tool_choice(ToolChoice::tool("MathTools"))
        .with_parallel_tool_calls(false)
        .with_extra("reasoning_effort", json!("low"))
        .with_extra("Nested_Key", json!({"KeepMe": [1, 2.5, null]}))
}

#[test]
fn keys_match_in_every_spelling() {
    let snake = r#"{"model": {"options": {"temperature": 0.25, "top_p": 0.5,
        "max_output_tokens": 256, "stop": ["\n\n", "END"], "seed": -3,
        "tool_choice": {"tool": "MathTools"}, "parallel_tool_calls": false,
        "extra": {"reasoning_effort": "low", "Nested_Key": {"KeepMe": [1, 2.5, null]}}}}}"#;
    let pascal = r#"{"Model": {"Options": {"Temperature": 0.25, "TopP": 0.5,
        "MaxOutputTokens": 256, "Stop": ["\n\n", "END"], "Seed": -3,
        "ToolChoice": {"Tool": "MathTools"}, "ParallelToolCalls": false,
        "Extra": {"reasoning_effort": "low", "Nested_Key": {"KeepMe": [1, 2.5, null]}}}}}"#;
    let camel = r#"{"model": {"options": {"temperature": 0.25, "topP": 0.5,
        "maxOutputTokens": 256, "stop": ["\n\n", "END"], "seed": -3,
        "toolChoice": {"tool": "MathTools"}, "parallelToolCalls": false,
        "extra": {"reasoning_effort": "low", "Nested_Key": {"KeepMe": [1, 2.5, null]}}}}}"#;
    for text in [snake, pascal, camel] {
        // `extra` is the provider's: its keys are kept as written.
        assert_eq!(options(text), full(), "{text}");
    }
}

#[test]
fn values_have_their_short_forms() {
    assert_eq!(
        options(r#"{"model": {"options": {"stop": "END"}}}"#).stop,
        ["END"]
    );
    for (text, choice) in [
        ("\"auto\"", ToolChoice::Auto),
        ("\"NONE\"", ToolChoice::None),
        ("\"Required\"", ToolChoice::Required),
        (r#"{"TOOL": "add"}"#, ToolChoice::tool("add")),
    ] {
        let parsed = options(&format!(
            r#"{{"model": {{"options": {{"tool_choice": {text}}}}}}}"#
        ));
        assert_eq!(parsed.tool_choice, Some(choice), "{text}");
    }
    // `null` is absent, for every field.
    let nulls = r#"{"model": {"options": {"temperature": null, "top_p": null,
        "max_output_tokens": null, "stop": null, "seed": null, "tool_choice": null,
        "parallel_tool_calls": null, "extra": null}}}"#;
    assert_eq!(options(nulls), ModelOptions::default());
    let none = AgentConfig::from_json(r#"{"model": {"options": null}}"#).unwrap();
    assert_eq!(none.model, Some(ModelConfig::default()));
}

#[test]
fn mistakes_are_errors_with_their_paths() {
    let unknown = error(r#"{"model": {"options": {"temperatur": 1}}}"#);
    assert_eq!(unknown.path(), "model.options");
    assert_eq!(
        unknown.message(),
        "unknown key 'temperatur' in ModelOptions (did you mean 'temperature'?); known keys: \
         temperature, top_p, max_output_tokens, stop, seed, tool_choice, parallel_tool_calls, extra"
    );
    let duplicate = error(r#"{"model": {"options": {"TopP": 1, "top_p": 1}}}"#);
    assert_eq!(
        duplicate.message(),
        "duplicate key in ModelOptions: 'TopP' and 'top_p' both mean 'top_p'"
    );
    let cases = [
        (
            r#"{"temperature": -0.5}"#,
            "model.options.temperature",
            "temperature must not be negative",
        ),
        (
            r#"{"top_p": 1.5}"#,
            "model.options.top_p",
            "top_p must be between 0 and 1",
        ),
        (
            r#"{"max_output_tokens": 0}"#,
            "model.options.max_output_tokens",
            "max_output_tokens must be at least 1",
        ),
        (
            r#"{"max_output_tokens": -1}"#,
            "model.options.max_output_tokens",
            "invalid value: integer `-1`",
        ),
        (
            r#"{"seed": "x"}"#,
            "model.options.seed",
            "invalid type: string \"x\"",
        ),
        (
            r#"{"stop": [1]}"#,
            "model.options.stop[0]",
            "invalid type: integer `1`",
        ),
        (
            r#"{"tool_choice": "always"}"#,
            "model.options.tool_choice",
            "unknown tool_choice 'always'; expected \"auto\", \"none\", \"required\" or {\"tool\": \"name\"}",
        ),
        (
            r#"{"tool_choice": {}}"#,
            "model.options.tool_choice",
            "missing key 'tool' in ToolChoice; name the tool the model must call",
        ),
        (
            r#"{"tool_choice": {"tool": ""}}"#,
            "model.options.tool_choice.tool",
            "tool is empty",
        ),
        (
            r#"{"tool_choice": {"name": "x"}}"#,
            "model.options.tool_choice",
            "unknown key 'name' in ToolChoice; known keys: tool",
        ),
        (
            r#"{"extra": [1]}"#,
            "model.options.extra",
            "extra must be an object of request body fields",
        ),
        (
            r#"{"parallel_tool_calls": "yes"}"#,
            "model.options.parallel_tool_calls",
            "invalid type: string \"yes\"",
        ),
    ];
    for (options, path, message) in cases {
        assert_invalid(
            &format!(r#"{{"model": {{"options": {options}}}}}"#),
            path,
            message,
        );
    }
    assert_invalid(
        r#"{"model": {"options": [1]}}"#,
        "model.options",
        "invalid type: sequence",
    );
}

#[test]
fn options_serialize_in_the_canonical_form_and_round_trip() {
    let config = {
        let mut config = AgentConfig::default();
        config.model = Some(ModelConfig {
            model: Some("m".into()),
            options: Some(full()),
            ..ModelConfig::default()
        });
        config
    };
    let json = config.to_json();
    assert_eq!(
        json,
        r#"{
  "model": {
    "model": "m",
    "options": {
      "temperature": 0.25,
      "top_p": 0.5,
      "max_output_tokens": 256,
      "stop": [
        "\n\n",
        "END"
      ],
      "seed": -3,
      "tool_choice": {
        "tool": "MathTools"
      },
      "parallel_tool_calls": false,
      "extra": {
        "Nested_Key": {
          "KeepMe": [
            1,
            2.5,
            null
          ]
        },
        "reasoning_effort": "low"
      }
    }
  }
}"#
    );
    assert_eq!(AgentConfig::from_json(&json), Ok(config));
    for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required] {
        let config = {
            let mut config = AgentConfig::default();
            config.model = Some(ModelConfig {
                options: Some(ModelOptions::new().with_tool_choice(choice)),
                ..ModelConfig::default()
            });
            config
        };
        assert_eq!(AgentConfig::from_json(&config.to_json()), Ok(config));
    }
    // Empty options are written as an empty object and read back as such.
    let empty = {
        let mut config = AgentConfig::default();
        config.model = Some(ModelConfig {
            options: Some(ModelOptions::default()),
            ..ModelConfig::default()
        });
        config
    };
    assert_eq!(
        empty.to_json(),
        "{\n  \"model\": {\n    \"options\": {}\n  }\n}"
    );
    assert_eq!(AgentConfig::from_json(&empty.to_json()), Ok(empty));
}
