//! Comparing what a turn did (requests, results, logs, errors) with a scenario's expectations.

use std::collections::BTreeSet;

use hpd_agent::providers::scripted::RecordedRequest;
use serde_json::Value;

use super::Failures;
use super::setup::strings;

pub fn check_error(what: &str, expected: &Value, actual: &str, failures: &mut Failures) {
    for needle in strings(expected) {
        if !actual.contains(&needle) {
            failures.push(format!(
                "{what}: expected the error to contain {needle:?}, got {actual:?}"
            ));
        }
    }
}

pub fn check_iteration(
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
