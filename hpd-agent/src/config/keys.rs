//! How the keys of config objects are matched: normalised (ASCII letters lower-cased, `_`
//! removed), unknown keys reported with the known ones and a "did you mean" for near misses.

use serde::de;

/// How config keys are compared: ASCII letters lower-cased, `_` removed, so `ToolHarnesses`,
/// `toolHarnesses` and `tool_harnesses` are one key.
pub(super) fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Matches the keys of one object against its known keys.
pub(super) struct Keys<K: 'static> {
    object: &'static str,
    table: &'static [(K, &'static str)],
    /// The spelling each known key was first given in.
    seen: Vec<Option<String>>,
}

impl<K: Copy> Keys<K> {
    pub(super) fn new(object: &'static str, table: &'static [(K, &'static str)]) -> Self {
        Keys {
            object,
            table,
            seen: vec![None; table.len()],
        }
    }

    /// Normalises `key` and finds it, or fails naming it.
    pub(super) fn identify<E: de::Error>(&mut self, key: String) -> Result<K, E> {
        let normalized = normalize_key(&key);
        let Some(index) = self
            .table
            .iter()
            .position(|(_, name)| matches_normalized(name, &normalized))
        else {
            return Err(E::custom(unknown_key_message(
                self.object,
                &key,
                &normalized,
                self.table.iter().map(|(_, name)| *name),
            )));
        };
        let canonical = self.table[index].1;
        match &self.seen[index] {
            Some(first) if *first == key => Err(E::custom(format_args!(
                "duplicate key in {}: '{}' appears twice",
                self.object, key
            ))),
            Some(first) => Err(E::custom(format_args!(
                "duplicate key in {}: '{}' and '{}' both mean '{}'",
                self.object, first, key, canonical
            ))),
            None => {
                self.seen[index] = Some(key);
                Ok(self.table[index].0)
            }
        }
    }
}

/// Whether a canonical (snake_case) key normalises to `normalized`.
pub(super) fn matches_normalized(canonical: &str, normalized: &str) -> bool {
    canonical
        .chars()
        .filter(|c| *c != '_')
        .eq(normalized.chars())
}

pub(super) fn unknown_key_message<'a>(
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
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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
