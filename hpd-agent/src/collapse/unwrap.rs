//! The layouts' own tools: a call of the fixed layout's call tool, or of the client-executed
//! tool search of the Responses native layout, stands for another call, which then takes
//! exactly the path a direct call of that name takes.

use serde::Deserialize;
use serde_json::Value;

use super::{Layout, SEARCH_TOOL, Toolset};
use crate::config::CALL_TOOL;
use crate::harness::names::same;
use crate::tool::ToolResult;

/// A call once the layout's own tools are unwrapped.
#[derive(Debug, PartialEq)]
pub(crate) enum Unwrapped {
    /// The call stands for itself.
    Direct,
    /// The call stands for a call of `name` with `arguments`.
    Inner { name: String, arguments: String },
    /// The call's arguments do not say what to call: answer with this error result.
    Invalid(ToolResult),
}

/// The arguments of the call tool.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallArguments {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Whether a call of `name` can be one of a layout's own tools. Any other name stands for
/// itself in every layout ([`Toolset::unwrap_call`] answers [`Unwrapped::Direct`]), so a caller
/// that must lock its toolset to unwrap a call skips the lock for it.
pub(crate) fn may_be_layout_tool(name: &str) -> bool {
    name == CALL_TOOL || name == SEARCH_TOOL
}

impl Toolset {
    /// What a call of `name` with `arguments` stands for in this toolset's layout.
    pub(crate) fn unwrap_call(&self, name: &str, arguments: &str) -> Unwrapped {
        match self.layout() {
            Layout::Fixed if name == CALL_TOOL && self.call_tool.is_some() => {
                unwrap_call_tool(arguments)
            }
            Layout::Search if name == SEARCH_TOOL => self.unwrap_search(arguments),
            _ => Unwrapped::Direct,
        }
    }

    /// A tool search names a container: by a harness name found in its arguments (any
    /// string value, matched case-insensitively), else by the container whose name,
    /// description and member names share the most words with those strings.
    fn unwrap_search(&self, arguments: &str) -> Unwrapped {
        let value: Value = if arguments.trim().is_empty() {
            Value::Null
        } else {
            match serde_json::from_str(arguments) {
                Ok(value) => value,
                Err(e) => {
                    return Unwrapped::Invalid(ToolResult::error(format!(
                        "Invalid arguments for '{SEARCH_TOOL}': {e}"
                    )));
                }
            }
        };
        let mut texts = Vec::new();
        strings(&value, &mut texts);
        let containers: Vec<usize> = (0..self.groups().len())
            .filter(|&h| self.containers[h].is_some())
            .collect();
        let named = texts.iter().find_map(|text| {
            containers
                .iter()
                .copied()
                .find(|&h| same(text.trim(), &self.groups()[h].name))
        });
        let chosen = named.or_else(|| {
            let query: Vec<String> = texts.iter().flat_map(|t| words(t)).collect();
            containers
                .iter()
                .copied()
                .map(|h| {
                    let group = &self.groups()[h];
                    let mut own = words_of(&group.name);
                    if let Some(collapse) = &group.collapse {
                        own.extend(words(&collapse.description));
                    }
                    for member in &group.members {
                        own.extend(words_of(member.name()));
                        own.extend(words(&member.definition().description));
                    }
                    let score = query.iter().filter(|w| own.contains(w)).count();
                    (score, h)
                })
                .filter(|&(score, _)| score > 0)
                // The best score; the first registered container among equals.
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .map(|(_, h)| h)
        });
        match chosen {
            Some(h) => Unwrapped::Inner {
                name: self.groups()[h].name.to_string(),
                arguments: "{}".to_owned(),
            },
            None => {
                let names: Vec<&str> = containers
                    .iter()
                    .map(|&h| &*self.groups()[h].name)
                    .collect();
                Unwrapped::Invalid(ToolResult::error(format!(
                    "No container matches the search. Containers: {}",
                    names.join(", ")
                )))
            }
        }
    }
}

/// Reads the call tool's arguments: `name` and an `arguments` object (also accepted as a
/// JSON text holding one, which small models send; omitted or `null` counts as `{}`).
fn unwrap_call_tool(arguments: &str) -> Unwrapped {
    let invalid = |reason: String| {
        Unwrapped::Invalid(ToolResult::error(format!(
            "Invalid arguments for '{CALL_TOOL}': {reason}"
        )))
    };
    let text = match arguments.trim() {
        "" | "null" => "{}",
        text => text,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed: CallArguments = match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(parsed) => parsed,
        Err(e) => return invalid(e.to_string()),
    };
    if parsed.name == CALL_TOOL {
        return invalid(format!("{CALL_TOOL} cannot call itself"));
    }
    let inner = match parsed.arguments {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Value::Object(map).to_string(),
            Ok(Value::Null) => "{}".to_owned(),
            _ if text.trim().is_empty() => "{}".to_owned(),
            _ => {
                return invalid(
                    "arguments: expected an object of the function's arguments".to_owned(),
                );
            }
        },
        Some(object @ Value::Object(_)) => object.to_string(),
        Some(_) => {
            return invalid("arguments: expected an object of the function's arguments".to_owned());
        }
    };
    Unwrapped::Inner {
        name: parsed.name,
        arguments: inner,
    }
}

/// Every string value in `value`, depth first.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The lower-cased words of a text (runs of letters and digits of two or more characters).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// The words of an identifier: split at `_`, `-`, `.` and lower-to-upper case changes.
fn words_of(name: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(name.len() * 2);
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c);
    }
    words(&spaced)
}

#[cfg(test)]
mod tests {
    use super::{Unwrapped, unwrap_call_tool, words_of};

    fn inner(name: &str, arguments: &str) -> Unwrapped {
        Unwrapped::Inner {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        }
    }

    #[test]
    fn call_tool_arguments_as_an_object_a_text_or_nothing() {
        assert_eq!(
            unwrap_call_tool(r#"{"name": "add", "arguments": {"a": 1}}"#),
            inner("add", r#"{"a":1}"#)
        );
        assert_eq!(
            unwrap_call_tool(r#"{"name": "add", "arguments": "{\"a\": 1}"}"#),
            inner("add", r#"{"a":1}"#)
        );
        assert_eq!(unwrap_call_tool(r#"{"name": "ping"}"#), inner("ping", "{}"));
        assert_eq!(
            unwrap_call_tool(r#"{"name": "ping", "arguments": null}"#),
            inner("ping", "{}")
        );
    }

    #[test]
    fn call_tool_arguments_that_name_nothing_are_an_error_result() {
        let text = |arguments: &str| match unwrap_call_tool(arguments) {
            Unwrapped::Invalid(result) => {
                assert!(result.is_error);
                result.text
            }
            other => panic!("expected an error for {arguments}, got {other:?}"),
        };
        assert_eq!(
            text(""),
            "Invalid arguments for 'call_function': missing field `name` at line 1 column 2"
        );
        assert!(
            text(r#"{"name": 3}"#)
                .starts_with("Invalid arguments for 'call_function': name: invalid type")
        );
        assert_eq!(
            text(r#"{"name": "add", "arguments": [1]}"#),
            "Invalid arguments for 'call_function': arguments: expected an object of the function's arguments"
        );
        assert_eq!(
            text(r#"{"name": "call_function"}"#),
            "Invalid arguments for 'call_function': call_function cannot call itself"
        );
        assert!(text("{not json").starts_with("Invalid arguments for 'call_function': "));
        assert!(text(r#"{"name": "a", "args": {}}"#).contains("unknown field `args`"));
    }

    #[test]
    fn identifier_words() {
        assert_eq!(words_of("GitHubTools"), ["git", "hub", "tools"]);
        assert_eq!(words_of("read_file"), ["read", "file"]);
    }
}
