//! The conformance runner: executes every scenario of `hpd-agent-tests/conformance/` (and of
//! `$HPD_CONFORMANCE_DIR` when set) against the fixture harnesses, as that folder's README
//! describes.
//!
//! One `#[test]` runs the scenarios one after another, because the fixture logs and the
//! `DbAudit` instance counter are process-wide. Every failure names the scenario file, the turn,
//! the iteration and the field, with expected and actual values; the test reports all failing
//! scenarios at once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hpd_agent::{
    AgentBuilder, AgentConfig, AgentRunConfig, ChatResponse, CollapsingConfig, RecordedRequest,
    RunOutput, ScriptedChatClient, ToolCall, ToolHarness, ToolHarnessReference,
};
use hpd_agent_tests::{
    DatabaseTools, FaultTools, FileTools, MathTools, RecordingMiddleware, SearchTools,
    WeatherTools, executions as execution_log, middleware_log, reset_logs,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

type Failures = Vec<String>;

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

fn scenario_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")];
    if let Some(extra) = std::env::var_os("HPD_CONFORMANCE_DIR") {
        dirs.push(PathBuf::from(extra));
    }
    dirs
}

fn scenario_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in scenario_dirs() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read scenario folder {}: {e}", dir.display()));
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        found.sort();
        assert!(!found.is_empty(), "no scenarios in {}", dir.display());
        files.extend(found);
    }
    files
}

#[test]
fn conformance_scenarios() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let files = scenario_files();
    let mut failed = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let failures = runtime.block_on(run_file(file));
        if failures.is_empty() {
            println!("conformance {name}: ok");
        } else {
            println!("conformance {name}: FAILED");
            failed.push(format!("{name}:\n  - {}", failures.join("\n  - ")));
        }
    }
    println!(
        "conformance: {} passed, {} failed",
        files.len() - failed.len(),
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

async fn run_file(path: &Path) -> Failures {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return vec![format!("cannot read: {e}")],
    };
    let scenario: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return vec![format!("not JSON: {e}")],
    };
    let mut failures = Vec::new();
    if let Err(e) = check_keys(&scenario, "scenario", SCENARIO_KEYS) {
        failures.push(e);
        return failures;
    }
    run_scenario(&scenario, &mut failures).await;
    failures
}

const SCENARIO_KEYS: &[&str] = &["name", "about", "setup", "build_error", "turns"];
const SETUP_KEYS: &[&str] = &[
    "instructions",
    "max_iterations",
    "config",
    "config_text",
    "steps",
];
const TURN_KEYS: &[&str] = &[
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
const ITERATION_KEYS: &[&str] = &[
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

fn check_keys(value: &Value, at: &str, known: &[&str]) -> Result<(), String> {
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

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn json<T: DeserializeOwned>(value: &Value, what: &str) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|e| format!("{what}: {e}"))
}

/// Applies one builder step of `setup.steps`.
fn apply_step(builder: AgentBuilder, step: &Value) -> Result<AgentBuilder, String> {
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
        return with_fixture!(name, |T| builder.with_tool::<T>(function));
    }
    if let Some(reference) = map.get("with_tool_ref").and_then(Value::as_str) {
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

fn register<T: ToolHarness>(
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
    Ok(builder.with_tool_harness_with::<T>(|mut o| {
        for label in scoped {
            o = o.add_scoped_middleware(RecordingMiddleware::new(label));
        }
        if let Some(m) = metadata {
            o = o.metadata(m);
        }
        o
    }))
}

fn apply_collapsing(config: &mut CollapsingConfig, settings: &Value) -> Result<(), String> {
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
            "persist_system_prompt_injections" => {
                config.persist_system_prompt_injections = flag()?;
            }
            other => return Err(format!("unknown collapsing setting '{other}'")),
        }
    }
    Ok(())
}

fn check_error(what: &str, expected: &Value, actual: &str, failures: &mut Failures) {
    for needle in strings(expected) {
        if !actual.contains(&needle) {
            failures.push(format!(
                "{what}: expected the error to contain {needle:?}, got {actual:?}"
            ));
        }
    }
}

async fn run_scenario(scenario: &Value, failures: &mut Failures) {
    reset_logs();
    let setup = scenario
        .get("setup")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if let Err(e) = check_keys(&setup, "setup", SETUP_KEYS) {
        failures.push(e);
        return;
    }
    let build_error = scenario.get("build_error");
    let client = ScriptedChatClient::new();

    let built = build_agent(&setup, &client);
    let agent = match (built, build_error) {
        (Ok(_), Some(expected)) => {
            failures.push(format!(
                "build: expected an error containing {expected}, but it succeeded"
            ));
            return;
        }
        (Err(e), Some(expected)) => {
            check_error("build_error", expected, &e, failures);
            return;
        }
        (Err(e), None) => {
            failures.push(format!("build: unexpected error: {e}"));
            return;
        }
        (Ok(agent), None) => agent,
    };

    let mut session = agent.session();
    let turns = scenario
        .get("turns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (t, turn) in turns.iter().enumerate() {
        let at = format!("turn {}", t + 1);
        if let Err(e) = check_keys(turn, &at, TURN_KEYS) {
            failures.push(e);
            return;
        }
        run_turn(&mut session, &client, turn, &at, failures).await;
    }
}

fn build_agent(setup: &Value, client: &ScriptedChatClient) -> Result<hpd_agent::Agent, String> {
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

fn reply_of(iteration: &Value) -> Result<ChatResponse, String> {
    let reply = iteration.get("reply").ok_or("iteration without reply")?;
    let mut response = ChatResponse {
        text: reply.get("text").and_then(Value::as_str).map(str::to_owned),
        ..ChatResponse::default()
    };
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

async fn run_turn(
    session: &mut hpd_agent::Session,
    client: &ScriptedChatClient,
    turn: &Value,
    at: &str,
    failures: &mut Failures,
) {
    let iterations = turn
        .get("iterations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (k, iteration) in iterations.iter().enumerate() {
        if let Err(e) = check_keys(
            iteration,
            &format!("{at}, iteration {}", k + 1),
            ITERATION_KEYS,
        ) {
            failures.push(e);
            return;
        }
        match reply_of(iteration) {
            Ok(reply) => client.push(reply),
            Err(e) => {
                failures.push(format!("{at}, iteration {}: {e}", k + 1));
                return;
            }
        }
    }
    let executions_before = execution_log().len();
    let log_before = middleware_log().len();

    let user = turn.get("user").and_then(Value::as_str).unwrap_or_default();
    let result: Result<RunOutput, String> = match run_config(turn) {
        Ok(config) => session
            .run_with(user, config)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    let requests = client.take_requests();
    let unused = client.remaining();
    client.clear_replies();

    if requests.len() != iterations.len() {
        failures.push(format!(
            "{at}: the agent made {} model requests, the scenario lists {} iterations",
            requests.len(),
            iterations.len()
        ));
    }
    if unused > 0 {
        failures.push(format!("{at}: {unused} scripted replies were left unused"));
    }
    for (k, (iteration, request)) in iterations.iter().zip(&requests).enumerate() {
        check_iteration(
            &format!("{at}, iteration {}", k + 1),
            iteration,
            request,
            failures,
        );
    }

    match (&result, turn.get("final_text"), turn.get("run_error")) {
        (Ok(out), Some(expected), _) => {
            if Some(out.text.as_str()) != expected.as_str() {
                failures.push(format!(
                    "{at}, final_text: expected {expected}, got {:?}",
                    out.text
                ));
            }
        }
        (Ok(out), None, Some(expected)) => failures.push(format!(
            "{at}, run_error: expected an error containing {expected}, the run finished with {:?}",
            out.text
        )),
        (Err(e), _, Some(expected)) => {
            check_error(&format!("{at}, run_error"), expected, e, failures)
        }
        (Err(e), _, None) => failures.push(format!("{at}: the run failed: {e}")),
        (Ok(_), None, None) => {}
    }

    let executions: Vec<String> = execution_log()[executions_before..].to_vec();
    if let Some(expected) = turn.get("executions") {
        let mut expected = strings(expected);
        expected.sort();
        let mut actual = executions.clone();
        actual.sort();
        if expected != actual {
            failures.push(format!(
                "{at}, executions: expected {expected:?}, got {actual:?}"
            ));
        }
    }
    let log: Vec<String> = middleware_log()[log_before..].to_vec();
    if let Some(expected) = turn.get("log_in_order") {
        let mut position = 0;
        for line in strings(expected) {
            match log[position..].iter().position(|l| *l == line) {
                Some(found) => position += found + 1,
                None => {
                    failures.push(format!(
                        "{at}, log_in_order: line {line:?} not found (in order) in {log:#?}"
                    ));
                    break;
                }
            }
        }
    }
    if let Some(excluded) = turn.get("log_excludes") {
        for needle in strings(excluded) {
            if let Some(line) = log.iter().find(|l| l.contains(&needle)) {
                failures.push(format!(
                    "{at}, log_excludes: line {line:?} contains {needle:?}"
                ));
            }
        }
    }
}

fn run_config(turn: &Value) -> Result<AgentRunConfig, String> {
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

fn check_iteration(
    at: &str,
    iteration: &Value,
    request: &RecordedRequest,
    failures: &mut Failures,
) {
    if let Some(expected) = iteration.get("tools") {
        let expected = strings(expected);
        let actual: Vec<String> = request
            .tool_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if expected != actual {
            failures.push(format!(
                "{at}, tools: expected {expected:?}, got {actual:?}"
            ));
        }
    }
    if let Some(expected) = iteration.get("instructions").and_then(Value::as_str)
        && request.instructions != expected
    {
        failures.push(format!(
            "{at}, instructions: expected {expected:?}, got {:?}",
            request.instructions
        ));
    }
    let tool = |name: &str| request.tools.iter().find(|t| t.name == name);
    for (name, expected) in iteration
        .get("descriptions")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match tool(name) {
            Some(t) if Some(t.description.as_str()) == expected.as_str() => {}
            Some(t) => failures.push(format!(
                "{at}, descriptions.{name}: expected {expected}, got {:?}",
                t.description
            )),
            None => failures.push(format!("{at}, descriptions.{name}: tool not visible")),
        }
    }
    for (field, key) in [("properties", "properties"), ("required", "required")] {
        for (name, expected) in iteration
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let Some(t) = tool(name) else {
                failures.push(format!("{at}, {field}.{name}: tool not visible"));
                continue;
            };
            let actual: BTreeSet<String> = match t.parameters.get(key) {
                Some(Value::Object(props)) => props.keys().cloned().collect(),
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                _ => BTreeSet::new(),
            };
            let expected: BTreeSet<String> = strings(expected).into_iter().collect();
            if actual != expected {
                failures.push(format!(
                    "{at}, {field}.{name}: expected {expected:?}, got {actual:?}"
                ));
            }
        }
    }
    let result = |id: &str| request.tool_result(id);
    for (id, expected) in iteration
        .get("results")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match result(id) {
            Some((text, _)) if Some(text) == expected.as_str() => {}
            Some((text, _)) => failures.push(format!(
                "{at}, results.{id}: expected {expected}, got {text:?}"
            )),
            None => failures.push(format!("{at}, results.{id}: no tool result with that id")),
        }
    }
    for (id, expected) in iteration
        .get("results_prefix")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match result(id) {
            Some((text, _)) if text.starts_with(expected.as_str().unwrap_or_default()) => {}
            Some((text, _)) => failures.push(format!(
                "{at}, results_prefix.{id}: expected a prefix {expected}, got {text:?}"
            )),
            None => failures.push(format!(
                "{at}, results_prefix.{id}: no tool result with that id"
            )),
        }
    }
    for (id, excluded) in iteration
        .get("results_exclude")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let Some((text, _)) = result(id) else {
            failures.push(format!(
                "{at}, results_exclude.{id}: no tool result with that id"
            ));
            continue;
        };
        for needle in strings(excluded) {
            if text.contains(&needle) {
                failures.push(format!(
                    "{at}, results_exclude.{id}: {text:?} contains {needle:?}"
                ));
            }
        }
    }
    for (id, expected) in iteration
        .get("errors")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match result(id) {
            Some((_, flag)) if Some(flag) == expected.as_bool() => {}
            Some((text, flag)) => failures.push(format!(
                "{at}, errors.{id}: expected {expected}, got {flag} (result {text:?})"
            )),
            None => failures.push(format!("{at}, errors.{id}: no tool result with that id")),
        }
    }
}
