//! A call's arguments checked against its function's JSON Schema before the function runs.
//!
//! A model that calls a collapsed member through the fixed layout's `call_function`, or by its
//! own name after a native form loaded it, writes arguments that no strict decoding shaped: the
//! provider checked them against the generic call tool, or not at all. Those calls are checked
//! here against the member's own parameter schema (the whole schema: types, required keys,
//! enums, ranges, patterns, `additionalProperties`), and a mismatch is answered with an error
//! result naming the JSON path of the first mismatch, so the model can correct the call and
//! the function never sees arguments its schema rules out.
//!
//! The check runs with the `argument-validation` feature (on by default), through the
//! `jsonschema` crate; without it the function's own parsing is the only check, as for every
//! call outside those layouts. `format` keywords are annotations here, as JSON Schema 2020-12
//! makes them by default: a server that documents a `date-time` may still accept what it
//! accepts. Arguments that are not a JSON object are left to the function, whose parse error
//! says what it expected; a schema the validator cannot compile checks nothing (the function still parses).

use serde_json::Value;

/// The compiled schema of one function's parameters.
pub(crate) struct ArgumentCheck {
    #[cfg(feature = "argument-validation")]
    validator: Option<jsonschema::Validator>,
}

impl ArgumentCheck {
    /// Compiles `schema`; a schema that does not compile checks nothing.
    #[cfg(feature = "argument-validation")]
    pub(crate) fn new(function: &str, schema: &Value) -> Self {
        let validator = match jsonschema::options().build(schema) {
            Ok(validator) => Some(validator),
            Err(e) => {
                tracing::debug!(
                    target: "hpd_agent",
                    function,
                    error = %e,
                    "parameter schema not compiled; arguments are not checked against it"
                );
                None
            }
        };
        ArgumentCheck { validator }
    }

    /// Without the `argument-validation` feature nothing is compiled.
    #[cfg(not(feature = "argument-validation"))]
    pub(crate) fn new(_function: &str, _schema: &Value) -> Self {
        ArgumentCheck {}
    }

    /// What is wrong with `arguments` (a JSON text; empty counts as `{}`) when they do not match
    /// the schema: `at {path}: {what}`, where `path` is the JSON path of the first mismatch (`$`
    /// for the arguments object itself). The result reads `Invalid arguments for '{function}':
    /// ` and then this, as the function's own parse errors do.
    #[cfg(feature = "argument-validation")]
    pub(crate) fn mismatch(&self, arguments: &str) -> Option<String> {
        let validator = self.validator.as_ref()?;
        let text = arguments.trim();
        let instance: Value = if text.is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(text).ok()?
        };
        // Arguments that are no object are the function's to refuse: its parse error says so.
        if !instance.is_object() {
            return None;
        }
        let error = validator.validate(&instance).err()?;
        let path = json_path(&instance, error.instance_path().as_str());
        Some(format!("at {path}: {error}"))
    }

    /// Without the `argument-validation` feature every call passes here.
    #[cfg(not(feature = "argument-validation"))]
    #[allow(clippy::unused_self)]
    pub(crate) fn mismatch(&self, _arguments: &str) -> Option<String> {
        None
    }
}

/// A JSON pointer into `instance` written as a JSON path: `$`, then `.key` for a key that is an
/// identifier, `["key"]` for any other key, `[n]` for an array index (the instance tells a
/// numeric object key from an index).
#[cfg_attr(not(feature = "argument-validation"), allow(dead_code))]
fn json_path(instance: &Value, pointer: &str) -> String {
    let mut path = String::from("$");
    let mut at = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Some(Value::Array(items)) if segment.parse::<usize>().is_ok() => {
                let index: usize = segment.parse().unwrap_or_default();
                path.push_str(&format!("[{index}]"));
                at = items.get(index);
            }
            _ => {
                let identifier = segment
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && segment
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_');
                if identifier {
                    path.push('.');
                    path.push_str(&segment);
                } else {
                    path.push('[');
                    path.push_str(&Value::String(segment.clone()).to_string());
                    path.push(']');
                }
                at = at.and_then(|value| value.get(&segment));
            }
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::json_path;
    use serde_json::json;

    #[test]
    fn pointers_read_as_json_paths() {
        let instance = json!({"items": [{"a b": 1}], "0": {"x": true}});
        assert_eq!(json_path(&instance, ""), "$");
        assert_eq!(json_path(&instance, "/items/0/a b"), "$.items[0][\"a b\"]");
        // A numeric key of an object is a key, not an index.
        assert_eq!(json_path(&instance, "/0/x"), "$[\"0\"].x");
        assert_eq!(json_path(&json!({"a/b": 1}), "/a~1b"), "$[\"a/b\"]");
    }

    #[cfg(feature = "argument-validation")]
    #[test]
    fn the_first_mismatch_is_named_by_its_path() {
        let check = super::ArgumentCheck::new(
            "add",
            &json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["a"],
                "additionalProperties": false
            }),
        );
        assert_eq!(check.mismatch(r#"{"a": 1, "tags": ["x"]}"#), None);
        assert_eq!(
            check.mismatch(r#"{"a": "two"}"#).as_deref(),
            Some("at $.a: \"two\" is not of type \"number\"")
        );
        assert_eq!(
            check.mismatch(r#"{"a": 1, "tags": ["x", 2]}"#).as_deref(),
            Some("at $.tags[1]: 2 is not of type \"string\"")
        );
        let missing = check.mismatch("").unwrap_or_default();
        assert!(
            missing.starts_with("at $: ") && missing.contains("\"a\""),
            "{missing}"
        );
        // Not JSON, or not an object: left to the function's own parse error.
        assert_eq!(check.mismatch("{not json"), None);
        assert_eq!(check.mismatch("[1]"), None);
        // A schema that does not compile checks nothing.
        let broken = super::ArgumentCheck::new("f", &json!({"type": 12}));
        assert_eq!(broken.mismatch(r#"{"a": 1}"#), None);
    }
}
