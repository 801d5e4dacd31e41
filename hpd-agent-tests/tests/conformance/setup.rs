//! Turning a scenario's `setup` into an agent, its replies into scripted responses, and a turn's
//! `run_config` into an [`AgentRunConfig`]; key checks of the scenario format.

use hpd_agent::{
    AgentBuilder, AgentConfig, AgentRunConfig, ChatResponse, ScriptedChatClient, ToolCall,
    ToolHarness, config::CollapsingConfig, config::CollapsingLayout, config::ToolHarnessReference,
};
use hpd_agent_tests::{
    DatabaseTools, FaultTools, FileTools, MathTools, RecordingMiddleware, SearchTools, WeatherTools,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Calls `$body` with `$T` bound to the fixture harness named `$name`.
macro_rules! with_fixture {
    ($name:expr, |$T:ident| $body:expr) => {
        match $name {
            "MathTools" => {
                type $T = MathTools;
                Ok($body)
            }
            "WeatherTools" => {
                type $T = WeatherTools;
                Ok($body)
            }
            "SearchTools" => {
                type $T = SearchTools;
                Ok($body)
            }
            "DatabaseTools" => {
                type $T = DatabaseTools;
                Ok($body)
            }
            "FileTools" => {
                type $T = FileTools;
                Ok($body)
            }
            "FaultTools" => {
                type $T = FaultTools;
                Ok($body)
            }
            other => Err(format!("unknown fixture harness '{other}'")),
        }
    };
}

pub const SCENARIO_KEYS: &[&str] = &["name", "about", "setup", "build_error", "turns"];
pub const SETUP_KEYS: &[&str] = &[
    "layout",
    "instructions",
    "max_iterations",
    "config",
    "config_text",
    "steps",
];
pub const TURN_KEYS: &[&str] = &[
    "user",
    "run",
    "run_config_json",
    "iterations",
    "final_text",
    "run_error",
    "executions",
    "log_in_order",
    "log_excludes",
];
pub const ITERATION_KEYS: &[&str] = &[
    "tools",
    "instructions",
    "descriptions",
    "properties",
    "required",
    "results",
    "results_prefix",
    "results_exclude",
    "errors",
    "reply",
];

pub fn check_keys(value: &Value, at: &str, known: &[&str]) -> Result<(), String> {
    let Some(map) = value.as_object() else {
        return Err(format!("{at}: expected an object"));
    };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            return Err(format!(
                "{at}: unknown scenario key '{key}' (known: {})",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub fn json<T: DeserializeOwned>(value: &Value, what: &str) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|e| format!("{what}: {e}"))
}

/// Applies one builder step of `setup.steps`.
pub fn apply_step(builder: AgentBuilder, step: &Value) -> Result<AgentBuilder, String> {
    let map = step.as_object().ok_or("a step must be an object")?;
    if let Some(name) = map.get("with_tool_harness").and_then(Value::as_str) {
        let scoped = map
            .get("scoped_middleware")
            .map(strings)
            .unwrap_or_default();
        let metadata = map.get("metadata").cloned();
        return with_fixture!(name, |T| register::<T>(builder, scoped, metadata)?);
    }
    if let Some(name) = map.get("with_tool").and_then(Value::as_str) {
        let function = map
            .get("function")
            .and_then(Value::as_str)
            .ok_or("with_tool needs a function")?
            .to_owned();
        return with_fixture!(name, |T| builder
            .with_tool_harness_options::<T>(|o| o.with_functions([function])));
    }
    if let Some(reference) = map.get("with_tool_ref").and_then(Value::as_str) {
        // The scenario names this builder method (deprecated, kept one release): its rules,
        // the `Harness.function` form among them, are what the scenarios pin.
        #[allow(deprecated)]
        return Ok(builder.with_tool_ref(reference));
    }
    if let Some(label) = map.get("with_middleware").and_then(Value::as_str) {
        let block = map.get("block").map(strings).unwrap_or_default();
        return Ok(builder.with_middleware(RecordingMiddleware::new(label).blocking(block)));
    }
    if map.contains_key("without_harness_collapsing") {
        return Ok(builder.without_harness_collapsing());
    }
    if let Some(settings) = map.get("configure_collapsing") {
        let settings = settings.clone();
        let mut failure = None;
        let builder = builder.configure_harness_collapsing(|c| {
            if let Err(e) = apply_collapsing(c, &settings) {
                failure = Some(e);
            }
        });
        return failure.map_or(Ok(builder), Err);
    }
    if let Some(reference) = map.get("with_tool_harness_override") {
        let reference: ToolHarnessReference = json(reference, "with_tool_harness_override")?;
        return Ok(builder.with_tool_harness_override(reference));
    }
    Err(format!("unknown step {step}"))
}

pub fn register<T: ToolHarness>(
    builder: AgentBuilder,
    scoped: Vec<String>,
    metadata: Option<Value>,
) -> Result<AgentBuilder, String>
where
    T::Metadata: DeserializeOwned,
{
    let metadata: Option<T::Metadata> = match metadata {
        Some(m) => Some(json(&m, "metadata")?),
        None => None,
    };
    if scoped.is_empty() && metadata.is_none() {
        return Ok(builder.with_tool_harness::<T>());
    }
    Ok(builder.with_tool_harness_options::<T>(|mut o| {
        for label in scoped {
            o = o.with_scoped_middleware(RecordingMiddleware::new(label));
        }
        if let Some(m) = metadata {
            o = o.with_metadata(m);
        }
        o
    }))
}

pub fn apply_collapsing(config: &mut CollapsingConfig, settings: &Value) -> Result<(), String> {
    let map = settings
        .as_object()
        .ok_or("configure_collapsing needs an object")?;
    for (key, value) in map {
        let flag = || value.as_bool().ok_or(format!("{key} must be a boolean"));
        match key.as_str() {
            "enabled" => config.enabled = flag()?,
            "never_collapse" => config.never_collapse = strings(value),
            "recovery" => config.recovery = flag()?,
            "execute_recovered_calls" => config.execute_recovered_calls = flag()?,
            // The old name, kept for one release, is what the scenarios use: they pin it.
            "keep_expansions_across_turns" | "persist_system_prompt_injections" => {
                config.keep_expansions_across_turns = flag()?;
            }
            "container_notes" => config.container_notes = flag()?,
            // Read as the crate reads `collapsing.open_ahead` (a score, `true` or `false`).
            "open_ahead" => {
                let text = serde_json::json!({"collapsing": {"open_ahead": value}}).to_string();
                config.open_ahead = AgentConfig::from_json(&text)
                    .map_err(|e| e.to_string())?
                    .collapsing
                    .open_ahead;
            }
            "layout" => {
                config.layout = value
                    .as_str()
                    .ok_or("layout must be a string")?
                    .parse()
                    .map_err(|e| format!("{e}"))?;
            }
            other => return Err(format!("unknown collapsing setting '{other}'")),
        }
    }
    Ok(())
}

/// The collapsing layout every scenario names in `setup.layout`, so that no scenario depends on
/// the default. A `config` that names a layout of its own must name the same one.
fn scenario_layout(setup: &Value) -> Result<CollapsingLayout, String> {
    let name = setup
        .get("layout")
        .and_then(Value::as_str)
        .ok_or("setup.layout is required: name the collapsing layout the scenario runs under")?;
    let layout: CollapsingLayout = name.parse().map_err(|e| format!("setup.layout: {e}"))?;
    let configured = setup
        .get("config")
        .and_then(|c| c.get("collapsing"))
        .and_then(|c| c.get("layout"))
        .and_then(Value::as_str);
    if let Some(configured) = configured
        && configured != name
    {
        return Err(format!(
            "setup.layout \"{name}\" contradicts the config's collapsing.layout \"{configured}\""
        ));
    }
    Ok(layout)
}

pub fn build_agent(setup: &Value, client: &ScriptedChatClient) -> Result<hpd_agent::Agent, String> {
    let layout = scenario_layout(setup)?;
    let mut builder = match (setup.get("config"), setup.get("config_text")) {
        (Some(config), _) => {
            let text = serde_json::to_string(config).map_err(|e| e.to_string())?;
            AgentBuilder::from_config(AgentConfig::from_json(&text).map_err(|e| e.to_string())?)
        }
        (None, Some(text)) => {
            let text = text.as_str().ok_or("config_text must be a string")?;
            AgentBuilder::from_config(AgentConfig::from_json(text).map_err(|e| e.to_string())?)
        }
        (None, None) => AgentBuilder::new(),
    };
    // The scenarios describe the layouts as such: opening ahead and container notes (on by
    // default) stay off unless the scenario's config or a step turns them on.
    let named = |key: &str| {
        setup
            .get("config")
            .and_then(|c| c.get("collapsing"))
            .is_some_and(|c| c.get(key).is_some())
    };
    let (notes_named, open_named) = (named("container_notes"), named("open_ahead"));
    builder = builder.configure_harness_collapsing(|c| {
        c.layout = layout;
        if !notes_named {
            c.container_notes = false;
        }
        if !open_named {
            c.open_ahead = None;
        }
    });
    if let Some(instructions) = setup.get("instructions").and_then(Value::as_str) {
        builder = builder.with_instructions(instructions);
    }
    if let Some(n) = setup.get("max_iterations").and_then(Value::as_u64) {
        builder = builder.with_max_iterations(usize::try_from(n).map_err(|e| e.to_string())?);
    }
    for step in setup
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        builder = apply_step(builder, step)?;
    }
    builder
        .with_chat_client(client.clone())
        .build()
        .map_err(|e| e.to_string())
}

pub fn reply_of(iteration: &Value) -> Result<ChatResponse, String> {
    let reply = iteration.get("reply").ok_or("iteration without reply")?;
    let mut response = ChatResponse::default();
    if let Some(text) = reply.get("text").and_then(Value::as_str) {
        response = response.with_text(text);
    }
    for call in reply
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = match call.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        response.tool_calls.push(ToolCall::new(id, name, arguments));
    }
    Ok(response)
}

pub fn run_config(turn: &Value) -> Result<AgentRunConfig, String> {
    if let Some(json) = turn.get("run_config_json") {
        return AgentRunConfig::from_json(&json.to_string()).map_err(|e| e.to_string());
    }
    let mut config = AgentRunConfig::new();
    for step in turn
        .get("run")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = step
            .get("with_tool_harness")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("unknown run step {step}"))?;
        config = with_fixture!(name, |T| config.with_tool_harness::<T>())?;
    }
    Ok(config)
}
