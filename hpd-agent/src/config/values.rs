//! The field readers of the config mirrors (their `deserialize_with` functions) and the
//! predicates of their `skip_serializing_if`: the checks of single values, lists with readable
//! `expecting` texts, and the few forms serde's derives have no attribute for. An error here is
//! reported at the field's path.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{McpServerConfig, SubAgentConfig, ToolHarnessReference};
use crate::output::OutputSchema;

/// `deserialize_with` functions, one a line: `name -> Type = |deserializer| expression`. An
/// `Option` read with `optional` takes `null` as absent; the others take no `null` (the key may
/// be omitted, not given as `null`).
macro_rules! readers {
    ($($name:ident -> $ty:ty = |$d:ident| $read:expr;)*) => {$(
        pub(super) fn $name<'de, D: Deserializer<'de>>($d: D) -> Result<$ty, D::Error> {
            $read
        }
    )*};
}

readers! {
    harness_name -> String = |d| non_empty(d, "harness name");
    sub_agent_name -> String = |d| non_empty(d, "sub-agent name");
    server_name -> String = |d| non_empty(d, "server name");
    tool_name -> String = |d| non_empty(d, "tool");
    command -> Option<String> = |d| non_empty(d, "command").map(Some);
    url -> Option<String> = |d| non_empty(d, "url").map(Some);
    client_id -> Option<String> = |d| non_empty(d, "client_id").map(Some);
    client_secret -> Option<String> = |d| non_empty(d, "client_secret").map(Some);
    client_metadata_url -> Option<String> = |d| non_empty(d, "client_metadata_url").map(Some);
    token_file -> Option<String> = |d| non_empty(d, "token_file").map(Some);

    max_tool_result_bytes -> usize = |d| at_least_one(d, "max_tool_result_bytes");
    max_tool_result_media_bytes -> usize = |d| at_least_one(d, "max_tool_result_media_bytes");
    max_argument_bytes -> usize = |d| at_least_one(d, "max_argument_bytes");
    max_parallel_calls -> usize = |d| at_least_one(d, "max_parallel_calls");
    max_tokens -> Option<usize> = |d| at_least_one(d, "max_tokens").map(Some);
    max_messages -> Option<usize> = |d| at_least_one(d, "max_messages").map(Some);
    timeout_ms -> Option<u64> = |d| optional(d, |t| *t == 0, "timeout_ms must be at least 1");
    max_output_tokens -> Option<u32> =
        |d| optional(d, |n| *n == 0, "max_output_tokens must be at least 1");
    temperature -> Option<f64> = |d| optional(d, |t| *t < 0.0, "temperature must not be negative");
    top_p -> Option<f64> =
        |d| optional(d, |p| !(0.0..=1.0).contains(p), "top_p must be between 0 and 1");
    functions -> Option<Vec<String>> =
        |d| optional(d, Vec::is_empty, "functions is empty; omit it to expose all functions");

    harness_references -> Vec<ToolHarnessReference> = |d| list(d, "a list of harness references");
    sub_agents -> Vec<SubAgentConfig> = |d| list(d, "a list of sub-agent objects");
    mcp_servers -> Vec<McpServerConfig> = |d| list(d, "a list of MCP server objects");
    harness_names -> Vec<String> = |d| list(d, "a list of harness names");
    parent_functions -> Vec<String> = |d| list(d, "a list of 'Harness.function' references");
    scopes -> Vec<String> = |d| list(d, "a list of scope strings");
    arguments -> Option<Vec<String>> = |d| list(d, "a list of argument strings").map(Some);
    env -> Option<BTreeMap<String, String>> =
        |d| d.deserialize_map(StringMap("an object of environment variables")).map(Some);
    headers -> Option<BTreeMap<String, String>> =
        |d| d.deserialize_map(StringMap("an object of HTTP headers")).map(Some);
}

/// A `T` that fails with `message` when `bad` holds for it.
fn checked<'de, D, T>(
    deserializer: D,
    bad: impl FnOnce(&T) -> bool,
    message: &str,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let value = T::deserialize(deserializer)?;
    if bad(&value) {
        return Err(de::Error::custom(message));
    }
    Ok(value)
}

/// A string that must not be empty (`{what} is empty`).
fn non_empty<'de, D: Deserializer<'de>>(deserializer: D, what: &str) -> Result<String, D::Error> {
    checked(deserializer, String::is_empty, &format!("{what} is empty"))
}

/// An optional value (`null` is absent) that fails with `message` when `bad` holds for it.
fn optional<'de, D, T>(
    deserializer: D,
    bad: impl FnOnce(&T) -> bool,
    message: &str,
) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    checked(
        deserializer,
        |value: &Option<T>| value.as_ref().is_some_and(bad),
        message,
    )
}

/// An integer of at least 1 (`{field} must be at least 1`).
fn at_least_one<'de, D: Deserializer<'de>>(
    deserializer: D,
    field: &str,
) -> Result<usize, D::Error> {
    checked(
        deserializer,
        |n| *n == 0,
        &format!("{field} must be at least 1"),
    )
}

/// A key that may be omitted but not given as `null` (serde's `Option` reads `null` as absent).
pub(super) fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Whether a value is its type's default, for `skip_serializing_if`.
pub(super) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Whether a boolean is `true`, for `skip_serializing_if` of those that default to `true`.
pub(super) fn is_true(value: &bool) -> bool {
    *value
}

/// Whether a limit is `V`, its default, for `skip_serializing_if`.
pub(super) fn equals<const V: usize>(value: &usize) -> bool {
    *value == V
}

/// `true`, the default of some booleans.
pub(super) fn yes() -> bool {
    true
}

fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<Vec<T>, D::Error> {
    deserializer.deserialize_seq(ListOf(expecting, PhantomData))
}

/// A list with a readable `expecting` text (serde's `Vec` says only "a sequence").
struct ListOf<T>(&'static str, PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListOf<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        // Never trust a size hint for a preallocation larger than a small bound.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(items)
    }
}

/// `requires_approval`: function names, none empty; a name given twice counts once.
pub(super) fn requires_approval<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let names: Vec<String> = list(deserializer, "a list of function names")?;
    if let Some(empty) = names.iter().find(|name| name.trim().is_empty()) {
        return Err(de::Error::custom(format_args!(
            "requires_approval holds an empty function name ({empty:?}); give function names"
        )));
    }
    Ok(ToolHarnessReference::new("")
        .with_approval_required(names)
        .requires_approval)
}

/// `middleware_configs`: middleware type names (kept as written) to raw configs.
pub(super) fn middleware_configs<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, Value>, D::Error> {
    deserializer.deserialize_map(MiddlewareConfigs)
}

struct MiddlewareConfigs;

impl<'de> Visitor<'de> for MiddlewareConfigs {
    type Value = BTreeMap<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object mapping middleware type names to their configs")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut configs = BTreeMap::new();
        // Middleware names are matched case-insensitively at build, so two keys that differ
        // only in case would be ambiguous. Folded name -> name as written.
        let mut folded_names = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            match folded_names.get(&key.to_ascii_lowercase()) {
                Some(first) if *first == key => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key in middleware_configs: '{key}' appears twice"
                    )));
                }
                Some(first) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key in middleware_configs: '{first}' and '{key}' name the same \
                         middleware (names match case-insensitively)"
                    )));
                }
                None => {}
            }
            let value = map.next_value::<Value>()?;
            folded_names.insert(key.to_ascii_lowercase(), key.clone());
            configs.insert(key, value);
        }
        Ok(configs)
    }
}

/// A map of strings to strings (`env`, `headers`), with its `expecting` text; a key given twice
/// is an error.
struct StringMap(&'static str);

impl<'de> Visitor<'de> for StringMap {
    type Value = BTreeMap<String, String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut values = BTreeMap::new();
        while let Some((key, value)) = map.next_entry::<String, String>()? {
            if values.insert(key.clone(), value).is_some() {
                return Err(de::Error::custom(format_args!("duplicate key '{key}'")));
            }
        }
        Ok(values)
    }
}

/// `extra`: an object of request body fields, kept raw; `null` is none.
pub(super) fn extra<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Map<String, Value>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Object(extra) => Ok(extra),
        Value::Null => Ok(Map::new()),
        _ => Err(de::Error::custom(
            "extra must be an object of request body fields",
        )),
    }
}

/// `stop`: one string or a list of strings; `null` is none.
pub(super) fn stop<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_any(StopSequences)
}

struct StopSequences;

impl<'de> Visitor<'de> for StopSequences {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stop sequence or a list of them")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
        Ok(vec![value.to_owned()])
    }

    fn visit_unit<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_none<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<String>, A::Error> {
        ListOf("a list of stop sequences", PhantomData).visit_seq(seq)
    }
}

/// An output schema's `name`, checked as [`OutputSchema::new`] checks it.
pub(super) fn output_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let name = String::deserialize(deserializer)?;
    if let Err(e) = OutputSchema::new(name.clone(), Value::Bool(true)) {
        return Err(de::Error::custom(e.message));
    }
    Ok(name)
}

/// An output schema's `schema`, checked here so that a bad one is reported at
/// `output_schema.schema`.
pub(super) fn output_schema<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    let schema = Value::deserialize(deserializer)?;
    // A name that passes, so only the schema is judged here.
    if let Err(e) = OutputSchema::new("schema", schema.clone()) {
        let at = if e.path.is_empty() {
            String::new()
        } else {
            format!(" (at {})", e.path)
        };
        return Err(de::Error::custom(format_args!("{}{at}", e.message)));
    }
    Ok(schema)
}
