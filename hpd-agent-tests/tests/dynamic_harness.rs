//! Harnesses built at run time ([`HarnessBuilder`]): collapsing, recovery, selection,
//! `never_collapse`, scoped middleware, duplicate names, tools added for one run, and tool
//! lists that change between turns. Build checks and failing handlers are in
//! `dynamic_harness_failures.rs`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::{
    AgentBuilder, AgentRunConfig, BuildError, ChatResponse, HarnessBuilder, Middleware,
    ScriptedChatClient, Tool, ToolCall, ToolResult, async_trait, harness::DynamicHarness,
    middleware::FunctionCall, middleware::HookResult,
};
use hpd_agent_tests::MathTools;
use serde_json::json;
use support::counted;

fn weather(calls: &Arc<AtomicUsize>) -> HarnessBuilder {
    HarnessBuilder::new("Weather")
        .with_collapse("Weather lookups")
        .with_system_prompt("Report temperatures in °C.")
        .with_function_result("Weather tools are active.")
        .with_tool(counted("forecast", calls))
        .with_tool(counted("alerts", calls))
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

#[tokio::test]
async fn collapsed_dynamic_harness_expands_and_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedChatClient::with_replies([
        call("c1", "Weather", "{}"),
        call("c2", "forecast", r#"{"city": "Oslo"}"#),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_instructions("Be brief.")
        .with_harness(weather(&calls).build().unwrap())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(agent.run("weather?").await.unwrap().text, "done");
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["Weather"]);
    assert_eq!(
        requests[0].tools[0].description,
        "Weather lookups (functions: forecast, alerts)"
    );
    assert_eq!(requests[0].instructions, "Be brief.");
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Weather expanded. Available functions: forecast, alerts\n\nWeather tools are active.",
            false
        ))
    );
    assert_eq!(requests[1].tool_names(), ["forecast", "alerts"]);
    assert_eq!(
        requests[1].instructions,
        "Be brief.\n\n## Active container instructions\n\n### Weather\nReport temperatures in °C."
    );
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("forecast: Oslo (Weather)", false))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn hidden_members_are_recovered_by_bare_and_qualified_names() {
    for name in [
        "alerts",
        "Weather.alerts",
        "weather:alerts",
        "WEATHER__alerts",
        "Weather/ALERTS",
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let model = ScriptedChatClient::with_replies([
            call("c1", name, r#"{"city": "Oslo"}"#),
            ChatResponse::text("done"),
        ]);
        let agent = AgentBuilder::new()
            .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
            .configure_harness_collapsing(|c| c.container_notes = false)
            .with_harness(weather(&calls).build().unwrap())
            .with_chat_client(model.clone())
            .build()
            .unwrap();
        agent.run("go").await.unwrap();
        let requests = model.requests();
        assert_eq!(
            requests[1].tool_result("c1"),
            Some((
                "Weather expanded. Available functions: forecast, alerts. Call alerts again to run it.",
                false
            )),
            "{name}"
        );
        assert_eq!(requests[1].tool_names(), ["forecast", "alerts"], "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{name}");
    }
}

#[tokio::test]
async fn recovered_calls_can_be_executed() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedChatClient::with_replies([
        call("c1", "Weather.forecast", r#"{"city": "Rome"}"#),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(weather(&calls).build().unwrap())
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(
        model.requests()[1].tool_result("c1"),
        Some(("forecast: Rome (Weather)", false))
    );
}

/// Counts instances and the `before_function` calls each instance saw.
struct Counting {
    instance: usize,
    seen: Arc<std::sync::Mutex<Vec<(usize, String)>>>,
}

#[async_trait]
impl Middleware for Counting {
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        self.seen
            .lock()
            .unwrap()
            .push((self.instance, call.function_name().to_owned()));
        Ok(())
    }
}

#[tokio::test]
async fn scoped_middleware_from_a_factory_is_fresh_per_expansion() {
    let calls = Arc::new(AtomicUsize::new(0));
    let created = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (made, log) = (Arc::clone(&created), Arc::clone(&seen));
    let harness = weather(&calls)
        .with_scoped_middleware_factory(move || Counting {
            instance: made.fetch_add(1, Ordering::SeqCst) + 1,
            seen: Arc::clone(&log),
        })
        .build()
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "Weather", "{}"),
        call("c2", "forecast", r#"{"city": "A"}"#),
        ChatResponse::text("one"),
        call("c3", "Weather", "{}"),
        call("c4", "alerts", r#"{"city": "B"}"#),
        ChatResponse::text("two"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    // Not created at build, only at expansion.
    assert_eq!(created.load(Ordering::SeqCst), 0);
    let mut session = agent.session();
    session.run("first").await.unwrap();
    session.run("second").await.unwrap();
    assert_eq!(created.load(Ordering::SeqCst), 2);
    assert_eq!(
        *seen.lock().unwrap(),
        [(1, "forecast".to_owned()), (2, "alerts".to_owned())]
    );
}

#[tokio::test]
async fn a_shared_scoped_middleware_instance_serves_every_expansion() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let harness = weather(&calls)
        .with_scoped_middleware(Counting {
            instance: 7,
            seen: Arc::clone(&seen),
        })
        .build()
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "forecast", r#"{"city": "A"}"#),
        call("c2", "forecast", r#"{"city": "A"}"#),
        ChatResponse::text("one"),
        call("c3", "Weather", "{}"),
        call("c4", "alerts", r#"{"city": "B"}"#),
        ChatResponse::text("two"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session.run("first").await.unwrap();
    session.run("second").await.unwrap();
    // The recovered call is answered without running; the second call runs.
    assert_eq!(
        *seen.lock().unwrap(),
        [(7, "forecast".to_owned()), (7, "alerts".to_owned())]
    );
}

#[tokio::test]
async fn selection_keeps_the_harness_collapsed_with_only_the_selected_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let harness = weather(&calls).build().unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "alerts", r#"{"city": "A"}"#),
        call("c2", "Weather.alerts", r#"{"city": "A"}"#),
        call("c3", "Weather", "{}"),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness.select(["forecast"]).unwrap())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[0].tools[0].description,
        "Weather lookups (functions: forecast)"
    );
    // An unselected tool is unknown; qualified, it names no member, so the container takes it.
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Function 'alerts' not found. Available functions: Weather",
            true
        ))
    );
    assert_eq!(
        requests[2].tool_result("c2"),
        Some((
            "Weather expanded. Available functions: forecast\n\nWeather tools are active.",
            false
        ))
    );
    assert_eq!(
        requests[3].tool_result("c3"),
        Some((
            "Weather expanded. Available functions: forecast\n\nWeather tools are active.",
            false
        ))
    );
    assert_eq!(requests[3].tool_names(), ["forecast"]);
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // Two selections of one harness merge; a qualified name works; names are validated.
    let both = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness.select(["alerts"]).unwrap())
        .with_harness(harness.select(["Weather.forecast"]).unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(both.harness_names(), ["Weather"]);
    assert_eq!(
        both.flat_tool_session().visible_tool_names(),
        ["forecast", "alerts"]
    );
    assert_eq!(
        harness.select(["Other.forecast"]).unwrap_err().to_string(),
        "tool reference 'Other.forecast' names harness 'Other', but the type is 'Weather'"
    );
}

#[tokio::test]
async fn never_collapse_and_disabled_collapsing_show_the_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let never = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<MathTools>()
        .with_harness(weather(&calls).build().unwrap())
        .configure_harness_collapsing(|c| c.never_collapse.push("weather".to_owned()))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(
        never.initial_tool_names(),
        ["forecast", "alerts", "MathTools"]
    );

    let model = ScriptedChatClient::with_replies([
        call("c1", "Weather", "{}"),
        call("c2", "forecast", r#"{"city": "Bern"}"#),
        ChatResponse::text("done"),
    ]);
    let off = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(weather(&calls).build().unwrap())
        .without_harness_collapsing()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    off.run("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["forecast", "alerts"]);
    assert_eq!(
        requests[1].tool_result("c1"),
        Some((
            "Function 'Weather' not found. Available functions: forecast, alerts",
            true
        ))
    );
    assert_eq!(requests[1].instructions, "");
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("forecast: Bern (Weather)", false))
    );
}

#[tokio::test]
async fn plain_dynamic_harness_is_visible_in_registration_order() {
    let calls = Arc::new(AtomicUsize::new(0));
    let plain = HarnessBuilder::new("Geo")
        .with_tool(counted("locate", &calls))
        .build()
        .unwrap();
    assert!(!plain.is_collapsed());
    let model = ScriptedChatClient::with_replies([
        call("c1", "locate", r#"{"city": "Lima"}"#),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<MathTools>()
        .with_harness(plain)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["locate", "MathTools"]);
    assert_eq!(
        requests[1].tool_result("c1"),
        Some(("locate: Lima (Geo)", false))
    );
}

#[test]
fn duplicate_names_across_dynamic_and_macro_harnesses_fail_the_build() {
    let add = Tool::new("add", "", json!({"type": "object"}), |_, _| async {
        ToolResult::ok("")
    });
    let calc = HarnessBuilder::new("Calc").with_tool(add).build().unwrap();
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<MathTools>()
        .with_harness(calc)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::DuplicateTool { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "tool name 'add' is registered twice: by 'MathTools' and by 'Calc'"
    );

    let same_name = HarnessBuilder::new("mathtools").build().unwrap();
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<MathTools>()
        .with_harness(same_name)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "harness name 'mathtools' is registered twice: by the Rust harness 'MathTools' and by the harness 'mathtools' built at run time"
    );

    // The same harness registered twice merges; two different ones of one name do not.
    let one = HarnessBuilder::new("Twice").build().unwrap();
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(one.clone())
        .with_harness(one)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(agent.harness_names(), ["Twice"]);
    let error = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(HarnessBuilder::new("Twice").build().unwrap())
        .with_harness(HarnessBuilder::new("twice").build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(
        matches!(error, BuildError::DuplicateHarness { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn a_dynamic_harness_can_be_added_for_one_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let harness = weather(&calls).build().unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "Weather", "{}"),
        ChatResponse::text("one"),
        ChatResponse::text("two"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness::<MathTools>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session
        .run_with("first", AgentRunConfig::new().with_harness(harness.clone()))
        .await
        .unwrap();
    session.run("second").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["MathTools", "Weather"]);
    assert_eq!(
        requests[1].tool_names(),
        ["MathTools", "forecast", "alerts"]
    );
    assert_eq!(requests[2].tool_names(), ["MathTools"]);

    // A different harness named like one of the agent's is refused for the run.
    let other = HarnessBuilder::new("MathTools").build().unwrap();
    let error = agent
        .session()
        .run_with("x", AgentRunConfig::new().with_harness(other))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("registered twice"), "{error}");
}

#[tokio::test]
async fn a_changed_tool_list_applies_from_the_next_turn() {
    let calls = Arc::new(AtomicUsize::new(0));
    let turns = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&turns);
    let harness = HarnessBuilder::new("Remote")
        .with_tool(counted("first", &calls))
        .before_turn(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .unwrap();
    let updater = harness.updater();
    let replacement = counted("second", &calls);
    // The tool replaces the list while the turn runs.
    let switch = Tool::new("switch", "", json!({"type": "object"}), move |_, _| {
        let updater = updater.clone();
        let replacement = replacement.clone();
        async move {
            updater.replace(vec![replacement]).unwrap();
            ToolResult::ok("switched")
        }
    });
    let switcher = HarnessBuilder::new("Switch")
        .with_tool(switch)
        .build()
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        call("c1", "switch", "{}"),
        ChatResponse::text("one"),
        ChatResponse::text("two"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness.clone())
        .with_harness(switcher)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    session.run("first").await.unwrap();
    session.run("second").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["first", "switch"]);
    assert_eq!(requests[1].tool_names(), ["first", "switch"]);
    assert_eq!(requests[2].tool_names(), ["second", "switch"]);
    assert_eq!(turns.load(Ordering::SeqCst), 2);
    assert_eq!(harness.generation(), 1);

    // A replacement that clashes with another tool is not applied; the previous list stays.
    let model = ScriptedChatClient::with_replies([ChatResponse::text("three")]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness.clone())
        .with_tool_harness::<MathTools>()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    harness
        .updater()
        .replace(vec![counted("add", &calls)])
        .unwrap();
    agent.run("third").await.unwrap();
    assert_eq!(model.requests()[0].tool_names(), ["second", "MathTools"]);
}

/// A dynamic harness is `Clone`, `Send` and `Sync`.
#[test]
fn dynamic_harness_is_clone_send_sync() {
    fn check<T: Clone + Send + Sync + 'static>() {}
    check::<DynamicHarness>();
    check::<Tool>();
}

/// What a tool's handler owns (a connection, a child process) lives as long as the harness is
/// used, and no longer: an updater does not keep it alive.
#[test]
fn dropping_the_last_user_of_a_harness_drops_its_tools() {
    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let guard = Arc::new(Guard(Arc::clone(&dropped)));
    let tool = Tool::new("held", "", json!({"type": "object"}), move |_, _| {
        let _connection = Arc::clone(&guard);
        async { ToolResult::ok("") }
    });
    let harness = HarnessBuilder::new("Held").with_tool(tool).build().unwrap();
    let updater = harness.updater();
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness.clone())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    drop(harness);
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "the agent still uses it");
    assert_eq!(updater.generation(), Some(0));
    drop(agent);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert!(!updater.replace(Vec::new()).unwrap());
    assert_eq!(updater.generation(), None);
}
