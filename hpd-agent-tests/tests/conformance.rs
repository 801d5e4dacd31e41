//! The conformance runner: executes every scenario of `hpd-agent-tests/conformance/` (and of
//! `$HPD_CONFORMANCE_DIR` when set) against the fixture harnesses, as that folder's README
//! describes.
//!
//! One `#[test]` runs the scenarios one after another, because the fixture logs and the
//! `DbAudit` instance counter are process-wide. Every failure names the scenario file, the turn,
//! the iteration and the field, with expected and actual values; the test reports all failing
//! scenarios at once.

use std::path::{Path, PathBuf};

use hpd_agent::{RunOutput, ScriptedChatClient};
use hpd_agent_tests::{executions as execution_log, middleware_log, reset_logs};
use serde_json::{Map, Value};

#[path = "conformance/check.rs"]
mod check;
#[path = "conformance/setup.rs"]
mod setup;

use check::{check_error, check_iteration};
use setup::{
    ITERATION_KEYS, SCENARIO_KEYS, SETUP_KEYS, TURN_KEYS, build_agent, check_keys, reply_of,
    run_config, strings,
};

type Failures = Vec<String>;

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
