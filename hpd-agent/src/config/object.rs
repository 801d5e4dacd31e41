//! How a config object is read: its keys are normalised as they are read, then the derived
//! `Deserialize` impl of its mirror (in [`fields`](super::fields)) reads the values.
//!
//! [`deserialize`] hands the derived impl a deserializer over the object's map whose
//! `deserialize_struct` receives the fields the derive declares. Each key the document gives is
//! normalised ([`normalize_key`]) and matched against those fields, and the derived impl sees the
//! field's canonical name; an unknown key, two keys that mean one field and a missing required
//! key are errors in this module's words. So the derives run with `deny_unknown_fields` over
//! snake_case keys, and the crate's objects are exactly the ones whose keys are normalised.
//!
//! This is one normalising pass applied while the document is read, not a pass over a
//! [`serde_json::Value`] before the typed one, because a `Value` loses what the errors need:
//! positions (the line and column of [`ConfigError`](super::ConfigError)) exist only while the
//! text is read, and a `Value` keeps the last of two equal keys, so `'name' appears twice` could
//! not be reported. A pass over a `Value` would also have to know which objects are the crate's
//! (the keys of a reference's `config`, `metadata` and `middleware_configs` and those of
//! `model.options.extra` are the user's and stay as written), repeating the schema the derives
//! already state.

use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};

/// Reads an object from a bare string, or says why the string does not name one.
pub(super) type ReadStr<T> = fn(&str) -> Result<T, String>;

/// A type the config reads as an object with normalised keys, through a derived mirror.
pub(super) trait ConfigObject: Sized {
    /// What serde's type errors say was expected (`invalid type: ..., expected {EXPECTING}`).
    const EXPECTING: &'static str;
    /// The error for `null`, for an object that may be omitted but not given as `null`.
    const NULL: Option<&'static str> = None;
    /// How a bare string stands for the object (a harness reference's name), if it can.
    const FROM_STR: Option<ReadStr<Self>> = None;
    /// Keys that must be given, each with the hint of its `missing key` error.
    const REQUIRED: &'static [(&'static str, &'static str)] = &[];
    /// Keys of other objects, each with the error that says where it belongs.
    const MISPLACED: &'static [(&'static str, &'static str)] = &[];

    /// Reads the object with the mirror's derived impl (and checks across its fields).
    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// Reads a [`ConfigObject`]: the `Deserialize` impl of every object type of the config.
pub(super) fn deserialize<'de, T: ConfigObject, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    let visitor = ObjectVisitor(PhantomData);
    if T::NULL.is_some() || T::FROM_STR.is_some() {
        // Only `deserialize_any` lets `null` and strings reach the visitor.
        deserializer.deserialize_any(visitor)
    } else {
        deserializer.deserialize_map(visitor)
    }
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: ConfigObject> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::derived(ObjectMap {
            map,
            required: T::REQUIRED,
            misplaced: T::MISPLACED,
        })
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
        match T::FROM_STR {
            Some(from_str) => from_str(value).map_err(E::custom),
            None => Err(E::invalid_type(de::Unexpected::Str(value), &self)),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        match T::NULL {
            Some(message) => Err(E::custom(message)),
            None => Err(E::invalid_type(de::Unexpected::Unit, &self)),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        self.visit_unit()
    }
}

/// The map of one object, as the derived impl of its mirror reads it.
struct ObjectMap<A> {
    map: A,
    required: &'static [(&'static str, &'static str)],
    misplaced: &'static [(&'static str, &'static str)],
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for ObjectMap<A> {
    type Error = A::Error;

    /// What a derived struct impl calls: `fields` are the keys it knows.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        object: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(NormalizedKeys {
            map: self.map,
            object,
            fields,
            seen: vec![None; fields.len()],
            required: self.required,
            misplaced: self.misplaced,
        })
    }

    /// Only derived struct impls read an `ObjectMap`, and they call `deserialize_struct`.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.map)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The map of one object with each key replaced by the field it names.
struct NormalizedKeys<A> {
    map: A,
    object: &'static str,
    fields: &'static [&'static str],
    /// The spelling each field was first given in.
    seen: Vec<Option<String>>,
    required: &'static [(&'static str, &'static str)],
    misplaced: &'static [(&'static str, &'static str)],
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for NormalizedKeys<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.map.next_key::<String>()? else {
            return match self.missing() {
                Some(message) => Err(de::Error::custom(message)),
                None => Ok(None),
            };
        };
        let field = self.identify(key)?;
        seed.deserialize(field.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

impl<A> NormalizedKeys<A> {
    /// The field `key` names, or the error: unknown, misplaced or given twice.
    fn identify<E: de::Error>(&mut self, key: String) -> Result<&'static str, E> {
        let normalized = normalize_key(&key);
        let Some(index) = self
            .fields
            .iter()
            .position(|field| matches_normalized(field, &normalized))
        else {
            if let Some((_, message)) = self
                .misplaced
                .iter()
                .find(|(other, _)| matches_normalized(other, &normalized))
            {
                return Err(E::custom(message));
            }
            return Err(E::custom(unknown_key_message(
                self.object,
                &key,
                &normalized,
                self.fields.iter().copied(),
            )));
        };
        let field = self.fields[index];
        match &self.seen[index] {
            Some(first) if *first == key => Err(E::custom(format_args!(
                "duplicate key in {}: '{key}' appears twice",
                self.object
            ))),
            Some(first) => Err(E::custom(format_args!(
                "duplicate key in {}: '{first}' and '{key}' both mean '{field}'",
                self.object
            ))),
            None => {
                self.seen[index] = Some(key);
                Ok(field)
            }
        }
    }

    /// The error for the first required key the object did not give.
    fn missing(&self) -> Option<String> {
        let (key, hint) = self.required.iter().find(|(key, _)| {
            let index = self.fields.iter().position(|field| field == key);
            index.is_some_and(|index| self.seen[index].is_none())
        })?;
        Some(format!("missing key '{key}' in {}; {hint}", self.object))
    }
}

/// How config keys are compared: ASCII letters lower-cased, `_` removed, so `ToolHarnesses`,
/// `toolHarnesses` and `tool_harnesses` are one key.
pub(super) fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether a canonical (snake_case) key normalises to `normalized`.
fn matches_normalized(canonical: &str, normalized: &str) -> bool {
    canonical
        .chars()
        .filter(|c| *c != '_')
        .eq(normalized.chars())
}

fn unknown_key_message<'a>(
    object: &str,
    key: &str,
    normalized: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> String {
    // No known key is longer than 40 characters, so a longer key is never within 2 edits (and
    // a huge key would make the distance expensive).
    let suggestion = known
        .clone()
        .filter(|_| normalized.len() <= 40)
        .map(|name| (edit_distance(&name.replace('_', ""), normalized), name))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance);
    let list = known.collect::<Vec<_>>().join(", ");
    match suggestion {
        Some((_, name)) => {
            format!("unknown key '{key}' in {object} (did you mean '{name}'?); known keys: {list}")
        }
        None => format!("unknown key '{key}' in {object}; known keys: {list}"),
    }
}

/// Levenshtein distance over chars, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_lowercases_ascii_and_drops_underscores() {
        assert_eq!(normalize_key("ToolHarnesses"), "toolharnesses");
        assert_eq!(normalize_key("tool_harnesses"), "toolharnesses");
        assert_eq!(normalize_key("TOOL__HARNESSES_"), "toolharnesses");
        assert_eq!(normalize_key("tool-harnesses"), "tool-harnesses");
        // Not ASCII: kept, so the Kelvin sign does not pass for a `k`.
        assert_eq!(normalize_key("\u{212A}"), "\u{212A}");
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("collapsing", "colapsing"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggestion_only_for_near_misses() {
        let known = ["name", "functions"];
        let near = unknown_key_message("X", "Fucntions", "fucntions", known.iter().copied());
        assert!(near.contains("did you mean 'functions'?"), "{near}");
        let far = unknown_key_message("X", "zzz", "zzz", known.iter().copied());
        assert!(!far.contains("did you mean"), "{far}");
        assert!(far.ends_with("known keys: name, functions"), "{far}");
        let long = "functions".repeat(1000);
        let huge = unknown_key_message("X", &long, &long, known.iter().copied());
        assert!(!huge.contains("did you mean"));
    }
}
