//! The vendor forms of an output schema (see the module docs of `output` for the rules).

use serde_json::{Map, Value, json};

/// The wrapped root's only property.
const VALUE: &str = "value";

/// Keywords Anthropic's structured outputs do not take; written into the description instead.
const ANTHROPIC_UNSUPPORTED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
];

#[derive(Clone)]
pub(super) struct Forms {
    /// Whether the root was wrapped in `{"value": ...}`.
    pub(super) wrapped: bool,
    /// The strict OpenAI form.
    pub(super) openai: Value,
    /// The OpenAI form for `strict: false`: required lists as given.
    pub(super) openai_loose: Value,
    /// Whether the strict form expresses the schema.
    pub(super) openai_strict: bool,
    pub(super) anthropic: Value,
}

#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    OpenAiStrict,
    OpenAiLoose,
    Anthropic,
}

impl Forms {
    pub(super) fn new(schema: &Value) -> Self {
        let (root, wrapped) = rooted(schema);
        let mut expressible = true;
        let form = |dialect, expressible: &mut bool| {
            let mut value = root.clone();
            transform(&mut value, dialect, expressible);
            value
        };
        let openai = form(Dialect::OpenAiStrict, &mut expressible);
        let openai_loose = form(Dialect::OpenAiLoose, &mut true);
        let anthropic = form(Dialect::Anthropic, &mut true);
        Forms {
            wrapped,
            openai,
            openai_loose,
            openai_strict: expressible,
            anthropic,
        }
    }
}

/// The schema with an object root: as it is when its `type` is `"object"`, else wrapped.
fn rooted(schema: &Value) -> (Value, bool) {
    let mut schema = match schema {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        other => other.clone(),
    };
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        if map.get("type").and_then(Value::as_str) == Some("object") {
            return (schema, false);
        }
    }
    let mut inner = schema;
    let mut wrapper = Map::new();
    wrapper.insert("type".into(), json!("object"));
    // Definitions stay at the root, where the `$ref`s point.
    if let Value::Object(map) = &mut inner {
        for key in ["$defs", "definitions"] {
            if let Some(defs) = map.remove(key) {
                wrapper.insert(key.into(), defs);
            }
        }
    }
    wrapper.insert("properties".into(), json!({ VALUE: inner }));
    wrapper.insert("required".into(), json!([VALUE]));
    wrapper.insert("additionalProperties".into(), json!(false));
    (Value::Object(wrapper), true)
}

/// The answer of a wrapped schema: the `value` of a `{"value": ...}` object; anything else as
/// it is (a model that ignored the wrapper is checked as it answered).
pub(super) fn unwrap(value: Value) -> Value {
    match value {
        Value::Object(mut map) if map.len() == 1 && map.contains_key(VALUE) => {
            map.remove(VALUE).unwrap_or(Value::Null)
        }
        other => other,
    }
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            _ => false,
        }
}

fn has_type(map: &Map<String, Value>, wanted: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t == wanted),
        _ => false,
    }
}

/// Rewrites one schema node and its subschemas for `dialect`; clears `expressible` when an
/// object's `additionalProperties` is a schema.
fn transform(node: &mut Value, dialect: Dialect, expressible: &mut bool) {
    let Value::Object(map) = node else {
        return;
    };
    // Subschemas first.
    for (key, child) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(named) = child {
                    for sub in named.values_mut() {
                        transform(sub, dialect, expressible);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                transform(child, dialect, expressible);
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(list) = child {
                    for sub in list {
                        transform(sub, dialect, expressible);
                    }
                }
            }
            _ => {}
        }
    }
    if map.get("format").is_some() && !has_type(map, "string") {
        map.remove("format");
    }
    if is_object_schema(map) {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => {
                map.insert("additionalProperties".into(), json!(false));
            }
            Some(Value::Bool(false)) => {}
            Some(_) => *expressible = false,
        }
        map.entry("properties").or_insert_with(|| json!({}));
    }
    match dialect {
        Dialect::OpenAiStrict => {
            map.remove("default");
            require_all(map);
        }
        Dialect::OpenAiLoose => {}
        Dialect::Anthropic => move_unsupported(map),
    }
}

/// Lists every property in `required`; those that were optional become nullable.
fn require_all(map: &mut Map<String, Value>) {
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return;
    };
    let mut all = Vec::with_capacity(properties.len());
    for (name, schema) in properties.iter_mut() {
        if !required.contains(name) {
            make_nullable(schema);
        }
        all.push(Value::String(name.clone()));
    }
    map.insert("required".into(), Value::Array(all));
}

/// Lets a schema accept `null` too.
fn make_nullable(schema: &mut Value) {
    if allows_null(schema) {
        return;
    }
    if let Value::Object(map) = schema {
        let only_type = map.contains_key("type")
            && !map.contains_key("enum")
            && !map.contains_key("const")
            && !map.contains_key("anyOf")
            && !map.contains_key("oneOf")
            && !map.contains_key("allOf");
        if only_type {
            match map.get_mut("type") {
                Some(Value::String(t)) => {
                    let t = std::mem::take(t);
                    map.insert("type".into(), json!([t, "null"]));
                    return;
                }
                Some(Value::Array(types)) => {
                    types.push(json!("null"));
                    return;
                }
                _ => {}
            }
        }
    }
    let inner = std::mem::take(schema);
    *schema = json!({"anyOf": [inner, {"type": "null"}]});
}

/// Whether a schema node visibly accepts `null` (its type, an `anyOf`/`oneOf` branch, its
/// `enum`, or no constraint at all).
pub(super) fn allows_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => {
            if map.is_empty() {
                return true;
            }
            if has_type(map, "null") {
                return true;
            }
            if let Some(Value::Array(values)) = map.get("enum") {
                return values.iter().any(Value::is_null);
            }
            if map.get("const") == Some(&Value::Null) {
                return true;
            }
            ["anyOf", "oneOf"].iter().any(|key| {
                map.get(*key)
                    .and_then(Value::as_array)
                    .is_some_and(|branches| branches.iter().any(allows_null))
            })
        }
        _ => false,
    }
}

/// Moves the keywords Anthropic does not take into the description.
fn move_unsupported(map: &mut Map<String, Value>) {
    let mut moved = Vec::new();
    for &keyword in ANTHROPIC_UNSUPPORTED {
        if let Some(value) = map.remove(keyword) {
            moved.push(format!("{keyword} {value}"));
        }
    }
    if let Some(min) = map.get("minItems").and_then(Value::as_u64)
        && min > 1
    {
        map.remove("minItems");
        moved.push(format!("minItems {min}"));
    }
    if moved.is_empty() {
        return;
    }
    let note = format!("Constraints: {}.", moved.join(", "));
    let description = match map.get("description").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => format!("{text} {note}"),
        _ => note,
    };
    map.insert("description".into(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_roots_stay_and_others_are_wrapped_with_their_defs() {
        let (root, wrapped) = rooted(&json!({"type": "object", "properties": {}}));
        assert!(!wrapped);
        assert_eq!(root["type"], "object");
        let (root, wrapped) = rooted(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array", "items": {"$ref": "#/$defs/P"},
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        }));
        assert!(wrapped);
        assert_eq!(root["properties"]["value"]["items"]["$ref"], "#/$defs/P");
        assert_eq!(root["$defs"]["P"]["type"], "object");
        assert!(root["properties"]["value"].get("$defs").is_none());
        assert!(root.get("$schema").is_none());
        assert_eq!(unwrap(json!({"value": [1]})), json!([1]));
        assert_eq!(unwrap(json!([1])), json!([1]));
    }

    #[test]
    fn strict_openai_requires_everything_and_makes_optional_nullable() {
        let forms = Forms::new(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer", "format": "uint32", "minimum": 0, "default": 3},
                "c": {"$ref": "#/$defs/C"},
                "d": {"type": ["string", "null"]},
                "e": {"enum": ["x", "y"]}
            },
            "required": ["a"],
            "$defs": {"C": {"type": "object", "properties": {"z": {"type": "boolean"}}}}
        }));
        let s = &forms.openai;
        assert!(forms.openai_strict);
        assert_eq!(s["required"], json!(["a", "b", "c", "d", "e"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(
            s["properties"]["b"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(
            s["properties"]["c"],
            json!({"anyOf": [{"$ref": "#/$defs/C"}, {"type": "null"}]})
        );
        assert_eq!(s["properties"]["d"], json!({"type": ["string", "null"]}));
        assert_eq!(
            s["properties"]["e"],
            json!({"anyOf": [{"enum": ["x", "y"]}, {"type": "null"}]})
        );
        assert_eq!(s["$defs"]["C"]["required"], json!(["z"]));
        assert_eq!(
            s["$defs"]["C"]["properties"]["z"]["type"],
            json!(["boolean", "null"])
        );
        assert_eq!(s["$defs"]["C"]["additionalProperties"], false);
        // The loose form keeps the required list and defaults.
        assert_eq!(forms.openai_loose["required"], json!(["a"]));
        assert_eq!(forms.openai_loose["properties"]["b"]["default"], 3);
    }

    #[test]
    fn map_objects_cannot_be_strict() {
        let forms = Forms::new(&json!({
            "type": "object",
            "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"}}}
        }));
        assert!(!forms.openai_strict);
    }

    #[test]
    fn anthropic_moves_unsupported_keywords_into_descriptions() {
        let forms = Forms::new(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9, "description": "A digit."},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 2},
                "one": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["n"]
        }));
        let s = &forms.anthropic;
        assert_eq!(
            s["properties"]["n"],
            json!({"type": "integer", "description": "A digit. Constraints: minimum 1, maximum 9."})
        );
        assert_eq!(
            s["properties"]["tags"]["description"],
            "Constraints: minItems 2."
        );
        assert_eq!(
            s["properties"]["tags"]["items"]["description"],
            "Constraints: maxLength 8."
        );
        assert_eq!(s["properties"]["one"]["minItems"], 1);
        // Optional stays optional for Anthropic.
        assert_eq!(s["required"], json!(["n"]));
        assert_eq!(s["additionalProperties"], false);
    }
}
