//! Checking a final answer: parsing, undoing what strict mode made the model write, schema
//! validation, and the message that asks the model again.

use serde_json::{Map, Value};

use super::OutputSchemaError;
use super::strict::allows_null;

/// The first mismatch of an answer: where (a JSON pointer) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub(crate) path: String,
    pub(crate) message: String,
}

impl Mismatch {
    /// A mismatch at a path written as serde_path_to_error writes it (`a.b[0]`), from the
    /// error of deserializing an answer into the Rust type.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path, message: String) -> Self {
        use serde_path_to_error::Segment;
        let mut pointer = String::new();
        for segment in path.iter() {
            pointer.push('/');
            match segment {
                Segment::Seq { index } => pointer.push_str(&index.to_string()),
                Segment::Map { key } | Segment::Enum { variant: key } => {
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Segment::Unknown => pointer.push('?'),
            }
        }
        Mismatch {
            path: pointer,
            message,
        }
    }
}

/// The text of the user message that asks the model again after a mismatch at `path` (a JSON
/// pointer, `""` for the whole answer):
///
/// ```text
/// Your answer does not match the required JSON schema: at '/age': -1 is less than the minimum of 0.
/// Reply again with only the corrected JSON.
/// ```
///
/// ```
/// let text = hpd_agent::output::retry_message("", "expected value at line 1 column 1");
/// assert_eq!(
///     text,
///     "Your answer does not match the required JSON schema: at the root: expected value at line 1 column 1.\n\
///      Reply again with only the corrected JSON."
/// );
/// ```
#[must_use]
pub fn retry_message(path: &str, message: &str) -> String {
    let place = if path.is_empty() {
        "the root".to_owned()
    } else {
        format!("'{path}'")
    };
    let message = message.trim_end_matches('.');
    format!(
        "Your answer does not match the required JSON schema: at {place}: {message}.\n\
         Reply again with only the corrected JSON."
    )
}

/// Parses an answer. A Markdown code fence around it (models without constrained decoding
/// write them) is taken off first.
pub(super) fn parse(text: &str) -> Result<Value, Mismatch> {
    let trimmed = text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(body).map_err(|e| Mismatch {
        path: String::new(),
        message: format!("the answer is not JSON: {e}"),
    })
}

/// Removes the `null`s of properties that are optional and do not take `null` in `schema`
/// (what the strict OpenAI form made the model write for them), walking `value` along the
/// schema's `properties`, `items` and local `$ref`s.
pub(super) fn relax(schema: &Value, value: &mut Value) {
    relax_at(schema, schema, value, 0);
}

fn relax_at(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    // A recursive schema is followed as deep as the answer goes; this bounds a `$ref` cycle
    // that the answer does not descend (`{"$ref": "#"}`).
    if depth > 128 {
        return;
    }
    let Value::Object(node) = schema else {
        return;
    };
    if let Some(target) = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        relax_at(root, target, value, depth + 1);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            // Only branches that are objects the value could be: one with `properties`.
            for branch in branches {
                relax_at(root, branch, value, depth + 1);
            }
        }
    }
    match value {
        Value::Object(fields) => relax_object(root, node, fields, depth),
        Value::Array(items) => {
            if let Some(item_schema) = node.get("items") {
                for item in items {
                    relax_at(root, item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn relax_object(
    root: &Value,
    node: &Map<String, Value>,
    fields: &mut Map<String, Value>,
    depth: usize,
) {
    let Some(Value::Object(properties)) = node.get("properties") else {
        return;
    };
    let required = |name: &str| {
        node.get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n == name))
    };
    fields.retain(|name, field| {
        !(field.is_null()
            && !required(name)
            && properties
                .get(name)
                .is_some_and(|p| !allows_null(resolved(root, p))))
    });
    for (name, field) in fields.iter_mut() {
        if let Some(property) = properties.get(name) {
            relax_at(root, property, field, depth + 1);
        }
    }
}

/// The schema a `$ref` node points to (itself when it is not a local reference).
fn resolved<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
        .unwrap_or(schema)
}

/// A local reference (`#`, `#/$defs/Name`) in `root`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// Validates answers against the schema as given.
#[derive(Clone)]
pub(super) struct Checker {
    #[cfg(feature = "output-validation")]
    validator: std::sync::Arc<jsonschema::Validator>,
}

impl Checker {
    #[cfg(feature = "output-validation")]
    pub(super) fn new(schema: &Value) -> Result<Self, OutputSchemaError> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map_err(|e| OutputSchemaError {
                path: e.instance_path().as_str().to_owned(),
                message: format!("not a valid JSON Schema: {e}"),
            })?;
        Ok(Checker {
            validator: std::sync::Arc::new(validator),
        })
    }

    #[cfg(not(feature = "output-validation"))]
    #[allow(clippy::unnecessary_wraps)]
    pub(super) fn new(_schema: &Value) -> Result<Self, OutputSchemaError> {
        Ok(Checker {})
    }

    /// The first mismatch of `value`, if any. Without the `output-validation` feature every
    /// JSON value passes here (the Rust type's deserialization still checks a typed run).
    #[cfg(feature = "output-validation")]
    pub(super) fn validate(&self, value: &Value) -> Result<(), Mismatch> {
        self.validator.validate(value).map_err(|e| Mismatch {
            path: e.instance_path().as_str().to_owned(),
            message: e.to_string(),
        })
    }

    #[cfg(not(feature = "output-validation"))]
    #[allow(clippy::unnecessary_wraps, clippy::unused_self)]
    pub(super) fn validate(&self, _value: &Value) -> Result<(), Mismatch> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fences_are_taken_off() {
        assert_eq!(parse("```json\n{\"a\": 1}\n```").unwrap(), json!({"a": 1}));
        assert_eq!(parse(" [1] ").unwrap(), json!([1]));
        let error = parse("{\"a\": ").unwrap_err();
        assert_eq!(error.path, "");
        assert!(
            error.message.starts_with("the answer is not JSON: "),
            "{}",
            error.message
        );
    }

    #[test]
    fn nulls_of_optional_properties_go_unless_the_schema_takes_them() {
        let schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "inner": {"$ref": "#/$defs/Inner"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Inner"}}
            },
            "required": ["inner"],
            "$defs": {"Inner": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        });
        let mut value = json!({
            "count": null, "note": null,
            "inner": {"x": null},
            "list": [{"x": null}, {"x": 1}]
        });
        relax(&schema, &mut value);
        assert_eq!(
            value,
            json!({"note": null, "inner": {}, "list": [{}, {"x": 1}]})
        );
        // A required property keeps its null: the validator reports it.
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let mut value = json!({"n": null});
        relax(&schema, &mut value);
        assert_eq!(value, json!({"n": null}));
    }

    #[test]
    fn self_referencing_schemas_end() {
        let schema = json!({"$ref": "#"});
        let mut value = json!({"a": 1});
        relax(&schema, &mut value);
        assert_eq!(value, json!({"a": 1}));
    }

    #[test]
    fn serde_paths_become_pointers() {
        let value = json!({"items": [{"a/b": "x"}]});
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Item {
            #[serde(rename = "a/b")]
            ab: u32,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            items: Vec<Item>,
        }
        let error = serde_path_to_error::deserialize::<_, Outer>(value).unwrap_err();
        let mismatch = Mismatch::from_serde(error.path(), error.inner().to_string());
        assert_eq!(mismatch.path, "/items/0/a~1b");
    }
}
