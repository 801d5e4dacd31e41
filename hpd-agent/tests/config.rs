//! JSON configuration: parsing in every key spelling, canonical serialization, errors with their
//! texts and paths, and property tests (no input panics; round trips hold).

use std::collections::BTreeMap;

use hpd_agent::{
    AgentConfig, BuildError, CollapsingConfig, ConfigError, ConfigErrorKind, McpServerConfig,
    McpTransportConfig, ModelConfig, RunConfigData, SubAgentConfig, ToolHarnessReference,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers

/// The SPEC §5.1 example, verbatim.
const SPEC_EXAMPLE: &str = r#"{
  "name": "assistant",
  "instructions": "Be brief.",
  "collapsing": { "never_collapse": ["WeatherTools"] },
  "tool_harnesses": [
    "WeatherTools",
    { "name": "SearchTools", "config": { "MaxResults": 3 },
      "metadata": { "DefaultProvider": "brave", "HasTavilyProvider": false } },
    { "name": "DatabaseTools", "functions": ["query"],
      "middleware_configs": { "DbAuditMiddleware": { "AuditLevel": "Detailed" } } }
  ]
}"#;

/// The SPEC example in PascalCase, as the conformance scenarios write it.
const SPEC_EXAMPLE_PASCAL: &str = r#"{
  "Name": "assistant",
  "Instructions": "Be brief.",
  "Collapsing": { "NeverCollapse": ["WeatherTools"] },
  "ToolHarnesses": [
    "WeatherTools",
    { "Name": "SearchTools", "Config": { "MaxResults": 3 },
      "Metadata": { "DefaultProvider": "brave", "HasTavilyProvider": false } },
    { "Name": "DatabaseTools", "Functions": ["query"],
      "MiddlewareConfigs": { "DbAuditMiddleware": { "AuditLevel": "Detailed" } } }
  ]
}"#;

/// What `to_json` writes for the SPEC example.
const SPEC_EXAMPLE_CANONICAL: &str = r#"{
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

fn spec_example_expected() -> AgentConfig {
    AgentConfig {
        name: Some("assistant".into()),
        instructions: Some("Be brief.".into()),
        collapsing: CollapsingConfig {
            never_collapse: vec!["WeatherTools".into()],
            ..CollapsingConfig::default()
        },
        tool_harnesses: vec![
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("SearchTools")
                .with_config(json!({"MaxResults": 3}))
                .with_metadata(json!({"DefaultProvider": "brave", "HasTavilyProvider": false})),
            ToolHarnessReference::new("DatabaseTools")
                .with_functions(["query"])
                .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"})),
        ],
        ..AgentConfig::default()
    }
}

/// Key spellings the normalisation must accept.
#[derive(Clone, Copy, Debug)]
enum Style {
    Snake,
    Pascal,
    Camel,
    Lower,
    UpperSnake,
    ExtraUnderscores,
}

const STYLES: [Style; 6] = [
    Style::Snake,
    Style::Pascal,
    Style::Camel,
    Style::Lower,
    Style::UpperSnake,
    Style::ExtraUnderscores,
];

fn spell(key: &str, style: Style) -> String {
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
enum Object {
    Agent,
    Run,
}

/// Respells the keys of every object the project defines, leaving user values alone.
fn respell(value: &Value, object: Object, style: &mut dyn FnMut(&str) -> String) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        let value = match (object, key.as_str()) {
            (_, "tool_harnesses") => respell_list(value, style, respell_reference),
            (Object::Agent, "sub_agents") => respell_list(value, style, respell_sub_agent),
            (Object::Agent, "collapsing" | "model") => respell_flat(value, style),
            _ => value.clone(),
        };
        out.insert(style(key), value);
    }
    Value::Object(out)
}

/// Respells one item of a list.
type RespellItem = fn(&Value, &mut dyn FnMut(&str) -> String) -> Value;

fn respell_list(value: &Value, style: &mut dyn FnMut(&str) -> String, item: RespellItem) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(|v| item(v, style)).collect()),
        other => other.clone(),
    }
}

fn respell_flat(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (style(key), value.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn respell_reference(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
    // `config`, `metadata` and `middleware_configs` values (and the latter's keys) are kept.
    respell_flat(value, style)
}

fn respell_sub_agent(value: &Value, style: &mut dyn FnMut(&str) -> String) -> Value {
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

fn parse_err(text: &str) -> ConfigError {
    match AgentConfig::from_json(text) {
        Ok(config) => panic!("expected an error for {text}, got {config:?}"),
        Err(err) => err,
    }
}

fn run_err(text: &str) -> ConfigError {
    match RunConfigData::from_json(text) {
        Ok(run) => panic!("expected an error for {text}, got {run:?}"),
        Err(err) => err,
    }
}

/// Asserts an invalid-config error: its path, a substring of its message, and that `Display`
/// shows both.
fn assert_invalid(err: &ConfigError, path: &str, message: &str) {
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

const AGENT_KNOWN: &str =
    "known keys: name, instructions, model, max_iterations, collapsing, tool_harnesses, sub_agents";
const COLLAPSING_KNOWN: &str = "known keys: enabled, never_collapse, recovery, \
     execute_recovered_calls, persist_system_prompt_injections";
const MODEL_KNOWN: &str = "known keys: provider, model, base_url";
const REFERENCE_KNOWN: &str = "known keys: name, functions, config, metadata, middleware_configs";
const SUB_AGENT_KNOWN: &str = "known keys: name, description, config, parent_functions";
const RUN_KNOWN: &str = "known keys: tool_harnesses, additional_instructions, max_iterations";

// ---------------------------------------------------------------------------------------------
// The SPEC example in every spelling

#[test]
fn spec_example_parses() {
    assert_eq!(
        AgentConfig::from_json(SPEC_EXAMPLE).unwrap(),
        spec_example_expected()
    );
}

#[test]
fn spec_example_in_pascal_case_parses_equal() {
    assert_eq!(
        AgentConfig::from_json(SPEC_EXAMPLE_PASCAL).unwrap(),
        spec_example_expected()
    );
}

#[test]
fn spec_example_in_every_spelling_parses_equal_and_serializes_canonically() {
    let snake: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    for style in STYLES {
        let respelled = respell(&snake, Object::Agent, &mut |key| spell(key, style));
        let text = serde_json::to_string_pretty(&respelled).unwrap();
        if !matches!(style, Style::Snake | Style::Lower) {
            assert_ne!(respelled, snake, "{style:?} changed no key");
        }
        let parsed = AgentConfig::from_json(&text).unwrap_or_else(|e| panic!("{style:?}: {e}"));
        assert_eq!(parsed, spec_example_expected(), "{style:?}");
        assert_eq!(
            AgentConfig::from_value(respelled).unwrap(),
            parsed,
            "{style:?}"
        );
        let canonical = parsed.to_json();
        assert_eq!(canonical, SPEC_EXAMPLE_CANONICAL, "{style:?}");
        assert_eq!(
            AgentConfig::from_json(&canonical).unwrap(),
            parsed,
            "{style:?}"
        );
    }
}

#[test]
fn spellings_of_one_key_are_one_key() {
    for key in [
        "ToolHarnesses",
        "toolHarnesses",
        "toolharnesses",
        "tool_harnesses",
        "TOOLHARNESSES",
    ] {
        let config = AgentConfig::from_json(&format!(r#"{{"{key}": ["MathTools"]}}"#)).unwrap();
        assert_eq!(
            config.tool_harnesses,
            [ToolHarnessReference::new("MathTools")],
            "{key}"
        );
    }
}

#[test]
fn user_values_are_kept_untouched() {
    let config = AgentConfig::from_json(
        r#"{"tool_harnesses": [{"name": "SearchTools",
            "config": {"Max_Results": 3, "nested": {"Tool_Harnesses": null}},
            "metadata": ["any", {"Shape": 1.5}],
            "middleware_configs": {"Db_Audit_Middleware": {"audit_level": "x"}, "other": 7}}]}"#,
    )
    .unwrap();
    let reference = &config.tool_harnesses[0];
    assert_eq!(
        reference.config,
        Some(json!({"Max_Results": 3, "nested": {"Tool_Harnesses": null}}))
    );
    assert_eq!(reference.metadata, Some(json!(["any", {"Shape": 1.5}])));
    assert_eq!(
        reference.middleware_configs.keys().collect::<Vec<_>>(),
        ["Db_Audit_Middleware", "other"]
    );
    assert_eq!(
        reference.middleware_configs["Db_Audit_Middleware"],
        json!({"audit_level": "x"})
    );
}

#[test]
fn raw_floats_round_trip_exactly() {
    // Without serde_json's `float_roundtrip` these read back one ulp off.
    let floats = [
        1.0715660391465826e-75,
        -1.81996730402717e-179,
        0.1,
        1e300,
        5e-324,
    ];
    let config = AgentConfig {
        tool_harnesses: vec![ToolHarnessReference::new("H").with_config(json!(floats))],
        ..AgentConfig::default()
    };
    let canonical = config.to_json();
    let parsed = AgentConfig::from_json(&canonical).unwrap();
    assert_eq!(parsed, config);
    assert_eq!(parsed.to_json(), canonical);
}

#[test]
fn canonical_form_round_trips_byte_for_byte() {
    let config = AgentConfig::from_json(SPEC_EXAMPLE_CANONICAL).unwrap();
    assert_eq!(config.to_json(), SPEC_EXAMPLE_CANONICAL);
    let full = full_config();
    let canonical = full.to_json();
    let parsed = AgentConfig::from_json(&canonical).unwrap();
    assert_eq!(parsed, full);
    assert_eq!(parsed.to_json(), canonical);
}

#[test]
fn serialization_leaves_defaults_out() {
    assert_eq!(AgentConfig::default().to_json(), "{}");
    assert_eq!(
        AgentConfig::from_json("{}").unwrap(),
        AgentConfig::default()
    );
    // Each non-default collapsing field alone.
    let config = AgentConfig {
        collapsing: CollapsingConfig {
            recovery: false,
            ..CollapsingConfig::default()
        },
        ..AgentConfig::default()
    };
    assert_eq!(
        config.to_json(),
        "{\n  \"collapsing\": {\n    \"recovery\": false\n  }\n}"
    );
    // Explicit default values parse to the default and are left out when written back.
    let explicit = AgentConfig::from_json(
        r#"{"collapsing": {"enabled": true, "never_collapse": [], "recovery": true,
            "execute_recovered_calls": false, "persist_system_prompt_injections": false},
            "tool_harnesses": [], "sub_agents": [], "name": null, "model": null}"#,
    )
    .unwrap();
    assert_eq!(explicit, AgentConfig::default());
    assert_eq!(explicit.to_json(), "{}");
}

#[test]
fn name_only_reference_is_a_bare_string_and_others_are_objects() {
    let config = AgentConfig {
        tool_harnesses: vec![
            ToolHarnessReference::new("A"),
            ToolHarnessReference::new("B").with_config(json!({})),
        ],
        ..AgentConfig::default()
    };
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        json!({"tool_harnesses": ["A", {"name": "B", "config": {}}]})
    );
    // An object with only a name parses equal to the string and is written as the string.
    let object = AgentConfig::from_json(r#"{"tool_harnesses": [{"Name": "A"}]}"#).unwrap();
    assert_eq!(object.tool_harnesses, [ToolHarnessReference::new("A")]);
    assert_eq!(
        object.to_json(),
        "{\n  \"tool_harnesses\": [\n    \"A\"\n  ]\n}"
    );
}

fn full_config() -> AgentConfig {
    AgentConfig {
        name: Some("assistant".into()),
        instructions: Some("Be brief.\nReally.".into()),
        model: Some(ModelConfig {
            provider: Some("openai".into()),
            model: Some("gpt-4o-mini".into()),
            base_url: Some("http://localhost:11434/v1".into()),
        }),
        max_iterations: Some(7),
        collapsing: CollapsingConfig {
            enabled: false,
            never_collapse: vec!["WeatherTools".into(), "MathTools".into()],
            recovery: false,
            execute_recovered_calls: true,
            persist_system_prompt_injections: true,
        },
        tool_harnesses: vec![
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("SearchTools")
                .with_functions(["search", "tavily_search"])
                .with_config(json!({"MaxResults": 3}))
                .with_metadata(json!({"DefaultProvider": "brave"}))
                .with_middleware_config("B", json!(null))
                .with_middleware_config("A", json!([1, 2])),
        ],
        sub_agents: vec![
            SubAgentConfig::new(
                "researcher",
                "Looks things up.",
                AgentConfig {
                    instructions: Some("Be thorough.".into()),
                    tool_harnesses: vec![ToolHarnessReference::new("SearchTools")],
                    sub_agents: vec![SubAgentConfig::new("leaf", "", AgentConfig::default())],
                    ..AgentConfig::default()
                },
            )
            .with_parent_functions(["DatabaseTools.query"]),
            SubAgentConfig::new("plain", "No config.", AgentConfig::default()),
        ],
        ..AgentConfig::default()
    }
}

#[test]
fn full_config_has_the_documented_canonical_layout() {
    let expected = r#"{
  "name": "assistant",
  "instructions": "Be brief.\nReally.",
  "model": {
    "provider": "openai",
    "model": "gpt-4o-mini",
    "base_url": "http://localhost:11434/v1"
  },
  "max_iterations": 7,
  "collapsing": {
    "enabled": false,
    "never_collapse": [
      "WeatherTools",
      "MathTools"
    ],
    "recovery": false,
    "execute_recovered_calls": true,
    "persist_system_prompt_injections": true
  },
  "tool_harnesses": [
    "WeatherTools",
    {
      "name": "SearchTools",
      "functions": [
        "search",
        "tavily_search"
      ],
      "config": {
        "MaxResults": 3
      },
      "metadata": {
        "DefaultProvider": "brave"
      },
      "middleware_configs": {
        "A": [
          1,
          2
        ],
        "B": null
      }
    }
  ],
  "sub_agents": [
    {
      "name": "researcher",
      "description": "Looks things up.",
      "config": {
        "instructions": "Be thorough.",
        "tool_harnesses": [
          "SearchTools"
        ],
        "sub_agents": [
          {
            "name": "leaf",
            "description": ""
          }
        ]
      },
      "parent_functions": [
        "DatabaseTools.query"
      ]
    },
    {
      "name": "plain",
      "description": "No config."
    }
  ]
}"#;
    assert_eq!(full_config().to_json(), expected);
    assert_eq!(AgentConfig::from_json(expected).unwrap(), full_config());
}

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
    assert_eq!(
        config,
        AgentConfig {
            tool_harnesses: vec![
                ToolHarnessReference::new("X")
                    .with_config(Value::Null)
                    .with_metadata(Value::Null)
            ],
            ..AgentConfig::default()
        }
    );
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
    assert_eq!(
        config.collapsing,
        CollapsingConfig {
            enabled: false,
            ..CollapsingConfig::default()
        }
    );
    assert!(AgentConfig::default().collapsing.enabled);
    assert!(AgentConfig::default().collapsing.recovery);
    assert!(!AgentConfig::default().collapsing.execute_recovered_calls);
    assert!(
        !AgentConfig::default()
            .collapsing
            .persist_system_prompt_injections
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
        SubAgentConfig::new(
            "researcher",
            "Looks things up.",
            AgentConfig {
                instructions: Some("Be thorough.".into()),
                collapsing: CollapsingConfig {
                    enabled: false,
                    ..CollapsingConfig::default()
                },
                tool_harnesses: vec![
                    ToolHarnessReference::new("SearchTools").with_functions(["search"]),
                ],
                sub_agents: vec![SubAgentConfig::new(
                    "deeper",
                    "d",
                    AgentConfig {
                        max_iterations: Some(2),
                        ..AgentConfig::default()
                    },
                )],
                ..AgentConfig::default()
            },
        )
        .with_parent_functions(["DatabaseTools.query", "MathTools.add"]),
        SubAgentConfig::new("bare", "No config.", AgentConfig::default()),
    ];
    assert_eq!(config.sub_agents, expected);
    assert_eq!(AgentConfig::from_json(&config.to_json()).unwrap(), config);
}

#[test]
fn from_str_is_from_json() {
    let parsed: AgentConfig = SPEC_EXAMPLE.parse().unwrap();
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
    assert_eq!(
        config.collapsing,
        CollapsingConfig {
            enabled: false,
            execute_recovered_calls: true,
            ..CollapsingConfig::default()
        }
    );

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
        "expected a model object (provider, model, base_url)",
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

// ---------------------------------------------------------------------------------------------
// Property tests

mod properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    const ALL_KEYS: &[&str] = &[
        "name",
        "instructions",
        "model",
        "max_iterations",
        "collapsing",
        "tool_harnesses",
        "sub_agents",
        "provider",
        "base_url",
        "enabled",
        "never_collapse",
        "recovery",
        "execute_recovered_calls",
        "persist_system_prompt_injections",
        "functions",
        "config",
        "metadata",
        "middleware_configs",
        "description",
        "parent_functions",
        "additional_instructions",
    ];

    fn any_style() -> impl Strategy<Value = Style> {
        select(STYLES.to_vec())
    }

    /// A key spelled at random: a real key in a known style, a real key with random case and
    /// underscores, or anything.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (select(ALL_KEYS), any_style()).prop_map(|(k, s)| spell(k, s)),
            2 => (select(ALL_KEYS), any::<u64>()).prop_map(|(k, bits)| scramble(k, bits)),
            1 => "[A-Za-z_]{0,12}",
            1 => any::<String>(),
        ]
    }

    /// Random case per letter, and underscores dropped or doubled, driven by `bits`.
    fn scramble(key: &str, bits: u64) -> String {
        let mut out = String::new();
        for (i, c) in key.chars().enumerate() {
            let bit = |n: usize| bits >> ((i * 2 + n) % 64) & 1 == 1;
            match c {
                '_' if bit(0) => {}
                '_' if bit(1) => out.push_str("__"),
                c if bit(0) => out.push(c.to_ascii_uppercase()),
                c => out.push(c),
            }
        }
        out
    }

    /// A JSON document whose objects may repeat keys (so it is rendered as text by hand).
    #[derive(Debug, Clone)]
    enum Doc {
        Leaf(Value),
        List(Vec<Doc>),
        Object(Vec<(String, Doc)>),
    }

    impl Doc {
        fn text(&self) -> String {
            match self {
                Doc::Leaf(value) => value.to_string(),
                Doc::List(items) => {
                    format!(
                        "[{}]",
                        items.iter().map(Doc::text).collect::<Vec<_>>().join(",")
                    )
                }
                Doc::Object(entries) => format!(
                    "{{{}}}",
                    entries
                        .iter()
                        .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), v.text()))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            }
        }

        fn value(&self) -> Value {
            match self {
                Doc::Leaf(value) => value.clone(),
                Doc::List(items) => Value::Array(items.iter().map(Doc::value).collect()),
                Doc::Object(entries) => Value::Object(
                    entries
                        .iter()
                        .map(|(k, v)| (k.clone(), v.value()))
                        .collect(),
                ),
            }
        }
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<i32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
            // Any finite double: needs serde_json's `float_roundtrip` to read back exactly.
            any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
                .map(Value::Number)),
            "[A-Za-z._ ]{0,10}".prop_map(Value::from),
            select(vec!["WeatherTools", "MathTools", "", "X.y"]).prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ]
    }

    fn doc() -> impl Strategy<Value = Doc> {
        scalar()
            .prop_map(Doc::Leaf)
            .prop_recursive(5, 96, 8, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Doc::List),
                    prop::collection::vec((key(), inner), 0..7).prop_map(Doc::Object),
                ]
            })
    }

    /// Checks the round-trip laws on whatever parsed.
    fn check_agent(config: &AgentConfig) -> Result<(), TestCaseError> {
        let canonical = config.to_json();
        let back = AgentConfig::from_json(&canonical);
        prop_assert_eq!(back.as_ref(), Ok(config), "{}", canonical);
        prop_assert_eq!(back.unwrap().to_json(), canonical);
        Ok(())
    }

    fn check_run(run: &RunConfigData) -> Result<(), TestCaseError> {
        let canonical = run.to_json();
        prop_assert_eq!(RunConfigData::from_json(&canonical), Ok(run.clone()));
        Ok(())
    }

    fn names() -> impl Strategy<Value = String> {
        "[A-Za-z][A-Za-z0-9_]{0,8}"
    }

    fn raw() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn reference() -> impl Strategy<Value = ToolHarnessReference> {
        (
            names(),
            prop::option::of(prop::collection::vec(names(), 1..4)),
            prop::option::of(raw()),
            prop::option::of(raw()),
            prop::collection::vec((names(), raw()), 0..3),
        )
            .prop_map(|(name, functions, config, metadata, middleware_configs)| {
                // Through the helper, which keeps middleware names unique case-insensitively.
                middleware_configs.into_iter().fold(
                    ToolHarnessReference {
                        name,
                        functions,
                        config,
                        metadata,
                        middleware_configs: BTreeMap::new(),
                    },
                    |reference, (middleware, config)| {
                        reference.with_middleware_config(middleware, config)
                    },
                )
            })
    }

    fn collapsing() -> impl Strategy<Value = CollapsingConfig> {
        (
            any::<bool>(),
            prop::collection::vec(names(), 0..3),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(enabled, never_collapse, recovery, execute, persist)| {
                CollapsingConfig {
                    enabled,
                    never_collapse,
                    recovery,
                    execute_recovered_calls: execute,
                    persist_system_prompt_injections: persist,
                }
            })
    }

    fn flat_config() -> impl Strategy<Value = AgentConfig> {
        (
            prop::option::of(any::<String>()),
            prop::option::of(any::<String>()),
            prop::option::of(
                (
                    prop::option::of(names()),
                    prop::option::of(names()),
                    prop::option::of(any::<String>()),
                )
                    .prop_map(|(provider, model, base_url)| ModelConfig {
                        provider,
                        model,
                        base_url,
                    }),
            ),
            prop::option::of(any::<usize>()),
            collapsing(),
            prop::collection::vec(reference(), 0..4),
            prop::collection::vec(mcp_server(), 0..3),
        )
            .prop_map(
                |(
                    name,
                    instructions,
                    model,
                    max_iterations,
                    collapsing,
                    tool_harnesses,
                    mcp_servers,
                )| {
                    AgentConfig {
                        name,
                        instructions,
                        model,
                        max_iterations,
                        collapsing,
                        tool_harnesses,
                        sub_agents: Vec::new(),
                        mcp_servers,
                    }
                },
            )
    }

    fn mcp_server() -> impl Strategy<Value = McpServerConfig> {
        let transport = prop_oneof![
            (
                names(),
                prop::collection::vec(any::<String>(), 0..3),
                prop::collection::btree_map(any::<String>(), any::<String>(), 0..3),
            )
                .prop_map(|(command, args, env)| McpTransportConfig::Stdio {
                    command,
                    args,
                    env
                }),
            (
                names(),
                prop::collection::btree_map(any::<String>(), any::<String>(), 0..3),
            )
                .prop_map(|(url, headers)| McpTransportConfig::Http { url, headers }),
        ];
        (
            names(),
            transport,
            prop::option::of(any::<String>()),
            any::<bool>(),
            prop::option::of(prop::collection::vec(names(), 1..3)),
            prop::option::of(1..u64::MAX),
        )
            .prop_map(
                |(name, transport, description, collapse, functions, timeout_ms)| McpServerConfig {
                    name,
                    transport,
                    description,
                    collapse,
                    functions,
                    timeout_ms,
                },
            )
    }

    fn config() -> impl Strategy<Value = AgentConfig> {
        flat_config().prop_recursive(2, 8, 3, |inner| {
            (
                inner.clone(),
                prop::collection::vec(
                    (
                        names(),
                        any::<String>(),
                        inner,
                        prop::collection::vec("[A-Za-z]{1,5}\\.[a-z_]{1,5}", 0..3),
                    ),
                    0..3,
                ),
            )
                .prop_map(|(mut config, subs)| {
                    config.sub_agents = subs
                        .into_iter()
                        .map(
                            |(name, description, child, parent_functions)| SubAgentConfig {
                                name,
                                description,
                                config: Box::new(child),
                                parent_functions,
                            },
                        )
                        .collect();
                    config
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Arbitrary JSON with real keys in many spellings: an answer, never a panic; whatever
        /// parses round-trips.
        #[test]
        fn arbitrary_documents_never_panic(doc in doc()) {
            let text = doc.text();
            let value = doc.value();
            if let Ok(config) = AgentConfig::from_json(&text) {
                check_agent(&config)?;
            }
            if let Ok(config) = AgentConfig::from_value(value.clone()) {
                check_agent(&config)?;
            }
            if let Ok(run) = RunConfigData::from_json(&text) {
                check_run(&run)?;
            }
            if let Ok(run) = RunConfigData::from_value(value) {
                check_run(&run)?;
            }
        }

        /// Arbitrary documents shaped like configs (the real keys at the right places, random
        /// spellings and values) are parsed or rejected, never a panic.
        #[test]
        fn config_shaped_documents_never_panic(
            top in prop::collection::vec((select(ALL_KEYS), any::<u64>(), doc()), 0..6),
        ) {
            let doc = Doc::Object(
                top.into_iter().map(|(k, bits, v)| (scramble(k, bits), v)).collect(),
            );
            let text = doc.text();
            let agent = AgentConfig::from_json(&text);
            let run = RunConfigData::from_json(&text);
            if let Ok(config) = &agent {
                check_agent(config)?;
            }
            if let Ok(run) = &run {
                check_run(run)?;
            }
            // Errors are never syntax errors: the text is JSON.
            for kind in [agent.err().map(|e| e.kind()), run.err().map(|e| e.kind())]
                .into_iter()
                .flatten()
            {
                prop_assert_eq!(kind, ConfigErrorKind::Invalid);
            }
        }

        /// Arbitrary text: an answer, never a panic.
        #[test]
        fn arbitrary_text_never_panics(text in prop_oneof![any::<String>(), "[\\[\\]{}\":,a-zA-Z_0-9 .-]{0,60}"]) {
            let _ = AgentConfig::from_json(&text);
            let _ = RunConfigData::from_json(&text);
        }

        /// Every config built in code survives the canonical form, in any key spelling.
        #[test]
        fn configs_round_trip_in_every_spelling(config in config(), style in any_style(), bits in any::<u64>()) {
            check_agent(&config)?;
            let canonical: Value = serde_json::from_str(&config.to_json()).unwrap();
            let respelled = respell(&canonical, Object::Agent, &mut |k| spell(k, style));
            prop_assert_eq!(AgentConfig::from_value(respelled), Ok(config.clone()));
            let scrambled = respell(&canonical, Object::Agent, &mut |k| scramble(k, bits));
            prop_assert_eq!(AgentConfig::from_json(&scrambled.to_string()), Ok(config.clone()));
        }
    }
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
