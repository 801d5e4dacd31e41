//! [`Root`](crate::tool::Root): a root a caller lets functions work in. Its own module because
//! both `tool` (functions ask for roots) and `config` (an MCP server entry's `roots`) name it.

use serde::{Deserialize, Serialize};

/// A root the caller lets functions work in: a directory or another URI.
///
/// ```
/// use hpd_agent::tool::Root;
///
/// let root = Root::new("file:///home/me/project").with_name("project");
/// assert_eq!(root.name.as_deref(), Some("project"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI (`file://...` for a directory).
    pub uri: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root without a name.
    #[must_use]
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    /// Sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}
