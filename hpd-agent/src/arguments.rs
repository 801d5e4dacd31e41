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
//!
//! One repair is made before a mismatch is reported: a top-level `null` given for a parameter
//! the schema does not require and whose own schema rejects `null` is dropped, as if the key
//! were absent, and the function runs with the arguments without it. Models fill every listed
//! parameter and write `null` for those they mean to leave out (the form OpenAI's strict mode
//! asks of optional fields), and the parameter being optional says that leaving it out is
//! what the function accepts. Nothing else is changed: a `null` the schema accepts is passed
//! on, a `null` for a required parameter or deeper in the arguments is a mismatch.
//!
//! One form is refused although the schema may accept it: a string that reads `<key>` under
//! its own key `key` (`{"path": "<path>"}`, or an item of an array under that key,
//! `{"paths": ["<paths>"]}`), at any depth. That is the placeholder the collapsed layouts'
//! hints write in the call they outline, and a model that copies the outline without filling
//! it in would otherwise run the function on a file, branch or name it made up from the
//! schema. The refusal names the placeholder's path and asks for the value the request gives.
//! A schema that demands that very string (an `enum` or `const` holding it, or a `pattern`
//! that only it meets) is obeyed: the string passes when the schema rejects it with one more
//! character appended, where it accepts it as sent.

use serde_json::Value;

/// What [`ArgumentCheck::check`] makes of a call's arguments.
#[derive(Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "argument-validation"), allow(dead_code))]
pub(crate) enum Checked {
    /// They match (or are left to the function): run with them as sent.
    Pass,
    /// They match once the `null`s of optional parameters that reject `null` are dropped: run
    /// with this JSON text instead.
    Repaired(String),
    /// They do not match: `at {path}: {what}` (see [`ArgumentCheck::mismatch`]).
    Mismatch(String),
}

/// The compiled schema of one function's parameters.
pub(crate) struct ArgumentCheck {
    #[cfg(feature = "argument-validation")]
    validator: Option<jsonschema::Validator>,
    /// The schema's top-level `required` keys, whose `null` is never dropped.
    #[cfg(feature = "argument-validation")]
    required: Vec<String>,
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
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|keys| {
                keys.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        ArgumentCheck {
            validator,
            required,
        }
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
        let instance = object(arguments)?;
        let error = validator.validate(&instance).err()?;
        Some(describe(&instance, &error))
    }

    /// Checks `arguments` (a JSON text; empty counts as `{}`) before a call runs: they pass,
    /// they pass once the `null`s of optional parameters that reject `null` are dropped (the
    /// module's one repair), or the first mismatch of the arguments so repaired is reported.
    #[cfg(feature = "argument-validation")]
    pub(crate) fn check(&self, arguments: &str) -> Checked {
        let Some(validator) = self.validator.as_ref() else {
            return Checked::Pass;
        };
        let Some(mut instance) = object(arguments) else {
            return Checked::Pass;
        };
        if let Some(refused) = placeholder(validator, &instance) {
            return Checked::Mismatch(refused);
        }
        // The common case, a call that matches, pays for one validation.
        if validator.is_valid(&instance) {
            return Checked::Pass;
        }
        // The top-level keys whose `null` the schema rejects: a type (or other) error whose
        // instance is that `null` itself.
        let rejected: Vec<String> = validator
            .iter_errors(&instance)
            .filter(|error| error.instance().is_null())
            .filter_map(|error| {
                let pointer = error.instance_path().as_str();
                let key = pointer.strip_prefix('/')?;
                (!key.contains('/')).then(|| key.replace("~1", "/").replace("~0", "~"))
            })
            .filter(|key| !self.required.iter().any(|required| required == key))
            .collect();
        if let Value::Object(map) = &mut instance {
            for key in &rejected {
                map.remove(key);
            }
        }
        match validator.validate(&instance) {
            Ok(()) if rejected.is_empty() => Checked::Pass,
            Ok(()) => Checked::Repaired(instance.to_string()),
            Err(error) => Checked::Mismatch(describe(&instance, &error)),
        }
    }

    /// Without the `argument-validation` feature every call passes here.
    #[cfg(not(feature = "argument-validation"))]
    #[allow(clippy::unused_self)]
    pub(crate) fn check(&self, _arguments: &str) -> Checked {
        Checked::Pass
    }

    /// Without the `argument-validation` feature every call passes here.
    #[cfg(not(feature = "argument-validation"))]
    #[allow(clippy::unused_self)]
    pub(crate) fn mismatch(&self, _arguments: &str) -> Option<String> {
        None
    }
}

/// The arguments text as a JSON object (empty counts as `{}`); `None` when it is not JSON or
/// not an object, which the function's own parse error refuses.
#[cfg(feature = "argument-validation")]
fn object(arguments: &str) -> Option<Value> {
    let text = arguments.trim();
    let instance: Value = if text.is_empty() {
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_str(text).ok()?
    };
    instance.is_object().then_some(instance)
}

/// The refusal of the first outline placeholder sent as a value (see the module docs), `at
/// {path}: {what}`; `None` when the arguments hold none, or only ones the schema demands.
#[cfg(feature = "argument-validation")]
fn placeholder(validator: &jsonschema::Validator, instance: &Value) -> Option<String> {
    let mut found = Vec::new();
    placeholders(instance, None, &mut String::new(), &mut found);
    found.into_iter().find_map(|pointer| {
        let text = instance.pointer(&pointer)?.as_str()?.to_owned();
        let mut altered = instance.clone();
        *altered.pointer_mut(&pointer)? = Value::String(format!("{text} "));
        let fails_here = |value: &Value| {
            validator
                .iter_errors(value)
                .any(|error| error.instance_path().as_str() == pointer)
        };
        if !fails_here(instance) && fails_here(&altered) {
            // The schema asks for this very string.
            return None;
        }
        Some(format!(
            "at {}: {} is the placeholder of an outlined call, not a value: write in its place \
             the value the request gives",
            json_path(instance, &pointer),
            Value::String(text)
        ))
    })
}

/// Collects into `found` the JSON pointers (below `pointer`) of the strings that read `<key>`
/// under their own key `key`, an array's items counting as under the array's key.
#[cfg(feature = "argument-validation")]
fn placeholders(value: &Value, key: Option<&str>, pointer: &mut String, found: &mut Vec<String>) {
    let at = pointer.len();
    match value {
        Value::String(text) => {
            let named = text
                .strip_prefix('<')
                .and_then(|rest| rest.strip_suffix('>'));
            if named.is_some() && named == key {
                found.push(pointer.clone());
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                pointer.push_str(&format!("/{index}"));
                placeholders(item, key, pointer, found);
                pointer.truncate(at);
            }
        }
        Value::Object(map) => {
            for (name, item) in map {
                pointer.push('/');
                pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
                placeholders(item, Some(name), pointer, found);
                pointer.truncate(at);
            }
        }
        _ => {}
    }
}

/// A mismatch as the error result gives it: `at {path}: {what}`.
#[cfg(feature = "argument-validation")]
fn describe(instance: &Value, error: &jsonschema::ValidationError<'_>) -> String {
    let path = json_path(instance, error.instance_path().as_str());
    format!("at {path}: {error}")
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

    #[cfg(feature = "argument-validation")]
    #[test]
    fn nulls_of_optional_parameters_that_reject_null_are_dropped() {
        use super::Checked;
        let check = super::ArgumentCheck::new(
            "think",
            &json!({
                "type": "object",
                "properties": {
                    "thought": {"type": "string"},
                    "branch": {"type": "integer", "minimum": 1},
                    "a/b": {"type": "string"},
                    "note": {"type": ["string", "null"]},
                    "options": {"type": "object", "properties": {"depth": {"type": "integer"}}}
                },
                "required": ["thought"],
                "additionalProperties": false
            }),
        );
        assert_eq!(
            check.check(r#"{"thought": "t", "branch": 2}"#),
            Checked::Pass
        );
        // The optional `branch` rejects null: dropped, and the call runs without it.
        assert_eq!(
            check.check(r#"{"thought": "t", "branch": null, "a/b": null}"#),
            Checked::Repaired(r#"{"thought":"t"}"#.to_owned())
        );
        // A null the schema accepts is passed on as sent.
        assert_eq!(
            check.check(r#"{"thought": "t", "note": null}"#),
            Checked::Pass
        );
        assert_eq!(
            check.check(r#"{"thought": "t", "note": null, "branch": null}"#),
            Checked::Repaired(r#"{"note":null,"thought":"t"}"#.to_owned())
        );
        // A null for a required parameter, or deeper down, is a mismatch.
        assert_eq!(
            check.check(r#"{"thought": null}"#),
            Checked::Mismatch("at $.thought: null is not of type \"string\"".to_owned())
        );
        assert_eq!(
            check.check(r#"{"thought": "t", "options": {"depth": null}}"#),
            Checked::Mismatch("at $.options.depth: null is not of type \"integer\"".to_owned())
        );
        // Another mismatch is reported for the arguments without the dropped nulls.
        assert_eq!(
            check.check(r#"{"thought": "t", "branch": null, "extra": 1}"#),
            Checked::Mismatch(
                "at $: Additional properties are not allowed ('extra' was unexpected)".to_owned()
            )
        );
        assert_eq!(
            check.check(r#"{"thought": "t", "branch": 0}"#),
            Checked::Mismatch("at $.branch: 0 is less than the minimum of 1".to_owned())
        );
        // Not an object: the function's own parse refuses it.
        assert_eq!(check.check("[null]"), Checked::Pass);
    }

    #[cfg(feature = "argument-validation")]
    #[test]
    fn an_outlines_placeholder_sent_as_a_value_is_refused_by_its_path() {
        use super::Checked;
        let check = super::ArgumentCheck::new(
            "read",
            &json!({
                "type": "object",
                "properties": {
                    "paths": {"type": "array", "items": {"type": "string"}},
                    "path": {"type": "string"},
                    "mode": {"type": "string", "enum": ["<mode>", "plain"]},
                    "tag": {"type": "string", "pattern": "^<tag>$"},
                    "options": {"type": "object", "properties": {"encoding": {"type": "string"}}}
                },
                "required": ["path"]
            }),
        );
        let refused = |path: &str, text: &str| {
            Checked::Mismatch(format!(
                "at {path}: \"{text}\" is the placeholder of an outlined call, not a value: \
                 write in its place the value the request gives"
            ))
        };
        assert_eq!(
            check.check(r#"{"path": "<path>"}"#),
            refused("$.path", "<path>")
        );
        assert_eq!(
            check.check(r#"{"path": "/a", "paths": ["/b", "<paths>"]}"#),
            refused("$.paths[1]", "<paths>")
        );
        assert_eq!(
            check.check(r#"{"path": "/a", "options": {"encoding": "<encoding>"}}"#),
            refused("$.options.encoding", "<encoding>")
        );
        // Another key's placeholder, or a name in brackets among other text, is a value.
        assert_eq!(check.check(r#"{"path": "<paths>"}"#), Checked::Pass);
        assert_eq!(check.check(r#"{"path": "a <path>"}"#), Checked::Pass);
        // A string the schema demands is obeyed, whether by an enum or a pattern.
        assert_eq!(
            check.check(r#"{"path": "/a", "mode": "<mode>", "tag": "<tag>"}"#),
            Checked::Pass
        );
        // Refused before the schema's own mismatches are looked for.
        assert_eq!(
            check.check(r#"{"path": "<path>", "mode": 3}"#),
            refused("$.path", "<path>")
        );
    }
}
