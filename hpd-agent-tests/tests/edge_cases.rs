//! Edge cases of registration, call resolution and run lifetime found in a review: qualified
//! names with overlapping separators, registration order of sub-agents, config and builder
//! merging, run-only harnesses with persisting expansions, cancellation while a hook waits,
//! and handed parent functions. Each test states the rule (or documented choice) it checks.

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentRunConfig, ChatResponse, ScriptedChatClient, SubAgent,
    ToolCall, config::ToolHarnessReference,
};
use hpd_agent_tests::{DatabaseTools, MathTools, WeatherTools, reset_logs, take_middleware_log};

/// Tests that read the process-wide fixture logs run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

// ---------------------------------------------------------------------------------------------
// Harnesses for qualified-name tests (names containing a separator are legal: [A-Za-z0-9_-]).

/// A collapsed harness whose name is a prefix of another's.
#[derive(Default)]
pub struct Net;

#[collapse("Network basics")]
impl Net {
    /// Pings a host.
    #[ai_function]
    fn net_ping(&self) -> String {
        "net pong".to_owned()
    }
}

/// A harness whose name contains a separator.
#[derive(Default)]
pub struct NetTools;

#[tool_harness(name = "Net-Tools")]
impl NetTools {
    /// Looks a host up.
    #[ai_function]
    fn lookup(&self) -> String {
        "looked up".to_owned()
    }
}

/// A harness whose name ends in `_`.
#[derive(Default)]
pub struct CacheTools;

#[tool_harness(name = "Cache_")]
impl CacheTools {
    /// Flushes the cache.
    #[ai_function]
    fn flush(&self) -> String {
        "flushed".to_owned()
    }
}

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall::new(id, name, args)
}

/// A qualified name `Harness{sep}function` (`{sep}` one of `.` `:` `/` `-` `__`) is tried at
/// every split position: `Net-Tools-lookup` splits as `Net-Tools` + `lookup`.
#[tokio::test]
async fn qualified_name_tries_every_split_position() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", "Net-Tools-lookup", "{}")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<Net>()
        .with_tool_harness::<NetTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests[1].tool_result("c1"), Some(("looked up", false)));
}

/// Separator `__`, split position between the 2nd and 3rd underscore of `___`.
#[tokio::test]
async fn qualified_name_double_underscore_overlapping_positions() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", "Cache___flush", "{}")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<CacheTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(requests[1].tool_result("c1"), Some(("flushed", false)));
}

/// Sub-agents registered with `with_sub_agent` are always visible, in registration order (the
/// agent's own registrations first, then those added for the run).
#[tokio::test]
async fn agent_sub_agent_precedes_run_added_functions() {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    let helper = SubAgent::new("helper", "Helps.", AgentConfig::from_json("{}").unwrap());
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_sub_agent(helper)
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session
        .run_with(
            "go",
            AgentRunConfig::new().with_tool_harness::<WeatherTools>(),
        )
        .await
        .unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[0].tool_names(),
        ["helper", "get_weather", "get_forecast"]
    );
}

/// Builder calls merge with the config entry (later metadata, config or instance replace
/// earlier ones), and middleware config keys match case-insensitively.
#[tokio::test]
async fn later_builder_middleware_config_replaces_config_entry() {
    let _guard = SERIAL.lock().await;
    reset_logs();
    let config = AgentConfig::from_json(
        r#"{"tool_harnesses": [{"name": "DatabaseTools",
            "middleware_configs": {"dbauditmiddleware": {"AuditLevel": "FromConfig"}}}]}"#,
    )
    .unwrap();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", "DatabaseTools", "{}")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness_options::<DatabaseTools>(|o| {
            o.with_middleware_config(
                "DbAuditMiddleware",
                serde_json::json!({"AuditLevel": "FromCode"}),
            )
        })
        .with_chat_client(client)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let log = take_middleware_log();
    assert!(
        log.iter().any(|l| l.starts_with("DbAudit#1[FromCode]")),
        "log: {log:?}"
    );
}

/// `with_tool_harness_override(reference)` replaces the config entry of the same name entirely,
/// and builder selections are united: a builder selection made before the override must not be
/// thrown away with the config entry.
#[tokio::test]
async fn override_does_not_drop_earlier_builder_selection() {
    let config = AgentConfig::from_json(
        r#"{"tool_harnesses": [{"name": "MathTools", "functions": ["add"]}]}"#,
    )
    .unwrap();
    let make = |override_first: bool| {
        let client = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
        let reference = ToolHarnessReference::new("MathTools").with_functions(["divide"]);
        let builder = AgentBuilder::from_config(config.clone())
            .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
            .with_chat_client(client.clone());
        let builder = if override_first {
            builder
                .with_tool_harness_override(reference)
                .with_tool_harness_options::<MathTools>(|o| o.with_functions(["multiply"]))
        } else {
            builder
                .with_tool_harness_options::<MathTools>(|o| o.with_functions(["multiply"]))
                .with_tool_harness_override(reference)
        };
        (builder.build().unwrap(), client)
    };
    let mut descriptions = Vec::new();
    for override_first in [true, false] {
        let (agent, client) = make(override_first);
        agent.run("go").await.unwrap();
        descriptions.push(client.requests()[0].tools[0].description.clone());
    }
    assert_eq!(
        descriptions,
        [
            "Math operations (functions: multiply, divide)",
            "Math operations (functions: multiply, divide)"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Batch 2

/// An unknown harness is reported as `harness '{H}' not found; known harnesses: {sorted names}`,
/// also when a sub-agent's `parent_functions` names it.
#[tokio::test]
async fn sub_agent_unknown_parent_harness_lists_sorted_names() {
    let helper = SubAgent::new("helper", "Helps.", AgentConfig::from_json("{}").unwrap())
        .with_parent_functions(["Nope.query"]);
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_sub_agent(helper)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with("harness 'Nope' not found; known harnesses: MathTools, WeatherTools"),
        "{error}"
    );
}

/// A run makes requests until the model answers without tool calls or `max_iterations`
/// requests have been made; the contract is silent on 0, which is rejected before any request.
#[tokio::test]
async fn max_iterations_zero_is_rejected() {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("hi")]);
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_max_iterations(0)
        .with_chat_client(client.clone())
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "max_iterations must be at least 1");
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let error = agent
        .session()
        .run_with("go", AgentRunConfig::new().with_max_iterations(0))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "max_iterations must be at least 1");
    assert!(client.requests().is_empty());
}

/// Harnesses added for a run are for that run only, and a scoped pipeline belongs to a harness
/// registered for the agent or the run. With persistence, a later run without the harness
/// must not keep running its scoped middleware or keep it expanded.
#[tokio::test]
async fn persisted_run_harness_pipeline_lingers_in_later_run() {
    let _guard = SERIAL.lock().await;
    reset_logs();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", "DatabaseTools", "{}")]),
        ChatResponse::text("t1"),
        ChatResponse::text("t2"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.keep_expansions_across_turns = true)
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session
        .run_with(
            "one",
            AgentRunConfig::new().with_tool_harness::<DatabaseTools>(),
        )
        .await
        .unwrap();
    let _ = take_middleware_log();
    session.run("two").await.unwrap();
    let log = take_middleware_log();
    println!("expanded after turn 2: {:?}", session.state().expanded);
    assert!(
        log.is_empty(),
        "DatabaseTools middleware ran in a run without it: {log:?}"
    );
}

/// Always-visible tools come in registration order: a sub-agent registered before a plain
/// harness comes first.
#[tokio::test]
async fn sub_agent_registered_first_is_listed_first() {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("done")]);
    let helper = SubAgent::new("helper", "Helps.", AgentConfig::from_json("{}").unwrap());
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_sub_agent(helper)
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    assert_eq!(
        agent.initial_tool_names(),
        ["helper", "get_weather", "get_forecast"]
    );
}

// ---------------------------------------------------------------------------------------------
// Batch 3

struct SlowIteration;

#[async_trait]
impl hpd_agent::Middleware for SlowIteration {
    async fn before_iteration(
        &self,
        _iteration: &hpd_agent::middleware::IterationInfo,
    ) -> hpd_agent::middleware::HookResult {
        std::future::pending::<()>().await;
        Ok(())
    }
}

/// AgentRunConfig::with_cancellation: "Cancels the run when `token` is cancelled", also while a
/// hook is pending (this hook never finishes).
#[tokio::test]
async fn cancellation_while_a_hook_is_pending() {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("hi")]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_middleware(SlowIteration)
        .with_chat_client(client)
        .build()
        .unwrap();
    let token = hpd_agent::CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        t2.cancel();
    });
    let mut session = agent.session();
    let run = session.run_with("go", AgentRunConfig::new().with_cancellation(token));
    // The hook never returns: only cancellation can end the run. The outer limit only keeps a
    // broken build from hanging the suite.
    let result = tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the run ends when cancelled");
    assert!(
        matches!(result, Err(hpd_agent::RunError::Cancelled)),
        "{result:?}"
    );
}

/// Parent functions are visible to the child as plain tools. A child config that also
/// registers the harness would give two harnesses of one name: the build refuses it clearly.
#[tokio::test]
async fn child_registering_a_handed_harness_is_a_build_error() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("p1", "helper", r#"{"input":"x"}"#)]),
        ChatResponse::tool_calls(vec![call("k1", "MathTools.multiply", r#"{"a":2,"b":3}"#)]),
        ChatResponse::text("child done"),
        ChatResponse::text("done"),
    ]);
    let child = AgentConfig::from_json(
        r#"{"tool_harnesses": [{"name": "MathTools", "functions": ["add"]}]}"#,
    )
    .unwrap();
    let helper =
        SubAgent::new("helper", "Helps.", child).with_parent_functions(["MathTools.multiply"]);
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .with_sub_agent(helper)
        .with_chat_client(client.clone())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "sub-agent 'helper': harness 'MathTools' is registered by the sub-agent's own config and also handed to it through parent_functions; use one or the other"
    );
}

/// A collapsed harness whose name starts with `K`, which Unicode lower-cases from the Kelvin
/// sign too.
#[derive(Default)]
pub struct KelvinTools;

#[collapse("Temperatures")]
impl KelvinTools {
    /// Converts to kelvin.
    #[ai_function]
    fn to_kelvin(&self, celsius: f64) -> f64 {
        celsius + 273.15
    }
}

/// Harness names fold ASCII case only, everywhere: the registry, references, `never_collapse`
/// and qualified call names agree that `KELVINTOOLS` is `KelvinTools` and that a name starting
/// with the Kelvin sign (U+212A, which Unicode lower-cases to `k`) is not.
#[tokio::test]
async fn harness_names_fold_ascii_case_only() {
    let kelvin_sign = "\u{212A}elvinTools";
    assert!(hpd_agent::harness::HarnessInfo::find("KELVINTOOLS").is_ok());
    assert!(hpd_agent::harness::HarnessInfo::find(kelvin_sign).is_err());

    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness_reference(
            &hpd_agent::config::ToolHarnessReference::new(kelvin_sign)
                .with_functions(["to_kelvin"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("harness '{kelvin_sign}' not found")),
        "{error}"
    );

    let visible = |never: &str| {
        let never = never.to_owned();
        AgentBuilder::new()
            .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
            .with_tool_harness::<KelvinTools>()
            .configure_harness_collapsing(|c| c.never_collapse.push(never))
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap()
            .initial_tool_names()
    };
    assert_eq!(visible("kelvintools"), ["to_kelvin"]);
    assert_eq!(visible(kelvin_sign), ["KelvinTools"]);

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call("c1", &format!("{kelvin_sign}.to_kelvin"), "{}"),
            call("c2", "kelvintools:to_kelvin", "{}"),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<KelvinTools>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let request = &model.requests()[1];
    assert_eq!(
        request.tool_result("c1"),
        Some((
            "Function '\u{212A}elvinTools.to_kelvin' not found. Available functions: KelvinTools",
            true
        ))
    );
    assert_eq!(
        request.tool_result("c2"),
        Some((
            "KelvinTools expanded. Available functions: to_kelvin. Call to_kelvin again to run it.",
            false
        ))
    );
}
