//! Harness and tool names: which names are valid, and the one rule by which harness names match
//! whatever their case.
//!
//! Harness names match *ASCII* case-insensitively everywhere (registry lookup, config
//! references, `never_collapse`, qualified call names, duplicate detection): `MathTools`,
//! `mathtools` and `MATHTOOLS` are one harness. Letters outside ASCII are compared exactly, so
//! `Wetter` and `WETTER` match but `Größe` and `GRÖSSE` do not. Valid harness names are ASCII
//! anyway; the rule only decides what a non-ASCII reference (which never names a registered
//! harness) is compared with, and it makes every lookup agree.

/// The key a harness name is looked up by.
pub(crate) fn fold(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// Whether two harness names name the same harness.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether `name` is a valid harness or tool name: `[A-Za-z0-9_-]{1,64}`, the names every
/// provider accepts for tools.
pub(crate) fn is_valid(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The last path segment of a type's name, generics kept: `my::mod::Config` gives `Config`.
#[must_use]
pub fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    let start = base.rfind("::").map_or(0, |i| i + 2);
    &full[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_letters_fold_and_others_compare_exactly() {
        assert_eq!(fold("MathTools"), "mathtools");
        assert!(same("MathTools", "MATHTOOLS"));
        assert!(!same("Größe", "grÖße"));
        assert!(!same("Größe", "gröSSe"));
        assert!(same("WÉtter", "wÉtter"));
        assert!(!same("Wétter", "WÉTTER"));
        assert_eq!(fold("ÄPFEL"), "Äpfel");
    }

    #[test]
    fn valid_names() {
        assert!(is_valid("get_weather-2"));
        assert!(is_valid(&"a".repeat(64)));
        assert!(!is_valid(&"a".repeat(65)));
        assert!(!is_valid(""));
        assert!(!is_valid("has space"));
        assert!(!is_valid("dotted.name"));
        assert!(!is_valid("wétter"));
    }
}
