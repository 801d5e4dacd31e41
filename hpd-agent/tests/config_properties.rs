//! JSON configuration, property tests: no input panics, round trips hold.

use std::collections::BTreeMap;

use hpd_agent::{
    AgentConfig, chat::ModelOptions, chat::ToolChoice, config::CollapsingConfig,
    config::ConfigErrorKind, config::Limits, config::McpServerConfig, config::McpTransportConfig,
    config::ModelConfig, config::RunConfigData, config::SubAgentConfig,
    config::ToolHarnessReference,
};
use serde_json::Value;

mod config_support;
use config_support::*;

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
        "keep_expansions_across_turns",
        "layout",
        "container_notes",
        "resources",
        "cache_stable",
        "functions",
        "config",
        "metadata",
        "middleware_configs",
        "description",
        "parent_functions",
        "additional_instructions",
        "limits",
        "max_tool_result_bytes",
        "max_argument_bytes",
        "max_parallel_calls",
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
            prop::collection::vec(names(), 0..3),
        )
            .prop_map(
                |(name, functions, config, metadata, middleware_configs, approval)| {
                    // Through the helpers, which keep middleware names unique case-insensitively
                    // and approval names unique.
                    middleware_configs
                        .into_iter()
                        .fold(
                            ToolHarnessReference {
                                name,
                                functions,
                                config,
                                metadata,
                                middleware_configs: BTreeMap::new(),
                                requires_approval: Vec::new(),
                            },
                            |reference, (middleware, config)| {
                                reference.with_middleware_config(middleware, config)
                            },
                        )
                        .with_approval_required(approval)
                },
            )
    }

    fn model_options() -> impl Strategy<Value = ModelOptions> {
        let choice = prop_oneof![
            Just(ToolChoice::Auto),
            Just(ToolChoice::None),
            Just(ToolChoice::Required),
            names().prop_map(ToolChoice::Tool),
        ];
        (
            (
                prop::option::of(0.0f64..2.0),
                prop::option::of(0.0f64..=1.0),
                prop::option::of(1u32..),
                prop::collection::vec(any::<String>(), 0..3),
            ),
            (
                prop::option::of(any::<i64>()),
                prop::option::of(choice),
                prop::option::of(any::<bool>()),
                prop::collection::btree_map(any::<String>(), raw(), 0..3),
            ),
        )
            .prop_map(
                |(
                    (temperature, top_p, max_output_tokens, stop),
                    (seed, tool_choice, parallel, extra),
                )| {
                    let mut options = ModelOptions::default();
                    options.temperature = temperature;
                    options.top_p = top_p;
                    options.max_output_tokens = max_output_tokens;
                    options.stop = stop;
                    options.seed = seed;
                    options.tool_choice = tool_choice;
                    options.parallel_tool_calls = parallel;
                    options.extra = extra.into_iter().collect();
                    options
                },
            )
    }

    fn collapsing() -> impl Strategy<Value = CollapsingConfig> {
        (
            any::<bool>(),
            prop::collection::vec(names(), 0..3),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(hpd_agent::config::CollapsingLayout::ALL.to_vec()),
            any::<bool>(),
        )
            .prop_map(
                |(enabled, never_collapse, recovery, execute, persist, layout, notes)| {
                    let mut collapsing = CollapsingConfig::default();
                    collapsing.enabled = enabled;
                    collapsing.never_collapse = never_collapse;
                    collapsing.recovery = recovery;
                    collapsing.execute_recovered_calls = execute;
                    collapsing.keep_expansions_across_turns = persist;
                    collapsing.layout = layout;
                    collapsing.container_notes = notes;
                    collapsing
                },
            )
    }

    fn limits() -> impl Strategy<Value = Limits> {
        // Each limit the default (left out when written) or any value of at least 1.
        let limit = |default: usize| prop_oneof![Just(default), 1..=usize::MAX];
        (
            limit(hpd_agent::config::DEFAULT_MAX_TOOL_RESULT_BYTES),
            limit(hpd_agent::config::DEFAULT_MAX_ARGUMENT_BYTES),
            limit(hpd_agent::config::DEFAULT_MAX_PARALLEL_CALLS),
            limit(hpd_agent::config::DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES),
        )
            .prop_map(|(results, arguments, parallel, media)| {
                let mut limits = Limits::default();
                limits.max_tool_result_bytes = results;
                limits.max_tool_result_media_bytes = media;
                limits.max_argument_bytes = arguments;
                limits.max_parallel_calls = parallel;
                limits
            })
    }

    use hpd_agent::chat::DeferredTools;

    fn flat_config() -> impl Strategy<Value = AgentConfig> {
        (
            prop::option::of(any::<String>()),
            prop::option::of(any::<String>()),
            prop::option::of(
                (
                    prop::option::of(names()),
                    prop::option::of(names()),
                    prop::option::of(any::<String>()),
                    prop::option::of(prop::sample::select(vec![
                        DeferredTools::Unsupported,
                        DeferredTools::ToolReferences,
                        DeferredTools::ToolAdditions,
                        DeferredTools::ToolSearch,
                        DeferredTools::AdditionalTools,
                    ])),
                    prop::option::of(model_options()),
                )
                    .prop_map(
                        |(provider, model, base_url, deferred_tools, options)| ModelConfig {
                            provider,
                            model,
                            base_url,
                            deferred_tools,
                            options,
                        },
                    ),
            ),
            prop::option::of(any::<usize>()),
            collapsing(),
            prop::collection::vec(reference(), 0..4),
            prop::collection::vec(mcp_server(), 0..3),
            limits(),
            prop::option::of(context_budget()),
            prop::option::of(output_schema()),
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
                    limits,
                    context_budget,
                    output_schema,
                )| {
                    {
                        let mut config = AgentConfig::default();
                        config.name = name;
                        config.instructions = instructions;
                        config.model = model;
                        config.max_iterations = max_iterations;
                        config.collapsing = collapsing;
                        config.tool_harnesses = tool_harnesses;
                        config.sub_agents = Vec::new();
                        config.mcp_servers = mcp_servers;
                        config.limits = limits;
                        config.context_budget = context_budget;
                        config.output_schema = output_schema;
                        config
                    }
                },
            )
    }

    fn output_schema() -> impl Strategy<Value = hpd_agent::config::OutputSchemaConfig> {
        (
            "[A-Za-z0-9_-]{1,64}",
            prop::sample::select(vec![
                serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                serde_json::json!({"type": "array", "items": {"type": "integer", "minimum": 0}}),
                serde_json::json!(true),
                serde_json::json!({"enum": ["x", "y", null]}),
            ]),
            prop::option::of(any::<String>()),
            any::<bool>(),
            prop::option::of(any::<usize>()),
        )
            .prop_map(|(name, schema, description, strict, retries)| {
                let mut config = hpd_agent::config::OutputSchemaConfig::new(name, schema);
                config.description = description;
                config.strict = strict;
                config.retries = retries;
                config
            })
    }

    fn context_budget() -> impl Strategy<Value = hpd_agent::config::ContextBudget> {
        (
            prop::option::of(1..usize::MAX),
            prop::option::of(1..usize::MAX),
            any::<bool>(),
        )
            .prop_map(|(max_tokens, max_messages, drop_trimmed)| {
                let mut budget = hpd_agent::config::ContextBudget::default();
                budget.max_tokens = max_tokens;
                budget.max_messages = max_messages;
                budget.drop_trimmed = drop_trimmed;
                budget
            })
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
            any::<bool>(),
        )
            .prop_map(
                |(name, transport, description, collapse, functions, timeout_ms, resources)| {
                    McpServerConfig {
                        name,
                        transport,
                        description,
                        collapse,
                        functions,
                        timeout_ms,
                        auth: None,
                        roots: Vec::new(),
                        resources,
                    }
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
