//! Tool names: which names a provider accepts, and the `{harness}_{tool}` fallback.

/// The longest tool name providers accept.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// Whether `name` is a valid provider tool name: `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub(crate) fn sanitise(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The fallback name of `tool` in `harness`: `{harness}_{tool}`, sanitised and cut to 64
/// characters (the result is ASCII, so cutting never splits a character).
pub(crate) fn qualified_name(harness: &str, tool: &str) -> String {
    let mut name = sanitise(&format!("{harness}_{tool}"));
    name.truncate(MAX_NAME_LEN);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names() {
        assert!(is_valid_tool_name("read_text_file"));
        assert!(is_valid_tool_name("get-current-time"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(!is_valid_tool_name("read.file"));
        assert!(!is_valid_tool_name("two words"));
        assert!(!is_valid_tool_name("café"));
    }

    #[test]
    fn sanitising_replaces_every_invalid_character() {
        assert_eq!(sanitise("read.file"), "read_file");
        assert_eq!(sanitise("two words/é"), "two_words__");
        assert_eq!(sanitise("ok-name_1"), "ok-name_1");
    }

    #[test]
    fn qualified_names_are_valid_and_short() {
        assert_eq!(qualified_name("Files", "read.file"), "Files_read_file");
        assert_eq!(qualified_name("My Server", "x"), "My_Server_x");
        let long = qualified_name("Files", &"n".repeat(70));
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("Files_nnn"));
        assert!(is_valid_tool_name(&long));
        assert!(is_valid_tool_name(&qualified_name("Ünïcode", "ツール")));
    }
}
