//! The visitors of `ModelConfig` and `ModelOptions` (with `stop`, `extra` and `tool_choice`).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::super::ModelConfig;
use super::super::keys::Keys;
use super::*;
use crate::chat::{ModelOptions, ToolChoice};

// ---------------------------------------------------------------------------------------------
// ModelConfig

#[derive(Clone, Copy)]
pub(super) enum ModelKey {
    Provider,
    Model,
    BaseUrl,
    Options,
}

pub(super) const MODEL_KEYS: &[(ModelKey, &str)] = &[
    (ModelKey::Provider, "provider"),
    (ModelKey::Model, "model"),
    (ModelKey::BaseUrl, "base_url"),
    (ModelKey::Options, "options"),
];

impl<'de> Deserialize<'de> for ModelConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ModelConfigVisitor)
    }
}

struct ModelConfigVisitor;

impl<'de> Visitor<'de> for ModelConfigVisitor {
    type Value = ModelConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a model object (provider, model, base_url)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelConfig, A::Error> {
        let mut keys = Keys::new("ModelConfig", MODEL_KEYS);
        let mut model = ModelConfig::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                ModelKey::Provider => model.provider = map.next_value()?,
                ModelKey::Model => model.model = map.next_value()?,
                ModelKey::BaseUrl => model.base_url = map.next_value()?,
                ModelKey::Options => model.options = map.next_value()?,
            }
        }
        Ok(model)
    }
}

// ---------------------------------------------------------------------------------------------
// ModelOptions

#[derive(Clone, Copy)]
pub(super) enum OptionsKey {
    Temperature,
    TopP,
    MaxOutputTokens,
    Stop,
    Seed,
    ToolChoice,
    ParallelToolCalls,
    Extra,
}

pub(super) const OPTIONS_KEYS: &[(OptionsKey, &str)] = &[
    (OptionsKey::Temperature, "temperature"),
    (OptionsKey::TopP, "top_p"),
    (OptionsKey::MaxOutputTokens, "max_output_tokens"),
    (OptionsKey::Stop, "stop"),
    (OptionsKey::Seed, "seed"),
    (OptionsKey::ToolChoice, "tool_choice"),
    (OptionsKey::ParallelToolCalls, "parallel_tool_calls"),
    (OptionsKey::Extra, "extra"),
];

impl<'de> Deserialize<'de> for ModelOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ModelOptionsVisitor)
    }
}

struct ModelOptionsVisitor;

impl<'de> Visitor<'de> for ModelOptionsVisitor {
    type Value = ModelOptions;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a model options object (temperature, top_p, max_output_tokens, stop, ...)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelOptions, A::Error> {
        let mut keys = Keys::new("ModelOptions", OPTIONS_KEYS);
        let mut options = ModelOptions::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                OptionsKey::Temperature => {
                    options.temperature = map.next_value_seed(Checked(|t: &f64| {
                        (*t < 0.0).then_some("temperature must not be negative")
                    }))?;
                }
                OptionsKey::TopP => {
                    options.top_p = map.next_value_seed(Checked(|p: &f64| {
                        (!(0.0..=1.0).contains(p)).then_some("top_p must be between 0 and 1")
                    }))?;
                }
                OptionsKey::MaxOutputTokens => {
                    options.max_output_tokens = map.next_value_seed(Checked(|n: &u32| {
                        (*n == 0).then_some("max_output_tokens must be at least 1")
                    }))?;
                }
                OptionsKey::Stop => options.stop = map.next_value_seed(StopSequences)?,
                OptionsKey::Seed => options.seed = map.next_value()?,
                OptionsKey::ToolChoice => {
                    options.tool_choice = map.next_value::<Option<ToolChoiceValue>>()?.map(|c| c.0);
                }
                OptionsKey::ParallelToolCalls => options.parallel_tool_calls = map.next_value()?,
                OptionsKey::Extra => options.extra = map.next_value_seed(ExtraFields)?,
            }
        }
        Ok(options)
    }
}

/// An optional value that must pass a check; the check returns the error message.
struct Checked<T>(fn(&T) -> Option<&'static str>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Checked<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let value = Option::<T>::deserialize(deserializer)?;
        if let Some(message) = value.as_ref().and_then(self.0) {
            return Err(de::Error::custom(message));
        }
        Ok(value)
    }
}

/// `extra`: an object of request body fields, kept raw; `null` is none.
struct ExtraFields;

impl<'de> DeserializeSeed<'de> for ExtraFields {
    type Value = serde_json::Map<String, Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(extra) => Ok(extra),
            Value::Null => Ok(serde_json::Map::new()),
            _ => Err(de::Error::custom(
                "extra must be an object of request body fields",
            )),
        }
    }
}

/// `stop`: one string or a list of strings; `null` is none.
struct StopSequences;

impl<'de> DeserializeSeed<'de> for StopSequences {
    type Value = Vec<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

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
        ListOf::<String>("a list of stop sequences", PhantomData).visit_seq(seq)
    }
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` (ASCII case ignored) or `{"tool": name}`.
struct ToolChoiceValue(ToolChoice);

#[derive(Clone, Copy)]
pub(super) enum ToolChoiceKey {
    Tool,
}

pub(super) const TOOL_CHOICE_KEYS: &[(ToolChoiceKey, &str)] = &[(ToolChoiceKey::Tool, "tool")];

impl<'de> Deserialize<'de> for ToolChoiceValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolChoiceVisitor)
    }
}

struct ToolChoiceVisitor;

impl<'de> Visitor<'de> for ToolChoiceVisitor {
    type Value = ToolChoiceValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#""auto", "none", "required" or {"tool": "name"}"#)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<ToolChoiceValue, E> {
        let choice = match value.to_ascii_lowercase().as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => {
                return Err(E::custom(format_args!(
                    "unknown tool_choice '{value}'; expected \"auto\", \"none\", \"required\" \
                     or {{\"tool\": \"name\"}}"
                )));
            }
        };
        Ok(ToolChoiceValue(choice))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolChoiceValue, A::Error> {
        let mut keys = Keys::new("ToolChoice", TOOL_CHOICE_KEYS);
        let mut name = None;
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                ToolChoiceKey::Tool => name = Some(map.next_value_seed(NonEmptyString("tool"))?),
            }
        }
        match name {
            Some(name) => Ok(ToolChoiceValue(ToolChoice::Tool(name))),
            None => Err(de::Error::custom(
                "missing key 'tool' in ToolChoice; name the tool the model must call",
            )),
        }
    }
}
