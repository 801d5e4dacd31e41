//! The strict form of a tool's parameter schema, for the providers that validate tool inputs
//! against it (`strict: true`).
//!
//! A schema qualifies when strict mode would accept exactly what the schema accepts already:
//! every object lists all its properties as required and allows no other property (or says
//! nothing about others), and no keyword outside the vendor's supported subset appears. Its
//! strict form is the schema with `"additionalProperties": false` written on every object that
//! left it out: that only refuses keys no property names, which the tool would not read. A
//! schema with an optional property does not qualify: strict mode would make it required (and
//! nullable), which changes what the tool receives, so such a tool is sent without `strict`.
//!
//! The subsets are the ones the typed final answers already keep to (see [`crate::output`]):
//! OpenAI's strict mode takes types, `enum`, `const`, `anyOf`, `$ref`/`$defs`, `pattern`,
//! `format` and the numeric and item-count bounds; Anthropic's takes the same without the
//! numeric, length and item-count bounds. `$schema` is not sent by either (tool schemas are
//! built without it), and a schema that carries one is sent without `strict`.

use serde_json::{Map, Value};

/// Whose subset of JSON Schema applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAI function tools (`"strict": true`).
    OpenAi,
    /// Anthropic tools (`"strict": true`).
    Anthropic,
}

/// Keywords both vendors take, on any schema node.
const COMMON: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
    "format",
    "pattern",
];

/// Keywords only OpenAI's strict mode takes.
const OPENAI_ONLY: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The string formats strict mode takes (a string with another format does not qualify).
const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The strict form of `schema`, or `None` when it does not qualify (see the module docs).
pub(crate) fn strict_schema(schema: &Value, dialect: Dialect) -> Option<Value> {
    let mut schema = schema.clone();
    strict_node(&mut schema, dialect).then_some(schema)
}

fn strict_node(node: &mut Value, dialect: Dialect) -> bool {
    let Value::Object(map) = node else {
        return false;
    };
    let allowed = |key: &str| {
        COMMON.contains(&key) || (dialect == Dialect::OpenAi && OPENAI_ONLY.contains(&key))
    };
    if !map.keys().all(|key| allowed(key)) {
        return false;
    }
    // schemars writes `"format": "int64"` and the like on numbers, which strict mode refuses
    // (as the typed answers' forms do, the format is dropped: the type says enough).
    if map.get("type").and_then(Value::as_str) != Some("string") {
        map.remove("format");
    } else if let Some(format) = map.get("format") {
        let known = format.as_str().is_some_and(|f| {
            STRING_FORMATS.contains(&f) || (dialect == Dialect::Anthropic && f == "uri")
        });
        if !known {
            return false;
        }
    }
    let is_object =
        map.contains_key("properties") || map.get("type").and_then(Value::as_str) == Some("object");
    if is_object && !strict_object(map) {
        return false;
    }
    for (key, child) in map.iter_mut() {
        let fine = match key.as_str() {
            "properties" | "$defs" | "definitions" => child
                .as_object_mut()
                .is_some_and(|m| m.values_mut().all(|schema| strict_node(schema, dialect))),
            "items" => strict_node(child, dialect),
            "anyOf" => child
                .as_array_mut()
                .is_some_and(|v| v.iter_mut().all(|schema| strict_node(schema, dialect))),
            _ => true,
        };
        if !fine {
            return false;
        }
    }
    true
}

/// Whether an object node qualifies, writing `additionalProperties: false` when it is absent.
fn strict_object(map: &mut Map<String, Value>) -> bool {
    match map.get("additionalProperties") {
        None => {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        Some(Value::Bool(false)) => {}
        Some(_) => return false,
    }
    let properties: Vec<&String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .all(|name| required.contains(&name.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_all_required_object_gets_additional_properties_false() {
        let schema = json!({"type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}},
            "required": ["a", "b"]});
        let strict = strict_schema(&schema, Dialect::OpenAi).unwrap();
        assert_eq!(strict["additionalProperties"], json!(false));
        assert_eq!(
            strict["properties"]["b"]["items"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(strict["required"], json!(["a", "b"]));
    }

    #[test]
    fn optional_properties_open_objects_and_unknown_keywords_do_not_qualify() {
        let optional = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        assert_eq!(strict_schema(&optional, Dialect::OpenAi), None);
        let open = json!({"type": "object", "properties": {}, "additionalProperties": true});
        assert_eq!(strict_schema(&open, Dialect::Anthropic), None);
        let all_of = json!({"allOf": [{"type": "object"}]});
        assert_eq!(strict_schema(&all_of, Dialect::OpenAi), None);
        let nested = json!({"type": "object", "properties": {"m": {"type": "object",
            "properties": {"k": {"type": "string"}}}}, "required": ["m"]});
        assert_eq!(strict_schema(&nested, Dialect::OpenAi), None);
    }

    #[test]
    fn numeric_bounds_qualify_for_openai_only() {
        let bounded = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"], "additionalProperties": false});
        assert!(strict_schema(&bounded, Dialect::OpenAi).is_some());
        assert_eq!(strict_schema(&bounded, Dialect::Anthropic), None);
    }

    #[test]
    fn number_formats_are_dropped_and_unknown_string_formats_do_not_qualify() {
        let numbers = json!({"type": "object", "properties": {"a": {"type": "integer", "format": "int64"}},
            "required": ["a"]});
        let strict = strict_schema(&numbers, Dialect::Anthropic).unwrap();
        assert_eq!(strict["properties"]["a"], json!({"type": "integer"}));
        let date = json!({"type": "string", "format": "date"});
        assert!(strict_schema(&date, Dialect::OpenAi).is_some());
        let color = json!({"type": "string", "format": "color"});
        assert_eq!(strict_schema(&color, Dialect::OpenAi), None);
        let uri = json!({"type": "string", "format": "uri"});
        assert!(strict_schema(&uri, Dialect::Anthropic).is_some());
        assert_eq!(strict_schema(&uri, Dialect::OpenAi), None);
    }

    #[test]
    fn an_empty_object_qualifies() {
        let empty = json!({"type": "object", "properties": {}});
        let strict = strict_schema(&empty, Dialect::Anthropic).unwrap();
        assert_eq!(
            strict,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
