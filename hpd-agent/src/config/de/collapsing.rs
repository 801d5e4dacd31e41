//! The visitors of `CollapsingConfig`, `Limits` and `ContextBudget`.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::super::keys::Keys;
use super::super::{CollapsingConfig, CollapsingLayout, Limits};
use super::*;

// ---------------------------------------------------------------------------------------------
// CollapsingConfig

#[derive(Clone, Copy)]
pub(super) enum CollapsingKey {
    Enabled,
    NeverCollapse,
    Recovery,
    ExecuteRecoveredCalls,
    PersistSystemPromptInjections,
    Layout,
    CacheStable,
}

pub(super) const COLLAPSING_KEYS: &[(CollapsingKey, &str)] = &[
    (CollapsingKey::Enabled, "enabled"),
    (CollapsingKey::NeverCollapse, "never_collapse"),
    (CollapsingKey::Recovery, "recovery"),
    (
        CollapsingKey::ExecuteRecoveredCalls,
        "execute_recovered_calls",
    ),
    (
        CollapsingKey::PersistSystemPromptInjections,
        "persist_system_prompt_injections",
    ),
    (CollapsingKey::Layout, "layout"),
    (CollapsingKey::CacheStable, "cache_stable"),
];

const COLLAPSING_NULL: &str = "collapsing must be an object; omit it to use the default";

impl<'de> Deserialize<'de> for CollapsingConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any` so that `null` reaches `visit_unit` and gets the specified message.
        deserializer.deserialize_any(CollapsingConfigVisitor)
    }
}

struct CollapsingConfigVisitor;

impl<'de> Visitor<'de> for CollapsingConfigVisitor {
    type Value = CollapsingConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a collapsing object such as {"enabled": false}"#)
    }

    fn visit_unit<E: de::Error>(self) -> Result<CollapsingConfig, E> {
        Err(E::custom(COLLAPSING_NULL))
    }

    fn visit_none<E: de::Error>(self) -> Result<CollapsingConfig, E> {
        Err(E::custom(COLLAPSING_NULL))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CollapsingConfig, A::Error> {
        let mut keys = Keys::new("CollapsingConfig", COLLAPSING_KEYS);
        let mut collapsing = CollapsingConfig::default();
        // `layout` given, and the seed's `cache_stable` given (its value).
        let mut layout = None;
        let mut cache_stable = None;
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                CollapsingKey::Enabled => collapsing.enabled = map.next_value()?,
                CollapsingKey::NeverCollapse => {
                    collapsing.never_collapse = map.next_value_seed(ListOf::<String>(
                        "a list of harness names",
                        PhantomData,
                    ))?;
                }
                CollapsingKey::Recovery => collapsing.recovery = map.next_value()?,
                CollapsingKey::ExecuteRecoveredCalls => {
                    collapsing.execute_recovered_calls = map.next_value()?;
                }
                CollapsingKey::PersistSystemPromptInjections => {
                    collapsing.persist_system_prompt_injections = map.next_value()?;
                }
                CollapsingKey::Layout => layout = Some(map.next_value::<CollapsingLayout>()?),
                CollapsingKey::CacheStable => cache_stable = Some(map.next_value::<bool>()?),
            }
        }
        collapsing.layout = match (layout, cache_stable) {
            (Some(layout), None) => layout,
            (None, Some(true)) => CollapsingLayout::Append,
            // The seed's `cache_stable: false` meant its default, `hide`.
            (None, Some(false)) => CollapsingLayout::Hide,
            (None, None) => CollapsingLayout::default(),
            (Some(layout), Some(stable)) => {
                if stable != (layout == CollapsingLayout::Append) {
                    return Err(de::Error::custom(format_args!(
                        "cache_stable ({stable}) contradicts layout \"{layout}\"; \
                         cache_stable is the old name of layout \"append\": give layout alone"
                    )));
                }
                layout
            }
        };
        Ok(collapsing)
    }
}

// ---------------------------------------------------------------------------------------------
// Limits

#[derive(Clone, Copy)]
pub(super) enum LimitsKey {
    ToolResultBytes,
    MediaBytes,
    ArgumentBytes,
    ParallelCalls,
}

pub(super) const LIMITS_KEYS: &[(LimitsKey, &str)] = &[
    (LimitsKey::ToolResultBytes, "max_tool_result_bytes"),
    (LimitsKey::MediaBytes, "max_tool_result_media_bytes"),
    (LimitsKey::ArgumentBytes, "max_argument_bytes"),
    (LimitsKey::ParallelCalls, "max_parallel_calls"),
];

const LIMITS_NULL: &str = "limits must be an object; omit it to use the defaults";

/// One limit: an integer of at least 1; the field names it in the error.
struct AtLeastOne(&'static str);

impl<'de> DeserializeSeed<'de> for AtLeastOne {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        let value = usize::deserialize(deserializer)?;
        if value == 0 {
            return Err(de::Error::custom(format_args!(
                "{} must be at least 1",
                self.0
            )));
        }
        Ok(value)
    }
}

impl<'de> Deserialize<'de> for Limits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any` so that `null` reaches `visit_unit` and gets the specified message.
        deserializer.deserialize_any(LimitsVisitor)
    }
}

struct LimitsVisitor;

impl<'de> Visitor<'de> for LimitsVisitor {
    type Value = Limits;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a limits object such as {"max_parallel_calls": 4}"#)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Limits, E> {
        Err(E::custom(LIMITS_NULL))
    }

    fn visit_none<E: de::Error>(self) -> Result<Limits, E> {
        Err(E::custom(LIMITS_NULL))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Limits, A::Error> {
        let mut keys = Keys::new("Limits", LIMITS_KEYS);
        let mut limits = Limits::default();
        while let Some(key) = map.next_key::<String>()? {
            let (field, name) = match keys.identify(key)? {
                LimitsKey::ToolResultBytes => {
                    (&mut limits.max_tool_result_bytes, "max_tool_result_bytes")
                }
                LimitsKey::MediaBytes => (
                    &mut limits.max_tool_result_media_bytes,
                    "max_tool_result_media_bytes",
                ),
                LimitsKey::ArgumentBytes => (&mut limits.max_argument_bytes, "max_argument_bytes"),
                LimitsKey::ParallelCalls => (&mut limits.max_parallel_calls, "max_parallel_calls"),
            };
            *field = map.next_value_seed(AtLeastOne(name))?;
        }
        Ok(limits)
    }
}

// ---------------------------------------------------------------------------------------------
// ContextBudget

#[derive(Clone, Copy)]
pub(super) enum BudgetKey {
    MaxTokens,
    MaxMessages,
    DropTrimmed,
}

pub(super) const BUDGET_KEYS: &[(BudgetKey, &str)] = &[
    (BudgetKey::MaxTokens, "max_tokens"),
    (BudgetKey::MaxMessages, "max_messages"),
    (BudgetKey::DropTrimmed, "drop_trimmed"),
];

const BUDGET_NULL: &str = "context_budget must be an object; omit it to send the whole history";

impl<'de> Deserialize<'de> for crate::ContextBudget {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any` so that `null` reaches `visit_unit` and gets the specified message.
        deserializer.deserialize_any(BudgetVisitor)
    }
}

struct BudgetVisitor;

impl<'de> Visitor<'de> for BudgetVisitor {
    type Value = crate::ContextBudget;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a context budget object such as {"max_tokens": 4000}"#)
    }

    fn visit_unit<E: de::Error>(self) -> Result<crate::ContextBudget, E> {
        Err(E::custom(BUDGET_NULL))
    }

    fn visit_none<E: de::Error>(self) -> Result<crate::ContextBudget, E> {
        Err(E::custom(BUDGET_NULL))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<crate::ContextBudget, A::Error> {
        let mut keys = Keys::new("ContextBudget", BUDGET_KEYS);
        let mut budget = crate::ContextBudget::default();
        while let Some(key) = map.next_key::<String>()? {
            match keys.identify(key)? {
                BudgetKey::MaxTokens => {
                    budget.max_tokens = Some(map.next_value_seed(AtLeastOne("max_tokens"))?);
                }
                BudgetKey::MaxMessages => {
                    budget.max_messages = Some(map.next_value_seed(AtLeastOne("max_messages"))?);
                }
                BudgetKey::DropTrimmed => budget.drop_trimmed = map.next_value()?,
            }
        }
        Ok(budget)
    }
}
