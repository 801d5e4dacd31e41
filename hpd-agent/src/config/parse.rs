//! Reading config documents from JSON text or values (syntax first, then the typed pass, with
//! the nesting limit of JSON text), and writing them back.

use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;

use super::ConfigError;

/// Parses `text` as `T`, reporting syntax errors before anything else.
pub(super) fn parse_text<T: DeserializeOwned>(
    document: &'static str,
    text: &str,
) -> Result<T, ConfigError> {
    // First the whole text is checked to be JSON, so that "not JSON" is reported as such even
    // when a configuration mistake comes first. Configs are small: the second pass is cheap.
    serde_json::from_str::<IgnoredAny>(text).map_err(|err| ConfigError::syntax(document, &err))?;
    // Then the typed pass reads the text itself (not a `Value`), so errors keep line and column.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|err| ConfigError::from_tracked(document, err))?;
    deserializer
        .end()
        .map_err(|err| ConfigError::syntax(document, &err))?;
    Ok(parsed)
}

pub(super) fn parse_value<T: DeserializeOwned>(
    document: &'static str,
    value: Value,
) -> Result<T, ConfigError> {
    // The same nesting limit as JSON text has, so whatever `from_value` accepts, `to_json`
    // writes and `from_json` reads back.
    if let Some(path) = too_deep(&value, 0) {
        return Err(ConfigError::too_deep(document, path));
    }
    serde_path_to_error::deserialize(value).map_err(|err| ConfigError::from_tracked(document, err))
}

/// serde_json's recursion limit for JSON text.
const MAX_DEPTH: usize = 127;

/// The path of the first value nested deeper than [`MAX_DEPTH`] arrays and objects.
fn too_deep(value: &Value, depth: usize) -> Option<String> {
    let children: Box<dyn Iterator<Item = (String, &Value)>> = match value {
        Value::Array(items) => {
            Box::new(items.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)))
        }
        Value::Object(map) => Box::new(map.iter().map(|(k, v)| (format!(".{k}"), v))),
        _ => return None,
    };
    if depth >= MAX_DEPTH {
        return Some(String::new());
    }
    for (step, child) in children {
        if let Some(rest) = too_deep(child, depth + 1) {
            return Some(format!("{step}{rest}"));
        }
    }
    None
}

pub(super) fn to_canonical_json(value: &impl serde::Serialize) -> String {
    // Every key these impls write is a string and a `Value` always serializes, so this cannot
    // fail.
    serde_json::to_string_pretty(value).expect("a configuration always serializes to JSON")
}
