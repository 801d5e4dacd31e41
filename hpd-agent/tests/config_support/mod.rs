//! Shared helpers of the config test files: the reference example in several spellings, key
//! respelling, and error assertions. Each test file uses part of them.
#![allow(dead_code)]

use hpd_agent::{
    AgentConfig, config::CollapsingConfig, config::ConfigError, config::ConfigErrorKind,
    config::RunConfigData, config::ToolHarnessReference,
};
use serde_json::{Value, json};

/// The reference example of an agent config.
pub const EXAMPLE: &str = include_str!("example.json");

/// The same example in PascalCase, as the conformance scenarios write it.
pub const EXAMPLE_PASCAL: &str = include_str!("example_pascal.json");

/// What `to_json` writes for the example.
pub const EXAMPLE_CANONICAL: &str = r#"{
  "name": "assistant",
  "instructions": "Be brief.",
  "collapsing": {
    "never_collapse": [
      "WeatherTools"
    ]
  },
  "tool_harnesses": [
    "WeatherTools",
    {
      "name": "SearchTools",
      "config": {
        "MaxResults": 3
      },
      "metadata": {
        "DefaultProvider": "brave",
        "HasTavilyProvider": false
      }
    },
    {
      "name": "DatabaseTools",
      "functions": [
        "query"
      ],
      "middleware_configs": {
        "DbAuditMiddleware": {
          "AuditLevel": "Detailed"
        }
      }
    }
  ]
}"#;

pub fn spec_example_expected() -> AgentConfig {
    {
        let mut config = AgentConfig::default();
        config.name = Some("assistant".into());
        config.instructions = Some("Be brief.".into());
        config.collapsing = {
            let mut collapsing = CollapsingConfig::default();
            collapsing.never_collapse = vec!["WeatherTools".into()];
            collapsing
        };
        config.tool_harnesses = vec![
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("SearchTools")
                .with_config(json!({"MaxResults": 3}))
                .with_metadata(json!({"DefaultProvider": "brave", "HasTavilyProvider": false})),
            ToolHarnessReference::new("DatabaseTools")
                .with_functions(["query"])
                .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"})),
        ];
        config
    }
}

/// Key spellings the normalisation must accept.
#[derive(Clone, Copy, Debug)]
pub enum Style {
    Snake,
    Pascal,
    Camel,
    Lower,
    UpperSnake,
    ExtraUnderscores,
}

pub const STYLES: [Style; 6] = [
    Style::Snake,
    Style::Pascal,
    Style::Camel,
    Style::Lower,
    Style::UpperSnake,
    Style::ExtraUnderscores,
];

pub fn spell(key: &str, style: Style) -> String {
    let words: Vec<&str> = key.split('_').collect();
    let capitalise = |w: &str| {
        let mut chars = w.chars();
        chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default()
    };
    match style {
        Style::Snake => key.to_owned(),
        Style::Pascal => words.iter().map(|w| capitalise(w)).collect(),
        Style::Camel => {
            words[0].to_owned() + &words[1..].iter().map(|w| capitalise(w)).collect::<String>()
        }
        Style::Lower => words.concat(),
        Style::UpperSnake => key.to_ascii_uppercase(),
        Style::ExtraUnderscores => format!("_{}__", words.join("__")),
    }
}

/// Which object a JSON object is, to know which keys are the project's.
#[derive(Clone, Copy)]
pub enum Object {
    Agent,
    Run,
}

/// Respells the keys of every object the project defines, leaving user values alone.
pub fn respell(value: &Value, object: Object, style: &mut dyn FnMut(&str) -> String) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        let value = match (object, key.as_str()) {
            (_, "tool_harnesses") => respell_list(value, style, respell_reference),
            (Object::Agent, "sub_agents") => respell_list(value, style, respell_sub_agent),
            (Object::Agent, "collapsing" | "model" | "limits") => respell_flat(value, style),
            _ => value.clone(),
        };
        out.insert(style(key), value);
    }
    Value::Object(out)
}

/// Respells one item of a list.
type RespellItem = fn(&Value, &mut dyn FnMut(&str) -> String) -> Value;

pub fn respell_list(
    value: &Value,
    style: &mut dyn FnMut(&str) -> String,
    item: RespellItem,
) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(|v| item(v, style)).collect()),
        other => other.clone(),
    }
}

pub fn respell_flat(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (style(key), value.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

pub fn respell_reference(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
    // `config`, `metadata` and `middleware_configs` values (and the latter's keys) are kept.
    respell_flat(value, style)
}

pub fn respell_sub_agent(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if key == "config" {
                        respell(value, Object::Agent, style)
                    } else {
                        value.clone()
                    };
                    (style(key), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

pub fn parse_err(text: &str) -> ConfigError {
    match AgentConfig::from_json(text) {
        Ok(config) => panic!("expected an error for {text}, got {config:?}"),
        Err(err) => err,
    }
}

pub fn run_err(text: &str) -> ConfigError {
    match RunConfigData::from_json(text) {
        Ok(run) => panic!("expected an error for {text}, got {run:?}"),
        Err(err) => err,
    }
}

/// Asserts an invalid-config error: its path, a substring of its message, and that `Display`
/// shows both.
pub fn assert_invalid(err: &ConfigError, path: &str, message: &str) {
    assert_eq!(err.kind(), ConfigErrorKind::Invalid, "{err}");
    assert_eq!(err.path(), path, "{err}");
    assert!(err.message().contains(message), "{err}");
    let shown = err.to_string();
    assert!(shown.contains(message), "{shown}");
    let mut prefix = format!("invalid {}", err.document());
    if path != "." {
        prefix += &format!(" at '{path}'");
    }
    if let (Some(line), Some(column)) = (err.line(), err.column()) {
        prefix += &format!(" (line {line}, column {column})");
    }
    assert_eq!(shown, format!("{prefix}: {}", err.message()));
    assert!(!err.message().contains(" at line "), "{shown}");
}

pub const AGENT_KNOWN: &str =
    "known keys: name, instructions, model, max_iterations, collapsing, tool_harnesses, sub_agents";
pub const COLLAPSING_KNOWN: &str = "known keys: enabled, never_collapse, recovery, \
     execute_recovered_calls, keep_expansions_across_turns, persist_system_prompt_injections, layout, cache_stable";
pub const MODEL_KNOWN: &str = "known keys: provider, model, base_url";
pub const REFERENCE_KNOWN: &str =
    "known keys: name, functions, config, metadata, middleware_configs";
pub const SUB_AGENT_KNOWN: &str = "known keys: name, description, config, parent_functions";
pub const RUN_KNOWN: &str = "known keys: tool_harnesses, additional_instructions, max_iterations";
