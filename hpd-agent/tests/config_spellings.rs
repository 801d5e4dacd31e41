//! JSON configuration: the reference example in every key spelling, canonical serialization
//! and round trips.

use hpd_agent::{
    AgentConfig, config::CollapsingConfig, config::ModelConfig, config::SubAgentConfig,
    config::ToolHarnessReference,
};
use serde_json::{Value, json};

mod config_support;
use config_support::*;

// ---------------------------------------------------------------------------------------------
// The example in every spelling

#[test]
fn spec_example_parses() {
    assert_eq!(
        AgentConfig::from_json(EXAMPLE).unwrap(),
        spec_example_expected()
    );
}

#[test]
fn spec_example_in_pascal_case_parses_equal() {
    assert_eq!(
        AgentConfig::from_json(EXAMPLE_PASCAL).unwrap(),
        spec_example_expected()
    );
}

#[test]
fn spec_example_in_every_spelling_parses_equal_and_serializes_canonically() {
    let snake: Value = serde_json::from_str(EXAMPLE).unwrap();
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
        assert_eq!(canonical, EXAMPLE_CANONICAL, "{style:?}");
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
    let config = {
        let mut config = AgentConfig::default();
        config.tool_harnesses = vec![ToolHarnessReference::new("H").with_config(json!(floats))];
        config
    };
    let canonical = config.to_json();
    let parsed = AgentConfig::from_json(&canonical).unwrap();
    assert_eq!(parsed, config);
    assert_eq!(parsed.to_json(), canonical);
}

#[test]
fn canonical_form_round_trips_byte_for_byte() {
    let config = AgentConfig::from_json(EXAMPLE_CANONICAL).unwrap();
    assert_eq!(config.to_json(), EXAMPLE_CANONICAL);
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
    let config = {
        let mut config = AgentConfig::default();
        config.collapsing = {
            let mut collapsing = CollapsingConfig::default();
            collapsing.recovery = false;
            collapsing
        };
        config
    };
    assert_eq!(
        config.to_json(),
        "{\n  \"collapsing\": {\n    \"recovery\": false\n  }\n}"
    );
    // Explicit default values parse to the default and are left out when written back.
    let explicit = AgentConfig::from_json(
        r#"{"collapsing": {"enabled": true, "never_collapse": [], "recovery": true,
            "execute_recovered_calls": false, "keep_expansions_across_turns": false},
            "tool_harnesses": [], "sub_agents": [], "name": null, "model": null}"#,
    )
    .unwrap();
    assert_eq!(explicit, AgentConfig::default());
    assert_eq!(explicit.to_json(), "{}");
}

#[test]
fn name_only_reference_is_a_bare_string_and_others_are_objects() {
    let config = {
        let mut config = AgentConfig::default();
        config.tool_harnesses = vec![
            ToolHarnessReference::new("A"),
            ToolHarnessReference::new("B").with_config(json!({})),
        ];
        config
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
    {
        let mut config = AgentConfig::default();
        config.name = Some("assistant".into());
        config.instructions = Some("Be brief.\nReally.".into());
        config.model = Some(ModelConfig {
            provider: Some("openai".into()),
            model: Some("gpt-4o-mini".into()),
            base_url: Some("http://localhost:11434/v1".into()),
            deferred_tools: Some(hpd_agent::chat::DeferredTools::Unsupported),
            options: None,
        });
        config.max_iterations = Some(7);
        config.collapsing = {
            let mut collapsing = CollapsingConfig::default();
            collapsing.enabled = false;
            collapsing.never_collapse = vec!["WeatherTools".into(), "MathTools".into()];
            collapsing.recovery = false;
            collapsing.execute_recovered_calls = true;
            collapsing.keep_expansions_across_turns = true;
            collapsing.layout = hpd_agent::config::CollapsingLayout::Hide;
            collapsing
        };
        config.tool_harnesses = vec![
            ToolHarnessReference::new("WeatherTools"),
            ToolHarnessReference::new("SearchTools")
                .with_functions(["search", "tavily_search"])
                .with_config(json!({"MaxResults": 3}))
                .with_metadata(json!({"DefaultProvider": "brave"}))
                .with_middleware_config("B", json!(null))
                .with_middleware_config("A", json!([1, 2])),
        ];
        config.sub_agents = vec![
            SubAgentConfig::new("researcher", "Looks things up.", {
                let mut config = AgentConfig::default();
                config.instructions = Some("Be thorough.".into());
                config.tool_harnesses = vec![ToolHarnessReference::new("SearchTools")];
                config.sub_agents = vec![SubAgentConfig::new("leaf", "", AgentConfig::default())];
                config
            })
            .with_parent_functions(["DatabaseTools.query"]),
            SubAgentConfig::new("plain", "No config.", AgentConfig::default()),
        ];
        config
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
    "base_url": "http://localhost:11434/v1",
    "deferred_tools": "none"
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
    "keep_expansions_across_turns": true,
    "layout": "hide"
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

#[test]
fn the_old_name_of_keep_expansions_across_turns_is_read_and_written_as_the_new_one() {
    for text in [
        r#"{"collapsing": {"keep_expansions_across_turns": true}}"#,
        r#"{"collapsing": {"persist_system_prompt_injections": true}}"#,
        r#"{"Collapsing": {"PersistSystemPromptInjections": true}}"#,
        r#"{"collapsing": {"keep_expansions_across_turns": true,
                           "persist_system_prompt_injections": true}}"#,
    ] {
        let config = AgentConfig::from_json(text).unwrap();
        assert!(config.collapsing.keep_expansions_across_turns, "{text}");
        assert_eq!(
            config.to_json(),
            "{\n  \"collapsing\": {\n    \"keep_expansions_across_turns\": true\n  }\n}",
            "{text}"
        );
    }
    let error = AgentConfig::from_json(
        r#"{"collapsing": {"keep_expansions_across_turns": true,
                           "persist_system_prompt_injections": false}}"#,
    )
    .unwrap_err();
    assert_eq!(error.path(), "collapsing");
    assert!(
        error
            .message()
            .contains("persist_system_prompt_injections is the old name"),
        "{error}"
    );
}
